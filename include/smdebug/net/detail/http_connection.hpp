#pragma once
// One HTTP/1.1 connection (plain TCP or TLS) whose operations are coroutines on the client's I/O
// context. Every operation has a deadline: a watchdog timer closes the socket when it passes, which
// ends the pending operation with an error that the operation reports as NetworkTimeout. A
// connection carries one request at a time (the pool hands it out exclusively); all of its
// operations run on the I/O thread, so no locking is needed here.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <poll.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <smdebug/net/http_types.hpp>
#include <smdebug/net/transport_errors.hpp>
#include <smdebug/net/detail/url.hpp>

namespace smdebug::net::detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
inline constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
public:
    using clock = std::chrono::steady_clock;

    // `tls` must outlive the connection when the URL is https.
    HttpConnection(const asio::any_io_executor& ex, const Url& origin, asio::ssl::context* tls, const HttpClientOptions& opts)
        : origin_(origin), opts_(opts), socket_(ex), watchdog_(ex) {
        if (origin.https()) tls_.emplace(ex, *tls);
    }
    HttpConnection(const HttpConnection&) = delete;
    HttpConnection& operator=(const HttpConnection&) = delete;
    ~HttpConnection() { close(); }

    const Url& origin() const noexcept { return origin_; }
    clock::time_point last_used = clock::now();

    asio::awaitable<void> connect() {
        const auto deadline = clock::now() + opts_.connect_timeout;
        boost::system::error_code ec;
        std::vector<tcp::endpoint> endpoints;
        auto addr = asio::ip::make_address(origin_.host, ec);
        if (!ec) {
            endpoints.emplace_back(addr, origin_.port);
        } else {
            tcp::resolver resolver(socket_.get_executor());
            arm(deadline, [&resolver] { resolver.cancel(); });
            auto [rec, results] = co_await resolver.async_resolve(origin_.host, std::to_string(origin_.port), use_tuple);
            if (disarm())
                throw NetworkTimeout("resolving " + origin_.host + " for " + origin_.origin() + " took longer than " +
                                     std::to_string(opts_.connect_timeout.count()) + " ms");
            if (rec) throw ConnectionError("cannot resolve host " + origin_.host + " for " + origin_.origin() + ": " + rec.message());
            for (const auto& r : results) endpoints.push_back(r.endpoint());
        }
        std::string last_error = "no address";
        for (const auto& ep : endpoints) {
            arm(deadline);
            auto [cec] = co_await lowest().async_connect(ep, use_tuple);
            if (disarm())
                throw NetworkTimeout("connecting to " + origin_.origin() + " timed out after " +
                                     std::to_string(opts_.connect_timeout.count()) + " ms");
            if (!cec) break;
            last_error = cec.message();
            boost::system::error_code ignored;
            lowest().close(ignored);
        }
        if (!lowest().is_open()) throw ConnectionError("cannot connect to " + origin_.origin() + ": " + last_error);
        lowest().set_option(tcp::no_delay(true), ec);
        if (tls_) co_await handshake(deadline);
        last_used = clock::now();
    }

    // Writes the whole buffer; each write must make progress within the I/O timeout.
    asio::awaitable<void> write_all(const void* data, std::size_t n, const std::string& what) {
        const char* p = static_cast<const char*>(data);
        while (n > 0) {
            arm(clock::now() + opts_.io_timeout);
            auto [ec, k] = tls_ ? co_await tls_->async_write_some(asio::buffer(p, n), use_tuple)
                                : co_await socket_.async_write_some(asio::buffer(p, n), use_tuple);
            if (disarm())
                throw NetworkTimeout(what + ": sending the request timed out after " + std::to_string(opts_.io_timeout.count()) + " ms");
            if (ec) throw ConnectionError(what + ": sending the request failed: " + ec.message());
            p += k;
            n -= k;
        }
    }

    // Reads at least one byte; returns 0 at end of stream (a clean close, or a TLS close without
    // close_notify, which HTTP's own framing detects).
    asio::awaitable<std::size_t> read_some(void* data, std::size_t n, const std::string& what) {
        arm(clock::now() + opts_.io_timeout);
        auto [ec, k] = tls_ ? co_await tls_->async_read_some(asio::buffer(data, n), use_tuple)
                            : co_await socket_.async_read_some(asio::buffer(data, n), use_tuple);
        if (disarm()) throw NetworkTimeout(what + ": no response data for " + std::to_string(opts_.io_timeout.count()) + " ms");
        if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) co_return k;
        if (ec) throw ConnectionError(what + ": reading the response failed: " + ec.message());
        co_return k;
    }

    // For a pooled connection: true when the peer has closed it (or sent something unexpected),
    // so it must not be reused. Non-blocking.
    bool looks_dead() {
        if (!lowest().is_open()) return true;
        pollfd p{lowest().native_handle(), POLLIN, 0};
        int r = ::poll(&p, 1, 0);
        return r != 0;  // readable (EOF, reset or stray bytes) or an error
    }

    void close() noexcept {
        boost::system::error_code ignored;
        watchdog_.cancel();
        if (lowest().is_open()) {
            lowest().shutdown(tcp::socket::shutdown_both, ignored);
            lowest().close(ignored);
        }
    }

