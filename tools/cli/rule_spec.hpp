#pragma once
// A rule and its parameters as `--rule NAME[:k=v,...]` gives them (monitor, report).
#include <string>
#include <vector>

#include <smdebug/rules/rules.hpp>

#include "errors.hpp"
#include "suggest.hpp"

namespace cli {

// "unknown rule 'X'; did you mean 'Y'? (`smdebug rules` lists them)"
inline std::string unknown_rule_message(const std::string& name) {
    std::vector<std::string> names;
    for (const auto& r : smdebug::builtin_rules()) names.emplace_back(r.name);
    return "unknown rule '" + name + "'" + did_you_mean(name, names) + " (`smdebug rules` lists them)";
}

namespace monitor {

struct RuleSpec {
    std::string text;   // as given
    std::string name;   // canonical
    smdebug::RuleParams params;
};

// NAME[:k=v,...]; a piece without '=' continues the previous value (list values).
inline RuleSpec parse_rule_spec(const std::string& text) {
    RuleSpec spec;
    spec.text = text;
    const auto colon = text.find(':');
    const std::string name = text.substr(0, colon);
    if (name.empty()) throw usage_error("--rule needs a rule name: --rule NAME[:key=value,...]");
    std::vector<std::string> assignments;
    if (colon != std::string::npos) {
        std::size_t at = colon + 1;
        while (at <= text.size()) {
            const auto comma = std::min(text.find(',', at), text.size());
            const std::string piece = text.substr(at, comma - at);
            if (piece.find('=') != std::string::npos || assignments.empty()) {
                if (!piece.empty()) assignments.push_back(piece);
            } else {
                assignments.back() += "," + piece;
            }
            at = comma + 1;
        }
    }
    if (!smdebug::find_builtin_rule(name)) throw usage_error(unknown_rule_message(name));
    try {
        for (const auto& a : assignments) spec.params.set_assignment(a);
        spec.name = smdebug::validate_rule_params(name, spec.params);
    } catch (const smdebug::SMDebugError& e) {
        throw usage_error(std::string(e.what()));
    }
    return spec;
}

}  // namespace monitor

}  // namespace cli
