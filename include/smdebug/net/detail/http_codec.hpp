#pragma once
// HTTP/1.1 on one connection: serialising a request head, and reading a response (status line,
// headers, a Content-Length, chunked or read-until-close body) with hard bounds on every part.
// Malformed input throws HttpProtocolError; a body that ends early throws TruncatedResponse.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <smdebug/core/text.hpp>
#include <smdebug/net/http_types.hpp>
#include <smdebug/net/transport_errors.hpp>

namespace smdebug::net::detail {

namespace asio = boost::asio;

// Limits of the response parser beyond HttpClientOptions' header and body byte limits.
inline constexpr std::size_t max_response_headers = 200;
inline constexpr std::size_t max_chunk_size_line = 4096;

inline bool is_token_char(unsigned char c) noexcept {
    if (c >= '0' && c <= '9') return true;
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
    return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != 0;
}

// The request line and headers. Rejects CR/LF/NUL in the target and in header fields, which
// would otherwise let a key or a header value inject another request.
inline std::string serialize_request_head(const HttpRequest& req, const HttpClientOptions& opts) {
    auto bad = [&](const std::string& why) { return UsageError(req.describe() + ": " + why); };
    for (char c : req.method)
        if (!is_token_char(static_cast<unsigned char>(c))) throw bad("invalid method");
    for (char c : req.url.target)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) throw bad("request target contains blanks or control characters");
    std::string head;
    head.reserve(256 + req.headers.size() * 64);
    head += req.method;
    head += ' ';
    head += req.url.target;
    head += " HTTP/1.1\r\n";
    auto add = [&](std::string_view n, std::string_view v) {
        if (n.empty()) throw bad("empty header name");
        for (char c : n)
            if (!is_token_char(static_cast<unsigned char>(c))) throw bad("invalid header name '" + std::string(n) + "'");
        for (char c : v)
            if (c == '\r' || c == '\n' || c == '\0') throw bad("header " + std::string(n) + " contains CR, LF or NUL");
        head += n;
        head += ": ";
        head += v;
        head += "\r\n";
    };
    if (!req.header("Host")) add("Host", req.url.authority());
    if (!req.header("User-Agent") && !opts.user_agent.empty()) add("User-Agent", opts.user_agent);
    if (!req.header("Content-Length") && !req.header("Transfer-Encoding") &&
        (!req.body.empty() || req.method == "PUT" || req.method == "POST"))
        add("Content-Length", std::to_string(req.body.size()));
    for (const auto& h : req.headers) add(h.name, h.value);
    head += "\r\n";
    return head;
}

// Reads one response from a connection, as a coroutine on the connection's executor. `reusable`
// tells whether the connection may carry another request afterwards; `got_bytes` whether any byte
// of a response arrived (a pooled connection that fails before that was closed by the server while
// idle, and can be retried). `Connection` needs only
// `asio::awaitable<std::size_t> read_some(void*, std::size_t, const std::string& what)` (0 at end of
// stream); a template so the fuzzer can feed the reader from memory.
template <class Connection>
class BasicResponseReader {
public:
    BasicResponseReader(Connection& c, const HttpClientOptions& opts, std::string what)
        : c_(c), opts_(opts), what_(std::move(what)) {}

    bool got_bytes = false;
    bool reusable = false;

    asio::awaitable<HttpResponse> read(bool head_request) {
        HttpResponse resp;
        int minor = 0;
        head_deadline_ = std::chrono::steady_clock::now() + opts_.header_timeout;
        in_head_ = true;
        // Skip interim 1xx responses (100 Continue, 103 Early Hints).
        do {
            resp = HttpResponse{};
            co_await fill_head();
            minor = parse_head(resp);
        } while (resp.status >= 100 && resp.status < 200 && resp.status != 101);
        if (resp.status == 101) fail("unexpected 101 Switching Protocols");
        in_head_ = false;
        window_start_ = std::chrono::steady_clock::now();
        window_bytes_ = 0;

        bool keep_alive = minor >= 1;
        if (const auto* conn = resp.header("Connection")) {
            if (contains_token(*conn, "close")) keep_alive = false;
            else if (contains_token(*conn, "keep-alive")) keep_alive = true;
        }
        const std::string* te = resp.header("Transfer-Encoding");
        const std::string* cl = resp.header("Content-Length");
        if (head_request || resp.status == 204 || resp.status == 304) {
            reusable = keep_alive && pos_ == buf_.size();
            co_return resp;
        }
        if (te) {
            if (!ends_with_chunked(*te)) {
                co_await read_until_close(resp);
                co_return resp;
            }
            co_await read_chunked(resp);
            reusable = keep_alive && !cl && pos_ == buf_.size();
            co_return resp;
        }
        if (cl) {
            std::uint64_t n = parse_content_length(resp);
            co_await read_sized(resp, n);
            reusable = keep_alive && pos_ == buf_.size();
            co_return resp;
        }
        co_await read_until_close(resp);
        co_return resp;
    }

private:
    std::chrono::steady_clock::time_point head_deadline_{}, window_start_{};
    std::uint64_t window_bytes_ = 0;
    bool in_head_ = true;

