#pragma once
// Absolute http(s) URLs: parsing into scheme/host/port/target, the Host header value, and
// percent-decoding. Only what the HTTP client, the AWS configuration and the S3 client need.
#include <cstdint>
#include <string>
#include <string_view>

#include <smdebug/core/text.hpp>
#include <smdebug/net/transport_errors.hpp>

namespace smdebug::net {

struct Url {
    std::string scheme;   // "http" or "https" (lower case)
    std::string host;     // without brackets for IPv6 literals
    std::uint16_t port = 0;
    std::string target;   // path and query as sent, "/" at least

    bool https() const noexcept { return scheme == "https"; }
    bool default_port() const noexcept { return port == (https() ? 443 : 80); }
    bool ipv6() const noexcept { return host.find(':') != std::string::npos; }
    // "host", "host:port" or "[v6]:port": the Host header and the pool key.
    std::string authority() const {
        std::string h = ipv6() ? "[" + host + "]" : host;
        if (!default_port()) h += ":" + std::to_string(port);
        return h;
    }
    std::string origin() const { return scheme + "://" + authority(); }
    std::string str() const { return origin() + target; }

    // Parses "http[s]://host[:port][/path][?query]". User info and fragments are rejected.
    static Url parse(std::string_view text) {
        auto bad = [&](const char* why) -> AwsConfigError {
            return AwsConfigError("invalid URL '" + std::string(text) + "': " + why);
        };
        Url u;
        auto sep = text.find("://");
        if (sep == std::string_view::npos) throw bad("missing scheme");
        for (char c : text.substr(0, sep)) u.scheme += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        if (u.scheme != "http" && u.scheme != "https") throw bad("scheme must be http or https");
        std::string_view rest = text.substr(sep + 3);
        auto path_at = rest.find_first_of("/?#");
        std::string_view auth = rest.substr(0, path_at);
        std::string_view tail = path_at == std::string_view::npos ? std::string_view() : rest.substr(path_at);
        if (auth.find('@') != std::string_view::npos) throw bad("user info is not supported");
        if (tail.find('#') != std::string_view::npos) throw bad("fragments are not supported");
        for (char c : text)
            if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) throw bad("contains blanks or control characters");
        std::string_view port_text;
        if (auth.starts_with("[")) {
            auto close = auth.find(']');
            if (close == std::string_view::npos) throw bad("unterminated IPv6 literal");
            u.host = std::string(auth.substr(1, close - 1));
            std::string_view after = auth.substr(close + 1);
            if (!after.empty()) {
                if (after[0] != ':') throw bad("junk after IPv6 literal");
                port_text = after.substr(1);
                if (port_text.empty()) throw bad("empty port");
            }
        } else {
            auto colon = auth.rfind(':');
            u.host = std::string(auth.substr(0, colon));
            if (colon != std::string_view::npos) {
                port_text = auth.substr(colon + 1);
                if (port_text.empty()) throw bad("empty port");
            }
        }
        if (u.host.empty()) throw bad("empty host");
        for (char& c : u.host) if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (!port_text.empty()) {
            unsigned v = 0;
            if (port_text.size() > 5) throw bad("port out of range");
            for (char c : port_text) {
                if (c < '0' || c > '9') throw bad("port is not a number");
                v = v * 10 + static_cast<unsigned>(c - '0');
            }
            if (v == 0 || v > 65535) throw bad("port out of range");
            u.port = static_cast<std::uint16_t>(v);
        } else {
            u.port = u.https() ? 443 : 80;
        }
        u.target = tail.empty() ? "/" : (tail[0] == '?' ? "/" + std::string(tail) : std::string(tail));
        return u;
    }
};

// True for dotted-quad IPv4 and for IPv6 literals (anything with ':').
inline bool is_ip_literal(std::string_view host) noexcept {
    if (host.find(':') != std::string_view::npos) return true;
    int parts = 0, digits = 0;
    unsigned value = 0;
    for (char c : host) {
        if (c == '.') {
            if (digits == 0) return false;
            ++parts; digits = 0; value = 0;
        } else if (c >= '0' && c <= '9') {
            value = value * 10 + static_cast<unsigned>(c - '0');
            if (++digits > 3 || value > 255) return false;
        } else {
            return false;
        }
    }
    return digits > 0 && parts == 3;
}

// Decodes %XX escapes. With `plus_as_space`, '+' decodes to a space (form encoding, which S3
// uses for keys in list results with EncodingType url); otherwise '+' stays '+'.
inline std::string percent_decode(std::string_view s, bool plus_as_space = false) {
    const auto hex = text::hex_digit_value;
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+' && plus_as_space) { out += ' '; continue; }
        if (s[i] != '%') { out += s[i]; continue; }
        int hi = i + 1 < s.size() ? hex(s[i + 1]) : -1;
        int lo = i + 2 < s.size() ? hex(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) throw FormatError("invalid percent-encoding in '" + std::string(s) + "'");
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

}  // namespace smdebug::net
