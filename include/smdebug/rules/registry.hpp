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
#include <type_traits>
#include <vector>

#include <smdebug/core/regex.hpp>
#include <smdebug/rules/builtin/all_zero.hpp>
#include <smdebug/rules/builtin/check_input_images.hpp>
#include <smdebug/rules/builtin/class_imbalance.hpp>
#include <smdebug/rules/builtin/confusion.hpp>
#include <smdebug/rules/builtin/dead_relu.hpp>
#include <smdebug/rules/builtin/exploding_tensor.hpp>
#include <smdebug/rules/builtin/loss_not_decreasing.hpp>
#include <smdebug/rules/builtin/nlp_sequence_ratio.hpp>
#include <smdebug/rules/builtin/overfit.hpp>
#include <smdebug/rules/builtin/overtraining.hpp>
#include <smdebug/rules/builtin/poor_weight_initialization.hpp>
#include <smdebug/rules/builtin/saturated_activation.hpp>
#include <smdebug/rules/builtin/similar_across_runs.hpp>
#include <smdebug/rules/builtin/tensor_variance.hpp>
#include <smdebug/rules/builtin/tree_depth.hpp>
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
        {"CheckInputImages", "the per-channel mean of the input images seen so far is above threshold_mean in absolute value",
         {{"threshold_mean", "0.2", "largest allowed |channel mean|"},
          {"threshold_samples", "500", "samples to see before checking"},
          {"regex", ".*hybridsequential0_input_0", "input image tensors"},
          {"channel", "1", "axis of the colour channel"}}},
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
        {"DeadRelu", "more than threshold_layer percent of a layer's ReLUs are active on fewer than threshold_inactivity percent of samples",
         {{"tensor_regex", ".*relu_output", "ReLU output tensors"},
          {"threshold_inactivity", "1", "percentage of samples below which a ReLU is dead"},
          {"threshold_layer", "50", "percentage of dead ReLUs in a layer"}}},
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
        {"NLPSequenceRatio", "a token value makes up more than its threshold percent of the input sequences",
         {{"tensor_regex", ".*embedding0_input_0", "token id tensors"},
          {"token_values", "0", "token values (comma separated)"},
          {"token_thresholds_percent", "50,50", "largest allowed percentage per token value"}}},
        {"Overfit", "(mean validation loss - mean training loss) / mean training loss > ratio_threshold at patience EVAL steps in a row",
         {{"tensor_regex", "", "loss tensors (default: collection losses)"},
          {"start_step", "0", "first global step compared"},
          {"patience", "1", "EVAL steps in a row above the threshold"},
          {"ratio_threshold", "0.1", "largest allowed relative gap"}}},
        {"Overtraining", "a training (validation) loss has not improved by delta for patience_train (patience_validation) steps",
         {{"tensor_regex", "", "loss tensors (default: collection losses)"},
          {"patience_train", "5", "TRAIN steps without improvement"},
          {"patience_validation", "10", "EVAL steps without improvement"},
          {"delta", "0.01", "smallest improvement"}}},
        {"PoorWeightInitialization", "in the first `steps` steps: activation-input variances differ by more than threshold, a gradient's 5-95 percentile range < distribution_range, or the loss stalls for patience steps",
         {{"activation_inputs_regex", ".*relu_input", "activation input tensors"},
          {"threshold", "10", "largest allowed variance ratio across layers"},
          {"distribution_range", "0.001", "smallest allowed 5th-95th percentile range of a gradient"},
          {"patience", "5", "steps without a lower loss"},
          {"steps", "10", "initial global steps checked"}}},
        {"SaturatedActivation", "more than threshold_layer percent of a tanh/sigmoid layer's nodes get inputs outside their threshold range on nearly every sample",
         {{"collection_names", "", "collections of activation inputs"},
          {"tensor_regex", ".*tanh_input, .*sigmoid_input", "activation input tensors"},
          {"threshold_tanh", "-9.4999,9.4999", "tanh input range (min,max)"},
          {"threshold_sigmoid", "-23,16.99999", "sigmoid input range (min,max)"},
          {"threshold_inactivity", "1", "percentage of samples below which a node is saturated"},
          {"threshold_layer", "50", "percentage of saturated nodes in a layer"}}},
        {"SimilarAcrossRuns", "a tensor differs between the base trial and the other trial at the same step",
         {{"include_regex", "", "patterns of tensors to compare (default: all)"}}, true},
        {"TensorVariance", "an inspected tensor's variance is above max_threshold or below min_threshold",
         {{"collection_names", "", "collections to inspect"},
          {"tensor_regex", "", "patterns of tensors to inspect; one of the two is required"},
          {"max_threshold", "", "largest allowed variance"},
          {"min_threshold", "", "smallest allowed variance; one of the two is required"}}},
        {"TreeDepth", "floor(log2(largest node ID)) of the XGBoost trees (tensor trees/Node) exceeds depth",
         {{"depth", "4", "largest allowed tree depth"}}},
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
    const auto key = text::to_lower(text::trim(name));
    for (const auto& r : builtin_rules())
        if (text::to_lower(r.name) == key) return &r;
    return nullptr;
}

// Built-in rules whose answer at a step depends only on that step's tensors (no history, no other
// trial), so that step ranges can be checked independently and in parallel (smdebug_cpp.dask.find_first).
inline bool is_step_local_rule(std::string_view canonical_name) {
    for (std::string_view r : {"AllZero", "DeadRelu", "ExplodingTensor", "SaturatedActivation", "TensorVariance", "TreeDepth",
                               "VanishingGradient"})
        if (r == canonical_name) return true;
    return false;
}

