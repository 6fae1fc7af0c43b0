#pragma once
// StepQueue: the Hook's writer. Closed steps (and collections files) are queued in order and
// written by one background thread, so the training thread only pays for encoding its tensors.
//
//  - Order and durability: jobs are written in the order they were queued; a step writes its
//    event file, then its index (StepWriter), each made durable by the store. On a store whose
//    writes cost a round trip each (latency_bound: S3), up to steps_in_flight consecutive
//    steps are written at once (write_sequences: each step's event file before its index, the
//    steps side by side); a collections file or the end marker is written alone, after every
//    step queued before it.
//  - Back-pressure: push() blocks while the queue holds max_steps jobs or max_bytes of event
//    data (a single larger job is still accepted when the queue is empty).
//  - Errors: a job that fails stays at the head of the queue and the writer pauses. The error is
//    handed to the training thread by take_error() / drain() (once per failure); taking it
//    resumes the writer, which retries the same job first. Nothing is dropped.
//  - drain() returns once every queued job is written (or throws the writer's error).
//  - Without a background thread (background = false), drain() writes the jobs on the calling
//    thread, and push() never writes.
//  - Waking: push() does not wake a writer that is polling. Waking a sleeping thread costs the
//    caller a futex wake and, on a VM, an inter-processor interrupt, and the woken writer then
//    competes with the training thread while it encodes the next step. So after a job the writer
//    polls the queue every writer_poll_interval for `poll_before_sleep`
//    (HookOptions::writer_poll_before_sleep), and only then sleeps until a push() wakes it: a
//    steady training loop never pays for a wake, and an idle hook costs nothing (the Hook's
//    step time with and without: docs/performance.md).
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <smdebug/writer/manifest_writer.hpp>
#include <smdebug/writer/step_writer.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

// A whole file to write (collections file, end marker).
struct FileJob {
    std::string key;
    std::string bytes;
};

inline constexpr std::chrono::milliseconds writer_poll_interval{1};
// Record buffers of written steps kept for the next steps: at most this many, and this many bytes
// in all. Enough for the steps in flight when the writer falls a few steps behind (an fsync can take
// longer than a training step), so that the next steps still find a buffer.
inline constexpr std::size_t max_spare_buffers = 8;
inline constexpr std::size_t max_spare_buffer_bytes = std::size_t{64} << 20;

template <WritableStore S>
class StepQueue {
public:
    using Job = std::variant<StepWriter, FileJob>;

    StepQueue(const S& store, bool background, std::size_t max_steps, std::size_t max_bytes,
              std::chrono::milliseconds poll_before_sleep = std::chrono::milliseconds{250},
              std::size_t steps_in_flight = 1)  // the Hook passes HookOptions::writer_steps_in_flight
        : store_(store), max_steps_(max_steps ? max_steps : 1), max_bytes_(max_bytes), poll_before_sleep_(poll_before_sleep),
          steps_in_flight_(steps_in_flight ? steps_in_flight : 1) {
        if (background) worker_ = std::thread([this] { run(); });
    }
    ~StepQueue() { stop(); }
    StepQueue(const StepQueue&) = delete;
    StepQueue& operator=(const StepQueue&) = delete;

    bool background() const noexcept { return worker_.joinable(); }

