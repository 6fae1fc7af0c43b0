#pragma once
// LibTorch tensors as the writer's TensorValue. A CPU, strided, contiguous tensor of a dtype
// smdebug stores is viewed in place (no copy); anything else is materialized once into `holder`
// (copied to host, made contiguous, densified, bfloat16 widened to float32 because smdebug's
// format has no bfloat16), and the view points into `holder`, which must outlive it.
#include <optional>
#include <string>
#include <string_view>

#include <torch/torch.h>

#include <smdebug/core/dtype.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/tensor_value.hpp>

namespace smdebug {

// The smdebug dtype of a torch scalar type, or nullopt when smdebug has none.
inline std::optional<DType> smdebug_dtype(c10::ScalarType t) noexcept {
    switch (t) {
    case c10::ScalarType::Half: return DType::float16;
    case c10::ScalarType::Float: return DType::float32;
    case c10::ScalarType::Double: return DType::float64;
    case c10::ScalarType::Char: return DType::int8;
    case c10::ScalarType::Short: return DType::int16;
    case c10::ScalarType::Int: return DType::int32;
    case c10::ScalarType::Long: return DType::int64;
    case c10::ScalarType::Byte: return DType::uint8;
    case c10::ScalarType::Bool: return DType::boolean;
    case c10::ScalarType::ComplexFloat: return DType::complex64;
    case c10::ScalarType::ComplexDouble: return DType::complex128;
    default: return std::nullopt;
    }
}

// True when `t` can be saved without any copy.
inline bool viewable_in_place(const at::Tensor& t) {
    return t.device().is_cpu() && t.layout() == c10::kStrided && t.is_contiguous() && smdebug_dtype(t.scalar_type()).has_value();
}

// The host view of `t` for Hook::save_tensor; see the top of this file. `what` names the tensor
// in error messages.
inline TensorValue torch_tensor_view(const at::Tensor& t, at::Tensor& holder, std::string_view what) {
    if (!t.defined()) throw UsageError("tensor " + std::string(what) + ": undefined torch::Tensor");
    const at::Tensor* src = &t;
    if (!viewable_in_place(t)) {
        at::Tensor h = t.detach();
        if (h.layout() != c10::kStrided) h = h.to_dense();
        if (h.scalar_type() == c10::ScalarType::BFloat16) h = h.to(c10::ScalarType::Float);
        if (!smdebug_dtype(h.scalar_type()))
            throw UsageError("tensor " + std::string(what) + ": torch dtype " + std::string(c10::toString(h.scalar_type())) +
                             " has no smdebug equivalent");
        holder = h.to(c10::Device(c10::kCPU)).contiguous();
        src = &holder;
    }
    Shape shape(src->sizes().begin(), src->sizes().end());
    return TensorValue(*smdebug_dtype(src->scalar_type()), std::move(shape), nullptr,
                       static_cast<const std::byte*>(src->data_ptr()));
}

}  // namespace smdebug
