#pragma once
// `smdebug rule PATH NAME [--param key=value ...] [--start-step N] [--end-step M] [--other PATH ...]
//               [--action SPEC ...] [--ca-file FILE] [--wait [SECONDS]]`
// (the old order `rule NAME PATH` is still accepted: the argument that names a built-in rule is the rule)
// runs built-in rule NAME (case-insensitive) over the trial at PATH (a folder or s3://bucket/prefix)
// and prints one line per step it fired at (cli/findings_text.hpp), flushed at once: the global
// step, its mode and mode step, the first finding, and the other tensors it fired on at that step:
//
//     step <global step> [(<MODE> step <mode step>)] <finding> [(and N more tensors: <tensor>, ...)]
//     e.g. `step 17 (TRAIN step 13) tensor fc1.weight: nan at element 3 (and 2 more tensors: fc2.weight, loss)`
//
// or, when nothing fired, one line `checked N steps, M tensors: nothing fired`.
// then runs each --action (rules/actions/action_spec.hpp: webhook:URL, webhook-slack:URL,
// signal:PID[:SIG], exec:COMMAND, stop-file:PATH) in order. A bad spec is a usage error (exit 2)
// before the trial is opened; an action that fails is one line on stderr naming it (without the
// URL's path or query, or the command's arguments) and why, and the run goes on. --ca-file adds
// trusted CAs (PEM) for https webhooks. At the end, one line on stderr says what was checked:
// `ExplodingTensor: checked 21 steps (0..20) of 19 tensors in PATH; fired at 0 steps` (the tensors the
// rule inspected, RuleBase::checked_tensors); when it fired, the line names its first firing, with
// the mode step: `...; first fired at step 207 (TRAIN step 203): tensor loss: nan at element 0 (and
// 12 more tensors); fired at 40 steps`.
//
// It waits for the steps of a running job (like `watch`) and ends when training has ended
// (or at --end-step, exclusive). A path that holds no trial yet fails at once unless --wait
// [SECONDS] asks to wait for the job to start writing. Exit codes: 0 the rule never fired, 1 it fired, 2 usage or
// data error (unknown rule or parameter, malformed value, unreadable trial).
//
// `smdebug rules` lists the built-in rules with their parameters and defaults.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <smdebug/rules/actions/action_spec.hpp>
#include <smdebug/rules/rules.hpp>

#include <smdebug/smdebug.hpp>

#include "../serve/rule_findings.hpp"
#include "args.hpp"
#include "errors.hpp"
#include "escape.hpp"
#include "findings_text.hpp"
#include "format.hpp"
#include "output_file.hpp"
#include "report/findings.hpp"
#include "rule_spec.hpp"
#include "session.hpp"
#include "terminal.hpp"

