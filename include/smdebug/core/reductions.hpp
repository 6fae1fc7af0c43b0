#pragma once
// Reductions computed at read time (docs/semantics.md §6.4, docs/deviations.md D1, D3, D4): every
// numeric or bool tensor is reduced in double over its flattened elements; std/variance use
// ddof = 0; l1/l2 are vector norms of the flattened tensor.
//
// Stored tensors (contiguous) take a fast path: each element is widened to double and folded
// into eight independent double accumulators, which the compiler turns into SIMD lanes (no
// fast-math: the lanes are explicit, so the result does not depend on compiler flags). Only the
// summation order differs from a sequential loop, which the conformance tolerances allow for;
// min/max are exact, prod stays sequential. float16 widens through a 64 Ki-entry table.
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <xtensor/xmath.hpp>

#include <smdebug/core/reduction_kind.hpp>
#include <smdebug/core/tensor_value.hpp>

namespace smdebug {

namespace detail {

template <class T>
inline double to_double(const T& v) noexcept {  // also used for stored reductions
    if constexpr (std::is_same_v<T, float16>) return static_cast<double>(static_cast<float>(v));
    else return static_cast<double>(v);
}

// Walks a flat sequence of doubles (begin() gives a fresh iterator; variance walks it twice).
template <class Begin>
double reduce_sequence(Begin begin, std::size_t n, Reduction r) {
    auto it = begin();
    switch (r) {
        case Reduction::min:
        case Reduction::max: {
            double best = *it;
            for (std::size_t i = 1; i < n; ++i) {
                const double x = *++it;
                if (std::isnan(x)) return x;  // numpy propagates NaN
                if (r == Reduction::min ? x < best : x > best) best = x;
            }
            return best;
        }
        case Reduction::sum:
        case Reduction::mean: {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i, ++it) s += *it;
            return r == Reduction::sum ? s : s / static_cast<double>(n);
        }
        case Reduction::prod: {
            double p = 1;
            for (std::size_t i = 0; i < n; ++i, ++it) p *= *it;
            return p;
        }
        case Reduction::variance:
        case Reduction::std: {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i, ++it) s += *it;
            const double mean = s / static_cast<double>(n);
            double ss = 0;
            auto again = begin();
            for (std::size_t i = 0; i < n; ++i, ++again) {
                const double d = *again - mean;
                ss += d * d;
            }
            const double var = ss / static_cast<double>(n);
            return r == Reduction::variance ? var : std::sqrt(var);
        }
        case Reduction::l1: {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i, ++it) s += std::fabs(*it);
            return s;
        }
        case Reduction::l2: {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i, ++it) s += *it * *it;
            return std::sqrt(s);
        }
    }
    return std::numeric_limits<double>::quiet_NaN();
}

// float16 bits -> float, for every bit pattern (built once, 256 KiB).
inline const float* float16_table() {
    static const std::unique_ptr<float[]> table = [] {
        auto t = std::make_unique<float[]>(65536);
        for (std::uint32_t h = 0; h < 65536; ++h) t[h] = float16::to_float(static_cast<std::uint16_t>(h));
        return t;
    }();
    return table.get();
}

inline constexpr std::size_t reduction_lanes = 8;

