#pragma once
// `smdebug diff PATH OTHER_PATH [--rtol R] [--atol A] [--json]`: where two runs part
// (smdebug/analysis/diff.hpp; docs/diagnose.md). Exit 0 when every tensor both runs saved agrees,
// 1 when they differ, 2 when they share no mode, step or tensor (one line), or on a usage error.
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include <smdebug/analysis/diff.hpp>
#include <smdebug/analysis/json.hpp>
#include <smdebug/smdebug.hpp>

#include "../serve/analysis_json.hpp"
#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "session.hpp"
#include "terminal.hpp"

namespace cli {

inline constexpr const char* diff_usage =
    "usage: smdebug diff PATH OTHER_PATH [--rtol R] [--atol A] [--json]\n"
    "  Says where two runs, A at PATH and B at OTHER_PATH, part: steps aligned by mode and mode step, every tensor both runs saved compared\n"
    "  (bitwise by default; with --rtol/--atol, |a-b| <= atol + rtol*|a|), then the first step and the\n"
    "  first tensor in compute order that differ, by how much (max |a-b|, relative), how many values and\n"
    "  tensors differ from then on, and the tensors and steps one run has and the other lacks. A job still\n"
    "  writing is compared over its complete steps. --json prints one JSON object (docs/diagnose.md).\n"
    "  Exit codes: 0 the same, 1 they differ, 2 nothing shared (no mode, step or tensor), usage error.\n";

inline double tolerance_option(const Args& args, const std::string& name) {
    const auto v = args.value(name);
    if (!v) return 0;
    try {
        std::size_t used = 0;
        const double x = std::stod(*v, &used);
        if (used != v->size() || !std::isfinite(x) || x < 0) throw std::invalid_argument(name);
        return x;
    } catch (const std::exception&) {
        throw usage_error(name + " must be a number >= 0, not '" + *v + "'");
    }
}

inline std::string number_text(double v) { return std::isfinite(v) ? smdebug::text::format_double(v) : "inf"; }

inline int run_diff(Session& session, const Args& args) {
    using namespace smdebug;
    if (args.positional.size() != 2) throw usage_error(std::string("expected PATH and OTHER_PATH\n") + diff_usage);
    analysis::Tolerance tol{tolerance_option(args, "--rtol"), tolerance_option(args, "--atol")};
    auto& a = session.open_trial(args.positional[0]);
    auto options = session.trial_options();
    options.name = default_trial_name(args.positional[1]);
    Trial<AnyStore> b(session.checked_store(args.positional[1]), options);
    const auto r = analysis::diff(a, b, tol);
    if (args.has("--json")) {
        std::cout << boost::json::serialize(analysis::to_json(r)) << "\n";
        return !r.nothing_shared.empty() ? usage : r.differ() ? bad_data : ok;
    }
    if (!r.nothing_shared.empty()) {
        session.print_error(r.nothing_shared + ": nothing to compare");
        return usage;
    }
    const std::string how = tol.exact() ? "bitwise" : "within rtol " + number_text(tol.rtol) + ", atol " + number_text(tol.atol);
    std::cout << "compared " << r.compared_values << " values at " << plural(r.compared_steps, "step") << " (" << how << ")"
              << (r.partial ? "; a run is still being written: the steps complete so far" : "") << "\n";
    if (r.first_difference) {
        const auto& d = *r.first_difference;
        std::cout << paint("runs part at step " + std::to_string(d.step) + " (" + std::string(mode_name(d.mode)) + " step " + std::to_string(d.mode_step) +
                               (d.step_b != d.step ? "; step " + std::to_string(d.step_b) + " of run B" : std::string()) + "), tensor " + d.tensor,
                           Colour::red)
                  << "\n";
        if (d.reason.empty()) std::cout << "  max |a-b| " << number_text(d.max_abs) << ", max relative " << number_text(d.max_rel) << "\n";
        else std::cout << "  " << d.reason << "\n";
        if (r.first_step_differences.size() > 1) {
            std::cout << "  differing at that step, in compute order (" << r.first_step_differences.size() << "):";
            for (std::size_t i = 0; i < r.first_step_differences.size() && i < 8; ++i) std::cout << (i ? ", " : " ") << r.first_step_differences[i].tensor;
            if (r.first_step_differences.size() > 8) std::cout << ", ...";
            std::cout << "\n";
        }
        std::cout << "from then on: " << plural(r.differing_values, "differing value") << " of "
                  << plural(r.differing_tensors, "tensor") << " at " << plural(r.differing_steps, "step") << "\n";
    } else {
        std::cout << paint("no difference", Colour::green) << "\n";
    }
    auto only = [](const char* run, const analysis::RunOnly& o) {
        if (!o.tensors.empty()) {
            std::cout << "only in " << run << ": " << plural(o.tensors.size(), "tensor") << ":";
            for (std::size_t i = 0; i < o.tensors.size() && i < 8; ++i) std::cout << (i ? ", " : " ") << o.tensors[i];
            std::cout << (o.tensors.size() > 8 ? ", ...\n" : "\n");
        }
        if (!o.steps.empty()) {
            std::cout << "only in " << run << ": " << plural(o.steps.size(), "step") << ":";
            for (std::size_t i = 0; i < o.steps.size() && i < 8; ++i)
                std::cout << (i ? ", " : " ") << mode_name(o.steps[i].mode) << " " << o.steps[i].mode_step;
            std::cout << (o.steps.size() > 8 ? ", ...\n" : "\n");
        }
    };
    only("A", r.only_in_a);
    only("B", r.only_in_b);
    return r.differ() ? bad_data : ok;
}

// tools/serve/analysis_json.hpp (`smdebug serve`'s /api/v1/diff); defined once, in main.cpp's
// translation unit.
std::string diff_json(smdebug::Trial<smdebug::AnyStore>& a, smdebug::Trial<smdebug::AnyStore>& b, double rtol, double atol) {
    return boost::json::serialize(smdebug::analysis::to_json(smdebug::analysis::diff(a, b, {rtol, atol})));
}

}  // namespace cli
