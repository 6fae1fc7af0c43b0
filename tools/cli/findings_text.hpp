#pragma once
// Rule findings as people read them (issue 53 item 5), the one formatter of `smdebug rule`,
// `smdebug monitor` and `smdebug report`: one row per rule and step listing the tensors it fired
// on (not one row per tensor), the global step with its mode and mode step beside it, each rule's
// first firing as its headline, and what the rule checked.
//
//     step 207 (TRAIN step 203) tensor loss: nan at element 0 (and 2 more tensors: fc3_output_0, fc3.weight)
//     ExplodingTensor: checked 400 steps (0..399) of 19 tensors in PATH; first fired at step 207 (TRAIN step 203): tensor loss: nan at element 0 (and 2 more tensors); fired at 40 steps
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <smdebug/rules/actions/actions.hpp>

#include "format.hpp"

namespace cli::findings {

// What one rule found at one step: every finding of it, in the rule's order.
struct StepRow {
    std::string rule;                  // the rule's name (or the label it was given)
    std::optional<std::int64_t> step;  // the global step, when there is one
    std::string mode;                  // TRAIN, EVAL, ...; empty when unknown
    std::int64_t mode_step = -1;       // -1 when unknown
    std::vector<std::string> tensors;  // per finding: the tensor it is about (may be empty)
    std::vector<std::string> messages; // per finding: what the rule found, for a human
};

// "207 (TRAIN step 203)"; the global step alone when the mode is unknown or GLOBAL (whose step is
// the global step); "-" without a step.
inline std::string step_text(const StepRow& r) {
    if (!r.step) return "-";
    const bool with_mode = !r.mode.empty() && r.mode != "GLOBAL" && r.mode_step >= 0;
    return std::to_string(*r.step) + (with_mode ? " (" + r.mode + " step " + std::to_string(r.mode_step) + ")" : std::string());
}

// One finding added to `rows`: to the last row when it is of the same rule and step, else as a new row.
inline void add(std::vector<StepRow>& rows, const std::string& rule, std::optional<std::int64_t> step, const std::string& tensor,
                const std::string& message, const std::string& mode, std::int64_t mode_step) {
    if (rows.empty() || rows.back().rule != rule || rows.back().step != step || !step) rows.push_back({rule, step, mode, mode_step, {}, {}});
    rows.back().tensors.push_back(tensor);
    rows.back().messages.push_back(message);
}

// A firing of invoke_rule / RuleSet (every finding of its step) as a row labelled `rule`.
inline StepRow row_of(const smdebug::RuleFiring& f, const std::string& rule) {
    StepRow row{rule, f.step, f.mode, f.mode_step, {}, {}};
    for (const auto& found : f.findings) {
        row.tensors.push_back(found.tensor);
        row.messages.push_back(found.text);
    }
    if (row.messages.empty()) {  // a firing filled by hand: its one finding
        row.tensors.push_back(f.tensor);
        row.messages.push_back(f.finding);
    }
    return row;
}

// The tensors the row's findings name, at most `max_listed` of them, then "and N more":
// "fc1.weight, fc2.weight and 3 more".
inline std::string tensors_text(const StepRow& r, std::size_t max_listed, std::size_t from = 0) {
    std::string out;
    std::size_t listed = 0, named = 0;
    for (std::size_t i = from; i < r.tensors.size(); ++i) {
        if (r.tensors[i].empty()) continue;
        ++named;
        if (listed == max_listed) continue;
        out += (listed++ ? ", " : "") + r.tensors[i];
    }
    if (named > listed) out += (listed ? " and " : "") + std::to_string(named - listed) + " more";
    return out;
}

// The row's first finding, then what else fired at that step: "(and 2 more tensors: a, b)" when
// `list_others`, "(and 2 more tensors)" otherwise. Findings about no tensor count as findings.
inline std::string summary(const StepRow& r, bool list_others) {
    if (r.messages.empty()) return {};
    std::string out = r.messages.front();
    const std::size_t others = r.messages.size() - 1;
    if (others == 0) return out;
    bool all_tensors = true;
    for (std::size_t i = 1; i < r.tensors.size(); ++i) all_tensors = all_tensors && !r.tensors[i].empty();
    out += " (and " + (all_tensors ? plural(others, "more tensor", "more tensors") : plural(others, "more finding", "more findings"));
    if (list_others) {
        std::string rest;
        for (std::size_t i = 1; i < r.messages.size(); ++i) rest += (i > 1 ? ", " : "") + (r.tensors[i].empty() ? r.messages[i] : r.tensors[i]);
        out += ": " + rest;
    }
    return out + ")";
}

// The terminal line of a row, one per rule and step: "step 207 (TRAIN step 203) [LABEL ]tensor
// loss: nan at element 0 (and 2 more tensors: a, b)". `label`: the rule's name, for output that
// holds several rules (monitor); empty for one rule (rule).
inline std::string line(const StepRow& r, const std::string& label = {}) {
    return "step " + step_text(r) + " " + (label.empty() ? std::string() : label + " ") + summary(r, true);
}

// The headline of a rule that fired: "first fired at step 207 (TRAIN step 203): tensor loss: nan
// at element 0 (and 4 more tensors)".
inline std::string first_fired(const StepRow& first) { return "first fired at step " + step_text(first) + ": " + summary(first, false); }

// What a rule checked and found, the end line of `rule` and `monitor` (the rule's name first):
// "checked 21 steps (0..20) of 19 tensors in PATH; first fired at ...; fired at 3 steps", or
// "...; did not fire". `steps` are the global steps the rule looked at.
inline std::string checked_line(const std::string& rule, const std::vector<std::int64_t>& steps, std::size_t tensors, const std::string& path,
                                const std::optional<StepRow>& first, std::size_t fired_steps) {
    std::string out = rule + ": checked " + plural(steps.size(), "step");
    if (!steps.empty()) out += " (" + std::to_string(steps.front()) + ".." + std::to_string(steps.back()) + ")";
    out += " of " + plural(tensors, "tensor") + " in " + path + "; ";  // the tensors the rule inspected, not the trial's
    if (first) out += first_fired(*first) + "; ";
    return out + (fired_steps ? "fired at " + plural(fired_steps, "step") : std::string("did not fire"));
}

// Each rule's headline: its first row (rows in the order found, so a rule's first row is its
// first firing) and how many steps it fired at, rules in the order they first appear.
struct RuleHeadline {
    const StepRow* first = nullptr;
    std::size_t steps = 0;
};
inline std::vector<RuleHeadline> headlines(const std::vector<StepRow>& rows) {
    std::vector<RuleHeadline> out;
    for (const auto& r : rows) {
        auto it = out.begin();
        while (it != out.end() && it->first->rule != r.rule) ++it;
        if (it == out.end()) out.push_back({&r, 1});
        else ++it->steps;
    }
    return out;
}

}  // namespace cli::findings
