#pragma once
// `smdebug summary PATH [--json]`: workers, modes, step ranges, collections and a table of tensors.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/step_listing.hpp>
#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "escape.hpp"
#include "format.hpp"
#include "session.hpp"
#include "terminal.hpp"

namespace cli {

inline constexpr const char* summary_usage =
    "usage: smdebug summary PATH [--json] [--latest]\n"
    "  Workers, modes and their step ranges, collections, and one line per tensor (dtype, shape,\n"
    "  number of steps). --json prints the same as one JSON object. --latest: only the newest step\n"
    "  any worker wrote, found without listing the whole index (a search by step: O(log steps)\n"
    "  listings of one key), and only its index files read.\n";

struct TensorSummary {
    std::string name, dtype = "-", shape = "-";
    std::optional<smdebug::Shape> dims;  // the shape, when known
    std::size_t steps = 0;
};

// The global steps of a tensor in any mode, complete or not — Tensor::steps(Mode::GLOBAL, true)
// without a map lookup per step: a mode's steps and its mode step -> global step map are both
// ascending, so one walk over both maps them (a lookup each when the tensor has few of the steps).
inline std::vector<std::int64_t> global_steps_of(const smdebug::detail::StepIndex& index, const smdebug::detail::TensorData& t) {
    using namespace smdebug;
    std::vector<std::int64_t> out;
    for (Mode m : all_modes) {
        const auto& steps = t.steps[mode_index(m)];
        if (m == Mode::GLOBAL) {
            for (const auto& [ms, workers] : steps) out.push_back(ms);
            continue;
        }
        const auto& globals = index.mode_steps(m);
        const bool walk = steps.record_count() * 16 >= globals.size();
        auto it = globals.begin();
        for (const auto& [ms, workers] : steps) {
            if (walk)
                while (it != globals.end() && it->first < ms) ++it;
            else
                it = globals.lower_bound(ms);
            if (it != globals.end() && it->first == ms) out.push_back(it->second);
        }
    }
    if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// dtype and shape of a tensor from its first readable step (the record is checked, its values are
// not decoded: Tensor::info); counts bad records.
template <class TrialT>
TensorSummary summarize_tensor(const Session& session, TrialT& trial, const std::string& name, int& bad) {
    using namespace smdebug;
    auto t = trial.tensor(name);
    const auto ts = global_steps_of(trial.index(), *trial.index().find_tensor(name));
    TensorSummary out{name};
    out.steps = ts.size();
    for (auto s : ts) {
        try {
            const auto v = t.info(s);
            out.dtype = std::string(dtype_name(v.dtype));
            out.shape = shape_text(v.shape);
            out.dims = v.shape;
            break;
        } catch (const TensorUnavailableForStep&) {
            try {
                out.dims = t.shape(s);
                out.shape = shape_text(*out.dims);
            } catch (const SMDebugError&) {
            }
            out.dtype = "(reductions)";
        } catch (const StepNotYetAvailable&) {
            continue;
        } catch (const FormatError& e) {
            session.print_error(std::string("bad data: ") + e.what());
            ++bad;
            break;
        }
    }
    return out;
}

// A shape as a JSON list, as `dump` gives it ([] for a scalar); null when not known.
inline std::string json_shape(const std::optional<smdebug::Shape>& shape) {
    if (!shape) return "null";
    std::string o = "[";
    for (std::size_t i = 0; i < shape->size(); ++i) o += (i ? "," : "") + std::to_string((*shape)[i]);
    return o + "]";
}

inline int run_summary(Session& session, const Args& args) {
    using namespace smdebug;
    const auto& path = the_path(args, summary_usage);
    auto store = session.checked_store(path);
    if (args.has("--latest")) {
        const auto last = find_last_step(store);
        if (!last) throw usage_error("the trial has no index files yet: " + path);
        session.set_steps(StepRange{*last, *last + 1});
    }
    auto& trial = session.open_trial(std::move(store));
    const bool json = args.has("--json");
    std::vector<std::string> workers;  // the workers that wrote, as `smdebug workers` lists them
    for (const auto& [w, ws] : trial.worker_steps()) workers.push_back(w);
    std::vector<std::string> warnings;
    if (static_cast<std::size_t>(trial.num_workers()) != workers.size())
        warnings.push_back(plural(workers.size(), "worker") + " wrote index files, but the collections file says " +
                           std::to_string(trial.num_workers()) + ": steps count as complete by the collections file's number");
    const auto steps = trial.steps();
    const auto names = naturally_sorted(trial.tensor_names());
    int bad = 0;
    std::vector<TensorSummary> rows;
    {
        Progress progress("reading tensors", names.size());
        for (const auto& name : names) {
            rows.push_back(summarize_tensor(session, trial, name, bad));
            progress.advance();
        }
    }
    if (json) {
        std::string o = "{\"path\":" + json_string(trial.path()) + ",\"workers\":[";
        for (std::size_t i = 0; i < workers.size(); ++i) o += (i ? "," : "") + json_string(workers[i]);
        o += "],\"num_workers\":" + std::to_string(trial.num_workers()) + ",\"warnings\":[";
        for (std::size_t i = 0; i < warnings.size(); ++i) o += (i ? "," : "") + json_string(warnings[i]);
        o += "]";
        o += ",\"training_ended\":" + std::string(trial.loaded_all_steps() ? "true" : "false");
        o += ",\"num_steps\":" + std::to_string(steps.size());
        if (!steps.empty()) o += ",\"first_step\":" + std::to_string(steps.front()) + ",\"last_step\":" + std::to_string(steps.back());
        o += ",\"modes\":{";
        bool first = true;
        for (Mode m : trial.modes()) {
            const auto ms = trial.steps(m);
            o += (first ? "" : ",") + json_string(mode_name(m)) + ":{\"num_steps\":" + std::to_string(ms.size());
            if (!ms.empty()) o += ",\"first_step\":" + std::to_string(ms.front()) + ",\"last_step\":" + std::to_string(ms.back());
            o += "}";
            first = false;
        }
        o += "},\"collections\":[";
        first = true;
        for (const auto& [name, c] : trial.collections()) {
            o += (first ? "" : ",") + json_string(name);
            first = false;
        }
        o += "],\"tensors\":[";
        for (std::size_t i = 0; i < rows.size(); ++i)
            o += std::string(i ? "," : "") + "{\"name\":" + json_string(rows[i].name) + ",\"dtype\":" + json_string(rows[i].dtype) +
                 ",\"shape\":" + json_shape(rows[i].dims) + ",\"steps\":" + std::to_string(rows[i].steps) + "}";
        std::cout << o << "]}\n";
        return bad ? bad_data : ok;
    }
    std::cout << "trial      " << printable(trial.path()) << "\n";
    std::cout << "workers    " << workers.size() << ":";
    for (const auto& w : workers) std::cout << " " << printable(w);
    for (const auto& w : warnings) std::cout << "\n" << paint("warning    " + w, Colour::yellow);
    std::cout << "\nended      " << (trial.loaded_all_steps() ? "yes" : "no") << "\n";
    std::cout << "steps      " << steps.size();
    if (!steps.empty()) std::cout << " (global " << steps.front() << ".." << steps.back() << ")";
    std::cout << "\n";
    for (Mode m : trial.modes()) {
        const auto ms = trial.steps(m);
        std::cout << "  " << mode_name(m) << ": " << plural(ms.size(), "step");
        if (!ms.empty()) std::cout << " (" << ms.front() << ".." << ms.back() << ")";
        std::cout << "\n";
    }
    std::cout << "collections";
    for (const auto& [name, c] : trial.collections()) std::cout << " " << printable(name);
    std::cout << "\n\n";
    std::printf("%-48s %-12s %-18s %s\n", "tensor", "dtype", "shape", "steps");
    for (const auto& r : rows)
        std::printf("%-48s %-12s %-18s %zu\n", printable(r.name).c_str(), r.dtype.c_str(), r.shape.c_str(), r.steps);
    return bad ? bad_data : ok;
}

}  // namespace cli
