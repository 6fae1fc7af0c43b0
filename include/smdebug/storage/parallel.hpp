#pragma once
// parallel_for: runs fn(0..n-1) on up to `workers` threads (the caller's included), for the batch
// readers (many files at once locally, many GETs in flight on S3). The first exception is
// rethrown after every thread has stopped; once one task failed, no new task starts.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
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
    std::vector<std::thread> threads;
    threads.reserve(workers - 1);
    try {
        for (std::size_t t = 1; t < workers; ++t) threads.emplace_back(work);
    } catch (...) {
        // Could not start a thread: the threads that did start and this one do the work.
    }
    work();
    for (auto& t : threads) t.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace smdebug::detail
