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
    std::vector<std::string> tensor_regex{".*relu_output"};
    double threshold_inactivity = 1.0;
    double threshold_layer = 50.0;

    static DeadReluParams parse(const std::string& rule, RuleParams& p) {
        DeadReluParams v;
        v.tensor_regex = p.list(rule, "tensor_regex", ".*relu_output");
        v.threshold_inactivity = p.number(rule, "threshold_inactivity", v.threshold_inactivity);
        v.threshold_layer = p.number(rule, "threshold_layer", v.threshold_layer);
        return v;
    }
};

template <Store S>
class DeadRelu : public RuntimeRule<S> {
public:
    using Params = DeadReluParams;
    explicit DeadRelu(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "DeadRelu"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = detail::tensors_at_step(this->base_trial(), step, {}, p_.tensor_regex);
        for (const auto& n : names_) this->req_.add(this->base_trial(), n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (const auto& n : names_) {
            if (!this->req_.has_value(this->base_trial(), n, step)) continue;  // unreadable here: skipped alone
            const auto a = detail::node_activity(this->req_.value(this->base_trial(), n, step), p_.threshold_inactivity,
                                                 [](double x) { return x > 0; });
            if (a.nodes && a.inactive_percent() > p_.threshold_layer)
                return this->fired("tensor " + n + ": " + std::to_string(a.inactive) + " of " + std::to_string(a.nodes) + " ReLUs dead (" +
                                   text::format_double(a.inactive_percent()) + "% > " + text::format_double(p_.threshold_layer) + "%)");
        }
        return false;
    }

private:
    Params p_;
    std::vector<std::string> names_;
};

}  // namespace smdebug