    // Records the manifests of `worker` (HookOptions::write_manifest) as its steps are written.
    // Call before the first push().
    void record_manifests(std::string worker) { manifests_.emplace(std::move(worker)); }
    // Writes the last manifest; call after drain() (the writer is then idle).
    void finish_manifests() {
        if (manifests_) manifests_->finish(store_);
    }

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
        if (writer_asleep_) work_.notify_one();  // a polling writer finds the job by itself
    }

    // Whether the background writer sleeps until the next push() (rather than polling).
    bool writer_asleep() const {
        std::lock_guard lock(mu_);
        return writer_asleep_;
    }

    // The record buffer of a step already written, for the next step to fill (empty if none).
    std::string take_spare_buffer() {
        std::lock_guard lock(mu_);
        if (spare_buffers_.empty()) return {};
        auto b = std::move(spare_buffers_.back());
        spare_buffers_.pop_back();
        spare_bytes_ -= b.capacity();
        return b;
    }

    // Jobs pushed so far, and a wait until the first `count` of them are written (or the writer
    // failed: its error is rethrown, as drain() does).
    std::uint64_t pushed() const {
        std::lock_guard lock(mu_);
        return retired_ + jobs_.size();
    }
    void wait_written(std::uint64_t count) {
        std::unique_lock lock(mu_);
        if (!background()) return;
        idle_.wait(lock, [&] { return retired_ >= count || error_; });
        rethrow_locked(lock);
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
                retire_front_locked();
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
            const auto index_bytes = s->flush(store_);
            if (manifests_ && index_bytes) manifests_->note(store_, s->step(), s->index(), index_bytes);
        } else {
            const auto& f = std::get<FileJob>(job);
            store_.write(f.key, std::as_bytes(std::span<const char>(f.bytes.data(), f.bytes.size())));
        }
    }

    // Writes several steps at once; returns how many from the first were written (their manifests
    // noted, in order), and the first failure after them. Steps after a failed one may have been
    // written too: they stay queued and are written again (the same bytes) when the writer resumes.
    std::size_t write_steps(const std::vector<Job*>& batch, std::exception_ptr& failure) {
        std::vector<std::vector<WriteRequest>> sequences;
        sequences.reserve(batch.size());
        for (Job* job : batch) sequences.push_back(std::get<StepWriter>(*job).planned_writes());
        std::vector<std::exception_ptr> errors;
        try {
            errors = write_sequences(store_, sequences);
        } catch (...) {
            failure = std::current_exception();
            return 0;
        }
        std::size_t written = 0;
        while (written < batch.size() && !errors[written]) {
            auto& s = std::get<StepWriter>(*batch[written]);
            if (manifests_ && s.index_bytes()) manifests_->note(store_, s.step(), s.index(), s.index_bytes());
            ++written;
        }
        if (written < batch.size()) failure = errors[written];
        return written;
    }

    // Removes the written job at the head; keeps its record buffer for a later step.
    void retire_front_locked() {
        queued_bytes_ -= job_bytes(jobs_.front());
        if (auto* s = std::get_if<StepWriter>(&jobs_.front()); s && spare_buffers_.size() < max_spare_buffers) {
            auto b = std::move(*s).release_buffer();
            if (spare_bytes_ + b.capacity() <= max_spare_buffer_bytes) {
                spare_bytes_ += b.capacity();
                spare_buffers_.push_back(std::move(b));
            }
        }
        jobs_.pop_front();
        ++retired_;
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
        const auto has_work = [&] { return stopping_ || (!jobs_.empty() && !error_); };
        auto idle_since = std::chrono::steady_clock::now();
        while (true) {
            if (!has_work()) {
                if (std::chrono::steady_clock::now() - idle_since < poll_before_sleep_) {
                    work_.wait_for(lock, writer_poll_interval);
                    continue;
                }
                writer_asleep_ = true;
                work_.wait(lock, has_work);
                writer_asleep_ = false;
            }
            if (stopping_) return;
            // The jobs stay at the head (and counted) until written; a deque's push_back keeps
            // references to them valid.
            std::vector<Job*> batch{&jobs_.front()};
            if (latency_bound(store_) && std::holds_alternative<StepWriter>(jobs_.front()))
                for (std::size_t i = 1; i < jobs_.size() && i < steps_in_flight_ && std::holds_alternative<StepWriter>(jobs_[i]); ++i)
                    batch.push_back(&jobs_[i]);
            lock.unlock();
            std::exception_ptr failure;
            std::size_t written = 0;
            if (batch.size() == 1) {
                try {
                    write(*batch.front());
                    written = 1;
                } catch (...) {
                    failure = std::current_exception();
                }
            } else {
                written = write_steps(batch, failure);
            }
            lock.lock();
            for (std::size_t i = 0; i < written; ++i) retire_front_locked();
            if (failure) error_ = failure;
            space_.notify_all();
            if (written > 0 || error_) idle_.notify_all();  // drain() and wait_written() wait there
            idle_since = std::chrono::steady_clock::now();
        }
    }

    S store_;
    const std::size_t max_steps_, max_bytes_;
    const std::chrono::milliseconds poll_before_sleep_;
    const std::size_t steps_in_flight_;
    mutable std::mutex mu_;
    std::condition_variable work_, space_, idle_;
    std::deque<Job> jobs_;
    std::size_t queued_bytes_ = 0;
    std::uint64_t retired_ = 0;  // jobs ever written (pushed: retired_ + jobs_.size())
    std::exception_ptr error_;
    bool stopping_ = false;
    bool writer_asleep_ = false;
    std::vector<std::string> spare_buffers_;
    std::size_t spare_bytes_ = 0;
    std::optional<ManifestRecorder> manifests_;  // touched by the writing thread only
    std::thread worker_;  // last: started once everything above exists
};

}  // namespace smdebug::detail
