#pragma once
// StepQueue: the Hook's writer. Closed steps (and collections files) are queued in order and
// written by one background thread, so the training thread only pays for encoding its tensors.
//
//  - Order and durability: jobs are written one at a time, in the order they were queued; a
//    step writes its event file, then its index (StepWriter), each made durable by the store.
//  - Back-pressure: push() blocks while the queue holds max_steps jobs or max_bytes of event
//    data (a single larger job is still accepted when the queue is empty).
//  - Errors: a job that fails stays at the head of the queue and the writer pauses. The error is
//    handed to the training thread by take_error() / drain() (once per failure); taking it
//    resumes the writer, which retries the same job first. Nothing is dropped.
//  - drain() returns once every queued job is written (or throws the writer's error).
//  - Without a background thread (background = false), drain() writes the jobs on the calling
//    thread, and push() never writes.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include <smdebug/writer/step_writer.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

// A whole file to write (collections file, end marker).
struct FileJob {
    std::string key;
    std::string bytes;
};

template <WritableStore S>
class StepQueue {
public:
    using Job = std::variant<StepWriter, FileJob>;

    StepQueue(const S& store, bool background, std::size_t max_steps, std::size_t max_bytes)
        : store_(store), max_steps_(max_steps ? max_steps : 1), max_bytes_(max_bytes) {
        if (background) worker_ = std::thread([this] { run(); });
    }
    ~StepQueue() { stop(); }
    StepQueue(const StepQueue&) = delete;
    StepQueue& operator=(const StepQueue&) = delete;

    bool background() const noexcept { return worker_.joinable(); }

    // Queues a job; blocks while the queue is full and the writer is making progress. A paused
    // writer (its error not yet taken) does not block the caller: the job is queued behind it.
    void push(Job job) {
        const std::size_t bytes = job_bytes(job);
        std::unique_lock lock(mu_);
        if (background())
            space_.wait(lock, [&] {
                return jobs_.empty() || error_ || (jobs_.size() < max_steps_ && queued_bytes_ + bytes <= max_bytes_);
            });
        queued_bytes_ += bytes;
        jobs_.push_back(std::move(job));
        work_.notify_one();
    }

    // Jobs queued and not yet written (including the one being written).
    std::size_t pending() const {
        std::lock_guard lock(mu_);
        return jobs_.size();
    }

    // Rethrows the writer's error, if one is waiting, and lets the writer retry.
    void take_error() {
        std::unique_lock lock(mu_);
        rethrow_locked(lock);
    }

    // Returns once every queued job is written; throws the first error instead (the failed job
    // stays queued and is retried first by the next drain(), or at once by a background writer).
    void drain() {
        if (!background()) {
            while (true) {
                std::unique_lock lock(mu_);
                if (jobs_.empty()) return;
                Job& job = jobs_.front();
                lock.unlock();
                write(job);  // throws: the job stays queued
                lock.lock();
                queued_bytes_ -= job_bytes(jobs_.front());
                jobs_.pop_front();
            }
        }
        std::unique_lock lock(mu_);
        idle_.wait(lock, [&] { return jobs_.empty() || error_; });
        rethrow_locked(lock);
    }

    // Stops the background writer after the job it is writing; unwritten jobs stay queued.
    void stop() {
        {
            std::lock_guard lock(mu_);
            stopping_ = true;
        }
        work_.notify_all();
        if (worker_.joinable()) worker_.join();
    }

private:
    static std::size_t job_bytes(const Job& job) {
        if (const auto* s = std::get_if<StepWriter>(&job)) return s->event_bytes();
        return std::get<FileJob>(job).bytes.size();
    }

    void write(Job& job) {
        if (auto* s = std::get_if<StepWriter>(&job)) {
            s->flush(store_);
        } else {
            const auto& f = std::get<FileJob>(job);
            store_.write(f.key, std::as_bytes(std::span<const char>(f.bytes.data(), f.bytes.size())));
        }
    }

    void rethrow_locked(std::unique_lock<std::mutex>& lock) {
        if (!error_) return;
        auto e = std::exchange(error_, nullptr);
        lock.unlock();
        work_.notify_one();  // resume: the failed job is retried
        std::rethrow_exception(e);
    }

    void run() {
        std::unique_lock lock(mu_);
        while (true) {
            work_.wait(lock, [&] { return stopping_ || (!jobs_.empty() && !error_); });
            if (stopping_) return;
            Job& job = jobs_.front();  // stays at the head (and counted) until written
            lock.unlock();
            std::exception_ptr failure;
            try {
                write(job);
            } catch (...) {
                failure = std::current_exception();
            }
            lock.lock();
            if (failure) {
                error_ = failure;
            } else {
                queued_bytes_ -= job_bytes(jobs_.front());
                jobs_.pop_front();
            }
            space_.notify_all();
            if (jobs_.empty() || error_) idle_.notify_all();
        }
    }

    S store_;
    const std::size_t max_steps_, max_bytes_;
    mutable std::mutex mu_;
    std::condition_variable work_, space_, idle_;
    std::deque<Job> jobs_;
    std::size_t queued_bytes_ = 0;
    std::exception_ptr error_;
    bool stopping_ = false;
    std::thread worker_;  // last: started once everything above exists
};

}  // namespace smdebug::detail
