#pragma once
// ClassImbalance (docs/rules.md "Built-in rules"; AWS "ClassImbalance" rule: "measures sampling
// imbalances between classes and throws errors if the imbalance exceeds a threshold or if too many
// mispredictions for underrepresented classes occur").
// Label tensors match `labels_regex`, prediction tensors `predictions_regex` (paired in name
// order); with `argmax` the predictions are scores and their argmax over the last axis is taken.
// The rule counts, over every step it has seen so far, each class's samples and how many of them
// were predicted correctly. Once at least `samples` labels were counted it fires when the largest
// class count divided by the smallest (non-zero) count exceeds `threshold_imbalance`, or when a
// class's share of correct predictions is below `threshold_misprediction`.
#include <map>

#include <smdebug/rules/builtin/common.hpp>
#include <smdebug/rules/builtin/confusion.hpp>

namespace smdebug {

struct ClassImbalanceParams {
    static constexpr std::string_view rule_name = "ClassImbalance";
    static constexpr std::string_view fires_when = "class counts so far differ by more than threshold_imbalance, or a class is predicted right too rarely";

    double threshold_imbalance = rule_param_default(&ClassImbalanceParams::threshold_imbalance);
    double threshold_misprediction = rule_param_default(&ClassImbalanceParams::threshold_misprediction);
    std::int64_t samples = rule_param_default(&ClassImbalanceParams::samples);
    bool argmax = rule_param_default(&ClassImbalanceParams::argmax);
    std::vector<std::string> labels_regex = rule_param_default(&ClassImbalanceParams::labels_regex);
    std::vector<std::string> predictions_regex = rule_param_default(&ClassImbalanceParams::predictions_regex);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&ClassImbalanceParams::threshold_imbalance, "threshold_imbalance", "10", "largest / smallest class count"),
            rule_param(&ClassImbalanceParams::threshold_misprediction, "threshold_misprediction", "0.7", "minimum share of correct predictions per class"),
            rule_param(&ClassImbalanceParams::samples, "samples", "500", "labels to count before checking", 1),
            rule_param(&ClassImbalanceParams::argmax, "argmax", "false", "predictions are scores: take the argmax of the last axis"),
            rule_param(&ClassImbalanceParams::labels_regex, "labels_regex", ".*labels", "label tensors"),
            rule_param(&ClassImbalanceParams::predictions_regex, "predictions_regex", ".*predictions", "prediction tensors")};
    }
    static ClassImbalanceParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<ClassImbalanceParams>(rule, p); }
};

template <Store S>
class ClassImbalance : public RuntimeRule<S> {
public:
    using Params = ClassImbalanceParams;
    explicit ClassImbalance(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "ClassImbalance"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        auto& t = this->base_trial();
        labels_ = labels_selection_.at_step(t, step);
        preds_ = predictions_selection_.at_step(t, step);
        for (const auto& n : labels_) this->require(n, step);
        for (const auto& n : preds_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        for (std::size_t k = 0; k < labels_.size() && k < preds_.size(); ++k) {
            const auto y = detail::class_indices(this->value(labels_[k], step), false);
            const auto yhat = detail::class_indices(this->value(preds_[k], step), p_.argmax);
            for (std::size_t i = 0; i < y.size(); ++i) {
                auto& c = counts_[y[i]];
                ++c.first;
                if (i < yhat.size() && yhat[i] == y[i]) ++c.second;
                ++total_;
            }
        }
        if (total_ < p_.samples || counts_.empty()) return false;
        std::int64_t lo = -1, hi = 0, lo_class = 0, hi_class = 0;
        for (const auto& [cls, c] : counts_) {
            if (lo < 0 || c.first < lo) { lo = c.first; lo_class = cls; }
            if (c.first > hi) { hi = c.first; hi_class = cls; }
        }
        const double ratio = static_cast<double>(hi) / static_cast<double>(lo);
        if (ratio > p_.threshold_imbalance)
            return this->fired("class " + std::to_string(hi_class) + " has " + std::to_string(hi) + " samples, class " + std::to_string(lo_class) +
                               " " + std::to_string(lo) + ": imbalance " + text::format_double(ratio) + " > " + text::format_double(p_.threshold_imbalance));
        for (const auto& [cls, c] : counts_) {
            const double correct = static_cast<double>(c.second) / static_cast<double>(c.first);
            if (correct < p_.threshold_misprediction)
                return this->fired("class " + std::to_string(cls) + ": " + text::format_double(correct) + " predicted correctly < " +
                                   text::format_double(p_.threshold_misprediction));
        }
        return false;
    }

private:
    Params p_;
    detail::TensorSelection labels_selection_{{}, p_.labels_regex};
    detail::TensorSelection predictions_selection_{{}, p_.predictions_regex};
    std::vector<std::string> labels_, preds_;
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> counts_;  // class -> (samples, correct)
    std::int64_t total_ = 0;
};

}  // namespace smdebug
