#pragma once
// `smdebug report PATH --out report.html [--reduction R] [--max-tensors N]`: one self-contained
// HTML page (inline SVG and CSS, no network) with the trial summary, per-mode step timelines,
// worker completeness, a chart per collection of its tensors' reduction over steps, and the
// findings of whatever rules were registered (report/findings.hpp).
#include <iostream>

#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "escape.hpp"
#include "format.hpp"
#include "findings_text.hpp"
#include "plot.hpp"
#include "plot/timeline.hpp"
#include "report/findings.hpp"
#include "report/html.hpp"
#include "rule_spec.hpp"
#include "session.hpp"
#include "summary.hpp"
#include "terminal.hpp"

namespace cli {

inline constexpr const char* report_usage =
    "usage: smdebug report PATH --out FILE.html [--reduction R] [--abs] [--max-tensors N] [--rule NAME[:k=v,...]]...\n"
    "  One self-contained HTML page: summary, step timeline per mode, worker completeness, one chart\n"
    "  per collection of its tensors' reduction R (default mean) over global steps (at most N\n"
    "  tensors each, default 10), and the findings of the --rule rules (repeatable, as `smdebug\n"
    "  monitor --rule` takes them; default ExplodingTensor and VanishingGradient).\n";

inline int run_report(Session& session, const Args& args, const report::FindingsSource& rules) {
    using namespace smdebug;
    const auto path = the_path(args, report_usage);
    const auto out = args.value("--out");
    if (!out) throw usage_error(std::string("report needs --out FILE.html\n") + report_usage);
    const auto r = reduction_option(args, "--reduction", "mean");
    const bool abs = args.has("--abs");
    const auto max_tensors = args.value("--max-tensors") ? parse_int(*args.value("--max-tensors"), "--max-tensors") : 10;
    if (max_tensors < 1) throw usage_error("--max-tensors must be at least 1");
    std::vector<std::string> requested_rules;
    for (const auto& [name, value] : args.options)
        if (name == "--rule") {
            (void)monitor::parse_rule_spec(*value);  // an unknown rule or parameter before the trial is read
            requested_rules.push_back(*value);
        }
    auto& trial = session.open_trial(path);

    const auto names = naturally_sorted(trial.tensor_names());
    const auto steps = trial.steps(Mode::GLOBAL, true);
    const auto workers = trial.workers();
    int bad = 0;
    Progress progress("building report", names.size());

    report::HtmlPage page("smdebug trial report: " + trial.path());
    page.heading("Summary", 2, "summary");
    std::vector<std::vector<std::string>> facts = {
        {"property", "value"},
        {"path", trial.path()},
        {"workers", std::to_string(workers.size()) + " of " + std::to_string(trial.num_workers()) + " expected"},
        {"training ended", trial.loaded_all_steps() ? "yes" : "no"},
        {"steps", std::to_string(steps.size()) + (steps.empty() ? "" : " (global " + std::to_string(steps.front()) + ".." + std::to_string(steps.back()) + ")")},
        {"tensors", std::to_string(names.size())},
        {"collections", std::to_string(trial.collections().size())}};
    for (Mode m : trial.modes()) {
        const auto ms = trial.steps(m);
        facts.push_back({std::string(mode_name(m)) + " steps",
                         std::to_string(ms.size()) + (ms.empty() ? "" : " (" + std::to_string(ms.front()) + ".." + std::to_string(ms.back()) + ")")});
    }
    page.table(facts);
    std::vector<std::vector<std::string>> tensor_rows = {{"tensor", "dtype", "shape", "steps"}};
    for (const auto& name : names) {
        const auto s = summarize_tensor(session, trial, name, bad);
        tensor_rows.push_back({s.name, s.dtype, s.shape, std::to_string(s.steps)});
        progress.advance();
    }
    page.table(tensor_rows);

    page.heading("Steps per mode", 2, "timeline");
    std::vector<plot::TimelineRow> rows;
    for (Mode m : trial.modes()) {
        plot::TimelineRow row{std::string(mode_name(m)), {}};
        for (auto s : trial.steps(m, true))
            if (const auto g = trial.global_step(m, s)) row.steps.push_back(static_cast<double>(*g));
        rows.push_back(std::move(row));
    }
    page.figure(plot::render_timeline("Global steps of each mode", rows, false));

    page.heading("Worker completeness", 2, "workers");
    std::map<std::string, std::set<std::int64_t>> cells;
    for (const auto& w : workers) cells[w];
    for (const auto& [w, steps] : trial.worker_steps()) cells[w].insert(steps.begin(), steps.end());
    page.figure(plot::render_completeness(steps, cells, false));

    const std::string rname = std::string(abs ? "abs_" : "") + std::string(reduction_name(r));
    std::size_t charts = 0, finding_count = 0;
    page.heading("Collections: " + rname + " over steps", 2, "collections");
    for (const auto& [cname, c] : trial.collections()) {
        const auto members = naturally_sorted(trial.tensor_names(TensorNamesQuery{.collection = cname}));
        if (members.empty()) {
            page.paragraph("Collection " + cname + ": no saved tensors.", "note");
            continue;
        }
        const std::size_t shown = std::min(members.size(), static_cast<std::size_t>(max_tensors));
        const std::vector<std::string> first(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(shown));
        const auto series = reduction_series(trial, first, r, abs, Mode::GLOBAL);
        if (series.empty()) {
            page.paragraph("Collection " + cname + ": no " + rname + " at any step (" + std::to_string(members.size()) + " tensor(s)).", "note");
            continue;
        }
        plot::LineChartSpec spec;
        spec.title = "collection " + cname + ": " + rname;
        spec.x_label = "global step";
        spec.y_label = rname;
        page.figure(plot::render_line_chart(spec, series, false));
        ++charts;
        if (shown < members.size())
            page.paragraph("Showing " + std::to_string(shown) + " of " + std::to_string(members.size()) + " tensors (--max-tensors).", "note");
    }

    page.heading("Rule findings", 2, "rules");
    if (!rules) {
        page.paragraph("No rules were run for this report (no rules module was given to the report).", "note");
    } else {
        std::vector<std::string> run;
        // Grouped by rule, one row per step listing its tensors (issue 53 item 5), each rule's first
        // firing as its headline, with the mode and mode step beside the global step (findings_text.hpp).
        std::vector<findings::StepRow> rows;
        const auto results = rules(trial, requested_rules);
        for (const auto& r : results.rules_run)  // "ExplodingTensor (checked 19 tensors)"
            run.push_back(r.rule + " (checked " + plural(r.checked_tensors, "tensor") + ")");
        finding_count += results.findings.size();
        for (const auto& f : results.findings) findings::add(rows, f.rule, f.step, f.tensor, f.message, f.mode, f.mode_step);
        std::string list;
        for (const auto& r_ : run) list += (list.empty() ? "" : ", ") + r_;
        page.paragraph("Rules run: " + (list.empty() ? std::string("none") : list) + ".");
        if (rows.empty()) {
            page.paragraph("No rule found anything.");
        } else {
            for (const auto& h : findings::headlines(rows))
                page.paragraph(h.first->rule + ": " + findings::first_fired(*h.first) + "; fired at " + plural(h.steps, "step"));
            std::vector<std::vector<std::string>> table = {{"rule", "step", "tensors", "finding"}};
            for (const auto& r : rows)
                table.push_back({r.rule, findings::step_text(r), findings::tensors_text(r, 8),
                                 r.messages.front() + (r.messages.size() > 1 ? " (+" + std::to_string(r.messages.size() - 1) + " more)" : "")});
            page.table(table);
        }
    }
    progress.finish();
    const auto html = page.str();
    write_file(*out, html);
    std::cerr << "wrote " << printable(*out) << " (" << human_bytes(html.size()) << "): " << plural(names.size(), "tensor") << ", "
              << plural(charts, "chart") << ", " << plural(finding_count, "rule finding") << "\n";
    return bad ? bad_data : ok;
}

}  // namespace cli
