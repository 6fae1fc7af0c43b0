#pragma once
// `smdebug plot PATH --tensor REGEX ... --out FILE.svg` (reductions over steps, one line per
// matching tensor) and `smdebug plot PATH --hist NAME --step S --out FILE.svg` (a histogram).
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <smdebug/core/regex.hpp>
#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "output_file.hpp"
#include "plot/histogram.hpp"
#include "plot/line_chart.hpp"
#include "reductions.hpp"
#include "session.hpp"
#include "terminal.hpp"

namespace cli {

inline constexpr const char* plot_usage =
    "usage: smdebug plot PATH --tensor REGEX [--reduction R] [--abs] [--mode M] [--log] --out FILE.svg\n"
    "       smdebug plot PATH --hist NAME --step S [--mode M] [--bins N] --out FILE.svg\n"
    "  --tensor: one line per tensor whose name matches REGEX and mode, its reduction R (default mean)\n"
    "  over the global steps, a line for each mode (labelled); --mode M: that mode's steps on the x\n"
    "  axis. --log: logarithmic y axis (decades, minor ticks). Values far from the rest are clipped\n"
    "  to the edge, with a note; dots mark the points when a line has at most 60.\n"
    "  --hist: a histogram of the elements of tensor NAME at step S (default 30 bins).\n";

// One series per tensor and mode: its reduction at each step (of `mode`; for GLOBAL, at the
// global steps, a series for each mode the steps belong to, so that TRAIN, EVAL and PREDICT never
// share a line). When the series hold more than one mode, each label ends with " (MODE)".
template <class TrialT>
std::vector<plot::Series> reduction_series(TrialT& trial, const std::vector<std::string>& names, smdebug::Reduction r, bool abs,
                                           smdebug::Mode mode, Progress* progress = nullptr) {
    using smdebug::Mode;
    std::vector<std::pair<Mode, plot::Series>> out;
    const smdebug::StepQuery q{mode, std::nullopt};
    std::vector<smdebug::ValueRequest> requests;
    std::set<Mode> modes;
    for (const auto& name : names) {
        std::map<Mode, plot::Series> by_mode;
        // One Trial::read per tensor: its records in one pass over each event file.
        requests.clear();
        for (auto step : trial.tensor(name).steps(mode))
            requests.push_back({name, step, q, smdebug::ReductionSpec{std::string(smdebug::reduction_name(r)), abs}});
        const auto results = trial.read(requests);
        for (std::size_t i = 0; i < results.size(); ++i) {
            const auto v = reduction_or_none(results[i]);
            if (!v) continue;
            Mode m = mode;
            if (mode == Mode::GLOBAL)
                if (const auto mm = trial.mode_modestep(requests[i].step)) m = mm->first;
            auto& s = by_mode[m];
            s.label = name;
            s.points.emplace_back(static_cast<double>(requests[i].step), *v);
        }
        for (Mode m : {Mode::TRAIN, Mode::EVAL, Mode::PREDICT, Mode::GLOBAL})
            if (const auto it = by_mode.find(m); it != by_mode.end()) {
                modes.insert(m);
                out.emplace_back(m, std::move(it->second));
            }
        if (progress) progress->advance();
    }
    std::vector<plot::Series> series;
    for (auto& [m, s] : out) {
        if (modes.size() > 1) s.label += " (" + std::string(smdebug::mode_name(m)) + ")";
        series.push_back(std::move(s));
    }
    return series;
}

// Elements of a numeric value as doubles (complex: magnitudes; strings have none).
inline std::vector<double> as_doubles(const smdebug::TensorValue& v) {
    std::vector<double> out;
    if (v.is_string()) return out;
    smdebug::visit_dtype(v.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (const auto& x : v.elements<T>()) {
            if constexpr (requires { std::abs(x); x.real(); }) out.push_back(static_cast<double>(std::abs(x)));
            else if constexpr (std::is_same_v<T, smdebug::float16>) out.push_back(static_cast<double>(static_cast<float>(x)));
            else out.push_back(static_cast<double>(x));
        }
    });
    return out;
}

inline int run_plot(Session& session, const Args& args) {
    using namespace smdebug;
    const auto path = the_path(args, plot_usage);
    const auto out = args.value("--out");
    if (!out) throw usage_error(std::string("plot needs --out FILE.svg\n") + plot_usage);
    const auto regex = args.value("--tensor");
    const auto hist = args.value("--hist");
    if (regex.has_value() == hist.has_value()) throw usage_error(std::string("plot needs one of --tensor or --hist\n") + plot_usage);
    const Mode mode = mode_option(args);
    auto& trial = session.open_trial(path);
    if (hist) {
        const auto step_text = args.value("--step");
        if (!step_text) throw usage_error("--hist needs --step S");
        const auto step = parse_int(*step_text, "--step");
        const auto bins = args.value("--bins") ? parse_int(*args.value("--bins"), "--bins") : 30;
        if (bins < 1 || bins > 10000) throw usage_error("--bins must be between 1 and 10000");
        const auto v = trial.tensor(*hist).value(step, StepQuery{mode, std::nullopt});
        if (v.is_string()) throw usage_error("tensor " + *hist + " holds strings: no histogram");
        const auto h = plot::make_histogram(as_doubles(v), static_cast<std::size_t>(bins));
        plot::HistogramSpec spec;
        spec.title = *hist + " at " + (mode == Mode::GLOBAL ? "step " : std::string(mode_name(mode)) + " step ") + std::to_string(step) +
                     " (" + std::to_string(v.size()) + " elements)";
        write_file(*out, plot::render_histogram(spec, h));
        print_written(*out, "histogram of " + *hist + ", " + plural(v.size(), "element") + " in " + plural(static_cast<std::size_t>(bins), "bin"));
        return ok;
    }
    const auto r = reduction_option(args, "--reduction", "mean");
    const bool abs = args.has("--abs");
    std::vector<std::string> names;
    try {
        names = naturally_sorted(trial.tensor_names(TensorNamesQuery{.regex = {*regex}}));
    } catch (const SMDebugValueError& e) {  // a pattern outside the limits, or invalid
        throw usage_error(std::string("bad --tensor regex: ") + e.what());
    }
    if (names.empty()) throw usage_error("no tensor matches '" + *regex + "' in " + trial.path());
    Progress progress("reducing tensors", names.size());
    const auto series = reduction_series(trial, names, r, abs, mode, &progress);
    progress.finish();
    if (series.empty()) throw usage_error("no tensor matching '" + *regex + "' has a " + std::string(reduction_name(r)) + " at any step");
    plot::LineChartSpec spec;
    const std::string rname = std::string(abs ? "abs_" : "") + std::string(reduction_name(r));
    spec.title = rname + " of /" + *regex + "/ over steps";
    spec.x_label = mode == Mode::GLOBAL ? "global step" : std::string(mode_name(mode)) + " step";
    spec.y_label = rname;
    spec.log_y = args.has("--log");
    write_file(*out, plot::render_line_chart(spec, series));
    std::size_t points = 0;
    for (const auto& one : series) points += one.points.size();
    print_written(*out, rname + " of " + plural(series.size(), "series", "series") + ", " + plural(points, "point"));
    return ok;
}

}  // namespace cli
