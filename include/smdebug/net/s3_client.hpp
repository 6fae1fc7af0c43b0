#pragma once
// A minimal Amazon S3 client: ListObjectsV2 (all pages), GetObject (optionally ranged), HeadObject,
// PutObject and DeleteObject, signed with SigV4 (header auth, X-Amz-Content-SHA256 set to the
// body's SHA-256), over the pooled HttpClient. Thread-safe.
//
// Every request is a coroutine on the HttpClient's one I/O thread; the blocking calls run one and
// wait. At most max_concurrency() requests are in flight at once, whoever sends them (the
// RequestWindow of request_window.hpp, which throttled answers shrink and successes grow back).
// get_many() keeps a batch of GETs in flight together and hands each result to the calling thread
// as it arrives; list_objects() lists the sub-folders of a prefix concurrently.
//
// Counting: every HTTP request the client sends (each ListObjectsV2 page, each ranged GET, each
// retry) is counted by kind, with the bytes of the response bodies it received (request_counts()).
//
// Errors: an S3 error response becomes S3Error (HTTP status, S3 code, request id, bucket, key).
// Retries: idempotent requests are retried with bounded exponential backoff and full jitter on
// HTTP 429/500/502/503/504, throttling codes (SlowDown, ...), connection failures, timeouts and
// truncated bodies; throttled answers (503 SlowDown, 429, Throttling...) are retried up to
// throttle_attempts times and do not draw on the retry quota (RetryQuota). A ranged GET whose 206 Content-Range does not cover the asked range, or
// whose body disagrees with its Content-Range, counts as truncated: it is retried and never
// returned as data.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/detail/crypto.hpp>
#include <smdebug/net/detail/http_client.hpp>
#include <smdebug/net/detail/request_window.hpp>
#include <smdebug/net/detail/sigv4.hpp>
#include <smdebug/net/transport_errors.hpp>
#include <smdebug/net/detail/url.hpp>
#include <smdebug/net/detail/xml.hpp>
#include <smdebug/core/byte_buffer.hpp>

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

class S3Client {
public:
    explicit S3Client(AwsConfig config, S3ClientOptions options = {})
        : config_(std::move(config)), opts_(std::move(options)),
          window_(opts_.max_concurrency ? opts_.max_concurrency : config_.concurrency()), http_(http_options(config_, opts_)) {
        if (opts_.retry.max_attempts < 1) opts_.retry.max_attempts = config_.attempts();
        if (opts_.throttle_attempts < 1) opts_.throttle_attempts = 1;
        if (opts_.list_page_size < 1 || opts_.list_page_size > 1000) opts_.list_page_size = 1000;
    }

    const AwsConfig& config() const noexcept { return config_; }
    HttpClient& http() noexcept { return http_; }
    // The window: requests in flight at most, now, and the most seen at once.
    std::size_t max_concurrency() const noexcept { return window_.max(); }
    const detail::RequestWindow& window() const noexcept { return window_; }

    // Every HTTP request sent so far (see the header comment); safe to call while requests run.
    S3RequestCounts request_counts() const noexcept {
        S3RequestCounts c;
        c.list = counts_[list_op].load(std::memory_order_relaxed);
        c.get = counts_[get_op].load(std::memory_order_relaxed);
        c.head = counts_[head_op].load(std::memory_order_relaxed);
        c.put = counts_[put_op].load(std::memory_order_relaxed);
        c.remove = counts_[remove_op].load(std::memory_order_relaxed);
        c.bytes_received = bytes_received_.load(std::memory_order_relaxed);
        return c;
    }

    // One ListObjectsV2 page. Keys are percent-decoded only when the response says
    // EncodingType url (the request asks for it; some servers ignore it).
    ListObjectsPage list_objects_page(const ListObjectsRequest& r) { return http_.run(async_list_page(r)); }

    // Every page: all objects (and common prefixes, when `delimiter` is set), in server order.
    ListObjectsPage list_objects(ListObjectsRequest r) { return http_.run(async_list_all(std::move(r))); }

