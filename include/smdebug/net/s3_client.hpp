#pragma once
// A minimal Amazon S3 client: ListObjectsV2 (all pages), GetObject (optionally ranged), HeadObject,
// PutObject and DeleteObject, signed with SigV4 (header auth, X-Amz-Content-SHA256 set to the
// body's SHA-256), over the pooled HttpClient. Thread-safe.
//
// Every request is a coroutine on the HttpClient's one I/O thread; the blocking calls run one and
// wait. Nothing that blocks runs on that thread: before a request enters it, the calling thread
// resolves the credentials (CredentialsCache: one provider call for many concurrent requests, a
// failure remembered for S3ClientOptions::credentials_retry_after), builds the TLS context once
// (HttpClient::prepare_tls) and hashes a PUT's body. One client, one I/O thread: every copy of an
// S3Store made from it shares them (the providers of the default chain own no thread). At most max_concurrency() requests are in flight at once, whoever sends them (the
// RequestWindow of request_window.hpp, which throttled answers shrink and successes grow back).
// get_many() keeps a batch of GETs in flight together and hands each result to the calling thread
// as it arrives; list_objects() follows one chain of pages, list_objects_by_folder() lists the
// sub-folders of a prefix concurrently (S3Store uses it only with list_folders_concurrently, off by
// default).
//
// Counting: every HTTP request the client sends (each ListObjectsV2 page, each ranged GET, each
// retry) is counted by kind, with the bytes of the response bodies it received (request_counts()).
//
// Errors: an S3 error response becomes S3Error (HTTP status, S3 code, request id, bucket, key).
// Retries: idempotent requests are retried with bounded exponential backoff and full jitter on
// HTTP 429/500/502/503/504, throttling codes (SlowDown, ...), connection failures, timeouts and
// truncated bodies; throttled answers (503 SlowDown, 429, Throttling...) are retried up to
// throttle_attempts times and do not draw on the retry quota (RetryQuota). A ranged GET whose 206 Content-Range does not cover the asked range, or
// whose body disagrees with its Content-Range, counts as truncated: it is retried and never
// returned as data.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/s3_types.hpp>
#include <smdebug/net/detail/credentials_cache.hpp>
#include <smdebug/net/detail/crypto.hpp>
#include <smdebug/net/detail/http_client.hpp>
#include <smdebug/net/detail/request_window.hpp>
#include <smdebug/net/detail/s3_request.hpp>
#include <smdebug/net/detail/s3_responses.hpp>
#include <smdebug/net/detail/sigv4.hpp>
#include <smdebug/net/transport_errors.hpp>
#include <smdebug/core/byte_buffer.hpp>

namespace smdebug::net {

class S3Client {
public:
    explicit S3Client(AwsConfig config, S3ClientOptions options = {})
        : config_(std::move(config)), opts_(std::move(options)),
          window_(opts_.max_concurrency ? opts_.max_concurrency : config_.concurrency()),
          credentials_(config_.credentials, opts_.credentials_retry_after), http_(http_options(config_, opts_)) {
        if (opts_.retry.max_attempts < 1) opts_.retry.max_attempts = config_.attempts();
        if (opts_.throttle_attempts < 1) opts_.throttle_attempts = 1;
        if (opts_.list_page_size < 1 || opts_.list_page_size > 1000) opts_.list_page_size = 1000;
    }

    const AwsConfig& config() const noexcept { return config_; }
    HttpClient& http() noexcept { return http_; }
    // The window: requests in flight at most, now, and the most seen at once.
    std::size_t max_concurrency() const noexcept { return window_.max(); }
    const detail::RequestWindow& window() const noexcept { return window_; }

    // Resolves the credentials (and builds the TLS context) on the calling thread: what every
    // blocking call does before its requests enter the I/O thread. A program that co_spawns the
    // async_* coroutines itself calls it first (and again before credentials expire); those
    // coroutines sign with what it resolved last. Throws CredentialsError / AwsConfigError (a
    // failure is remembered for S3ClientOptions::credentials_retry_after) or TlsError.
    void resolve_credentials() {
        (void)credentials_.resolve();
        if (!config_.endpoint || config_.endpoint->https()) http_.prepare_tls();
    }
    // How many times the credentials provider was asked (for tests and diagnostics).
    std::size_t credential_resolutions() const { return credentials_.provider_calls(); }

