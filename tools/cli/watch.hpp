#pragma once
// `smdebug watch PATH [--tensor NAME --reduction NAME [--abs]] [--mode M]`: follows a training job while it
// runs and prints one line per newly completed step, in step order, each flushed at once:
//
//     step <global step> <MODE> <mode step>
//     step <global step> <MODE> <mode step> <tensor> <reduction>=<value>     (with --tensor/--reduction)
//
// e.g. `step 4 TRAIN 4 loss mean=0.25`, or `step 4 TRAIN 4 loss abs_mean=0.25` with --abs.
//  - "Completed" is the reader's notion (trial.steps(): every worker wrote the step, a later step
//    is complete, or training ended). Steps of every mode are printed, by global step; GLOBAL
//    steps print `GLOBAL <global step>`. --mode M prints only the steps of mode M.
//  - A --tensor the trial does not hold is an error naming it (with the closest names) once training
//    has ended; while the job runs, a note on stderr says it has not been saved so far.
//  - <value> is the stored reduction of the step (worker: the first by name) when one was saved,
//    else it is computed from the saved tensor; printed as the shortest decimal that reads back
//    as the same double (`nan`, `inf`, `-inf` for those). When the tensor was not saved at that
//    step (neither its value nor that reduction), the value is `n/a`: `step 5 TRAIN 5 loss mean=n/a`.
//  - While the job runs, a step whose record the writer has not finished yet is held back (and
//    the steps after it, to keep the order) until it reads cleanly.
//  - A step whose index file arrives late (a slow worker, after later steps were printed) is
//    printed when it is found, after the lines already printed.
// With --wait [SECONDS] it waits, with backoff, for a trial that has not appeared yet (without, such a
// path fails at once: docs/deviations.md D16), wakes early on
// local file changes, and exits 0 once training has ended and every step has been printed.
// Exit codes: 0 done, 1 bad data (e.g. a truncated record after training ended), 2 usage error.
#include <charconv>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <set>
#include <string>

#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "escape.hpp"
#include "format.hpp"
#include "output_file.hpp"
#include "session.hpp"
#include "unknown_tensor.hpp"

namespace cli {

namespace watch_detail {

struct Request {
    std::string tensor, reduction;
    bool abs = false;
};

// The line of one step, or nothing when the step's data is not readable yet (still being written).
template <class TrialT>
std::optional<std::string> step_line(TrialT& trial, std::int64_t g, const std::optional<Request>& req) {
    using namespace smdebug;
    const auto mm = trial.mode_modestep(g);
    std::string line = "step " + std::to_string(g) + " " + std::string(mode_name(mm ? mm->first : Mode::GLOBAL)) + " " +
                       std::to_string(mm ? mm->second : g);
    if (!req) return line;
    line += " " + req->tensor + " " + (req->abs ? "abs_" : "") + req->reduction + "=";
    if (!trial.has_tensor(req->tensor)) return line + "n/a";
    try {
        return line + format_double(trial.tensor(req->tensor).reduction_value(g, req->reduction, StepQuery{}, req->abs));
    } catch (const TensorUnavailableForStep&) {
        return line + "n/a";
    } catch (const StepNotYetAvailable&) {
        return std::nullopt;
    }
}

}  // namespace watch_detail

inline constexpr const char* watch_usage =
    "usage: smdebug watch PATH [--tensor NAME --reduction R [--abs]] [--mode M] [--wait [SECONDS]]\n"
    "  Follows a training job while it runs: one line per completed step, in step order,\n"
    "  `step <global step> <MODE> <mode step> [<tensor> <reduction>=<value>]` (--mode M: that mode's\n"
    "  steps only; --reduce is an alias of --reduction). Waits for a trial that has not appeared yet\n"
    "  only with --wait (up to SECONDS); exits 0 once training ended and every step was printed; 2 for a\n"
    "  tensor the trial never saved.\n";

inline int run_watch(Session& session, const Args& args) {
    using namespace smdebug;
    if (args.positional.size() != 1) throw usage_error(std::string("expected PATH\n") + watch_usage);
    std::optional<watch_detail::Request> req;
    const auto tensor = args.value("--tensor");
    const auto reduction = args.value("--reduction");
    if (tensor.has_value() != reduction.has_value() || (args.has("--abs") && !reduction))
        throw usage_error("--tensor and --reduction go together (--abs needs both)");
    const Mode only_mode = mode_option(args);  // GLOBAL: every step
    if (reduction) {
        if (!parse_reduction(*reduction))
            throw usage_error("unknown reduction '" + *reduction + "' (one of min, max, mean, std, variance, sum, prod, l1, l2)");
        req = watch_detail::Request{*tensor, *reduction, args.has("--abs")};
    }

    const std::string& path = args.positional[0];
    TrialOptions options = session.following_options(args);  // D16: waits for the job to start writing only with --wait
    options.poll_interval = std::chrono::milliseconds(1000);
    auto& trial = session.open_trial(path, options);

    const auto min_delay = std::chrono::milliseconds(25);
    auto delay = min_delay;
    std::set<std::int64_t> printed;
    bool tensor_noted = false;
    while (true) {
        const auto complete = trial.steps();  // refreshes; detects the end of training
        if (req && !complete.empty() && !trial.has_tensor(req->tensor)) {
            if (trial.loaded_all_steps()) throw usage_error(unknown_tensor_message(trial, req->tensor));
            if (!tensor_noted)
                session.print_error("tensor '" + req->tensor + "' has not been saved so far" + did_you_mean(req->tensor, trial.tensor_names()) +
                            "; watching on");
            tensor_noted = true;
        }
        bool progressed = false, held = false;
        // Printed steps are a subset of the complete ones; when they are its first |printed|
        // elements (no late step), only the tail needs looking at.
        std::size_t from = 0;
        if (!printed.empty() && printed.size() <= complete.size() && complete[printed.size() - 1] == *printed.rbegin())
            from = printed.size();
        for (std::size_t i = from; i < complete.size(); ++i) {
            const auto g = complete[i];
            if (printed.contains(g)) continue;
            if (only_mode != Mode::GLOBAL) {
                const auto mm = trial.mode_modestep(g);
                if (!mm || mm->first != only_mode) {
                    printed.insert(g);  // not shown, but passed
                    continue;
                }
            }
            const auto line = watch_detail::step_line(trial, g, req);
            if (!line) {
                held = true;
                break;
            }
            std::cout << printable(*line) << '\n' << std::flush;
            check_stdout();  // following a job into a full disk would never end
            printed.insert(g);
            progressed = true;
        }
        if (trial.loaded_all_steps() && !held) return ok;
        delay = progressed ? min_delay : std::min(delay * 2, options.poll_interval);
        trial.wait_for_change(delay);
    }
}

}  // namespace cli
