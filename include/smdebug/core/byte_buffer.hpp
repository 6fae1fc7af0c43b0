#pragma once
// An owned, uninitialised-on-allocation byte buffer: reads fill it directly, so no zeroing pass
// and no copy stands between the storage and the decoder.
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

namespace smdebug {

class ByteBuffer {
public:
    ByteBuffer() = default;
    explicit ByteBuffer(std::size_t size)
        : data_(size ? std::make_unique_for_overwrite<std::byte[]>(size) : nullptr), size_(size) {}
    static ByteBuffer copy_of(std::span<const std::byte> bytes) {
        ByteBuffer b(bytes.size());
        if (!bytes.empty()) std::memcpy(b.data(), bytes.data(), bytes.size());
        return b;
    }
    static ByteBuffer copy_of(std::string_view text) {
        return copy_of(std::as_bytes(std::span<const char>(text.data(), text.size())));
    }

    std::byte* data() noexcept { return data_.get(); }
    const std::byte* data() const noexcept { return data_.get(); }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    // Shrinks the logical size (after a short read); never grows.
    void truncate(std::size_t n) noexcept { if (n < size_) size_ = n; }

    std::span<const std::byte> bytes() const noexcept { return {data_.get(), size_}; }
    std::string_view text() const noexcept { return {reinterpret_cast<const char*>(data_.get()), size_}; }
    operator std::span<const std::byte>() const noexcept { return bytes(); }

private:
    std::unique_ptr<std::byte[]> data_;
    std::size_t size_ = 0;
};

}  // namespace smdebug
