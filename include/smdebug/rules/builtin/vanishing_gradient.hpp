#pragma once
// VanishingGradient (docs/rules.md "Built-in rules"; AWS "VanishingGradient" rule).
// Fires at a step when a tensor of collection `gradients` saved at that step has a mean absolute
// value (reduction "mean" with abs, stored or computed) below `threshold`. Every gradient is
// checked (not only the first, unlike the docs' simplified code); the finding names the first.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct VanishingGradientParams {
    static constexpr std::string_view rule_name = "VanishingGradient";
    static constexpr std::string_view fires_when = "a gradient's mean absolute value is below threshold";
    static constexpr bool step_local = true;

    double threshold = rule_param_default(&VanishingGradientParams::threshold);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&VanishingGradientParams::threshold, "threshold", "1e-07", "smallest allowed mean(|gradient|)")};
    }
    static VanishingGradientParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<VanishingGradientParams>(rule, p); }
};

template <Store S>
class VanishingGradient : public RuntimeRule<S> {
public:
    using Params = VanishingGradientParams;
    explicit VanishingGradient(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "VanishingGradient"), p_(p) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = selection_.at_step(this->base_trial(), step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        bool found = false;  // every tensor that fires is reported
        for (const auto& n : names_) {
            if (!this->readable(n, step)) continue;  // unreadable here: skipped alone
            const double m = this->reduction(n, step, Reduction::mean, true);
            if (m < p_.threshold)
                found = this->fired("tensor " + n + ": mean(|x|)=" + text::format_double(m) + " < threshold " + text::format_double(p_.threshold));
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{{"gradients"}, {}};
    std::vector<std::string> names_;
};

}  // namespace smdebug
