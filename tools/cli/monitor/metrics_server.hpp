#pragma once
// The small HTTP/1.1 server behind `smdebug monitor --metrics-port`: GET (or HEAD) /metrics
// answers the exposition of exposition.hpp, in the format the Accept header asks for.
//
//  - Its own thread runs one Boost.Asio io_context; the page is rendered on that thread by the
//    `render` callback (which copies a snapshot under the monitor's mutex), so a scrape never
//    waits for the reader and the reader never waits for a scrape.
//  - Bounded: a request head larger than max_request_bytes gets 431 and the connection closes;
//    a connection that has not been answered within `timeout` (slow or silent client) is closed;
//    at most max_connections connections are open at once (the others are closed on accept).
//  - One request per connection (`Connection: close`). Other paths get 404, other methods 405,
//    a request line that does not parse 400.
// Listening fails (address in use, not an address, no permission) with SMDebugCustomerError
// naming the address and the reason.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/net/detail/url.hpp>

#include "exposition.hpp"

namespace cli::monitor {

struct MetricsServerOptions {
    std::string bind = "127.0.0.1";
    std::uint16_t port = 0;  // 0: the system picks one (port() tells which)
    std::size_t max_request_bytes = 8192;
    std::chrono::milliseconds timeout{5000};
    int max_connections = 32;
};

// The parts of a request head the server uses.
struct RequestHead {
    std::string method, target, accept;
};

// Parses "METHOD TARGET HTTP/1.x\r\n" and the headers up to the blank line; nullopt when the
// request line is not of that form.
inline std::optional<RequestHead> parse_request_head(std::string_view head) {
    const auto eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    const auto sp1 = line.find(' ');
    const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp1 == 0 || sp2 == std::string_view::npos || sp2 == sp1 + 1 || line.find(' ', sp2 + 1) != std::string_view::npos ||
        !line.substr(sp2 + 1).starts_with("HTTP/1."))
        return std::nullopt;
    RequestHead r{std::string(line.substr(0, sp1)), std::string(line.substr(sp1 + 1, sp2 - sp1 - 1)), {}};
    for (std::size_t at = eol; at != std::string_view::npos && at + 2 < head.size();) {
        const auto next = head.find("\r\n", at + 2);
        const std::string_view field = head.substr(at + 2, next == std::string_view::npos ? std::string_view::npos : next - at - 2);
        const auto colon = field.find(':');
        if (colon != std::string_view::npos && smdebug::text::iequals(field.substr(0, colon), "accept")) {
            if (!r.accept.empty()) r.accept += ", ";
            r.accept += smdebug::text::trim(field.substr(colon + 1), smdebug::text::whitespace);
        }
        at = next;
    }
    return r;
}

// The full response (status line, headers, body) to a request head.
inline std::string respond(std::string_view head, const std::function<std::string(Exposition)>& render) {
    auto reply = [](std::string_view status, std::string_view type, const std::string& body, bool with_body = true,
                    std::string_view extra = {}) {
        std::string out = "HTTP/1.1 ";
        out += status;
        out += "\r\nContent-Type: ";
        out += type;
        out += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
        out += extra;
        out += "\r\n";
        if (with_body) out += body;
        return out;
    };
    const auto req = parse_request_head(head);
    if (!req) return reply("400 Bad Request", "text/plain; charset=utf-8", "bad request\n");
    if (req->method != "GET" && req->method != "HEAD")
        return reply("405 Method Not Allowed", "text/plain; charset=utf-8", "only GET and HEAD\n", true, "Allow: GET, HEAD\r\n");
    const std::string_view path = std::string_view(req->target).substr(0, req->target.find('?'));
    if (path != "/metrics") return reply("404 Not Found", "text/plain; charset=utf-8", "the metrics are at /metrics\n", req->method == "GET");
    const auto format = negotiate(req->accept);
    std::string body;
    try {
        body = render(format);
    } catch (const std::exception&) {
        return reply("500 Internal Server Error", "text/plain; charset=utf-8", "cannot render the metrics\n");
    }
    return reply("200 OK", content_type(format), body, req->method == "GET");
}

