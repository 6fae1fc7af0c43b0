#pragma once
// UnchangedTensor (docs/rules.md "Built-in rules"; AWS "UnchangedTensor" rule).
// Inspected tensors: saved at the step and in one of `collection_names` or matching one of
// `tensor_regex` (union; at least one required). For each, take its last `num_steps` available
// steps up to and including this one (not necessarily consecutive). Fires when there are
// `num_steps` of them and every earlier value is numpy-allclose to the current one:
// |a - b| <= atol + rtol * |b| elementwise, same shape, NaN equal to NaN only with `equal_nan`.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct UnchangedTensorParams {
    static constexpr std::string_view rule_name = "UnchangedTensor";
    static constexpr std::string_view fires_when = "an inspected tensor is allclose over its last num_steps saved steps";

    std::vector<std::string> collection_names = rule_param_default(&UnchangedTensorParams::collection_names);
    std::vector<std::string> tensor_regex = rule_param_default(&UnchangedTensorParams::tensor_regex);
    std::int64_t num_steps = rule_param_default(&UnchangedTensorParams::num_steps);
    double rtol = rule_param_default(&UnchangedTensorParams::rtol);
    double atol = rule_param_default(&UnchangedTensorParams::atol);
    bool equal_nan = rule_param_default(&UnchangedTensorParams::equal_nan);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&UnchangedTensorParams::collection_names, "collection_names", "", "collections to inspect"),
            rule_param(&UnchangedTensorParams::tensor_regex, "tensor_regex", "", "patterns of tensors to inspect; one of the two is required"),
            rule_param(&UnchangedTensorParams::num_steps, "num_steps", "3", "saved steps compared", 2),
            rule_param(&UnchangedTensorParams::rtol, "rtol", "1e-05", "relative tolerance"),
            rule_param(&UnchangedTensorParams::atol, "atol", "1e-08", "absolute tolerance"),
            rule_param(&UnchangedTensorParams::equal_nan, "equal_nan", "false", "NaN equals NaN")};
    }
    static UnchangedTensorParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<UnchangedTensorParams>(rule, p); }
};

namespace detail {
inline bool allclose(const TensorValue& a, const TensorValue& b, double rtol, double atol, bool equal_nan) {
    if (a.shape() != b.shape()) return false;
    const auto x = as_doubles(a), y = as_doubles(b);
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (std::isnan(x[i]) || std::isnan(y[i])) {
            if (!(equal_nan && std::isnan(x[i]) && std::isnan(y[i]))) return false;
            continue;
        }
        if (std::isinf(x[i]) || std::isinf(y[i])) {
            if (x[i] != y[i]) return false;
            continue;
        }
        if (!(std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i]))) return false;
    }
    return true;
}
}  // namespace detail

template <Store S>
class UnchangedTensor : public RuntimeRule<S> {
public:
    using Params = UnchangedTensorParams;
    explicit UnchangedTensor(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "UnchangedTensor"), p_(std::move(p)) {
        if (p_.collection_names.empty() && p_.tensor_regex.empty())
            throw InvalidRuleParameter("UnchangedTensor", "collection_names", "", "collection_names or tensor_regex is required");
        if (p_.num_steps < 2) throw InvalidRuleParameter("UnchangedTensor", "num_steps", std::to_string(p_.num_steps), "must be at least 2");
    }

    void set_required_tensors(std::int64_t step) override {
        auto& t = this->base_trial();
        checks_.clear();
        for (const auto& n : selection_.at_step(t, step)) {
            auto steps = t.tensor(n).prev_steps(step, static_cast<std::size_t>(p_.num_steps));
            if (steps.size() < static_cast<std::size_t>(p_.num_steps) || steps.back() != step) continue;
            this->require(n, steps);
            checks_.emplace_back(n, std::move(steps));
        }
    }
    bool invoke_at_step(std::int64_t step) override {
        bool found = false;  // every unchanged tensor is reported
        for (const auto& [n, steps] : checks_) {
            try {
                const auto& current = this->value(n, step);
                bool same = true;
                for (auto s : steps)
                    if (s != step && !detail::allclose(this->value(n, s), current, p_.rtol, p_.atol, p_.equal_nan)) {
                        same = false;
                        break;
                    }
                if (same) found = this->fired("tensor " + n + ": unchanged over steps " + join(steps));
            } catch (const TensorUnavailableForStep&) {
                if (!found) throw;  // the step is skipped, as before a finding
                break;              // after one: the step fired with what was found
            }
        }
        return found;
    }

private:
    static std::string join(const std::vector<std::int64_t>& v) {
        std::string s;
        for (auto x : v) {
            if (!s.empty()) s += ',';
            s += std::to_string(x);
        }
        return s;
    }
    Params p_;
    detail::TensorSelection selection_{p_.collection_names, p_.tensor_regex};
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> checks_;
};

}  // namespace smdebug
