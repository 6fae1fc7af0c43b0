#pragma once
// A batch of records read in one planned set of ranges and decoded by the threads that read them:
// what the record reader asks for (ReadRequest), what it gives back (ReadResult), the plan (which
// records of an event file lie together and are read as one range) and the read itself.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/detail/record_decoding.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

// One record to read, for the step and mode named in errors.
struct ReadRequest {
    const Location* location;
    std::int64_t step;
    Mode mode;
};
// Its value, or the error reading it raised.
struct ReadResult {
    std::shared_ptr<const TensorValue> value;  // null after an error, or when not kept (ValueRetention::drop)
    std::exception_ptr error;
    std::size_t bytes = 0;  // the value's byte_size(), also when it was not kept
    bool read = false;      // the value was read and decoded (no error)
};

// Whether read_values keeps the values it hands to on_decoded. `drop`: for callers that only
// need what on_decoded computes (a reduction); each value is then released by the thread that
// decoded it, right after on_decoded, instead of by the caller after the batch. `check`: no value
// is built at all — each record is read and checked as decoding checks it (CRCs, D24, the
// TensorProto against its shape; event::describe), a broadcast value is not expanded, and
// on_decoded is not called (`smdebug verify`).
enum class ValueRetention : std::uint8_t { keep, drop, check };

// read_values' default on_decoded: nothing.
struct IgnoreDecoded {
    void operator()(std::size_t, const TensorValue&) const noexcept {}
};

// The records of one read as ranges to fetch: records of one event file that lie together
// (adjacent, or apart by at most max_gap_bytes, up to max_range_bytes) are one range — one
// key, one read or ranged GET — and each record is cut from its range after the read. With a
// file cache, a range may be a whole file's run of records (whole_file), kept after the read.
// Empty records are in no range (read_values reads them one by one).
struct RangePlan {
    static constexpr std::uint64_t max_gap_bytes = 4096;
    static constexpr std::uint64_t max_range_bytes = std::uint64_t{8} << 20;
    std::vector<Location> locations;   // per record, in request order
    std::vector<RangeRequest> ranges;
    std::vector<std::size_t> records;  // record indices, grouped by range:
    std::vector<std::size_t> first;    // ranges[j] holds records[first[j] .. first[j + 1])
    std::vector<bool> whole_file;      // per range
};

// Reads the plan's ranges in one batch and hands each decoded record to on_value(i, record) on
// the thread that read it; records that do not decode are left out (read_values reads them
// again). The same record asked for twice is decoded once (decoding may move its bytes) and
// handed to both. `check`: see decode_record. `blocks`, when given, receives the bytes of
// each whole_file range.
template <Store S, class OnValue>
void read_and_decode(const S& store, const RangePlan& plan, bool check, OnValue&& on_value, std::vector<ByteBuffer>* blocks = nullptr) {
    smdebug::read_ranges(store, plan.ranges, [&](std::size_t j, ByteBuffer&& bytes) {
        const RangeRequest& range = plan.ranges[j];
        if (blocks && plan.whole_file[j]) (*blocks)[j] = bytes.slice(0, bytes.size());
        const Location* previous = nullptr;
        std::optional<DecodedRecord> previous_record;
        ValueGroup group(plan.first[j + 1] - plan.first[j]);
        for (std::size_t k = plan.first[j]; k < plan.first[j + 1]; ++k) {
            const std::size_t i = plan.records[k];
            const Location& l = plan.locations[i];
            if (previous && previous->start == l.start && previous->length == l.length) {
                // The same record asked twice: one decode. An entry naming another tensor or
                // step is left out: read alone, it is the RecordMismatch it is.
                if (previous_record && previous->same_identity(l)) on_value(i, *previous_record);
                continue;
            }
            previous = &l;
            auto record_bytes = bytes.slice(static_cast<std::size_t>(l.start - range.offset), static_cast<std::size_t>(l.length));
            previous_record = plan.whole_file[j] ? decode_kept_record(record_bytes, l, range.key, check)
                                                 : decode_cut_record(record_bytes, l, range.key, check, &group);
            if (previous_record) on_value(i, *previous_record);
        }
    });
}

}  // namespace smdebug::detail
