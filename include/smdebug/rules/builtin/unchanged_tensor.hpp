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
    std::vector<std::string> collection_names;
    std::vector<std::string> tensor_regex;
    std::int64_t num_steps = 3;
    double rtol = 1e-5;
    double atol = 1e-8;
    bool equal_nan = false;

    static UnchangedTensorParams parse(const std::string& rule, RuleParams& p) {
        UnchangedTensorParams v;
        v.collection_names = p.list(rule, "collection_names");
        v.tensor_regex = p.list(rule, "tensor_regex");
        v.num_steps = p.integer(rule, "num_steps", v.num_steps, 2);
        v.rtol = p.number(rule, "rtol", v.rtol);
        v.atol = p.number(rule, "atol", v.atol);
        v.equal_nan = p.boolean(rule, "equal_nan", v.equal_nan);
        return v;
    }
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
        for (const auto& n : detail::tensors_at_step(t, step, p_.collection_names, p_.tensor_regex)) {
            auto steps = t.tensor(n).prev_steps(step, static_cast<std::size_t>(p_.num_steps));
            if (steps.size() < static_cast<std::size_t>(p_.num_steps) || steps.back() != step) continue;
            this->req_.add(t, n, steps);
            checks_.emplace_back(n, std::move(steps));
        }
    }
    bool invoke_at_step(std::int64_t step) override {
        auto& t = this->base_trial();
        for (const auto& [n, steps] : checks_) {
            const auto& current = this->req_.value(t, n, step);
            bool same = true;
            for (auto s : steps)
                if (s != step && !detail::allclose(this->req_.value(t, n, s), current, p_.rtol, p_.atol, p_.equal_nan)) {
                    same = false;
                    break;
                }
            if (same) return this->fired("tensor " + n + ": unchanged over steps " + join(steps));
        }
        return false;
    }

private:
    static std::string join(const std::vector<std::int64_t>& v) {
        std::string s;
        for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
        return s;
    }
    Params p_;
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> checks_;
};

}  // namespace smdebug