    // Every object under r.prefix. A listing that fits one page costs one request, as before; past
    // the first page, the sub-folders of the prefix that follow it (the common prefixes of one '/'
    // delimiter listing) are listed concurrently instead of in one chain of pages: a trial's index
    // in buckets of 1,000 steps costs the longest bucket's chain, not their sum. Objects in key
    // order, no common prefixes.
    ListObjectsPage list_objects_by_folder(ListObjectsRequest r) {
        if (!r.delimiter.empty()) return list_objects(std::move(r));
        ListObjectsPage all = list_objects_page(r);
        all.common_prefixes.clear();
        if (!all.truncated || all.objects.empty()) {
            if (all.truncated) return list_objects(std::move(r));  // an empty truncated page: the plain chain (and its limits)
            return all;
        }
        all.truncated = false;
        const std::string after = all.objects.back().key;
        ListObjectsRequest top = r;
        top.delimiter = "/";
        top.start_after = after;
        top.continuation_token.clear();
        ListObjectsPage rest = list_objects(top);
        std::vector<std::string> folders = std::move(rest.common_prefixes);
        for (auto& o : rest.objects) all.objects.push_back(std::move(o));
        // The folder holding the last key listed: its keys after it belong to the listing, and a
        // server that rolls keys up before applying start-after may leave the folder out.
        if (const auto slash = after.find('/', r.prefix.size()); slash != std::string::npos) {
            std::string own = after.substr(0, slash + 1);
            if (std::find(folders.begin(), folders.end(), own) == folders.end()) folders.push_back(std::move(own));
        }
        std::vector<std::future<ListObjectsPage>> parts;
        parts.reserve(folders.size());
        for (const auto& f : folders) {
            ListObjectsRequest sub = r;
            sub.prefix = f;
            sub.start_after = after;
            sub.continuation_token.clear();
            parts.push_back(boost::asio::co_spawn(http_.executor(), async_list_all(std::move(sub)), boost::asio::use_future));
        }
        std::exception_ptr error;
        for (auto& part : parts) {
            try {
                ListObjectsPage p = part.get();
                for (auto& o : p.objects) all.objects.push_back(std::move(o));
            } catch (...) {
                if (!error) error = std::current_exception();
            }
            if (all.objects.size() > opts_.max_list_keys && !error)
                error = std::make_exception_ptr(HttpProtocolError("ListObjectsV2 " + s3_url(r.bucket, r.prefix) + ": more than " +
                                                                  std::to_string(opts_.max_list_keys) + " keys (S3ClientOptions::max_list_keys)"));
        }
        if (error) std::rethrow_exception(error);
        std::sort(all.objects.begin(), all.objects.end(), [](const S3ObjectInfo& a, const S3ObjectInfo& b) { return a.key < b.key; });
        all.objects.erase(std::unique(all.objects.begin(), all.objects.end(),
                                      [](const S3ObjectInfo& a, const S3ObjectInfo& b) { return a.key == b.key; }),
                          all.objects.end());
        return all;
    }

    // GetObject, whole or one range. Throws S3Error (NoSuchKey: 404; a range starting at or past
    // the end: 416 InvalidRange).
    GetObjectResult get_object(std::string_view bucket, std::string_view key, std::optional<ByteRange> range = std::nullopt) {
        return http_.run(async_get_object(GetRequest{std::string(bucket), std::string(key), range}));
    }

    // Many GETs kept in flight together (up to the window, and while the ranges asked for and not
    // yet handed over stay within max_buffered_bytes). `on_result(i, result, error)` runs on the
    // calling thread for every request i, in completion order, as soon as its answer is in memory;
    // `error` is set (and `result` empty) when request i failed. When on_result throws, no new
    // request is sent, the ones in flight are waited for, and the exception is rethrown.
    template <class OnResult>
    void get_many(std::span<const GetRequest> requests, OnResult&& on_result) {
        struct Done {
            std::size_t index;
            GetObjectResult result;
            std::exception_ptr error;
        };
        std::mutex mu;
        std::condition_variable cv;
        std::deque<Done> done;
        const std::size_t n = requests.size();
        const std::size_t max_outstanding = 2 * window_.max();
        std::size_t next = 0, outstanding = 0;
        std::uint64_t outstanding_bytes = 0;
        std::exception_ptr failure;
        auto cost = [&](std::size_t i) { return requests[i].range ? requests[i].range->length : 0; };
        auto executor = http_.executor();
        while (true) {
            while (!failure && next < n && outstanding < max_outstanding &&
                   (outstanding == 0 || outstanding_bytes + cost(next) <= opts_.max_buffered_bytes)) {
                const std::size_t i = next++;
                ++outstanding;
                outstanding_bytes += cost(i);
                boost::asio::co_spawn(executor, async_get_object(requests[i]), [&, i](std::exception_ptr e, GetObjectResult r) {
                    std::lock_guard lock(mu);
                    done.push_back({i, std::move(r), e});
                    cv.notify_one();
                });
            }
            if (outstanding == 0) break;
            Done d;
            {
                std::unique_lock lock(mu);
                cv.wait(lock, [&] { return !done.empty(); });
                d = std::move(done.front());
                done.pop_front();
            }
            --outstanding;
            outstanding_bytes -= cost(d.index);
            if (failure) continue;
            try {
                on_result(d.index, std::move(d.result), d.error);
            } catch (...) {
                failure = std::current_exception();
            }
        }
        if (failure) std::rethrow_exception(failure);
    }

