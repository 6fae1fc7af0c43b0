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
    std::vector<std::string> include_regex;

    static SimilarAcrossRunsParams parse(const std::string& rule, RuleParams& p) {
        SimilarAcrossRunsParams v;
        v.include_regex = p.list(rule, "include_regex");
        if (v.include_regex.empty()) v.include_regex = p.list(rule, "include");
        return v;
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
        const auto mine = p_.include_regex.empty() ? detail::all_tensors_at_step(a, step) : detail::tensors_at_step(a, step, {}, p_.include_regex);
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
        for (const auto& n : names_) {
            if (!this->req_.has_value(a, n, step) || !this->req_.has_value(b, n, step)) continue;  // skipped alone
            const auto& x = this->req_.value(a, n, step);
            const auto& y = this->req_.value(b, n, step);
            if (x.dtype() != y.dtype() || x.shape() != y.shape()) return this->fired("tensor " + n + ": dtype or shape differs");
            if (x.is_string()) {
                if (x.strings() != y.strings()) return this->fired("tensor " + n + ": strings differ");
                continue;
            }
            const auto u = detail::as_doubles(x), v = detail::as_doubles(y);
            for (std::size_t i = 0; i < u.size(); ++i)
                if (!(u[i] == v[i]))
                    return this->fired("tensor " + n + ": element " + std::to_string(i) + " is " + text::format_double(u[i]) + " vs " +
                                       text::format_double(v[i]));
        }
        return false;
    }

private:
    Params p_;
    std::vector<std::string> names_;
};

}  // namespace smdebug
