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
    std::vector<std::string> collection_names;
    std::vector<std::string> tensor_regex{".*tanh_input", ".*sigmoid_input"};
    std::pair<double, double> threshold_tanh{-9.4999, 9.4999};
    std::pair<double, double> threshold_sigmoid{-23.0, 16.99999};
    double threshold_inactivity = 1.0;
    double threshold_layer = 50.0;

    static SaturatedActivationParams parse(const std::string& rule, RuleParams& p) {
        SaturatedActivationParams v;
        v.collection_names = p.list(rule, "collection_names");
        v.tensor_regex = p.list(rule, "tensor_regex", ".*tanh_input, .*sigmoid_input");
        v.threshold_tanh = range(rule, "threshold_tanh", p.number_list(rule, "threshold_tanh", "-9.4999, 9.4999"));
        v.threshold_sigmoid = range(rule, "threshold_sigmoid", p.number_list(rule, "threshold_sigmoid", "-23, 16.99999"));
        v.threshold_inactivity = p.number(rule, "threshold_inactivity", v.threshold_inactivity);
        v.threshold_layer = p.number(rule, "threshold_layer", v.threshold_layer);
        return v;
    }

private:
    static std::pair<double, double> range(const std::string& rule, const char* key, const std::vector<double>& v) {
        if (v.size() != 2 || !(v[0] < v[1])) throw InvalidRuleParameter(rule, key, "", "expected two numbers min,max with min < max");
        return {v[0], v[1]};
    }
};

template <Store S>
class SaturatedActivation : public RuntimeRule<S> {
public:
    using Params = SaturatedActivationParams;
    explicit SaturatedActivation(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "SaturatedActivation"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = detail::tensors_at_step(this->base_trial(), step, p_.collection_names, p_.tensor_regex);
        for (const auto& n : names_) this->req_.add(this->base_trial(), n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (const auto& n : names_) {
            if (!this->req_.has_value(this->base_trial(), n, step)) continue;  // unreadable here: skipped alone
            // A pair, not a structured binding: clang before 16 cannot capture those in a lambda.
            const auto range = text::to_lower(n).find("tanh") != std::string::npos ? p_.threshold_tanh : p_.threshold_sigmoid;
            const auto a = detail::node_activity(this->req_.value(this->base_trial(), n, step), p_.threshold_inactivity,
                                                 [range](double x) { return x > range.first && x < range.second; });
            if (a.nodes && a.inactive_percent() > p_.threshold_layer)
                return this->fired("tensor " + n + ": " + std::to_string(a.inactive) + " of " + std::to_string(a.nodes) + " nodes saturated (" +
                                   text::format_double(a.inactive_percent()) + "% > " + text::format_double(p_.threshold_layer) + "%)");
        }
        return false;
    }

private:
    Params p_;
    std::vector<std::string> names_;
};

}  // namespace smdebug
