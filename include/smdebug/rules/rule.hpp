#pragma once
// The rule contract (docs/rules.md "The rule contract"), stated as concepts, and RuleBase, the
// usual way to meet it.
//
// A rule owns a base trial (and optionally other trials, of any Store type), may declare the
// tensors it needs at a step, and answers invoke_at_step(global step) -> bool: true when its
// condition holds. invoke()/invoke_rule() (rules/invoke.hpp) drive it.
//
//   Rule<R>                     name(), base_trial(), invoke_at_step(step)
//   RuleWithRequiredTensors<R>  + required_tensors() and set_required_tensors(step): the tensors
//                               are fetched together, before invoke_at_step, with refresh off
//   RuleWithOtherTrials<R>      + other_trials(): a range of trials (or pointers to trials); they
//                               are held at the same refresh state as the base trial
//   RuleWithActions<R>          + actions(): run on every step where the rule fires
//   RuleWithFinding<R>          + finding(): what the last firing step found ("tensor x: value")
//   RuleWithFiringTensor<R>     + firing_tensor(): the tensor of that finding (empty when none)
//   RuleWithFindings<R>         + findings(): everything the last firing step found;
//                               clear_findings(), called before each step, and has_findings():
//                               whether the step being evaluated found anything yet
#include <concepts>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <smdebug/query/refresh_scope.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/rules/actions/actions.hpp>
#include <smdebug/rules/required_tensors.hpp>

namespace smdebug {

// What a rule needs of a trial: the refresh switch and waiting for steps.
template <class T>
concept RuleTrial = RefreshableTrial<T> && requires(T& t, const std::vector<std::int64_t>& steps) {
    t.wait_for_steps(steps);
    { t.name() } -> std::convertible_to<std::string>;
};

template <class R>
concept Rule = requires(R& r, const R& cr, std::int64_t step) {
    { cr.name() } -> std::convertible_to<std::string_view>;
    requires std::is_lvalue_reference_v<decltype(r.base_trial())>;
    requires RuleTrial<std::remove_cvref_t<decltype(r.base_trial())>>;
    { r.invoke_at_step(step) } -> std::convertible_to<bool>;
};

template <class R>
concept RuleWithRequiredTensors = Rule<R> && requires(R& r, std::int64_t step) {
    { r.required_tensors() } -> std::same_as<RequiredTensors&>;
    r.set_required_tensors(step);
};

template <class R>
concept RuleWithOtherTrials = Rule<R> && requires(R& r) {
    { r.other_trials() } -> TrialRange;
};

template <class R>
concept RuleWithActions = Rule<R> && requires(R& r) {
    { r.actions() } -> std::same_as<Actions&>;
};

template <class R>
concept RuleWithFinding = Rule<R> && requires(const R& r) {
    { r.finding() } -> std::convertible_to<std::string>;
};

template <class R>
concept RuleWithFiringTensor = Rule<R> && requires(const R& r) {
    { r.firing_tensor() } -> std::convertible_to<std::string>;
};

template <class R>
concept RuleWithFindings = Rule<R> && requires(R& r, const R& cr) {
    { cr.findings() } -> std::convertible_to<std::vector<RuleFiring::Finding>>;
    { cr.has_findings() } -> std::convertible_to<bool>;
    r.clear_findings();
};

// The tensor a finding names by the built-in rules' convention "tensor <name>: <what>", or "".
inline std::string tensor_of_finding(std::string_view finding) {
    constexpr std::string_view prefix = "tensor ";
    if (!finding.starts_with(prefix)) return {};
    const auto end = finding.find(": ", prefix.size());
    if (end == std::string_view::npos || end == prefix.size()) return {};
    return std::string(finding.substr(prefix.size(), end - prefix.size()));
}

// The reference's Rule base class, for trials of store type S (other trials of store type O).
// Derive, and implement invoke_at_step (and set_required_tensors when tensors are needed).
template <Store S, Store O = S>
class RuleBase {
public:
    using base_trial_type = Trial<S>;
    using other_trial_type = Trial<O>;

