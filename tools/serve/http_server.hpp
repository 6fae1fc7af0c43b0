#pragma once
// The HTTP/1.1 server of `smdebug serve`, on Boost.Beast.
//
//  - One thread runs the network (an io_context); API requests are answered on a small pool of
//    worker threads (they read trials), and their answers are written back by the network thread.
//    A slow or vanished browser holds only its own connection: every read and write has a timeout,
//    and an event-stream client that falls more than max_pending_event_bytes behind is dropped.
//  - Every request is checked first: GET or HEAD only (405), a head of at most 8 KiB (431 / 400),
//    and a Host header naming the bound address or localhost (host_check.hpp; 403 otherwise).
//  - /api/v1/events is a text/event-stream: one `event: run` with the run's status (JSON) when a
//    run gains steps or ends, and each run's status when the stream opens; a comment every 15 s.
//  - Other /api/v1/ paths go to `api`; anything else to `asset` (the embedded page).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <smdebug/core/errors.hpp>
#include <smdebug/net/detail/url.hpp>

#include "host_check.hpp"

namespace serve {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct Reply {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;
    bool html = false;  // gets the page's Content-Security-Policy
};

struct ServerOptions {
    std::string host = "127.0.0.1";
    std::uint16_t port = 6006;
    std::vector<std::string> allowed_hosts;  // --trust-host
    std::chrono::milliseconds io_timeout{15000};
    std::size_t max_connections = 256;
    std::size_t max_pending_event_bytes = 1 << 20;
    int worker_threads = 2;
};

class HttpServer;

class Session : public std::enable_shared_from_this<Session> {
public:
    Session(tcp::socket socket, HttpServer& server) : stream_(std::move(socket)), server_(server) {}
    ~Session();
    void start() { read(); }
    // Event streams: queue `text` for this client (network thread only).
    void push_event(const std::string& text);
    void close() {
        beast::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
        stream_.close();
    }

private:
    void read();
    void on_request();
    void write(Reply reply, bool head_only);
    void start_events();
    void write_events();

    beast::tcp_stream stream_;
    HttpServer& server_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::empty_body>> parser_;
    // event stream
    bool streaming_ = false, writing_ = false;
    std::deque<std::string> pending_;
    std::size_t pending_bytes_ = 0;
    std::string in_flight_;
    char discard_[64];
};

class HttpServer {
public:
    using Api = std::function<Reply(std::string_view path, std::string_view query)>;
    using Asset = std::function<std::optional<Reply>(std::string_view path)>;
    using Opening = std::function<std::vector<std::string>()>;  // the events a new stream starts with

    HttpServer(ServerOptions options, Api api, Asset asset, Opening opening)
        : options_(std::move(options)), api_(std::move(api)), asset_(std::move(asset)), opening_(std::move(opening)),
          acceptor_(io_), pool_(static_cast<std::size_t>(options_.worker_threads)), heartbeat_(io_) {
        boost::system::error_code ec;
        const auto address = asio::ip::make_address(options_.host, ec);
        const std::string where = options_.host + ":" + std::to_string(options_.port);
        if (ec) throw smdebug::SMDebugCustomerError("--host: '" + options_.host + "' is not an IP address");
        const tcp::endpoint endpoint(address, options_.port);
        const auto check = [&](const char* what) {
            if (ec) throw smdebug::SMDebugCustomerError("cannot listen on " + where + " (" + what + "): " + ec.message());
        };
        acceptor_.open(endpoint.protocol(), ec);
        check("socket");
        acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
        check("SO_REUSEADDR");
        acceptor_.bind(endpoint, ec);
        check("bind");
        acceptor_.listen(asio::socket_base::max_listen_connections, ec);
        check("listen");
        port_ = acceptor_.local_endpoint().port();
    }
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    std::uint16_t port() const noexcept { return port_; }
    std::string url() const { return smdebug::net::Url{"http", options_.host, port_, "/"}.str(); }

    // Serves until SIGINT or SIGTERM (or stop()).
    void run() {
        accept();
        beat();
        asio::signal_set signals(io_, SIGINT, SIGTERM);
        signals.async_wait([this](const boost::system::error_code&, int) { stop(); });
        io_.run();
        pool_.join();
    }
    void stop() {
        asio::post(io_, [this] {
            beast::error_code ec;
            acceptor_.close(ec);
            heartbeat_.cancel();
            for (auto& weak : streams_)
                if (auto s = weak.lock()) s->close();
            io_.stop();
        });
    }

    // Sends `text` (a whole event) to every open event stream; any thread.
    void broadcast(std::string text) {
        asio::post(io_, [this, text = std::move(text)] {
            for (auto it = streams_.begin(); it != streams_.end();) {
                if (auto s = it->lock()) {
                    s->push_event(text);
                    ++it;
                } else {
                    it = streams_.erase(it);
                }
            }
        });
    }

private:
    friend class Session;

