#pragma once
// RecordReader: reads the saved records an index points at, with the reference's rules for files
// the writer has not finished (docs/semantics.md §7):
//  - a missing event file runs the reference's retry loop: TensorUnavailableForStep when the file
//    was skipped, when training has ended, or after the retry limit (waits of poll_interval in
//    between);
//  - a short file or a record that does not decode (length or payload CRC not yet valid) is a
//    file the writer has not finished: StepNotYetAvailable while training runs. After the end
//    the record is read once more (it may have been completed just before the marker) and a
//    FormatError naming the file and offset escapes if it still does not decode.
// On a latency-bound store (S3) a read of a few records of a small event file fetches the file's
// whole run of records and keeps the rest in an EventFileCache for later reads. A record served
// from there that does not decode is read again as above, so the rules do not change.
#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/event.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/query/detail/batch_decode.hpp>
#include <smdebug/query/detail/event_file_cache.hpp>
#include <smdebug/query/detail/read_ahead.hpp>
#include <smdebug/query/detail/record_decoding.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/detail/value_cache.hpp>
#include <smdebug/storage/detail/parallel.hpp>
#include <smdebug/storage/detail/range_plan.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

// Whether the writer has marked the end of training (training_job_end.ts).
template <Store S>
bool training_ended(const S& store) {
    return smdebug::exists(store, paths::end_marker);
}

template <Store S>
class RecordReader {
public:
    // `store` and `files` must outlive the reader. event_file_cache_bytes: see
    // TrialOptions::event_file_cache_bytes (used on latency-bound stores only); cache_values:
    // TrialOptions::cache (values kept once read, in the reader's ValueCache); read_ahead:
    // TrialOptions::read_ahead (batches of later steps read ahead on `helpers`, latency-bound
    // stores only); `budget`: the decoder's expansion budget (TrialOptions::max_expanded_elements).
    //
    // Reading changes the reader (its caches, its read-ahead, its counters): the members that
    // read are not const. The const ones (describe, describe_record, counters) change nothing.
    RecordReader(const S& store, HelperPool& helpers, const EventFiles& files, int missing_event_file_retry_limit,
                 std::chrono::milliseconds poll_interval, std::uint64_t event_file_cache_bytes = 0, bool cache_values = false,
                 bool read_ahead = true, std::size_t max_expanded_elements = event::detail::max_broadcast_elements)
        : store_(&store), budget_(max_expanded_elements), files_(&files), retry_limit_(missing_event_file_retry_limit), poll_interval_(poll_interval),
          values_(cache_values),
          read_ahead_(store, helpers, read_ahead) {
        if (event_file_cache_bytes > 0 && latency_bound(store)) file_cache_.emplace(event_file_cache_bytes);
    }

    const std::string& event_key(const Location& loc) const {
        const std::string& key = files_->key(loc);
        if (key.empty())
            throw FileRefused("a record of " + smdebug::describe(*store_, "index/") +
                              " cannot be read: its index file names no event file (meta.event_file_name is empty)");
        return key;
    }
    // The event file's full path or URL, for messages.
    std::string describe(const Location& loc) const { return smdebug::describe(*store_, event_key(loc)); }