    [[noreturn]] void fail(const std::string& why) const { throw HttpProtocolError(what_ + ": malformed response: " + why); }

    [[noreturn]] void too_long(const char* what, std::size_t limit) const {
        throw ResponseTooLarge(what_ + ": malformed response: " + what + " longer than " + std::to_string(limit) + " bytes");
    }

    static bool contains_token(std::string_view list, std::string_view token) {
        bool found = false;
        text::for_each_item(list, ',', text::blanks, [&](std::string_view item) { found = found || text::iequals(item, token); });
        return found;
    }
    static bool ends_with_chunked(std::string_view te) {
        auto comma = te.rfind(',');
        const std::string_view last = comma == std::string_view::npos ? te : te.substr(comma + 1);
        return text::iequals(text::trim(last, text::blanks), "chunked");
    }

    // Reads more bytes into buf_; returns false at end of stream.
    asio::awaitable<bool> fill() {
        if (pos_ > 0 && pos_ == buf_.size()) {
            buf_.clear();
            pos_ = 0;
        }
        const std::size_t old = buf_.size();
        buf_.resize(old + 16384);
        std::size_t k = co_await c_.read_some(buf_.data() + old, 16384, what_);
        buf_.resize(old + k);
        if (k > 0) got_bytes = true;
        progress(k);
        co_return k > 0;
    }

    // The deadlines a trickle cannot extend: the whole head within header_timeout, and the body at
    // low_speed_limit bytes/s or more over every low_speed_time window.
    void progress(std::size_t k) {
        const auto now = std::chrono::steady_clock::now();
        if (in_head_) {
            if (now > head_deadline_)
                throw NetworkTimeout(what_ + ": the status line and headers did not arrive within " +
                                     std::to_string(opts_.header_timeout.count()) + " ms (HttpClientOptions::header_timeout)");
            return;
        }
        if (opts_.low_speed_limit == 0) return;
        window_bytes_ += k;
        if (now - window_start_ < opts_.low_speed_time) return;
        const double seconds = std::chrono::duration<double>(now - window_start_).count();
        if (static_cast<double>(window_bytes_) < static_cast<double>(opts_.low_speed_limit) * seconds)
            throw NetworkTimeout(what_ + ": the body arrived at " + std::to_string(static_cast<std::uint64_t>(window_bytes_ / seconds)) +
                                 " bytes/s for " + std::to_string(static_cast<std::int64_t>(seconds)) + " s, below the limit of " +
                                 std::to_string(opts_.low_speed_limit) + " bytes/s (HttpClientOptions::low_speed_limit)");
        window_start_ = now;
        window_bytes_ = 0;
    }

    // Fills until the buffer holds a complete line (or `limit` is passed) without consuming it.
    asio::awaitable<void> fill_line(std::size_t limit, const char* what) {
        std::size_t scanned = pos_;
        while (true) {
            auto nl = buf_.find('\n', scanned);
            if (nl != std::string::npos) {
                if (nl - pos_ > limit) too_long(what, limit);
                co_return;
            }
            if (buf_.size() - pos_ > limit) too_long(what, limit);
            scanned = buf_.size();
            if (!co_await fill()) {
                if (!got_bytes) throw ConnectionError(what_ + ": the server closed the connection without responding");
                throw TruncatedResponse(what_ + ": the connection closed in the middle of the response " + what);
            }
        }
    }