    void accept() {
        acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
            if (ec == asio::error::operation_aborted) return;
            if (!ec) {
                if (connections_.load() >= options_.max_connections) {
                    socket.close(ec);
                } else {
                    ++connections_;  // the session's destructor takes it back
                    std::make_shared<Session>(std::move(socket), *this)->start();
                }
            }
            accept();
        });
    }
    void beat() {
        heartbeat_.expires_after(std::chrono::seconds(15));
        heartbeat_.async_wait([this](const boost::system::error_code& ec) {
            if (ec) return;
            broadcast(": keep-alive\n\n");
            beat();
        });
    }

    ServerOptions options_;
    Api api_;
    Asset asset_;
    Opening opening_;
    std::atomic<std::size_t> connections_{0};  // before io_: sessions its handlers hold outlive the members after it
    asio::io_context io_{1};
    tcp::acceptor acceptor_;
    asio::thread_pool pool_;
    asio::steady_timer heartbeat_;
    std::uint16_t port_ = 0;
    std::vector<std::weak_ptr<Session>> streams_;  // network thread only
};

inline Session::~Session() { --server_.connections_; }

inline void Session::read() {
    parser_.emplace();
    parser_->header_limit(8192);
    stream_.expires_after(server_.options_.io_timeout);
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec == http::error::header_limit) return self->write({431, "text/plain; charset=utf-8", "request head too large\n"}, false);
        if (ec && ec != http::error::end_of_stream && ec.category() == beast::error_code(http::error::bad_target).category())
            return self->write({400, "text/plain; charset=utf-8", "bad request\n"}, false);
        if (ec) return self->close();
        self->on_request();
    });
}

inline void Session::on_request() {
    const auto& req = parser_->get();
    const bool head = req.method() == http::verb::head;
    if (req.method() != http::verb::get && !head) return write({405, "text/plain; charset=utf-8", "only GET and HEAD\n"}, false);
    const auto host = req[http::field::host];
    if (!host_allowed(std::string_view(host.data(), host.size()), server_.options_.host, server_.port_, server_.options_.allowed_hosts))
        return write({403, "text/plain; charset=utf-8",
                      "refused: the Host header must name this server's address or localhost (DNS rebinding guard)\n"},
                     head);
    const std::string target(req.target());
    const auto qmark = target.find('?');
    const std::string path = target.substr(0, qmark);
    const std::string query = qmark == std::string::npos ? "" : target.substr(qmark + 1);
    if (path == "/api/v1/events") return start_events();
    if (path.starts_with("/api/")) {
        asio::post(server_.pool_, [self = shared_from_this(), path, query, head] {
            Reply reply = self->server_.api_(path, query);
            asio::post(self->stream_.get_executor(), [self, reply = std::move(reply), head]() mutable { self->write(std::move(reply), head); });
        });
        return;
    }
    if (auto reply = server_.asset_(path)) return write(std::move(*reply), head);
    write({404, "text/plain; charset=utf-8", "not found\n"}, head);
}

inline void Session::write(Reply reply, bool head_only) {
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(reply.status), 11);
    res->set(http::field::server, "smdebug-serve");
    res->set(http::field::content_type, reply.content_type);
    res->set(http::field::cache_control, "no-store");
    res->set("X-Content-Type-Options", "nosniff");
    res->set("Referrer-Policy", "no-referrer");
    if (reply.html) {
        res->set("Content-Security-Policy",
                 "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
                 "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
        res->set("X-Frame-Options", "DENY");
    }
    const bool keep_alive = parser_ && parser_->is_done() && parser_->get().keep_alive() && reply.status < 400;
    res->keep_alive(keep_alive);
    if (head_only) {
        res->content_length(reply.body.size());
    } else {
        res->body() = std::move(reply.body);
        res->prepare_payload();
    }
    stream_.expires_after(server_.options_.io_timeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res, keep_alive](beast::error_code ec, std::size_t) {
        if (ec || !keep_alive) return self->close();
        self->read();
    });
}

inline void Session::start_events() {
    streaming_ = true;
    std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
        "Connection: keep-alive\r\n\r\n";
    pending_.push_back(std::move(head));
    for (auto& e : server_.opening_()) pending_.push_back(std::move(e));
    server_.streams_.push_back(weak_from_this());
    write_events();
    // Reading nothing more: a read that ends tells when the browser has gone.
    stream_.expires_never();
    stream_.socket().async_read_some(asio::buffer(discard_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec) self->close();
    });
}

inline void Session::push_event(const std::string& text) {
    if (!streaming_) return;
    pending_bytes_ += text.size();
    if (pending_bytes_ > server_.options_.max_pending_event_bytes) return close();  // too far behind
    pending_.push_back(text);
    if (!writing_) write_events();
}

inline void Session::write_events() {
    if (pending_.empty()) {
        writing_ = false;
        return;
    }
    writing_ = true;
    in_flight_.clear();
    while (!pending_.empty()) {
        in_flight_ += pending_.front();
        pending_.pop_front();
    }
    pending_bytes_ = 0;
    auto& socket = stream_.socket();
    auto timer = std::make_shared<asio::steady_timer>(stream_.get_executor());
    timer->expires_after(server_.options_.io_timeout);
    timer->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
        if (!ec) self->close();  // the write did not finish in time
    });
    asio::async_write(socket, asio::buffer(in_flight_), [self = shared_from_this(), timer](beast::error_code ec, std::size_t) {
        timer->cancel();
        if (ec) return self->close();
        self->write_events();
    });
}

}  // namespace serve