    // Every HTTP request sent so far (see the header comment); safe to call while requests run.
    S3RequestCounts request_counts() const noexcept {
        S3RequestCounts c;
        c.list = counts_[list_op].load(std::memory_order_relaxed);
        c.get = counts_[get_op].load(std::memory_order_relaxed);
        c.head = counts_[head_op].load(std::memory_order_relaxed);
        c.put = counts_[put_op].load(std::memory_order_relaxed);
        c.remove = counts_[remove_op].load(std::memory_order_relaxed);
        c.bytes_received = bytes_received_.load(std::memory_order_relaxed);
        return c;
    }

    // One ListObjectsV2 page. Keys are percent-decoded only when the response says
    // EncodingType url (the request asks for it; some servers ignore it).
    ListObjectsPage list_objects_page(const ListObjectsRequest& r) { return run(async_list_page(r)); }

    // Every page: all objects (and common prefixes, when `delimiter` is set), in server order.
    ListObjectsPage list_objects(ListObjectsRequest r) { return run(async_list_all(std::move(r))); }

    // Every object under r.prefix. A listing that fits one page costs one request, as before; past
    // the first page, the sub-folders of the prefix that follow it (the common prefixes of one '/'
    // delimiter listing) are listed concurrently instead of in one chain of pages: a trial's index
    // in buckets of 1,000 steps costs the longest bucket's chain, not their sum. Objects in key
    // order, no common prefixes.
    ListObjectsPage list_objects_by_folder(ListObjectsRequest r) {
        if (!r.delimiter.empty()) return list_objects(std::move(r));
        ListObjectsPage all = list_objects_page(r);
        all.common_prefixes.clear();
        if (!all.truncated || all.objects.empty()) {
            if (all.truncated) return list_objects(std::move(r));  // an empty truncated page: the plain chain (and its limits)
            return all;
        }
        all.truncated = false;
        const std::string after = all.objects.back().key;
        ListObjectsRequest top = r;
        top.delimiter = "/";
        top.start_after = after;
        top.continuation_token.clear();
        ListObjectsPage rest = list_objects(top);
        std::vector<std::string> folders = std::move(rest.common_prefixes);
        for (auto& o : rest.objects) all.objects.push_back(std::move(o));
        // The folder holding the last key listed: its keys after it belong to the listing, and a
        // server that rolls keys up before applying start-after may leave the folder out.
        if (const auto slash = after.find('/', r.prefix.size()); slash != std::string::npos) {
            std::string own = after.substr(0, slash + 1);
            if (std::find(folders.begin(), folders.end(), own) == folders.end()) folders.push_back(std::move(own));
        }
        std::vector<std::future<ListObjectsPage>> parts;
        parts.reserve(folders.size());
        resolve_credentials();
        for (const auto& f : folders) {
            ListObjectsRequest sub = r;
            sub.prefix = f;
            sub.start_after = after;
            sub.continuation_token.clear();
            parts.push_back(boost::asio::co_spawn(http_.executor(), async_list_all(std::move(sub)), boost::asio::use_future));
        }
        std::exception_ptr error;
        for (auto& part : parts) {
            try {
                ListObjectsPage p = part.get();
                for (auto& o : p.objects) all.objects.push_back(std::move(o));
            } catch (...) {
                if (!error) error = std::current_exception();
            }
            if (all.objects.size() > opts_.max_list_keys && !error)
                error = std::make_exception_ptr(HttpProtocolError("ListObjectsV2 " + s3_url(r.bucket, r.prefix) + ": more than " +
                                                                  std::to_string(opts_.max_list_keys) + " keys (S3ClientOptions::max_list_keys)"));
        }
        if (error) std::rethrow_exception(error);
        std::sort(all.objects.begin(), all.objects.end(), [](const S3ObjectInfo& a, const S3ObjectInfo& b) { return a.key < b.key; });
        all.objects.erase(std::unique(all.objects.begin(), all.objects.end(),
                                      [](const S3ObjectInfo& a, const S3ObjectInfo& b) { return a.key == b.key; }),
                          all.objects.end());
        return all;
    }

