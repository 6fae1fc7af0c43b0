#pragma once
// AWS Signature Version 4 (header and presigned-URL modes, aws-chunked streaming signatures).
//
// Everything here is a pure function of its arguments: the signing time is passed in as an
// ISO 8601 basic timestamp ("YYYYMMDDTHHMMSSZ"; format_amz_date() produces one from a
// std::chrono::system_clock::time_point), so nothing reads the clock.
//
// Rules (see the AWS SigV4 documentation; they match botocore's signers):
//  * Canonical URI. S3 rules: the path exactly as sent (each key segment URI-encoded once by the
//    caller), never normalised: "//", "." and ".." are kept. Generic rules (every other service):
//    remove dot segments, collapse empty segments, then URI-encode the path as sent with '/'
//    kept, so an already percent-encoded path is encoded a second time ("%20" -> "%2520").
//  * URI encoding: UTF-8 bytes; only A-Z a-z 0-9 - _ . ~ stay as they are (and '/' in paths);
//    upper-case hex; a space is "%20".
//  * Canonical query: encode every name and value, sort by encoded name then encoded value, join
//    "name=value" with '&'. A value-less parameter is "name=".
//  * Canonical headers: lower-cased names, values trimmed with inner whitespace runs (including
//    folded lines) collapsed to one space, repeated names joined with ',' in sending order,
//    sorted by name. Host is always signed (taken from the URL authority when absent, without the
//    scheme's default port). Hop-by-hop headers (Connection, Expect, TE, Transfer-Encoding, ...),
//    User-Agent and X-Amzn-Trace-Id are not signed by default (proxies change them), as in
//    botocore; SigningOptions::unsigned_headers changes that.
//  * Payload hash: the value of an X-Amz-Content-SHA256 header when the request has one,
//    otherwise SigningRequest::payload_hash. S3 presigned URLs always use UNSIGNED-PAYLOAD.
//
// Secrets: the secret access key never appears in a result or an exception message; the
// derived signing key is only exposed through SigningKey, which callers hold deliberately. The
// session token is, by protocol, part of what is sent (X-Amz-Security-Token header or query
// parameter) and so does appear in headers_to_send / the presigned URL.
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
#include <smdebug/net/crypto.hpp>

namespace smdebug::net {

// ---------------------------------------------------------------------------------------------
// Constants and basic types
// ---------------------------------------------------------------------------------------------

inline constexpr std::string_view kSigV4Algorithm = "AWS4-HMAC-SHA256";
inline constexpr std::string_view kSigV4ChunkAlgorithm = "AWS4-HMAC-SHA256-PAYLOAD";
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
inline constexpr std::string_view kStreamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
/// Longest validity AWS accepts for a SigV4 presigned URL (7 days).
inline constexpr std::chrono::seconds kMaxPresignExpiry{604800};

using Header = std::pair<std::string, std::string>;
using HeaderList = std::vector<Header>;
using QueryParam = std::pair<std::string, std::string>;
using QueryList = std::vector<QueryParam>;

/// AWS credentials. `secret_access_key` is only ever used to derive signing keys.
struct Credentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::optional<std::string> session_token;  // temporary credentials (STS)
};

/// The request to sign, as it will be sent.
struct SigningRequest {
    std::string method = "GET";
    std::string scheme = "https";           // "https" or "http"
    std::string host;                       // URL authority: host[:port] (a default port may be spelled out)
    std::string path_as_sent = "/";         // request-target path exactly as sent (for S3: key segments encoded once)
    QueryList query;                        // decoded parameters, in request order ("" for a value-less one)
    HeaderList headers;                     // original case, repeats allowed, values untrimmed
    std::string payload_hash{kEmptySha256Hex};  // hex SHA-256 of the body, kUnsignedPayload or kStreamingPayload
};

enum class HeaderSigning {
    add_auth,    // add X-Amz-Date, X-Amz-Security-Token (with a token), X-Amz-Content-SHA256 (S3)
    components,  // the headers are complete as given: only Host (when absent) is derived
};

struct SigningOptions {
    std::string region;                     // credential-scope region, e.g. "us-east-1"
    std::string service;                    // credential-scope service, e.g. "s3"
    std::string timestamp;                  // signing time, "YYYYMMDDTHHMMSSZ" (UTC)
    bool s3_rules = false;                  // S3 path rules and X-Amz-Content-SHA256 (see top of file)
    HeaderSigning header_signing = HeaderSigning::add_auth;  // header mode only; presign adds no header
    /// Lower-case names never signed: hop-by-hop headers and ones proxies rewrite (botocore's list).
    std::vector<std::string> unsigned_headers{"connection", "expect", "keep-alive", "proxy-authenticate",
                                              "proxy-authorization", "te", "trailer", "transfer-encoding",
                                              "upgrade", "user-agent", "x-amzn-trace-id"};

