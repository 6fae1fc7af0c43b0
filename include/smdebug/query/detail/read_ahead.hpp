#pragma once
// The record reader's step read-ahead: while a rule (or any batched read walking forward over
// steps) checks one step, the next steps' records are read and decoded on helper threads, and
// handed out when the caller asks for exactly those records. Only on latency-bound stores (S3),
// where a step waits for round trips: on a local store it was measured slower (docs/performance.md).
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

    // `enabled`: TrialOptions::read_ahead; it runs only when the store is latency-bound.
    // `helpers`: the Trial's helper pool, which outlives the queue.
    ReadAheadQueue(const S& store, HelperPool& helpers, bool enabled)
        : store_(&store), helpers_(&helpers), enabled_(enabled && latency_bound(store)) {}

    // Queues the read of `plan` (records of `step` in `mode`). `ended`: training had ended before
    // this call (decoding errors are then final). False when the batch does not fit (nothing
    // started). `asked`: per record, the tensor and step asked for (errors name them).
    bool prefetch(Mode mode, std::int64_t step, RangePlan plan, std::vector<std::pair<std::string_view, std::int64_t>> asked, bool ended) {
        std::uint64_t bytes = 0, queued = 0;
        for (const auto& l : plan.locations) bytes += l.length;
        for (const auto& a : queue_) queued += a->bytes;
        if (queue_.size() >= max_steps || queued + bytes > max_bytes) return false;
        auto ahead = std::make_unique<Batch>();
        ahead->mode = mode;
        ahead->step = step;
        ahead->bytes = bytes;
        ahead->records.resize(plan.locations.size());
        ahead->plan = std::move(plan);
        ahead->asked = std::move(asked);
        ahead->task.emplace(*helpers_, [store = store_, a = ahead.get(), ended] {
            const auto keep = [a](std::size_t i, DecodedRecord d) { a->records[i].value = std::move(d.value); };
            const auto fail = [a, ended](std::size_t i, CutRecord c) {
                if (c.final_error || ended) a->records[i].error = std::move(c.error);
            };
            const auto asked_of = [a](std::size_t i) { return a->asked[i]; };
            read_and_decode(*store, a->plan, false, asked_of, keep, fail);
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
            queue_.clear();  // the caller walks elsewhere now
            return std::nullopt;
        }
        ++hits_;
        return std::move(ahead->records);
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

    // TrialOptions::read_ahead on a latency-bound store: whether anything is ever read ahead.
    bool enabled() const noexcept { return enabled_; }
    // Batches served from the read-ahead (for tests and benchmarks).
    std::uint64_t hits() const noexcept { return hits_; }

private:
    struct Batch {
        Mode mode = Mode::GLOBAL;
        std::int64_t step = 0;
        std::uint64_t bytes = 0;
        RangePlan plan;
        std::vector<std::pair<std::string_view, std::int64_t>> asked;
        std::vector<AheadRecord> records;
        std::optional<BackgroundTask> task;  // last: waited for before the vectors go
    };
    const S* store_;
    HelperPool* helpers_;
    bool enabled_;
    std::optional<std::pair<Mode, std::int64_t>> last_batch_;
    std::uint64_t hits_ = 0;
    std::deque<std::unique_ptr<Batch>> queue_;  // declared last: destroyed (waited for) first
};

}  // namespace smdebug::detail
