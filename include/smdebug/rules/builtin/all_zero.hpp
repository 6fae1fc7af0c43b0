#pragma once
// AllZero (docs/rules.md "Built-in rules"; AWS "AllZero" rule).
// Inspected tensors: those saved at the step in one of `collection_names` or matching one of
// `tensor_regex` (the union; at least one of the two is required). Fires when the share of zero
// elements of an inspected, non-empty numeric tensor is at least `threshold` percent (default
// 100: every element is zero).
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct AllZeroParams {
    static constexpr std::string_view rule_name = "AllZero";
    static constexpr std::string_view fires_when = "an inspected tensor has at least `threshold` percent zeros";
    static constexpr bool step_local = true;

    std::vector<std::string> collection_names = rule_param_default(&AllZeroParams::collection_names);
    std::vector<std::string> tensor_regex = rule_param_default(&AllZeroParams::tensor_regex);
    double threshold = rule_param_default(&AllZeroParams::threshold);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&AllZeroParams::collection_names, "collection_names", "", "collections to inspect (comma separated)"),
            rule_param(&AllZeroParams::tensor_regex, "tensor_regex", "", "patterns of tensors to inspect; one of the two is required"),
            rule_param(&AllZeroParams::threshold, "threshold", "100", "percentage of zero elements")};
    }
    static AllZeroParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<AllZeroParams>(rule, p); }
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
        names_ = selection_.at_step(this->base_trial(), step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        bool found = false;  // every tensor that fires is reported
        for (const auto& n : names_) {
            const auto* fetched = this->fetched_value(n, step);
            if (!fetched) continue;
            const auto& v = *fetched;
            if (v.empty()) continue;
            std::size_t zeros = 0;
            if (!detail::with_elements(v, [&](auto e) {
                    for (const auto& x : e) zeros += detail::to_double(x) == 0.0;
                }))
                continue;
            const double pct = 100.0 * static_cast<double>(zeros) / static_cast<double>(v.size());
            if (pct >= p_.threshold)
                found = this->fired("tensor " + n + ": " + text::format_double(pct) + "% zeros (" + std::to_string(zeros) + " of " +
                                    std::to_string(v.size()) + ")");
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{p_.collection_names, p_.tensor_regex};
    std::vector<std::string> names_;
};

}  // namespace smdebug
