#pragma once
// What the HTML report shows of rules: findings handed to it by whoever ran the rules. The report
// knows nothing of the rules layer: main.cpp hands run_report a FindingsSource (tools/cli/rule.hpp's
// run_report_rules), which the report calls on the trial it reports on with the --rule specs it was
// given. With no source the report says so: it never invents findings.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <smdebug/smdebug.hpp>

namespace cli::report {

struct RuleFinding {
    std::string rule;                  // the rule's name
    std::optional<std::int64_t> step;  // the global step it fired at, when there is one
    std::string tensor;                // the tensor involved (may be empty)
    std::string message;               // what the rule found, for a human
    std::string mode;                  // the step's mode (TRAIN, EVAL, ...), empty when unknown
    std::int64_t mode_step = -1;       // its mode step, -1 when unknown
};

// A rule evaluated, found something or not, and how many tensors it inspected.
struct RuleRun {
    std::string rule;
    std::size_t checked_tensors = 0;
};

// The result of running rules on a trial.
struct RuleResults {
    std::vector<RuleRun> rules_run;
    std::vector<RuleFinding> findings;
};

// Runs the rules named by `requested` (`report --rule NAME[:k=v,...]` as given; empty: the
// source's defaults) on the trial.
using FindingsSource = std::function<RuleResults(smdebug::Trial<smdebug::AnyStore>&, const std::vector<std::string>& requested)>;

}  // namespace cli::report
