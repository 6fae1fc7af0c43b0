#pragma once
// A built-in rule's findings over a trial's steps, as `smdebug rule` finds them. Defined in
// tools/cli/main.cpp, which instantiates every built-in rule for Trial<AnyStore> already (`rule`,
// `monitor`, `report`): the server's translation unit does not instantiate them a second time.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <smdebug/query/trial.hpp>
#include <smdebug/rules/params.hpp>
#include <smdebug/storage/any_store.hpp>

namespace cli {

struct RuleFinding {
    std::int64_t step;
    std::string tensor, text;
    std::string mode;             // the step's mode (TRAIN, EVAL, ...), empty when unknown
    std::int64_t mode_step = -1;  // its mode step, -1 when unknown
};

// What a rule found over a trial, and how many tensors it inspected (RuleBase::checked_tensors:
// what `smdebug rule` counts, not the trial's tensors).
struct RuleFindings {
    std::vector<RuleFinding> fired;
    std::size_t checked_tensors = 0;
};

// Runs built-in rule `name` (its parameters checked already) over global steps [0, end_step).
RuleFindings rule_findings(smdebug::Trial<smdebug::AnyStore>& trial, const std::string& name, const smdebug::RuleParams& params,
                                       std::int64_t end_step);

}  // namespace cli