    // HeadObject; nullopt for 404.
    std::optional<S3ObjectInfo> head_object(std::string_view bucket, std::string_view key) {
        Op op{"HEAD", std::string(bucket), std::string(key), "HeadObject"};
        HttpResponse resp = http_.run(async_execute(op));
        if (resp.status == 404) return std::nullopt;
        if (resp.status != 200) throw error_from(op, resp);
        S3ObjectInfo info;
        info.key = std::string(key);
        if (const auto* cl = resp.header("Content-Length")) info.size = parse_u64(*cl).value_or(0);
        info.etag = header_or_empty(resp, "ETag");
        info.last_modified = header_or_empty(resp, "Last-Modified");
        return info;
    }

    // PutObject; returns the ETag.
    std::string put_object(std::string_view bucket, std::string_view key, std::span<const std::byte> body,
                           std::string_view content_type = "application/octet-stream") {
        return http_.run(async_put_object(std::string(bucket), std::string(key), body, std::string(content_type)));
    }
    // The same as a coroutine on http().executor(); `body` must stay alive until it completes.
    boost::asio::awaitable<std::string> async_put_object(std::string bucket, std::string key, std::span<const std::byte> body,
                                                         std::string content_type = "application/octet-stream") {
        Op op{"PUT", std::move(bucket), std::move(key), "PutObject"};
        op.body = body;
        op.payload_hash = sha256_hex(body);
        op.headers.emplace_back("Content-Type", std::move(content_type));
        HttpResponse resp = co_await async_execute(op);
        if (resp.status != 200) throw error_from(op, resp);
        co_return header_or_empty(resp, "ETag");
    }

    // DeleteObject (succeeds for a missing key, as S3 does).
    void delete_object(std::string_view bucket, std::string_view key) {
        Op op{"DELETE", std::string(bucket), std::string(key), "DeleteObject"};
        HttpResponse resp = http_.run(async_execute(op));
        if (resp.status != 204 && resp.status != 200) throw error_from(op, resp);
    }

