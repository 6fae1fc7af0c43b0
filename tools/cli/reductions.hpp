#pragma once
// `smdebug reductions PATH NAME [--reduction R] [--abs] [--mode M] [--worker W] [--precise] [--json]`:
// a table with a row per step (the steps of each mode together, labelled) and a column per reduction.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "escape.hpp"
#include "format.hpp"
#include "session.hpp"
#include "terminal.hpp"
#include "unknown_tensor.hpp"

namespace cli {

inline constexpr const char* reductions_usage =
    "usage: smdebug reductions PATH NAME [--reduction R] [--abs] [--mode M] [--worker W] [--precise] [--json]\n"
    "  Reductions of tensor NAME over its steps: aligned columns `step mode mode_step <reduction>...`,\n"
    "  a row per step, the steps of each mode together (all nine reductions by default: min max mean\n"
    "  std variance sum prod l1 l2). A stored reduction is used when the writer saved one, else it is\n"
    "  computed from the value; `n/a` when neither exists. --abs reduces absolute values. Numbers show\n"
    "  6 significant digits; --precise the shortest exact form; --json one object with every value.\n";

// A batched reduction's answer (Trial::read), or nothing when the step has neither the value nor
// that stored reduction, or the dtype has no reductions (complex, strings), or the tensor is
// empty. Any other error is rethrown.
inline std::optional<double> reduction_or_none(const smdebug::ValueResult& r) {
    if (!r.error) return r.reduced;
    try {
        std::rethrow_exception(r.error);
    } catch (const smdebug::TensorUnavailableForStep&) {
    } catch (const smdebug::SMDebugTypeError&) {
    } catch (const smdebug::SMDebugValueError&) {
    }
    return std::nullopt;
}

// A table for a terminal: columns padded to their widest cell, numbers right-aligned, two
// spaces between columns.
inline void print_table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right_aligned) {
    std::vector<std::size_t> width;
    for (const auto& row : rows)
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (width.size() <= c) width.push_back(0);
            width[c] = std::max(width[c], printable(row[c]).size());
        }
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            const auto cell = printable(row[c]);
            const std::string pad(width[c] - cell.size(), ' ');
            const bool right = c < right_aligned.size() && right_aligned[c];
            const bool last = c + 1 == row.size();
            line += right ? pad + cell : cell + (last ? "" : pad);
            if (!last) line += "  ";
        }
        std::cout << line << "\n";
    }
}

// A number for a terminal: 6 significant digits (as numpy prints), the shortest exact form with --precise.
inline std::string table_number(double v, bool precise) {
    if (precise || !std::isfinite(v)) return format_double(v);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

inline int run_reductions(Session& session, const Args& args) {
    using namespace smdebug;
    if (args.positional.size() != 2) throw usage_error(std::string("expected PATH and NAME\n") + reductions_usage);
    std::vector<Reduction> which;
    if (args.value("--reduction")) which.push_back(reduction_option(args, "--reduction", "mean"));
    else for (int i = 0; i <= static_cast<int>(Reduction::l2); ++i) which.push_back(static_cast<Reduction>(i));
    const bool abs = args.has("--abs"), json = args.has("--json"), precise = args.has("--precise");
    const StepQuery q{mode_option(args), args.value("--worker")};
    auto& trial = session.open_trial(args.positional[0]);
    const std::string& name = args.positional[1];
    require_tensor(trial, name);
    const auto steps = trial.tensor(name).steps(q.mode);
    std::vector<std::vector<std::optional<double>>> values(steps.size());  // [step][reduction]
    {
        // Every reduction of a run of steps is one Trial::read: a step's record is fetched once
        // (one ranged GET per event file on S3), not once per reduction.
        constexpr std::size_t steps_per_read = 256;
        Progress progress("reducing", steps.size());
        std::vector<ValueRequest> requests;
        for (std::size_t first = 0; first < steps.size(); first += steps_per_read) {
            const std::size_t last = std::min(steps.size(), first + steps_per_read);
            requests.clear();
            for (std::size_t k = first; k < last; ++k)
                for (Reduction r : which) requests.push_back({name, steps[k], q, ReductionSpec{std::string(reduction_name(r)), abs}});
            const auto results = trial.read(requests);
            for (std::size_t j = 0; j < results.size(); ++j) values[first + j / which.size()].push_back(reduction_or_none(results[j]));
            for (std::size_t k = first; k < last; ++k) progress.advance();
        }
    }
    // Rows: the steps of each mode together (TRAIN, EVAL, PREDICT, then steps of no mode), each
    // with its global step, mode and mode step.
    struct Row {
        std::size_t at;
        Mode mode;
        std::optional<std::int64_t> global, mode_step;
    };
    std::vector<Row> rows;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        if (q.mode != Mode::GLOBAL) {
            rows.push_back({k, q.mode, trial.global_step(q.mode, steps[k]), steps[k]});
            continue;
        }
        const auto mm = trial.mode_modestep(steps[k]);
        rows.push_back({k, mm ? mm->first : Mode::GLOBAL, steps[k], mm ? mm->second : steps[k]});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return mode_index(a.mode) < mode_index(b.mode); });
    const auto column = [&](Reduction r) { return std::string(abs ? "abs_" : "") + std::string(reduction_name(r)); };
    const auto step_text = [](const std::optional<std::int64_t>& s) { return s ? std::to_string(*s) : std::string("-"); };
    if (json) {
        std::string o = "{\"tensor\":" + json_string(name) + ",\"rows\":[";
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto& row = rows[i];
            o += std::string(i ? "," : "") + "{\"step\":" + (row.global ? std::to_string(*row.global) : "null") + ",\"mode\":" +
                 json_string(mode_name(row.mode)) + ",\"mode_step\":" + (row.mode_step ? std::to_string(*row.mode_step) : "null");
            for (std::size_t c = 0; c < which.size(); ++c) {
                const auto& v = values[row.at][c];
                o += "," + json_string(column(which[c])) + ":" + (v ? json_number(*v) : "null");
            }
            o += "}";
        }
        std::cout << o << "]}\n";
        return ok;
    }
    std::vector<std::vector<std::string>> table = {{"step", "mode", "mode_step"}};
    std::vector<bool> right = {true, false, true};
    for (Reduction r : which) table[0].push_back(column(r)), right.push_back(true);
    for (const auto& row : rows) {
        std::vector<std::string> cells = {step_text(row.global), std::string(mode_name(row.mode)), step_text(row.mode_step)};
        for (const auto& v : values[row.at]) cells.push_back(v ? table_number(*v, precise) : "n/a");
        table.push_back(std::move(cells));
    }
    print_table(table, right);
    return ok;
}

}  // namespace cli