    // GetObject, whole or one range. Throws S3Error (NoSuchKey: 404; a range starting at or past
    // the end: 416 InvalidRange).
    GetObjectResult get_object(std::string_view bucket, std::string_view key, std::optional<ByteRange> range = std::nullopt) {
        return run(async_get_object(GetRequest{std::string(bucket), std::string(key), range}));
    }

    // Many GETs kept in flight together (up to the window, and while the ranges asked for and not
    // yet handed over stay within max_buffered_bytes). `on_result(i, result, error)` runs on the
    // calling thread for every request i, in completion order, as soon as its answer is in memory;
    // `error` is set (and `result` empty) when request i failed. When on_result throws, no new
    // request is sent, the ones in flight are waited for, and the exception is rethrown.
    template <class OnResult>
    void get_many(std::span<const GetRequest> requests, OnResult&& on_result) {
        struct Done {
            std::size_t index;
            GetObjectResult result;
            std::exception_ptr error;
        };
        std::mutex mu;
        std::condition_variable cv;
        std::deque<Done> done;
        const std::size_t n = requests.size();
        const std::size_t max_outstanding = 2 * window_.max();
        std::size_t next = 0, outstanding = 0;
        std::uint64_t outstanding_bytes = 0;
        std::exception_ptr failure;
        auto cost = [&](std::size_t i) { return requests[i].range ? requests[i].range->length : 0; };
        auto executor = http_.executor();
        while (true) {
            // On this thread, never the I/O thread: a provider's refresh is asked for here.
            if (!failure && next < n) {
                try {
                    resolve_credentials();
                } catch (...) {
                    failure = std::current_exception();  // the requests in flight are still waited for
                }
            }
            while (!failure && next < n && outstanding < max_outstanding &&
                   (outstanding == 0 || outstanding_bytes + cost(next) <= opts_.max_buffered_bytes)) {
                const std::size_t i = next++;
                ++outstanding;
                outstanding_bytes += cost(i);
                boost::asio::co_spawn(executor, async_get_object(requests[i]), [&, i](std::exception_ptr e, GetObjectResult r) {
                    std::lock_guard lock(mu);
                    done.push_back({i, std::move(r), e});
                    cv.notify_one();
                });
            }
            if (outstanding == 0) break;
            Done d;
            {
                std::unique_lock lock(mu);
                cv.wait(lock, [&] { return !done.empty(); });
                d = std::move(done.front());
                done.pop_front();
            }
            --outstanding;
            outstanding_bytes -= cost(d.index);
            if (failure) continue;
            try {
                on_result(d.index, std::move(d.result), d.error);
            } catch (...) {
                failure = std::current_exception();
            }
        }
        if (failure) std::rethrow_exception(failure);
    }

    // HeadObject; nullopt for 404.
    std::optional<S3ObjectInfo> head_object(std::string_view bucket, std::string_view key) {
        Op op{"HEAD", std::string(bucket), std::string(key), "HeadObject"};
        HttpResponse resp = run(async_execute(op));
        if (resp.status == 404) return std::nullopt;
        if (resp.status != 200) throw error_from(op, resp);
        S3ObjectInfo info;
        info.key = std::string(key);
        if (const auto* cl = resp.header("Content-Length")) info.size = detail::parse_u64(*cl).value_or(0);
        info.etag = detail::header_or_empty(resp, "ETag");
        info.last_modified = detail::header_or_empty(resp, "Last-Modified");
        return info;
    }

