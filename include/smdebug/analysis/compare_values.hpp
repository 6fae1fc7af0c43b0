#pragma once
// Two saved values of one tensor compared element by element (`smdebug diff`, SimilarAcrossRuns):
// bitwise by default, or within a tolerance. With a tolerance, element a (of the first run) and b
// agree when |a - b| <= atol + rtol * |a| (numpy.isclose with the first run as the reference);
// NaN agrees with NaN and an infinity with the same infinity. max_abs is the largest |a - b|,
// max_rel the largest |a - b| / max(|a|, |b|) (0 where both are 0); a NaN facing a number counts
// as an infinite difference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <smdebug/core/dtype.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug::analysis {

struct Tolerance {
    double rtol = 0;
    double atol = 0;
    bool exact() const noexcept { return rtol == 0 && atol == 0; }
};

struct ValueComparison {
    bool differ = false;
    double max_abs = 0;
    double max_rel = 0;
    std::string reason;  // set when the values cannot be compared element by element (dtype, shape)
};

namespace detail {
inline std::string shape_text(const Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
    return out + "]";
}
}  // namespace detail

inline ValueComparison compare_values(const TensorValue& a, const TensorValue& b, const Tolerance& tol = {}) {
    ValueComparison c;
    constexpr double inf = std::numeric_limits<double>::infinity();
    if (a.dtype() != b.dtype()) {
        c.differ = true;
        c.max_abs = c.max_rel = inf;
        c.reason = "dtype " + std::string(dtype_name(a.dtype())) + " vs " + std::string(dtype_name(b.dtype()));
        return c;
    }
    if (a.shape() != b.shape()) {
        c.differ = true;
        c.max_abs = c.max_rel = inf;
        c.reason = "shape " + detail::shape_text(a.shape()) + " vs " + detail::shape_text(b.shape());
        return c;
    }
    if (a.is_string()) {
        c.differ = a.strings() != b.strings();
        if (c.differ) c.reason = "strings differ", c.max_abs = c.max_rel = inf;
        return c;
    }
    const auto ab = a.bytes(), bb = b.bytes();
    if (ab.size() == bb.size() && (ab.empty() || std::memcmp(ab.data(), bb.data(), ab.size()) == 0)) return c;
    // The bytes differ: how much (and, with a tolerance, whether it matters).
    bool compared = smdebug::detail::with_elements(a, [&](auto ea) {
        using T = typename decltype(ea)::value_type;
        const auto eb = b.template elements<T>();
        for (std::size_t i = 0; i < ea.size(); ++i) {
            const double x = smdebug::detail::to_double(ea[i]), y = smdebug::detail::to_double(eb[i]);
            double d;
            if (std::isnan(x) || std::isnan(y)) d = std::isnan(x) && std::isnan(y) ? 0 : inf;
            else if (x == y) d = 0;
            else d = std::isinf(x) || std::isinf(y) ? inf : std::fabs(x - y);
            if (d == 0) {
                if (tol.exact() && std::memcmp(&ea[i], &eb[i], sizeof(T)) != 0) c.differ = true;  // -0 vs +0, NaN payloads
                continue;
            }
            const double scale = std::max(std::fabs(x), std::fabs(y));
            const double rel = std::isinf(d) ? inf : d / scale;
            c.max_abs = std::max(c.max_abs, d);
            c.max_rel = std::max(c.max_rel, rel);
            if (tol.exact() || !(d <= tol.atol + tol.rtol * std::fabs(x))) c.differ = true;
        }
    });
    if (!compared) {  // complex: bitwise only
        c.differ = true;
        c.reason = "complex values differ";
        c.max_abs = c.max_rel = inf;
    }
    return c;
}

}  // namespace smdebug::analysis
