#pragma once
// A small HTTP/1.1 client on Boost.Asio, safe to share between threads.
//  - One I/O context and one I/O thread per client (started on first use, joined when the client
//    goes): every request is a coroutine on it, so many requests are in flight without a thread
//    each. async_send() is the coroutine; send() runs it and waits (from any thread but the I/O one).
//    Nothing that blocks runs on that thread: the TLS context (the system's CA store and the
//    extra CA file, read from disk) is built once per client on the first calling thread that
//    needs it (prepare_tls(), which send() and the S3 client call before a request enters the loop).
//  - CallingThreadHttp: a few requests now and then (credential endpoints) sent on the calling
//    thread itself, without a thread or a pool of its own.
//  - Keep-alive connections are pooled per endpoint (scheme, host, port).
//  - Content-Length, chunked and read-until-close response bodies; bounded header and body sizes.
//  - Connect and I/O timeouts (NetworkTimeout).
//  - HTTPS with OpenSSL: certificate and host-name (or IP) verification always on, against the
//    system's default trust store plus an optional extra CA file.
//  - A pooled connection that the server closed while idle is detected; if a request on a reused
//    connection fails before any response byte arrives, it is sent once more on a new connection.
// Retries for server errors, resets and truncated bodies belong to the caller (see s3_client.hpp).
#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/use_future.hpp>
#include <openssl/ssl.h>

#include <smdebug/core/errors.hpp>
#include <smdebug/net/detail/http_codec.hpp>
#include <smdebug/net/detail/http_connection.hpp>
#include <smdebug/net/http_types.hpp>
#include <smdebug/net/transport_errors.hpp>

namespace smdebug::net {

namespace detail {

// A client TLS context: TLS 1.2 at least, the system's default CA store plus the options' extra CA
// file, peers verified. Reads the CA files: call it off the I/O thread.
inline std::unique_ptr<boost::asio::ssl::context> make_tls_context(const HttpClientOptions& opts) {
    auto ctx = std::make_unique<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
    boost::system::error_code ec;
    ctx->set_default_verify_paths(ec);
    if (ec) throw TlsError("cannot load the system's default CA certificates: " + ec.message());
    if (!opts.extra_ca_file.empty()) {
        ctx->load_verify_file(opts.extra_ca_file, ec);
        if (ec) throw TlsError("cannot load CA certificates from " + opts.extra_ca_file + ": " + ec.message());
    }
    ctx->set_verify_mode(boost::asio::ssl::verify_peer);
    return ctx;
}

// One request on a fresh connection (no pool), as a coroutine on the connection's executor.
inline boost::asio::awaitable<HttpResponse> send_once(HttpRequest req, boost::asio::ssl::context* tls, const HttpClientOptions& opts) {
    const std::string what = req.describe();
    const std::string head = serialize_request_head(req, opts);
    auto conn = std::make_shared<HttpConnection>(co_await boost::asio::this_coro::executor, req.url, tls, opts);
    co_await conn->connect();
    BasicResponseReader<HttpConnection> reader(*conn, opts, what);
    co_await conn->write_all(head.data(), head.size(), what);
    if (!req.body.empty()) co_await conn->write_all(req.body.data(), req.body.size(), what);
    co_return co_await reader.read(req.method == "HEAD");
}

}  // namespace detail

// Requests sent on the calling thread, each on a new connection, through an I/O context made for
// the request and run by the caller until the answer is in: no thread, no pool. For the
// credential endpoints (container, EC2 instance metadata), asked a few times an hour from the
// thread that resolves credentials, so that a credentials provider owns no I/O thread. The TLS
// context (for an https endpoint) is built once, by the first request that needs it.
class CallingThreadHttp {
public:
    explicit CallingThreadHttp(HttpClientOptions options = {}) : opts_(std::move(options)) {}
    CallingThreadHttp(const CallingThreadHttp&) = delete;
    CallingThreadHttp& operator=(const CallingThreadHttp&) = delete;

    const HttpClientOptions& options() const noexcept { return opts_; }

    HttpResponse send(const HttpRequest& req) {
        boost::asio::ssl::context* tls = nullptr;
        if (req.url.https()) {
            std::lock_guard lock(tls_mu_);
            if (!tls_) tls_ = detail::make_tls_context(opts_);
            tls = tls_.get();
        }
        boost::asio::io_context ioc{1};
        auto answer = boost::asio::co_spawn(ioc, detail::send_once(req, tls, opts_), boost::asio::use_future);
        ioc.run();
        return answer.get();
    }

private:
    HttpClientOptions opts_;
    std::mutex tls_mu_;
    std::unique_ptr<boost::asio::ssl::context> tls_;
};

class HttpClient {
public:
    explicit HttpClient(HttpClientOptions options = {}) : opts_(std::move(options)) {}
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;
    ~HttpClient() {
        std::lock_guard lock(start_mu_);
        if (!thread_.joinable()) return;
        guard_.reset();
        ioc_.stop();
        thread_.join();
        clear_pool();
    }

    const HttpClientOptions& options() const noexcept { return opts_; }

    // The I/O context's executor (starts the I/O thread): coroutines of this client run there.
    boost::asio::any_io_executor executor() {
        start();
        return ioc_.get_executor();
    }
    bool on_io_thread() const noexcept { return thread_id_.load() == std::this_thread::get_id(); }