    // Reads several records at once: one read_ranges call (one pass over each event file, files
    // in parallel; parallel ranged GETs on S3), each record decoded in place by the thread that
    // read it while its bytes are in cache (values are views into the read buffers). Results are
    // in request order. A record that does not decode carries its error with its request — naming
    // the file, the offset and the tensor asked for — and is not read again: a record of another
    // tensor or step (D24) or a changed payload is final; any other decoding error is a record the
    // writer has not finished, StepNotYetAvailable while training runs and final once it has
    // ended (docs/semantics.md §7), except when the end is first seen after this batch was read:
    // then the record is read once more, alone (it may have been completed just before the
    // marker). Records the batch did not reach (its read failed: a missing event file, a read
    // error) and empty records are read alone, with the missing-file rules (read_value()).
    //
    // on_decoded(i, value), when given, is called once for each request whose value was read, on
    // the thread that decoded it while its bytes are still in cache (so concurrently, for distinct
    // i; on the calling thread for records read one by one or already read ahead). It must not throw.
    // With ValueRetention::drop the results hold no values (only `bytes` and `read`).
    template <class OnDecoded = IgnoreDecoded>
        requires std::invocable<OnDecoded&, std::size_t, const TensorValue&>
    std::vector<ReadResult> read_values(std::span<const ReadRequest> requests, OnDecoded&& on_decoded = {},
                                        ValueRetention retention = ValueRetention::keep) {
        std::vector<ReadResult> out(requests.size());
        const bool check = retention == ValueRetention::check;
        const bool ended_before = ended_;
        const auto settle = [&](std::size_t i, DecodedRecord d) {
            if (d.value) on_decoded(i, *d.value);
            out[i].bytes = d.bytes;
            out[i].read = true;
            if (retention == ValueRetention::keep) out[i].value = std::move(d.value);
        };
        const auto fail = [&](std::size_t i, CutRecord c) {
            out[i].error = std::move(c.error);
            out[i].unfinished = !c.final_error;
        };
        if (auto ahead = read_ahead_.take(requests)) {
            for (std::size_t i = 0; i < requests.size(); ++i) {
                auto& r = (*ahead)[i];
                if (r.value) settle(i, {r.value, r.value->byte_size()});
                else out[i].error = std::move(r.error);
            }
        } else {
            // Large records join the batch once their headers agree with their entries.
            std::vector<std::size_t> batch_index;
            std::vector<ReadRequest> batch_requests;
            std::span<const ReadRequest> batch = requests;
            if (const auto apart = check_large_headers(requests, fail); !apart.empty()) {
                for (std::size_t i = 0; i < requests.size(); ++i)
                    if (!std::binary_search(apart.begin(), apart.end(), i)) {
                        batch_index.push_back(i);
                        batch_requests.push_back(requests[i]);
                    }
                batch = batch_requests;
            }
            const auto at = [&](std::size_t k) { return batch_index.empty() ? k : batch_index[k]; };
            const auto settle_batch = [&](std::size_t k, DecodedRecord d) { settle(at(k), std::move(d)); };
            const auto fail_batch = [&](std::size_t k, CutRecord c) { fail(at(k), std::move(c)); };
            if (file_cache_) {
                read_through_file_cache(batch, check, settle_batch, fail_batch);
            } else {
                // Each record is decoded by the thread that read it, right after the read (in cache).
                try {
                    read_and_decode(*store_, plan_of(batch), check, asked_of(batch), settle_batch, fail_batch);
                } catch (const SMDebugError&) {
                    // the records the batch did not reach are read one by one below
                }
            }
        }
        settle_unfinished(requests, out, ended_before);
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (out[i].read || out[i].error) continue;
            DecodedRecord d;
            try {
                d = read_record(*requests[i].location, requests[i].tensor, requests[i].step, requests[i].mode, check);
            } catch (...) {
                out[i].error = std::current_exception();
                continue;
            }
            settle(i, std::move(d));
        }
        return out;
    }

    // A buffer for a caller's requests, kept from one batch to the next (a whole trial read batch
    // after batch would otherwise fault in fresh pages for each).
    std::vector<ReadRequest>& request_buffer() noexcept { return request_buffer_; }

    // Training has ended (the Trial saw the end marker): from now on a record that does not decode
    // is corrupt, not unfinished.
    void note_training_ended() noexcept { ended_ = true; }

    // Read-ahead (ReadAheadQueue): `requests` read and decoded on helper threads — the next steps
    // of a rule while it checks this one. Records that did not decode are read again by read_values() with the
    // rules above. False when the batch does not fit (nothing started).
    static constexpr std::size_t max_read_ahead_steps = ReadAheadQueue<S>::max_steps;
    bool prefetch(Mode mode, std::int64_t step, std::span<const ReadRequest> requests) {
        std::vector<std::pair<std::string_view, std::int64_t>> asked;
        asked.reserve(requests.size());
        for (const auto& r : requests) asked.emplace_back(r.tensor, r.step);
        return read_ahead_.prefetch(mode, step, plan_of(requests), std::move(asked), ended_);
    }
    // Batches served from the read-ahead (for tests and benchmarks).
    std::uint64_t read_ahead_hits() const noexcept { return read_ahead_.hits(); }
    // ReadAheadQueue's: what the batches read ahead.
    std::optional<std::int64_t> last_read_ahead(Mode mode) const { return read_ahead_.last_read_ahead(mode); }
    bool read_ahead_enabled() const noexcept { return read_ahead_.enabled(); }
    bool note_batch_step(Mode mode, std::int64_t step) { return read_ahead_.note_batch_step(mode, step); }

    // Records longer than this have their 12-byte header read and checked against the index entry
    // before the payload is read (tfrecord::check_header): an entry pointing into a huge or sparse
    // file costs 12 bytes, not the length it claims. Shorter records are read whole at once (a
    // bogus entry then costs at most this much; a separate header read would cost real tensors of
    // a few MiB an extra request each).
    static constexpr std::uint64_t header_first_bytes = std::uint64_t{16} << 20;

    // Checks the 12-byte headers of the records longer than header_first_bytes against their
    // entries, read in one batch: a header that does not agree is that record's error, handed to
    // fail(i, CutRecord). Returns the indices (ascending) of the records kept out of the batch:
    // those, and those whose header the batch did not reach (read alone).
    template <class Fail>
    std::vector<std::size_t> check_large_headers(std::span<const ReadRequest> requests, Fail& fail) const {
        std::vector<std::size_t> large, apart;
        std::vector<RangeRequest> headers;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const Location& l = *requests[i].location;
            if (l.length <= header_first_bytes || files_->key(l).empty()) continue;
            large.push_back(i);
            headers.push_back({files_->key(l), l.start, tfrecord::header_size});
        }
        if (large.empty()) return apart;
        std::vector<char> ok(large.size(), 0);  // set from reading threads: not vector<bool>
        try {
            smdebug::read_ranges(*store_, headers, [&](std::size_t j, ByteBuffer&& h) {
                const std::string& key = headers[j].key;
                try {
                    tfrecord::check_header(h.bytes(), requests[large[j]].location->length, key);
                    ok[j] = 1;
                } catch (const FormatError&) {
                    CutRecord c;
                    try {
                        rethrow_at(key, smdebug::describe(*store_, key) + " at offset " + std::to_string(headers[j].offset));
                    } catch (...) {
                        c.error = std::current_exception();
                    }
                    fail(large[j], std::move(c));
                }
            });
        } catch (const SMDebugError&) {
            // headers not reached: their records are read (and checked) one by one
        }
        for (std::size_t j = 0; j < large.size(); ++j)
            if (!ok[j]) apart.push_back(large[j]);
        return apart;
    }

    // What the record at `loc` holds — tag, step, dtype, shape — read and checked (CRCs, D24) but
    // not decoded: a broadcast value is not expanded (event::describe). Errors as read_value's,
    // without its waits for a missing file.
    event::EventDescription describe_record(const Location& loc, const std::string& tensor, std::int64_t step, Mode mode) const {
        const std::string& key = event_key(loc);
        const std::string where = smdebug::describe(*store_, key) + " at offset " + std::to_string(loc.start);
        try {
            if (loc.length > header_first_bytes) {
                const auto header = store_->read_range(key, loc.start, tfrecord::header_size);
                tfrecord::check_header(header.bytes(), loc.length, where);
            }
            const auto bytes = store_->read_range(key, loc.start, loc.length);
            const auto record = tfrecord::parse(bytes.bytes(), where);
            check_payload(record.payload, loc, where);
            auto d = event::describe(record.payload, where);
            check_identity(d.tag, d.step, loc, where, tensor);
            return d;
        } catch (const FileRefused&) {
            throw;
        } catch (const RecordMismatch&) {
            throw;
        } catch (const PayloadChecksumMismatch& e) {
            throw_naming_tensor(e, tensor, step);
        } catch (const ObjectNotFound&) {
            throw TensorUnavailableForStep(tensor, step, mode);
        } catch (const FormatError&) {
            if (!training_ended(*store_)) throw StepNotYetAvailable(step, mode);
            throw;
        }
    }

    // Reads and decodes the record at `loc` (see the top of this file).
    std::shared_ptr<const TensorValue> read_value(const Location& loc, const std::string& tensor, std::int64_t step,
                                                  Mode mode) {
        return read_record(loc, tensor, step, mode, false).value;
    }

    // The value kept for the record at `loc` (TrialOptions::cache), or null; remember() keeps one
    // (nothing when the trial does not cache values).
    std::shared_ptr<const TensorValue> cached(const Location& loc) const { return values_.find(loc); }
    void remember(const Location& loc, std::shared_ptr<const TensorValue> value) { values_.insert(loc, std::move(value)); }
    bool caches_values() const noexcept { return values_.enabled(); }

    // The event-file cache, when this reader has one (a latency-bound store): for tests and benchmarks.
    const EventFileCache* file_cache() const noexcept { return file_cache_ ? &*file_cache_ : nullptr; }

    // On a latency-bound store, a read that asks for one record of an event file of at most this
    // size (and at most half of it) fetches the file whole: beyond it, a request's bytes start to
    // cost more than its round trip.
    static constexpr std::uint64_t max_whole_file_bytes = std::uint64_t{1} << 20;

