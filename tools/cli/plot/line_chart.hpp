#pragma once
// A line chart as SVG: one line per series over a shared x axis, with axes, ticks (decades and
// minor ticks on a log axis), grid, legend, title and an optional log-scale y axis. Dots mark the
// points when a series has few (markers_up_to); values far outside the bulk of the data are
// clipped to the edge with a note (on a log axis only small ones: the largest value is never
// clipped); NaN and +inf are triangles on the top edge, -inf on the bottom edge, in the series'
// colour (issue 53: the step where training broke must show); the legend's size sets the file's
// height and width.
// layout() exposes where each data point lands, so that callers (and tests of the rendered image)
// can find it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
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
    double width = 900, height = 460;  // at least; a long legend makes the chart taller and wider
    double legend_width = 230;         // right of the plot area, at least
    std::size_t markers_up_to = 60;    // dots on the points of a series with at most this many
    bool clip_outliers = true;
};

struct ChartLayout {
    Axis x, y;
    double width = 0, height = 0;                     // of the whole chart
    double left = 0, top = 0, right = 0, bottom = 0;  // the plot area
    std::size_t skipped = 0;                          // points not drawn (<= 0 on a log axis)
    std::size_t nonfinite = 0;                        // NaN and +-inf points, drawn as markers on the edge
    std::size_t clipped_high = 0, clipped_low = 0;    // points outside the y range, drawn on its edge
    double data_lo = 0, data_hi = 0;                  // the drawable data's extremes
};

inline bool drawable(double y, bool log) { return std::isfinite(y) && (!log || y > 0); }

inline constexpr double legend_row = 18;

// The legend's text of a label (long names keep their start and end).
inline std::string legend_label(const std::string& label) {
    if (label.size() <= 44) return label;
    return label.substr(0, 21) + "…" + label.substr(label.size() - 21);
}

// The range [lo, hi] of y the axis shows: all the data, unless a few values lie far outside the
// bulk of it (beyond the 2nd-98th percentile band widened 6 times its width on each side; in
// log10 on a log axis): then the bulk's range, and those values are clipped.
inline std::pair<double, double> y_range(std::vector<double> ys, bool log, bool clip) {
    std::sort(ys.begin(), ys.end());
    const double lo = ys.front(), hi = ys.back();
    if (!clip || ys.size() < 10) return {lo, hi};
    const auto f = [log](double v) { return log ? std::log10(v) : v; };
    const auto at = [&](double q) { return f(ys[static_cast<std::size_t>(q * static_cast<double>(ys.size() - 1))]); };
    const double q0 = at(0.02), q1 = at(0.98);
    const double band = std::max(q1 - q0, std::max(std::fabs(q1), std::fabs(q0)) * 1e-6);
    const double keep_lo = q0 - 6 * band, keep_hi = q1 + 6 * band;
    double shown_lo = hi, shown_hi = lo;
    for (double y : ys)
        if (f(y) >= keep_lo && f(y) <= keep_hi) shown_lo = std::min(shown_lo, y), shown_hi = std::max(shown_hi, y);
    if (log) shown_hi = hi;  // a log axis has room for an explosion: the largest value is never clipped
    return {shown_lo, shown_hi};
}

inline ChartLayout line_chart_layout(const LineChartSpec& spec, const std::vector<Series>& series) {
    ChartLayout L;
    double longest = 0;
    for (const auto& s : series) longest = std::max(longest, static_cast<double>(legend_label(s.label).size()));
    const double legend_width = std::max(spec.legend_width, 24 + 6.4 * longest + 16);
    L.width = spec.width - spec.legend_width + legend_width;
    L.height = std::max(spec.height, 44 + 8 + legend_row * static_cast<double>(series.size()) + 24);
    L.left = 80;
    L.top = 44;
    L.right = L.width - legend_width - 20;
    L.bottom = L.height - 56;
    double x0 = std::numeric_limits<double>::infinity(), x1 = -x0;
    std::vector<double> ys;
    for (const auto& s : series)
        for (const auto& [x, y] : s.points) {
            x0 = std::min(x0, x), x1 = std::max(x1, x);
            if (!std::isfinite(y)) {
                ++L.nonfinite;
                continue;
            }
            if (!drawable(y, spec.log_y)) {
                ++L.skipped;
                continue;
            }
            ys.push_back(y);
        }
    double y0 = spec.log_y ? 1 : 0, y1 = spec.log_y ? 10 : 1;
    if (ys.empty()) {
        if (!std::isfinite(x0)) x0 = 0, x1 = 1;
    } else {
        std::tie(y0, y1) = y_range(ys, spec.log_y, spec.clip_outliers);
        L.data_lo = *std::min_element(ys.begin(), ys.end());
        L.data_hi = *std::max_element(ys.begin(), ys.end());
        for (double y : ys) L.clipped_high += y > y1 ? 1 : 0, L.clipped_low += y < y0 ? 1 : 0;
    }
    L.x = make_axis(x0, x1, false, L.left, L.right, true);
    if (x0 == x1) L.x.lo = x0 - 1, L.x.hi = x1 + 1;
    else L.x.lo = x0, L.x.hi = x1;  // steps: the data range exactly
    L.y = make_axis(y0, y1, spec.log_y, L.bottom, L.top);
    return L;
}

