#pragma once
// An owned, uninitialised-on-allocation byte buffer: reads fill it directly, so no zeroing pass
// and no copy stands between the storage and the decoder.
//
// A buffer may be a slice of a larger block (slice()): one read of many adjacent records hands
// each record its own ByteBuffer without copying, and the block lives as long as any slice of it.
// Slices of one block must not overlap when they are written to (the batch readers hand out
// disjoint record ranges; the event decoder only moves bytes inside its own record).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>


namespace smdebug {

class ByteBuffer {
public:
    ByteBuffer() = default;
    // A block of the heap (uninitialised), freed with its last slice.
    explicit ByteBuffer(std::size_t size)
        : block_(size ? std::make_shared_for_overwrite<std::byte[]>(size) : nullptr), data_(block_.get()), size_(size) {}
    static ByteBuffer copy_of(std::span<const std::byte> bytes) {
        ByteBuffer b(bytes.size());
        if (!bytes.empty()) std::memcpy(b.data(), bytes.data(), bytes.size());
        return b;
    }
    static ByteBuffer copy_of(std::string_view text) {
        return copy_of(std::as_bytes(std::span<const char>(text.data(), text.size())));
    }

    // Move-only, as a unique owner: copies would alias. Share bytes explicitly with slice().
    ByteBuffer(ByteBuffer&& o) noexcept : block_(std::move(o.block_)), data_(o.data_), size_(o.size_) {
        o.data_ = nullptr;
        o.size_ = 0;
    }
    ByteBuffer& operator=(ByteBuffer&& o) noexcept {
        block_ = std::move(o.block_);
        data_ = o.data_;
        size_ = o.size_;
        o.data_ = nullptr;
        o.size_ = 0;
        return *this;
    }
    ByteBuffer(const ByteBuffer&) = delete;
    ByteBuffer& operator=(const ByteBuffer&) = delete;

    // Shared ownership of the bytes (of the whole block, when this is a slice): keeps them alive
    // without a ByteBuffer object (a decoded value holds this).
    std::shared_ptr<const void> share() const noexcept { return block_; }

    // `length` bytes at `offset` of this buffer, sharing its block (no copy). Clamped to the size.
    ByteBuffer slice(std::size_t offset, std::size_t length) const {
        ByteBuffer b;
        if (offset >= size_) return b;
        b.block_ = block_;
        b.data_ = data_ + offset;
        b.size_ = std::min(length, size_ - offset);
        return b;
    }

    std::byte* data() noexcept { return data_; }
    const std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    // Shrinks the logical size (after a short read); never grows.
    void truncate(std::size_t n) noexcept { if (n < size_) size_ = n; }

    std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
    std::string_view text() const noexcept { return {reinterpret_cast<const char*>(data_), size_}; }
    operator std::span<const std::byte>() const noexcept { return bytes(); }

private:
    std::shared_ptr<std::byte[]> block_;
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace smdebug
