#pragma once
// `smdebug rule NAME PATH [--param key=value ...] [--start-step N] [--end-step M] [--other PATH ...]
//               [--action SPEC ...] [--ca-file FILE] [--wait [SECONDS]]`
// runs built-in rule NAME (case-insensitive) over the trial at PATH (a folder or s3://bucket/prefix)
// and prints one line per finding (every tensor that fired at a step), flushed at once:
//
//     step <global step> <finding>          e.g. `step 17 tensor fc1.weight: nan at element 3`
//
// or, when nothing fired, one line `checked N steps, M tensors: nothing fired`.
// then runs each --action (rules/actions/action_spec.hpp: webhook:URL, webhook-slack:URL,
// signal:PID[:SIG], exec:COMMAND, stop-file:PATH) in order. A bad spec is a usage error (exit 2)
// before the trial is opened; an action that fails is one line on stderr naming it (without the
// URL's path or query, or the command's arguments) and why, and the run goes on. --ca-file adds
// trusted CAs (PEM) for https webhooks.
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

#include "common.hpp"
#include "output_file.hpp"
#include "report/findings.hpp"

namespace cli {

inline constexpr const char* rule_usage =
    "usage: smdebug rule NAME PATH [--param key=value ...] [--start-step N] [--end-step M] [--other PATH ...]\n"
    "                   [--action SPEC ...] [--ca-file FILE] [--wait [SECONDS]]\n"
    "  Runs built-in rule NAME over the trial (waiting for a running job; --wait also for a trial that has\n"
    "  not started writing, up to SECONDS) and prints `step <g> <finding>` for every finding (every\n"
    "  tensor that fired at a step; `checked N steps, M tensors: nothing fired` when none), then runs\n"
    "  each --action: webhook:URL, webhook-slack:URL, signal:PID[:SIG], exec:COMMAND (no shell; the\n"
    "  finding in SMDEBUG_* variables), stop-file:PATH.\n"
    "  --ca-file FILE trusts the CAs in FILE (PEM) for https webhooks. A failed action is reported on\n"
    "  stderr and the run goes on. Exit codes: 0 never fired, 1 fired, 2 usage or data error.\n";
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

inline int run_rule_checked(int argc, char** argv);

// Data errors (unreadable trial, corrupt file, a tensor the rule cannot use) exit 2 as well:
// the gate distinguishes "fired" (1) from "could not decide" (2).
inline int run_rule(int argc, char** argv) {
    try {
        return run_rule_checked(argc, argv);
    } catch (const smdebug::SMDebugError& e) {
        std::cerr << "smdebug: " << e.python_name() << ": " << printable(e.what()) << "\n";
        return usage;
    } catch (const CliError& e) {  // standard output cannot be written
        std::cerr << "smdebug rule: " << printable(e.what()) << "\n";
        return e.code;
    }
}

inline int run_rule_checked(int argc, char** argv) {
    using namespace smdebug;
    const char* usage_line = rule_usage;
    std::optional<Args> args;
    try {
        args = Args::parse(argc, argv, 2, {"--param", "--start-step", "--end-step", "--other", "--action", "--ca-file"}, {"--wait"});
    } catch (const CliError& e) {
        std::cerr << "smdebug rule: " << printable(e.what()) << "\n" << usage_line;
        return usage;
    }
    if (args->positional.size() != 2) {
        std::cerr << usage_line;
        return usage;
    }
    RuleParams params;
    std::vector<std::string> others, action_specs;
    ActionSettings action_settings;
    action_settings.log = [](std::string_view level, std::string_view line) {  // failures only: one line each
        if (level == "error") std::cerr << "smdebug: " << printable(line) << "\n" << std::flush;
    };
    std::optional<std::int64_t> start, end;
    try {
        for (const auto& [name, value] : args->options) {
            if (name == "--param") params.set_assignment(*value);
            else if (name == "--other") others.push_back(*value);
            else if (name == "--action") action_specs.push_back(*value);
            else if (name == "--ca-file") action_settings.ca_file = *value;
            else if (name == "--wait") continue;  // apply_wait_option
            else {
                std::size_t used = 0;
                const auto v = std::stoll(*value, &used);
                if (used != value->size() || v < 0) throw std::invalid_argument("negative");
                (name == "--start-step" ? start : end) = v;
            }
        }
    } catch (const UsageError& e) {
        std::cerr << "smdebug: " << printable(e.what()) << "\n" << usage_line;
        return usage;
    } catch (const std::exception&) {
        std::cerr << "smdebug: --start-step and --end-step take a non-negative integer\n" << usage_line;
        return usage;
    }
    if (!find_builtin_rule(args->positional[0])) {
        std::cerr << "smdebug: unknown rule '" << args->positional[0] << "' (`smdebug rules` lists them)\n";
        return usage;
    }
    try {  // bad parameters are reported before the trial is opened (which may wait for the job)
        (void)validate_rule_params(args->positional[0], params);
    } catch (const SMDebugValueError& e) {
        std::cerr << "smdebug: " << printable(e.what()) << "\n";
        return usage;
    }
    Actions actions;
    try {  // bad specs are reported before the trial is opened, like bad parameters
        actions = make_actions(action_specs, action_settings);
    } catch (const InvalidActionSpec& e) {
        std::cerr << "smdebug: " << printable(e.what()) << "\n";
        return usage;
    }
    if (!action_settings.ca_file.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(action_settings.ca_file, ec)) {
            std::cerr << "smdebug: --ca-file " << printable(action_settings.ca_file) << " is not a readable file\n";
            return usage;
        }
    }
    if (start && end && *end <= *start) {
        std::cerr << "smdebug: --end-step must be greater than --start-step\n";
        return usage;
    }
    TrialOptions options;
    apply_wait_option(*args, options);  // without --wait, a path that holds no trial fails at once
    options.poll_interval = std::chrono::milliseconds(1000);
    options.range_begin = step_range_option().begin;  // --steps; --start-step / --end-step win
    options.range_end = step_range_option().end;
    if (start) options.range_begin = start;
    if (end) options.range_end = end;
    auto& trial = open_cli_trial(args->positional[1], options);
    const auto other = open_other_trials(others, options);
    std::unique_ptr<RuntimeRule<AnyStore>> rule;
    try {
        rule = make_rule(args->positional[0], trial, params, other.pointers);
    } catch (const SMDebugValueError& e) {
        std::cerr << "smdebug: " << printable(e.what()) << "\n";
        return usage;
    }
    InvokeOptions io;
    io.start_step = start.value_or(0);
    io.end_step = end;
    io.on_fire = [&actions](const RuleFiring& f) {
        for (const auto& found : f.findings) std::cout << "step " << f.step << " " << printable(found.text) << "\n";
        std::cout << std::flush;
        actions.invoke(f);  // make_actions: failures are reported on stderr, never thrown
        check_stdout();     // a step line that cannot be written ends the run (exit 2)
    };
    const auto result = invoke_rule(*rule, io);
    if (result.fired_steps.empty()) {
        const auto steps = trial.steps();
        const auto checked = std::count_if(steps.begin(), steps.end(), [&](std::int64_t s) { return s >= io.start_step && s <= result.end_step; });
        std::cout << "checked " << checked << (checked == 1 ? " step, " : " steps, ") << trial.tensor_names().size()
                  << (trial.tensor_names().size() == 1 ? " tensor" : " tensors") << ": nothing fired\n";
        check_stdout();
    }
    return result.fired_steps.empty() ? ok : bad_data;
}

// `smdebug report` runs these built-in rules with their default parameters over the steps the
// trial holds when the report is made (it does not wait for a running job) and shows what fired.
inline report::RuleResults run_report_rules(smdebug::Trial<smdebug::AnyStore>& trial) {
    report::RuleResults results;
    const auto steps = trial.steps();
    for (const char* name : {"ExplodingTensor", "VanishingGradient"}) {
        results.rules_run.push_back(name);
        if (steps.empty()) continue;
        auto rule = smdebug::make_rule(name, trial, smdebug::RuleParams{});
        smdebug::InvokeOptions run;
        run.end_step = steps.back() + 1;
        run.on_fire = [&](const smdebug::RuleFiring& f) {
            for (const auto& found : f.findings) results.findings.push_back({name, f.step, found.tensor, found.text});
        };
        smdebug::invoke_rule(*rule, run);
    }
    return results;
}
inline const bool report_rules_registered = (report::findings_sources().push_back(run_report_rules), true);

}  // namespace cli
