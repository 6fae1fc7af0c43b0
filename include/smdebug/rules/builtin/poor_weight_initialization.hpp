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
    std::vector<std::string> activation_inputs_regex{".*relu_input"};
    double threshold = 10.0;
    double distribution_range = 0.001;
    std::int64_t patience = 5;
    std::int64_t steps = 10;

    static PoorWeightInitializationParams parse(const std::string& rule, RuleParams& p) {
        PoorWeightInitializationParams v;
        v.activation_inputs_regex = p.list(rule, "activation_inputs_regex", ".*relu_input");
        v.threshold = p.number(rule, "threshold", v.threshold);
        v.distribution_range = p.number(rule, "distribution_range", v.distribution_range);
        v.patience = p.integer(rule, "patience", v.patience, 1);
        v.steps = p.integer(rule, "steps", v.steps, 1);
        return v;
    }
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
        acts_ = detail::tensors_at_step(t, step, {}, p_.activation_inputs_regex);
        grads_ = detail::tensors_at_step(t, step, {"gradients"}, {});
        losses_ = detail::loss_tensors_at_step(t, step, {});
        for (const auto* list : {&acts_, &grads_, &losses_})
            for (const auto& n : *list) this->req_.add(t, n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        if (step >= p_.steps) return false;
        auto& t = this->base_trial();
        if (acts_.size() >= 2) {
            double lo = 0, hi = 0;
            std::string lo_n, hi_n;
            for (const auto& n : acts_) {
                const double var = this->req_.reduction(t, n, step, Reduction::variance);
                if (lo_n.empty() || var < lo) lo = var, lo_n = n;
                if (hi_n.empty() || var > hi) hi = var, hi_n = n;
            }
            if (hi > p_.threshold * lo)
                return this->fired("activation input variance " + text::format_double(hi) + " (" + hi_n + ") vs " + text::format_double(lo) +
                                   " (" + lo_n + "): ratio above " + text::format_double(p_.threshold));
        }
        for (const auto& n : grads_) {
            const auto g = detail::as_doubles(this->req_.value(t, n, step));
            if (g.size() < 2) continue;
            const double spread = detail::percentile(g, 95) - detail::percentile(g, 5);
            if (spread < p_.distribution_range)
                return this->fired("tensor " + n + ": 5th-95th percentile range " + text::format_double(spread) + " < " +
                                   text::format_double(p_.distribution_range));
        }
        bool fire = false;
        for (const auto& n : losses_) {
            const auto v = detail::scalar_value(this->req_.value(t, n, step));
            if (!v) continue;
            auto& st = loss_[n];
            if (!st.first || *v < st.second) {
                st = {true, *v};
                since_[n] = 0;
            } else if (++since_[n] >= p_.patience && !fire) {
                fire = this->fired("tensor " + n + ": loss has not decreased for " + std::to_string(since_[n]) + " steps");
            }
        }
        return fire;
    }

private:
    Params p_;
    std::vector<std::string> acts_, grads_, losses_;
    std::map<std::string, std::pair<bool, double>> loss_;
    std::map<std::string, std::int64_t> since_;
};

}  // namespace smdebug