private:
    tcp::socket& lowest() noexcept { return tls_ ? tls_->next_layer() : socket_; }

    // The watchdog: when `deadline` passes before disarm(), `on_expiry` runs (by default: close the
    // socket, which ends any pending operation on it). A generation number tells a stale expiry
    // (already queued when the operation completed) from the current one.
    template <class F>
    void arm(clock::time_point deadline, F on_expiry) {
        const std::uint64_t gen = ++generation_;
        expired_ = false;
        watchdog_.expires_at(deadline);
        watchdog_.async_wait([self = shared_from_this(), gen, on_expiry](const boost::system::error_code& ec) {
            if (ec || gen != self->generation_) return;
            self->expired_ = true;
            on_expiry();
        });
    }
    void arm(clock::time_point deadline) {
        arm(deadline, [this] {
            boost::system::error_code ignored;
            lowest().close(ignored);
        });
    }
    // Stops the watchdog; true when it had fired (the operation was cut short by its deadline).
    bool disarm() noexcept {
        ++generation_;
        watchdog_.cancel();
        return expired_;
    }

    asio::awaitable<void> handshake(clock::time_point deadline) {
        SSL* ssl = tls_->native_handle();
        const bool ip = is_ip_literal(origin_.host);
        if (ip) {
            if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), origin_.host.c_str()) != 1)
                throw TlsError("cannot set the expected IP address " + origin_.host + " for TLS verification");
        } else {
            if (SSL_set_tlsext_host_name(ssl, origin_.host.c_str()) != 1)
                throw TlsError("cannot set the TLS server name for " + origin_.origin());
            if (SSL_set1_host(ssl, origin_.host.c_str()) != 1)
                throw TlsError("cannot set the expected host name " + origin_.host + " for TLS verification");
        }
        tls_->set_verify_mode(asio::ssl::verify_peer);
        arm(deadline);
        auto [ec] = co_await tls_->async_handshake(asio::ssl::stream_base::client, use_tuple);
        if (disarm()) throw NetworkTimeout("TLS handshake with " + origin_.origin() + " timed out");
        if (ec) {
            long vr = SSL_get_verify_result(ssl);
            if (vr != X509_V_OK)
                throw TlsError("TLS certificate verification failed for " + origin_.origin() + ": " + X509_verify_cert_error_string(vr));
            throw TlsError("TLS handshake with " + origin_.origin() + " failed: " + ec.message());
        }
    }

    Url origin_;
    const HttpClientOptions& opts_;
    tcp::socket socket_;                               // plain HTTP
    std::optional<asio::ssl::stream<tcp::socket>> tls_;  // HTTPS
    asio::steady_timer watchdog_;
    std::uint64_t generation_ = 0;
    bool expired_ = false;
};

}  // namespace smdebug::net::detail
