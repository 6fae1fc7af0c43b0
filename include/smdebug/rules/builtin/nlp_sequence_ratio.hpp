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
    static constexpr std::string_view rule_name = "NLPSequenceRatio";
    static constexpr std::string_view fires_when = "a token value makes up more than its threshold percent of the input sequences";

    std::vector<std::string> tensor_regex = rule_param_default(&NLPSequenceRatioParams::tensor_regex);
    std::vector<double> token_values = rule_param_default(&NLPSequenceRatioParams::token_values);
    std::vector<double> token_thresholds_percent = rule_param_default(&NLPSequenceRatioParams::token_thresholds_percent);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&NLPSequenceRatioParams::tensor_regex, "tensor_regex", ".*embedding0_input_0", "token id tensors"),
            rule_param(&NLPSequenceRatioParams::token_values, "token_values", "0", "token values (comma separated)"),
            rule_param(&NLPSequenceRatioParams::token_thresholds_percent, "token_thresholds_percent", "50,50", "largest allowed percentage per token value")};
    }
    static NLPSequenceRatioParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<NLPSequenceRatioParams>(rule, p); }
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
        names_ = selection_.at_step(this->base_trial(), step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        bool found = false;  // every tensor that fires is reported (its first token over the threshold)
        for (const auto& n : names_) {
            const auto* v = this->fetched_value(n, step);
            if (!v) continue;  // unreadable here: skipped alone
            const auto x = detail::as_doubles(*v);
            if (x.empty()) continue;
            for (std::size_t i = 0; i < p_.token_values.size(); ++i) {
                const auto hits = std::count(x.begin(), x.end(), p_.token_values[i]);
                const double pct = 100.0 * static_cast<double>(hits) / static_cast<double>(x.size());
                if (pct > p_.token_thresholds_percent[i]) {
                    found = this->fired("tensor " + n + ": token " + text::format_double(p_.token_values[i]) + " is " + text::format_double(pct) +
                                        "% of the sequence > " + text::format_double(p_.token_thresholds_percent[i]) + "%");
                    break;
                }
            }
        }
        return found;
    }

private:
    Params p_;
    detail::TensorSelection selection_{{}, p_.tensor_regex};
    std::vector<std::string> names_;
};

}  // namespace smdebug
