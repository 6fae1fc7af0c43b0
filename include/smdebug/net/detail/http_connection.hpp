#pragma once
// One HTTP/1.1 connection (plain TCP or TLS) with blocking calls that time out. Each connection owns
// a private io_context: an operation is started asynchronously and the calling thread runs the
// context for at most the timeout, then cancels. A connection is used by one thread at a time (the
// pool hands it out exclusively), so no locking is needed here.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <poll.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <smdebug/net/http_types.hpp>
#include <smdebug/net/transport_errors.hpp>
#include <smdebug/net/detail/url.hpp>

namespace smdebug::net::detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

class HttpConnection {
public:
    using clock = std::chrono::steady_clock;

    // `tls` must outlive the connection when the URL is https.
    HttpConnection(const Url& origin, asio::ssl::context* tls, const HttpClientOptions& opts)
        : origin_(origin), opts_(opts), socket_(ioc_) {
        if (origin.https()) {
            tls_.emplace(ioc_, *tls);
        }
    }
    HttpConnection(const HttpConnection&) = delete;
    HttpConnection& operator=(const HttpConnection&) = delete;
    ~HttpConnection() { close(); }

    const Url& origin() const noexcept { return origin_; }
    clock::time_point last_used = clock::now();

    void connect() {
        const auto deadline = clock::now() + opts_.connect_timeout;
        boost::system::error_code ec;
        std::vector<tcp::endpoint> endpoints;
        auto addr = asio::ip::make_address(origin_.host, ec);
        if (!ec) {
            endpoints.emplace_back(addr, origin_.port);
        } else {
            // A synchronous lookup on a throw-away context: getaddrinfo runs in this thread and no
            // resolver thread stays attached to the pooled connection. It is bounded by the system
            // resolver's own timeouts (resolv.conf), not by connect_timeout.
            asio::io_context resolve_ctx(1);
            tcp::resolver resolver(resolve_ctx);
            auto results = resolver.resolve(origin_.host, std::to_string(origin_.port), ec);
            if (ec) throw ConnectionError("cannot resolve host " + origin_.host + " for " + origin_.origin() + ": " + ec.message());
            for (const auto& r : results) endpoints.push_back(r.endpoint());
            if (clock::now() >= deadline)
                throw NetworkTimeout("resolving " + origin_.host + " for " + origin_.origin() + " took longer than " +
                                     std::to_string(opts_.connect_timeout.count()) + " ms");
        }
        std::string last_error = "no address";
        for (const auto& ep : endpoints) {
            bool done = false;
            lowest().async_connect(ep, [&](const boost::system::error_code& e) { ec = e; done = true; });
            if (!run_until(done, deadline)) {
                abort_io();
                throw NetworkTimeout("connecting to " + origin_.origin() + " timed out after " +
                                     std::to_string(opts_.connect_timeout.count()) + " ms");
            }
            if (!ec) break;
            last_error = ec.message();
            boost::system::error_code ignored;
            lowest().close(ignored);
        }
        if (!lowest().is_open()) throw ConnectionError("cannot connect to " + origin_.origin() + ": " + last_error);
        lowest().set_option(tcp::no_delay(true), ec);
        if (tls_) handshake(deadline);
        last_used = clock::now();
    }

    // Writes the whole buffer; each write must make progress within the I/O timeout.
    void write_all(const void* data, std::size_t n, const std::string& what) {
        const char* p = static_cast<const char*>(data);
        while (n > 0) {
            boost::system::error_code ec;
            std::size_t k = 0;
            bool done = false;
            auto h = [&](const boost::system::error_code& e, std::size_t got) { ec = e; k = got; done = true; };
            if (tls_) tls_->async_write_some(asio::buffer(p, n), h);
            else socket_.async_write_some(asio::buffer(p, n), h);
            if (!run_until(done, clock::now() + opts_.io_timeout)) {
                abort_io();
                throw NetworkTimeout(what + ": sending the request timed out after " +
                                     std::to_string(opts_.io_timeout.count()) + " ms");
            }
            if (ec) throw ConnectionError(what + ": sending the request failed: " + ec.message());
            p += k;
            n -= k;
        }
    }

    // Reads at least one byte; returns 0 at end of stream (a clean close, or a TLS close without
    // close_notify, which HTTP's own framing detects).
    std::size_t read_some(void* data, std::size_t n, const std::string& what) {
        boost::system::error_code ec;
        std::size_t k = 0;
        bool done = false;
        auto h = [&](const boost::system::error_code& e, std::size_t got) { ec = e; k = got; done = true; };
        if (tls_) tls_->async_read_some(asio::buffer(data, n), h);
        else socket_.async_read_some(asio::buffer(data, n), h);
        if (!run_until(done, clock::now() + opts_.io_timeout)) {
            abort_io();
            throw NetworkTimeout(what + ": no response data for " + std::to_string(opts_.io_timeout.count()) + " ms");
        }
        if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) return k;
        if (ec) throw ConnectionError(what + ": reading the response failed: " + ec.message());
        return k;
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
        if (lowest().is_open()) {
            lowest().shutdown(tcp::socket::shutdown_both, ignored);
            lowest().close(ignored);
        }
    }

private:
    tcp::socket& lowest() noexcept { return tls_ ? tls_->next_layer() : socket_; }

    // Runs the context until `done` or the deadline; false on timeout.
    bool run_until(bool& done, clock::time_point deadline) {
        ioc_.restart();
        while (!done) {
            auto now = clock::now();
            if (now >= deadline) break;
            ioc_.run_one_for(deadline - now);
            if (ioc_.stopped() && !done) {
                if (clock::now() >= deadline) break;
                ioc_.restart();
            }
        }
        return done;
    }
    // Cancels the pending operation by closing the socket, and lets its handler run.
    void abort_io() noexcept {
        boost::system::error_code ignored;
        lowest().close(ignored);
        drain();
    }
    void drain() noexcept {
        try {
            ioc_.restart();
            ioc_.run();
        } catch (...) {
        }
    }

    void handshake(clock::time_point deadline) {
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
        boost::system::error_code ec;
        bool done = false;
        tls_->async_handshake(asio::ssl::stream_base::client, [&](const boost::system::error_code& e) { ec = e; done = true; });
        if (!run_until(done, deadline)) {
            abort_io();
            throw NetworkTimeout("TLS handshake with " + origin_.origin() + " timed out");
        }
        if (ec) {
            long vr = SSL_get_verify_result(ssl);
            if (vr != X509_V_OK)
                throw TlsError("TLS certificate verification failed for " + origin_.origin() + ": " +
                               X509_verify_cert_error_string(vr));
            throw TlsError("TLS handshake with " + origin_.origin() + " failed: " + ec.message());
        }
    }

    Url origin_;
    const HttpClientOptions& opts_;
    asio::io_context ioc_{1};
    tcp::socket socket_;                               // plain HTTP
    std::optional<asio::ssl::stream<tcp::socket>> tls_;  // HTTPS
};

}  // namespace smdebug::net::detail
