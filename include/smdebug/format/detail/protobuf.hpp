#pragma once
// A bounds-checked protobuf wire-format reader and a minimal writer. Only what smdebug's Event,
// Summary and TensorProto messages need: varints, fixed32/64 and length-delimited fields.
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include <smdebug/core/errors.hpp>

namespace smdebug::proto {

enum class WireType : std::uint8_t { varint = 0, fixed64 = 1, len = 2, start_group = 3, end_group = 4, fixed32 = 5 };

struct Field {
    std::uint32_t number = 0;
    WireType type = WireType::varint;
    std::uint64_t varint = 0;              // varint, fixed32 and fixed64 payloads
    std::span<const std::byte> bytes;      // len payload
};

// Reads fields one at a time. Every read is bounds-checked; malformed input throws FormatError
// whose message starts with `context` (the file and record being decoded).
class Reader {
public:
    Reader(std::span<const std::byte> data, std::string_view context) : p_(data.data()), end_(data.data() + data.size()), ctx_(context) {}

    bool next(Field& f) {
        if (p_ == end_) return false;
        const std::uint64_t key = read_varint();
        const auto wt = static_cast<std::uint32_t>(key & 7u);
        const std::uint64_t number = key >> 3;
        if (number == 0 || number > 0x1FFFFFFFu) fail("invalid field number");
        f.number = static_cast<std::uint32_t>(number);
        switch (wt) {
            case 0: f.type = WireType::varint; f.varint = read_varint(); break;
            case 1: f.type = WireType::fixed64; f.varint = read_fixed<std::uint64_t>(); break;
            case 5: f.type = WireType::fixed32; f.varint = read_fixed<std::uint32_t>(); break;
            case 2: {
                f.type = WireType::len;
                const std::uint64_t n = read_varint();
                if (n > static_cast<std::uint64_t>(end_ - p_)) fail("length-delimited field runs past the end of its message");
                f.bytes = {p_, static_cast<std::size_t>(n)};
                p_ += n;
                break;
            }
            default: unsupported_wire_type(wt);
        }
        return true;
    }

    // Out of line and cold, so that next() and read_varint() stay small enough to inline.
    [[noreturn, gnu::cold, gnu::noinline]] void fail(const std::string& what) const {
        throw FormatError(std::string(ctx_) + ": malformed protobuf: " + what);
    }
    [[noreturn, gnu::cold, gnu::noinline]] void fail(const char* what) const { fail(std::string(what)); }
    std::string_view context() const noexcept { return ctx_; }
    bool at_end() const noexcept { return p_ == end_; }

    // One-byte varints (every key and most lengths of smdebug's messages) are read inline; longer
    // ones, and every error, out of line.
    std::uint64_t read_varint() {
        if (p_ != end_ && static_cast<std::uint8_t>(*p_) < 0x80u) return static_cast<std::uint8_t>(*p_++);
        return read_long_varint();
    }

private:
    [[noreturn, gnu::cold, gnu::noinline]] void unsupported_wire_type(std::uint32_t wt) const {
        fail("unsupported wire type " + std::to_string(wt));
    }
    [[gnu::noinline]] std::uint64_t read_long_varint() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (p_ == end_) fail("truncated varint");
            const auto b = static_cast<std::uint8_t>(*p_++);
            if (shift == 63 && b > 1) fail("varint overflows 64 bits");
            v |= static_cast<std::uint64_t>(b & 0x7Fu) << shift;
            if ((b & 0x80u) == 0) return v;
        }
        fail("varint longer than 10 bytes");
    }

    template <class T>
    T read_fixed() {
        if (static_cast<std::size_t>(end_ - p_) < sizeof(T)) fail("truncated fixed-width field");
        T v;
        std::memcpy(&v, p_, sizeof(T));
        p_ += sizeof(T);
        return v;
    }

    const std::byte* p_;
    const std::byte* end_;
    std::string_view ctx_;
};

// Requires the wire type a schema declares; otherwise the message is malformed.
inline void expect(const Reader& r, const Field& f, WireType t, const char* name) {
    if (f.type != t) r.fail(std::string("field ") + name + " has the wrong wire type");
}

// Appends encoded fields to a std::string (bytes).
class Writer {
public:
    explicit Writer(std::string& out) : out_(out) {}

    void varint(std::uint64_t v) {
        while (v >= 0x80) { out_.push_back(static_cast<char>((v & 0x7F) | 0x80)); v >>= 7; }
        out_.push_back(static_cast<char>(v));
    }
    void tag(std::uint32_t number, WireType t) { varint((static_cast<std::uint64_t>(number) << 3) | static_cast<std::uint32_t>(t)); }
    void field_varint(std::uint32_t number, std::uint64_t v) { tag(number, WireType::varint); varint(v); }
    void field_double(std::uint32_t number, double d) { field_fixed(number, WireType::fixed64, std::bit_cast<std::uint64_t>(d)); }
    void field_float(std::uint32_t number, float f) { field_fixed(number, WireType::fixed32, std::bit_cast<std::uint32_t>(f)); }
    void field_bytes(std::uint32_t number, std::string_view bytes) {
        tag(number, WireType::len);
        varint(bytes.size());
        out_.append(bytes);
    }
    void field_bytes(std::uint32_t number, std::span<const std::byte> bytes) {
        field_bytes(number, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    }
    // Writes a nested message produced by `fill(Writer&)`.
    template <class F>
    void field_message(std::uint32_t number, F&& fill) {
        std::string inner;
        Writer w(inner);
        fill(w);
        field_bytes(number, inner);
    }

private:
    template <class Bits>
    void field_fixed(std::uint32_t number, WireType t, Bits bits) {
        tag(number, t);
        char b[sizeof(Bits)];
        std::memcpy(b, &bits, sizeof(Bits));  // little-endian hosts
        out_.append(b, sizeof(Bits));
    }

    std::string& out_;
};

}  // namespace smdebug::proto
