#pragma once
// TensorValue's xtensor views (core/tensor_value.hpp declares them; core/tensor_view.hpp is the
// header a separately compiled translation unit includes to call them).
#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

#include <smdebug/core/tensor_value.hpp>

namespace smdebug {

template <Element T>
auto TensorValue::view() const {
    require<T>();
    return xt::adapt(reinterpret_cast<const T*>(data_), size(), xt::no_ownership(), shape_);
}

template <class T>
auto TensorValue::as() const {
    if (is_string()) throw SMDebugTypeError("a string tensor cannot be converted to a numeric array");
    xt::xarray<T> out = xt::xarray<T>::from_shape(shape_);
    T* dst = out.data();
    visit_dtype(dtype_, [&](auto tag) {
        using S = decltype(tag);
        if constexpr (requires { static_cast<T>(std::declval<S>()); }) {
            const S* src = reinterpret_cast<const S*>(data_);
            for (std::size_t i = 0, n = size(); i < n; ++i) dst[i] = static_cast<T>(src[i]);
        } else {
            throw SMDebugTypeError("cannot convert " + std::string(dtype_name(dtype_)) + " elements");
        }
    });
    return out;
}

}  // namespace smdebug
