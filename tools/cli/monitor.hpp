#pragma once
// `smdebug monitor PATH --rule NAME[:k=v,...] ... [--metrics-port P] [--metrics-bind ADDR]
//  [--metric REGEX[:reduction]] ... [--action SPEC] ... [--ca-file FILE] [--stop-on-fire]
//  [--poll SECONDS] [--other PATH] [--steps A:B] [--wait [SECONDS]]`
// follows a running job (a folder or s3://bucket/prefix; with --wait it waits for one that has not started)
// and runs every given rule on each new complete step, all rules of a step on one read of it
// (smdebug::RuleSet). Each rule that fires at a step prints one line on stdout, flushed at once,
// listing the tensors it fired on (cli/findings_text.hpp, as `smdebug rule` prints them):
//
//     step <global step> [(<MODE> step <mode step>)] <rule> <finding> [(and N more tensors: <tensor>, ...)]
//     e.g. `step 7 (TRAIN step 5) ExplodingTensor tensor loss: nan at element 0 (and 1 more tensor: fc1.weight)`
//
// and runs the --action actions (rules/actions/action_spec.hpp: webhook, signal, exec, stop-file);
// a failing action is reported on stderr and never stops the monitor. When it ends, one line per
// rule on stderr says what it checked, headed by its first firing (as `smdebug rule`'s last line):
// `ExplodingTensor: checked 9 steps (0..8) of 2 tensors in PATH; first fired at step 3: ...; fired at 2 steps`.
// It exits once the job has ended and every step is processed: 0 when no rule fired, 1 when one
// did (at once, after that step, with --stop-on-fire), 2 on a usage or data error (as `smdebug rule`).
//
// --rule NAME[:k=v,...]: a built-in rule (`smdebug rules`) with its parameters, as `smdebug rule
// NAME --param k=v` takes them; a comma-separated piece without '=' continues the previous value,
// so list values stay whole: `--rule AllZero:collection_names=weights,biases,threshold=0.5`.
// --metrics-port P serves the metrics of monitor/exposition.hpp at http://ADDR:P/metrics (ADDR:
// --metrics-bind, 127.0.0.1 by default); port 0 picks a free port. The URL is printed on stderr:
// `smdebug monitor: metrics at http://127.0.0.1:P/metrics`.
// --metric REGEX[:reduction] adds the gauge smdebug_tensor{tensor,reduction,worker} for every tensor
// whose name REGEX matches (anywhere), every worker, at each step that saved it: the reduction (min,
// max, mean, std, variance, sum, prod, l1, l2, or abs_<one of them>; default mean) of the value read
// with the rules' tensors, or the stored reduction when only that was saved.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <smdebug/rules/actions/action_spec.hpp>
#include <smdebug/rules/rules.hpp>

#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "escape.hpp"
#include "findings_text.hpp"
#include "monitor/exposition.hpp"
#include "monitor/metrics_server.hpp"
#include "output_file.hpp"
#include "rule_spec.hpp"
#include "session.hpp"

namespace cli {

inline constexpr const char* monitor_usage =
    "usage: smdebug monitor PATH --rule NAME[:k=v,...] ... [--metrics-port P] [--metrics-bind ADDR]\n"
    "                       [--metric REGEX[:reduction]] ... [--action SPEC] ... [--ca-file FILE]\n"
    "                       [--stop-on-fire] [--poll SECONDS] [--other PATH] [--steps A:B] [--wait [SECONDS]]\n"
    "  Follows a running job, runs every rule on each new complete step (one read per step), prints\n"
    "  `step <g> (<MODE> step <m>) <rule> <first finding> (and N more tensors: <tensor>, ...)` for every\n"
    "  rule that fired at a step and runs the --action actions (webhook:URL, webhook-slack:URL,\n"
    "  signal:PID[:SIG], exec:COMMAND, stop-file:PATH); at the end, one line per rule on stderr says\n"
    "  what it checked, headed by its first firing. --metrics-port serves\n"
    "  OpenMetrics / Prometheus text at http://127.0.0.1:P/metrics (0: any free port, printed on stderr).\n"
    "  Exits when the job has ended: 0 nothing fired, 1 a rule fired (at once with --stop-on-fire),\n"
    "  2 usage or data error. A path that holds no trial fails at once; --wait [SECONDS] waits for a job\n"
    "  that has not started writing (up to SECONDS).\n";

namespace monitor {

struct MetricSpec {
    std::string regex;
    std::string reduction;  // as shown in the label: "mean", "abs_l2"
    smdebug::Reduction r = smdebug::Reduction::mean;
    bool abs = false;
};

// REGEX[:reduction]: the text after the last ':' is the reduction when it names one.
inline MetricSpec parse_metric_spec(const std::string& text) {
    MetricSpec m{text, "mean", smdebug::Reduction::mean, false};
    if (const auto colon = text.rfind(':'); colon != std::string::npos) {
        std::string red = text.substr(colon + 1);
        const bool abs = red.starts_with("abs_");
        if (const auto r = smdebug::parse_reduction(abs ? red.substr(4) : red)) {
            m = MetricSpec{text.substr(0, colon), red, *r, abs};
        }
    }
    if (m.regex.empty()) throw usage_error("--metric needs a tensor regex: --metric REGEX[:reduction]");
    try {  // checked before the trial is opened (which may wait for the job)
        smdebug::detail::check_regex(m.regex);
    } catch (const smdebug::SMDebugError& e) {
        throw usage_error("--metric: " + std::string(e.what()));
    }
    return m;
}

inline double seconds_option(const std::string& text, const std::string& what) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || !std::isfinite(v) || v < 0.01 || v > 3600)
        throw usage_error(what + " must be a number of seconds from 0.01 to 3600, not '" + text + "'");
    return v;
}

}  // namespace monitor

