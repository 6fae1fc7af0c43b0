#pragma once
// Element types of saved tensors, with their numpy names and TensorFlow DataType codes.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <smdebug/core/float16.hpp>

namespace smdebug {

enum class DType : std::uint8_t {
    float16, float32, float64,
    int8, int16, int32, int64,
    uint8, uint16, uint32, uint64,
    boolean, complex64, complex128, string,
};

constexpr std::string_view dtype_name(DType d) noexcept {
    switch (d) {
        case DType::float16: return "float16";
        case DType::float32: return "float32";
        case DType::float64: return "float64";
        case DType::int8: return "int8";
        case DType::int16: return "int16";
        case DType::int32: return "int32";
        case DType::int64: return "int64";
        case DType::uint8: return "uint8";
        case DType::uint16: return "uint16";
        case DType::uint32: return "uint32";
        case DType::uint64: return "uint64";
        case DType::boolean: return "bool";
        case DType::complex64: return "complex64";
        case DType::complex128: return "complex128";
        case DType::string: return "str";
    }
    return "invalid";
}

constexpr std::size_t dtype_size(DType d) noexcept {
    switch (d) {
        case DType::int8: case DType::uint8: case DType::boolean: return 1;
        case DType::float16: case DType::int16: case DType::uint16: return 2;
        case DType::float32: case DType::int32: case DType::uint32: return 4;
        case DType::float64: case DType::int64: case DType::uint64: case DType::complex64: return 8;
        case DType::complex128: return 16;
        case DType::string: return 0;
    }
    return 0;
}

// TensorFlow DataType enum values used in TensorProto.dtype (docs/format.md §3.1).
namespace tf_dtype {
inline constexpr int invalid = 0, float32 = 1, float64 = 2, int32 = 3, uint8 = 4, int16 = 5, int8 = 6,
                     string = 7, complex64 = 8, int64 = 9, boolean = 10, complex128 = 18, float16 = 19,
                     uint16 = 17, uint32 = 22, uint64 = 23;
}

constexpr std::optional<DType> dtype_from_tf(int code) noexcept {
    switch (code) {
        case tf_dtype::float16: return DType::float16;
        case tf_dtype::float32: return DType::float32;
        case tf_dtype::float64: return DType::float64;
        case tf_dtype::int8: return DType::int8;
        case tf_dtype::int16: return DType::int16;
        case tf_dtype::int32: return DType::int32;
        case tf_dtype::int64: return DType::int64;
        case tf_dtype::uint8: return DType::uint8;
        case tf_dtype::uint16: return DType::uint16;
        case tf_dtype::uint32: return DType::uint32;
        case tf_dtype::uint64: return DType::uint64;
        case tf_dtype::boolean: return DType::boolean;
        case tf_dtype::complex64: return DType::complex64;
        case tf_dtype::complex128: return DType::complex128;
        default: return std::nullopt;
    }
}

// Strings are written without a dtype field (0), as the reference reader requires.
constexpr int dtype_to_tf(DType d) noexcept {
    switch (d) {
        case DType::float16: return tf_dtype::float16;
        case DType::float32: return tf_dtype::float32;
        case DType::float64: return tf_dtype::float64;
        case DType::int8: return tf_dtype::int8;
        case DType::int16: return tf_dtype::int16;
        case DType::int32: return tf_dtype::int32;
        case DType::int64: return tf_dtype::int64;
        case DType::uint8: return tf_dtype::uint8;
        case DType::uint16: return tf_dtype::uint16;
        case DType::uint32: return tf_dtype::uint32;
        case DType::uint64: return tf_dtype::uint64;
        case DType::boolean: return tf_dtype::boolean;
        case DType::complex64: return tf_dtype::complex64;
        case DType::complex128: return tf_dtype::complex128;
        case DType::string: return tf_dtype::invalid;
    }
    return tf_dtype::invalid;
}

// C++ element type <-> DType.
template <class T> struct dtype_of;
template <> struct dtype_of<float16> { static constexpr DType value = DType::float16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::float64; };
template <> struct dtype_of<std::int8_t> { static constexpr DType value = DType::int8; };
template <> struct dtype_of<std::int16_t> { static constexpr DType value = DType::int16; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::int32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::int64; };
template <> struct dtype_of<std::uint8_t> { static constexpr DType value = DType::uint8; };
template <> struct dtype_of<std::uint16_t> { static constexpr DType value = DType::uint16; };
template <> struct dtype_of<std::uint32_t> { static constexpr DType value = DType::uint32; };
template <> struct dtype_of<std::uint64_t> { static constexpr DType value = DType::uint64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::boolean; };
template <> struct dtype_of<std::complex<float>> { static constexpr DType value = DType::complex64; };
template <> struct dtype_of<std::complex<double>> { static constexpr DType value = DType::complex128; };
template <class T> inline constexpr DType dtype_of_v = dtype_of<std::remove_cv_t<T>>::value;

template <class T>
concept Element = requires { dtype_of<std::remove_cv_t<T>>::value; };

// Calls f(T{}) with the C++ element type of a numeric/bool dtype. Strings are not dispatched.
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
    switch (d) {
        case DType::float16: return f(float16{});
        case DType::float32: return f(float{});
        case DType::float64: return f(double{});
        case DType::int8: return f(std::int8_t{});
        case DType::int16: return f(std::int16_t{});
        case DType::int32: return f(std::int32_t{});
        case DType::int64: return f(std::int64_t{});
        case DType::uint8: return f(std::uint8_t{});
        case DType::uint16: return f(std::uint16_t{});
        case DType::uint32: return f(std::uint32_t{});
        case DType::uint64: return f(std::uint64_t{});
        case DType::boolean: return f(bool{});
        case DType::complex64: return f(std::complex<float>{});
        case DType::complex128: return f(std::complex<double>{});
        case DType::string: break;
    }
    return f(std::uint8_t{});  // unreachable for valid callers; keeps the return type uniform
}

}  // namespace smdebug
