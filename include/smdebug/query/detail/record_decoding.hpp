#pragma once
// Decoding one saved record as the reader checks it: the TFRecord framing, the payload's CRC-32C
// where the index entry holds one, D24 (the record is the one its index entry names), then the
// value (or, for a check-only read, its description). Values decoded from one read range share
// that range's bytes (ValueGroup).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/crc32c.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/event.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/query/detail/step_index.hpp>

namespace smdebug::detail {

// One record as a batch read gave it: its value, or in a check-only read none (value null) but
// the byte size the value would have.
struct DecodedRecord {
    std::shared_ptr<const TensorValue> value;
    std::size_t bytes = 0;
};

// The values decoded from one read range, made up to max_group at a time instead of one each:
// they share the range's bytes already (slices of one block), so a value kept keeps alive only the
// others' headers besides (and the strings of string tensors, which are copies). Each value is
// handed out as a shared_ptr that shares its group's ownership. A group is sized by the records
// the range asks for, capped: requests repeating one record (decoded once) leave at most one
// group partly unused, whatever their number.
class ValueGroup {
public:
    static constexpr std::size_t max_group = 64;
    explicit ValueGroup(std::size_t records) noexcept : capacity_(std::clamp<std::size_t>(records, 1, max_group)) {}
    std::shared_ptr<const TensorValue> adopt(TensorValue&& value) {
        if (!values_ || used_ == capacity_) {
            values_ = std::make_shared<TensorValue[]>(capacity_);
            used_ = 0;
        }
        TensorValue& slot = values_[used_++];
        slot = std::move(value);
        return std::shared_ptr<const TensorValue>(values_, &slot);
    }

private:
    std::shared_ptr<TensorValue[]> values_;
    std::size_t capacity_;
    std::size_t used_ = 0;
};

// D24: the record must be the one the index entry names (its tag and Event.step). `asked`: the
// tensor the caller asked for (the entry's name; the Location keeps only its hash), named in
// the error when known.
inline void check_identity(std::string_view tag, std::int64_t step, const Location& loc, std::string_view where,
                           std::string_view asked = {}) {
    if (loc.step != Location::no_identity && (step != loc.step || record_tag_hash(tag) != loc.tag_hash)) {
        const std::string wanted = asked.empty() ? std::string("the tensor") : "tensor '" + std::string(asked) + "'";
        throw RecordMismatch(std::string(where) + ": asked for " + wanted + " of step " + std::to_string(loc.step) +
                             ", but the record there holds tensor '" + std::string(tag) + "' of step " + std::to_string(step) +
                             ": the index file points at another record");
    }
}

// The payload's CRC-32C, where the index entry holds one (smdebug-cpp's writers): smdebug's
// TFRecord footer is a constant, so this is what sees a changed byte of a stored value.
inline void check_payload(std::span<const std::byte> payload, const Location& loc, std::string_view where) {
    if (!loc.has_payload_crc) return;
    const std::uint32_t crc = crc32c(payload);
    if (crc != loc.payload_crc)
        throw PayloadChecksumMismatch(std::string(where) + ": the payload's CRC-32C is " + std::to_string(crc) + ", its index entry says " +
                                      std::to_string(loc.payload_crc) + ": the record changed after it was written");
}

[[noreturn]] inline void throw_naming_tensor(const PayloadChecksumMismatch& e, const std::string& tensor, std::int64_t step) {
    throw PayloadChecksumMismatch("tensor '" + tensor + "' at step " + std::to_string(step) + ": " + e.what());
}

// `check`: the record described (event::outline), not decoded; no value. `group`: where the
// value is made (see ValueGroup); null: a value of its own.
inline DecodedRecord decode_record(ByteBuffer& bytes, std::string_view where, const Location& loc, bool check,
                                   ValueGroup* group = nullptr, std::string_view asked = {}) {
    const auto record = tfrecord::parse(bytes.bytes(), where);
    check_payload(record.payload, loc, where);
    if (check) {
        const auto d = event::outline(record.payload, where);
        check_identity(d.tag, d.step, loc, where, asked);
        return {nullptr, d.byte_size};
    }
    auto value = event::decode_value(bytes, bytes.share(), record.payload, where,
                                     [&](std::string_view tag, std::int64_t step) { check_identity(tag, step, loc, where, asked); });
    const auto size = value.byte_size();
    return {group ? group->adopt(std::move(value)) : std::make_shared<const TensorValue>(std::move(value)), size};
}

// A record cut from a larger read (a range, a cached file): nothing when it is short or does not
// decode — not complete yet, or corrupt; read_values then reads it alone, with every rule.
inline std::optional<DecodedRecord> decode_cut_record(ByteBuffer& bytes, const Location& loc, std::string_view where, bool check,
                                                      ValueGroup* group = nullptr) {
    if (bytes.size() != loc.length) return std::nullopt;
    try {
        return decode_record(bytes, where, loc, check, group);
    } catch (const FormatError&) {
        return std::nullopt;
    }
}

// A record cut from a whole event file read for the file cache: decoded from a copy of its own,
// so that its value keeps alive its record's bytes, not the file's (a walk over one tensor's
// steps would otherwise keep every event file it read whole).
inline std::optional<DecodedRecord> decode_kept_record(ByteBuffer& bytes, const Location& loc, std::string_view where, bool check) {
    if (check || bytes.size() != loc.length) return decode_cut_record(bytes, loc, where, check);
    auto own = ByteBuffer::copy_of(bytes.bytes());
    return decode_cut_record(own, loc, where, false);
}

}  // namespace smdebug::detail