    // GetObject as a coroutine on http().executor().
    boost::asio::awaitable<GetObjectResult> async_get_object(GetRequest g) {
        const std::optional<ByteRange> range = g.range;
        if (range && range->length == 0) throw UsageError("GetObject " + s3_url(g.bucket, g.key) + ": empty range");
        Op op{"GET", std::move(g.bucket), std::move(g.key), "GetObject"};
        const std::string bucket = op.bucket, key = op.key;
        std::uint64_t asked_last = 0;
        if (range) {
            // s3rver answers "bytes=0-0" with the whole object: ask for two bytes and slice.
            std::uint64_t len = range->offset == 0 && range->length == 1 ? 2 : range->length;
            if (range->offset > UINT64_MAX - len) throw UsageError("GetObject " + s3_url(bucket, key) + ": range overflows");
            asked_last = range->offset + len - 1;
            op.headers.emplace_back("Range", "bytes=" + std::to_string(range->offset) + "-" + std::to_string(asked_last));
        }
        GetObjectResult out;
        op.validate = [&](HttpResponse& resp) {
            if (resp.status == 200) {
                out.object_size = resp.body.size();
                out.data = range ? slice(resp.body, 0, resp.body.size(), range->offset, range->length) : std::move(resp.body);
            } else if (resp.status == 206 && range) {
                auto cr = parse_content_range(resp.header("Content-Range"));
                if (!cr || cr->last - cr->first + 1 != resp.body.size())
                    throw TruncatedResponse("GetObject " + s3_url(bucket, key) + ": the 206 body of " + std::to_string(resp.body.size()) +
                                            " bytes disagrees with Content-Range '" + header_or_empty(resp, "Content-Range") + "'");
                const std::uint64_t want_last = std::min(asked_last, cr->total ? *cr->total - 1 : asked_last);
                if (cr->first > range->offset || cr->last < want_last)
                    throw TruncatedResponse("GetObject " + s3_url(bucket, key) + ": asked for bytes " + std::to_string(range->offset) + "-" +
                                            std::to_string(asked_last) + " but got Content-Range '" + header_or_empty(resp, "Content-Range") + "'");
                out.object_size = cr->total ? *cr->total : cr->last + 1;
                out.data = slice(resp.body, cr->first, cr->last + 1, range->offset, range->length);
            } else if (resp.status == 206) {
                throw HttpProtocolError("GetObject " + s3_url(bucket, key) + ": a 206 Partial Content answer to a request without Range");
            } else {
                throw error_from(op, resp);
            }
        };
        (void)co_await async_execute(op);
        co_return std::move(out);
    }

    // Parses "bytes first-last/total" (total may be "*").
    struct ContentRange {
        std::uint64_t first = 0, last = 0;
        std::optional<std::uint64_t> total;
    };
    static std::optional<ContentRange> parse_content_range(const std::string* h) {
        if (!h) return std::nullopt;
        std::string_view s = *h;
        if (!s.starts_with("bytes ")) return std::nullopt;
        s.remove_prefix(6);
        auto dash = s.find('-'), slash = s.find('/');
        if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
        auto a = parse_u64(s.substr(0, dash)), b = parse_u64(s.substr(dash + 1, slash - dash - 1));
        if (!a || !b || *a > *b) return std::nullopt;
        ContentRange r{*a, *b, std::nullopt};
        std::string_view t = s.substr(slash + 1);
        if (t != "*") {
            r.total = parse_u64(t);
            if (!r.total || *r.total <= *b) return std::nullopt;
        }
        return r;
    }

private:
    enum : int { list_op, get_op, head_op, put_op, remove_op, op_kinds };

    struct Op {
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

    static HttpClientOptions http_options(const AwsConfig& c, const S3ClientOptions& o) {
        HttpClientOptions h = o.http;
        if (h.extra_ca_file.empty()) h.extra_ca_file = c.extra_ca_file;
        if (c.connect_timeout) h.connect_timeout = *c.connect_timeout;
        if (c.read_timeout) h.io_timeout = h.header_timeout = *c.read_timeout;
        return h;
    }

    static std::optional<std::uint64_t> parse_u64(std::string_view s) {
        if (s.empty() || s.size() > 19) return std::nullopt;
        std::uint64_t v = 0;
        for (char c : s) {
            if (c < '0' || c > '9') return std::nullopt;
            v = v * 10 + static_cast<std::uint64_t>(c - '0');
        }
        return v;
    }
    static std::string header_or_empty(const HttpResponse& r, std::string_view name) {
        const std::string* h = r.header(name);
        return h ? *h : std::string();
    }

    // The bytes [offset, offset+length) of an object, from a body holding [first, end).
    static ByteBuffer slice(ByteBuffer& body, std::uint64_t first, std::uint64_t end, std::uint64_t offset, std::uint64_t length) {
        if (offset >= end) return ByteBuffer();
        const std::uint64_t stop = std::min(end, offset + length);
        if (offset == first && stop == end) return std::move(body);
        return ByteBuffer::copy_of(body.bytes().subspan(static_cast<std::size_t>(offset - first), static_cast<std::size_t>(stop - offset)));
    }