inline int run_monitor_checked(Session& session, int argc, char** argv);

// Data errors (unreadable trial, corrupt file) exit 2, as `smdebug rule`: 1 means "a rule fired".
inline int run_monitor(Session& session, int argc, char** argv) {
    try {
        return run_monitor_checked(session, argc, argv);
    } catch (const CliError& e) {
        const std::string_view message = e.what();
        session.print_error(message.substr(0, message.find('\n')));
        return usage;
    } catch (const smdebug::SMDebugError& e) {
        session.print_error(std::string(e.python_name()) + ": " + e.what());
        return usage;
    } catch (const std::exception& e) {  // never an abort: one line and the "cannot do it" code
        session.print_error(e.what());
        return usage;
    }
}

inline int run_monitor_checked(Session& session, int argc, char** argv) {
    using namespace smdebug;
    const auto args = Args::parse(argc, argv, 2,
                                  {"--rule", "--metrics-port", "--metrics-bind", "--metric", "--action", "--ca-file", "--poll", "--other"},
                                  {"--stop-on-fire", "--wait"});
    if (args.positional.size() != 1) throw usage_error("expected one PATH");
    std::vector<monitor::RuleSpec> rules;
    std::vector<monitor::MetricSpec> metrics;
    std::vector<std::string> action_specs, others;
    std::optional<std::uint16_t> port;
    monitor::MetricsServerOptions server_options;
    ActionSettings action_settings;
    TrialOptions options = session.following_options(args);  // as watch and rule: only --wait waits for a job to start writing
    options.poll_interval = std::chrono::milliseconds(1000);
    for (const auto& [name, value] : args.options) {
        if (name == "--rule") rules.push_back(monitor::parse_rule_spec(*value));
        else if (name == "--metric") metrics.push_back(monitor::parse_metric_spec(*value));
        else if (name == "--action") action_specs.push_back(*value);
        else if (name == "--other") others.push_back(*value);
        else if (name == "--ca-file") action_settings.ca_file = *value;
        else if (name == "--metrics-bind") server_options.bind = *value;
        else if (name == "--poll")
            options.poll_interval = std::chrono::milliseconds(static_cast<std::int64_t>(monitor::seconds_option(*value, "--poll") * 1000));
        else if (name == "--metrics-port") {
            const auto p = parse_int(*value, "--metrics-port");
            if (p < 0 || p > 65535) throw usage_error("--metrics-port must be from 0 to 65535, not '" + *value + "'");
            port = static_cast<std::uint16_t>(p);
        }
    }
    if (rules.empty() && !port) throw usage_error("give at least one --rule NAME (or --metrics-port P to only export metrics)");
    if (!metrics.empty() && !port) throw usage_error("--metric needs --metrics-port");
    if (!action_specs.empty() && rules.empty()) throw usage_error("--action needs a --rule to act on");
    action_settings.log = [&session](std::string_view level, std::string_view text) {  // failures only: one line each
        if (level == "error") session.print_error(text);
    };
    try {  // every spec checked before the trial is opened (which may wait for the job)
        (void)make_actions(action_specs, action_settings);
    } catch (const InvalidActionSpec& e) {
        throw usage_error(e.what());
    }
    // The same rule given twice is labelled by its whole --rule text.
    std::map<std::string, int> name_count;
    for (const auto& r : rules) ++name_count[r.name];

    // The metrics, shared with the server thread.
    std::mutex mutex;
    monitor::MetricsSnapshot shared;
    std::vector<std::string> labels;
    for (const auto& r : rules) {
        labels.push_back(name_count[r.name] > 1 ? r.text : r.name);
        shared.rules.push_back({labels.back(), 0, std::nullopt});
    }
    std::unique_ptr<monitor::MetricsServer> server;
    if (port) {
        server_options.port = *port;
        server = std::make_unique<monitor::MetricsServer>(server_options, [&](monitor::Exposition e) {
            monitor::MetricsSnapshot copy;
            {
                std::lock_guard lock(mutex);
                copy = shared;
            }
            return monitor::render(copy, e);
        });
        std::cerr << "smdebug monitor: metrics at " << server->url() << "\n" << std::flush;
    }

    auto& trial = session.open_trial(args.positional[0], options);
    const auto other = session.open_other_trials(others, options);
    RuleSet<AnyStore> set(trial);
    for (const auto& r : rules) {
        std::unique_ptr<RuntimeRule<AnyStore>> rule;
        try {
            rule = make_rule(r.name, trial, r.params, other);
        } catch (const SMDebugValueError& e) {
            throw usage_error(e.what());
        }
        rule->actions() = make_actions(action_specs, action_settings);  // failures are reported, never thrown
        set.add(std::move(rule));
    }

    // The metric reads of a step: every matching tensor saved there, every worker.
    struct MetricRead {
        std::size_t metric;
        std::string tensor, worker;
    };
    auto metric_reads = [&](std::int64_t step, std::vector<MetricRead>& reads, std::vector<RuleSet<AnyStore>::ExtraRead>& extra) {
        reads.clear();
        extra.clear();
        for (std::size_t m = 0; m < metrics.size(); ++m) {
            TensorNamesQuery q;
            q.step = step;
            q.regex = {metrics[m].regex};
            for (const auto& name : trial.tensor_names(q)) {
                std::vector<std::string> workers;
                try {
                    workers = trial.tensor(name).workers(step);
                } catch (const TensorUnavailableForStep&) {
                    continue;
                }
                for (auto& w : workers) {
                    extra.push_back({name, w});
                    reads.push_back({m, name, std::move(w)});
                }
            }
        }
    };

    const std::int64_t first = options.range_begin.value_or(0);
    const std::optional<std::int64_t> end = options.range_end;
    bool any_fired = false;
    // What each rule checked and found, for its line on stderr at the end (issue 53 item 5).
    std::vector<std::int64_t> checked_steps;
    std::vector<std::optional<findings::StepRow>> first_rows(rules.size());
    std::vector<std::size_t> fired_steps(rules.size(), 0);
    const auto checked_lines = [&] {
        for (std::size_t i = 0; i < rules.size(); ++i)
            std::cerr << printable(findings::checked_line(labels[i], checked_steps, set[i].checked_tensors().size(), trial.path(), first_rows[i],
                                                          fired_steps[i]))
                      << "\n";
        std::cerr << std::flush;
    };
    std::vector<MetricRead> reads;
    std::vector<RuleSet<AnyStore>::ExtraRead> extra;
    // The next step to look at after `step`: the next complete step the trial knows, else step + 1.
    auto next_step = [&](std::int64_t step) {
        auto scope = no_refresh(trial);
        const auto steps = trial.steps();
        const auto it = std::upper_bound(steps.begin(), steps.end(), step);
        return it == steps.end() ? step + 1 : *it;
    };
    for (std::int64_t step = first; !end || step < *end;) {
        try {
            trial.wait_for_steps({step});
        } catch (const StepUnavailable&) {
            step = next_step(step);
            continue;
        } catch (const NoMoreData&) {
            break;
        }
        metric_reads(step, reads, extra);
        const auto result = set.run_at_step(step, extra);
        checked_steps.push_back(step);
        std::map<std::tuple<std::string, std::string, std::string>, double> values;
        for (std::size_t k = 0; k < reads.size(); ++k) {
            const auto& m = metrics[reads[k].metric];
            try {
                const double v = result.extra[k].value ? compute_reduction(*result.extra[k].value, m.r, m.abs)
                                                       : trial.tensor(reads[k].tensor)
                                                             .reduction_value(step, reduction_name(m.r), StepQuery{Mode::GLOBAL, reads[k].worker}, m.abs);
                values[{reads[k].tensor, m.reduction, reads[k].worker}] = v;
            } catch (const SMDebugError&) {
                // neither the value nor that stored reduction (or a string tensor): no gauge this step
            }
        }
        const auto mm = trial.mode_modestep(step);
        const std::string mode(mode_name(mm ? mm->first : Mode::GLOBAL));
        std::int64_t behind = 0;
        {
            auto scope = no_refresh(trial);
            const auto steps = trial.steps();
            behind = steps.end() - std::upper_bound(steps.begin(), steps.end(), step);
        }
        {
            std::lock_guard lock(mutex);
            shared.last_step[mode] = step;
            shared.steps_behind = behind;
            shared.training_ended = trial.loaded_all_steps();
            for (auto& [key, v] : values) shared.tensors[key] = v;
            for (std::size_t i = 0; i < result.fired.size(); ++i)
                if (result.fired[i]) {
                    ++shared.rules[i].fired;
                    shared.rules[i].last_fired_step = step;
                }
        }
        bool fired_now = false;
        for (std::size_t i = 0; i < result.fired.size(); ++i)
            if (const auto& f = result.fired[i]) {
                auto row = findings::row_of(*f, labels[i]);
                std::cout << printable(findings::line(row, labels[i])) << "\n" << std::flush;  // one line per rule and step
                if (!first_rows[i]) first_rows[i] = std::move(row);
                ++fired_steps[i];
                fired_now = true;
            }
        if (fired_now) check_stdout();  // a line that cannot be written ends the run (exit 2)
        any_fired = any_fired || fired_now;
        if (fired_now && args.has("--stop-on-fire")) {
            checked_lines();
            return bad_data;
        }
        step = next_step(step);
    }
    {
        std::lock_guard lock(mutex);
        shared.training_ended = true;
        shared.steps_behind = 0;
    }
    checked_lines();
    return any_fired ? bad_data : ok;
}

}  // namespace cli
