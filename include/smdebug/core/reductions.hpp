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

#include <xtensor/xmath.hpp>

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
            const auto x = as_double_expression<T>(value);
            return abs ? reduce_expression(xt::abs(x), r) : reduce_expression(x, r);
        }
    });
}

inline double compute_reduction(const TensorValue& value, std::string_view name, bool abs = false) {
    const auto r = parse_reduction(name);
    if (!r) throw SMDebugValueError("Invalid reduction type " + std::string(name));
    return compute_reduction(value, *r, abs);
}

}  // namespace smdebug