namespace cli {

inline constexpr const char* rule_usage =
    "usage: smdebug rule PATH NAME [--param key=value ...] [--start-step N] [--end-step M] [--other PATH ...]\n"
    "                   [--action SPEC ...] [--ca-file FILE] [--wait [SECONDS]]\n"
    "  Runs built-in rule NAME over the trial (waiting for a running job; --wait also for a trial that has\n"
    "  not started writing, up to SECONDS) and prints one line per step it fired at: `step <g> (<MODE>\n"
    "  step <m>) <first finding> (and N more tensors: <tensor>, ...)`, then one line on stderr saying what\n"
    "  it checked and how often it fired, headed by its first firing; then runs each --action for each\n"
    "  step it fired at: webhook:URL, webhook-slack:URL, signal:PID[:SIG], exec:COMMAND\n"
    "  (no shell; the finding in SMDEBUG_* variables), stop-file:PATH.\n"
    "  --ca-file FILE trusts the CAs in FILE (PEM) for https webhooks. A failed action is reported on\n"
    "  stderr and the run goes on. At the end one line on stderr says how many steps and tensors were\n"
    "  checked and how often the rule fired. The old order `rule NAME PATH` is still accepted.\n"
    "  Exit codes: 0 never fired, 1 fired, 2 usage or data error.\n";
inline constexpr const char* rules_usage =
    "usage: smdebug rules\n"
    "  Lists the built-in rules with their parameters and defaults.\n";

inline int run_rules_list() {
    for (const auto& r : smdebug::builtin_rules()) {
        std::cout << r.name << (r.needs_other_trial ? " (needs --other PATH)" : "") << ": fires when " << r.fires_when << "\n";
        for (const auto& p : r.parameters)
            std::cout << "    " << p.name << " = " << (p.default_value.empty() ? "(none)" : std::string(p.default_value)) << "  " << p.meaning
                      << "\n";
    }
    return ok;
}

inline int run_rule_checked(Session& session, int argc, char** argv);

// Data errors (unreadable trial, corrupt file, a tensor the rule cannot use) exit 2 as well:
// the gate distinguishes "fired" (1) from "could not decide" (2).
inline int run_rule(Session& session, int argc, char** argv) {
    try {
        return run_rule_checked(session, argc, argv);
    } catch (const smdebug::SMDebugError& e) {
        session.print_error(std::string(e.python_name()) + ": " + e.what());
        return usage;
    } catch (const CliError& e) {  // a usage error, or standard output cannot be written
        const std::string_view message = e.what();
        session.print_error(message.substr(0, message.find('\n')));
        return usage;
    }
}

// PATH and NAME from the two arguments, in either order: the one naming a built-in rule is the
// rule (`rule NAME PATH` was the documented order before 0.2).
inline std::pair<std::string, std::string> rule_path_and_name(const std::vector<std::string>& positional) {
    const bool first_is_rule = smdebug::find_builtin_rule(positional[0]) != nullptr;
    const bool second_is_rule = smdebug::find_builtin_rule(positional[1]) != nullptr;
    if (first_is_rule && !second_is_rule) return {positional[1], positional[0]};
    return {positional[0], positional[1]};
}

inline int run_rule_checked(Session& session, int argc, char** argv) {
    using namespace smdebug;
    const auto args = Args::parse(argc, argv, 2, {"--param", "--start-step", "--end-step", "--other", "--action", "--ca-file"}, {"--wait"});
    if (args.positional.size() != 2) throw usage_error("expected PATH and NAME (smdebug rule --help)");
    const auto [path, rule_name] = rule_path_and_name(args.positional);
    RuleParams params;
    std::vector<std::string> others, action_specs;
    ActionSettings action_settings;
    action_settings.log = [&session](std::string_view level, std::string_view line) {  // failures only: one line each
        if (level == "error") session.print_error(line);
    };
    std::optional<std::int64_t> start, end;
    try {
        for (const auto& [name, value] : args.options) {
            if (name == "--param") params.set_assignment(*value);
            else if (name == "--other") others.push_back(*value);
            else if (name == "--action") action_specs.push_back(*value);
            else if (name == "--ca-file") action_settings.ca_file = *value;
            else if (name == "--wait") continue;  // Session::following_options
            else {
                std::size_t used = 0;
                const auto v = std::stoll(*value, &used);
                if (used != value->size() || v < 0) throw std::invalid_argument("negative");
                (name == "--start-step" ? start : end) = v;
            }
        }
    } catch (const UsageError& e) {
        throw usage_error(e.what());
    } catch (const std::exception&) {
        throw usage_error("--start-step and --end-step take a non-negative integer");
    }
    if (!find_builtin_rule(rule_name)) throw usage_error(unknown_rule_message(rule_name));
    try {  // bad parameters are reported before the trial is opened (which may wait for the job)
        (void)validate_rule_params(rule_name, params);
    } catch (const SMDebugValueError& e) {
        throw usage_error(e.what());
    }
    Actions actions;
    try {  // bad specs are reported before the trial is opened, like bad parameters
        actions = make_actions(action_specs, action_settings);
    } catch (const InvalidActionSpec& e) {
        throw usage_error(e.what());
    }
    if (!action_settings.ca_file.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(action_settings.ca_file, ec))
            throw usage_error("--ca-file " + action_settings.ca_file + " is not a readable file");
    }
    if (start && end && *end <= *start) throw usage_error("--end-step must be greater than --start-step");
    TrialOptions options = session.following_options(args);  // --steps; without --wait, a path that holds no trial fails at once
    options.poll_interval = std::chrono::milliseconds(1000);
    if (start) options.range_begin = start;
    if (end) options.range_end = end;
    auto& trial = session.open_trial(path, options);
    const auto other = session.open_other_trials(others, options);
    std::unique_ptr<RuntimeRule<AnyStore>> rule;
    try {
        rule = make_rule(rule_name, trial, params, other);
    } catch (const SMDebugValueError& e) {
        throw usage_error(e.what());
    }
    InvokeOptions io;
    io.start_step = start.value_or(0);
    io.end_step = end;
    std::optional<findings::StepRow> first_firing;  // the headline at the end (issue 53 item 5)
    io.on_fire = [&actions, &first_firing](const RuleFiring& f) {
        auto row = findings::row_of(f, f.rule);
        std::cout << paint(printable(findings::line(row)), Colour::red) << "\n" << std::flush;  // one line per step, its tensors listed
        if (!first_firing) first_firing = std::move(row);
        actions.invoke(f);  // make_actions: failures are reported on stderr, never thrown
        check_stdout();     // a step line that cannot be written ends the run (exit 2)
    };
    const auto result = invoke_rule(*rule, io);
    std::vector<std::int64_t> checked;
    for (const auto s : trial.steps())
        if (s >= io.start_step && (!end || s < *end) && s <= result.end_step) checked.push_back(s);
    std::cerr << printable(findings::checked_line(std::string(find_builtin_rule(rule_name)->name), checked, rule->checked_tensors().size(), trial.path(),
                                                  first_firing, result.fired_steps.size()))
              << "\n";
    for (const auto& note : rule->notes()) std::cerr << find_builtin_rule(rule_name)->name << ": " << printable(note) << "\n";
    return result.fired_steps.empty() ? ok : bad_data;
}

