#pragma once
// `smdebug dump PATH [--json] [--values]`: everything a trial holds, as one JSON document for scripts.
#include <iostream>

#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "escape.hpp"
#include "session.hpp"
#include "terminal.hpp"
#include "value.hpp"

namespace cli {

inline constexpr const char* dump_usage =
    "usage: smdebug dump PATH [--json] [--values]\n"
    "  One JSON object: path, workers, training_ended, steps (global step, mode, mode step),\n"
    "  collections (include regexes, tensor names), and per tensor every saved step with its\n"
    "  workers, shape, dtype and stored reductions; --values adds every value (nested lists).\n"
    "  JSON is the only format: --json is accepted and changes nothing.\n";

inline int run_dump(Session& session, const Args& args) {
    using namespace smdebug;
    auto& trial = session.open_trial(the_path(args, dump_usage));
    const bool values = args.has("--values");
    int bad = 0;
    std::string o = "{\"path\":" + json_string(trial.path()) + ",\"num_workers\":" + std::to_string(trial.num_workers()) + ",\"workers\":[";
    const auto workers = trial.workers();
    for (std::size_t i = 0; i < workers.size(); ++i) o += (i ? "," : "") + json_string(workers[i]);
    o += "],\"training_ended\":" + std::string(trial.loaded_all_steps() ? "true" : "false") + ",\"steps\":[";
    bool first = true;
    for (auto g : trial.steps(Mode::GLOBAL, true)) {
        const auto mm = trial.mode_modestep(g);
        o += std::string(first ? "" : ",") + "{\"step\":" + std::to_string(g) + ",\"mode\":" +
             json_string(mode_name(mm ? mm->first : Mode::GLOBAL)) + ",\"mode_step\":" + std::to_string(mm ? mm->second : g) + "}";
        first = false;
    }
    o += "],\"collections\":{";
    first = true;
    for (const auto& [name, c] : trial.collections()) {
        o += std::string(first ? "" : ",") + json_string(name) + ":{\"include_regex\":[";
        for (std::size_t i = 0; i < c.include_regex.size(); ++i) o += (i ? "," : "") + json_string(c.include_regex[i]);
        o += "],\"tensor_names\":[";
        for (std::size_t i = 0; i < c.tensor_names.size(); ++i) o += (i ? "," : "") + json_string(c.tensor_names[i]);
        o += "]}";
        first = false;
    }
    o += "},\"tensors\":{";
    const auto names = trial.tensor_names();
    Progress progress("dumping tensors", names.size());
    first = true;
    for (const auto& name : names) {
        auto t = trial.tensor(name);
        o += std::string(first ? "" : ",") + json_string(name) + ":{\"steps\":[";
        first = false;
        bool first_step = true;
        for (Mode m : trial.modes()) {
            for (auto s : t.steps(m, true)) {
                const StepQuery q{m, std::nullopt};
                const auto g = trial.global_step(m, s);
                o += std::string(first_step ? "" : ",") + "{\"mode\":" + json_string(mode_name(m)) + ",\"mode_step\":" + std::to_string(s) +
                     ",\"step\":" + (g ? std::to_string(*g) : "null") + ",\"workers\":[";
                first_step = false;
                const auto ws = t.workers(s, m);
                for (std::size_t i = 0; i < ws.size(); ++i) o += (i ? "," : "") + json_string(ws[i]);
                o += "]";
                try {
                    o += ",\"shape\":[";
                    const auto shape = t.shape(s, q);
                    for (std::size_t i = 0; i < shape.size(); ++i) o += (i ? "," : "") + std::to_string(shape[i]);
                    o += "]";
                } catch (const ShapeUnavailableForStep&) {
                    o += "]";
                }
                try {
                    const auto reds = t.reduction_values(s, q);
                    o += ",\"stored_reductions\":{";
                    for (std::size_t i = 0; i < reds.size(); ++i)
                        o += (i ? "," : "") + json_string((reds[i].abs ? "abs_" : "") + reds[i].reduction) + ":" + json_number(reds[i].value);
                    o += "}";
                    try {
                        const auto v = t.value(s, q);
                        o += ",\"dtype\":" + json_string(dtype_name(v.dtype()));
                        if (values) o += ",\"value\":" + value_text(v, true);
                    } catch (const TensorUnavailableForStep&) {
                    }
                } catch (const StepNotYetAvailable&) {
                    o += ",\"pending\":true";
                } catch (const FormatError& e) {
                    session.print_error(std::string("bad data: ") + e.what());
                    o += ",\"error\":" + json_string(e.what());
                    ++bad;
                }
                o += "}";
            }
        }
        o += "]}";
        progress.advance();
    }
    progress.finish();
    std::cout << o << "}}\n";
    return bad ? bad_data : ok;
}

}  // namespace cli
