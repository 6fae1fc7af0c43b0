#pragma once
// One S3 operation of the client (net/s3_client.hpp) and the HTTP request that sends it: the
// bucket's endpoint and addressing style, the key and query encoded, signed with SigV4 when the
// configuration has credentials.
#include <chrono>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <utility>

#include <smdebug/core/errors.hpp>
#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/detail/crypto.hpp>
#include <smdebug/net/detail/sigv4.hpp>
#include <smdebug/net/http_types.hpp>
#include <smdebug/net/s3_types.hpp>

namespace smdebug::net::detail {

// What S3Client::request_counts() counts an operation as.
enum S3OpKind : int { list_op, get_op, head_op, put_op, remove_op, op_kinds };

struct S3Op {
    std::string method;
    std::string bucket;
    std::string key;
    const char* name;  // "GetObject", for messages
    QueryList query{};
    HeaderList headers{};
    std::span<const std::byte> body{};
    std::string payload_hash{empty_sha256_hex};
    // Throws to reject a response (TruncatedResponse: retried); nullptr accepts any response.
    std::function<void(HttpResponse&)> validate{};
    bool bucket_level = false;
    int kind = -1;  // list_op for listings; otherwise taken from the method

    int counted_kind() const noexcept {
        if (kind >= 0) return kind;
        if (method == "GET") return get_op;
        if (method == "HEAD") return head_op;
        if (method == "PUT") return put_op;
        return remove_op;
    }

    // GET, HEAD, PUT and DELETE are idempotent (RFC 9110); POST is not.
    bool idempotent() const noexcept { return method != "POST"; }
    std::string url() const { return s3_url(bucket, key); }
};

// `creds`: what the client resolved before the request entered the I/O loop (nullptr: unsigned).
// The signing key is derived for each request: caching it saved nothing measurable
// (docs/performance.md, "What went, and why").
inline HttpRequest build_s3_request(const S3Op& op, const AwsConfig& config, const AwsCredentials* creds) {
    if (op.bucket.empty()) throw UsageError(std::string(op.name) + ": empty bucket name");
    const S3BucketEndpoint ep = config.bucket_endpoint(op.bucket);
    // Object operations address "<prefix>/<key>"; bucket operations (listing) the bucket.
    std::string path = ep.path_prefix;
    if (!op.key.empty()) path += "/" + uri_encode(op.key, /*keep_slash=*/true);
    else if (!op.bucket_level) throw UsageError(std::string(op.name) + " " + op.url() + ": empty object key");
    if (path.empty()) path = "/";
    HttpRequest req;
    req.method = op.method;
    req.url = ep.origin;
    req.url.target = path;
    if (!op.query.empty()) req.url.target += "?" + encode_query(op.query);
    req.body = op.body;
    if (!creds) {
        for (const auto& [n, v] : op.headers) req.headers.push_back({n, v});
        return req;
    }
    SigningRequest sr;
    sr.method = op.method;
    sr.scheme = ep.origin.scheme;
    sr.host = ep.origin.authority();
    sr.path_as_sent = path;
    sr.query = op.query;
    sr.headers = op.headers;
    sr.payload_hash = op.payload_hash;
    SigningOptions so = SigningOptions::s3(config.region, format_amz_date(std::chrono::system_clock::now()));
    SignedRequest signed_req = sign_request(sr, *creds, so);
    for (auto& [n, v] : signed_req.headers_to_send) req.headers.push_back({std::move(n), std::move(v)});
    return req;
}

}  // namespace smdebug::net::detail