    // Runs a coroutine on the I/O thread and waits for its result (or exception).
    template <class T>
    T run(boost::asio::awaitable<T> task) {
        if (on_io_thread()) throw UsageError("HttpClient: a blocking call on the client's own I/O thread would never return");
        return boost::asio::co_spawn(executor(), std::move(task), boost::asio::use_future).get();
    }

    // Sends one request and reads the whole response. HTTP error statuses are returned, not
    // thrown; transport failures throw NetworkError subclasses or TruncatedResponse.
    HttpResponse send(const HttpRequest& req) {
        if (req.url.https()) prepare_tls();
        return run(async_send(req));
    }

    // Builds the TLS context now, on the calling thread, unless it is built: the CA files are read
    // once per client, never on the I/O thread by a request that finds it missing (only a coroutine
    // started by async_send() without a blocking call before it builds it there). Throws TlsError
    // (and tries again on the next call) when a CA file cannot be loaded.
    void prepare_tls() { (void)tls_context(); }
    // TLS contexts built so far: 0 or 1 (for tests).
    std::size_t tls_contexts_built() const noexcept { return tls_built_.load(); }

    // The same, as a coroutine on executor(). The request's body must stay alive until it returns.
    boost::asio::awaitable<HttpResponse> async_send(HttpRequest req) {
        const std::string what = req.describe();
        const std::string head = detail::serialize_request_head(req, opts_);
        const bool head_request = req.method == "HEAD";
        for (int attempt = 0;; ++attempt) {
            bool reused = false;
            std::shared_ptr<detail::HttpConnection> conn = take_idle(req.url, reused);
            if (!conn) {
                conn = std::make_shared<detail::HttpConnection>(co_await boost::asio::this_coro::executor, req.url,
                                                                req.url.https() ? &tls_context() : nullptr, opts_);
                ++opened_;
                co_await conn->connect();
            }
            detail::BasicResponseReader<detail::HttpConnection> reader(*conn, opts_, what);
            try {
                co_await conn->write_all(head.data(), head.size(), what);
                if (!req.body.empty()) co_await conn->write_all(req.body.data(), req.body.size(), what);
                HttpResponse resp = co_await reader.read(head_request);
                if (reader.reusable) release(std::move(conn));
                co_return resp;
            } catch (const ConnectionError&) {
                // A stale pooled connection: the server closed it while it sat idle.
                if (!(reused && !reader.got_bytes && attempt == 0)) throw;
            }
        }
    }

    // Drops every pooled connection.
    void clear_pool() {
        std::lock_guard lock(mu_);
        idle_.clear();
    }
    std::size_t idle_connections() const {
        std::lock_guard lock(mu_);
        std::size_t n = 0;
        for (const auto& [k, v] : idle_) n += v.size();
        return n;
    }
    // Connections opened so far (for tests and diagnostics).
    std::size_t connections_opened() const noexcept { return opened_.load(); }
    // I/O threads this client started: 0 before its first request, then 1 (for tests).
    std::size_t io_threads_started() const noexcept { return threads_started_.load(); }

private:
    void start() {
        std::lock_guard lock(start_mu_);
        if (thread_.joinable()) return;
        guard_.emplace(ioc_.get_executor());
        ++threads_started_;
        thread_ = std::thread([this] {
            thread_id_ = std::this_thread::get_id();
            ioc_.run();
        });
    }

    std::shared_ptr<detail::HttpConnection> take_idle(const Url& url, bool& reused) {
        const std::string key = url.origin();
        std::lock_guard lock(mu_);
        auto it = idle_.find(key);
        if (it == idle_.end()) return nullptr;
        auto& stack = it->second;
        const auto now = detail::HttpConnection::clock::now();
        while (!stack.empty()) {
            std::shared_ptr<detail::HttpConnection> c = std::move(stack.back());
            stack.pop_back();
            if (now - c->last_used > opts_.idle_timeout || c->looks_dead()) continue;
            reused = true;
            return c;
        }
        return nullptr;
    }

    void release(std::shared_ptr<detail::HttpConnection> c) {
        c->last_used = detail::HttpConnection::clock::now();
        std::lock_guard lock(mu_);
        auto& stack = idle_[c->origin().origin()];
        if (stack.size() < opts_.max_idle_per_endpoint) stack.push_back(std::move(c));
    }

    // Built on first use under a mutex, not std::call_once: an exception leaving call_once's callable
    // aborts in binaries linked with -static-libgcc (a missing AWS_CA_BUNDLE file killed the CLI
    // with SIGABRT). A failed build throws TlsError to the caller and is tried again next time.
    boost::asio::ssl::context& tls_context() {
        std::lock_guard lock(tls_mu_);
        if (tls_) return *tls_;
        tls_ = detail::make_tls_context(opts_);
        ++tls_built_;
        return *tls_;
    }

    HttpClientOptions opts_;
    // Declared first, destroyed last: the sockets and TLS streams below belong to it.
    boost::asio::io_context ioc_{1};
    std::mutex tls_mu_;
    std::unique_ptr<boost::asio::ssl::context> tls_;
    mutable std::mutex mu_;
    std::unordered_map<std::string, std::vector<std::shared_ptr<detail::HttpConnection>>> idle_;
    std::atomic<std::size_t> opened_{0};
    std::atomic<std::size_t> threads_started_{0};
    std::atomic<std::size_t> tls_built_{0};
    std::mutex start_mu_;
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard_;
    std::thread thread_;
    std::atomic<std::thread::id> thread_id_{};
};

}  // namespace smdebug::net