    // PutObject; returns the ETag. The body's SHA-256 (signed as X-Amz-Content-SHA256) is computed
    // here, on the calling thread, before the request enters the I/O thread.
    std::string put_object(std::string_view bucket, std::string_view key, std::span<const std::byte> body,
                           std::string_view content_type = "application/octet-stream") {
        return run(async_put_object(std::string(bucket), std::string(key), body, std::string(content_type)));
    }
    // The same as a coroutine on http().executor(); `body` must stay alive until it completes. Not
    // itself a coroutine: the body is hashed where this is called (put_object: the calling thread).
    boost::asio::awaitable<std::string> async_put_object(std::string bucket, std::string key, std::span<const std::byte> body,
                                                         std::string content_type = "application/octet-stream") {
        std::string hash = sha256_hex(body);
        return async_put_object(std::move(bucket), std::move(key), body, std::move(content_type), std::move(hash));
    }
    // With the body's SHA-256 (lower-case hex, net::sha256_hex) computed beforehand, off the I/O
    // thread (S3Store::write_sequences hashes every body before it starts the uploads).
    boost::asio::awaitable<std::string> async_put_object(std::string bucket, std::string key, std::span<const std::byte> body,
                                                         std::string content_type, std::string payload_sha256) {
        Op op{"PUT", std::move(bucket), std::move(key), "PutObject"};
        op.body = body;
        op.payload_hash = std::move(payload_sha256);
        op.headers.emplace_back("Content-Type", std::move(content_type));
        HttpResponse resp = co_await async_execute(op);
        if (resp.status != 200) throw error_from(op, resp);
        co_return detail::header_or_empty(resp, "ETag");
    }

    // DeleteObject (succeeds for a missing key, as S3 does).
    void delete_object(std::string_view bucket, std::string_view key) {
        Op op{"DELETE", std::string(bucket), std::string(key), "DeleteObject"};
        HttpResponse resp = run(async_execute(op));
        if (resp.status != 204 && resp.status != 200) throw error_from(op, resp);
    }

    // GetObject as a coroutine on http().executor().
    boost::asio::awaitable<GetObjectResult> async_get_object(GetRequest g) {
        const std::optional<ByteRange> range = g.range;
        if (range && range->length == 0) throw UsageError("GetObject " + s3_url(g.bucket, g.key) + ": empty range");
        Op op{"GET", std::move(g.bucket), std::move(g.key), "GetObject"};
        const std::string bucket = op.bucket, key = op.key;
        std::uint64_t asked_last = 0;
        if (range) {
            // s3rver answers "bytes=0-0" with the whole object: ask for two bytes and slice.
            std::uint64_t len = range->offset == 0 && range->length == 1 ? 2 : range->length;
            if (range->offset > UINT64_MAX - len) throw UsageError("GetObject " + s3_url(bucket, key) + ": range overflows");
            asked_last = range->offset + len - 1;
            op.headers.emplace_back("Range", "bytes=" + std::to_string(range->offset) + "-" + std::to_string(asked_last));
        }
        GetObjectResult out;
        op.validate = [&](HttpResponse& resp) {
            if (resp.status == 200) {
                out.object_size = resp.body.size();
                out.data = range ? detail::slice(resp.body, 0, resp.body.size(), range->offset, range->length) : std::move(resp.body);
            } else if (resp.status == 206 && range) {
                auto cr = detail::parse_content_range(resp.header("Content-Range"));
                if (!cr || cr->last - cr->first + 1 != resp.body.size())
                    throw TruncatedResponse("GetObject " + s3_url(bucket, key) + ": the 206 body of " + std::to_string(resp.body.size()) +
                                            " bytes disagrees with Content-Range '" + detail::header_or_empty(resp, "Content-Range") + "'");
                const std::uint64_t want_last = std::min(asked_last, cr->total ? *cr->total - 1 : asked_last);
                if (cr->first > range->offset || cr->last < want_last)
                    throw TruncatedResponse("GetObject " + s3_url(bucket, key) + ": asked for bytes " + std::to_string(range->offset) + "-" +
                                            std::to_string(asked_last) + " but got Content-Range '" + detail::header_or_empty(resp, "Content-Range") + "'");
                out.object_size = cr->total ? *cr->total : cr->last + 1;
                out.data = detail::slice(resp.body, cr->first, cr->last + 1, range->offset, range->length);
            } else if (resp.status == 206) {
                throw HttpProtocolError("GetObject " + s3_url(bucket, key) + ": a 206 Partial Content answer to a request without Range");
            } else {
                throw error_from(op, resp);
            }
        };
        (void)co_await async_execute(op);
        co_return std::move(out);
    }

private:
    using Op = detail::S3Op;
    using enum detail::S3OpKind;

    // A blocking call: credentials and TLS prepared on this thread, then the request on the loop.
    template <class T>
    T run(boost::asio::awaitable<T> task) {
        resolve_credentials();
        return http_.run(std::move(task));
    }

