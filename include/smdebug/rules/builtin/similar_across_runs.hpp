#pragma once
// SimilarAcrossRuns (docs/rules.md "Built-in rules"; AWS "SimilarAcrossRuns" rule).
// Compares the base trial with `other_trial` (the first of the rule's other trials, required).
// Inspected tensors: saved at the step in the base trial, matching one of `include_regex` (all
// tensors when none is given), and also saved at that step in the other trial. Fires when an
// inspected tensor's values differ: another dtype, shape or any element (NaN differs from
// everything, as numpy.array_equal).
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct SimilarAcrossRunsParams {
    static constexpr std::string_view rule_name = "SimilarAcrossRuns";
    static constexpr std::string_view fires_when = "a tensor differs between the base trial and the other trial at the same step";
    static constexpr bool needs_other_trial = true;

    std::vector<std::string> include_regex = rule_param_default(&SimilarAcrossRunsParams::include_regex);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&SimilarAcrossRunsParams::include_regex, "include_regex", "", "patterns of tensors to compare (default: all)")};
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
        : RuntimeRule<S>(base, "SimilarAcrossRuns", {&other}), p_(std::move(p)) {}

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
                this->req_.add(a, n, step);
                this->req_.add(b, n, step);
            }
    }
    bool invoke_at_step(std::int64_t step) override {
        auto& a = this->base_trial();
        auto& b = *this->others_.front();
        bool found = false;  // every tensor that differs is reported (its first differing element)
        for (const auto& n : names_) {
            if (!this->req_.has_value(a, n, step) || !this->req_.has_value(b, n, step)) continue;  // skipped alone
            const auto& x = this->req_.value(a, n, step);
            const auto& y = this->req_.value(b, n, step);
            if (x.dtype() != y.dtype() || x.shape() != y.shape()) {
                found = this->fired("tensor " + n + ": dtype or shape differs");
                continue;
            }
            if (x.is_string()) {
                if (x.strings() != y.strings()) found = this->fired("tensor " + n + ": strings differ");
                continue;
            }
            const auto u = detail::as_doubles(x), v = detail::as_doubles(y);
            for (std::size_t i = 0; i < u.size(); ++i)
                if (!(u[i] == v[i])) {
                    found = this->fired("tensor " + n + ": element " + std::to_string(i) + " is " + text::format_double(u[i]) + " vs " +
                                        text::format_double(v[i]));
                    break;
                }
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{{}, p_.include_regex};
    std::vector<std::string> names_;
};

}  // namespace smdebug
