#pragma once
// SaturatedActivation (definition from the AWS "SaturatedActivation" rule: a tanh or sigmoid
// layer is saturated when its inputs sit near the function's extremes; a node whose activity falls
// below threshold_inactivity percent is saturated; the rule fires when more than threshold_layer
// percent of a layer's nodes are saturated).
// Inspected tensors: saved at the step, in one of `collection_names` or matching one of
// `tensor_regex`; a tensor whose name contains "tanh" uses `threshold_tanh` (min,max), otherwise
// `threshold_sigmoid`. Axis 0 is the batch; a node is active on a sample when its input lies
// strictly inside (min, max). Fires when the percentage of nodes active on fewer than
// `threshold_inactivity` percent of the samples exceeds `threshold_layer`.
#include <smdebug/rules/builtin/activation_stats.hpp>

namespace smdebug {

struct SaturatedActivationParams {
    static constexpr std::string_view rule_name = "SaturatedActivation";
    static constexpr std::string_view fires_when = "more than threshold_layer percent of a tanh/sigmoid layer's nodes get inputs outside their threshold range on nearly every sample";
    static constexpr bool step_local = true;

    std::vector<std::string> collection_names = rule_param_default(&SaturatedActivationParams::collection_names);
    std::vector<std::string> tensor_regex = rule_param_default(&SaturatedActivationParams::tensor_regex);
    std::pair<double, double> threshold_tanh = rule_param_default(&SaturatedActivationParams::threshold_tanh);
    std::pair<double, double> threshold_sigmoid = rule_param_default(&SaturatedActivationParams::threshold_sigmoid);
    double threshold_inactivity = rule_param_default(&SaturatedActivationParams::threshold_inactivity);
    double threshold_layer = rule_param_default(&SaturatedActivationParams::threshold_layer);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&SaturatedActivationParams::collection_names, "collection_names", "", "collections of activation inputs"),
            rule_param(&SaturatedActivationParams::tensor_regex, "tensor_regex", ".*tanh_input, .*sigmoid_input", "activation input tensors"),
            rule_param(&SaturatedActivationParams::threshold_tanh, "threshold_tanh", "-9.4999,9.4999", "tanh input range (min,max)"),
            rule_param(&SaturatedActivationParams::threshold_sigmoid, "threshold_sigmoid", "-23,16.99999", "sigmoid input range (min,max)"),
            rule_param(&SaturatedActivationParams::threshold_inactivity, "threshold_inactivity", "1", "percentage of samples below which a node is saturated"),
            rule_param(&SaturatedActivationParams::threshold_layer, "threshold_layer", "50", "percentage of saturated nodes in a layer")};
    }
    static SaturatedActivationParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<SaturatedActivationParams>(rule, p); }
};

template <Store S>
class SaturatedActivation : public RuntimeRule<S> {
public:
    using Params = SaturatedActivationParams;
    explicit SaturatedActivation(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "SaturatedActivation"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = selection_.at_step(this->base_trial(), step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        bool found = false;  // every tensor that fires is reported
        for (const auto& n : names_) {
            const auto* v = this->fetched_value(n, step);
            if (!v) continue;  // unreadable here: skipped alone
            // A pair, not a structured binding: clang before 16 cannot capture those in a lambda.
            const auto range = text::to_lower(n).find("tanh") != std::string::npos ? p_.threshold_tanh : p_.threshold_sigmoid;
            const auto a = detail::node_activity(*v, p_.threshold_inactivity,
                                                 [range](double x) { return x > range.first && x < range.second; });
            if (a.nodes && a.inactive_percent() > p_.threshold_layer)
                found = this->fired("tensor " + n + ": " + std::to_string(a.inactive) + " of " + std::to_string(a.nodes) + " nodes saturated (" +
                                    text::format_double(a.inactive_percent()) + "% > " + text::format_double(p_.threshold_layer) + "%)");
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{p_.collection_names, p_.tensor_regex};
    std::vector<std::string> names_;
};

}  // namespace smdebug
