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
#include <smdebug/net/credentials.hpp>
#include <smdebug/net/detail/crypto.hpp>
#include <smdebug/net/detail/sigv4_canonical.hpp>
#include <smdebug/net/detail/sigv4_types.hpp>

namespace smdebug::net {

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
        if (c.has_session_token()) {
            remove_header(p.headers, "X-Amz-Security-Token");
            p.headers.emplace_back("X-Amz-Security-Token", *c.session_token);
        }
        if (o.s3_rules || r.payload_hash == unsigned_payload) {
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
    if (expires.count() < 1 || expires > max_presign_expiry)
        throw UsageError("SigV4: presigned URL expiry of " + std::to_string(expires.count()) +
                         " s is outside 1..604800 s");
    detail::sigv4::Prepared p = detail::sigv4::prepare(req, creds, opts, /*add_auth_headers=*/false);
    detail::sigv4::check_key(key, opts);
    const HeaderList to_sign = detail::sigv4::headers_to_sign(p);
    const CanonicalHeaders ch = canonical_headers(to_sign, opts.unsigned_headers);

    QueryList auth{{"X-Amz-Algorithm", std::string(sigv4_algorithm)},
                   {"X-Amz-Credential", creds.access_key_id + "/" + p.scope},
                   {"X-Amz-Date", opts.timestamp},
                   {"X-Amz-Expires", std::to_string(expires.count())},
                   {"X-Amz-SignedHeaders", ch.signed_headers}};
    if (creds.has_session_token()) auth.emplace_back("X-Amz-Security-Token", *creds.session_token);
    QueryList all = req.query;
    all.insert(all.end(), auth.begin(), auth.end());

    std::string payload = opts.s3_rules ? std::string(unsigned_payload) : req.payload_hash;
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
/// The S3 client does not use it: deriving a key per request cost nothing measurable
/// (docs/performance.md, "What went, and why"); it stays for programs that sign themselves.
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
    std::string s(sigv4_chunk_algorithm);
    s.append("\n").append(timestamp).append("\n").append(scope).append("\n").append(previous_signature);
    s.append("\n").append(empty_sha256_hex).append("\n").append(chunk_sha256_hex);
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
        if (seed.payload_hash != streaming_payload)
            throw UsageError("SigV4: the seed request's payload hash is not " + std::string(streaming_payload));
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
