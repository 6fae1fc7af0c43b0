#pragma once
// VanishingGradient (docs/rules.md "Built-in rules"; AWS "VanishingGradient" rule).
// Fires at a step when a tensor of collection `gradients` saved at that step has a mean absolute
// value (reduction "mean" with abs, stored or computed) below `threshold`. Every gradient is
// checked (not only the first, unlike the docs' simplified code); the finding names the first.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct VanishingGradientParams {
    double threshold = 1e-7;

    static VanishingGradientParams parse(const std::string& rule, RuleParams& p) {
        VanishingGradientParams v;
        v.threshold = p.number(rule, "threshold", v.threshold);
        return v;
    }
};

template <Store S>
class VanishingGradient : public RuntimeRule<S> {
public:
    using Params = VanishingGradientParams;
    explicit VanishingGradient(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "VanishingGradient"), p_(p) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = detail::tensors_at_step(this->base_trial(), step, {"gradients"}, {});
        for (const auto& n : names_) this->req_.add(this->base_trial(), n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (const auto& n : names_) {
            if (!this->req_.readable(this->base_trial(), n, step)) continue;  // unreadable here: skipped alone
            const double m = this->req_.reduction(this->base_trial(), n, step, Reduction::mean, true);
            if (m < p_.threshold)
                return this->fired("tensor " + n + ": mean(|x|)=" + text::format_double(m) + " < threshold " + text::format_double(p_.threshold));
        }
        return false;
    }

private:
    Params p_;
    std::vector<std::string> names_;
};

}  // namespace smdebug
