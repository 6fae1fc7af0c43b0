#pragma once
// A line chart as SVG: one line (with a dot per point) per series over a shared x axis, with
// axes, ticks, grid, legend, title and an optional log-scale y axis. layout() exposes where each
// data point lands, so that callers (and tests of the rendered image) can find it.
#include <string>
#include <vector>

#include "axis.hpp"
#include "svg.hpp"

namespace cli::plot {

struct Series {
    std::string label;
    std::vector<std::pair<double, double>> points;  // (x, y), x increasing; non-finite y breaks the line
};

struct LineChartSpec {
    std::string title, x_label = "step", y_label;
    bool log_y = false;
    double width = 900, height = 460;
    double legend_width = 230;  // right of the plot area
};

struct ChartLayout {
    Axis x, y;
    double left = 0, top = 0, right = 0, bottom = 0;  // the plot area
    std::size_t skipped = 0;                          // points not drawn (non-finite, or <= 0 on a log axis)
};

inline bool drawable(double y, bool log) { return std::isfinite(y) && (!log || y > 0); }

inline ChartLayout line_chart_layout(const LineChartSpec& spec, const std::vector<Series>& series) {
    ChartLayout L;
    L.left = 80;
    L.top = 44;
    L.right = spec.width - spec.legend_width - 20;
    L.bottom = spec.height - 56;
    double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
    for (const auto& s : series)
        for (const auto& [x, y] : s.points) {
            if (!drawable(y, spec.log_y)) {
                ++L.skipped;
                continue;
            }
            x0 = std::min(x0, x), x1 = std::max(x1, x);
            y0 = std::min(y0, y), y1 = std::max(y1, y);
        }
    if (x0 > x1) x0 = 0, x1 = 1, y0 = spec.log_y ? 1 : 0, y1 = spec.log_y ? 10 : 1;
    L.x = make_axis(x0, x1, false, L.left, L.right, true);
    if (x0 == x1) L.x.lo = x0 - 1, L.x.hi = x1 + 1;
    else L.x.lo = x0, L.x.hi = x1;  // steps: the data range exactly
    L.y = make_axis(y0, y1, spec.log_y, L.bottom, L.top);
    return L;
}

inline std::string render_line_chart(const LineChartSpec& spec, const std::vector<Series>& series, bool standalone = true) {
    const auto L = line_chart_layout(spec, series);
    svg::Document d(spec.width, spec.height);
    d.rect(0, 0, spec.width, spec.height, "#ffffff");
    d.text(spec.width / 2, 26, spec.title, "middle", 16, "font-weight=\"bold\"");
    // grid and ticks
    for (double t : ticks(L.y)) {
        const double py = L.y.to_pixel(t);
        d.line(L.left, py, L.right, py, "#e5e5e5");
        d.line(L.left - 5, py, L.left, py, "#333333");
        d.text(L.left - 8, py + 4, svg::label(t), "end", 11);
    }
    for (double t : ticks(L.x, true)) {
        if (t < L.x.lo - 1e-9 || t > L.x.hi + 1e-9) continue;
        const double px = L.x.to_pixel(t);
        d.line(px, L.top, px, L.bottom, "#f0f0f0");
        d.line(px, L.bottom, px, L.bottom + 5, "#333333");
        d.text(px, L.bottom + 18, svg::label(t), "middle", 11);
    }
    d.line(L.left, L.bottom, L.right, L.bottom, "#333333", 1.2);
    d.line(L.left, L.top, L.left, L.bottom, "#333333", 1.2);
    d.text((L.left + L.right) / 2, spec.height - 14, spec.x_label, "middle", 12);
    d.text(18, (L.top + L.bottom) / 2, spec.y_label + (spec.log_y ? " (log)" : ""), "middle", 12,
           "transform=\"rotate(-90 18 " + svg::num((L.top + L.bottom) / 2) + ")\"");
    // series
    for (std::size_t i = 0; i < series.size(); ++i) {
        const auto c = svg::colour(i);
        std::vector<std::pair<double, double>> run;
        auto flush = [&] {
            if (run.size() > 1) d.polyline(run, c, 2);
            run.clear();
        };
        for (const auto& [x, y] : series[i].points) {
            if (!drawable(y, spec.log_y)) {
                flush();
                continue;
            }
            const double px = L.x.to_pixel(x), py = L.y.to_pixel(y);
            run.emplace_back(px, py);
            d.circle(px, py, 3, c);
        }
        flush();
    }
    // legend
    const double lx = L.right + 20;
    for (std::size_t i = 0; i < series.size(); ++i) {
        const double ly = L.top + 8 + 20.0 * static_cast<double>(i);
        if (ly > spec.height - 20) {
            d.text(lx, ly, "… " + std::to_string(series.size() - i) + " more", "start", 11);
            break;
        }
        d.rect(lx, ly - 9, 18, 10, svg::colour(i));
        std::string label = series[i].label;
        if (label.size() > 30) label = label.substr(0, 14) + "…" + label.substr(label.size() - 14);
        d.text(lx + 24, ly, label, "start", 11);
    }
    if (L.skipped) d.text(L.right, L.top - 6, std::to_string(L.skipped) + " point(s) not drawn" + (spec.log_y ? " (<= 0 or not finite)" : " (not finite)"), "end", 10, "fill=\"#888888\"");
    return d.str(standalone);
}

}  // namespace cli::plot
