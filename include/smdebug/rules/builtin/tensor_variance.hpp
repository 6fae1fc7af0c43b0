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
    static constexpr std::string_view rule_name = "TensorVariance";
    static constexpr std::string_view fires_when = "an inspected tensor's variance is above max_threshold or below min_threshold";
    static constexpr bool step_local = true;

    std::vector<std::string> collection_names = rule_param_default(&TensorVarianceParams::collection_names);
    std::vector<std::string> tensor_regex = rule_param_default(&TensorVarianceParams::tensor_regex);
    std::optional<double> max_threshold = rule_param_default(&TensorVarianceParams::max_threshold);
    std::optional<double> min_threshold = rule_param_default(&TensorVarianceParams::min_threshold);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&TensorVarianceParams::collection_names, "collection_names", "", "collections to inspect"),
            rule_param(&TensorVarianceParams::tensor_regex, "tensor_regex", "", "patterns of tensors to inspect; one of the two is required"),
            rule_param(&TensorVarianceParams::max_threshold, "max_threshold", "", "largest allowed variance"),
            rule_param(&TensorVarianceParams::min_threshold, "min_threshold", "", "smallest allowed variance; one of the two is required")};
    }
    static TensorVarianceParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<TensorVarianceParams>(rule, p); }
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
        names_ = selection_.at_step(this->base_trial(), step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        bool found = false;  // every tensor that fires is reported
        for (const auto& n : names_) {
            if (!this->readable(n, step)) continue;  // unreadable here: skipped alone
            const double var = this->reduction(n, step, Reduction::variance);
            if ((p_.max_threshold && var > *p_.max_threshold) || (p_.min_threshold && var < *p_.min_threshold))
                found = this->fired("tensor " + n + ": variance " + text::format_double(var) + " outside [" +
                                    (p_.min_threshold ? text::format_double(*p_.min_threshold) : "-inf") + ", " +
                                    (p_.max_threshold ? text::format_double(*p_.max_threshold) : "inf") + "]");
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{p_.collection_names, p_.tensor_regex};
    std::vector<std::string> names_;
};

}  // namespace smdebug
