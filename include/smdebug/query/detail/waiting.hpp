#pragma once
// Waiting for a running job: polls with backoff (50 ms doubling up to the poll interval), wakes
// early when the writer publishes a file (ChangeWatch on local trials, or the store's own change
// hook), and turns a caller's deadline into a TimeoutError.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include <smdebug/core/errors.hpp>
#include <smdebug/query/change_watch.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

using Deadline = std::chrono::steady_clock::time_point;

// No timeout: Deadline::max().
inline Deadline deadline_after(std::optional<std::chrono::milliseconds> timeout) {
    return timeout ? std::chrono::steady_clock::now() + *timeout : Deadline::max();
}

template <Store S>
class Waiter {
public:
    Waiter(const S& store, std::chrono::milliseconds poll_interval)
        : store_(&store), poll_interval_(poll_interval), local_root_(local_root_of(store)) {}

    // The first pause of a polling loop, and the next one after `delay`.
    std::chrono::milliseconds initial_delay() const {
        return std::max(std::chrono::milliseconds(1), std::min(std::chrono::milliseconds(50), poll_interval_));
    }
    std::chrono::milliseconds next_delay(std::chrono::milliseconds delay) const { return std::min(delay * 2, poll_interval_); }

    // Whether waits can rely on the change watch having seen every change since the last check:
    // a watch exists, or there is nothing to watch (plain sleep).
    // When not, call prepare() and check once more before waiting: the watch must exist before
    // the check that precedes a wait, so that a change landing in between still wakes it.
    bool prepared() const {
        return watch_ != nullptr || !local_root_;
    }
    void prepare() { prepare_store_watch(*store_, watch_); }

    // Waits up to `timeout` for the writer to publish something; true when woken by a change.
    bool wait_for_change(std::chrono::milliseconds timeout) { return wait_for_store_change(*store_, watch_, timeout); }

    // Waits for a change for at most `delay` (cut to the deadline); TimeoutError(message()) once
    // the deadline has passed.
    template <class Message>
    void wait_with_deadline(std::chrono::milliseconds delay, Deadline deadline, Message&& message) {
        if (deadline != Deadline::max()) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= deadline) throw TimeoutError(message());
            delay = std::min(delay, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                                        std::chrono::milliseconds(1));
        }
        wait_for_change(delay);
    }

private:
    const S* store_;
    std::chrono::milliseconds poll_interval_;
    std::optional<std::filesystem::path> local_root_;  // the folder, for a local store
    std::unique_ptr<ChangeWatch> watch_;               // created when the trial first waits
};

}  // namespace smdebug::detail