    // Fills until the buffer holds the whole head (status line, headers, the empty line), within
    // max_header_bytes.
    asio::awaitable<void> fill_head() {
        std::size_t scanned = pos_;
        while (true) {
            // The empty line ends the head: "\n\r\n" or "\n\n" (bare LFs are accepted).
            for (auto nl = buf_.find('\n', scanned); nl != std::string::npos; nl = buf_.find('\n', nl + 1)) {
                const std::size_t next = nl + 1;
                if (next < buf_.size() && buf_[next] == '\n') co_return;
                if (next + 1 < buf_.size() && buf_[next] == '\r' && buf_[next + 1] == '\n') co_return;
                if (next >= buf_.size() || (buf_[next] == '\r' && next + 1 >= buf_.size())) break;  // undecided yet
                scanned = next;
            }
            const std::size_t have = buf_.size() - pos_;
            if (have > opts_.max_header_bytes + 4) {
                // The status line alone, or the whole head, is too long: say which.
                if (buf_.find('\n', pos_) == std::string::npos) too_long("status line", opts_.max_header_bytes);
                throw ResponseTooLarge(what_ + ": response headers exceed " + std::to_string(opts_.max_header_bytes) + " bytes");
            }
            if (!co_await fill()) {
                if (!got_bytes) throw ConnectionError(what_ + ": the server closed the connection without responding");
                const char* part = buf_.find('\n', pos_) == std::string::npos ? "status line" : "header section";
                throw TruncatedResponse(what_ + ": the connection closed in the middle of the response " + part);
            }
        }
    }

    // One buffered line without its CRLF (a bare LF is accepted too); the caller filled it.
    std::string take_line(std::size_t limit, const char* what) {
        auto nl = buf_.find('\n', pos_);
        if (nl == std::string::npos || nl - pos_ > limit) too_long(what, limit);
        std::string line = buf_.substr(pos_, nl - pos_);
        pos_ = nl + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
    }

    // Status line and headers, from a buffered head; returns the HTTP minor version.
    int parse_head(HttpResponse& resp) {
        std::size_t budget = opts_.max_header_bytes;
        std::string line = take_line(budget, "status line");
        budget -= std::min(budget, line.size() + 2);
        // "HTTP/1.1 200 OK"
        if (line.size() < 12 || !line.starts_with("HTTP/1.") || (line[7] != '0' && line[7] != '1') ||
            line[8] != ' ' || line[9] < '1' || line[9] > '5' || line[10] < '0' || line[10] > '9' ||
            line[11] < '0' || line[11] > '9' || (line.size() > 12 && line[12] != ' '))
            fail("bad status line '" + printable(line) + "'");
        resp.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
        resp.reason = line.size() > 13 ? line.substr(13) : std::string();
        const int minor = line[7] - '0';
        while (true) {
            if (budget == 0) throw ResponseTooLarge(what_ + ": response headers exceed " + std::to_string(opts_.max_header_bytes) + " bytes");
            const auto nl = buf_.find('\n', pos_);
            if (nl - pos_ > budget) throw ResponseTooLarge(what_ + ": response headers exceed " + std::to_string(opts_.max_header_bytes) + " bytes");
            line = take_line(budget, "header section");
            budget -= std::min(budget, line.size() + 2);
            if (line.empty()) break;
            if (resp.headers.size() >= max_response_headers)
                throw ResponseTooLarge(what_ + ": more than " + std::to_string(max_response_headers) + " response headers");
            if (line[0] == ' ' || line[0] == '\t') fail("obsolete folded header line");
            auto colon = line.find(':');
            if (colon == std::string::npos || colon == 0) fail("header line without a name: '" + printable(line) + "'");
            for (std::size_t i = 0; i < colon; ++i)
                if (!is_token_char(static_cast<unsigned char>(line[i]))) fail("invalid header name '" + printable(line.substr(0, colon)) + "'");
            const std::string_view v = text::trim(std::string_view(line).substr(colon + 1), text::blanks);
            for (char c : v)
                if (c == '\0' || c == '\r') fail("control character in header " + line.substr(0, colon));
            resp.headers.push_back({line.substr(0, colon), std::string(v)});
        }
        return minor;
    }