    /// Options for Amazon S3 (service "s3", S3 rules).
    static SigningOptions s3(std::string region, std::string timestamp) {
        SigningOptions o;
        o.region = std::move(region);
        o.service = "s3";
        o.timestamp = std::move(timestamp);
        o.s3_rules = true;
        return o;
    }
    /// Options for another AWS service (generic canonicalisation).
    static SigningOptions service_rules(std::string region, std::string service, std::string timestamp) {
        SigningOptions o;
        o.region = std::move(region);
        o.service = std::move(service);
        o.timestamp = std::move(timestamp);
        return o;
    }
};

/// The derived SigV4 signing key for one (date, region, service) scope. Treat it like a secret:
/// it signs any request of that scope for the rest of the day. Cleared on destruction.
struct SigningKey {
    std::string date;     // YYYYMMDD
    std::string region;
    std::string service;
    Sha256Digest key{};

    bool matches(std::string_view d, std::string_view r, std::string_view s) const noexcept {
        return date == d && region == r && service == s;
    }
    ~SigningKey() { secure_clear(key.data(), key.size()); }
};

/// What every signature computation yields (all of it safe to log).
struct SigningDetails {
    std::string canonical_request;
    std::string canonical_request_sha256;
    std::string string_to_sign;
    std::string credential_scope;   // YYYYMMDD/region/service/aws4_request
    std::string signed_headers;     // "host;range;x-amz-content-sha256;x-amz-date"
    std::string payload_hash;       // the last line of the canonical request
    std::string signature;          // 64 lower-case hex characters
};

/// Header mode: the request to send.
struct SignedRequest : SigningDetails {
    std::string authorization;      // the Authorization header value
    HeaderList headers_to_send;     // Host first when the caller did not give it, then the request's
                                    // headers (with the ones the signer added), Authorization last
    std::string url;                // scheme://host + path_as_sent [+ '?' + encoded query, in order]
};

/// Query mode: a presigned URL.
struct PresignedRequest : SigningDetails {
    std::string url;                // operation parameters, then X-Amz-*, then X-Amz-Signature
    QueryList query;                // the decoded parameters of `url`, in the same order
    HeaderList headers_to_send;     // the caller's headers (all signed) that must accompany the URL
};

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
    std::string s(kSigV4Algorithm);
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
    std::string s(kSigV4Algorithm);
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

// ---------------------------------------------------------------------------------------------
// Signing
// ---------------------------------------------------------------------------------------------

