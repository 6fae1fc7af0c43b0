#pragma once
// RecordReader: reads the saved records an index points at, with the reference's rules for files
// the writer has not finished (SEMANTICS.md §8):
//  - a missing event file runs the reference's retry loop: TensorUnavailableForStep when the file
//    was skipped, when training has ended, or after the retry limit (waits of poll_interval in
//    between);
//  - a short file or a record that does not decode (length or payload CRC not yet valid) is a
//    file the writer has not finished: StepNotYetAvailable while training runs. After the end
//    the record is read once more (it may have been completed just before the marker) and a
//    FormatError naming the file and offset escapes if it still does not decode.
#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/event.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/query/step_index.hpp>
#include <smdebug/storage/parallel.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

// Whether the writer has marked the end of training (training_job_end.ts).
template <Store S>
bool training_ended(const S& store) {
    return store.exists(paths::end_marker);
}

// One record to read, for the step and mode named in errors.
struct ReadRequest {
    const Location* location;
    std::int64_t step;
    Mode mode;
};
// Its value, or the error reading it raised.
struct ReadResult {
    std::shared_ptr<const TensorValue> value;
    std::exception_ptr error;
};

template <Store S>
class RecordReader {
public:
    // `store` and `files` must outlive the reader.
    RecordReader(const S& store, const EventFiles& files, int missing_event_file_retry_limit,
                 std::chrono::milliseconds poll_interval)
        : store_(&store), files_(&files), retry_limit_(missing_event_file_retry_limit), poll_interval_(poll_interval) {}

    const std::string& event_key(const Location& loc) const { return files_->key(loc); }
    // The event file's full path or URL, for messages.
    std::string describe(const Location& loc) const { return store_->describe(event_key(loc)); }

    // Reads several records at once: one read_ranges call (one pass over each event file, files
    // in parallel; parallel ranged GETs on S3), each record decoded in place on a few threads
    // when the batch is large (values are views into the read buffers). A record that cannot be
    // fetched or decoded that way — or every record, when the batch read itself fails — is read
    // again through read_value(), so the missing-file and not-yet-written rules apply exactly as
    // for one value (and its error names the file and offset). Results are in request order; an
    // error is stored for the records that still fail. `tensor_of(i)`: the tensor of request i.
    template <class TensorOf>
        requires std::invocable<TensorOf&, std::size_t>
    std::vector<ReadResult> read_values(std::span<const ReadRequest> requests, TensorOf&& tensor_of) const {
        std::vector<ReadResult> out(requests.size());
        std::vector<RangeRequest> ranges;
        ranges.reserve(requests.size());
        for (const auto& r : requests) ranges.push_back({event_key(*r.location), r.location->start, r.location->length});
        std::vector<ByteBuffer> buffers;
        try {
            buffers = smdebug::read_ranges(*store_, ranges);
        } catch (const SMDebugError&) {
            buffers.clear();  // fall back to one read per record below
        }
        if (buffers.size() == requests.size()) {
            std::uint64_t total = 0;
            for (const auto& b : buffers) total += b.size();
            const std::size_t n = requests.size();
            const std::size_t chunks = total >= (std::uint64_t{1} << 20) ? std::min(detail::default_read_threads(), n) : 1;
            detail::parallel_for(chunks, chunks, [&](std::size_t c) {
                for (std::size_t i = c * n / chunks; i < (c + 1) * n / chunks; ++i) {
                    try {
                        auto buf = std::make_shared<ByteBuffer>(std::move(buffers[i]));
                        const auto record = tfrecord::parse(buf->bytes(), ranges[i].key);
                        out[i].value = std::make_shared<const TensorValue>(event::decode(buf, record.payload, ranges[i].key).value);
                    } catch (const FormatError&) {
                        // not complete yet, or corrupt: decided by read_value below
                    }
                }
            });
        }
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (out[i].value) continue;
            try {
                out[i].value = read_value(*requests[i].location, tensor_of(i), requests[i].step, requests[i].mode);
            } catch (...) {
                out[i].error = std::current_exception();
            }
        }
        return out;
    }
    std::vector<ReadResult> read_values(std::span<const ReadRequest> requests, const std::string& tensor) const {
        return read_values(requests, [&](std::size_t) -> const std::string& { return tensor; });
    }

    // Reads and decodes the record at `loc` (see the top of this file).
    std::shared_ptr<const TensorValue> read_value(const Location& loc, const std::string& tensor, std::int64_t step,
                                                  Mode mode) const {
        const std::string& key = event_key(loc);
        const std::string where = store_->describe(key) + " at offset " + std::to_string(loc.start);
        bool reread_after_end = false;
        while (true) {
            try {
                auto buf = std::make_shared<ByteBuffer>(store_->read_range(key, loc.start, loc.length));
                const auto record = tfrecord::parse(buf->bytes(), where);
                auto ev = event::decode(buf, record.payload, where);
                return std::make_shared<const TensorValue>(std::move(ev.value));
            } catch (const ObjectNotFound&) {
                int retry = 0;
                bool present = false;
                while (!present && retry < retry_limit_) {
                    if (event_file_skipped(key) || training_ended(*store_)) throw TensorUnavailableForStep(tensor, step, mode);
                    present = store_->exists(key);
                    ++retry;
                    if (!present) std::this_thread::sleep_for(poll_interval_);
                }
                if (retry >= retry_limit_) throw TensorUnavailableForStep(tensor, step, mode);
            } catch (const FormatError&) {
                if (!training_ended(*store_)) throw StepNotYetAvailable(step, mode);
                if (reread_after_end) throw;
                reread_after_end = true;
            }
        }
    }

private:
    // SEMANTICS.md §8's "skipped" test for a missing event file: the first event file of the same
    // worker that sorts at or after it belongs to another step.
    bool event_file_skipped(const std::string& key) const {
        const auto missing = paths::parse_step_file(key);
        if (!missing) return false;
        for (const auto& k : store_->list(paths::events_prefix, paths::events_step_prefix(missing->step))) {
            if (k < key) continue;
            const auto sf = paths::parse_step_file(k);
            if (sf && sf->worker == missing->worker) return sf->step != missing->step;
        }
        return false;
    }

    const S* store_;
    const EventFiles* files_;
    int retry_limit_;
    std::chrono::milliseconds poll_interval_;
};

}  // namespace smdebug::detail
