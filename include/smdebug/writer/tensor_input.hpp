#pragma once
// What Hook::save_tensor accepts, turned into a TensorValue: a TensorValue, any xtensor
// expression (evaluated, row-major), a contiguous range of elements or of strings (1-D), a single
// element (shape [1], as the reference stores Python scalars), or raw memory + shape + dtype.
// Contiguous row-major input is wrapped without a copy; the view lives only for the save call.
#include <algorithm>
#include <complex>
#include <concepts>
#include <cstddef>
#include <iterator>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xexpression.hpp>

#include <smdebug/core/dtype.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/tensor_value.hpp>

namespace smdebug {

namespace detail {

template <class T>
TensorValue view_of(const T* data, Shape shape) {
    return TensorValue(dtype_of_v<T>, std::move(shape), nullptr, reinterpret_cast<const std::byte*>(data));
}

// Expressions with strided memory behind them (containers, adaptors, strided views).
template <class E>
concept StridedData = requires(const E& e) {
    { e.data() };
    { e.data_offset() };
    { e.strides() };
    { e.shape() };
};

// True when the elements lie contiguous in row-major order (size-1 dimensions ignored).
template <class Shp, class Str>
bool row_major_contiguous(const Shp& shape, const Str& strides) {
    std::ptrdiff_t expected = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        if (shape[i] != 1 && static_cast<std::ptrdiff_t>(strides[i]) != expected) return false;
        expected *= static_cast<std::ptrdiff_t>(shape[i]);
    }
    return true;
}

}  // namespace detail

template <class T>
concept TensorElement = Element<std::remove_cvref_t<T>>;

template <class R>
concept ElementRange = std::ranges::input_range<R> && TensorElement<std::ranges::range_value_t<R>> &&
                       !xt::is_xexpression<std::remove_cvref_t<R>>::value;

template <class R>
concept StringRange = std::ranges::input_range<R> && std::convertible_to<std::ranges::range_reference_t<R>, std::string_view> &&
                      !std::convertible_to<R, std::string_view>;

template <class E>
concept XExpression = xt::is_xexpression<std::remove_cvref_t<E>>::value;

// Raw memory of `count(shape)` elements of `dtype`, row-major, little-endian. Not copied.
inline TensorValue tensor_view(const void* data, Shape shape, DType dtype) {
    if (dtype == DType::string) throw UsageError("tensor_view: string tensors need a string range, not raw memory");
    if (!data && element_count(shape) != 0) throw UsageError("tensor_view: null data for a non-empty tensor");
    return TensorValue(dtype, std::move(shape), nullptr, static_cast<const std::byte*>(data));
}

template <TensorElement T>
TensorValue tensor_view(const T* data, Shape shape) {
    return tensor_view(static_cast<const void*>(data), std::move(shape), dtype_of_v<std::remove_cv_t<T>>);
}

// The tensor to save for `value`. Views over the caller's memory are valid until it changes.
inline const TensorValue& to_tensor_value(const TensorValue& value) { return value; }

template <TensorElement T>
TensorValue to_tensor_value(const T& scalar) {
    using U = std::remove_cvref_t<T>;
    return TensorValue::from<U>(std::span<const U>(&scalar, 1), Shape{1});
}

template <XExpression E>
TensorValue to_tensor_value(const E& expr) {
    using D = std::remove_cvref_t<E>;
    using T = std::remove_cv_t<typename D::value_type>;
    static_assert(Element<T>, "save_tensor: the expression's element type is not a supported dtype");
    if constexpr (detail::StridedData<D>) {  // containers, adaptors, views: no copy when contiguous
        if (detail::row_major_contiguous(expr.shape(), expr.strides())) {
            const auto& s = expr.shape();
            return detail::view_of<T>(expr.data() + expr.data_offset(), Shape(s.begin(), s.end()));
        }
    }
    // Evaluate (lazy expression, strided view, column-major) straight into the tensor's buffer.
    Shape shape(expr.shape().begin(), expr.shape().end());
    const std::size_t n = element_count(shape);
    auto buf = std::make_shared<ByteBuffer>(n * sizeof(T));
    if (n != 0) {
        auto dst = xt::adapt(reinterpret_cast<T*>(buf->data()), n, xt::no_ownership(), shape);
        xt::noalias(dst) = expr;
    }
    const std::byte* p = buf->data();
    return TensorValue(dtype_of_v<T>, std::move(shape), std::move(buf), p);
}

template <ElementRange R>
TensorValue to_tensor_value(const R& range) {
    using T = std::remove_cv_t<std::ranges::range_value_t<R>>;
    if constexpr (std::ranges::contiguous_range<R> && std::ranges::sized_range<R>) {
        return detail::view_of<T>(std::ranges::data(range), Shape{static_cast<std::size_t>(std::ranges::size(range))});
    } else {  // std::vector<bool> (packed), lists, lazy views: copy into a contiguous buffer
        std::vector<T> elements;
        for (auto&& x : range) elements.push_back(static_cast<T>(x));
        std::unique_ptr<T[]> buf(new T[elements.size()]);
        std::copy(elements.begin(), elements.end(), buf.get());
        return TensorValue::from<T>(std::span<const T>(buf.get(), elements.size()), Shape{elements.size()});
    }
}

// One string: a 1-D string tensor of length 1.
inline TensorValue to_tensor_value(std::string_view s) { return TensorValue(Shape{1}, {std::string(s)}); }

template <StringRange R>
TensorValue to_tensor_value(const R& range) {
    std::vector<std::string> strings;
    for (auto&& s : range) strings.emplace_back(std::string_view(s));
    const std::size_t n = strings.size();
    return TensorValue(Shape{n}, std::move(strings));
}

// Anything save_tensor accepts.
template <class V>
concept TensorInput = requires(const V& v) {
    { to_tensor_value(v) };
};

}  // namespace smdebug