    HttpRequest build(const Op& op) {
        if (op.bucket.empty()) throw UsageError(std::string(op.name) + ": empty bucket name");
        const S3BucketEndpoint ep = config_.bucket_endpoint(op.bucket);
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
        if (!config_.credentials) {
            for (const auto& [n, v] : op.headers) req.headers.push_back({n, v});
            return req;
        }
        AwsCredentials creds = config_.credentials->get();
        SigningRequest sr;
        sr.method = op.method;
        sr.scheme = ep.origin.scheme;
        sr.host = ep.origin.authority();
        sr.path_as_sent = path;
        sr.query = op.query;
        sr.headers = op.headers;
        sr.payload_hash = op.payload_hash;
        SigningOptions so = SigningOptions::s3(config_.region, format_amz_date(std::chrono::system_clock::now()));
        SignedRequest signed_req = sign_request(sr, creds, so, keys_.get(creds, so));
        secure_clear(creds.secret_access_key);
        for (auto& [n, v] : signed_req.headers_to_send) req.headers.push_back({std::move(n), std::move(v)});
        return req;
    }

    boost::asio::awaitable<ListObjectsPage> async_list_page(ListObjectsRequest r) {
        Op op{"GET", r.bucket, "", "ListObjectsV2"};
        op.bucket_level = true;
        op.kind = list_op;
        op.query.emplace_back("list-type", "2");
        op.query.emplace_back("encoding-type", "url");
        int max_keys = r.max_keys > 0 ? r.max_keys : opts_.list_page_size;
        op.query.emplace_back("max-keys", std::to_string(max_keys));
        if (!r.prefix.empty()) op.query.emplace_back("prefix", r.prefix);
        if (!r.delimiter.empty()) op.query.emplace_back("delimiter", r.delimiter);
        if (!r.start_after.empty()) op.query.emplace_back("start-after", r.start_after);
        if (!r.continuation_token.empty()) op.query.emplace_back("continuation-token", r.continuation_token);
        HttpResponse resp = co_await async_execute(op);
        if (resp.status != 200) throw error_from(op, resp);
        co_return parse_list_page(op, resp);
    }

    boost::asio::awaitable<ListObjectsPage> async_list_all(ListObjectsRequest r) {
        ListObjectsPage all;
        std::size_t empty_pages = 0;  // truncated pages in a row without a key
        for (std::size_t page = 0;; ++page) {
            ListObjectsPage p = co_await async_list_page(r);
            empty_pages = p.objects.empty() && p.common_prefixes.empty() ? empty_pages + 1 : 0;
            for (auto& o : p.objects) all.objects.push_back(std::move(o));
            for (auto& c : p.common_prefixes) all.common_prefixes.push_back(std::move(c));
            if (all.objects.size() + all.common_prefixes.size() > opts_.max_list_keys)
                throw HttpProtocolError("ListObjectsV2 " + s3_url(r.bucket, r.prefix) + ": more than " +
                                        std::to_string(opts_.max_list_keys) + " keys (S3ClientOptions::max_list_keys)");
            if (!p.truncated) break;
            if (empty_pages > opts_.max_empty_list_pages)
                throw HttpProtocolError("ListObjectsV2 " + s3_url(r.bucket, r.prefix) + ": " + std::to_string(empty_pages) +
                                        " truncated pages in a row without a key (S3ClientOptions::max_empty_list_pages)");
            if (p.next_continuation_token.empty() || p.next_continuation_token == r.continuation_token)
                throw HttpProtocolError("ListObjectsV2 " + s3_url(r.bucket, r.prefix) +
                                        ": a truncated page without a new NextContinuationToken (page " + std::to_string(page + 1) + ")");
            r.continuation_token = std::move(p.next_continuation_token);
        }
        co_return all;
    }

    enum class Failure { none, throttled, retryable, timeout };

