#pragma once
// Decoding one saved record as the reader checks it: the TFRecord framing, the payload's CRC-32C
// where the index entry holds one, D24 (the record is the one its index entry names), then the
// value (or, for a check-only read, its description). Values decoded from one read range share
// that range's bytes (ValueGroup).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
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

[[noreturn]] inline void throw_naming_tensor(const PayloadChecksumMismatch& e, std::string_view tensor, std::int64_t step) {
    throw PayloadChecksumMismatch("tensor '" + std::string(tensor) + "' at step " + std::to_string(step) + ": " + e.what());
}

// `check`: the record described (event::outline), not decoded; no value. `group`: where the
// value is made (see ValueGroup); null: a value of its own. `budget`: the most elements a
// broadcast value may expand to (TrialOptions::max_expanded_elements).
inline DecodedRecord decode_record(ByteBuffer& bytes, std::string_view where, const Location& loc, bool check, ValueGroup* group,
                                   std::string_view asked, std::size_t budget) {
    const auto record = tfrecord::parse(bytes.bytes(), where);
    check_payload(record.payload, loc, where);
    if (check) {
        const auto d = event::outline(record.payload, where);
        check_identity(d.tag, d.step, loc, where, asked);
        return {nullptr, d.byte_size};
    }
    auto value = event::decode_value(bytes, bytes.share(), record.payload, where,
                                     [&](std::string_view tag, std::int64_t step) { check_identity(tag, step, loc, where, asked); },
                                     budget);
    const auto size = value.byte_size();
    return {group ? group->adopt(std::move(value)) : std::make_shared<const TensorValue>(std::move(value)), size};
}

// A record cut from a larger read (a range, a cached file): its value, or what decoding it raised.
// `where` is the batch's cheap name for the record's file (its key); an error names the file's
// path and the record's offset, as a read of the record alone does (`describe(key)`).
struct CutRecord {
    std::optional<DecodedRecord> record;
    std::exception_ptr error;
    // The error is a whole record of another tensor or step (D24) or a changed payload (valid
    // framing, CRC-32C of the index entry wrong): final, whatever the writer still does. Any other
    // decoding error may be a record the writer has not finished (docs/semantics.md §7).
    bool final_error = false;
    explicit operator bool() const noexcept { return record.has_value(); }
};

// The decoding error being handled, as a read of the record alone raises it: the same type, its
// message beginning with `where` (the file's path and the record's offset) instead of `key`.
[[noreturn]] inline void rethrow_at(std::string_view key, const std::string& where) {
    const auto at = [&](const std::exception& e) {
        std::string_view m = e.what();
        if (!m.starts_with(key)) return where + ": " + std::string(m);
        m.remove_prefix(key.size());
        return where + std::string(m);
    };
    try {
        throw;
    } catch (const RecordMismatch& e) {
        throw RecordMismatch(at(e));
    } catch (const PayloadChecksumMismatch& e) {
        throw PayloadChecksumMismatch(at(e));
    } catch (const RecordCorrupted& e) {
        throw RecordCorrupted(at(e));
    } catch (const TruncatedData& e) {
        throw TruncatedData(at(e));
    } catch (const FormatError& e) {
        throw FormatError(at(e));
    }
}

// `asked`, `step`: the tensor and step the request names (errors name them). `describe`: the file's
// path for errors, called only when the record does not decode.
template <class Describe>
CutRecord decode_cut_record(ByteBuffer& bytes, const Location& loc, std::string_view key, bool check, std::string_view asked,
                            std::int64_t step, Describe&& describe, std::size_t budget, ValueGroup* group = nullptr) {
    CutRecord out;
    try {
        if (bytes.size() != loc.length)
            throw TruncatedData(std::string(key) + ": the event file ends inside the record (" + std::to_string(bytes.size()) + " of its " +
                                std::to_string(loc.length) + " bytes read)");
        out.record = decode_record(bytes, key, loc, check, group, asked, budget);
    } catch (const FormatError& e) {
        out.final_error = dynamic_cast<const RecordMismatch*>(&e) || dynamic_cast<const PayloadChecksumMismatch*>(&e);
        try {
            try {
                rethrow_at(key, describe() + " at offset " + std::to_string(loc.start));
            } catch (const PayloadChecksumMismatch& changed) {
                throw_naming_tensor(changed, asked, step);
            }
        } catch (...) {
            out.error = std::current_exception();
        }
    }
    return out;
}

// A record cut from a whole event file read for the file cache: decoded from a copy of its own,
// so that its value keeps alive its record's bytes, not the file's (a walk over one tensor's
// steps would otherwise keep every event file it read whole).
template <class Describe>
CutRecord decode_kept_record(ByteBuffer& bytes, const Location& loc, std::string_view key, bool check, std::string_view asked,
                             std::int64_t step, Describe&& describe, std::size_t budget) {
    if (check || bytes.size() != loc.length) return decode_cut_record(bytes, loc, key, check, asked, step, describe, budget);
    auto own = ByteBuffer::copy_of(bytes.bytes());
    return decode_cut_record(own, loc, key, false, asked, step, describe, budget);
}

}  // namespace smdebug::detail
