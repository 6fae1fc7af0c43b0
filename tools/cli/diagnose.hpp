#pragma once
// `smdebug diagnose PATH [--json]`: where training went wrong (smdebug/analysis/diagnose.hpp;
// docs/diagnose.md). Exit 1 when something is wrong (a non-finite value, a rule finding, a bad
// record), 0 when the run is clean, 2 on a usage error or an unreadable trial.
#include <cstdio>
#include <iostream>
#include <string>

#include <smdebug/analysis/diagnose.hpp>
#include <smdebug/analysis/json.hpp>
#include <smdebug/smdebug.hpp>

#include "../serve/analysis_json.hpp"
#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "session.hpp"
#include "terminal.hpp"

namespace cli {

inline constexpr const char* diagnose_usage =
    "usage: smdebug diagnose PATH [--json]\n"
    "  Says where training went wrong: the first step holding a non-finite value (per worker, with its\n"
    "  mode and mode step), the first tensor of that step in compute order and its verdict (a module output\n"
    "  whose inputs were finite, a weight already non-finite, a gradient, the loss), then the earliest\n"
    "  finding of each built-in rule that runs without parameters, one line each. A job still writing is\n"
    "  answered for its complete steps. --json prints the same as one JSON object (docs/diagnose.md).\n"
    "  Exit codes: 0 clean, 1 something is wrong, 2 usage error or unreadable trial.\n";

inline std::string mode_and_step(std::int64_t step, std::string_view mode, std::int64_t mode_step) {
    std::string out = "step " + std::to_string(step);
    if (!mode.empty() && mode_step >= 0) out += " (" + std::string(mode) + " step " + std::to_string(mode_step) + ")";
    return out;
}

inline int run_diagnose(Session& session, const Args& args) {
    using namespace smdebug;
    const auto path = the_path(args, diagnose_usage);
    auto& trial = session.open_trial(path);
    const auto d = analysis::diagnose(trial);
    if (args.has("--json")) {
        std::cout << boost::json::serialize(analysis::to_json(d)) << "\n";
        return d.wrong() ? bad_data : ok;
    }
    std::cout << "trial " << path << ": " << plural(d.steps_checked, "step") << ", " << d.records_checked
              << " values checked" << (d.partial ? " (still being written: the steps complete so far, through step " +
                                                        std::to_string(d.last_complete_step) + ")"
                                                  : std::string())
              << "\n";
    if (d.first_nonfinite) {
        const auto& f = *d.first_nonfinite;
        std::cout << paint("first non-finite value: " + mode_and_step(f.step, mode_name(f.mode), f.mode_step) + ", worker " + f.worker +
                               ", tensor " + f.tensor + " (" + f.value + " at element " + std::to_string(f.element) + ")",
                           Colour::red)
                  << "\n";
        std::cout << "  verdict: " << f.verdict << "\n";
        for (const auto& [name, finite] : f.inputs) std::cout << "  input " << name << ": " << (finite ? "finite" : "non-finite") << "\n";
        if (f.nonfinite_tensors.size() > 1) {
            std::cout << "  non-finite at that step, in compute order (" << f.nonfinite_tensors.size() << "):";
            for (std::size_t i = 0; i < f.nonfinite_tensors.size() && i < 8; ++i) std::cout << (i ? ", " : " ") << f.nonfinite_tensors[i];
            if (f.nonfinite_tensors.size() > 8) std::cout << ", ...";
            std::cout << "\n";
        }
        for (const auto& w : d.workers)
            if (w.worker != f.worker)
                std::cout << "  worker " << w.worker << ": first non-finite at " << mode_and_step(w.step, mode_name(w.mode), w.mode_step) << ", tensor "
                          << w.tensor << "\n";
    } else {
        std::cout << paint("no non-finite value", Colour::green) << "\n";
    }
    for (const auto& f : d.findings)
        std::cout << f.rule << ": first fired at " << mode_and_step(f.step, f.mode, f.mode_step) << ": " << f.finding
                  << (f.tensors > 1 ? " (and " + plural(f.tensors - 1, "more tensor", "more tensors") + ")" : std::string())
                  << "\n";
    std::cout << "rules checked: " << d.rules_checked.size() << ", fired: " << d.findings.size() << "\n";
    for (const auto& [rule, why] : d.rules_skipped) std::cout << rule << ": could not run: " << why << "\n";
    for (const auto& [rule, note] : d.rule_notes) std::cout << rule << ": " << note << "\n";
    for (const auto& e : d.bad_record_errors) session.print_error("bad data: " + e);
    if (d.bad_records) std::cout << paint("bad records " + std::to_string(d.bad_records), Colour::red) << "\n";
    return d.wrong() ? bad_data : ok;
}

// tools/serve/analysis_json.hpp (`smdebug serve`'s /api/v1/diagnose); not inline: defined once, in
// main.cpp's translation unit, the only one that includes this header.
std::string diagnose_json(smdebug::Trial<smdebug::AnyStore>& trial) {
    return boost::json::serialize(smdebug::analysis::to_json(smdebug::analysis::diagnose(trial)));
}

}  // namespace cli
