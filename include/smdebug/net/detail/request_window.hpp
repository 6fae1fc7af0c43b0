#pragma once
// How many requests a client keeps in flight, and how many retries it may still spend.
//
// RequestWindow: at most limit() requests in flight, limit() <= max. A throttled answer (503
// SlowDown and friends) halves the limit once per round of requests (the answers of requests sent
// before the last cut do not cut again), and every max(1, limit) successes add one back: additive
// increase, multiplicative decrease, as the AWS SDKs' adaptive retry mode adjusts its send rate.
//
// RetryQuota: the AWS SDKs' retry token bucket. A retry after an error costs 5 tokens (a timeout
// 10), a request that succeeds at once gives one back, a retried request that succeeds returns what
// it cost; with the bucket empty, errors are no longer retried, so a failing store is not
// hammered. Throttled answers do not draw on it: the window already slows down for them.
//
// Both live on the client's I/O thread (no locking); the counters are atomics so that other
// threads may read them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace smdebug::net::detail {

class RequestWindow {
public:
    explicit RequestWindow(std::size_t max) : max_(std::max<std::size_t>(max, 1)), limit_(static_cast<double>(max_)) {}

    struct Slot {
        std::uint64_t round = 0;  // the window's round when the request was sent
    };

    // Waits until fewer than limit() requests are in flight, then counts this one.
    boost::asio::awaitable<Slot> acquire() {
        if (waiters_.empty() && in_flight_ < limit()) {
            take();
        } else {
            auto timer = std::make_shared<boost::asio::steady_timer>(co_await boost::asio::this_coro::executor,
                                                                     boost::asio::steady_timer::time_point::max());
            waiters_.push_back(timer);
            // The releasing side counts us in and cancels the timer.
            (void)co_await timer->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        }
        co_return Slot{round_};
    }

    enum class Outcome { success, throttled, failed };

    void release(const Slot& slot, Outcome outcome) {
        --in_flight_;
        in_flight_now_.store(in_flight_, std::memory_order_relaxed);
        if (outcome == Outcome::throttled) {
            ++throttled_;
            if (slot.round == round_) {
                limit_ = std::max(1.0, limit_ / 2);
                ++round_;
                successes_ = 0;
            }
        } else if (outcome == Outcome::success && limit_ < static_cast<double>(max_)) {
            if (++successes_ >= static_cast<std::size_t>(limit_)) {
                limit_ = std::min(static_cast<double>(max_), limit_ + 1);
                successes_ = 0;
            }
        }
        limit_now_.store(limit(), std::memory_order_relaxed);
        while (!waiters_.empty() && in_flight_ < limit()) {
            auto w = std::move(waiters_.front());
            waiters_.pop_front();
            take();
            w->cancel();
        }
    }

    std::size_t max() const noexcept { return max_; }
    std::size_t limit() const noexcept { return static_cast<std::size_t>(limit_); }
    // For any thread: the current limit, requests in flight now, the most ever in flight at once,
    // and the throttled answers seen.
    std::size_t current_limit() const noexcept { return limit_now_.load(std::memory_order_relaxed); }
    std::size_t in_flight() const noexcept { return in_flight_now_.load(std::memory_order_relaxed); }
    std::size_t peak_in_flight() const noexcept { return peak_.load(std::memory_order_relaxed); }
    std::uint64_t throttled() const noexcept { return throttled_; }

private:
    void take() {
        ++in_flight_;
        in_flight_now_.store(in_flight_, std::memory_order_relaxed);
        if (in_flight_ > peak_.load(std::memory_order_relaxed)) peak_.store(in_flight_, std::memory_order_relaxed);
    }

    std::size_t max_;
    double limit_;
    std::size_t in_flight_ = 0;
    std::size_t successes_ = 0;
    std::uint64_t round_ = 0;
    std::deque<std::shared_ptr<boost::asio::steady_timer>> waiters_;
    std::atomic<std::size_t> limit_now_{max_}, in_flight_now_{0}, peak_{0};
    std::atomic<std::uint64_t> throttled_{0};
};

class RetryQuota {
public:
    static constexpr int capacity = 500, retry_cost = 5, timeout_cost = 10, success_refund = 1;

    // Takes the cost of one retry; false when the bucket cannot pay it (do not retry).
    bool take(bool timeout) {
        const int cost = timeout ? timeout_cost : retry_cost;
        if (tokens_ < cost) return false;
        tokens_ -= cost;
        return true;
    }
    // A request succeeded; `spent` is what its retries took from the bucket.
    void refund(int spent) { tokens_ = std::min(capacity, tokens_ + (spent > 0 ? spent : success_refund)); }
    int tokens() const noexcept { return tokens_; }

private:
    int tokens_ = capacity;
};

}  // namespace smdebug::net::detail
