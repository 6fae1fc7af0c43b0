#pragma once
// AWS Signature Version 4 building blocks (the rules are listed at the top of net/sigv4.hpp):
// URI encoding, canonical URI, query and headers, credential scope, string to sign, signing-key
// derivation, signature and Authorization header, and the amz date format.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/net/credentials.hpp>
#include <smdebug/net/detail/crypto.hpp>
#include <smdebug/net/detail/sigv4_types.hpp>

namespace smdebug::net {

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

namespace detail::sigv4 {

inline bool is_unreserved(unsigned char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '~';
}

using text::ascii_lower;
using text::ascii_upper;
using text::iequals;
using text::to_lower;

inline bool is_digits(std::string_view s) noexcept {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whitespace for header-value folding: SP, HTAB, CR, LF, VT, FF.
inline bool is_header_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// A header field name: a non-empty RFC 9110 token (no separators, whitespace or controls).
inline bool is_header_name(std::string_view n) noexcept {
    if (n.empty()) return false;
    for (char ch : n) {
        const auto c = static_cast<unsigned char>(ch);
        if (c <= 0x20 || c >= 0x7f) return false;
        if (std::string_view("\"(),/:;<=>?@[\\]{}").find(char(c)) != std::string_view::npos) return false;
    }
    return true;
}

inline void remove_header(HeaderList& h, std::string_view name) {
    std::erase_if(h, [&](const Header& x) { return iequals(x.first, name); });
}

inline const Header* find_header(const HeaderList& h, std::string_view name) noexcept {
    for (const auto& x : h)
        if (iequals(x.first, name)) return &x;
    return nullptr;
}

inline void validate_timestamp(std::string_view ts) {
    bool ok = ts.size() == 16 && is_digits(ts.substr(0, 8)) && ts[8] == 'T' && is_digits(ts.substr(9, 6)) &&
              ts[15] == 'Z';
    if (ok) {
        auto num = [&](std::size_t pos, std::size_t len) {
            int v = 0;
            for (std::size_t i = pos; i < pos + len; ++i) v = v * 10 + (ts[i] - '0');
            return v;
        };
        int mo = num(4, 2), d = num(6, 2), h = num(9, 2), mi = num(11, 2), s = num(13, 2);
        ok = mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && s <= 60;
    }
    if (!ok)
        throw UsageError("SigV4: signing timestamp '" + std::string(ts) +
                         "' is not an ISO 8601 basic UTC time (YYYYMMDDTHHMMSSZ)");
}

inline void validate_scope_part(std::string_view what, std::string_view v) {
    if (v.empty()) throw UsageError("SigV4: the credential-scope " + std::string(what) + " is empty");
    for (char ch : v) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '/' || c <= 0x20 || c >= 0x7f)
            throw UsageError("SigV4: the credential-scope " + std::string(what) + " '" + std::string(v) +
                             "' contains '/', whitespace or a non-ASCII character");
    }
}

inline void validate_credentials(const Credentials& c) {
    if (c.access_key_id.empty()) throw UsageError("SigV4: the credentials have an empty access key id");
    // Never echo the secret: only say what is wrong with it.
    if (c.secret_access_key.empty())
        throw UsageError("SigV4: the credentials for access key id " + c.access_key_id +
                         " have an empty secret access key");
}

}  // namespace detail::sigv4

/// URI-encode (RFC 3986 unreserved set kept, upper-case hex, UTF-8 bytes). With `keep_slash`,
/// '/' is kept too (paths).
inline std::string uri_encode(std::string_view s, bool keep_slash = false) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size() + s.size() / 2);
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (detail::sigv4::is_unreserved(c) || (keep_slash && c == '/')) {
            out.push_back(char(c));
        } else {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0x0f]);
        }
    }
    return out;
}

