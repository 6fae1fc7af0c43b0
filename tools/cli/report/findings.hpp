#pragma once
// What the HTML report shows of rules: findings handed to it by whoever ran the rules. The report
// knows nothing of the rules layer; a rules module registers a FindingsSource (see
// findings_sources()) and the report calls every registered source on the trial it reports on.
// With no source registered the report says so: it never invents findings.
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

using FindingsSource = std::function<RuleResults(smdebug::Trial<smdebug::AnyStore>&)>;

// Sources registered by rules modules, e.g. from tools/cli/rule.hpp:
//     inline const bool registered = (cli::report::findings_sources().push_back(run_default_rules), true);
inline std::vector<FindingsSource>& findings_sources() {
    static std::vector<FindingsSource> sources;
    return sources;
}

// The rules the report was asked for (`report --rule NAME[:k=v,...]`, repeatable), as given;
// empty: the rules module's defaults.
inline std::vector<std::string>& requested_rules() {
    static std::vector<std::string> rules;
    return rules;
}

}  // namespace cli::report