    explicit RuleBase(Trial<S>& base, std::string name, std::vector<Trial<O>*> others = {}, Actions actions = {})
        : base_(&base), others_(std::move(others)), name_(std::move(name)), actions_(std::move(actions)) {}

    const std::string& name() const noexcept { return name_; }
    Trial<S>& base_trial() noexcept { return *base_; }
    std::vector<Trial<O>*>& other_trials() noexcept { return others_; }
    RequiredTensors& required_tensors() noexcept { return req_; }
    Actions& actions() noexcept { return actions_; }
    // The last firing step's first finding and its tensor ("" when none), and all its findings.
    const std::string& finding() const noexcept { return findings_.empty() ? no_text_ : findings_.front().text; }
    const std::string& firing_tensor() const noexcept { return findings_.empty() ? no_text_ : findings_.front().tensor; }
    const std::vector<RuleFiring::Finding>& findings() const noexcept { return findings_; }
    // A new step: its first fired() replaces the findings kept from the last firing step.
    void clear_findings() noexcept { step_found_ = false; }
    bool has_findings() const noexcept { return step_found_; }

    // Default: no tensors (the rule reads what it needs itself).
    void set_required_tensors(std::int64_t) {}

protected:
    // Adds what the rule found at this step and returns true: `return fired("tensor w: nan");`,
    // or, to report every tensor of the step, call it for each and `return has_findings();`.
    // The finding's tensor is taken from a leading "tensor <name>: ", or given explicitly.
    bool fired(std::string finding) {
        auto tensor = tensor_of_finding(finding);
        return fired(std::move(finding), std::move(tensor));
    }
    bool fired(std::string finding, std::string tensor) {
        if (!step_found_) findings_.clear();
        step_found_ = true;
        findings_.push_back({std::move(tensor), std::move(finding)});
        return true;
    }

    // The base trial's required tensors (req_ on base_trial()): require in set_required_tensors,
    // then read in invoke_at_step. Other trials use req_ directly.
    void require(const std::string& tensor, std::int64_t step) {
        note_checked(tensor);
        req_.add(*base_, tensor, step);
    }
    void require(const std::string& tensor, const std::vector<std::int64_t>& steps) {
        note_checked(tensor);
        req_.add(*base_, tensor, steps);
    }
    // Remembers a tensor the rule inspects (checked_tensors()); require() calls it.
    void note_checked(const std::string& tensor) {
        if (checked_.empty() || *last_checked_ != tensor) last_checked_ = checked_.insert(tensor).first;
    }

public:
    // The base trial's tensors the rule required at some step so far: what it actually checked
    // (`smdebug rule` prints their number, not the trial's).
    const std::set<std::string>& checked_tensors() const noexcept { return checked_; }

protected:
    // Whether the value was fetched (false when it could not be read at that step).
    bool has_value(const std::string& tensor, std::int64_t step) const { return req_.has_value(*base_, tensor, step); }
    // The fetched value, or null where has_value() is false (one lookup for both).
    const TensorValue* fetched_value(const std::string& tensor, std::int64_t step) const {
        return req_.fetched_value(*base_, tensor, step);
    }
    // The fetched value (TensorUnavailableForStep when it was not).
    const TensorValue& value(const std::string& tensor, std::int64_t step) const { return req_.value(*base_, tensor, step); }
    // Whether reduction() answers: a fetched value, or only stored reductions.
    bool readable(const std::string& tensor, std::int64_t step) const { return req_.readable(*base_, tensor, step); }
    double reduction(const std::string& tensor, std::int64_t step, Reduction r, bool abs = false) const {
        return req_.reduction(*base_, tensor, step, r, abs);
    }

    Trial<S>* base_;
    std::vector<Trial<O>*> others_;
    std::string name_;
    RequiredTensors req_;
    std::set<std::string> checked_;
    std::set<std::string>::const_iterator last_checked_;
    Actions actions_;
    std::vector<RuleFiring::Finding> findings_;  // of the last step that found anything
    bool step_found_ = false;                    // the step being evaluated found something
    inline static const std::string no_text_;
};

}  // namespace smdebug
