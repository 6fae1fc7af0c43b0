#pragma once
// Driving a rule: invoke(rule, step) is the reference's Rule.invoke and invoke_rule(rule, ...)
// its invoke_rule loop (docs/rules.md "invoke and invoke_rule", with docs/deviations.md D17).
//
// invoke(rule, step):
//   1. the base trial waits for `step` (blocks while the job runs; StepUnavailable / NoMoreData);
//   2. with automatic refresh off on every trial of the rule (restored afterwards, D20): clear
//      the required tensors, set_required_tensors(step), fetch them together, invoke_at_step(step);
//   3. when it returns true: run the rule's actions, then throw RuleEvaluationConditionMet(name, step).
//
// invoke_rule(rule, start_step = 0, end_step = none, raise_eval_cond = false):
//   visits every integer global step from start_step while step < end_step (end_step exclusive);
//   skips steps that were not saved (StepUnavailable) or lack a required tensor
//   (TensorUnavailableForStep, TensorUnavailable): invoke_at_step is not called for them;
//   a firing step raises RuleEvaluationConditionMet when raise_eval_cond, else it is reported
//   (InvokeOptions::on_fire, the result's fired_steps) and the loop goes on (or ends, when the
//   exception says end_of_rule);
//   returns normally when training has ended and every saved step was visited (D17: the
//   reference lets NoMoreData escape instead); every other error propagates (StepNotYetAvailable,
//   InvalidWorker, InsufficientInformationForRuleInvocation, storage and format errors).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/rules/rule.hpp>

namespace smdebug {

struct InvokeOptions {
    std::int64_t start_step = 0;
    std::optional<std::int64_t> end_step;  // exclusive; none = until training ends
    bool raise_eval_cond = false;
    std::function<void(const RuleFiring&)> on_fire;  // every firing step, in order
    RuleLogger log;                                  // debug/info lines, as the reference logs them
};

struct InvokeResult {
    std::vector<std::int64_t> fired_steps;
    std::int64_t end_step = -1;   // the last step visited (the reference logs step - 1)
    bool training_ended = false;  // the loop ended because training ended (D17)
};

namespace detail {

template <Rule R>
bool run_at_step(R& rule, std::int64_t step) {
    auto& base = rule.base_trial();
    auto body = [&] {
        if constexpr (RuleWithRequiredTensors<R>) {
            auto& req = rule.required_tensors();
            req.clear();
            rule.set_required_tensors(step);
            req.fetch();
        }
        if constexpr (RuleWithFindings<R>) rule.clear_findings();
        return static_cast<bool>(rule.invoke_at_step(step));
    };
    auto base_scope = no_refresh(base);
    if constexpr (RuleWithOtherTrials<R>) {
        auto others_scope = no_refresh(rule.other_trials());
        return body();
    } else {
        return body();
    }
}

template <Rule R>
std::string finding_of(const R& rule) {
    if constexpr (RuleWithFinding<R>) return std::string(rule.finding());
    else return {};
}

// Everything an action is told about a firing at global `step`: the finding and its tensor, the
// step's mode and mode step (when the base trial knows them), the base trial's name (its path
// when it has none).
template <Rule R>
RuleFiring firing_of(R& rule, std::string rule_name, std::int64_t step) {
    RuleFiring f;
    f.rule = std::move(rule_name);
    f.step = step;
    f.finding = finding_of(rule);
    if constexpr (RuleWithFiringTensor<R>) f.tensor = std::string(rule.firing_tensor());
    if constexpr (RuleWithFindings<R>)
        if (rule.has_findings()) f.findings = rule.findings();
    if (f.findings.empty()) f.findings.push_back({f.tensor, f.finding});
    auto& base = rule.base_trial();
    f.trial = std::string(base.name());
    if constexpr (requires { base.path(); })
        if (f.trial.empty()) f.trial = std::string(base.path());  // an unnamed trial: its location
    if constexpr (requires { base.mode_modestep(step); }) {
        try {
            if (const auto mm = base.mode_modestep(step)) {
                f.mode = std::string(mode_name(mm->first));
                f.mode_step = mm->second;
            }
        } catch (const SMDebugError&) {
            // the mode is a courtesy to the actions: a trial that cannot say it leaves it empty
        }
    }
    return f;
}

}  // namespace detail

// Rule.invoke(step): throws RuleEvaluationConditionMet when the rule fires at `step`.
template <Rule R>
void invoke(R& rule, std::int64_t step) {
    rule.base_trial().wait_for_steps({step});
    if (!detail::run_at_step(rule, step)) return;
    if constexpr (RuleWithActions<R>) rule.actions().invoke(detail::firing_of(rule, std::string(rule.name()), step));
    throw RuleEvaluationConditionMet(std::string(rule.name()), step);
}

template <Rule R>
InvokeResult invoke_rule(R& rule, const InvokeOptions& o) {
    InvokeResult result;
    auto log = [&](std::string_view level, const std::string& text) {
        if (o.log) o.log(level, text);
    };
    std::int64_t step = o.start_step;
    log("info", "Started execution of rule " + std::string(rule.name()) + " at step " + std::to_string(step));
    while (!o.end_step || step < *o.end_step) {
        try {
            invoke(rule, step);
        } catch (const TensorUnavailableForStep& e) {
            log("debug", e.what());
        } catch (const StepUnavailable& e) {
            log("debug", e.what());
        } catch (const TensorUnavailable& e) {
            log("debug", e.what());
        } catch (const RuleEvaluationConditionMet& e) {
            result.fired_steps.push_back(e.step);
            if (o.on_fire) o.on_fire(detail::firing_of(rule, e.rule_name, e.step));
            if (o.raise_eval_cond) throw;
            log("debug", e.what());
            if (e.end_of_rule) break;
        } catch (const NoMoreData& e) {
            log("info", e.what());
            result.training_ended = true;
            break;
        }
        ++step;
    }
    result.end_step = step - 1;
    log("info", "Ended execution of rule " + std::string(rule.name()) + " at end_step " + std::to_string(step - 1));
    return result;
}

// The reference's signature: invoke_rule(rule, start_step, end_step, raise_eval_cond).
template <Rule R>
InvokeResult invoke_rule(R& rule, std::int64_t start_step = 0, std::optional<std::int64_t> end_step = std::nullopt,
                         bool raise_eval_cond = false) {
    InvokeOptions o;
    o.start_step = start_step;
    o.end_step = end_step;
    o.raise_eval_cond = raise_eval_cond;
    return invoke_rule(rule, o);
}

}  // namespace smdebug
