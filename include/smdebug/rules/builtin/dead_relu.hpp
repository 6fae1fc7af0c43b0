#pragma once
// DeadRelu (docs/rules.md "Built-in rules": names and defaults; definition from the AWS "DeadRelu"
// rule: a ReLU is dead when its activity falls below threshold_inactivity percent; the rule fires
// when more than threshold_layer percent of a layer's ReLUs are dead).
// Inspected tensors: saved at the step and matching `tensor_regex` (ReLU outputs). Axis 0 is the
// batch, every other position a node; a node is active on a sample when its output is > 0.
// Fires when, in an inspected tensor, the percentage of nodes active on fewer than
// `threshold_inactivity` percent of the samples exceeds `threshold_layer`.
#include <smdebug/rules/builtin/activation_stats.hpp>

namespace smdebug {

struct DeadReluParams {
    static constexpr std::string_view rule_name = "DeadRelu";
    static constexpr std::string_view fires_when = "more than threshold_layer percent of a layer's ReLUs are active on fewer than threshold_inactivity percent of samples";
    static constexpr bool step_local = true;

    std::vector<std::string> tensor_regex = rule_param_default(&DeadReluParams::tensor_regex);
    double threshold_inactivity = rule_param_default(&DeadReluParams::threshold_inactivity);
    double threshold_layer = rule_param_default(&DeadReluParams::threshold_layer);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&DeadReluParams::tensor_regex, "tensor_regex", ".*relu_output", "ReLU output tensors"),
            rule_param(&DeadReluParams::threshold_inactivity, "threshold_inactivity", "1", "percentage of samples below which a ReLU is dead"),
            rule_param(&DeadReluParams::threshold_layer, "threshold_layer", "50", "percentage of dead ReLUs in a layer")};
    }
    static DeadReluParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<DeadReluParams>(rule, p); }
};

template <Store S>
class DeadRelu : public RuntimeRule<S> {
public:
    using Params = DeadReluParams;
    explicit DeadRelu(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "DeadRelu"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = selection_.at_step(this->base_trial(), step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        bool found = false;  // every tensor that fires is reported
        for (const auto& n : names_) {
            const auto* v = this->fetched_value(n, step);
            if (!v) continue;  // unreadable here: skipped alone
            const auto a = detail::node_activity(*v, p_.threshold_inactivity,
                                                 [](double x) { return x > 0; });
            if (a.nodes && a.inactive_percent() > p_.threshold_layer)
                found = this->fired("tensor " + n + ": " + std::to_string(a.inactive) + " of " + std::to_string(a.nodes) + " ReLUs dead (" +
                                    text::format_double(a.inactive_percent()) + "% > " + text::format_double(p_.threshold_layer) + "%)");
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{{}, p_.tensor_regex};
    std::vector<std::string> names_;
};

}  // namespace smdebug