// `smdebug report` runs its --rule NAME[:k=v,...] rules (by default ExplodingTensor and
// VanishingGradient with their default parameters) over the steps the trial holds when the report
// is made (it does not wait for a running job) and shows what fired.
inline report::RuleResults run_report_rules(smdebug::Trial<smdebug::AnyStore>& trial, const std::vector<std::string>& requested) {
    report::RuleResults results;
    const auto steps = trial.steps();
    std::vector<monitor::RuleSpec> specs;
    for (const auto& text : requested) specs.push_back(monitor::parse_rule_spec(text));
    if (specs.empty())
        for (const char* name : {"ExplodingTensor", "VanishingGradient"}) specs.push_back(monitor::parse_rule_spec(name));
    for (const auto& spec : specs) {
        const std::string name = spec.text;
        results.rules_run.push_back({name, 0});
        if (steps.empty()) continue;
        auto rule = smdebug::make_rule(spec.name, trial, spec.params);
        smdebug::InvokeOptions run;
        run.end_step = steps.back() + 1;
        run.on_fire = [&](const smdebug::RuleFiring& f) {
            for (const auto& found : f.findings) results.findings.push_back({name, f.step, found.tensor, found.text, f.mode, f.mode_step});
        };
        smdebug::invoke_rule(*rule, run);
        results.rules_run.back().checked_tensors = rule->checked_tensors().size();
    }
    return results;
}

// tools/serve/rule_findings.hpp (`smdebug serve`'s /api/v1/rules); not inline: defined once, in
// main.cpp's translation unit, the only one that includes this header.
RuleFindings rule_findings(smdebug::Trial<smdebug::AnyStore>& trial, const std::string& name, const smdebug::RuleParams& params,
                           std::int64_t end_step) {
    RuleFindings out;
    auto rule = smdebug::make_rule(name, trial, params);
    smdebug::InvokeOptions run;
    run.end_step = end_step;
    run.on_fire = [&](const smdebug::RuleFiring& f) {
        for (const auto& found : f.findings) out.fired.push_back({f.step, found.tensor, found.text, f.mode, f.mode_step});
    };
    smdebug::invoke_rule(*rule, run);
    out.checked_tensors = rule->checked_tensors().size();
    return out;
}

}  // namespace cli
