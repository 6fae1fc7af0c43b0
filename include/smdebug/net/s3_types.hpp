#pragma once
// The request, response and option types of the S3 client (net/s3_client.hpp), without the client:
// what a store or a tool that only names them needs.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/net/http_types.hpp>

namespace smdebug::net {

struct RetryPolicy {
    int max_attempts = 0;                          // 1 = no retry; 0 = AwsConfig::attempts() (3 by default)
    std::chrono::milliseconds base_delay{50};      // the n-th retry waits up to base * 2^n ...
    std::chrono::milliseconds max_delay{5'000};    // ... capped here (full jitter below that)
};

inline constexpr std::size_t max_listed_keys = 20'000'000;

struct S3ClientOptions {
    HttpClientOptions http;   // extra_ca_file defaults to AwsConfig::extra_ca_file
    RetryPolicy retry;
    // Requests in flight at most (the window's ceiling); 0: AwsConfig::concurrency() (64 unless the
    // profile's s3.max_concurrent_requests or SMDEBUG_S3_MAX_CONCURRENCY says otherwise).
    std::size_t max_concurrency = 0;
    // Attempts of a request that keeps being throttled (the first try included).
    int throttle_attempts = 10;
    // get_many() stops sending while the ranges it has asked for and not yet handed over add up to
    // more than this (at least one request is always in flight): the bytes a batch holds in memory.
    std::uint64_t max_buffered_bytes = std::uint64_t{256} << 20;
    int list_page_size = 1000;  // max-keys of each ListObjectsV2 page
    // A listing stops with an error past this many keys (a hostile or broken endpoint that keeps
    // answering truncated pages must not grow memory without bound).
    std::size_t max_list_keys = max_listed_keys;
    // A listing stops with an error after this many truncated pages in a row that brought no key:
    // an endpoint answering empty pages with ever new continuation tokens must not loop forever.
    std::size_t max_empty_list_pages = 100;
    // A failed credentials resolution is remembered this long: requests in the meantime fail with
    // the same error without asking the provider again (net/detail/credentials_cache.hpp).
    std::chrono::milliseconds credentials_retry_after{5'000};
};

struct S3ObjectInfo {
    std::string key;
    std::uint64_t size = 0;
    std::string etag;
    std::string last_modified;
};

// The HTTP requests a client sent, by kind (retries included), and the response body bytes received.
struct S3RequestCounts {
    std::uint64_t list = 0;    // ListObjectsV2 pages
    std::uint64_t get = 0;     // GetObject, whole or ranged
    std::uint64_t head = 0;    // HeadObject
    std::uint64_t put = 0;     // PutObject
    std::uint64_t remove = 0;  // DeleteObject
    std::uint64_t bytes_received = 0;
};

struct ListObjectsRequest {
    std::string bucket;
    std::string prefix;
    std::string delimiter;
    std::string start_after;
    std::string continuation_token;
    int max_keys = 0;  // 0: the client's list_page_size
};

struct ListObjectsPage {
    std::vector<S3ObjectInfo> objects;
    std::vector<std::string> common_prefixes;
    bool truncated = false;
    std::string next_continuation_token;
};

struct ByteRange {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;  // > 0
};

struct GetObjectResult {
    ByteBuffer data;               // the asked bytes; fewer only when the object ends earlier
    std::uint64_t object_size = 0; // total size of the object
};

inline std::string s3_url(std::string_view bucket, std::string_view key) {
    return "s3://" + std::string(bucket) + "/" + std::string(key);
}

// One GET of a batch (get_many): a whole object, or one range of it.
struct GetRequest {
    std::string bucket;
    std::string key;
    std::optional<ByteRange> range;
};

}  // namespace smdebug::net