// The points of a series as pixels, thinned when there are more than two per pixel column: each
// column keeps its first, lowest, highest and last point, so the line's shape stays the same.
inline std::vector<std::pair<double, double>> thin(const std::vector<std::pair<double, double>>& px, double columns) {
    if (static_cast<double>(px.size()) <= 2 * columns) return px;
    std::vector<std::pair<double, double>> out;
    std::size_t i = 0;
    while (i < px.size()) {
        const double column = std::floor(px[i].first);
        std::size_t j = i, lo = i, hi = i;
        while (j < px.size() && std::floor(px[j].first) == column) {
            if (px[j].second > px[lo].second) lo = j;  // pixels run downwards
            if (px[j].second < px[hi].second) hi = j;
            ++j;
        }
        std::vector<std::size_t> keep = {i, lo, hi, j - 1};
        std::sort(keep.begin(), keep.end());
        keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
        for (auto k : keep) out.push_back(px[k]);
        i = j;
    }
    return out;
}

inline std::string render_line_chart(const LineChartSpec& spec, const std::vector<Series>& series, bool standalone = true) {
    const auto L = line_chart_layout(spec, series);
    svg::Document d(L.width, L.height);
    d.rect(0, 0, L.width, L.height, "#ffffff");
    d.text(L.width / 2, 26, spec.title, "middle", 16, "font-weight=\"bold\"");
    // grid and ticks
    for (double t : minor_ticks(L.y)) {
        const double py = L.y.to_pixel(t);
        d.line(L.left, py, L.right, py, "#f3f3f3");
        d.line(L.left - 3, py, L.left, py, "#666666");
    }
    for (double t : ticks(L.y)) {
        const double py = L.y.to_pixel(t);
        d.line(L.left, py, L.right, py, "#e0e0e0");
        d.line(L.left - 6, py, L.left, py, "#333333");
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
    d.text((L.left + L.right) / 2, L.height - 14, spec.x_label, "middle", 12);
    d.text(18, (L.top + L.bottom) / 2, spec.y_label + (spec.log_y ? " (log)" : ""), "middle", 12,
           "transform=\"rotate(-90 18 " + svg::num((L.top + L.bottom) / 2) + ")\"");
    // series
    const double y_lo = std::min(L.y.lo, L.y.hi), y_hi = std::max(L.y.lo, L.y.hi);
    for (std::size_t i = 0; i < series.size(); ++i) {
        const auto c = svg::colour(i);
        std::size_t drawn = 0;
        for (const auto& [x, y] : series[i].points) drawn += drawable(y, spec.log_y) ? 1 : 0;
        const bool markers = drawn <= spec.markers_up_to;
        std::vector<std::pair<double, double>> run;
        auto flush = [&] {
            const auto pts = thin(run, L.right - L.left);
            if (pts.size() > 1) d.polyline(pts, c, drawn > 200 ? 1.2 : 2);
            run.clear();
        };
        for (const auto& [x, y] : series[i].points) {
            if (!std::isfinite(y)) {  // a triangle on the edge: NaN and +inf at the top, -inf at the bottom
                flush();
                const double px = L.x.to_pixel(x);
                const bool top = !(y < 0);
                const double py = top ? L.top : L.bottom, dy = top ? 8 : -8;
                d.polygon({{px, py}, {px - 4.5, py + dy}, {px + 4.5, py + dy}}, c);
                continue;
            }
            if (!drawable(y, spec.log_y)) {
                flush();
                continue;
            }
            const bool clipped = y > y_hi || y < y_lo;
            const double px = L.x.to_pixel(x), py = L.y.to_pixel(std::clamp(y, y_lo, y_hi));
            run.emplace_back(px, py);
            if (clipped) d.circle(px, py, 3.5, "none", "stroke=\"" + c + "\" stroke-width=\"1.5\"");  // an open dot on the edge
            else if (markers) d.circle(px, py, 3, c);
        }
        flush();
    }
    // legend
    const double lx = L.right + 20;
    for (std::size_t i = 0; i < series.size(); ++i) {
        const double ly = L.top + 8 + legend_row * static_cast<double>(i);
        d.rect(lx, ly - 9, 18, 10, svg::colour(i));
        d.text(lx + 24, ly, legend_label(series[i].label), "start", 11);
    }
    std::string note;
    if (L.nonfinite) note = std::to_string(L.nonfinite) + " non-finite point(s) marked on the edge (NaN, +inf at the top; -inf at the bottom)";
    if (L.skipped) note += (note.empty() ? "" : "; ") + std::to_string(L.skipped) + " point(s) <= 0 not drawn";
    if (L.clipped_high)
        note += (note.empty() ? "" : "; ") + std::to_string(L.clipped_high) + " point(s) above " + svg::label(y_hi) + " clipped (max " +
                svg::label(L.data_hi) + ")";
    if (L.clipped_low)
        note += (note.empty() ? "" : "; ") + std::to_string(L.clipped_low) + " point(s) below " + svg::label(y_lo) + " clipped (min " +
                svg::label(L.data_lo) + ")";
    if (!note.empty()) d.text(L.right, L.top - 6, note, "end", 10, "fill=\"#888888\"");
    return d.str(standalone);
}

}  // namespace cli::plot