namespace detail::sigv4 {

struct Prepared {
    HeaderList headers;          // the request's headers after the signer's changes (no Host added)
    std::optional<Header> host;  // the Host header derived from the URL when the request had none
    std::string scope;
};

inline void validate_request(const SigningRequest& r, const SigningOptions& o) {
    if (r.method.empty()) throw UsageError("SigV4: the request method is empty");
    for (char c : r.method)
        if (!is_header_name(std::string_view(&c, 1)))
            throw UsageError("SigV4: the request method '" + r.method + "' is not an HTTP token");
    if (!iequals(r.scheme, "https") && !iequals(r.scheme, "http"))
        throw UsageError("SigV4: unsupported URL scheme '" + r.scheme + "' (http or https)");
    if (r.host.empty()) throw UsageError("SigV4: the request has no host");
    if (!r.path_as_sent.empty() && r.path_as_sent.front() != '/')
        throw UsageError("SigV4: the request path '" + r.path_as_sent + "' does not start with '/'");
    if (r.path_as_sent.find_first_of("?#") != std::string::npos)
        throw UsageError("SigV4: the request path '" + r.path_as_sent +
                         "' contains '?' or '#' (pass query parameters in SigningRequest::query)");
    if (r.payload_hash.empty()) throw UsageError("SigV4: the payload hash is empty");
    for (const auto& [n, v] : r.headers)
        if (!is_header_name(n)) throw UsageError("SigV4: invalid header name '" + n + "'");
    validate_timestamp(o.timestamp);
    validate_scope_part("region", o.region);
    validate_scope_part("service", o.service);
}

inline Prepared prepare(const SigningRequest& r, const Credentials& c, const SigningOptions& o,
                        bool add_auth_headers) {
    validate_credentials(c);
    validate_request(r, o);
    Prepared p;
    p.headers = r.headers;
    remove_header(p.headers, "Authorization");  // a retry: never sign a stale signature
    if (add_auth_headers) {
        remove_header(p.headers, "X-Amz-Date");
        p.headers.emplace_back("X-Amz-Date", o.timestamp);
        if (c.session_token) {
            remove_header(p.headers, "X-Amz-Security-Token");
            p.headers.emplace_back("X-Amz-Security-Token", *c.session_token);
        }
        if (o.s3_rules || r.payload_hash == kUnsignedPayload) {
            remove_header(p.headers, "X-Amz-Content-SHA256");
            p.headers.emplace_back("X-Amz-Content-SHA256", r.payload_hash);
        }
    }
    if (!find_header(p.headers, "Host")) p.host.emplace("Host", net::host_header_value(r.scheme, r.host));
    p.scope = net::credential_scope(std::string_view(o.timestamp).substr(0, 8), o.region, o.service);
    return p;
}

inline HeaderList headers_to_sign(const Prepared& p) {
    HeaderList h;
    h.reserve(p.headers.size() + 1);
    if (p.host) h.push_back(*p.host);
    h.insert(h.end(), p.headers.begin(), p.headers.end());
    return h;
}

inline std::string upper_method(std::string_view m) {
    std::string s(m);
    for (auto& ch : s) ch = ascii_upper(ch);
    return s;
}

inline void finish_details(SigningDetails& d, const SigningRequest& r, const SigningOptions& o,
                           const std::string& canonical_query, const CanonicalHeaders& ch,
                           std::string payload_hash, const SigningKey& key, const std::string& scope) {
    d.payload_hash = std::move(payload_hash);
    d.signed_headers = ch.signed_headers;
    d.credential_scope = scope;
    std::string& cr = d.canonical_request;
    cr = upper_method(r.method);
    cr.push_back('\n');
    cr += net::canonical_uri(r.path_as_sent, o.s3_rules);
    cr.push_back('\n');
    cr += canonical_query;
    cr.push_back('\n');
    cr += ch.text;
    cr.push_back('\n');
    cr += ch.signed_headers;
    cr.push_back('\n');
    cr += d.payload_hash;
    d.canonical_request_sha256 = net::sha256_hex(cr);
    d.string_to_sign = net::string_to_sign(o.timestamp, scope, d.canonical_request_sha256);
    d.signature = net::compute_signature(key, d.string_to_sign);
}

inline void check_key(const SigningKey& key, const SigningOptions& o) {
    const std::string_view date = std::string_view(o.timestamp).substr(0, 8);
    if (!key.matches(date, o.region, o.service))
        throw UsageError("SigV4: the signing key is for scope " + net::credential_scope(key.date, key.region, key.service) +
                         " but the request is signed for " + net::credential_scope(date, o.region, o.service));
}

inline std::string base_url(const SigningRequest& r) {
    std::string u = detail::sigv4::to_lower(r.scheme);
    u.append("://").append(r.host).append(r.path_as_sent.empty() ? std::string_view("/") : std::string_view(r.path_as_sent));
    return u;
}

}  // namespace detail::sigv4

/// Header mode (Authorization header), with a signing key the caller derived or cached for the
/// request's scope (UsageError if the key's scope differs).
inline SignedRequest sign_request(const SigningRequest& req, const Credentials& creds, const SigningOptions& opts,
                                  const SigningKey& key) {
    const bool add_auth = opts.header_signing == HeaderSigning::add_auth;
    detail::sigv4::Prepared p = detail::sigv4::prepare(req, creds, opts, add_auth);
    detail::sigv4::check_key(key, opts);
    if (!add_auth) {
        if (const Header* d = detail::sigv4::find_header(p.headers, "X-Amz-Date");
            d && canonical_header_value(d->second) != opts.timestamp)
            throw UsageError("SigV4: the X-Amz-Date header '" + canonical_header_value(d->second) +
                             "' differs from the signing timestamp " + opts.timestamp);
    }
    const HeaderList to_sign = detail::sigv4::headers_to_sign(p);
    const CanonicalHeaders ch = canonical_headers(to_sign, opts.unsigned_headers);
    std::string payload = req.payload_hash;
    if (const Header* h = detail::sigv4::find_header(p.headers, "X-Amz-Content-SHA256")) payload = h->second;

    SignedRequest out;
    detail::sigv4::finish_details(out, req, opts, canonical_query_string(req.query), ch, std::move(payload), key, p.scope);
    out.authorization = authorization_header(creds.access_key_id, p.scope, out.signed_headers, out.signature);
    out.headers_to_send = to_sign;
    out.headers_to_send.emplace_back("Authorization", out.authorization);
    out.url = detail::sigv4::base_url(req);
    if (!req.query.empty()) out.url.append("?").append(encode_query(req.query));
    return out;
}

