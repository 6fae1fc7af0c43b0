#pragma once
// parallel_for: runs fn(0..n-1) on up to `workers` threads (the caller's included), for the batch
// readers (many files at once locally, many GETs in flight on S3). The first exception is
// rethrown after every thread has stopped; once one task failed, no new task starts.
//
// The helper threads come from a HelperPool owned by an object the user holds (a LocalStore and
// its copies, a Trial): started on first use, parked between batches, joined when the owner goes.
// A rule reads a step's tensors in one batch per step, and starting threads for every batch cost
// more than the reads of small steps (docs/performance.md). The caller always works on its own
// batch too, so a batch completes even when every pool thread is busy (nested calls cannot
// deadlock), and the caller only waits for helpers that actually joined in.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
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

class HelperPool {
public:
    explicit HelperPool(std::size_t max_threads = 3) : max_threads_(max_threads) {}
    HelperPool(const HelperPool&) = delete;
    HelperPool& operator=(const HelperPool&) = delete;
    // Joins the parked threads. No batch may be in flight (its caller would still be waiting).
    ~HelperPool() {
        {
            std::lock_guard lock(mu_);
            stopping_ = true;
        }
        work_cv_.notify_all();
        for (auto& t : threads_) t.join();
    }

    // One batch: helpers call `work` until it returns; `wanted` helpers at most join.
    struct Batch {
        std::function<void()> work;
        std::size_t wanted = 0;
        std::size_t joined = 0;  // helpers that took the batch
        std::size_t done = 0;    // helpers that finished it
    };

    // Offers the batch to up to batch.wanted helpers (starting threads up to `max_threads`).
    void offer(Batch& batch) {
        std::lock_guard lock(mu_);
        while (threads_.size() < std::min(batch.wanted, max_threads_)) {
            try {
                threads_.emplace_back([this] { run(); });
            } catch (...) {
                break;  // no thread: the caller does the work
            }
        }
        if (threads_.empty()) return;
        queue_.push_back(&batch);
        work_cv_.notify_all();
    }

    // Withdraws the batch and waits until every helper that joined it has finished.
    void finish(Batch& batch) {
        std::unique_lock lock(mu_);
        std::erase(queue_, &batch);
        done_cv_.wait(lock, [&] { return batch.done == batch.joined; });
    }
    // The same, but while the batch's helpers work the caller takes queued batches as a helper
    // would, instead of sleeping: a reader waiting for a read-ahead that a helper started joins
    // the reads that read-ahead queued (or starts the next one). With one helper on two cores,
    // sleeping there serialised the read-ahead and the caller's own work.
    void finish_helping(Batch& batch) {
        std::unique_lock lock(mu_);
        std::erase(queue_, &batch);
        while (batch.done != batch.joined) {
            if (queue_.empty()) {
                done_cv_.wait(lock);
                continue;
            }
            run_one(lock);
        }
    }

    std::size_t threads() const {
        std::lock_guard lock(mu_);
        return threads_.size();
    }

private:
    void run() {
        std::unique_lock lock(mu_);
        while (true) {
            work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping
            run_one(lock);
        }
    }
    // Joins the first queued batch and works on it (mu_ held on entry and on return).
    void run_one(std::unique_lock<std::mutex>& lock) {
        Batch* b = queue_.front();
        if (++b->joined >= b->wanted) queue_.pop_front();
        lock.unlock();
        b->work();  // never throws: parallel_for's and BackgroundTask's work catch
        lock.lock();
        ++b->done;
        done_cv_.notify_all();
    }

    std::size_t max_threads_;
    mutable std::mutex mu_;
    std::condition_variable work_cv_, done_cv_;
    std::deque<Batch*> queue_;
    std::vector<std::thread> threads_;  // started on demand, parked until the pool goes
    bool stopping_ = false;
};

template <class F>
void parallel_for(HelperPool& pool, std::size_t n, std::size_t workers, F&& fn) {
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
    HelperPool::Batch batch;
    batch.work = work;
    batch.wanted = workers - 1;
    pool.offer(batch);
    work();
    pool.finish(batch);
    if (error) std::rethrow_exception(error);
}

// fn() started on a pool helper when one is free; wait() returns once it has run — on the waiting
// thread itself when no helper took it yet, so waiting never depends on a free helper. Exceptions
// from fn are rethrown by wait(). For read-ahead: the next step's reads overlap this step's work.
class BackgroundTask {
public:
    BackgroundTask(HelperPool& pool, std::function<void()> fn) : pool_(pool), fn_(std::move(fn)) {
        batch_.work = [this] { run_once(); };
        batch_.wanted = 1;
        pool_.offer(batch_);
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
        pool_.finish_helping(batch_);
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
    }

    HelperPool& pool_;
    std::function<void()> fn_;
    HelperPool::Batch batch_;
    std::atomic<bool> started_{false};
    bool waited_ = false;
    std::exception_ptr error_;
};

}  // namespace smdebug::detail
