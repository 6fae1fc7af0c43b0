#pragma once
// ExplodingTensor (docs/rules.md "Built-in rules"; AWS "ExplodingTensor" rule).
// Inspected tensors at a step: those saved at the step that belong to one of `collection_names` or
// match one of `tensor_regex`; with neither given, every tensor saved at the step. Fires when an
// inspected numeric tensor holds a NaN, or (unless `only_nan`) +inf or -inf. Strings are skipped;
// integer and bool tensors are always finite. A collection the trial lacks is simply empty.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct ExplodingTensorParams {
    std::vector<std::string> collection_names;
    std::vector<std::string> tensor_regex;
    bool only_nan = false;

    static ExplodingTensorParams parse(const std::string& rule, RuleParams& p) {
        ExplodingTensorParams v;
        v.collection_names = p.list(rule, "collection_names");
        v.tensor_regex = p.list(rule, "tensor_regex");
        v.only_nan = p.boolean(rule, "only_nan", v.only_nan);
        return v;
    }
};

template <Store S>
class ExplodingTensor : public RuntimeRule<S> {
public:
    using Params = ExplodingTensorParams;
    explicit ExplodingTensor(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "ExplodingTensor"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        auto& t = this->base_trial();
        names_ = p_.collection_names.empty() && p_.tensor_regex.empty() ? detail::all_tensors_at_step(t, step)
                                                                         : detail::tensors_at_step(t, step, p_.collection_names, p_.tensor_regex);
        for (const auto& n : names_) this->req_.add(t, n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (const auto& n : names_) {
            if (!this->req_.has_value(this->base_trial(), n, step)) continue;  // stored reductions only
            const auto& v = this->req_.value(this->base_trial(), n, step);
            std::int64_t at = -1;
            double bad = 0;
            detail::with_elements(v, [&](auto e) {
                at = detail::first_nonfinite(e, p_.only_nan);
                if (at >= 0) bad = detail::to_double(e[static_cast<std::size_t>(at)]);
            });
            if (at >= 0)
                return this->fired("tensor " + n + ": " + text::format_double(bad) + " at element " + std::to_string(at));
        }
        return false;
    }

private:
    Params p_;
    std::vector<std::string> names_;
};

}  // namespace smdebug
