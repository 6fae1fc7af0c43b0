#pragma once
// WeightUpdateRatio (docs/rules.md "Built-in rules"; AWS "WeightUpdateRatio" rule).
// For each tensor of collection `weights` saved at this step and at the TRAIN step before (it needs
// weights at consecutive TRAIN steps, save_interval 1): ratio = ||w(s) - w(s-1)||₂ / (||w(s-1)||₂ +
// epsilon), where s-1 is the previous TRAIN mode step. EVAL and PREDICT steps are not checked, and
// the TRAIN step after an EVAL phase is compared with the last TRAIN step before it, not with the
// EVAL step (which does not train: the weights did not change; docs/deviations.md D26). A trial
// without modes (GLOBAL steps) compares consecutive global steps.
// Fires when ratio > large_threshold or ratio < small_threshold. Tensors without the previous
// step are not checked. (The ratio's exact formula is not in the reference; this is the
// documented "ratio of the update to the weight" with epsilon guarding the division.)
#include <optional>
#include <vector>

#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct WeightUpdateRatioParams {
    static constexpr std::string_view rule_name = "WeightUpdateRatio";
    static constexpr std::string_view fires_when = "||w(s)-w(s-1)|| / (||w(s-1)|| + epsilon) is above large_threshold or below small_threshold";

    double large_threshold = rule_param_default(&WeightUpdateRatioParams::large_threshold);
    double small_threshold = rule_param_default(&WeightUpdateRatioParams::small_threshold);
    double epsilon = rule_param_default(&WeightUpdateRatioParams::epsilon);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&WeightUpdateRatioParams::large_threshold, "large_threshold", "10", "largest allowed ratio"),
            rule_param(&WeightUpdateRatioParams::small_threshold, "small_threshold", "1e-08", "smallest allowed ratio"),
            rule_param(&WeightUpdateRatioParams::epsilon, "epsilon", "1e-09", "guards the division")};
    }
    static WeightUpdateRatioParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<WeightUpdateRatioParams>(rule, p); }
};

template <Store S>
class WeightUpdateRatio : public RuntimeRule<S> {
public:
    using Params = WeightUpdateRatioParams;
    explicit WeightUpdateRatio(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "WeightUpdateRatio"), p_(p) {}

    void set_required_tensors(std::int64_t step) override {
        auto& t = this->base_trial();
        names_.clear();
        prev_.reset();
        const auto mm = t.mode_modestep(step);
        if (!mm || mm->second == 0 || (mm->first != Mode::TRAIN && mm->first != Mode::GLOBAL)) return;
        prev_ = t.global_step(mm->first, mm->second - 1);
        if (!prev_) return;
        for (const auto& n : selection_.at_step(t, step)) {
            const auto prev = t.tensor(n).prev_steps(mm->second, 2, mm->first);  // mode steps
            if (prev.size() != 2 || prev[0] != mm->second - 1) continue;
            this->require(n, std::vector<std::int64_t>{*prev_, step});
            names_.push_back(n);
        }
    }
    bool invoke_at_step(std::int64_t step) override {
        bool found = false;  // every tensor that fires is reported
        for (const auto& n : names_) {
            if (!prev_ || !this->has_value(n, step) || !this->has_value(n, *prev_)) continue;  // skipped alone
            const auto w = detail::as_doubles(this->value(n, step));
            const auto w0 = detail::as_doubles(this->value(n, *prev_));
            if (w.size() != w0.size() || w.empty()) continue;
            double du = 0, dw = 0;
            for (std::size_t i = 0; i < w.size(); ++i) {
                du += (w[i] - w0[i]) * (w[i] - w0[i]);
                dw += w0[i] * w0[i];
            }
            const double ratio = std::sqrt(du) / (std::sqrt(dw) + p_.epsilon);
            if (ratio > p_.large_threshold || ratio < p_.small_threshold)
                found = this->fired("tensor " + n + ": update/weight ratio " + text::format_double(ratio) + " outside [" +
                                    text::format_double(p_.small_threshold) + ", " + text::format_double(p_.large_threshold) + "]");
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{{"weights"}, {}};
    std::vector<std::string> names_;
    std::optional<std::int64_t> prev_;  // the global step of the previous TRAIN (or GLOBAL) mode step
};

}  // namespace smdebug
