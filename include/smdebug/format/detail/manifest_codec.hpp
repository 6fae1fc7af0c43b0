#pragma once
// The byte-level pieces of the manifest format (docs/format.md §12): LEB128 varints,
// zig-zag signed integers and length-prefixed strings, written to a std::string and read back
// with every length checked against the bytes that remain (a TruncatedData naming the manifest).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <smdebug/core/errors.hpp>

namespace smdebug::manifest::detail {

class Encoder {
public:
    void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
    void varint(std::uint64_t v) {
        while (v >= 0x80) {
            out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
            v >>= 7;
        }
        out_.push_back(static_cast<char>(v));
    }
    void svarint(std::int64_t v) { varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63)); }
    void string(std::string_view s) {
        varint(s.size());
        out_.append(s);
    }
    void fixed32(std::uint32_t v) {
        for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }
    void fixed64(std::uint64_t v) {
        for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }
    std::string& bytes() noexcept { return out_; }

private:
    std::string out_;
};

class Decoder {
public:
    Decoder(std::span<const std::byte> bytes, std::string_view context) : bytes_(bytes), context_(context) {}

    std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
    bool done() const noexcept { return pos_ == bytes_.size(); }
    std::size_t position() const noexcept { return pos_; }

    std::uint8_t u8() {
        need(1, "a byte");
        return static_cast<std::uint8_t>(bytes_[pos_++]);
    }
    std::uint64_t varint() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            need(1, "a varint");
            const auto b = static_cast<std::uint8_t>(bytes_[pos_++]);
            if (shift == 63 && b > 1) fail("a varint overflows 64 bits");
            v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
            if (!(b & 0x80)) return v;
        }
        fail("a varint is longer than 10 bytes");
    }
    std::int64_t svarint() {
        const auto u = varint();
        return static_cast<std::int64_t>((u >> 1) ^ (0 - (u & 1)));
    }
    // A count of items that each take at least `min_bytes`: never more than the bytes left allow
    // (a corrupt count can not make the reader allocate beyond the manifest's size).
    std::size_t count(std::string_view what, std::size_t min_bytes = 1) {
        const auto n = varint();
        if (n > remaining() / (min_bytes ? min_bytes : 1)) fail(std::string(what) + " count " + std::to_string(n) + " exceeds the bytes left");
        return static_cast<std::size_t>(n);
    }
    std::string string(std::string_view what) {
        const auto n = varint();
        if (n > remaining()) truncated(what);
        std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return s;
    }
    std::uint32_t fixed32() {
        need(4, "a 32-bit field");
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(bytes_[pos_++])) << (8 * i);
        return v;
    }
    std::uint64_t fixed64() {
        need(8, "a 64-bit field");
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(bytes_[pos_++])) << (8 * i);
        return v;
    }
    std::span<const std::byte> rest() const noexcept { return bytes_.subspan(pos_); }

    [[noreturn]] void fail(const std::string& what) const {
        throw FormatError(std::string(context_) + ": corrupt manifest: " + what + " (at byte " + std::to_string(pos_) + ")");
    }
    [[noreturn]] void truncated(std::string_view what) const {
        throw TruncatedData(std::string(context_) + ": truncated manifest: it ends inside " + std::string(what) + " (at byte " +
                            std::to_string(pos_) + " of " + std::to_string(bytes_.size()) + ")");
    }

private:
    void need(std::size_t n, std::string_view what) const {
        if (remaining() < n) truncated(what);
    }

    std::span<const std::byte> bytes_;
    std::string_view context_;
    std::size_t pos_ = 0;
};

}  // namespace smdebug::manifest::detail
