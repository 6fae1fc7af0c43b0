#pragma once
// TensorValue: a dtype-tagged, shaped tensor read from (or about to be written to) a trial.
// Numeric data stays in the buffer it was read into; view<T>() adapts it as an xtensor expression
// without copying when T is the stored element type (core/tensor_view.hpp). A TensorValue is immutable: copies share the
// buffer (atomic reference count) and may be read from any thread.
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <xtensor/xstorage.hpp>

#include <smdebug/core/dtype.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/config.hpp>

namespace smdebug {

// A tensor's dimensions: a vector with room for four in place (xtensor's dynamic shape type), so
// a value of rank 4 or less allocates nothing for its shape (one allocation less per value read).
// Converts from and compares with std::vector<std::size_t>.
using Shape = xt::svector<std::size_t, 4>;

inline std::size_t element_count(const Shape& shape) noexcept {
    return std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
}

class TensorValue {
public:
    TensorValue() = default;

    // Numeric/bool tensor over `count * dtype_size(dtype)` bytes at `data`, kept alive by `owner`.
    // `data` must be aligned for the element type.
    TensorValue(DType dtype, Shape shape, std::shared_ptr<const void> owner, const std::byte* data)
        : dtype_(dtype), shape_(std::move(shape)), owner_(std::move(owner)), data_(data) {}

    // String tensor.
    TensorValue(Shape shape, std::vector<std::string> strings)
        : dtype_(DType::string), shape_(std::move(shape)), strings_(std::move(strings)) {}

    // Copies elements into a new tensor (for tests, the writer and small values).
    template <Element T>
    static TensorValue from(std::span<const T> elements, Shape shape) {
        auto buf = std::make_shared<ByteBuffer>(elements.size_bytes());
        if (!elements.empty()) std::memcpy(buf->data(), elements.data(), elements.size_bytes());
        const std::byte* p = buf->data();
        return TensorValue(dtype_of_v<T>, std::move(shape), std::move(buf), p);
    }
    template <Element T>
    static TensorValue scalar(T v) { return from<T>(std::span<const T>(&v, 1), {}); }

    DType dtype() const noexcept { return dtype_; }
    const Shape& shape() const noexcept { return shape_; }
    std::size_t rank() const noexcept { return shape_.size(); }
    std::size_t size() const noexcept { return element_count(shape_); }
    bool empty() const noexcept { return size() == 0; }
    bool is_string() const noexcept { return dtype_ == DType::string; }
    std::size_t byte_size() const noexcept {
        if (!is_string()) return size() * dtype_size(dtype_);
        std::size_t n = 0;
        for (const auto& s : strings_) n += s.size();
        return n;
    }

    // Raw little-endian element bytes in row-major order (numeric/bool only).
    std::span<const std::byte> bytes() const noexcept {
        return {data_, is_string() ? 0 : size() * dtype_size(dtype_)};
    }
    const std::vector<std::string>& strings() const {
        if (!is_string()) throw SMDebugTypeError("tensor of dtype " + std::string(dtype_name(dtype_)) + " has no strings");
        return strings_;
    }

    template <Element T>
    std::span<const T> elements() const {
        require<T>();
        return {reinterpret_cast<const T*>(data_), size()};
    }

    // xtensor views (defined in core/impl/tensor_value.ipp, included here in header-only mode and by
    // core/tensor_view.hpp):
    // a zero-copy adaptor over the stored elements (T must be the stored element type), and a
    // converting copy as xt::xarray<T> (numeric/bool dtypes, any arithmetic T).
    template <Element T>
    auto view() const;
    template <class T>
    auto as() const;

private:
    template <class T>
    void require() const {
        if (dtype_of_v<T> != dtype_)
            throw SMDebugTypeError("tensor has dtype " + std::string(dtype_name(dtype_)) + ", not " +
                                   std::string(dtype_name(dtype_of_v<T>)));
    }

    DType dtype_ = DType::float32;
    Shape shape_;
    std::shared_ptr<const void> owner_;  // a ByteBuffer, or the block a slice of one shares
    const std::byte* data_ = nullptr;
    std::vector<std::string> strings_;
};

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/core/impl/tensor_value.ipp>
#endif
