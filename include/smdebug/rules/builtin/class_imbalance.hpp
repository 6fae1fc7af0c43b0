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
    double threshold_imbalance = 10.0;
    double threshold_misprediction = 0.7;
    std::int64_t samples = 500;
    bool argmax = false;
    std::vector<std::string> labels_regex{".*labels"};
    std::vector<std::string> predictions_regex{".*predictions"};

    static ClassImbalanceParams parse(const std::string& rule, RuleParams& p) {
        ClassImbalanceParams v;
        v.threshold_imbalance = p.number(rule, "threshold_imbalance", v.threshold_imbalance);
        v.threshold_misprediction = p.number(rule, "threshold_misprediction", v.threshold_misprediction);
        v.samples = p.integer(rule, "samples", v.samples, 1);
        v.argmax = p.boolean(rule, "argmax", v.argmax);
        v.labels_regex = p.list(rule, "labels_regex", ".*labels");
        v.predictions_regex = p.list(rule, "predictions_regex", ".*predictions");
        return v;
    }
};

template <Store S>
class ClassImbalance : public RuntimeRule<S> {
public:
    using Params = ClassImbalanceParams;
    explicit ClassImbalance(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "ClassImbalance"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        auto& t = this->base_trial();
        labels_ = detail::tensors_at_step(t, step, {}, p_.labels_regex);
        preds_ = detail::tensors_at_step(t, step, {}, p_.predictions_regex);
        for (const auto& n : labels_) this->req_.add(t, n, step);
        for (const auto& n : preds_) this->req_.add(t, n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        auto& t = this->base_trial();
        for (std::size_t k = 0; k < labels_.size() && k < preds_.size(); ++k) {
            const auto y = detail::class_indices(this->req_.value(t, labels_[k], step), false);
            const auto yhat = detail::class_indices(this->req_.value(t, preds_[k], step), p_.argmax);
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
    std::vector<std::string> labels_, preds_;
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> counts_;  // class -> (samples, correct)
    std::int64_t total_ = 0;
};

}  // namespace smdebug