    static HttpClientOptions http_options(const AwsConfig& c, const S3ClientOptions& o) {
        HttpClientOptions h = o.http;
        if (h.extra_ca_file.empty()) h.extra_ca_file = c.extra_ca_file;
        if (c.connect_timeout) h.connect_timeout = *c.connect_timeout;
        if (c.read_timeout) h.io_timeout = h.header_timeout = *c.read_timeout;
        return h;
    }

    boost::asio::awaitable<ListObjectsPage> async_list_page(ListObjectsRequest r) {
        Op op{"GET", r.bucket, "", "ListObjectsV2"};
        op.bucket_level = true;
        op.kind = list_op;
        op.query.emplace_back("list-type", "2");
        op.query.emplace_back("encoding-type", "url");
        int max_keys = r.max_keys > 0 ? r.max_keys : opts_.list_page_size;
        op.query.emplace_back("max-keys", std::to_string(max_keys));
        if (!r.prefix.empty()) op.query.emplace_back("prefix", r.prefix);
        if (!r.delimiter.empty()) op.query.emplace_back("delimiter", r.delimiter);
        if (!r.start_after.empty()) op.query.emplace_back("start-after", r.start_after);
        if (!r.continuation_token.empty()) op.query.emplace_back("continuation-token", r.continuation_token);
        HttpResponse resp = co_await async_execute(op);
        if (resp.status != 200) throw error_from(op, resp);
        co_return detail::parse_list_page(op.url(), resp);
    }

    boost::asio::awaitable<ListObjectsPage> async_list_all(ListObjectsRequest r) {
        ListObjectsPage all;
        std::size_t empty_pages = 0;  // truncated pages in a row without a key
        for (std::size_t page = 0;; ++page) {
            ListObjectsPage p = co_await async_list_page(r);
            empty_pages = p.objects.empty() && p.common_prefixes.empty() ? empty_pages + 1 : 0;
            for (auto& o : p.objects) all.objects.push_back(std::move(o));
            for (auto& c : p.common_prefixes) all.common_prefixes.push_back(std::move(c));
            if (all.objects.size() + all.common_prefixes.size() > opts_.max_list_keys)
                throw HttpProtocolError("ListObjectsV2 " + s3_url(r.bucket, r.prefix) + ": more than " +
                                        std::to_string(opts_.max_list_keys) + " keys (S3ClientOptions::max_list_keys)");
            if (!p.truncated) break;
            if (empty_pages > opts_.max_empty_list_pages)
                throw HttpProtocolError("ListObjectsV2 " + s3_url(r.bucket, r.prefix) + ": " + std::to_string(empty_pages) +
                                        " truncated pages in a row without a key (S3ClientOptions::max_empty_list_pages)");
            if (p.next_continuation_token.empty() || p.next_continuation_token == r.continuation_token)
                throw HttpProtocolError("ListObjectsV2 " + s3_url(r.bucket, r.prefix) +
                                        ": a truncated page without a new NextContinuationToken (page " + std::to_string(page + 1) + ")");
            r.continuation_token = std::move(p.next_continuation_token);
        }
        co_return all;
    }

    enum class Failure { none, throttled, retryable, timeout };

