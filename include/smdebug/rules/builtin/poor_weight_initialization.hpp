#pragma once
// PoorWeightInitialization (definition from the AWS "PoorWeightInitialization" rule: over the
// initial steps it checks the variance of activation inputs across layers, the spread of the
// gradients and the loss convergence).
// Only global steps below `steps` are checked. At such a step it fires when
//  (a) the activation inputs (tensors matching `activation_inputs_regex`, two or more) have
//      variances whose ratio largest / smallest exceeds `threshold`; or
//  (b) a tensor of collection `gradients` has a 95th minus 5th percentile (linear interpolation,
//      as numpy.percentile) below `distribution_range`; or
//  (c) a loss (rules/builtin/loss_tensors.hpp) has not improved on its best value for `patience`
//      of its steps.
#include <map>

#include <smdebug/rules/builtin/loss_tensors.hpp>

namespace smdebug {

struct PoorWeightInitializationParams {
    static constexpr std::string_view rule_name = "PoorWeightInitialization";
    static constexpr std::string_view fires_when = "in the first `steps` steps: activation-input variances differ by more than threshold, a gradient's 5-95 percentile range < distribution_range, or the loss stalls for patience steps";

    std::vector<std::string> activation_inputs_regex = rule_param_default(&PoorWeightInitializationParams::activation_inputs_regex);
    double threshold = rule_param_default(&PoorWeightInitializationParams::threshold);
    double distribution_range = rule_param_default(&PoorWeightInitializationParams::distribution_range);
    std::int64_t patience = rule_param_default(&PoorWeightInitializationParams::patience);
    std::int64_t steps = rule_param_default(&PoorWeightInitializationParams::steps);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&PoorWeightInitializationParams::activation_inputs_regex, "activation_inputs_regex", ".*relu_input", "activation input tensors"),
            rule_param(&PoorWeightInitializationParams::threshold, "threshold", "10", "largest allowed variance ratio across layers"),
            rule_param(&PoorWeightInitializationParams::distribution_range, "distribution_range", "0.001", "smallest allowed 5th-95th percentile range of a gradient"),
            rule_param(&PoorWeightInitializationParams::patience, "patience", "5", "steps without a lower loss", 1),
            rule_param(&PoorWeightInitializationParams::steps, "steps", "10", "initial global steps checked", 1)};
    }
    static PoorWeightInitializationParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<PoorWeightInitializationParams>(rule, p); }
};

namespace detail {
inline double percentile(std::vector<double> x, double q) {
    std::sort(x.begin(), x.end());
    const double pos = q / 100.0 * static_cast<double>(x.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, x.size() - 1);
    return x[lo] + (x[hi] - x[lo]) * (pos - static_cast<double>(lo));
}
}  // namespace detail

template <Store S>
class PoorWeightInitialization : public RuntimeRule<S> {
public:
    using Params = PoorWeightInitializationParams;
    explicit PoorWeightInitialization(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "PoorWeightInitialization"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        auto& t = this->base_trial();
        acts_.clear(), grads_.clear(), losses_.clear();
        if (step >= p_.steps) return;
        acts_ = activations_selection_.at_step(t, step);
        grads_ = gradients_selection_.at_step(t, step);
        losses_ = loss_selection_.at_step(t, step);
        for (const auto* list : {&acts_, &grads_, &losses_})
            for (const auto& n : *list) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        if (step >= p_.steps) return false;
        if (acts_.size() >= 2) {
            double lo = 0, hi = 0;
            std::string lo_n, hi_n;
            for (const auto& n : acts_) {
                const double var = this->reduction(n, step, Reduction::variance);
                if (lo_n.empty() || var < lo) lo = var, lo_n = n;
                if (hi_n.empty() || var > hi) hi = var, hi_n = n;
            }
            if (hi > p_.threshold * lo)
                return this->fired("activation input variance " + text::format_double(hi) + " (" + hi_n + ") vs " + text::format_double(lo) +
                                   " (" + lo_n + "): ratio above " + text::format_double(p_.threshold));
        }
        bool narrow = false;  // every gradient too narrow is reported
        for (const auto& n : grads_) {
            const TensorValue* value = nullptr;
            try {
                value = &this->value(n, step);
            } catch (const TensorUnavailableForStep&) {
                if (!narrow) throw;  // the step is skipped, as before a finding
                break;
            }
            const auto g = detail::as_doubles(*value);
            if (g.size() < 2) continue;
            const double spread = detail::percentile(g, 95) - detail::percentile(g, 5);
            if (spread < p_.distribution_range)
                narrow = this->fired("tensor " + n + ": 5th-95th percentile range " + text::format_double(spread) + " < " +
                                     text::format_double(p_.distribution_range));
        }
        if (narrow) return true;
        bool fire = false;
        for (const auto& n : losses_) {
            const auto v = detail::scalar_value(this->value(n, step));
            if (!v) continue;
            auto& st = loss_[n];
            if (!st.first || *v < st.second) {
                st = {true, *v};
                since_[n] = 0;
            } else if (++since_[n] >= p_.patience) {  // every loss that fires is reported
                fire = this->fired("tensor " + n + ": loss has not decreased for " + std::to_string(since_[n]) + " steps");
            }
        }
        return fire;
    }

private:
    Params p_;
    detail::TensorSelection activations_selection_{{}, p_.activation_inputs_regex};
    detail::TensorSelection gradients_selection_{{"gradients"}, {}};
    detail::LossTensors loss_selection_{{}};
    std::vector<std::string> acts_, grads_, losses_;
    std::map<std::string, std::pair<bool, double>> loss_;
    std::map<std::string, std::int64_t> since_;
};

}  // namespace smdebug