/// RFC 3986 section 5.2.4 dot-segment removal that also collapses empty segments ("//"), as AWS
/// services other than S3 expect. A trailing '/' survives when something is left before it.
inline std::string remove_dot_segments(std::string_view path) {
    if (path.empty()) return "/";
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos) end = path.size();
        std::string_view seg = path.substr(start, end - start);
        if (seg == "..") {
            if (!out.empty()) out.pop_back();
        } else if (!seg.empty() && seg != ".") {
            out.push_back(seg);
        }
        start = end + 1;
    }
    std::string r;
    if (path.front() == '/') r.push_back('/');
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (i) r.push_back('/');
        r.append(out[i]);
    }
    if (path.back() == '/' && !out.empty()) r.push_back('/');
    return r;
}

/// The canonical URI of a request path as sent (see the rules at the top of this file).
inline std::string canonical_uri(std::string_view path_as_sent, bool s3_rules) {
    if (s3_rules) return path_as_sent.empty() ? std::string("/") : std::string(path_as_sent);
    return uri_encode(remove_dot_segments(path_as_sent), /*keep_slash=*/true);
}

/// Encode parameters in the given order, as they go on the wire: "a=1&b=&c=%20".
inline std::string encode_query(const QueryList& q) {
    std::string out;
    for (const auto& [k, v] : q) {
        if (!out.empty()) out.push_back('&');
        out += uri_encode(k);
        out.push_back('=');
        out += uri_encode(v);
    }
    return out;
}

/// The canonical query string of decoded parameters.
inline std::string canonical_query_string(const QueryList& q) {
    std::vector<std::pair<std::string, std::string>> enc;
    enc.reserve(q.size());
    for (const auto& [k, v] : q) enc.emplace_back(uri_encode(k), uri_encode(v));
    std::sort(enc.begin(), enc.end());  // byte order: encoded name, then encoded value
    std::string out;
    for (const auto& [k, v] : enc) {
        if (!out.empty()) out.push_back('&');
        out += k;
        out.push_back('=');
        out += v;
    }
    return out;
}

/// A header value as signed: trimmed, inner whitespace runs (incl. folded lines) -> one space.
inline std::string canonical_header_value(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    bool pending_space = false;
    for (char c : v) {
        if (detail::sigv4::is_header_space(c)) {
            pending_space = !out.empty();
        } else {
            if (pending_space) out.push_back(' ');
            pending_space = false;
            out.push_back(c);
        }
    }
    return out;
}

/// The Host header value for a URL authority: lower case, without the scheme's default port.
inline std::string host_header_value(std::string_view scheme, std::string_view authority) {
    if (auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
    std::string_view host = authority, port;
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos)
            throw UsageError("SigV4: malformed IPv6 authority '" + std::string(authority) + "'");
        host = authority.substr(0, close + 1);
        std::string_view rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':')
                throw UsageError("SigV4: malformed authority '" + std::string(authority) + "'");
            port = rest.substr(1);
        }
    } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty()) throw UsageError("SigV4: the request has no host (authority '" + std::string(authority) + "')");
    if (!detail::sigv4::is_digits(port))
        throw UsageError("SigV4: the port of authority '" + std::string(authority) + "' is not a number");
    std::string out = detail::sigv4::to_lower(host);
    std::string_view p = port;
    while (p.size() > 1 && p.front() == '0') p.remove_prefix(1);
    const bool default_port = (detail::sigv4::iequals(scheme, "https") && p == "443") || (detail::sigv4::iequals(scheme, "http") && p == "80");
    if (!port.empty() && !default_port) {
        out.push_back(':');
        out.append(p);
    }
    return out;
}

struct CanonicalHeaders {
    std::string text;            // "name:value\n" per signed header, sorted by name
    std::string signed_headers;  // names joined by ';'
};

/// Canonicalise the headers to sign (every header except those named in `unsigned_names`).
inline CanonicalHeaders canonical_headers(const HeaderList& headers,
                                          const std::vector<std::string>& unsigned_names = {}) {
    std::vector<std::pair<std::string, std::string>> merged;  // lower name -> joined values
    for (const auto& [name, value] : headers) {
        std::string lname = detail::sigv4::to_lower(name);
        if (std::find(unsigned_names.begin(), unsigned_names.end(), lname) != unsigned_names.end()) continue;
        auto it = std::find_if(merged.begin(), merged.end(), [&](const auto& m) { return m.first == lname; });
        if (it == merged.end()) {
            merged.emplace_back(std::move(lname), canonical_header_value(value));
        } else {
            it->second.push_back(',');
            it->second += canonical_header_value(value);
        }
    }
    std::stable_sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    CanonicalHeaders out;
    for (const auto& [n, v] : merged) {
        out.text += n;
        out.text.push_back(':');
        out.text += v;
        out.text.push_back('\n');
        if (!out.signed_headers.empty()) out.signed_headers.push_back(';');
        out.signed_headers += n;
    }
    return out;
}