    // Sends with retries, holding a slot of the window for each attempt; returns the accepted
    // response (validated when op.validate is set, else any status that is not retryable).
    boost::asio::awaitable<HttpResponse> async_execute(Op op) {
        const int attempts = op.idempotent() ? opts_.retry.max_attempts : 1;
        const int throttle_attempts = op.idempotent() ? std::max(opts_.throttle_attempts, attempts) : 1;
        int errors = 0, throttles = 0, spent = 0;
        for (int attempt = 1;; ++attempt) {
            std::string retry_reason;
            std::exception_ptr error;
            Failure failure = Failure::none;
            std::optional<HttpResponse> accepted;
            const detail::RequestWindow::Slot slot = co_await window_.acquire();
            try {
                // Signed with what the calling thread resolved: the provider is never asked here.
                const std::shared_ptr<const AwsCredentials> creds = credentials_.current();
                if (credentials_.enabled() && !creds)
                    throw CredentialsError(std::string(op.name) + " " + op.url() +
                                           ": no credentials resolved before the request started (call S3Client::resolve_credentials() first)");
                HttpRequest req = detail::build_s3_request(op, config_, creds.get());
                counts_[op.counted_kind()].fetch_add(1, std::memory_order_relaxed);
                HttpResponse resp = co_await http_.async_send(std::move(req));
                bytes_received_.fetch_add(resp.body.size(), std::memory_order_relaxed);
                if (detail::throttling_status(resp)) failure = Failure::throttled;
                else if (detail::retryable_status(resp)) failure = Failure::retryable;
                if (failure != Failure::none) retry_reason = "HTTP " + std::to_string(resp.status);
                bool may_retry = false;
                if (failure == Failure::throttled && throttles + 1 < throttle_attempts) {
                    may_retry = true;
                    ++throttles;
                } else if (failure == Failure::retryable && errors + 1 < attempts && quota_.take(false)) {
                    may_retry = true;
                    spent += detail::RetryQuota::retry_cost;
                    ++errors;
                }
                if (!may_retry) {
                    if (op.validate) op.validate(resp);
                    accepted.emplace(std::move(resp));
                }
            } catch (const ConnectionError&) {
                error = std::current_exception();
                failure = Failure::retryable;
            } catch (const NetworkTimeout&) {
                error = std::current_exception();
                failure = Failure::timeout;
            } catch (const TruncatedResponse&) {
                error = std::current_exception();
                failure = Failure::retryable;
            } catch (...) {
                window_.release(slot, detail::RequestWindow::Outcome::failed);
                throw;
            }
            window_.release(slot, failure == Failure::throttled ? detail::RequestWindow::Outcome::throttled
                                  : failure == Failure::none     ? detail::RequestWindow::Outcome::success
                                                                 : detail::RequestWindow::Outcome::failed);
            if (accepted) {
                quota_.refund(spent);
                co_return std::move(*accepted);
            }
            if (error) {
                const bool timeout = failure == Failure::timeout;
                if (errors + 1 >= attempts || !quota_.take(timeout)) rethrow_with_attempts(op, attempt, error);
                spent += timeout ? detail::RetryQuota::timeout_cost : detail::RetryQuota::retry_cost;
                ++errors;
            }
            co_await backoff(failure == Failure::throttled ? throttles : errors);
        }
    }

    [[noreturn]] static void rethrow_with_attempts(const Op& op, int attempts, std::exception_ptr error) {
        try {
            std::rethrow_exception(error);
        } catch (const ConnectionError& e) {
            throw ConnectionError(with_attempts(op, attempts, e.what()));
        } catch (const NetworkTimeout& e) {
            throw NetworkTimeout(with_attempts(op, attempts, e.what()));
        } catch (const TruncatedResponse& e) {
            throw TruncatedResponse(with_attempts(op, attempts, e.what()));
        }
    }

    static std::string with_attempts(const Op& op, int attempts, const char* what) {
        return std::string(op.name) + " " + op.url() + " failed after " + std::to_string(attempts) +
               (attempts == 1 ? " attempt: " : " attempts: ") + what;
    }

    boost::asio::awaitable<void> backoff(int retry) const {
        using namespace std::chrono;
        const auto cap = std::min<std::int64_t>(opts_.retry.max_delay.count(),
                                                opts_.retry.base_delay.count() << std::min(retry, 20));
        if (cap <= 0) co_return;
        thread_local std::mt19937_64 rng{std::random_device{}()};
        std::uniform_int_distribution<std::int64_t> d(0, cap);
        boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, milliseconds(d(rng)));
        (void)co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }

    S3Error error_from(const Op& op, const HttpResponse& resp) const {
        return detail::s3_error({op.name, op.method, op.bucket, op.key}, resp, config_.region);
    }

    AwsConfig config_;
    S3ClientOptions opts_;
    detail::RequestWindow window_;  // touched on http_'s I/O thread only
    detail::RetryQuota quota_;      // likewise
    detail::CredentialsCache credentials_;
    HttpClient http_;               // after them: its I/O thread stops before they go
    std::atomic<std::uint64_t> counts_[op_kinds] = {};
    std::atomic<std::uint64_t> bytes_received_{0};
};

}  // namespace smdebug::net