private:
    // read_value, or with `check` the record checked without building its value (ValueRetention::check).
    DecodedRecord read_record(const Location& loc, std::string_view tensor, std::int64_t step, Mode mode, bool check) {
        if (file_cache_) {
            auto c = record_from_whole_file(loc, tensor, step, check);
            if (c) return std::move(*c.record);
            if (c.final_error) std::rethrow_exception(c.error);
        }
        const std::string& key = event_key(loc);
        const std::string where = smdebug::describe(*store_, key) + " at offset " + std::to_string(loc.start);
        bool reread_after_end = ended_;  // ended before this read: what it reads is final
        while (true) {
            try {
                if (loc.length > header_first_bytes) {
                    const auto header = store_->read_range(key, loc.start, tfrecord::header_size);
                    tfrecord::check_header(header.bytes(), loc.length, where);
                }
                auto bytes = store_->read_range(key, loc.start, loc.length);
                return decode_record(bytes, where, loc, check, nullptr, tensor, budget_);
            } catch (const FileRefused&) {
                throw;  // a FIFO, device or link out of the trial does not become readable by waiting
            } catch (const RecordMismatch&) {
                throw;  // a whole record (valid CRCs) of another tensor or step: waiting changes nothing
            } catch (const PayloadChecksumMismatch& e) {
                throw_naming_tensor(e, tensor, step);  // written whole before its index entry: a changed record
            } catch (const ObjectNotFound&) {
                int retry = 0;
                bool present = false;
                while (!present && retry < retry_limit_) {
                    if (event_file_skipped(key) || training_ended(*store_)) throw TensorUnavailableForStep(std::string(tensor), step, mode);
                    present = smdebug::exists(*store_, key);
                    ++retry;
                    if (!present) std::this_thread::sleep_for(poll_interval_);
                }
                if (retry >= retry_limit_) throw TensorUnavailableForStep(std::string(tensor), step, mode);
            } catch (const FormatError&) {
                if (!ended_ && !training_ended(*store_)) throw StepNotYetAvailable(step, mode);
                ended_ = true;
                if (reread_after_end) throw;
                reread_after_end = true;
            }
        }
    }

    // The unfinished-file rule for the records of a batch whose decoding error may be a record the
    // writer has not finished (ReadResult::unfinished): the end marker is asked about once, for
    // the whole batch.
    void settle_unfinished(std::span<const ReadRequest> requests, std::vector<ReadResult>& out, bool ended_before) {
        std::optional<bool> ended;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (!out[i].unfinished) continue;
            out[i].unfinished = false;
            if (ended_before) continue;  // final: training had ended before the batch was read
            if (!ended) ended = ended_ || training_ended(*store_);
            if (*ended) {
                ended_ = true;
                out[i].error = nullptr;  // ended since the read: read once more, alone
            } else {
                out[i].error = std::make_exception_ptr(StepNotYetAvailable(requests[i].step, requests[i].mode));
            }
        }
    }

    // Whether reading the record of `requested` bytes of `event_file` should fetch the file's whole
    // run of records instead, `planned` bytes of other whole files being about to join the cache.
    // Only a lone record is worth it: that is a read tensor by tensor, which will want the other
    // records next; a read of several records of a file (a step of a rule, a batch of verify) has
    // what it wants and would leave the rest in the cache unread.
    bool worth_whole_file(std::uint32_t event_file, std::uint64_t requested, std::uint64_t planned) const {
        const auto& e = files_->extent(event_file);
        return e.records > 1 && e.size() <= max_whole_file_bytes && requested <= e.size() / 2 &&
               !file_cache_->holds(event_file) && file_cache_->fits(e.size(), planned);
    }

    // read_record's first try on a latency-bound store: the record from the cache, or from its event
    // file fetched whole (the rest kept). Nothing (no record, no error) when neither was there to
    // try: the caller then reads the record alone, with every rule of a plain read. A record that
    // does not decode gives its error, final (CutRecord::final_error) when it is final whatever the
    // writer does, or when the file was fetched here after training had ended; bytes from the
    // cache may have been read before the writer finished the record, so their other errors are not.
    CutRecord record_from_whole_file(const Location& loc, std::string_view tensor, std::int64_t step, bool check) {
        const std::string& key = event_key(loc);
        const bool ended_before = ended_;
        bool fetched = false;
        auto bytes = file_cache_->take(loc);
        if (!bytes) {
            if (!worth_whole_file(loc.event_file, loc.length, 0)) return {};
            const auto& e = files_->extent(loc.event_file);
            ByteBuffer block;
            try {
                block = store_->read_range(key, e.begin, e.size());
            } catch (const SMDebugError&) {
                return {};
            }
            fetched = true;
            bytes = block.slice(static_cast<std::size_t>(loc.start - e.begin), static_cast<std::size_t>(loc.length));
            const std::uint64_t handed_out = loc.start;
            file_cache_->insert(loc.event_file, e.begin, std::move(block), e.records, std::span(&handed_out, 1));
        }
        auto c = decode_kept_record(*bytes, loc, key, check, tensor, step, [&] { return smdebug::describe(*store_, key); }, budget_);
        if (!c) c.final_error = c.final_error || (fetched && ended_before);
        return c;
    }

    // read_values' batch read on a latency-bound store: records in the cache are cut from it, the
    // others read in one batch in which small event files are fetched whole and then kept. A
    // record of the cache that does not decode is left to read_values' one-by-one reads unless
    // its error is final (see record_from_whole_file).
    template <class Settle, class Fail>
    void read_through_file_cache(std::span<const ReadRequest> requests, bool check, Settle& settle, Fail& fail) {
        std::vector<std::size_t> misses;
        std::vector<ReadRequest> miss_requests;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const Location& loc = *requests[i].location;
            if (auto bytes = file_cache_->take(loc)) {
                const std::string& key = event_key(loc);
                auto c = decode_kept_record(*bytes, loc, key, check, requests[i].tensor, requests[i].step,
                                            [&] { return smdebug::describe(*store_, key); }, budget_);
                if (c) settle(i, std::move(*c.record));
                else if (c.final_error) fail(i, std::move(c));
            } else {
                misses.push_back(i);
                miss_requests.push_back(requests[i]);
            }
        }
        if (misses.empty()) return;
        const auto plan = plan_of(miss_requests, true);
        std::vector<ByteBuffer> blocks(plan.ranges.size());
        try {
            read_and_decode(
                *store_, plan, check, asked_of(miss_requests), [&](std::size_t k, DecodedRecord d) { settle(misses[k], std::move(d)); },
                [&](std::size_t k, CutRecord c) { fail(misses[k], std::move(c)); }, &blocks);
        } catch (const SMDebugError&) {
            // the records the batch did not reach are read one by one by read_values
        }
        std::vector<std::uint64_t> handed_out;
        for (std::size_t j = 0; j < plan.ranges.size(); ++j) {
            if (!plan.whole_file[j] || blocks[j].size() != plan.ranges[j].length) continue;
            handed_out.clear();
            for (std::size_t k = plan.first[j]; k < plan.first[j + 1]; ++k) handed_out.push_back(plan.locations[plan.records[k]].start);
            const std::uint32_t file = plan.locations[plan.records[plan.first[j]]].event_file;
            file_cache_->insert(file, plan.ranges[j].offset, std::move(blocks[j]), files_->extent(file).records, handed_out);
        }
    }

    // read_and_decode's asked_of for a plan of `requests`.
    static auto asked_of(std::span<const ReadRequest> requests) {
        return [requests](std::size_t i) { return std::pair(requests[i].tensor, requests[i].step); };
    }

    // with_whole_files: read the event files worth_whole_file() picks whole (needs the file cache).
    RangePlan plan_of(std::span<const ReadRequest> requests, bool with_whole_files = false) const {
        std::vector<std::uint32_t> whole;  // event files read whole, sorted
        if (with_whole_files) {
            std::vector<std::pair<std::uint32_t, std::uint64_t>> asked;  // (event file, bytes) per record
            for (const auto& r : requests) asked.emplace_back(r.location->event_file, r.location->length);
            std::sort(asked.begin(), asked.end());
            std::uint64_t planned = 0;
            for (std::size_t a = 0; a < asked.size();) {
                const std::uint32_t file = asked[a].first;
                const bool lone = a + 1 == asked.size() || asked[a + 1].first != file;
                if (lone && worth_whole_file(file, asked[a].second, planned)) {
                    whole.push_back(file);
                    planned += files_->extent(file).size();
                }
                while (a < asked.size() && asked[a].first == file) ++a;
            }
        }
        auto plan = plan_ranges(requests, *files_, whole, [this](const Location& l) -> const std::string& { return event_key(l); });
        plan.expansion_budget = budget_;
        return plan;
    }

    // The "skipped" test of docs/semantics.md §7 for a missing event file: the first event file of
    // the same worker that sorts at or after it belongs to another step.
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
    std::size_t budget_;  // the decoder's expansion budget (TrialOptions::max_expanded_elements)
    const EventFiles* files_;
    int retry_limit_;
    std::chrono::milliseconds poll_interval_;
    bool ended_ = false;  // the end marker was seen (it never goes away)
    std::vector<ReadRequest> request_buffer_;
    std::optional<EventFileCache> file_cache_;
    ValueCache values_;
    ReadAheadQueue<S> read_ahead_;  // declared last: destroyed (waited for) first
};

}  // namespace smdebug::detail
