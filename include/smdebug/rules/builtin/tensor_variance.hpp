#pragma once
// TensorVariance (definition from the AWS "TensorVariance" rule: detects tensors with very high or
// very low variance, which can saturate neurons and slow learning).
// Inspected tensors: saved at the step, in one of `collection_names` or matching one of
// `tensor_regex` (at least one of the two is required). Fires when an inspected tensor's variance
// (ddof 0, stored reduction when saved) is above `max_threshold` or below `min_threshold`; at
// least one threshold is required.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct TensorVarianceParams {
    std::vector<std::string> collection_names;
    std::vector<std::string> tensor_regex;
    std::optional<double> max_threshold;
    std::optional<double> min_threshold;

    static TensorVarianceParams parse(const std::string& rule, RuleParams& p) {
        TensorVarianceParams v;
        v.collection_names = p.list(rule, "collection_names");
        v.tensor_regex = p.list(rule, "tensor_regex");
        v.max_threshold = p.optional_number(rule, "max_threshold");
        v.min_threshold = p.optional_number(rule, "min_threshold");
        return v;
    }
};

template <Store S>
class TensorVariance : public RuntimeRule<S> {
public:
    using Params = TensorVarianceParams;
    explicit TensorVariance(Trial<S>& base, Params p) : RuntimeRule<S>(base, "TensorVariance"), p_(std::move(p)) {
        if (p_.collection_names.empty() && p_.tensor_regex.empty())
            throw InvalidRuleParameter("TensorVariance", "collection_names", "", "collection_names or tensor_regex is required");
        if (!p_.max_threshold && !p_.min_threshold)
            throw InvalidRuleParameter("TensorVariance", "max_threshold", "", "max_threshold or min_threshold is required");
    }

    void set_required_tensors(std::int64_t step) override {
        names_ = detail::tensors_at_step(this->base_trial(), step, p_.collection_names, p_.tensor_regex);
        for (const auto& n : names_) this->req_.add(this->base_trial(), n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (const auto& n : names_) {
            if (!this->req_.readable(this->base_trial(), n, step)) continue;  // unreadable here: skipped alone
            const double var = this->req_.reduction(this->base_trial(), n, step, Reduction::variance);
            if ((p_.max_threshold && var > *p_.max_threshold) || (p_.min_threshold && var < *p_.min_threshold))
                return this->fired("tensor " + n + ": variance " + text::format_double(var) + " outside [" +
                                   (p_.min_threshold ? text::format_double(*p_.min_threshold) : "-inf") + ", " +
                                   (p_.max_threshold ? text::format_double(*p_.max_threshold) : "inf") + "]");
        }
        return false;
    }

private:
    Params p_;
    std::vector<std::string> names_;
};

}  // namespace smdebug
