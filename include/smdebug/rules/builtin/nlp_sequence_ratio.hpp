#pragma once
// NLPSequenceRatio (docs/rules.md "Built-in rules": names and defaults; definition from the AWS
// "NLPSequenceRatio" rule: the ratio of given tokens, such as padding, in the input sequences).
// Inspected tensors: saved at the step and matching `tensor_regex` (token ids). For each i,
// fires when the percentage of elements equal to token_values[i] exceeds
// token_thresholds_percent[i]. The two comma-separated lists pair by position; extra thresholds
// are ignored (the documented defaults are "0" and "50,50"), too few is an InvalidRuleParameter.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct NLPSequenceRatioParams {
    std::vector<std::string> tensor_regex{".*embedding0_input_0"};
    std::vector<double> token_values{0};
    std::vector<double> token_thresholds_percent{50, 50};

    static NLPSequenceRatioParams parse(const std::string& rule, RuleParams& p) {
        NLPSequenceRatioParams v;
        v.tensor_regex = p.list(rule, "tensor_regex", ".*embedding0_input_0");
        v.token_values = p.number_list(rule, "token_values", "0");
        v.token_thresholds_percent = p.number_list(rule, "token_thresholds_percent", "50,50");
        return v;
    }
};

template <Store S>
class NLPSequenceRatio : public RuntimeRule<S> {
public:
    using Params = NLPSequenceRatioParams;
    explicit NLPSequenceRatio(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "NLPSequenceRatio"), p_(std::move(p)) {
        if (p_.token_thresholds_percent.size() < p_.token_values.size())
            throw InvalidRuleParameter("NLPSequenceRatio", "token_thresholds_percent", "",
                                       "needs one threshold per token value (" + std::to_string(p_.token_values.size()) + ")");
    }

    void set_required_tensors(std::int64_t step) override {
        names_ = detail::tensors_at_step(this->base_trial(), step, {}, p_.tensor_regex);
        for (const auto& n : names_) this->req_.add(this->base_trial(), n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (const auto& n : names_) {
            if (!this->req_.has_value(this->base_trial(), n, step)) continue;  // unreadable here: skipped alone
            const auto x = detail::as_doubles(this->req_.value(this->base_trial(), n, step));
            if (x.empty()) continue;
            for (std::size_t i = 0; i < p_.token_values.size(); ++i) {
                const auto hits = std::count(x.begin(), x.end(), p_.token_values[i]);
                const double pct = 100.0 * static_cast<double>(hits) / static_cast<double>(x.size());
                if (pct > p_.token_thresholds_percent[i])
                    return this->fired("tensor " + n + ": token " + text::format_double(p_.token_values[i]) + " is " + text::format_double(pct) +
                                       "% of the sequence > " + text::format_double(p_.token_thresholds_percent[i]) + "%");
            }
        }
        return false;
    }

private:
    Params p_;
    std::vector<std::string> names_;
};

}  // namespace smdebug
