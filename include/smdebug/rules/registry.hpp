#pragma once
// The runtime path: built-in rules by name (case-insensitive), constructed from string parameters
// as SageMaker passes them (lists comma separated). Unknown rule -> UnknownRule; unknown parameter
// -> UnknownRuleParameter; malformed or missing value -> InvalidRuleParameter (rules/params.hpp).
//
//   auto rule = make_rule("explodingtensor", trial, {{"only_nan", "true"}});
//   invoke_rule(*rule);
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/rules/builtin/all_zero.hpp>
#include <smdebug/rules/builtin/class_imbalance.hpp>
#include <smdebug/rules/builtin/confusion.hpp>
#include <smdebug/rules/builtin/exploding_tensor.hpp>
#include <smdebug/rules/builtin/loss_not_decreasing.hpp>
#include <smdebug/rules/builtin/similar_across_runs.hpp>
#include <smdebug/rules/builtin/unchanged_tensor.hpp>
#include <smdebug/rules/builtin/vanishing_gradient.hpp>
#include <smdebug/rules/builtin/weight_update_ratio.hpp>
#include <smdebug/rules/params.hpp>

namespace smdebug {

struct RuleParameterInfo {
    std::string_view name;
    std::string_view default_value;  // as text; "" = none
    std::string_view meaning;
};

struct BuiltinRuleInfo {
    std::string_view name;
    std::string_view fires_when;
    std::vector<RuleParameterInfo> parameters;
    bool needs_other_trial = false;
};

inline const std::vector<BuiltinRuleInfo>& builtin_rules() {
    static const std::vector<BuiltinRuleInfo> rules = {
        {"AllZero", "an inspected tensor has at least `threshold` percent zeros",
         {{"collection_names", "", "collections to inspect (comma separated)"},
          {"tensor_regex", "", "patterns of tensors to inspect; one of the two is required"},
          {"threshold", "100", "percentage of zero elements"}}},
        {"ClassImbalance", "class counts so far differ by more than threshold_imbalance, or a class is predicted right too rarely",
         {{"threshold_imbalance", "10", "largest / smallest class count"},
          {"threshold_misprediction", "0.7", "minimum share of correct predictions per class"},
          {"samples", "500", "labels to count before checking"},
          {"argmax", "false", "predictions are scores: take the argmax of the last axis"},
          {"labels_regex", ".*labels", "label tensors"},
          {"predictions_regex", ".*predictions", "prediction tensors"}}},
        {"Confusion", "a column-normalised confusion-matrix diagonal < min_diag or off-diagonal > max_off_diag",
         {{"category_no", "", "number of classes (default: from the data)"},
          {"labels", "labels", "labels tensor"},
          {"predictions", "predictions", "predictions tensor"},
          {"labels_collection", "labels", "collection searched when the labels tensor is absent"},
          {"predictions_collection", "predictions", "collection searched when the predictions tensor is absent"},
          {"min_diag", "0.9", "smallest allowed diagonal ratio"},
          {"max_off_diag", "0.1", "largest allowed off-diagonal ratio"}}},
        {"ExplodingTensor", "an inspected tensor holds NaN (or +-inf unless only_nan)",
         {{"collection_names", "", "collections to inspect (default: every tensor)"},
          {"tensor_regex", "", "patterns of tensors to inspect"},
          {"only_nan", "false", "ignore +-inf"}}},
        {"LossNotDecreasing", "a loss did not decrease by more than diff_percent over num_steps",
         {{"collection_names", "", "collections of loss tensors"},
          {"tensor_regex", "", "patterns of loss tensors"},
          {"use_losses_collection", "true", "also use collection `losses`"},
          {"num_steps", "10", "mode steps between checks"},
          {"diff_percent", "0", "required decrease in percent (0-100)"},
          {"mode", "", "TRAIN, EVAL, PREDICT or GLOBAL (default: EVAL, then TRAIN, then GLOBAL)"}}},
        {"SimilarAcrossRuns", "a tensor differs between the base trial and the other trial at the same step",
         {{"include_regex", "", "patterns of tensors to compare (default: all)"}}, true},
        {"UnchangedTensor", "an inspected tensor is allclose over its last num_steps saved steps",
         {{"collection_names", "", "collections to inspect"},
          {"tensor_regex", "", "patterns of tensors to inspect; one of the two is required"},
          {"num_steps", "3", "saved steps compared"},
          {"rtol", "1e-05", "relative tolerance"},
          {"atol", "1e-08", "absolute tolerance"},
          {"equal_nan", "false", "NaN equals NaN"}}},
        {"VanishingGradient", "a gradient's mean absolute value is below threshold",
         {{"threshold", "1e-07", "smallest allowed mean(|gradient|)"}}},
        {"WeightUpdateRatio", "||w(s)-w(s-1)|| / (||w(s-1)|| + epsilon) is above large_threshold or below small_threshold",
         {{"large_threshold", "10", "largest allowed ratio"},
          {"small_threshold", "1e-08", "smallest allowed ratio"},
          {"epsilon", "1e-09", "guards the division"}}},
    };
    return rules;
}

inline const BuiltinRuleInfo* find_builtin_rule(std::string_view name) {
    const auto key = detail::lower(detail::trim_copy(name));
    for (const auto& r : builtin_rules())
        if (detail::lower(r.name) == key) return &r;
    return nullptr;
}

// Constructs built-in rule `name` on `base` (and `others`, for rules comparing runs).
template <Store S>
std::unique_ptr<RuntimeRule<S>> make_rule(std::string_view name, Trial<S>& base, RuleParams params = {},
                                          const std::vector<Trial<S>*>& others = {}) {
    const auto* info = find_builtin_rule(name);
    if (!info) {
        std::string known;
        for (const auto& r : builtin_rules()) known += (known.empty() ? "" : ", ") + std::string(r.name);
        throw UnknownRule(std::string(name), known);
    }
    const std::string rule(info->name);
    auto build = [&]<class R>(auto&&... args) -> std::unique_ptr<RuntimeRule<S>> {
        auto p = R::Params::parse(rule, params);
        params.finish(rule);
        return std::make_unique<R>(args..., std::move(p));
    };
    if (rule == "AllZero") return build.template operator()<AllZero<S>>(base);
    if (rule == "ClassImbalance") return build.template operator()<ClassImbalance<S>>(base);
    if (rule == "Confusion") return build.template operator()<Confusion<S>>(base);
    if (rule == "ExplodingTensor") return build.template operator()<ExplodingTensor<S>>(base);
    if (rule == "LossNotDecreasing") return build.template operator()<LossNotDecreasing<S>>(base);
    if (rule == "SimilarAcrossRuns") {
        if (others.empty() || !others.front())
            throw InvalidRuleParameter(rule, "other_trials", "", "SimilarAcrossRuns needs another trial to compare with");
        return build.template operator()<SimilarAcrossRuns<S>>(base, *others.front());
    }
    if (rule == "UnchangedTensor") return build.template operator()<UnchangedTensor<S>>(base);
    if (rule == "VanishingGradient") return build.template operator()<VanishingGradient<S>>(base);
    if (rule == "WeightUpdateRatio") return build.template operator()<WeightUpdateRatio<S>>(base);
    throw UnknownRule(rule, "(registered but not constructible)");
}

}  // namespace smdebug