class MetricsServer {
public:
    using Render = std::function<std::string(Exposition)>;

    MetricsServer(MetricsServerOptions options, Render render)
        : options_(std::move(options)), render_(std::move(render)), acceptor_(io_) {
        namespace ip = boost::asio::ip;
        boost::system::error_code ec;
        const auto address = ip::make_address(options_.bind, ec);
        const std::string where = options_.bind + ":" + std::to_string(options_.port);
        if (ec) throw smdebug::SMDebugCustomerError("--metrics-bind: '" + options_.bind + "' is not an IP address");
        const ip::tcp::endpoint endpoint(address, options_.port);
        auto check = [&](const char* what) {
            if (ec) throw smdebug::SMDebugCustomerError("cannot listen on " + where + " for the metrics (" + what + "): " + ec.message());
        };
        acceptor_.open(endpoint.protocol(), ec);
        check("socket");
        acceptor_.set_option(ip::tcp::acceptor::reuse_address(true), ec);
        check("SO_REUSEADDR");
        acceptor_.bind(endpoint, ec);
        check("bind");
        acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
        check("listen");
        port_ = acceptor_.local_endpoint().port();
        accept();
        thread_ = std::thread([this] { io_.run(); });
    }
    ~MetricsServer() {
        io_.stop();
        if (thread_.joinable()) thread_.join();
    }
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    std::uint16_t port() const noexcept { return port_; }
    // http://ADDR:PORT/metrics (an IPv6 address in brackets).
    std::string url() const { return smdebug::net::Url{"http", options_.bind, port_, "/metrics"}.str(); }
    // Requests answered so far (any status).
    std::uint64_t answered() const noexcept { return answered_.load(); }

private:
    struct Session : std::enable_shared_from_this<Session> {
        Session(MetricsServer& s, boost::asio::ip::tcp::socket sock)
            : server(s), socket(std::move(sock)), buffer(s.options_.max_request_bytes), timer(s.io_) {}
        ~Session() { --server.open_; }

        void start() {
            timer.expires_after(server.options_.timeout);
            timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
                if (!ec) {
                    boost::system::error_code ignored;
                    self->socket.close(ignored);
                }
            });
            boost::asio::async_read_until(socket, buffer, "\r\n\r\n", [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                if (ec == boost::asio::error::not_found) {
                    self->send("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    return;
                }
                if (ec) {  // closed, reset or timed out
                    self->timer.cancel();
                    return;
                }
                const auto data = self->buffer.data();
                const std::string_view head(static_cast<const char*>(data.data()), n);
                self->send(respond(head, self->server.render_));
            });
        }
        void send(std::string response) {
            reply = std::move(response);
            ++server.answered_;
            boost::asio::async_write(socket, boost::asio::buffer(reply), [self = shared_from_this()](const boost::system::error_code&, std::size_t) {
                boost::system::error_code ignored;
                self->socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
                self->socket.close(ignored);
                self->timer.cancel();
            });
        }

        MetricsServer& server;
        boost::asio::ip::tcp::socket socket;
        boost::asio::streambuf buffer;
        boost::asio::steady_timer timer;
        std::string reply;
    };

    void accept() {
        acceptor_.async_accept([this](const boost::system::error_code& ec, boost::asio::ip::tcp::socket socket) {
            if (ec == boost::asio::error::operation_aborted) return;
            if (!ec) {
                if (open_ >= options_.max_connections) {
                    boost::system::error_code ignored;
                    socket.close(ignored);
                } else {
                    ++open_;
                    std::make_shared<Session>(*this, std::move(socket))->start();
                }
            }
            accept();
        });
    }

    MetricsServerOptions options_;
    Render render_;
    int open_ = 0;  // open connections (touched on the server thread only; outlives io_'s sessions)
    std::atomic<std::uint64_t> answered_{0};
    boost::asio::io_context io_;
    boost::asio::ip::tcp::acceptor acceptor_;
    std::uint16_t port_ = 0;
    std::thread thread_;
};

}  // namespace cli::monitor
