#pragma once
// AWS Signature Version 4: constants and the types of the signing API (net/sigv4.hpp).
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

namespace smdebug::net {

// ---------------------------------------------------------------------------------------------
// Constants and basic types
// ---------------------------------------------------------------------------------------------

inline constexpr std::string_view sigv4_algorithm = "AWS4-HMAC-SHA256";
inline constexpr std::string_view sigv4_chunk_algorithm = "AWS4-HMAC-SHA256-PAYLOAD";
inline constexpr std::string_view unsigned_payload = "UNSIGNED-PAYLOAD";
inline constexpr std::string_view streaming_payload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
/// Longest validity AWS accepts for a SigV4 presigned URL (7 days).
inline constexpr std::chrono::seconds max_presign_expiry{604800};

using Header = std::pair<std::string, std::string>;
using HeaderList = std::vector<Header>;
using QueryParam = std::pair<std::string, std::string>;
using QueryList = std::vector<QueryParam>;

// Credentials: net/credentials.hpp (an empty session token counts as none).

/// The request to sign, as it will be sent.
struct SigningRequest {
    std::string method = "GET";
    std::string scheme = "https";           // "https" or "http"
    std::string host;                       // URL authority: host[:port] (a default port may be spelled out)
    std::string path_as_sent = "/";         // request-target path exactly as sent (for S3: key segments encoded once)
    QueryList query;                        // decoded parameters, in request order ("" for a value-less one)
    HeaderList headers;                     // original case, repeats allowed, values untrimmed
    std::string payload_hash{empty_sha256_hex};  // hex SHA-256 of the body, unsigned_payload or streaming_payload
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

}  // namespace smdebug::net
