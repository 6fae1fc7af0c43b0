#pragma once
// A histogram of a tensor's elements as SVG: equal-width bins over the finite values.
#include <string>
#include <vector>

#include "axis.hpp"
#include "svg.hpp"

namespace cli::plot {

struct Histogram {
    double lo = 0, hi = 0;
    std::vector<std::size_t> counts;
    std::size_t non_finite = 0;
    double bin_width() const { return counts.empty() ? 0 : (hi - lo) / static_cast<double>(counts.size()); }
};

// Bins [min, max] into `bins` equal bins (the last one closed), as numpy.histogram does.
inline Histogram make_histogram(const std::vector<double>& values, std::size_t bins) {
    Histogram h;
    h.counts.assign(std::max<std::size_t>(bins, 1), 0);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (double v : values) {
        if (!std::isfinite(v)) {
            ++h.non_finite;
            continue;
        }
        lo = std::min(lo, v), hi = std::max(hi, v);
    }
    if (lo > hi) lo = 0, hi = 1;
    if (lo == hi) lo -= 0.5, hi += 0.5;
    h.lo = lo, h.hi = hi;
    const double n = static_cast<double>(h.counts.size());
    for (double v : values) {
        if (!std::isfinite(v)) continue;
        auto i = static_cast<std::size_t>((v - lo) / (hi - lo) * n);
        h.counts[std::min(i, h.counts.size() - 1)]++;
    }
    return h;
}

struct HistogramSpec {
    std::string title, x_label = "value";
    double width = 800, height = 420;
};

struct HistogramLayout {
    Axis x, y;
    double left = 70, top = 44, right = 0, bottom = 0;
};

inline HistogramLayout histogram_layout(const HistogramSpec& spec, const Histogram& h) {
    HistogramLayout L;
    L.right = spec.width - 30;
    L.bottom = spec.height - 56;
    L.x = Axis{h.lo, h.hi, L.left, L.right, false};
    std::size_t top = 0;
    for (auto c : h.counts) top = std::max(top, c);
    L.y = make_axis(0, static_cast<double>(std::max<std::size_t>(top, 1)), false, L.bottom, L.top, true);
    return L;
}

inline std::string render_histogram(const HistogramSpec& spec, const Histogram& h, bool standalone = true) {
    const auto L = histogram_layout(spec, h);
    svg::Document d(spec.width, spec.height);
    d.rect(0, 0, spec.width, spec.height, "#ffffff");
    d.text(spec.width / 2, 26, spec.title, "middle", 16, "font-weight=\"bold\"");
    for (double t : ticks(L.y, true)) {
        const double py = L.y.to_pixel(t);
        d.line(L.left, py, L.right, py, "#e5e5e5");
        d.text(L.left - 8, py + 4, svg::label(t), "end", 11);
    }
    const double w = h.bin_width();
    for (std::size_t i = 0; i < h.counts.size(); ++i) {
        if (!h.counts[i]) continue;
        const double x0 = L.x.to_pixel(h.lo + w * static_cast<double>(i)), x1 = L.x.to_pixel(h.lo + w * static_cast<double>(i + 1));
        const double y = L.y.to_pixel(static_cast<double>(h.counts[i]));
        d.rect(x0, y, std::max(0.5, x1 - x0 - 1), L.bottom - y, svg::colour(0));
    }
    const Axis x_ticks = make_axis(h.lo, h.hi, false, L.left, L.right);
    for (double t : ticks(x_ticks)) {
        if (t < h.lo - 1e-12 || t > h.hi + 1e-12) continue;
        const double px = L.x.to_pixel(t);
        d.line(px, L.bottom, px, L.bottom + 5, "#333333");
        d.text(px, L.bottom + 18, svg::label(t), "middle", 11);
    }
    d.line(L.left, L.bottom, L.right, L.bottom, "#333333", 1.2);
    d.line(L.left, L.top, L.left, L.bottom, "#333333", 1.2);
    d.text((L.left + L.right) / 2, spec.height - 14, spec.x_label, "middle", 12);
    d.text(18, (L.top + L.bottom) / 2, "count", "middle", 12, "transform=\"rotate(-90 18 " + svg::num((L.top + L.bottom) / 2) + ")\"");
    if (h.non_finite) d.text(L.right, L.top - 6, std::to_string(h.non_finite) + " non-finite value(s) not counted", "end", 10, "fill=\"#888888\"");
    return d.str(standalone);
}

}  // namespace cli::plot