    // Sends with retries, holding a slot of the window for each attempt; returns the accepted
    // response (validated when op.validate is set, else any status that is not retryable).
    boost::asio::awaitable<HttpResponse> async_execute(Op op) {
        const int attempts = op.idempotent() ? opts_.retry.max_attempts : 1;
        const int throttle_attempts = op.idempotent() ? std::max(opts_.throttle_attempts, attempts) : 1;
        int errors = 0, throttles = 0, spent = 0;
        for (int attempt = 1;; ++attempt) {
            std::string retry_reason;
            std::exception_ptr error;
            Failure failure = Failure::none;
            std::optional<HttpResponse> accepted;
            const detail::RequestWindow::Slot slot = co_await window_.acquire();
            try {
                HttpRequest req = build(op);
                counts_[op.counted_kind()].fetch_add(1, std::memory_order_relaxed);
                HttpResponse resp = co_await http_.async_send(std::move(req));
                bytes_received_.fetch_add(resp.body.size(), std::memory_order_relaxed);
                if (throttling_status(resp)) failure = Failure::throttled;
                else if (retryable_status(resp)) failure = Failure::retryable;
                if (failure != Failure::none) retry_reason = "HTTP " + std::to_string(resp.status);
                bool may_retry = false;
                if (failure == Failure::throttled && throttles + 1 < throttle_attempts) {
                    may_retry = true;
                    ++throttles;
                } else if (failure == Failure::retryable && errors + 1 < attempts && quota_.take(false)) {
                    may_retry = true;
                    spent += detail::RetryQuota::retry_cost;
                    ++errors;
                }
                if (!may_retry) {
                    if (op.validate) op.validate(resp);
                    accepted.emplace(std::move(resp));
                }
            } catch (const ConnectionError&) {
                error = std::current_exception();
                failure = Failure::retryable;
            } catch (const NetworkTimeout&) {
                error = std::current_exception();
                failure = Failure::timeout;
            } catch (const TruncatedResponse&) {
                error = std::current_exception();
                failure = Failure::retryable;
            } catch (...) {
                window_.release(slot, detail::RequestWindow::Outcome::failed);
                throw;
            }
            window_.release(slot, failure == Failure::throttled ? detail::RequestWindow::Outcome::throttled
                                  : failure == Failure::none     ? detail::RequestWindow::Outcome::success
                                                                 : detail::RequestWindow::Outcome::failed);
            if (accepted) {
                quota_.refund(spent);
                co_return std::move(*accepted);
            }
            if (error) {
                const bool timeout = failure == Failure::timeout;
                if (errors + 1 >= attempts || !quota_.take(timeout)) rethrow_with_attempts(op, attempt, error);
                spent += timeout ? detail::RetryQuota::timeout_cost : detail::RetryQuota::retry_cost;
                ++errors;
            }
            co_await backoff(failure == Failure::throttled ? throttles : errors);
        }
    }

    [[noreturn]] static void rethrow_with_attempts(const Op& op, int attempts, std::exception_ptr error) {
        try {
            std::rethrow_exception(error);
        } catch (const ConnectionError& e) {
            throw ConnectionError(with_attempts(op, attempts, e.what()));
        } catch (const NetworkTimeout& e) {
            throw NetworkTimeout(with_attempts(op, attempts, e.what()));
        } catch (const TruncatedResponse& e) {
            throw TruncatedResponse(with_attempts(op, attempts, e.what()));
        }
    }

    static std::string with_attempts(const Op& op, int attempts, const char* what) {
        return std::string(op.name) + " " + op.url() + " failed after " + std::to_string(attempts) +
               (attempts == 1 ? " attempt: " : " attempts: ") + what;
    }

    static bool retryable_status(const HttpResponse& r) {
        if (r.status == 429 || r.status == 500 || r.status == 502 || r.status == 503 || r.status == 504) return true;
        if (r.status == 400 || r.status == 403) {
            // Throttling and transient codes that S3 sends with other statuses.
            std::string_view body = r.body.text();
            for (std::string_view code : {"<Code>SlowDown</Code>", "<Code>RequestTimeout</Code>", "<Code>Throttling</Code>",
                                          "<Code>ThrottlingException</Code>", "<Code>RequestLimitExceeded</Code>"})
                if (body.find(code) != std::string_view::npos) return true;
        }
        return false;
    }

    // Throttling answers: the window shrinks for them.
    static bool throttling_status(const HttpResponse& r) {
        if (r.status == 429) return true;
        if (r.status != 503 && r.status != 400 && r.status != 403) return false;
        std::string_view body = r.body.text();
        for (std::string_view code : {"<Code>SlowDown</Code>", "<Code>Throttling</Code>", "<Code>ThrottlingException</Code>",
                                      "<Code>RequestLimitExceeded</Code>", "<Code>TooManyRequestsException</Code>"})
            if (body.find(code) != std::string_view::npos) return true;
        return r.status == 503 && body.empty();
    }

