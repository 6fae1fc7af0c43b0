#pragma once
// Two small SVG charts of the report: the steps of each mode on a global-step axis (one row per
// mode, a tick per step), and worker completeness (one row per worker, a cell per step, filled
// where that worker wrote the step).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "axis.hpp"
#include "svg.hpp"

namespace cli::plot {

struct TimelineRow {
    std::string label;
    std::vector<double> steps;  // global steps
};

inline std::string render_timeline(const std::string& title, const std::vector<TimelineRow>& rows, bool standalone = true) {
    const double width = 900, row_h = 28, left = 110, right = width - 30, top = 40;
    const double height = top + row_h * static_cast<double>(std::max<std::size_t>(rows.size(), 1)) + 44;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& r : rows)
        for (double s : r.steps) lo = std::min(lo, s), hi = std::max(hi, s);
    if (lo > hi) lo = 0, hi = 1;
    Axis x = make_axis(lo, hi, false, left, right, true);
    if (lo == hi) x.lo = lo - 1, x.hi = hi + 1;
    else x.lo = lo, x.hi = hi;
    svg::Document d(width, height);
    d.rect(0, 0, width, height, "#ffffff");
    d.text(width / 2, 24, title, "middle", 15, "font-weight=\"bold\"");
    const double bottom = top + row_h * static_cast<double>(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const double y = top + row_h * static_cast<double>(i);
        d.text(left - 8, y + row_h / 2 + 4, rows[i].label + " (" + std::to_string(rows[i].steps.size()) + ")", "end", 11);
        d.line(left, y + row_h / 2, right, y + row_h / 2, "#eeeeee");
        for (double s : rows[i].steps) {
            const double px = x.to_pixel(s);
            d.rect(px - 1.5, y + 5, 3, row_h - 10, svg::colour(i));
        }
    }
    for (double t : ticks(x, true)) {
        if (t < x.lo || t > x.hi) continue;
        const double px = x.to_pixel(t);
        d.line(px, bottom, px, bottom + 5, "#333333");
        d.text(px, bottom + 18, svg::label(t), "middle", 11);
    }
    d.line(left, bottom, right, bottom, "#333333");
    d.text((left + right) / 2, height - 6, "global step", "middle", 12);
    return d.str(standalone);
}

// cells[worker] = the global steps that worker wrote; `steps` = every step of the trial.
inline std::string render_completeness(const std::vector<std::int64_t>& steps,
                                       const std::map<std::string, std::set<std::int64_t>>& cells, bool standalone = true) {
    const double width = 900, row_h = 22, left = 130, right = width - 30, top = 40;
    const double height = top + row_h * static_cast<double>(std::max<std::size_t>(cells.size(), 1)) + 40;
    const double cell_w = steps.empty() ? 0 : (right - left) / static_cast<double>(steps.size());
    svg::Document d(width, height);
    d.rect(0, 0, width, height, "#ffffff");
    d.text(width / 2, 24, "Worker completeness (filled: the worker wrote the step)", "middle", 15, "font-weight=\"bold\"");
    std::size_t row = 0;
    for (const auto& [worker, have] : cells) {
        const double y = top + row_h * static_cast<double>(row++);
        d.text(left - 8, y + row_h / 2 + 4, worker + " " + std::to_string(have.size()) + "/" + std::to_string(steps.size()), "end", 11);
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const bool wrote = have.contains(steps[i]);
            d.rect(left + cell_w * static_cast<double>(i), y + 2, std::max(0.5, cell_w - (cell_w > 4 ? 1 : 0)), row_h - 4,
                   wrote ? "#2ca02c" : "#f2d0d0");
        }
    }
    const double bottom = top + row_h * static_cast<double>(cells.size());
    if (!steps.empty()) {
        d.text(left, bottom + 16, "step " + std::to_string(steps.front()), "start", 11);
        d.text(right, bottom + 16, "step " + std::to_string(steps.back()), "end", 11);
    }
    return d.str(standalone);
}

}  // namespace cli::plot