/// Header mode, deriving the signing key.
inline SignedRequest sign_request(const SigningRequest& req, const Credentials& creds, const SigningOptions& opts) {
    detail::sigv4::validate_credentials(creds);
    detail::sigv4::validate_timestamp(opts.timestamp);
    return sign_request(req, creds, opts,
                        derive_signing_key(creds.secret_access_key, std::string_view(opts.timestamp).substr(0, 8),
                                           opts.region, opts.service));
}

/// Query mode (presigned URL) with a caller-provided signing key. `expires` must be in
/// [1 s, 7 days]. No header is added; S3 URLs always sign UNSIGNED-PAYLOAD.
inline PresignedRequest presign_request(const SigningRequest& req, const Credentials& creds,
                                        const SigningOptions& opts, std::chrono::seconds expires,
                                        const SigningKey& key) {
    if (expires.count() < 1 || expires > kMaxPresignExpiry)
        throw UsageError("SigV4: presigned URL expiry of " + std::to_string(expires.count()) +
                         " s is outside 1..604800 s");
    detail::sigv4::Prepared p = detail::sigv4::prepare(req, creds, opts, /*add_auth_headers=*/false);
    detail::sigv4::check_key(key, opts);
    const HeaderList to_sign = detail::sigv4::headers_to_sign(p);
    const CanonicalHeaders ch = canonical_headers(to_sign, opts.unsigned_headers);

    QueryList auth{{"X-Amz-Algorithm", std::string(kSigV4Algorithm)},
                   {"X-Amz-Credential", creds.access_key_id + "/" + p.scope},
                   {"X-Amz-Date", opts.timestamp},
                   {"X-Amz-Expires", std::to_string(expires.count())},
                   {"X-Amz-SignedHeaders", ch.signed_headers}};
    if (creds.session_token) auth.emplace_back("X-Amz-Security-Token", *creds.session_token);
    QueryList all = req.query;
    all.insert(all.end(), auth.begin(), auth.end());

    std::string payload = opts.s3_rules ? std::string(kUnsignedPayload) : req.payload_hash;
    if (const Header* h = detail::sigv4::find_header(p.headers, "X-Amz-Content-SHA256")) payload = h->second;

    PresignedRequest out;
    detail::sigv4::finish_details(out, req, opts, canonical_query_string(all), ch, std::move(payload), key, p.scope);
    out.url = detail::sigv4::base_url(req);
    out.url.push_back('?');
    if (!req.query.empty()) out.url.append(encode_query(req.query)).push_back('&');
    out.url.append(encode_query(auth)).append("&X-Amz-Signature=").append(out.signature);
    out.query = std::move(all);
    out.query.emplace_back("X-Amz-Signature", out.signature);
    out.headers_to_send = std::move(p.headers);
    return out;
}

/// Query mode, deriving the signing key.
inline PresignedRequest presign_request(const SigningRequest& req, const Credentials& creds,
                                        const SigningOptions& opts, std::chrono::seconds expires) {
    detail::sigv4::validate_credentials(creds);
    detail::sigv4::validate_timestamp(opts.timestamp);
    return presign_request(req, creds, opts, expires,
                           derive_signing_key(creds.secret_access_key, std::string_view(opts.timestamp).substr(0, 8),
                                              opts.region, opts.service));
}

// ---------------------------------------------------------------------------------------------
// Signing-key cache
// ---------------------------------------------------------------------------------------------

/// A small thread-safe cache of derived signing keys (a few scopes, most recently used kept),
/// keyed by access key id, a fingerprint of the secret, and (date, region, service).
class SigningKeyCache {
public:
    explicit SigningKeyCache(std::size_t capacity = 8) : capacity_(capacity ? capacity : 1) {}

    SigningKey get(const Credentials& creds, std::string_view date, std::string_view region, std::string_view service) {
        detail::sigv4::validate_credentials(creds);
        const Sha256Digest fp = sha256(creds.secret_access_key);
        std::lock_guard lock(mutex_);
        for (auto it = entries_.begin(); it != entries_.end(); ++it) {
            if (it->access_key_id == creds.access_key_id && it->secret_fingerprint == fp &&
                it->key.matches(date, region, service)) {
                entries_.splice(entries_.begin(), entries_, it);
                return entries_.front().key;
            }
        }
        entries_.push_front(Entry{creds.access_key_id, fp, derive_signing_key(creds.secret_access_key, date, region, service)});
        if (entries_.size() > capacity_) entries_.pop_back();
        return entries_.front().key;
    }
    /// The key for the scope of `opts` (its timestamp's date, region and service).
    SigningKey get(const Credentials& creds, const SigningOptions& opts) {
        detail::sigv4::validate_timestamp(opts.timestamp);
        return get(creds, std::string_view(opts.timestamp).substr(0, 8), opts.region, opts.service);
    }
    void clear() {
        std::lock_guard lock(mutex_);
        entries_.clear();
    }

private:
    struct Entry {
        std::string access_key_id;
        Sha256Digest secret_fingerprint;
        SigningKey key;
    };
    std::size_t capacity_;
    std::mutex mutex_;
    std::list<Entry> entries_;
};

