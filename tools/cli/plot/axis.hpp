#pragma once
// A linear or base-10 logarithmic axis: the data range, "nice" tick values, and the mapping of a
// data value to a pixel coordinate.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <vector>

namespace cli::plot {

struct Axis {
    double lo = 0, hi = 1;        // data range shown (log axes: positive)
    double pixel_lo = 0, pixel_hi = 1;  // pixels of lo and hi (y axes run upwards: pixel_lo > pixel_hi)
    bool log = false;

    double to_pixel(double v) const {
        const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
        const double x = log ? std::log10(v) : v;
        const double t = b == a ? 0.5 : (x - a) / (b - a);
        return pixel_lo + t * (pixel_hi - pixel_lo);
    }
};

// A step of 1, 2 or 5 times a power of ten giving about `count` intervals over `span`.
inline double nice_step(double span, int count) {
    if (!(span > 0) || !std::isfinite(span)) return 1;
    const double raw = span / count;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

// Widens [lo, hi] to tick multiples (linear) or whole decades (log); fixes degenerate ranges.
inline Axis make_axis(double lo, double hi, bool log, double pixel_lo, double pixel_hi, bool integer_ticks = false) {
    Axis a;
    a.log = log;
    a.pixel_lo = pixel_lo;
    a.pixel_hi = pixel_hi;
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
    if (log) {
        // A decade or more: whole decades. Less: the data's range and a little room, so that the
        // data is not squashed into a corner of one decade.
        lo = std::max(lo, std::numeric_limits<double>::min());
        hi = std::max(hi, lo);
        const double dlo = std::log10(lo), dhi = std::log10(hi);
        if (dhi - dlo >= 1) {
            a.lo = std::pow(10.0, std::floor(dlo));
            a.hi = std::pow(10.0, std::ceil(dhi));
        } else {
            const double pad = std::max((dhi - dlo) * 0.08, 0.02);
            a.lo = std::pow(10.0, dlo - pad);
            a.hi = std::pow(10.0, dhi + pad);
        }
        if (a.hi <= a.lo) a.hi = a.lo * 10;
        return a;
    }
    if (hi == lo) {
        const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
        lo -= pad, hi += pad;
    }
    double step = nice_step(hi - lo, 5);
    if (integer_ticks) step = std::max(1.0, std::round(step));
    a.lo = std::floor(lo / step) * step;
    a.hi = std::ceil(hi / step) * step;
    return a;
}

// m x 10^d (m = 1..9) inside a log axis's range, ascending.
inline std::vector<double> log_steps(const Axis& a, std::initializer_list<int> multiples) {
    std::vector<double> out;
    const int d0 = static_cast<int>(std::floor(std::log10(a.lo) + 1e-9)), d1 = static_cast<int>(std::ceil(std::log10(a.hi) - 1e-9));
    for (int d = d0; d <= d1; ++d)
        for (int m : multiples) {
            const double v = m * std::pow(10.0, d);
            if (v >= a.lo * (1 - 1e-9) && v <= a.hi * (1 + 1e-9)) out.push_back(v);
        }
    return out;
}

// Labelled ticks. Log axes: every decade (every k-th past 8 decades); when fewer than two decades
// show, also 2 and 5 times them (and every multiple when that still gives fewer than 3 ticks; and
// linear steps inside a range narrower than that).
inline std::vector<double> ticks(const Axis& a, bool integer_ticks = false) {
    std::vector<double> out;
    if (a.log) {
        const auto decades = log_steps(a, {1});
        if (decades.size() >= 2) {
            const std::size_t every = std::max<std::size_t>(1, (decades.size() + 7) / 8);
            for (std::size_t i = 0; i < decades.size(); i += every) out.push_back(decades[i]);
            if (decades.size() <= 2) out = log_steps(a, {1, 2, 5});
            return out;
        }
        out = log_steps(a, {1, 2, 5});
        if (out.size() < 3) out = log_steps(a, {1, 2, 3, 4, 5, 6, 7, 8, 9});
        if (out.size() < 3) {  // a narrow range (1.2 to 1.8): linear steps inside it
            out.clear();
            const double step = nice_step(a.hi - a.lo, 4);
            for (double v = std::ceil(a.lo / step - 1e-9) * step; v <= a.hi * (1 + 1e-9); v += step) out.push_back(v);
        }
        return out;
    }
    double step = nice_step(a.hi - a.lo, 5);
    if (integer_ticks) step = std::max(1.0, std::round(step));
    for (double v = a.lo; v <= a.hi + step * 1e-9; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return out;
}

// Unlabelled minor ticks of a log axis: 2..9 times each decade (none past 12 decades).
inline std::vector<double> minor_ticks(const Axis& a) {
    if (!a.log || std::log10(a.hi / a.lo) > 12) return {};
    return log_steps(a, {2, 3, 4, 5, 6, 7, 8, 9});
}

}  // namespace cli::plot
