#pragma once
// The earliest finding of each built-in rule that runs without parameters (no other trial, no
// required parameter): each rule is invoked step by step (invoke_rule) and stopped at its first
// firing. Only complete steps are visited, so a job still writing is never waited for.
// ExplodingTensor fires exactly where a value is non-finite: it starts at the first such step
// found by the caller (`first_nonfinite_step`), and is not run when there is none.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/rules/invoke.hpp>
#include <smdebug/rules/registry.hpp>

namespace smdebug::analysis {

struct RuleFirstFinding {
    std::string rule;
    std::int64_t step = 0;  // global
    std::string mode;       // TRAIN, EVAL, PREDICT, GLOBAL; empty when unknown
    std::int64_t mode_step = -1;
    std::string tensor;     // empty when the finding is not about one tensor
    std::string finding;
    std::size_t tensors = 0;  // tensors it reported at that step
};

struct RuleFirstFindings {
    std::vector<RuleFirstFinding> findings;  // in rule-name order
    std::vector<std::string> checked;        // rules run (fired or not)
    std::vector<std::pair<std::string, std::string>> skipped;  // rule, why it could not run
    std::vector<std::pair<std::string, std::string>> notes;    // rule, what it says besides findings (RuntimeRule::notes)
};

namespace detail {
struct StopAtFirstFiring {
    RuleFiring firing;
};
}  // namespace detail

template <Store S>
RuleFirstFindings first_rule_findings(Trial<S>& trial, std::optional<std::int64_t> first_nonfinite_step) {
    RuleFirstFindings out;
    const auto complete = trial.steps(Mode::GLOBAL);
    if (complete.empty()) return out;
    const std::int64_t end = complete.back() + 1;
    for (const auto& info : builtin_rules()) {
        const std::string name(info.name);
        if (info.needs_other_trial) continue;
        std::unique_ptr<RuntimeRule<S>> rule;
        try {
            rule = make_rule(name, trial);
        } catch (const SMDebugError&) {
            continue;  // needs a parameter
        }
        InvokeOptions o;
        o.end_step = end;
        if (name == "ExplodingTensor") {
            if (!first_nonfinite_step) {
                out.checked.push_back(name);
                continue;
            }
            o.start_step = *first_nonfinite_step;
        }
        o.on_fire = [](const RuleFiring& f) { throw detail::StopAtFirstFiring{f}; };
        try {
            (void)invoke_rule(*rule, o);
            out.checked.push_back(name);
        } catch (const detail::StopAtFirstFiring& stop) {
            out.checked.push_back(name);
            const auto& f = stop.firing;
            out.findings.push_back({name, f.step, f.mode, f.mode_step, f.tensor, f.finding, f.findings.size()});
        } catch (const SMDebugError& e) {
            out.skipped.emplace_back(name, e.what());
        }
        for (auto& note : rule->notes()) out.notes.emplace_back(name, std::move(note));
    }
    return out;
}

}  // namespace smdebug::analysis