    boost::asio::awaitable<void> backoff(int retry) const {
        using namespace std::chrono;
        const auto cap = std::min<std::int64_t>(opts_.retry.max_delay.count(),
                                                opts_.retry.base_delay.count() << std::min(retry, 20));
        if (cap <= 0) co_return;
        thread_local std::mt19937_64 rng{std::random_device{}()};
        std::uniform_int_distribution<std::int64_t> d(0, cap);
        boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, milliseconds(d(rng)));
        (void)co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }

    S3Error error_from(const Op& op, const HttpResponse& resp) const {
        std::string code, message, request_id;
        if (const auto* h = resp.header("x-amz-request-id")) request_id = *h;
        if (!resp.body.empty()) {
            try {
                XmlElement e = parse_xml(resp.body.text());
                if (e.name == "Error") {
                    code = e.child_text("Code");
                    message = e.child_text("Message");
                    if (request_id.empty()) request_id = e.child_text("RequestId");
                }
            } catch (const XmlError&) {
                // Not an S3 error document (a proxy's page, s3rver's plain-text 404): status only.
            }
        }
        if (code.empty() && op.method == "HEAD") {
            switch (resp.status) {
                case 404: code = "NotFound"; break;
                case 403: code = "Forbidden"; break;
                case 400: code = "BadRequest"; break;
                default: break;
            }
        }
        std::string m = std::string(op.name) + " " + op.url() + " failed: HTTP " + std::to_string(resp.status);
        if (!code.empty()) m += " " + code;
        if (!message.empty()) m += ": " + message.substr(0, 300);
        else if (!resp.reason.empty()) m += " (" + resp.reason.substr(0, 100) + ")";
        if (const auto* region = resp.header("x-amz-bucket-region"); region && *region != config_.region)
            m += " [the bucket is in region " + *region + ", the client uses " + config_.region + "]";
        if (!request_id.empty()) m += " (request id " + request_id + ")";
        return S3Error(std::move(m), resp.status, std::move(code), std::move(request_id), op.bucket, op.key);
    }

    ListObjectsPage parse_list_page(const Op& op, const HttpResponse& resp) const {
        ListObjectsPage page;
        try {
            XmlElement root = parse_xml(resp.body.text());
            if (root.name != "ListBucketResult")
                throw HttpProtocolError("ListObjectsV2 " + op.url() + ": expected <ListBucketResult>, got <" + root.name + ">");
            const bool url_encoded = root.child_text("EncodingType") == "url";
            auto decode = [&](std::string_view s) { return url_encoded ? percent_decode(s, true) : std::string(s); };
            root.for_each("Contents", [&](const XmlElement& c) {
                S3ObjectInfo o;
                const XmlElement* k = c.child("Key");
                if (!k) throw HttpProtocolError("ListObjectsV2 " + op.url() + ": <Contents> without <Key>");
                o.key = decode(k->text);
                o.size = parse_u64(c.child_text("Size", "0")).value_or(0);
                o.etag = c.child_text("ETag");
                o.last_modified = c.child_text("LastModified");
                page.objects.push_back(std::move(o));
            });
            root.for_each("CommonPrefixes", [&](const XmlElement& c) { page.common_prefixes.push_back(decode(c.child_text("Prefix"))); });
            page.truncated = root.child_text("IsTruncated") == "true";
            page.next_continuation_token = std::string(root.child_text("NextContinuationToken"));
        } catch (const XmlError& e) {
            throw HttpProtocolError("ListObjectsV2 " + op.url() + ": malformed XML response: " + e.what());
        } catch (const FormatError& e) {
            throw HttpProtocolError("ListObjectsV2 " + op.url() + ": " + e.what());
        }
        return page;
    }

    AwsConfig config_;
    S3ClientOptions opts_;
    detail::RequestWindow window_;  // touched on http_'s I/O thread only
    detail::RetryQuota quota_;      // likewise
    HttpClient http_;               // after them: its I/O thread stops before they go
    SigningKeyCache keys_;
    std::atomic<std::uint64_t> counts_[op_kinds] = {};
    std::atomic<std::uint64_t> bytes_received_{0};
};

}  // namespace smdebug::net
