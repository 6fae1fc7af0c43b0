#pragma once
// `smdebug export PATH --format F --out OUT [...]`: a trial in the formats other tools read —
// a long-form table (csv, jsonl) for pandas and DuckDB, one step's tensors (npz, safetensors) for
// numpy and safetensors, TensorBoard event files. Streams: memory stays bounded whatever the trial.
#include <string>
#include <vector>

#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "export/records.hpp"
#include "export/step_tensors.hpp"
#include "export/table.hpp"
#include "export/tensorboard_runs.hpp"
#include "format.hpp"
#include "session.hpp"

namespace cli {

inline constexpr const char* export_usage =
    "usage: smdebug export PATH --format csv|jsonl|npz|safetensors|tensorboard --out OUT [options]\n"
    "  csv, jsonl: the long-form table worker, mode, step, mode_step, tensor, reduction, value: a row per\n"
    "    reduction of each tensor at each step of each worker (pandas.read_csv, DuckDB read_csv_auto,\n"
    "    pandas.read_json(lines=True)). A stored reduction when the writer saved one, else computed\n"
    "    from the value. --out - writes to stdout.\n"
    "  npz, safetensors (need --step S: a global step, or a step of --mode M): every tensor's value at\n"
    "    that step, named as in the trial, saved by --worker W (default: the first by name that saved\n"
    "    it). safetensors has no string or complex types: those tensors are skipped with a note.\n"
    "  tensorboard (--out is a new or empty folder): a run per worker and mode, OUT/<worker>/<MODE>/;\n"
    "    the reductions as scalars tagged <tensor>/<reduction>, at the global step; --histograms REGEX\n"
    "    adds histograms of the values of the tensors it matches (default: none).\n"
    "  options: --reduction R (repeatable or comma-separated; default min,max,mean,l2), --abs\n"
    "    (reductions of absolute values, named abs_R), --tensor REGEX (only tensors whose name it\n"
    "    matches anywhere), --steps A:B (global steps A <= step < B; either end may be left out),\n"
    "    --mode M, --worker W.\n";

namespace export_detail {

inline std::vector<smdebug::Reduction> reductions_option(const Args& args) {
    std::vector<smdebug::Reduction> out;
    for (const auto& [name, value] : args.options) {
        if (name != "--reduction" || !value) continue;
        std::size_t start = 0;
        while (start <= value->size()) {
            const auto comma = std::min(value->find(',', start), value->size());
            const auto one = value->substr(start, comma - start);
            const auto r = smdebug::parse_reduction(one);
            if (!r) throw usage_error("unknown reduction '" + one + "' (min, max, mean, std, variance, sum, prod, l1, l2)");
            if (std::find(out.begin(), out.end(), *r) == out.end()) out.push_back(*r);
            start = comma + 1;
        }
    }
    if (out.empty()) out = {smdebug::Reduction::min, smdebug::Reduction::max, smdebug::Reduction::mean, smdebug::Reduction::l2};
    return out;
}

}  // namespace export_detail

inline int run_export(Session& session, const Args& args) {
    using namespace smdebug;
    const auto path = the_path(args, export_usage);
    const auto format = args.value("--format");
    if (!format) throw usage_error("export needs --format (csv, jsonl, npz, safetensors or tensorboard)");
    const bool table = *format == "csv" || *format == "jsonl", one_step = *format == "npz" || *format == "safetensors";
    if (!table && !one_step && *format != "tensorboard")
        throw usage_error("unknown --format '" + *format + "' (csv, jsonl, npz, safetensors or tensorboard)");
    const auto out = args.value("--out");
    if (!out || out->empty()) throw usage_error("export needs --out OUT");
    if (*out == "-" && !table) throw usage_error("--out - (stdout) is for csv and jsonl only");
    const auto step = args.value("--step");
    if (one_step && !step) throw usage_error("--format " + *format + " needs --step S");
    if (!one_step && step) throw usage_error("--step is for npz and safetensors (--steps A:B selects steps)");
    const auto& range = session.steps();  // --steps, taken out of the arguments by main for every command
    if (one_step && (range.begin || range.end)) throw usage_error("--steps is not for npz and safetensors (one --step S)");
    if (*format != "tensorboard" && args.value("--histograms")) throw usage_error("--histograms is for --format tensorboard");
    exporting::Selection sel;
    if (const auto re = args.value("--tensor")) sel.tensor = exporting::tensor_regex(*re);
    if (args.value("--mode")) sel.mode = mode_option(args);
    sel.worker = args.value("--worker");
    sel.first_step = range.begin;
    sel.end_step = range.end;
    sel.reductions = export_detail::reductions_option(args);
    sel.abs = args.has("--abs");
    sel.note = [&session](std::string_view text) { session.print_error(text); };
    std::optional<detail::CompiledRegex> histograms;
    if (const auto re = args.value("--histograms")) histograms = exporting::tensor_regex(*re);
    const std::int64_t step_number = step ? parse_int(*step, "--step") : 0;
    auto& trial = session.open_trial(path);
    std::size_t bad = 0;
    if (table) bad = exporting::export_table(trial, sel, *format == "jsonl", *out);
    else if (*format == "npz") exporting::export_npz(trial, sel, step_number, *out);
    else if (*format == "safetensors") exporting::export_safetensors(trial, sel, step_number, *out);
    else bad = exporting::export_tensorboard(trial, sel, histograms, *out);
    if (*out != "-")
        print_written(*out, *format + (one_step ? " of step " + std::to_string(step_number) : std::string()) +
                                (bad ? ", " + plural(bad, "bad record") + " left out" : std::string()));
    return bad ? bad_data : ok;
}

}  // namespace cli
