#pragma once
// The listing commands: `tensors`, `steps`, `collections`, `workers`, `shapes`. Each prints one
// item per line (tab-separated fields), so that their output pipes into other tools.
#include <iostream>

#include <smdebug/core/regex.hpp>
#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "escape.hpp"
#include "format.hpp"
#include "session.hpp"

namespace cli {

inline constexpr const char* tensors_usage =
    "usage: smdebug tensors PATH [--regex R]... [--collection C] [--step S] [--mode M]\n"
    "  Tensor names, one a line, in natural order (layer2 before layer10). --regex keeps names matching R anywhere (may repeat);\n"
    "  --collection keeps a collection's tensors; --step S keeps tensors saved at step S (of --mode M,\n"
    "  global steps by default).\n";

inline int run_tensors(Session& session, const Args& args) {
    auto& trial = session.open_trial(the_path(args, tensors_usage));
    smdebug::TensorNamesQuery q;
    q.mode = mode_option(args);
    if (const auto s = args.value("--step")) q.step = parse_int(*s, "--step");
    for (const auto& [n, v] : args.options)
        if (n == "--regex") q.regex.push_back(*v);
    q.collection = args.value("--collection");
    if (!q.regex.empty() && q.collection) throw usage_error("--regex and --collection cannot be combined");
    if (q.collection && !trial.collections().contains(*q.collection))
        throw usage_error("unknown collection '" + *q.collection + "' in " + trial.path());
    try {
        for (const auto& n : naturally_sorted(trial.tensor_names(q))) std::cout << printable(n) << "\n";
    } catch (const smdebug::SMDebugValueError& e) {  // a pattern outside the limits, or invalid
        throw usage_error(std::string("bad --regex: ") + e.what());
    }
    return ok;
}

inline constexpr const char* steps_usage =
    "usage: smdebug steps PATH [--mode M] [--all]\n"
    "  Complete steps, one a line: `<global step>\\t<mode>\\t<mode step>`. With --mode M, the steps of\n"
    "  that mode only. --all also lists steps not every worker has written yet.\n";

inline int run_steps(Session& session, const Args& args) {
    using namespace smdebug;
    auto& trial = session.open_trial(the_path(args, steps_usage));
    const Mode mode = mode_option(args);
    const bool all = args.has("--all");
    for (auto s : trial.steps(mode, all)) {
        if (mode == Mode::GLOBAL) {
            const auto mm = trial.mode_modestep(s);
            std::cout << s << "\t" << mode_name(mm ? mm->first : Mode::GLOBAL) << "\t" << (mm ? mm->second : s) << "\n";
        } else {
            const auto g = trial.global_step(mode, s);
            std::cout << (g ? std::to_string(*g) : std::string("-")) << "\t" << mode_name(mode) << "\t" << s << "\n";
        }
    }
    return ok;
}

inline constexpr const char* collections_usage =
    "usage: smdebug collections PATH\n"
    "  Collections, one a line: `<name>\\t<number of tensors>\\t<include regexes, comma-separated>`.\n";

inline int run_collections(Session& session, const Args& args) {
    auto& trial = session.open_trial(the_path(args, collections_usage));
    for (const auto& [name, c] : trial.collections()) {
        const std::size_t count = trial.tensor_names(smdebug::TensorNamesQuery{.collection = name}).size();
        std::string regexes;
        for (std::size_t i = 0; i < c.include_regex.size(); ++i) regexes += (i ? "," : "") + c.include_regex[i];
        std::cout << printable(name) << "\t" << count << "\t" << printable(regexes) << "\n";
    }
    return ok;
}

inline constexpr const char* workers_usage =
    "usage: smdebug workers PATH\n"
    "  Workers, one a line: `<worker>\\t<number of steps it wrote>`; then `expected workers: N`.\n";

inline int run_workers(Session& session, const Args& args) {
    using namespace smdebug;
    auto& trial = session.open_trial(the_path(args, workers_usage));
    for (const auto& [w, steps] : trial.worker_steps()) std::cout << printable(w) << "\t" << steps.size() << "\n";
    std::cout << "expected workers: " << trial.num_workers() << "\n";
    return ok;
}

inline constexpr const char* shapes_usage =
    "usage: smdebug shapes PATH NAME [--mode M] [--worker W]\n"
    "  The shape of tensor NAME at each step, one a line: `<step>\\t<shape>`.\n";

inline int run_shapes(Session& session, const Args& args) {
    using namespace smdebug;
    if (args.positional.size() != 2) throw usage_error(std::string("expected PATH and NAME\n") + shapes_usage);
    auto& trial = session.open_trial(args.positional[0]);
    const StepQuery q{mode_option(args), args.value("--worker")};
    auto t = trial.tensor(args.positional[1]);
    for (auto s : t.steps(q.mode)) {
        std::cout << s << "\t";
        try {
            std::cout << shape_text(t.shape(s, q)) << "\n";
        } catch (const ShapeUnavailableForStep&) {
            std::cout << "n/a\n";
        }
    }
    return ok;
}

}  // namespace cli
