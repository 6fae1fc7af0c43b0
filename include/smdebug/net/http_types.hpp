#pragma once
// Plain data of the HTTP client: a request, a response and the client's options.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/text.hpp>
#include <smdebug/net/detail/url.hpp>
#include <smdebug/core/byte_buffer.hpp>

namespace smdebug::net {

struct HttpHeader {
    std::string name;
    std::string value;
};

using text::iequals;  // header names compare case-insensitively

inline const std::string* find_header(const std::vector<HttpHeader>& headers, std::string_view name) noexcept {
    for (const auto& h : headers)
        if (iequals(h.name, name)) return &h.value;
    return nullptr;
}

struct HttpRequest {
    std::string method = "GET";
    Url url;                              // scheme/host/port pick the pooled connection; target is sent
    std::vector<HttpHeader> headers;      // Host, Content-Length and User-Agent are added when absent
    std::span<const std::byte> body;      // must stay alive until send() returns

    const std::string* header(std::string_view name) const noexcept { return find_header(headers, name); }
    // "GET https://host/target": how messages name a request (URLs never carry secrets here).
    std::string describe() const { return method + " " + url.str(); }
};

struct HttpResponse {
    int status = 0;
    std::string reason;
    std::vector<HttpHeader> headers;
    ByteBuffer body;

    const std::string* header(std::string_view name) const noexcept { return find_header(headers, name); }
};

struct HttpClientOptions {
    std::chrono::milliseconds connect_timeout{10'000};  // resolve + TCP connect + TLS handshake
    std::chrono::milliseconds io_timeout{20'000};       // each read or write must progress within this
    // The status line and headers must all arrive within this, however the server trickles them.
    std::chrono::milliseconds header_timeout{20'000};
    // A body slower than low_speed_limit bytes/s over any low_speed_time is abandoned (curl's
    // --speed-limit / --speed-time): a trickle cannot hold a read for ever. 0 turns it off.
    std::uint64_t low_speed_limit = 1024;
    std::chrono::milliseconds low_speed_time{20'000};
    std::size_t max_header_bytes = 64 * 1024;           // status line and headers together
    std::uint64_t max_body_bytes = std::uint64_t{4} << 30;
    std::size_t max_idle_per_endpoint = 64;
    std::chrono::milliseconds idle_timeout{15'000};     // pooled connections idle longer are dropped
    // An extra PEM file of trusted CAs, added to the system's default trust store (for example a
    // private CA, or a test server's self-signed certificate). Verification is always on.
    std::string extra_ca_file;
    std::string user_agent = "smdebug-cpp/0.1";
};

}  // namespace smdebug::net
