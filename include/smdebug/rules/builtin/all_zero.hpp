#pragma once
// AllZero (docs/rules.md "Built-in rules"; AWS "AllZero" rule).
// Inspected tensors: those saved at the step in one of `collection_names` or matching one of
// `tensor_regex` (the union; at least one of the two is required). Fires when the share of zero
// elements of an inspected, non-empty numeric tensor is at least `threshold` percent (default
// 100: every element is zero).
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct AllZeroParams {
    std::vector<std::string> collection_names;
    std::vector<std::string> tensor_regex;
    double threshold = 100.0;

    static AllZeroParams parse(const std::string& rule, RuleParams& p) {
        AllZeroParams v;
        v.collection_names = p.list(rule, "collection_names");
        v.tensor_regex = p.list(rule, "tensor_regex");
        v.threshold = p.number(rule, "threshold", v.threshold);
        return v;
    }
};

template <Store S>
class AllZero : public RuntimeRule<S> {
public:
    using Params = AllZeroParams;
    explicit AllZero(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "AllZero"), p_(std::move(p)) {
        if (p_.collection_names.empty() && p_.tensor_regex.empty())
            throw InvalidRuleParameter("AllZero", "collection_names", "", "collection_names or tensor_regex is required");
        if (!(p_.threshold >= 0 && p_.threshold <= 100))
            throw InvalidRuleParameter("AllZero", "threshold", text::format_double(p_.threshold), "must be a percentage in [0, 100]");
    }

    void set_required_tensors(std::int64_t step) override {
        names_ = detail::tensors_at_step(this->base_trial(), step, p_.collection_names, p_.tensor_regex);
        for (const auto& n : names_) this->req_.add(this->base_trial(), n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (const auto& n : names_) {
            if (!this->req_.has_value(this->base_trial(), n, step)) continue;
            const auto& v = this->req_.value(this->base_trial(), n, step);
            if (v.empty()) continue;
            std::size_t zeros = 0;
            if (!detail::with_elements(v, [&](auto e) {
                    for (const auto& x : e) zeros += detail::to_double(x) == 0.0;
                }))
                continue;
            const double pct = 100.0 * static_cast<double>(zeros) / static_cast<double>(v.size());
            if (pct >= p_.threshold)
                return this->fired("tensor " + n + ": " + text::format_double(pct) + "% zeros (" + std::to_string(zeros) + " of " +
                                   std::to_string(v.size()) + ")");
        }
        return false;
    }

private:
    Params p_;
    std::vector<std::string> names_;
};

}  // namespace smdebug
