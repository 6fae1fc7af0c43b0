#pragma once
// Reductions computed at read time (SEMANTICS.md §7.9 with DEVIATIONS.md D1, D3, D4): every
// numeric or bool tensor is reduced in double over its flattened elements; std/variance use
// ddof = 0; l1/l2 are vector norms of the flattened tensor.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <smdebug/core/tensor_value.hpp>

namespace smdebug {

enum class Reduction : std::uint8_t { min, max, mean, std, variance, sum, prod, l1, l2 };

constexpr std::string_view reduction_name(Reduction r) noexcept {
    constexpr std::string_view names[] = {"min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2"};
    return names[static_cast<int>(r)];
}

constexpr std::optional<Reduction> parse_reduction(std::string_view name) noexcept {
    for (int i = 0; i <= static_cast<int>(Reduction::l2); ++i)
        if (reduction_name(static_cast<Reduction>(i)) == name) return static_cast<Reduction>(i);
    return std::nullopt;
}

namespace detail {

template <class T>
inline double to_double(const T& v) noexcept {
    if constexpr (std::is_same_v<T, float16>) return static_cast<double>(static_cast<float>(v));
    else return static_cast<double>(v);
}

// One pass over the elements (as doubles, optionally |x|), with the reduction's accumulator.
template <class T>
double reduce_elements(const T* data, std::size_t n, Reduction r, bool abs) noexcept {
    auto at = [&](std::size_t i) {
        const double x = to_double(data[i]);
        return abs ? std::fabs(x) : x;
    };
    switch (r) {
        case Reduction::min:
        case Reduction::max: {
            double best = at(0);
            for (std::size_t i = 1; i < n; ++i) {
                const double x = at(i);
                if (std::isnan(x)) return x;  // numpy propagates NaN
                if (r == Reduction::min ? x < best : x > best) best = x;
            }
            return best;
        }
        case Reduction::sum:
        case Reduction::mean: {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i) s += at(i);
            return r == Reduction::sum ? s : s / static_cast<double>(n);
        }
        case Reduction::prod: {
            double p = 1;
            for (std::size_t i = 0; i < n; ++i) p *= at(i);
            return p;
        }
        case Reduction::variance:
        case Reduction::std: {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i) s += at(i);
            const double mean = s / static_cast<double>(n);
            double ss = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const double d = at(i) - mean;
                ss += d * d;
            }
            const double var = ss / static_cast<double>(n);
            return r == Reduction::variance ? var : std::sqrt(var);
        }
        case Reduction::l1: {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i) s += std::fabs(at(i));
            return s;
        }
        case Reduction::l2: {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const double x = at(i);
                s += x * x;
            }
            return std::sqrt(s);
        }
    }
    return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace detail

// Computes `r` over `value` (after |x| when `abs`). Strings raise SMDebugTypeError, empty tensors
// SMDebugValueError, complex tensors SMDebugTypeError.
inline double compute_reduction(const TensorValue& value, Reduction r, bool abs = false) {
    if (value.is_string()) throw SMDebugTypeError("cannot compute reduction " + std::string(reduction_name(r)) + " of a string tensor");
    if (value.empty()) throw SMDebugValueError("cannot compute reduction " + std::string(reduction_name(r)) + " of an empty tensor");
    return visit_dtype(value.dtype(), [&](auto tag) -> double {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
            throw SMDebugTypeError("reductions of complex tensors are not supported");
        } else {
            const auto e = value.elements<T>();
            return detail::reduce_elements(e.data(), e.size(), r, abs);
        }
    });
}

inline double compute_reduction(const TensorValue& value, std::string_view name, bool abs = false) {
    const auto r = parse_reduction(name);
    if (!r) throw SMDebugValueError("Invalid reduction type " + std::string(name));
    return compute_reduction(value, *r, abs);
}

}  // namespace smdebug
