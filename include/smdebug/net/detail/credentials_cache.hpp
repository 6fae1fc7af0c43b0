#pragma once
// What an S3 client signs with, asked of its credentials provider off the I/O thread.
//
// A provider may block: the default chain reads profile files, and the container and EC2 instance
// metadata providers make HTTP requests with timeouts of a second or two. So the client asks it on
// the calling thread, before a request enters the I/O loop (resolve()), and the loop only reads the
// credentials resolved last (current()), which never waits for a provider.
//  - One resolution at a time: callers that arrive while one runs wait for it and share its
//    outcome (N concurrent requests: one provider call).
//  - Credentials are asked again once they are within `refresh_window` of their expiration (the
//    providers' own refresh happens then too); long-term credentials are asked once.
//  - A failure is remembered: until `retry_after` has passed, every resolve() rethrows it (the
//    provider's typed error, CredentialsError or AwsConfigError) without asking again, so a missing
//    instance role costs one metadata timeout, not one per request. Credentials that fail to refresh
//    while still valid stay in use until they expire.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>

#include <smdebug/net/credentials.hpp>

namespace smdebug::net::detail {

class CredentialsCache {
public:
    using clock = std::chrono::system_clock;

    CredentialsCache(std::shared_ptr<CredentialsProvider> provider, std::chrono::milliseconds retry_after,
                     std::chrono::seconds refresh_window = std::chrono::minutes(5))
        : provider_(std::move(provider)), retry_after_(retry_after), refresh_window_(refresh_window) {}

    bool enabled() const noexcept { return provider_ != nullptr; }

    // On the calling thread (not the I/O thread): the credentials to sign with; nullptr when the
    // client sends unsigned requests. Throws the provider's error (or the one remembered).
    std::shared_ptr<const AwsCredentials> resolve() {
        if (!provider_) return nullptr;
        std::lock_guard resolving(resolve_mu_);  // one resolution at a time; later callers share it
        const auto now = clock::now();
        {
            std::lock_guard lock(mu_);
            if (current_ && now < next_ask_) return current_;
            if (failure_ && now < retry_at_) std::rethrow_exception(failure_);
            ++provider_calls_;
        }
        try {
            auto fresh = std::make_shared<const AwsCredentials>(provider_->get());
            std::lock_guard lock(mu_);
            failure_ = nullptr;
            current_ = fresh;
            next_ask_ = clock::time_point::max();
            if (fresh->expiration) {
                // Ask again when the refresh window opens; credentials already inside it (a provider
                // whose refresh failed) are asked for again every retry_after until they expire.
                next_ask_ = *fresh->expiration - refresh_window_;
                if (next_ask_ <= now) next_ask_ = std::min<clock::time_point>(now + retry_after_, *fresh->expiration);
            }
            return current_;
        } catch (...) {
            std::lock_guard lock(mu_);
            if (current_ && current_->expiration && now < *current_->expiration) {
                next_ask_ = std::min<clock::time_point>(now + retry_after_, *current_->expiration);
                return current_;  // still valid: keep signing with them
            }
            current_ = nullptr;
            failure_ = std::current_exception();
            retry_at_ = now + retry_after_;
            throw;
        }
    }

    // For the I/O thread: the credentials resolve() produced last (nullptr when none); never
    // calls the provider.
    std::shared_ptr<const AwsCredentials> current() const {
        std::lock_guard lock(mu_);
        return current_;
    }

    // How many times the provider was asked (for tests and diagnostics).
    std::size_t provider_calls() const {
        std::lock_guard lock(mu_);
        return provider_calls_;
    }

private:
    std::shared_ptr<CredentialsProvider> provider_;
    std::chrono::milliseconds retry_after_;
    std::chrono::seconds refresh_window_;
    std::mutex resolve_mu_;
    mutable std::mutex mu_;  // the fields below; never held while the provider runs
    std::shared_ptr<const AwsCredentials> current_;
    clock::time_point next_ask_{};
    std::exception_ptr failure_;
    clock::time_point retry_at_{};
    std::size_t provider_calls_ = 0;
};

}  // namespace smdebug::net::detail
