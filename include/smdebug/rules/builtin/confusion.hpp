#pragma once
// Confusion (docs/rules.md "Built-in rules"; AWS "Confusion" rule).
// Labels: tensor `labels` if the trial has it, else the first tensor of collection
// `labels_collection`; predictions likewise (`predictions`, `predictions_collection`). Both are
// read at the step; when the predictions have one more dimension than the labels they are class
// scores and their argmax over the last axis is taken. C[label][prediction] counts the pairs;
// `category_no` (default: 1 + the largest label or prediction) bounds the classes.
// Normalisation (the inference of docs/rules.md "Built-in rules"): each column i is
// divided by its total Σ_j C[j][i]; columns with no predictions are skipped. Fires when a
// diagonal ratio C[i][i]/Σ_j C[j][i] < min_diag or an off-diagonal ratio C[j][i]/Σ_j C[j][i] > max_off_diag.
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct ConfusionParams {
    static constexpr std::string_view rule_name = "Confusion";
    static constexpr std::string_view fires_when = "a column-normalised confusion-matrix diagonal < min_diag or off-diagonal > max_off_diag";

    std::optional<std::int64_t> category_no = rule_param_default(&ConfusionParams::category_no);
    std::string labels = rule_param_default(&ConfusionParams::labels);
    std::string predictions = rule_param_default(&ConfusionParams::predictions);
    std::string labels_collection = rule_param_default(&ConfusionParams::labels_collection);
    std::string predictions_collection = rule_param_default(&ConfusionParams::predictions_collection);
    double min_diag = rule_param_default(&ConfusionParams::min_diag);
    double max_off_diag = rule_param_default(&ConfusionParams::max_off_diag);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&ConfusionParams::category_no, "category_no", "", "number of classes (default: from the data)", 1),
            rule_param(&ConfusionParams::labels, "labels", "labels", "labels tensor"),
            rule_param(&ConfusionParams::predictions, "predictions", "predictions", "predictions tensor"),
            rule_param(&ConfusionParams::labels_collection, "labels_collection", "labels", "collection searched when the labels tensor is absent"),
            rule_param(&ConfusionParams::predictions_collection, "predictions_collection", "predictions", "collection searched when the predictions tensor is absent"),
            rule_param(&ConfusionParams::min_diag, "min_diag", "0.9", "smallest allowed diagonal ratio"),
            rule_param(&ConfusionParams::max_off_diag, "max_off_diag", "0.1", "largest allowed off-diagonal ratio")};
    }
    static ConfusionParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<ConfusionParams>(rule, p); }
};

namespace detail {
// Class indices of a labels or predictions value (argmax over the last axis when `scores`).
inline std::vector<std::int64_t> class_indices(const TensorValue& v, bool scores) {
    const auto d = as_doubles(v);
    std::vector<std::int64_t> out;
    if (!scores) {
        for (double x : d) out.push_back(static_cast<std::int64_t>(std::llround(x)));
        return out;
    }
    const std::size_t k = v.shape().empty() ? 1 : v.shape().back();
    for (std::size_t i = 0; k && i + k <= d.size(); i += k)
        out.push_back(static_cast<std::int64_t>(std::max_element(d.begin() + static_cast<std::ptrdiff_t>(i), d.begin() + static_cast<std::ptrdiff_t>(i + k)) -
                                                (d.begin() + static_cast<std::ptrdiff_t>(i))));
    return out;
}
}  // namespace detail

template <Store S>
class Confusion : public RuntimeRule<S> {
public:
    using Params = ConfusionParams;
    explicit Confusion(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "Confusion"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        auto& t = this->base_trial();
        labels_ = pick(t, p_.labels, p_.labels_collection);
        preds_ = pick(t, p_.predictions, p_.predictions_collection);
        if (labels_.empty() || preds_.empty()) throw TensorUnavailable(labels_.empty() ? p_.labels : p_.predictions);
        this->require(labels_, step);
        this->require(preds_, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        const auto& lv = this->value(labels_, step);
        const auto& pv = this->value(preds_, step);
        const auto y = detail::class_indices(lv, false);
        const auto yhat = detail::class_indices(pv, pv.rank() == lv.rank() + 1);
        if (y.size() != yhat.size())
            throw SMDebugValueError("Confusion: " + labels_ + " has " + std::to_string(y.size()) + " labels but " + preds_ + " has " +
                                    std::to_string(yhat.size()) + " predictions at step " + std::to_string(step));
        std::int64_t n = p_.category_no.value_or(0);
        if (!p_.category_no)
            for (std::size_t i = 0; i < y.size(); ++i) n = std::max({n, y[i] + 1, yhat[i] + 1});
        std::vector<double> c(static_cast<std::size_t>(n * n), 0.0);
        for (std::size_t i = 0; i < y.size(); ++i)
            if (y[i] >= 0 && y[i] < n && yhat[i] >= 0 && yhat[i] < n) c[static_cast<std::size_t>(y[i] * n + yhat[i])] += 1;
        for (std::int64_t i = 0; i < n; ++i) {
            double total = 0;
            for (std::int64_t j = 0; j < n; ++j) total += c[static_cast<std::size_t>(j * n + i)];
            if (total == 0) continue;
            const double diag = c[static_cast<std::size_t>(i * n + i)] / total;
            if (diag < p_.min_diag)
                return this->fired("class " + std::to_string(i) + ": diagonal ratio " + text::format_double(diag) + " < min_diag " +
                                   text::format_double(p_.min_diag));
            for (std::int64_t j = 0; j < n; ++j) {
                if (j == i) continue;
                const double off = c[static_cast<std::size_t>(j * n + i)] / total;
                if (off > p_.max_off_diag)
                    return this->fired("label " + std::to_string(j) + " predicted as " + std::to_string(i) + ": ratio " + text::format_double(off) +
                                       " > max_off_diag " + text::format_double(p_.max_off_diag));
            }
        }
        return false;
    }

private:
    static std::string pick(Trial<S>& t, const std::string& name, const std::string& collection) {
        if (t.has_tensor(name)) return name;
        const auto in = t.tensor_names(detail::names_query(std::nullopt, collection));
        return in.empty() ? std::string() : in.front();
    }
    Params p_;
    std::string labels_, preds_;
};

}  // namespace smdebug
