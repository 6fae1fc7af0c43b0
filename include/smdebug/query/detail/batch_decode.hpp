#pragma once
// A batch of records read in one planned set of ranges and decoded by the threads that read them:
// what the record reader asks for (ReadRequest), what it gives back (ReadResult), the plan (which
// records of an event file lie together and are read as one range) and the read itself.
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
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/detail/record_decoding.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/storage/detail/range_plan.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

// One record to read, for the tensor, step and mode named in errors.
struct ReadRequest {
    const Location* location;
    std::string_view tensor;  // the name the request asked for (it outlives the read)
    std::int64_t step;
    Mode mode;
};
// Its value, or the error reading it raised.
struct ReadResult {
    std::shared_ptr<const TensorValue> value;  // null after an error, or when not kept (ValueRetention::drop)
    std::exception_ptr error;
    std::size_t bytes = 0;  // the value's byte_size(), also when it was not kept
    bool read = false;      // the value was read and decoded (no error)
    bool unfinished = false;  // (inside read_values) the error may be a record the writer has not finished
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
    std::size_t expansion_budget = event::detail::max_broadcast_elements;  // TrialOptions::max_expanded_elements
};

// The plan of reading `requests`: their records coalesced into ranges (RangePlan), the event files
// of `whole` (sorted) read whole. `key_of(location)`: its event file's key.
template <class KeyOf>
RangePlan plan_ranges(std::span<const ReadRequest> requests, const EventFiles& files, const std::vector<std::uint32_t>& whole, KeyOf&& key_of) {
    RangePlan plan;
    plan.locations.reserve(requests.size());
    for (const auto& r : requests) plan.locations.push_back(*r.location);
    const auto is_whole = [&](std::uint32_t file) { return std::binary_search(whole.begin(), whole.end(), file); };
    const auto fetches = coalesce_ranges(plan.locations.size(), [&](std::size_t i) {
        const Location& l = plan.locations[i];  // bounded by the index reader: no overflow
        if (!whole.empty() && l.length > 0 && is_whole(l.event_file)) {
            const auto& e = files.extent(l.event_file);
            return ObjectRange<std::uint32_t>{l.event_file, e.begin, e.size()};
        }
        return ObjectRange<std::uint32_t>{l.event_file, l.start, l.length};
    }, {RangePlan::max_gap_bytes, RangePlan::max_range_bytes});
    plan.records.reserve(requests.size());
    for (const auto& f : fetches) {
        const Location& l = plan.locations[f.members.front()];
        const bool whole_file = !whole.empty() && is_whole(l.event_file);
        plan.first.push_back(plan.records.size());
        plan.ranges.push_back({key_of(l), f.begin, f.end - f.begin});
        plan.whole_file.push_back(whole_file);
        plan.records.insert(plan.records.end(), f.members.begin(), f.members.end());
        if (whole_file)  // members share the file's range: order them by offset (repeats adjacent)
            std::sort(plan.records.begin() + static_cast<std::ptrdiff_t>(plan.first.back()), plan.records.end(),
                      [&](std::size_t a, std::size_t b) {
                          const Location &x = plan.locations[a], &y = plan.locations[b];
                          return std::pair(x.start, x.length) < std::pair(y.start, y.length);
                      });
    }
    plan.first.push_back(plan.records.size());
    return plan;
}

// Reads the plan's ranges in one batch and hands each record, on the thread that read it, to
// on_value(i, DecodedRecord) or, when it does not decode, to on_error(i, CutRecord) — the error
// carried with its request, naming the file and offset, never found again by a second read. The
// same record asked for twice is decoded once (decoding may move its bytes) and handed to both; an
// entry naming another tensor or step at the same place is left out (read alone, it is the
// RecordMismatch it is). `check`: see decode_record. `blocks`, when given, receives the bytes of
// each whole_file range. Throws what the store's batch read throws (ranges not read yet then
// reach neither callback). `asked_of(i)`: the tensor and step record i was asked for (as a
// std::pair<std::string_view, std::int64_t>; errors name them).
template <Store S, class AskedOf, class OnValue, class OnError>
void read_and_decode(const S& store, const RangePlan& plan, bool check, AskedOf&& asked_of, OnValue&& on_value, OnError&& on_error,
                     std::vector<ByteBuffer>* blocks = nullptr) {
    smdebug::read_ranges(store, plan.ranges, [&](std::size_t j, ByteBuffer&& bytes) {
        const RangeRequest& range = plan.ranges[j];
        const auto describe = [&] { return smdebug::describe(store, range.key); };
        if (blocks && plan.whole_file[j]) (*blocks)[j] = bytes.slice(0, bytes.size());
        const Location* previous = nullptr;
        CutRecord previous_record;
        ValueGroup group(plan.first[j + 1] - plan.first[j]);
        for (std::size_t k = plan.first[j]; k < plan.first[j + 1]; ++k) {
            const std::size_t i = plan.records[k];
            const Location& l = plan.locations[i];
            const auto [asked, step] = asked_of(i);
            if (previous && previous->start == l.start && previous->length == l.length) {
                if (!previous->same_identity(l)) continue;
                if (previous_record) on_value(i, *previous_record.record);
                else on_error(i, CutRecord(previous_record));
                continue;
            }
            previous = &l;
            auto record_bytes = bytes.slice(static_cast<std::size_t>(l.start - range.offset), static_cast<std::size_t>(l.length));
            previous_record = plan.whole_file[j]
                                  ? decode_kept_record(record_bytes, l, range.key, check, asked, step, describe, plan.expansion_budget)
                                  : decode_cut_record(record_bytes, l, range.key, check, asked, step, describe, plan.expansion_budget, &group);
            if (previous_record) on_value(i, *previous_record.record);
            else on_error(i, CutRecord(previous_record));
        }
    });
}

}  // namespace smdebug::detail
