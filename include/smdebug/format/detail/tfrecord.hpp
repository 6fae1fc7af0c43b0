#pragma once
// TFRecord framing (docs/format.md §3): u64 length, masked CRC of the length, payload, 4-byte footer.
// smdebug's own writer puts a fixed constant in the footer instead of the payload CRC; the reader
// accepts that constant and otherwise verifies the footer as a real payload CRC.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include <smdebug/core/errors.hpp>
#include <smdebug/format/detail/crc32c.hpp>

namespace smdebug::tfrecord {

inline constexpr std::size_t header_size = 12;  // length + length CRC
inline constexpr std::size_t footer_size = 4;
inline constexpr std::size_t overhead = header_size + footer_size;
// masked_crc32c("0x12345678"): what smdebug writes after every record under events/.
inline constexpr std::uint32_t smdebug_footer = 0x062DC0B3u;
// The largest payload a record may declare: an Event is a protobuf message, and protobuf cannot
// serialise messages of 2 GiB or more. parse() allocates nothing (a length beyond the data is
// TruncatedData); readers allocate from index entries, whose lengths index_file::parse bounds by
// max_record_bytes, so a file claiming terabytes is rejected before anything is allocated for it.
inline constexpr std::uint64_t max_payload_bytes = (std::uint64_t{1} << 31) - 1;
inline constexpr std::uint64_t max_record_bytes = max_payload_bytes + overhead;

enum class Footer { smdebug_constant, payload_crc };

struct Record {
    std::span<const std::byte> payload;
    std::size_t size = 0;           // whole record: payload + 16
    bool payload_verified = false;  // footer was a real payload CRC and matched
};

namespace detail {
inline std::uint32_t load_u32(const std::byte* p) noexcept { std::uint32_t v; std::memcpy(&v, p, 4); return v; }
inline std::uint64_t load_u64(const std::byte* p) noexcept { std::uint64_t v; std::memcpy(&v, p, 8); return v; }
}  // namespace detail

// Parses the record at the start of `data`. `context` names the file (and offset) for errors.
inline Record parse(std::span<const std::byte> data, std::string_view context) {
    auto where = [&] { return std::string(context); };
    if (data.size() < header_size)
        throw TruncatedData(where() + ": TFRecord header needs 12 bytes, only " + std::to_string(data.size()) + " present");
    const std::uint64_t len = detail::load_u64(data.data());
    const std::uint32_t len_crc = detail::load_u32(data.data() + 8);
    if (masked_crc32c(data.first(8)) != len_crc)
        throw RecordCorrupted(where() + ": TFRecord length CRC mismatch (corrupt record header)");
    if (len > data.size() - header_size || data.size() - header_size - len < footer_size)
        throw TruncatedData(where() + ": TFRecord declares " + std::to_string(len) + " payload bytes but only " +
                            std::to_string(data.size() - header_size) + " bytes follow the header");
    // (A length beyond the data is truncation above, whatever its size: nothing is allocated here.)
    if (len > max_payload_bytes)
        throw RecordCorrupted(where() + ": TFRecord declares " + std::to_string(len) + " payload bytes, more than the limit of " +
                              std::to_string(max_payload_bytes) + " (tfrecord::max_payload_bytes)");
    Record r;
    r.payload = data.subspan(header_size, static_cast<std::size_t>(len));
    r.size = static_cast<std::size_t>(len) + overhead;
    const std::uint32_t footer = detail::load_u32(data.data() + header_size + len);
    if (footer != smdebug_footer) {
        if (masked_crc32c(r.payload) != footer)
            throw RecordCorrupted(where() + ": TFRecord payload CRC mismatch (corrupt record data)");
        r.payload_verified = true;
    }
    return r;
}

// Checks the 12-byte header at the start of a record that its index entry says is `record_length`
// bytes long, before the payload is read: a corrupt header or a length that disagrees is an error
// at the cost of 12 bytes, not of reading what the entry claims (which may be gigabytes).
inline void check_header(std::span<const std::byte> header, std::uint64_t record_length, std::string_view context) {
    if (header.size() < header_size)
        throw TruncatedData(std::string(context) + ": TFRecord header needs 12 bytes, only " + std::to_string(header.size()) + " present");
    const std::uint64_t len = detail::load_u64(header.data());
    if (masked_crc32c(header.first(8)) != detail::load_u32(header.data() + 8))
        throw RecordCorrupted(std::string(context) + ": TFRecord length CRC mismatch (corrupt record header)");
    if (len > max_payload_bytes || len + overhead != record_length)
        throw RecordCorrupted(std::string(context) + ": the TFRecord declares " + std::to_string(len) +
                              " payload bytes, but its index entry gives the record " + std::to_string(record_length) +
                              " bytes (" + std::to_string(overhead) + " of framing)");
}

// Appends one framed record to `out`.
inline void check_payload_size(std::uint64_t n) {
    if (n > max_payload_bytes)
        throw UsageError("tfrecord: a payload of " + std::to_string(n) + " bytes exceeds the limit of " +
                         std::to_string(max_payload_bytes) + " (tfrecord::max_payload_bytes; protobuf messages stay below 2 GiB)");
}

inline void append(std::string& out, std::string_view payload, Footer footer = Footer::smdebug_constant) {
    check_payload_size(payload.size());
    out.reserve(out.size() + overhead + payload.size());  // one reallocation (geometric), not two
    char header[header_size];
    const std::uint64_t len = payload.size();
    std::memcpy(header, &len, 8);
    const std::uint32_t len_crc = masked_crc32c(std::as_bytes(std::span<const char>(header, 8)));
    std::memcpy(header + 8, &len_crc, 4);
    out.append(header, header_size);
    out.append(payload);
    const std::uint32_t f = footer == Footer::smdebug_constant
                                ? smdebug_footer
                                : masked_crc32c(std::as_bytes(std::span<const char>(payload.data(), payload.size())));
    char fb[4];
    std::memcpy(fb, &f, 4);
    out.append(fb, 4);
}

// Appends one framed record whose `payload_size` bytes `write_payload(out)` appends itself (no
// intermediate payload copy).
template <class F>
void append_with(std::string& out, std::size_t payload_size, F&& write_payload, Footer footer = Footer::smdebug_constant) {
    check_payload_size(payload_size);
    out.reserve(out.size() + overhead + payload_size);
    char header[header_size];
    const std::uint64_t len = payload_size;
    std::memcpy(header, &len, 8);
    const std::uint32_t len_crc = masked_crc32c(std::as_bytes(std::span<const char>(header, 8)));
    std::memcpy(header + 8, &len_crc, 4);
    out.append(header, header_size);
    const std::size_t start = out.size();
    write_payload(out);
    if (out.size() - start != payload_size)
        throw UsageError("tfrecord::append_with: the payload writer appended " + std::to_string(out.size() - start) +
                         " bytes, not " + std::to_string(payload_size));
    const std::uint32_t f = footer == Footer::smdebug_constant
                                ? smdebug_footer
                                : masked_crc32c(std::as_bytes(std::span<const char>(out.data() + start, payload_size)));
    char fb[4];
    std::memcpy(fb, &f, 4);
    out.append(fb, 4);
}

// Iterates the records of a whole file's bytes in order.
class Scanner {
public:
    Scanner(std::span<const std::byte> data, std::string context) : data_(data), ctx_(std::move(context)) {}
    bool next(Record& r) {
        if (offset_ >= data_.size()) return false;
        r = parse(data_.subspan(offset_), ctx_ + " at offset " + std::to_string(offset_));
        last_offset_ = offset_;
        offset_ += r.size;
        return true;
    }
    std::size_t offset() const noexcept { return last_offset_; }

private:
    std::span<const std::byte> data_;
    std::string ctx_;
    std::size_t offset_ = 0, last_offset_ = 0;
};

}  // namespace smdebug::tfrecord
