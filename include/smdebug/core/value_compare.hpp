#pragma once
// Two saved values of one tensor compared element by element (`smdebug diff`, smdebug/analysis/diff.hpp;
// the SimilarAcrossRuns rule):
// bitwise by default, or within a tolerance. With a tolerance, element a (of the first run) and b
// agree when |a - b| <= atol + rtol * |a| (numpy.isclose with the first run as the reference);
// NaN agrees with NaN and an infinity with the same infinity. max_abs is the largest |a - b|,
// max_rel the largest |a - b| / max(|a|, |b|) (0 where both are 0); a NaN facing a number counts
// as an infinite difference.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include <smdebug/core/dtype.hpp>
#include <smdebug/core/float16.hpp>
#include <smdebug/core/tensor_value.hpp>

namespace smdebug {

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
    // The first element that differs (beyond the tolerance), and its two values; -1 when none.
    std::int64_t first_index = -1;
    double first_a = 0, first_b = 0;
};

namespace detail {
template <class T>
constexpr bool compared_is_complex = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

inline std::string compared_shape_text(const Shape& s) {
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
        c.reason = "shape " + detail::compared_shape_text(a.shape()) + " vs " + detail::compared_shape_text(b.shape());
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
    const bool compared = visit_dtype(a.dtype(), [&](auto tag) -> bool {
        using T = decltype(tag);
        if constexpr (detail::compared_is_complex<T>) {
            return false;
        } else {
            const auto ea = a.template elements<T>();
            const auto eb = b.template elements<T>();
            for (std::size_t i = 0; i < ea.size(); ++i) {
                const double x = static_cast<double>(ea[i]), y = static_cast<double>(eb[i]);
                double d;
                if (std::isnan(x) || std::isnan(y)) d = std::isnan(x) && std::isnan(y) ? 0 : inf;
                else if (x == y) d = 0;
                else d = std::isinf(x) || std::isinf(y) ? inf : std::fabs(x - y);
                const auto note = [&] {
                    if (!c.differ) c.first_index = static_cast<std::int64_t>(i), c.first_a = x, c.first_b = y;
                    c.differ = true;
                };
                if (d == 0) {
                    if (tol.exact() && std::memcmp(&ea[i], &eb[i], sizeof(T)) != 0) note();  // -0 vs +0, NaN payloads
                    continue;
                }
                const double scale = std::max(std::fabs(x), std::fabs(y));
                const double rel = std::isinf(d) ? inf : d / scale;
                c.max_abs = std::max(c.max_abs, d);
                c.max_rel = std::max(c.max_rel, rel);
                if (tol.exact() || !(d <= tol.atol + tol.rtol * std::fabs(x))) note();
            }
            return true;
        }
    });
    if (!compared) {  // complex: bitwise only
        c.differ = true;
        c.reason = "complex values differ";
        c.max_abs = c.max_rel = inf;
    }
    return c;
}

}  // namespace smdebug