// ---------------------------------------------------------------------------------------------
// aws-chunked streaming uploads (STREAMING-AWS4-HMAC-SHA256-PAYLOAD)
// ---------------------------------------------------------------------------------------------

/// "AWS4-HMAC-SHA256-PAYLOAD\n<ts>\n<scope>\n<previous signature>\n<sha256('')>\n<sha256(chunk)>".
inline std::string chunk_string_to_sign(std::string_view timestamp, std::string_view scope,
                                        std::string_view previous_signature, std::string_view chunk_sha256_hex) {
    std::string s(kSigV4ChunkAlgorithm);
    s.append("\n").append(timestamp).append("\n").append(scope).append("\n").append(previous_signature);
    s.append("\n").append(kEmptySha256Hex).append("\n").append(chunk_sha256_hex);
    return s;
}

/// The chunk-header line of aws-chunked encoding: "<hex size>;chunk-signature=<sig>\r\n".
inline std::string chunk_header(std::uint64_t size, std::string_view signature) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string h;
    do {
        h.insert(h.begin(), hex[size & 0xf]);
        size >>= 4;
    } while (size);
    h.append(";chunk-signature=").append(signature).append("\r\n");
    return h;
}

/// Content-Length of an aws-chunked body: full chunks of `chunk_size`, a last partial chunk, and
/// the final zero-length chunk, each framed as chunk_header + data + "\r\n".
inline std::uint64_t aws_chunked_content_length(std::uint64_t decoded_length, std::uint64_t chunk_size) {
    if (chunk_size == 0) throw UsageError("SigV4: aws-chunked chunk size is zero");
    auto framed = [](std::uint64_t n) {
        std::uint64_t hex_digits = 1;
        for (std::uint64_t v = n >> 4; v; v >>= 4) ++hex_digits;
        return hex_digits + 17 /* ";chunk-signature=" */ + 64 + 2 + n + 2;
    };
    const std::uint64_t full = decoded_length / chunk_size, rest = decoded_length % chunk_size;
    return full * framed(chunk_size) + (rest ? framed(rest) : 0) + framed(0);
}

/// Signs the chunks of an aws-chunked upload in order, starting from the seed request's signature.
/// Finish with an empty chunk.
class ChunkSigner {
public:
    struct Chunk {
        std::string string_to_sign;
        std::string signature;
    };

    ChunkSigner(SigningKey key, std::string timestamp, std::string scope, std::string seed_signature)
        : key_(std::move(key)), timestamp_(std::move(timestamp)), scope_(std::move(scope)),
          previous_(std::move(seed_signature)) {
        detail::sigv4::validate_timestamp(timestamp_);
    }
    /// From a signed seed request (its payload hash must be STREAMING-AWS4-HMAC-SHA256-PAYLOAD).
    ChunkSigner(SigningKey key, const SigningOptions& opts, const SignedRequest& seed)
        : ChunkSigner(std::move(key), opts.timestamp, seed.credential_scope, seed.signature) {
        if (seed.payload_hash != kStreamingPayload)
            throw UsageError("SigV4: the seed request's payload hash is not " + std::string(kStreamingPayload));
    }

    /// Sign the next chunk given its SHA-256 (hex).
    Chunk next_hash(std::string_view chunk_sha256_hex) {
        Chunk c;
        c.string_to_sign = chunk_string_to_sign(timestamp_, scope_, previous_, chunk_sha256_hex);
        c.signature = compute_signature(key_, c.string_to_sign);
        previous_ = c.signature;
        return c;
    }
    Chunk next(std::span<const std::uint8_t> data) { return next_hash(sha256_hex(data)); }
    Chunk next(std::string_view data) { return next_hash(sha256_hex(data)); }

    const std::string& previous_signature() const noexcept { return previous_; }

private:
    SigningKey key_;
    std::string timestamp_;
    std::string scope_;
    std::string previous_;
};

}  // namespace smdebug::net
