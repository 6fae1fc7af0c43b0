#pragma once
// The record reader's read-ahead: batches of records read and decoded on helper threads while the
// caller works — the next steps of a rule (batches of later steps), or the next records of a walk
// over one tensor's steps (value() step after step) — and handed out when the caller asks for
// exactly those records.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/detail/batch_decode.hpp>
#include <smdebug/query/detail/record_decoding.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/storage/detail/parallel.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

// One record read ahead: its value, or the error reading it raised when that error is final (a
// record of another tensor or step, a changed payload; or any decoding error once training had
// ended before the read-ahead began), or neither: not read (the batch failed before it), or a
// decoding error of a record the writer may have finished since — the reader reads it then.
struct AheadRecord {
    std::shared_ptr<const TensorValue> value;
    std::exception_ptr error;
};

// Up to max_steps batches (at most max_bytes in all). The next read takes the oldest batch when it
// asks for exactly those records; anything else drops them all. The queue stays
// one-thread-at-a-time (its Trial's contract); only helpers touch the store meanwhile.
template <Store S>
class ReadAheadQueue {
public:
    static constexpr std::size_t max_steps = 3;
    static constexpr std::uint64_t max_bytes = std::uint64_t{32} << 20;

    // `enabled`: TrialOptions::read_ahead. `walks`: whether value() walks are read ahead (not on a
    // latency-bound store: its event-file cache serves a walk with one request per file).
    ReadAheadQueue(const S& store, bool enabled, bool walks) : store_(&store), enabled_(enabled), walks_(enabled && walks) {}

    // Queues the read of `plan` (records of `step` in `mode`). `walk`: the tensor of a walk over
    // one tensor's steps; its records are then handed out one by one, in order, by
    // take_walk_record(). `ended`: training had ended before this call (decoding errors are then
    // final). False when the batch does not fit (nothing started).
    // `asked`: per record, the tensor and step asked for (errors name them).
    bool prefetch(Mode mode, std::int64_t step, RangePlan plan, std::vector<std::pair<std::string_view, std::int64_t>> asked, bool ended,
                  const void* walk = nullptr) {
        std::uint64_t bytes = 0, queued = 0;
        for (const auto& l : plan.locations) bytes += l.length;
        for (const auto& a : queue_) queued += a->bytes;
        if (queue_.size() >= max_steps || queued + bytes > max_bytes) return false;
        auto ahead = std::make_unique<Batch>();
        ahead->mode = mode;
        ahead->step = step;
        ahead->bytes = bytes;
        ahead->walk = walk;
        ahead->records.resize(plan.locations.size());
        ahead->plan = std::move(plan);
        ahead->asked = std::move(asked);
        ahead->task.emplace([store = store_, a = ahead.get(), ended] {
            const auto keep = [a](std::size_t i, DecodedRecord d) { a->records[i].value = std::move(d.value); };
            const auto fail = [a, ended](std::size_t i, CutRecord c) {
                if (c.final_error || ended) a->records[i].error = std::move(c.error);
            };
            const auto asked_of = [a](std::size_t i) { return a->asked[i]; };
            try {
                read_and_decode(*store, a->plan, false, asked_of, keep, fail);
            } catch (const SMDebugError&) {
                if (!a->walk) throw;
                // A walk goes on past a range the batch could not read (value() raises its error
                // when it gets there): the records of the ranges the batch did not reach are read
                // one by one.
                for (std::size_t j = 0; j + 1 < a->plan.first.size(); ++j)
                    for (std::size_t k = a->plan.first[j]; k < a->plan.first[j + 1]; ++k) {
                        const std::size_t i = a->plan.records[k];
                        if (a->records[i].value || a->records[i].error) continue;
                        const Location& l = a->plan.locations[i];
                        const std::string& key = a->plan.ranges[j].key;
                        try {
                            auto bytes = store->read_range(key, l.start, l.length);
                            auto d = decode_cut_record(bytes, l, key, false, a->asked[i].first, a->asked[i].second,
                                                       [&] { return store->describe(key); });
                            if (d) keep(i, std::move(*d.record));
                            else fail(i, std::move(d));
                        } catch (const SMDebugError&) {
                        }
                    }
            }
        });
        queue_.push_back(std::move(ahead));
        return true;
    }

