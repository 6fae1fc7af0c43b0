#pragma once
// A linear or base-10 logarithmic axis: the data range, "nice" tick values, and the mapping of a
// data value to a pixel coordinate.
#include <algorithm>
#include <cmath>
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
        lo = std::max(lo, std::numeric_limits<double>::min());
        hi = std::max(hi, lo);
        a.lo = std::pow(10.0, std::floor(std::log10(lo)));
        a.hi = std::pow(10.0, std::ceil(std::log10(hi)));
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

inline std::vector<double> ticks(const Axis& a, bool integer_ticks = false) {
    std::vector<double> out;
    if (a.log) {
        const int d0 = static_cast<int>(std::round(std::log10(a.lo))), d1 = static_cast<int>(std::round(std::log10(a.hi)));
        const int every = std::max(1, (d1 - d0 + 7) / 8);
        for (int d = d0; d <= d1; d += every) out.push_back(std::pow(10.0, d));
        return out;
    }
    double step = nice_step(a.hi - a.lo, 5);
    if (integer_ticks) step = std::max(1.0, std::round(step));
    for (double v = a.lo; v <= a.hi + step * 1e-9; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return out;
}

}  // namespace cli::plot