    static std::string printable(std::string_view s) {
        std::string out;
        for (char c : s.substr(0, 80)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
        if (s.size() > 80) out += "...";
        return out;
    }

    std::uint64_t parse_content_length(const HttpResponse& resp) const {
        std::optional<std::uint64_t> value;
        for (const auto& h : resp.headers) {
            if (!iequals(h.name, "Content-Length")) continue;
            // A list of identical values ("5, 5") is allowed; anything else is an error.
            std::string_view s = h.value;
            std::size_t b = 0;
            while (b <= s.size()) {
                auto e = s.find(',', b);
                if (e == std::string_view::npos) e = s.size();
                std::string_view item = s.substr(b, e - b);
                while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
                while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
                if (item.empty() || item.size() > 19) fail("bad Content-Length '" + printable(h.value) + "'");
                std::uint64_t v = 0;
                for (char c : item) {
                    if (c < '0' || c > '9') fail("bad Content-Length '" + printable(h.value) + "'");
                    v = v * 10 + static_cast<std::uint64_t>(c - '0');
                }
                if (value && *value != v) fail("conflicting Content-Length values");
                value = v;
                b = e + 1;
            }
        }
        return *value;
    }

    void check_body_limit(std::uint64_t n) const {
        if (n > opts_.max_body_bytes)
            throw ResponseTooLarge(what_ + ": response body of " + std::to_string(n) + " bytes exceeds the limit of " +
                                   std::to_string(opts_.max_body_bytes) + " bytes");
    }

    asio::awaitable<void> read_sized(HttpResponse& resp, std::uint64_t n) {
        check_body_limit(n);
        ByteBuffer body(static_cast<std::size_t>(n));
        std::size_t have = std::min<std::size_t>(static_cast<std::size_t>(n), buf_.size() - pos_);
        if (have) std::memcpy(body.data(), buf_.data() + pos_, have);
        pos_ += have;
        while (have < n) {
            std::size_t k = co_await c_.read_some(body.data() + have, static_cast<std::size_t>(n) - have, what_);
            progress(k);
            if (k == 0)
                throw TruncatedResponse(what_ + ": the connection closed after " + std::to_string(have) + " of " +
                                        std::to_string(n) + " body bytes (Content-Length)");
            have += k;
        }
        resp.body = std::move(body);
    }

    asio::awaitable<void> read_chunked(HttpResponse& resp) {
        std::vector<std::byte> data;
        while (true) {
            co_await fill_line(max_chunk_size_line, "chunk size line");
            std::string line = take_line(max_chunk_size_line, "chunk size line");
            std::string_view sv = line;
            auto semi = sv.find(';');
            std::string_view digits = sv.substr(0, semi);
            digits = text::trim_back(digits, text::blanks);
            if (digits.empty() || digits.size() > 15) fail("bad chunk size '" + printable(line) + "'");
            std::uint64_t size = 0;
            for (char c : digits) {
                const int v = text::hex_digit_value(c);
                if (v < 0) fail("bad chunk size '" + printable(line) + "'");
                size = size * 16 + static_cast<std::uint64_t>(v);
            }
            if (size == 0) break;
            check_body_limit(data.size() + size);
            std::size_t at = data.size();
            data.resize(at + static_cast<std::size_t>(size));
            std::size_t have = 0;
            while (have < size) {
                if (pos_ == buf_.size() && !co_await fill())
                    throw TruncatedResponse(what_ + ": the connection closed inside a chunk of the response body");
                std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(size) - have, buf_.size() - pos_);
                std::memcpy(data.data() + at + have, buf_.data() + pos_, k);
                pos_ += k;
                have += k;
            }
            co_await fill_line(2, "chunk terminator");
            std::string end = take_line(2, "chunk terminator");
            if (!end.empty()) fail("chunk data not followed by CRLF");
        }
        // Trailer fields, ignored, then the empty line.
        std::size_t budget = opts_.max_header_bytes;
        while (true) {
            co_await fill_line(budget, "trailer section");
            std::string t = take_line(budget, "trailer section");
            if (t.empty()) break;
            budget -= std::min(budget, t.size() + 2);
            if (budget == 0) throw ResponseTooLarge(what_ + ": response trailers exceed " + std::to_string(opts_.max_header_bytes) + " bytes");
        }
        resp.body = ByteBuffer::copy_of(std::span<const std::byte>(data.data(), data.size()));
    }

    asio::awaitable<void> read_until_close(HttpResponse& resp) {
        std::vector<std::byte> data;
        auto take = [&] {
            std::size_t k = buf_.size() - pos_;
            check_body_limit(data.size() + k);
            const auto* p = reinterpret_cast<const std::byte*>(buf_.data() + pos_);
            data.insert(data.end(), p, p + k);
            pos_ = buf_.size();
        };
        take();
        while (co_await fill()) take();
        reusable = false;
        resp.body = ByteBuffer::copy_of(std::span<const std::byte>(data.data(), data.size()));
    }

    Connection& c_;
    const HttpClientOptions& opts_;
    std::string what_;
    std::string buf_;
    std::size_t pos_ = 0;
};

}  // namespace smdebug::net::detail
