#pragma once
// ExplodingTensor (docs/rules.md "Built-in rules"; AWS "ExplodingTensor" rule).
// Inspected tensors at a step: those saved at the step that belong to one of `collection_names` or
// match one of `tensor_regex`; with neither given, every tensor saved at the step. Fires when an
// inspected numeric tensor holds a NaN, or (unless `only_nan`) +inf or -inf. Strings are skipped;
// integer and bool tensors are always finite. A collection the trial lacks is simply empty.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct ExplodingTensorParams {
    static constexpr std::string_view rule_name = "ExplodingTensor";
    static constexpr std::string_view fires_when = "an inspected tensor holds NaN (or +-inf unless only_nan)";
    static constexpr bool step_local = true;

    std::vector<std::string> collection_names = rule_param_default(&ExplodingTensorParams::collection_names);
    std::vector<std::string> tensor_regex = rule_param_default(&ExplodingTensorParams::tensor_regex);
    bool only_nan = rule_param_default(&ExplodingTensorParams::only_nan);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&ExplodingTensorParams::collection_names, "collection_names", "", "collections to inspect (default: every tensor)"),
            rule_param(&ExplodingTensorParams::tensor_regex, "tensor_regex", "", "patterns of tensors to inspect"),
            rule_param(&ExplodingTensorParams::only_nan, "only_nan", "false", "ignore +-inf")};
    }
    static ExplodingTensorParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<ExplodingTensorParams>(rule, p); }
};

template <Store S>
class ExplodingTensor : public RuntimeRule<S> {
public:
    using Params = ExplodingTensorParams;
    explicit ExplodingTensor(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "ExplodingTensor"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        auto& t = this->base_trial();
        names_ = p_.collection_names.empty() && p_.tensor_regex.empty() ? detail::all_tensors_at_step(t, step)
                                                                         : selection_.at_step(t, step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        bool found = false;  // every tensor that fires is reported
        for (const auto& n : names_) {
            const auto* fetched = this->fetched_value(n, step);
            if (!fetched) continue;  // stored reductions only
            const auto& v = *fetched;
            std::int64_t at = -1;
            double bad = 0;
            detail::with_elements(v, [&](auto e) {
                at = detail::first_nonfinite(e, p_.only_nan);
                if (at >= 0) bad = detail::to_double(e[static_cast<std::size_t>(at)]);
            });
            if (at >= 0)
                found = this->fired("tensor " + n + ": " + text::format_double(bad) + " at element " + std::to_string(at));
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{p_.collection_names, p_.tensor_regex};
    std::vector<std::string> names_;
};

}  // namespace smdebug
