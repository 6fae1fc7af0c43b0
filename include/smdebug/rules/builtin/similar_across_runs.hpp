#pragma once
// SimilarAcrossRuns (docs/rules.md "Built-in rules"; AWS "SimilarAcrossRuns" rule).
// Compares the base trial with `other_trial` (the first of the rule's other trials, required).
// Inspected tensors: saved at the step in the base trial, matching one of `include_regex` (all
// tensors when none is given), and also saved at that step in the other trial. Fires when an
// inspected tensor's values differ: another dtype, shape, or an element beyond the tolerance
// |a - b| <= atol + rtol * |a| (core/value_compare.hpp, the comparison of `smdebug diff`). The
// defaults, rtol 1e-05 and atol 1e-08 (numpy.allclose's), pass the rounding of float32 arithmetic
// (a relative 6e-08 per operation); rtol=0 and atol=0 compare bitwise. NaN agrees with NaN.
// The reference compares exactly (numpy.array_equal: any rounding fires, NaN differs from NaN):
// docs/deviations.md D28.
#include <cmath>
#include <utility>

#include <smdebug/core/value_compare.hpp>
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct SimilarAcrossRunsParams {
    static constexpr std::string_view rule_name = "SimilarAcrossRuns";
    static constexpr std::string_view fires_when =
        "a tensor differs between the base trial and the other trial at the same step (beyond |a-b| <= atol + rtol*|a|)";
    static constexpr bool needs_other_trial = true;

    std::vector<std::string> include_regex = rule_param_default(&SimilarAcrossRunsParams::include_regex);
    double rtol = rule_param_default(&SimilarAcrossRunsParams::rtol);
    double atol = rule_param_default(&SimilarAcrossRunsParams::atol);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&SimilarAcrossRunsParams::include_regex, "include_regex", "", "patterns of tensors to compare (default: all)"),
            rule_param(&SimilarAcrossRunsParams::rtol, "rtol", "1e-05", "relative tolerance (0 with atol 0: bitwise)"),
            rule_param(&SimilarAcrossRunsParams::atol, "atol", "1e-08", "absolute tolerance")};
    }
    static SimilarAcrossRunsParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<SimilarAcrossRunsParams>(rule, p); }
    // `include` is the older name: read when include_regex is not given.
    static void after_parse(const std::string& rule, RuleParams& p, SimilarAcrossRunsParams& v) {
        if (v.include_regex.empty()) v.include_regex = p.list(rule, "include");
    }
};

template <Store S>
class SimilarAcrossRuns : public RuntimeRule<S> {
public:
    using Params = SimilarAcrossRunsParams;
    SimilarAcrossRuns(Trial<S>& base, Trial<S>& other, Params p = {})
        : RuntimeRule<S>(base, "SimilarAcrossRuns", {&other}), p_(std::move(p)) {
        for (const auto& [name, v] : {std::pair{"rtol", p_.rtol}, std::pair{"atol", p_.atol}})
            if (!std::isfinite(v) || v < 0) throw InvalidRuleParameter("SimilarAcrossRuns", name, text::format_double(v), "must be a number >= 0");
    }

    void set_required_tensors(std::int64_t step) override {
        auto& a = this->base_trial();
        auto& b = *this->others_.front();
        names_.clear();
        const auto mine = p_.include_regex.empty() ? detail::all_tensors_at_step(a, step) : selection_.at_step(a, step);
        if (b.has_passed_step(step) != StepState::AVAILABLE) return;
        auto theirs = detail::all_tensors_at_step(b, step);
        std::sort(theirs.begin(), theirs.end());
        for (const auto& n : mine)
            if (std::binary_search(theirs.begin(), theirs.end(), n)) {
                names_.push_back(n);
                this->require(n, step);  // on the base trial
                this->req_.add(b, n, step);
            }
    }
    bool invoke_at_step(std::int64_t step) override {
        auto& a = this->base_trial();
        auto& b = *this->others_.front();
        bool found = false;  // every tensor that differs is reported (its first differing element)
        for (const auto& n : names_) {
            if (!this->req_.has_value(a, n, step) || !this->req_.has_value(b, n, step)) continue;  // skipped alone
            const auto c = compare_values(this->req_.value(a, n, step), this->req_.value(b, n, step), Tolerance{p_.rtol, p_.atol});
            if (!c.differ) continue;
            if (c.first_index < 0) found = this->fired("tensor " + n + ": " + c.reason);
            else
                found = this->fired("tensor " + n + ": element " + std::to_string(c.first_index) + " is " + text::format_double(c.first_a) + " vs " +
                                    text::format_double(c.first_b));
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{{}, p_.include_regex};
    std::vector<std::string> names_;
};

}  // namespace smdebug
