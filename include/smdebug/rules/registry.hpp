#pragma once
// The runtime path: built-in rules by name (case-insensitive), constructed from string parameters
// as SageMaker passes them (lists comma separated). Unknown rule -> UnknownRule; unknown parameter
// -> UnknownRuleParameter; malformed or missing value -> InvalidRuleParameter (rules/params.hpp).
//
//   auto rule = make_rule("explodingtensor", trial, {{"only_nan", "true"}});
//   invoke_rule(*rule);
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <smdebug/core/config.hpp>
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
#include <smdebug/rules/invoke.hpp>
#include <smdebug/rules/param_table.hpp>
#include <smdebug/rules/params.hpp>
#include <smdebug/storage/any_store.hpp>

namespace smdebug {

struct BuiltinRuleInfo {
    std::string_view name;
    std::string_view fires_when;
    std::vector<RuleParameterInfo> parameters;
    bool needs_other_trial = false;
};

namespace detail {

// A built-in rule: its Params (name, firing condition, parameter table: rules/param_table.hpp) and
// its class template.
template <class P, template <Store> class R>
struct BuiltinRule {
    using Params = P;
    // f.template operator()<P, R>()
    template <class F>
    static decltype(auto) visit(F& f) {
        return f.template operator()<P, R>();
    }
};

// The one list of built-in rules: builtin_rules(), make_rule, validate_rule_params and
// is_step_local_rule read it. A new rule is one row here (in name order: `smdebug rule --list`
// prints this order).
using BuiltinRuleList = std::tuple<
    BuiltinRule<AllZeroParams, AllZero>, BuiltinRule<CheckInputImagesParams, CheckInputImages>,
    BuiltinRule<ClassImbalanceParams, ClassImbalance>, BuiltinRule<ConfusionParams, Confusion>, BuiltinRule<DeadReluParams, DeadRelu>,
    BuiltinRule<ExplodingTensorParams, ExplodingTensor>, BuiltinRule<LossNotDecreasingParams, LossNotDecreasing>,
    BuiltinRule<NLPSequenceRatioParams, NLPSequenceRatio>, BuiltinRule<OverfitParams, Overfit>, BuiltinRule<OvertrainingParams, Overtraining>,
    BuiltinRule<PoorWeightInitializationParams, PoorWeightInitialization>, BuiltinRule<SaturatedActivationParams, SaturatedActivation>,
    BuiltinRule<SimilarAcrossRunsParams, SimilarAcrossRuns>, BuiltinRule<TensorVarianceParams, TensorVariance>,
    BuiltinRule<TreeDepthParams, TreeDepth>, BuiltinRule<UnchangedTensorParams, UnchangedTensor>,
    BuiltinRule<VanishingGradientParams, VanishingGradient>, BuiltinRule<WeightUpdateRatioParams, WeightUpdateRatio>>;

// Calls f.template operator()<Entry>() for every row of BuiltinRuleList, in order.
template <class F>
void for_each_builtin_rule(F&& f) {
    [&]<class... E>(std::tuple<E...>*) { (f.template operator()<E>(), ...); }(static_cast<BuiltinRuleList*>(nullptr));
}

}  // namespace detail

inline const std::vector<BuiltinRuleInfo>& builtin_rules() {
    static const std::vector<BuiltinRuleInfo> rules = [] {
        std::vector<BuiltinRuleInfo> out;
        detail::for_each_builtin_rule([&]<class E>() {
            using P = typename E::Params;
            out.push_back({P::rule_name, P::fires_when, rule_parameter_infos<P>(), rule_needs_other_trial<P>()});
        });
        return out;
    }();
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
    bool local = false;
    detail::for_each_builtin_rule([&]<class E>() {
        if (E::Params::rule_name == canonical_name) local = rule_is_step_local<typename E::Params>();
    });
    return local;
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
                check_regex(pattern);
            } catch (const SMDebugValueError& e) {
                throw InvalidRuleParameter(rule, key, value, e.what());
            }
        }
    }
    return parsed;
}

// Calls f.template operator()<Params, Rule>() for built-in rule `rule` (its canonical name) and
// returns what it returns.
template <class F>
decltype(auto) visit_builtin_rule(const std::string& rule, F&& f) {
    using First = std::tuple_element_t<0, BuiltinRuleList>;
    using Result = decltype(First::visit(f));
    return [&]<class... E>(std::tuple<E...>*) -> Result {
        if constexpr (std::is_void_v<Result>) {
            if (!((E::Params::rule_name == rule ? (E::visit(f), true) : false) || ...))
                throw UnknownRule(rule, "(registered but not constructible)");
        } else {
            std::optional<Result> out;
            (void)((E::Params::rule_name == rule ? (out.emplace(E::visit(f)), true) : false) || ...);
            if (!out) throw UnknownRule(rule, "(registered but not constructible)");
            return std::move(*out);
        }
    }(static_cast<BuiltinRuleList*>(nullptr));
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

#if !SMDEBUG_HEADER_ONLY
// Separate mode: the built-in rules over AnyStore (what `create_trial` opens) are instantiated once,
// by <smdebug/rules/src.hpp>; a translation unit that makes them by name instantiates none of them.
// A program that uses them and lacks rules/src.hpp fails to link, naming it.
namespace smdebug {
extern template std::unique_ptr<RuntimeRule<AnyStore>> make_rule<AnyStore>(std::string_view, Trial<AnyStore>&, RuleParams,
                                                                            const std::vector<Trial<AnyStore>*>&);
extern template void invoke<RuntimeRule<AnyStore>>(RuntimeRule<AnyStore>&, std::int64_t);
extern template InvokeResult invoke_rule<RuntimeRule<AnyStore>>(RuntimeRule<AnyStore>&, const InvokeOptions&);
extern template InvokeResult invoke_rule<RuntimeRule<AnyStore>>(RuntimeRule<AnyStore>&, std::int64_t, std::optional<std::int64_t>, bool);
}  // namespace smdebug
namespace smdebug::detail {
extern const int SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_rules_src_hpp_in_one_translation_unit;
[[gnu::used]] inline const int* const separate_compilation_rules_link_check =
    &SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_rules_src_hpp_in_one_translation_unit;
}  // namespace smdebug::detail
#endif