namespace detail {

inline const BuiltinRuleInfo& builtin_rule_or_throw(std::string_view name) {
    const auto* info = find_builtin_rule(name);
    if (!info) {
        std::string known;
        for (const auto& r : builtin_rules()) known += (known.empty() ? "" : ", ") + std::string(r.name);
        throw UnknownRule(std::string(name), known);
    }
    return *info;
}

// Parameters whose values are lists of tensor-name patterns.
inline bool is_regex_parameter(std::string_view key) {
    return key.ends_with("regex") || key == "include";
}

// The one parse of a built-in rule's parameters (make_rule and validate_rule_params): the rule's
// typed Params, then finish() (unknown parameters), then every pattern of a regex parameter
// compiled, so that a bad or over-complex pattern is an InvalidRuleParameter here, before a trial
// is read, and not an error at the first step.
template <class P>
P parse_rule_params(const std::string& rule, RuleParams& params) {
    auto parsed = P::parse(rule, params);
    params.finish(rule);
    for (const auto& [key, value] : params.values()) {
        if (!is_regex_parameter(key)) continue;
        for (const auto& pattern : split_list(value)) {
            try {
                (void)compile_regex(pattern);
            } catch (const SMDebugValueError& e) {
                throw InvalidRuleParameter(rule, key, value, e.what());
            }
        }
    }
    return parsed;
}

// Calls f.template operator()<Params, Rule>() for built-in rule `rule` (its canonical name).
template <class F>
decltype(auto) visit_builtin_rule(const std::string& rule, F&& f) {
    if (rule == "AllZero") return f.template operator()<AllZeroParams, AllZero>();
    if (rule == "CheckInputImages") return f.template operator()<CheckInputImagesParams, CheckInputImages>();
    if (rule == "ClassImbalance") return f.template operator()<ClassImbalanceParams, ClassImbalance>();
    if (rule == "Confusion") return f.template operator()<ConfusionParams, Confusion>();
    if (rule == "DeadRelu") return f.template operator()<DeadReluParams, DeadRelu>();
    if (rule == "ExplodingTensor") return f.template operator()<ExplodingTensorParams, ExplodingTensor>();
    if (rule == "LossNotDecreasing") return f.template operator()<LossNotDecreasingParams, LossNotDecreasing>();
    if (rule == "NLPSequenceRatio") return f.template operator()<NLPSequenceRatioParams, NLPSequenceRatio>();
    if (rule == "Overfit") return f.template operator()<OverfitParams, Overfit>();
    if (rule == "Overtraining") return f.template operator()<OvertrainingParams, Overtraining>();
    if (rule == "PoorWeightInitialization") return f.template operator()<PoorWeightInitializationParams, PoorWeightInitialization>();
    if (rule == "SaturatedActivation") return f.template operator()<SaturatedActivationParams, SaturatedActivation>();
    if (rule == "SimilarAcrossRuns") return f.template operator()<SimilarAcrossRunsParams, SimilarAcrossRuns>();
    if (rule == "TensorVariance") return f.template operator()<TensorVarianceParams, TensorVariance>();
    if (rule == "TreeDepth") return f.template operator()<TreeDepthParams, TreeDepth>();
    if (rule == "UnchangedTensor") return f.template operator()<UnchangedTensorParams, UnchangedTensor>();
    if (rule == "VanishingGradient") return f.template operator()<VanishingGradientParams, VanishingGradient>();
    if (rule == "WeightUpdateRatio") return f.template operator()<WeightUpdateRatioParams, WeightUpdateRatio>();
    throw UnknownRule(rule, "(registered but not constructible)");
}

}  // namespace detail

// Checks the string parameters of built-in rule `name` exactly as make_rule parses them, without a
// trial: UnknownRule, UnknownRuleParameter or InvalidRuleParameter (malformed values, bad or
// over-complex regular expressions). Checks that need the rule's other trials (SimilarAcrossRuns)
// or combine parameters (made when the rule is constructed) are not part of it. Returns the rule's
// canonical name.
inline std::string validate_rule_params(std::string_view name, RuleParams params) {
    std::string rule(detail::builtin_rule_or_throw(name).name);
    detail::visit_builtin_rule(rule, [&]<class P, template <Store> class R>() { (void)detail::parse_rule_params<P>(rule, params); });
    return rule;
}

// Constructs built-in rule `name` on `base` (and `others`, for rules comparing runs).
template <Store S>
std::unique_ptr<RuntimeRule<S>> make_rule(std::string_view name, Trial<S>& base, RuleParams params = {},
                                          const std::vector<Trial<S>*>& others = {}) {
    const std::string rule(detail::builtin_rule_or_throw(name).name);
    return detail::visit_builtin_rule(rule, [&]<class P, template <Store> class R>() -> std::unique_ptr<RuntimeRule<S>> {
        auto p = detail::parse_rule_params<P>(rule, params);
        if constexpr (std::is_same_v<P, SimilarAcrossRunsParams>) {
            if (others.empty() || !others.front())
                throw InvalidRuleParameter(rule, "other_trials", "", "SimilarAcrossRuns needs another trial to compare with");
            return std::make_unique<R<S>>(base, *others.front(), std::move(p));
        } else {
            return std::make_unique<R<S>>(base, std::move(p));
        }
    });
}

}  // namespace smdebug
