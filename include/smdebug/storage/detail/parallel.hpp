#pragma once
// parallel_for: runs fn(0..n-1) on up to `workers` threads (the caller's included), for the batch
// readers (many files at once locally, many GETs in flight on S3). The first exception is
// rethrown after every thread has stopped; once one task failed, no new task starts.
//
// The helper threads are started for the batch and joined before parallel_for returns: the
// library leaves no thread running behind a call. Starting a thread costs tens of microseconds,
// so the stores only go parallel for batches that are worth it (LocalReadOptions::parallel_min_bytes;
// S3Store: requests of network latency). Nested calls cannot deadlock: each batch has its own
// threads, and the caller always works on its own batch too.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace smdebug::detail {

// Threads for local batch reads: the machine's cores, at most 4 (reads from the page cache are
// memory-bound; more threads only contend).
inline std::size_t default_read_threads() noexcept {
    const unsigned hw = std::thread::hardware_concurrency();
    return std::clamp<std::size_t>(hw == 0 ? 1 : hw, 1, 4);
}

template <class F>
void parallel_for(std::size_t n, std::size_t workers, F&& fn) {
    if (n == 0) return;
    workers = std::clamp<std::size_t>(workers, 1, n);
    if (workers == 1) {
        for (std::size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mu;
    auto work = [&] {
        while (!failed.load(std::memory_order_relaxed)) {
            const std::size_t i = next.fetch_add(1);
            if (i >= n) return;
            try {
                fn(i);
            } catch (...) {
                std::lock_guard lock(error_mu);
                if (!error) error = std::current_exception();
                failed = true;
            }
        }
    };
    {
        std::vector<std::jthread> helpers;
        helpers.reserve(workers - 1);
        for (std::size_t t = 1; t < workers; ++t) {
            try {
                helpers.emplace_back(work);
            } catch (const std::system_error&) {
                break;  // no thread: the others (and the caller) do the work
            }
        }
        work();
    }  // helpers joined here
    if (error) std::rethrow_exception(error);
}

// fn() started on a thread of its own; wait() returns once it has run — on the waiting thread
// itself when the thread has not begun it yet (or could not be started), so waiting never waits
// for a thread to be scheduled. Exceptions from fn are rethrown by wait(). The thread is joined by
// the destructor (after wait(): a thread that found fn taken ends at once), so an owner that keeps
// finished tasks a little longer (RecordReader's retired read-aheads) never blocks on a thread
// that is still to be scheduled. For read-ahead: the next step's reads overlap this step's work.
class BackgroundTask {
public:
    explicit BackgroundTask(std::function<void()> fn) : fn_(std::move(fn)) {
        try {
            thread_ = std::jthread([this] { run_once(); });
        } catch (const std::system_error&) {
            // no thread: wait() runs fn
        }
    }
    BackgroundTask(const BackgroundTask&) = delete;
    BackgroundTask& operator=(const BackgroundTask&) = delete;
    ~BackgroundTask() {
        try {
            wait();
        } catch (...) {
        }
    }

    void wait() {
        if (waited_) return;
        waited_ = true;
        run_once();
        done_.wait(false);  // fn finished, on whichever thread ran it
        if (error_) std::rethrow_exception(error_);
    }

private:
    void run_once() noexcept {
        if (started_.exchange(true)) return;
        try {
            fn_();
        } catch (...) {
            error_ = std::current_exception();
        }
        done_.store(true);
        done_.notify_all();
    }

    std::function<void()> fn_;
    std::atomic<bool> started_{false};
    std::atomic<bool> done_{false};
    bool waited_ = false;
    std::exception_ptr error_;
    std::jthread thread_;  // last: joined before the members it uses go
};

}  // namespace smdebug::detail