/// "YYYYMMDD/region/service/aws4_request".
inline std::string credential_scope(std::string_view date, std::string_view region, std::string_view service) {
    std::string s;
    s.reserve(date.size() + region.size() + service.size() + 16);
    s.append(date).append("/").append(region).append("/").append(service).append("/aws4_request");
    return s;
}

/// "AWS4-HMAC-SHA256\n<timestamp>\n<scope>\n<hex sha256(canonical request)>".
inline std::string string_to_sign(std::string_view timestamp, std::string_view scope,
                                  std::string_view canonical_request_sha256) {
    std::string s(sigv4_algorithm);
    s.append("\n").append(timestamp).append("\n").append(scope).append("\n").append(canonical_request_sha256);
    return s;
}

/// HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request").
inline SigningKey derive_signing_key(std::string_view secret_access_key, std::string_view date,
                                     std::string_view region, std::string_view service) {
    if (date.size() != 8 || !detail::sigv4::is_digits(date))
        throw UsageError("SigV4: signing-key date '" + std::string(date) + "' is not YYYYMMDD");
    detail::sigv4::validate_scope_part("region", region);
    detail::sigv4::validate_scope_part("service", service);
    std::string k0 = "AWS4";
    k0.append(secret_access_key);
    Sha256Digest k_date = hmac_sha256(std::string_view(k0), date);
    secure_clear(k0);
    Sha256Digest k_region = hmac_sha256(k_date, region);
    Sha256Digest k_service = hmac_sha256(k_region, service);
    SigningKey out{std::string(date), std::string(region), std::string(service), hmac_sha256(k_service, "aws4_request")};
    secure_clear(k_date.data(), k_date.size());
    secure_clear(k_region.data(), k_region.size());
    secure_clear(k_service.data(), k_service.size());
    return out;
}

/// Hex HMAC-SHA256 of a string to sign.
inline std::string compute_signature(const SigningKey& key, std::string_view string_to_sign) {
    return to_hex(hmac_sha256(key.key, string_to_sign));
}

/// "AWS4-HMAC-SHA256 Credential=<akid>/<scope>, SignedHeaders=<list>, Signature=<hex>".
inline std::string authorization_header(std::string_view access_key_id, std::string_view scope,
                                        std::string_view signed_headers, std::string_view signature) {
    std::string s(sigv4_algorithm);
    s.append(" Credential=").append(access_key_id).append("/").append(scope);
    s.append(", SignedHeaders=").append(signed_headers);
    s.append(", Signature=").append(signature);
    return s;
}

/// Format a time point as "YYYYMMDDTHHMMSSZ" (UTC, truncated to the second).
inline std::string format_amz_date(std::chrono::system_clock::time_point tp) {
    using namespace std::chrono;
    const auto secs = floor<seconds>(tp);
    const auto day = floor<days>(secs);
    const year_month_day ymd{day};
    const hh_mm_ss hms{secs - day};
    const int y = int(ymd.year());
    if (y < 0 || y > 9999) throw UsageError("SigV4: time point outside years 0000-9999");
    char buf[17];
    auto put = [&](int pos, int width, long long v) {
        for (int i = width - 1; i >= 0; --i, v /= 10) buf[pos + i] = char('0' + v % 10);
    };
    put(0, 4, y);
    put(4, 2, unsigned(ymd.month()));
    put(6, 2, unsigned(ymd.day()));
    buf[8] = 'T';
    put(9, 2, hms.hours().count());
    put(11, 2, hms.minutes().count());
    put(13, 2, hms.seconds().count());
    buf[15] = 'Z';
    buf[16] = '\0';
    return std::string(buf, 16);
}

}  // namespace smdebug::net