// Sum over the lanes of f(i) for i < n (f returns a double), lane j taking i ≡ j mod lanes.
template <class F>
double lane_sum(std::size_t n, F&& f) {
    constexpr std::size_t L = reduction_lanes;
    std::array<double, L> acc{};
    std::size_t i = 0;
    for (; i + L <= n; i += L)
        for (std::size_t j = 0; j < L; ++j) acc[j] += f(i + j);
    for (std::size_t j = 0; i < n; ++i, ++j) acc[j] += f(i);
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

// Min or max of f(i); NaN when any f(i) is NaN (as numpy).
template <bool Min, class F>
double lane_extreme(std::size_t n, F&& f) {
    constexpr std::size_t L = reduction_lanes;
    std::array<double, L> best;
    best.fill(f(0));
    std::array<bool, L> nan{};
    std::size_t i = 0;
    for (; i + L <= n; i += L)
        for (std::size_t j = 0; j < L; ++j) {
            const double x = f(i + j);
            nan[j] |= x != x;
            best[j] = Min ? (x < best[j] ? x : best[j]) : (x > best[j] ? x : best[j]);
        }
    for (std::size_t j = 0; i < n; ++i, ++j) {
        const double x = f(i);
        nan[j] |= x != x;
        best[j] = Min ? (x < best[j] ? x : best[j]) : (x > best[j] ? x : best[j]);
    }
    double out = best[0];
    bool any_nan = out != out;
    for (std::size_t j = 0; j < L; ++j) {
        any_nan |= nan[j] || best[j] != best[j];
        out = Min ? (best[j] < out ? best[j] : out) : (best[j] > out ? best[j] : out);
    }
    return any_nan ? std::numeric_limits<double>::quiet_NaN() : out;
}

// `r` over the n values x(i) (doubles, already |x| when asked).
template <class X>
double reduce_lanes(std::size_t n, Reduction r, X&& x) {
    switch (r) {
        case Reduction::min: return lane_extreme<true>(n, x);
        case Reduction::max: return lane_extreme<false>(n, x);
        case Reduction::sum: return lane_sum(n, x);
        case Reduction::mean: return lane_sum(n, x) / static_cast<double>(n);
        case Reduction::prod: {
            double p = 1;
            for (std::size_t i = 0; i < n; ++i) p *= x(i);
            return p;
        }
        case Reduction::variance:
        case Reduction::std: {
            const double mean = lane_sum(n, x) / static_cast<double>(n);
            const double var = lane_sum(n, [&](std::size_t i) {
                                   const double d = x(i) - mean;
                                   return d * d;
                               }) /
                               static_cast<double>(n);
            return r == Reduction::variance ? var : std::sqrt(var);
        }
        case Reduction::l1: return lane_sum(n, [&](std::size_t i) { return std::fabs(x(i)); });
        case Reduction::l2: return std::sqrt(lane_sum(n, [&](std::size_t i) {
                                const double v = x(i);
                                return v * v;
                            }));
    }
    return std::numeric_limits<double>::quiet_NaN();
}

// `r` over n contiguous elements of type T, widened to double (|x| when `abs`).
template <class T>
double reduce_contiguous(const T* p, std::size_t n, Reduction r, bool abs) {
    if constexpr (std::is_same_v<T, float16>) {
        const float* table = float16_table();
        const auto* bits = reinterpret_cast<const std::uint16_t*>(p);
        if (abs) return reduce_lanes(n, r, [&](std::size_t i) { return static_cast<double>(table[bits[i] & 0x7FFFu]); });
        return reduce_lanes(n, r, [&](std::size_t i) { return static_cast<double>(table[bits[i]]); });
    } else if constexpr (std::is_same_v<T, bool>) {
        const auto* b = reinterpret_cast<const std::uint8_t*>(p);
        return reduce_lanes(n, r, [&](std::size_t i) { return b[i] ? 1.0 : 0.0; });
    } else {
        if (abs) return reduce_lanes(n, r, [&](std::size_t i) { return std::fabs(static_cast<double>(p[i])); });
        return reduce_lanes(n, r, [&](std::size_t i) { return static_cast<double>(p[i]); });
    }
}

}  // namespace detail

// Reduces any xtensor expression of doubles (evaluated lazily, element by element, in row-major
// order) with smdebug's definitions: ddof = 0, flattened vector norms, NaN propagating.
template <class E>
double reduce_expression(const xt::xexpression<E>& expression, Reduction r) {
    const auto& e = expression.derived_cast();
    if (e.size() == 0) throw SMDebugValueError("cannot compute reduction " + std::string(reduction_name(r)) + " of an empty tensor");
    if constexpr (requires { e.linear_cbegin(); }) {
        if (e.is_contiguous()) return detail::reduce_sequence([&] { return e.linear_cbegin(); }, e.size(), r);
    }
    return detail::reduce_sequence([&] { return e.template begin<xt::layout_type::row_major>(); }, e.size(), r);
}

// The lazy expression a stored tensor is reduced over: its elements widened to double, |x| when
// `abs`. Zero-copy over the stored buffer; T must be the value's element type.
template <Element T>
auto as_double_expression(const TensorValue& value) {
    return xt::cast<double>(value.view<T>());
}

// Whether compute_reduction accepts `value`: numeric or bool, not complex, at least one element.
inline bool reducible(const TensorValue& value) noexcept {
    return !value.is_string() && !value.empty() && value.dtype() != DType::complex64 && value.dtype() != DType::complex128;
}

// Computes `r` over `value` (after |x| when `abs`). Strings raise SMDebugTypeError, empty tensors
// SMDebugValueError, complex tensors SMDebugTypeError (reducible() is false for exactly these).
inline double compute_reduction(const TensorValue& value, Reduction r, bool abs = false) {
    if (value.is_string()) throw SMDebugTypeError("cannot compute reduction " + std::string(reduction_name(r)) + " of a string tensor");
    if (value.empty()) throw SMDebugValueError("cannot compute reduction " + std::string(reduction_name(r)) + " of an empty tensor");
    return visit_dtype(value.dtype(), [&](auto tag) -> double {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
            throw SMDebugTypeError("reductions of complex tensors are not supported");
        } else {
            return detail::reduce_contiguous(value.elements<T>().data(), value.size(), r, abs);
        }
    });
}

inline double compute_reduction(const TensorValue& value, std::string_view name, bool abs = false) {
    const auto r = parse_reduction(name);
    if (!r) throw SMDebugValueError("Invalid reduction type " + std::string(name));
    return compute_reduction(value, *r, abs);
}

}  // namespace smdebug