    // The records read ahead when the oldest batch read exactly the records of `requests`.
    std::optional<std::vector<AheadRecord>> take(std::span<const ReadRequest> requests) {
        if (queue_.empty()) return std::nullopt;
        const auto ahead = std::move(queue_.front());
        queue_.pop_front();
        try {
            ahead->task->wait();
        } catch (...) {
            return std::nullopt;  // read again, with the errors of the normal path
        }
        if (!std::equal(requests.begin(), requests.end(), ahead->plan.locations.begin(), ahead->plan.locations.end(),
                        [](const ReadRequest& r, const Location& l) { return r.location->same_range(l); })) {
            queue_.clear();  // not a walk any more
            return std::nullopt;
        }
        ++hits_;
        return std::move(ahead->records);
    }

    // The record at `loc` when it is the next record of the tensor walk read ahead first (see
    // AheadRecord); nothing when the read-ahead holds something else (then it is dropped: the walk
    // is over).
    AheadRecord take_walk_record(const Location& loc) {
        if (queue_.empty() || !queue_.front()->walk) return {};
        Batch& a = *queue_.front();
        if (!a.waited) {
            a.waited = true;
            try {
                a.task->wait();
            } catch (...) {
                queue_.clear();
                return {};
            }
        }
        if (!a.plan.locations[a.next].same_range(loc)) {
            queue_.clear();
            return {};
        }
        auto record = std::move(a.records[a.next]);
        if (++a.next == a.records.size()) queue_.pop_front();
        if (record.value) ++walk_hits_;
        return record;
    }

    // Whether value() at (mode, step) of `tensor` for `worker` continues a walk forward over that
    // tensor's steps (the value() before was at an earlier step of the same); remembers it.
    bool note_walk_step(const void* tensor, Mode mode, const std::optional<std::string>& worker, std::int64_t step) {
        const bool forward = walks_ && last_walk_.tensor == tensor && last_walk_.mode == mode && last_walk_.step < step &&
                             last_walk_.worker == worker;
        last_walk_.tensor = tensor;
        last_walk_.mode = mode;
        last_walk_.step = step;
        if (last_walk_.worker != worker) last_walk_.worker = worker;
        last_walk_.values = forward ? last_walk_.values + 1 : 1;
        return forward;
    }
    // Values of the walk note_walk_step last saw, itself included.
    std::size_t walk_length() const noexcept { return last_walk_.values; }
    // The walk batches of `tensor` queued, and the last step they read.
    std::pair<std::size_t, std::optional<std::int64_t>> walk_read_ahead(const void* tensor, Mode mode) const {
        std::size_t queued = 0;
        std::optional<std::int64_t> last;
        for (const auto& a : queue_)
            if (a->walk == tensor && a->mode == mode) {
                ++queued;
                last = a->step;
            }
        return {queued, last};
    }
    // The last step read ahead in `mode`, if any.
    std::optional<std::int64_t> last_read_ahead(Mode mode) const {
        for (auto it = queue_.rbegin(); it != queue_.rend(); ++it)
            if ((*it)->mode == mode) return (*it)->step;
        return std::nullopt;
    }
    // Whether a batch read at (mode, step) continues a walk forward over steps (the batch before
    // was at an earlier step of the same mode); remembers the step.
    bool note_batch_step(Mode mode, std::int64_t step) {
        const bool forward = enabled_ && last_batch_ && last_batch_->first == mode && last_batch_->second < step;
        last_batch_ = std::pair(mode, step);
        return forward;
    }

    // Batches served from the read-ahead, and values of tensor walks (for tests and benchmarks).
    std::uint64_t hits() const noexcept { return hits_; }
    std::uint64_t walk_hits() const noexcept { return walk_hits_; }

private:
    struct Batch {
        Mode mode = Mode::GLOBAL;
        std::int64_t step = 0;
        std::uint64_t bytes = 0;
        RangePlan plan;
        std::vector<std::pair<std::string_view, std::int64_t>> asked;
        std::vector<AheadRecord> records;
        const void* walk = nullptr;  // prefetch()'s `walk`
        std::size_t next = 0;        // a walk's next record to hand out
        bool waited = false;
        std::optional<BackgroundTask> task;  // last: waited for before the vectors go
    };
    struct WalkStep {
        const void* tensor = nullptr;
        Mode mode = Mode::GLOBAL;
        std::int64_t step = 0;
        std::optional<std::string> worker;
        std::size_t values = 0;  // of this walk so far
    };

    const S* store_;
    bool enabled_;
    bool walks_;
    std::optional<std::pair<Mode, std::int64_t>> last_batch_;
    std::uint64_t hits_ = 0;
    std::uint64_t walk_hits_ = 0;
    WalkStep last_walk_;
    std::deque<std::unique_ptr<Batch>> queue_;  // declared last: destroyed (waited for) first
};

}  // namespace smdebug::detail
