#pragma once
// S3Store: a trial root in Amazon S3 (or an S3-compatible server), "s3://bucket/prefix".
// Keys are relative to the root prefix; runs of '/' in the full key collapse into one (as the
// reference writer normalises them). Satisfies WritableStore and BatchReadStore:
//  - list(prefix, start_after): ListObjectsV2 over all pages, relative keys in byte order; the
//    with list_folders_concurrently, a listing past its first page lists the prefix's sub-folders
//    concurrently (S3Client::list_objects_by_folder);
//  - read / read_range: GetObject (ranged), ObjectNotFound for a missing key, TruncatedData when
//    the object is shorter than the asked range; a 0-length range returns an empty buffer
//    without any request;
//  - read_ranges / read_objects: neighbouring or overlapping ranges of one object are coalesced
//    into one GET (then sliced without copying), and the GETs are kept in flight together, up to
//    the client's window (S3Client::get_many); each result reaches the caller's thread as it arrives;
//  - last_modified: HeadObject's Last-Modified (for the end-of-training settle, D21);
//  - write: PutObject (atomic in S3); remove: DeleteObject;
//  - request_counts: the HTTP requests its client sent (RequestCountingStore);
//  - list_info: list() with sizes and ETags (ObjectInfoListingStore, for the disk cache).
// Configuration comes from the environment by default (net/aws_config.hpp).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <future>
#include <ctime>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include <smdebug/core/errors.hpp>
#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/aws_credentials.hpp>
#include <smdebug/net/s3_client.hpp>
#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/url_openers.hpp>
#include <smdebug/storage/detail/range_plan.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

struct S3StoreOptions {
    std::optional<net::AwsConfig> aws;     // nullopt: net::AwsConfig::from_environment()
    net::S3ClientOptions client;           // HTTP timeouts, retries, list page size, buffered bytes
    // Requests in flight at most; 0: the profile's s3.max_concurrent_requests, else 64
    // (net::AwsConfig::concurrency). Sets client.max_concurrency.
    std::size_t max_concurrency = 0;
    std::uint64_t coalesce_gap = 0;        // ranges of one object at most this far apart share a GET
    std::uint64_t max_coalesced_bytes = 64u << 20;  // but a shared GET spans at most this much
    // Past a listing's first page, list the prefix's sub-folders side by side (found by one
    // delimiter listing) instead of one chain of pages. Off by default: s3rver's delimiter
    // listings with start-after leave folders out, and a store that does so would lose keys.
    bool list_folders_concurrently = false;
};

namespace net::detail {

// An HTTP date (RFC 7231 IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT"), or an ISO 8601 time as
// S3 listings give it ("2009-10-12T17:50:30.000Z"); nullopt when it is neither.
inline std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text) {
    int year = 0, day = 0, hour = 0, minute = 0, second = 0;
    char mon[4] = {};
    const std::string s(text);
    if (std::sscanf(s.c_str(), "%*3s, %2d %3s %4d %2d:%2d:%2d GMT", &day, mon, &year, &hour, &minute, &second) != 6)
        return parse_iso8601(text);
    static constexpr std::string_view months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    int month = 0;
    for (int i = 0; i < 12; ++i)
        if (months[i] == std::string_view(mon, 3)) month = i + 1;
    if (month == 0 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    const std::time_t t = ::timegm(&tm);
    if (t == static_cast<std::time_t>(-1)) return std::nullopt;
    return std::chrono::system_clock::from_time_t(t);
}

}  // namespace net::detail

struct S3Location {
    std::string bucket;
    std::string prefix;  // "" or ending in '/'
};

// "s3://bucket[/prefix]" -> bucket and prefix (with a trailing '/' added, runs of '/' collapsed).
inline S3Location parse_s3_url(std::string_view url) {
    if (!url.starts_with("s3://")) throw UsageError("invalid S3 URL '" + std::string(url) + "': it must start with s3://");
    std::string_view rest = url.substr(5);
    auto slash = rest.find('/');
    S3Location loc;
    loc.bucket = std::string(rest.substr(0, slash));
    if (loc.bucket.empty()) throw UsageError("invalid S3 URL '" + std::string(url) + "': no bucket name");
    for (char c : loc.bucket)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'))
            throw UsageError("invalid S3 URL '" + std::string(url) + "': bad character in bucket name '" + loc.bucket + "'");
    if (slash != std::string_view::npos) {
        for (char c : rest.substr(slash + 1))
            if (c != '/' || loc.prefix.empty() || loc.prefix.back() != '/') loc.prefix += c;
        while (!loc.prefix.empty() && loc.prefix.front() == '/') loc.prefix.erase(0, 1);
        if (!loc.prefix.empty() && loc.prefix.back() != '/') loc.prefix += '/';
    }
    return loc;
}

class S3Store {
public:
    explicit S3Store(std::string_view url, S3StoreOptions options = {}) : loc_(parse_s3_url(url)), opts_(std::move(options)) {
        if (opts_.max_concurrency) opts_.client.max_concurrency = opts_.max_concurrency;
        client_ = std::make_shared<net::S3Client>(opts_.aws ? *opts_.aws : net::AwsConfig::from_environment(), opts_.client);
    }
    // Shares an existing client (connection pool, credentials) between stores.
    S3Store(std::string_view url, std::shared_ptr<net::S3Client> client, S3StoreOptions options = {})
        : loc_(parse_s3_url(url)), opts_(std::move(options)), client_(std::move(client)) {
        if (!client_) throw UsageError("S3Store: null S3 client for " + std::string(url));
    }

    const std::string& bucket() const noexcept { return loc_.bucket; }
    const std::string& prefix() const noexcept { return loc_.prefix; }
    net::S3Client& client() const noexcept { return *client_; }
    // The HTTP requests of this store's client (RequestCountingStore); a client shared between
    // stores counts the requests of all of them.
    std::optional<RequestCounts> request_counts() const noexcept {
        const net::S3RequestCounts c = client_->request_counts();
        return RequestCounts{c.list, c.get, c.head, c.bytes_received};
    }

    std::string describe(std::string_view key) const { return net::s3_url(loc_.bucket, full_key(key)); }
    // A request's round trip, not its bytes, is what a small read costs (LatencyBoundStore).
    static constexpr bool latency_bound() noexcept { return true; }

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        std::vector<std::string> keys;
        for (auto& o : list_objects(prefix, start_after, 0)) keys.push_back(std::move(o.key));
        return keys;
    }
    // FirstKeysStore: the first n keys, from the pages that bring them (max-keys n, up to 1000 a page).
    std::vector<std::string> list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const {
        if (n == 0) return {};
        std::vector<std::string> keys;
        for (auto& o : list_objects(prefix, start_after, n)) keys.push_back(std::move(o.key));
        if (keys.size() > n) keys.resize(n);
        return keys;
    }

    // list() with each key's size and ETag (ObjectInfoListingStore); with max_keys > 0, only the
    // pages that bring the first max_keys keys.
    std::optional<std::vector<ObjectInfo>> list_info(std::string_view prefix, std::string_view start_after, std::size_t max_keys) const {
        return list_objects(prefix, start_after, max_keys);
    }

    bool exists(std::string_view key) const { return client_->head_object(loc_.bucket, full_key(key)).has_value(); }

    ByteBuffer read(std::string_view key) const {
        try {
            return client_->get_object(loc_.bucket, full_key(key)).data;
        } catch (const S3Error& e) {
            rethrow_not_found(e, key);
            throw;
        }
    }

    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        if (length == 0) return ByteBuffer();
        net::GetObjectResult r = get_range(key, offset, length);
        if (r.data.size() < length) throw short_object(key, offset, length, r.object_size);
        return std::move(r.data);
    }

    void write(std::string_view key, std::span<const std::byte> bytes) const {
        client_->put_object(loc_.bucket, full_key(key), bytes);
    }

    void remove(std::string_view key) const { client_->delete_object(loc_.bucket, full_key(key)); }

    // SequencedWriteStore: each sequence's PUTs one after another, the sequences in flight together
    // (within the client's window). One result per sequence; a sequence stops at its first failure.
    std::vector<std::exception_ptr> write_sequences(std::span<const std::vector<WriteRequest>> sequences) const {
        std::vector<std::future<void>> running;
        running.reserve(sequences.size());
        for (const auto& seq : sequences)
            running.push_back(boost::asio::co_spawn(client_->http().executor(), put_in_order(seq), boost::asio::use_future));
        std::vector<std::exception_ptr> errors(sequences.size());
        for (std::size_t i = 0; i < running.size(); ++i) {
            try {
                running[i].get();
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
        return errors;
    }

    std::vector<ByteBuffer> read_ranges(std::span<const RangeRequest> requests) const {
        return smdebug::read_ranges(*this, requests);
    }
    // Every request handed to `sink` on the calling thread, as soon as the GET that fetched it
    // completed; the GETs stay in flight together (S3Client::get_many).
    void read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const {
        for (std::size_t i = 0; i < requests.size(); ++i)
            if (requests[i].length == 0) sink(i, ByteBuffer());
        const auto fetches = detail::plan_fetches(requests, {opts_.coalesce_gap, opts_.max_coalesced_bytes});
        std::vector<net::GetRequest> gets;
        gets.reserve(fetches.size());
        for (const auto& f : fetches)
            gets.push_back({loc_.bucket, full_key(requests[f.members.front()].key), net::ByteRange{f.begin, f.end - f.begin}});
        client_->get_many(gets, [&](std::size_t i, net::GetObjectResult&& r, const std::exception_ptr& error) {
            const detail::Fetch& f = fetches[i];
            if (error) rethrow_range_error(error, requests[f.members.front()].key, f.begin, f.end - f.begin);
            const std::uint64_t have_end = f.begin + r.data.size();
            for (std::size_t m : f.members) {
                const RangeRequest& q = requests[m];
                if (q.offset + q.length > have_end) throw short_object(q.key, q.offset, q.length, r.object_size);
            }
            if (f.members.size() == 1 && requests[f.members[0]].offset == f.begin && r.data.size() == f.end - f.begin) {
                sink(f.members[0], std::move(r.data));
                return;
            }
            for (std::size_t m : f.members) {
                const RangeRequest& q = requests[m];
                sink(m, r.data.slice(static_cast<std::size_t>(q.offset - f.begin), static_cast<std::size_t>(q.length)));
            }
        });
    }

    // Whole objects, kept in flight together; nullopt for a missing key.
    std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string> keys) const {
        std::vector<std::optional<ByteBuffer>> out(keys.size());
        std::vector<net::GetRequest> gets;
        gets.reserve(keys.size());
        for (const auto& k : keys) gets.push_back({loc_.bucket, full_key(k), std::nullopt});
        client_->get_many(gets, [&](std::size_t i, net::GetObjectResult&& r, const std::exception_ptr& error) {
            if (!error) {
                out[i].emplace(std::move(r.data));
                return;
            }
            try {
                std::rethrow_exception(error);
            } catch (const S3Error& e) {
                if (!is_not_found(e)) throw;
            }
        });
        return out;
    }

    // When the object was last modified (HeadObject's Last-Modified); nullopt when it does not
    // exist or the server sent no parseable date.
    std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view key) const {
        const auto info = client_->head_object(loc_.bucket, full_key(key));
        if (!info) return std::nullopt;
        return net::detail::parse_http_date(info->last_modified);
    }

private:
    boost::asio::awaitable<void> put_in_order(const std::vector<WriteRequest>& writes) const {
        for (const auto& w : writes) (void)co_await client_->async_put_object(loc_.bucket, full_key(w.key), w.bytes);
    }

    std::vector<ObjectInfo> list_objects(std::string_view prefix, std::string_view start_after, std::size_t max_keys) const {
        net::ListObjectsRequest r;
        r.bucket = loc_.bucket;
        r.prefix = full_key(prefix);
        if (!start_after.empty()) r.start_after = full_key(start_after);
        std::vector<net::S3ObjectInfo> objects;
        if (max_keys == 0) {
            objects = opts_.list_folders_concurrently ? client_->list_objects_by_folder(std::move(r)).objects
                                                      : client_->list_objects(std::move(r)).objects;
        } else {
            while (objects.size() < max_keys) {
                r.max_keys = static_cast<int>(std::min<std::size_t>(max_keys - objects.size(), 1000));
                auto page = client_->list_objects_page(r);
                // An empty page ends it too: an endpoint answering empty truncated pages must not loop.
                const bool last = page.objects.empty() || !page.truncated || page.next_continuation_token.empty() ||
                                  page.next_continuation_token == r.continuation_token;
                for (auto& o : page.objects) objects.push_back(std::move(o));
                if (last) break;
                r.continuation_token = std::move(page.next_continuation_token);
            }
        }
        std::vector<ObjectInfo> out;
        out.reserve(objects.size());
        for (auto& o : objects) {
            if (!o.key.starts_with(loc_.prefix)) continue;
            std::string rel = o.key.substr(loc_.prefix.size());
            // The server filtered already; filter again in byte order (some servers order differently).
            if (!rel.starts_with(prefix) || (!start_after.empty() && std::string_view(rel) <= start_after)) continue;
            out.push_back({std::move(rel), o.size, std::move(o.etag)});
        }
        std::sort(out.begin(), out.end(), [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
        out.erase(std::unique(out.begin(), out.end(), [](const ObjectInfo& a, const ObjectInfo& b) { return a.key == b.key; }), out.end());
        return out;
    }

    std::string full_key(std::string_view key) const {
        std::string k = loc_.prefix;
        for (char c : key)
            if (c != '/' || k.empty() || k.back() != '/') k += c;
        return k;
    }

    static bool is_not_found(const S3Error& e) noexcept { return e.code == "NoSuchKey" || (e.http_status == 404 && e.code.empty()); }

    [[noreturn]] void rethrow_not_found(const S3Error& e, std::string_view key) const {
        if (is_not_found(e))
            throw ObjectNotFound("no such object: " + describe(key) + " (" + e.what() + ")");
        throw e;
    }

    TruncatedData short_object(std::string_view key, std::uint64_t offset, std::uint64_t length, std::uint64_t size) const {
        return TruncatedData(describe(key) + ": wanted " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                             " but the object has " + std::to_string(size) + " bytes");
    }

    net::GetObjectResult get_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        try {
            return client_->get_object(loc_.bucket, full_key(key), net::ByteRange{offset, length});
        } catch (const S3Error&) {
            rethrow_range_error(std::current_exception(), key, offset, length);
        }
    }

    // A ranged GET's S3Error as the store reports it: TruncatedData past the end, ObjectNotFound
    // for a missing key; anything else as it is.
    [[noreturn]] void rethrow_range_error(const std::exception_ptr& error, std::string_view key, std::uint64_t offset,
                                          std::uint64_t length) const {
        try {
            std::rethrow_exception(error);
        } catch (const S3Error& e) {
            if (e.http_status == 416 || e.code == "InvalidRange")
                throw TruncatedData(describe(key) + ": wanted " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                                    " but the object ends before that offset (" + e.what() + ")");
            rethrow_not_found(e, key);
        }
    }

    S3Location loc_;
    S3StoreOptions opts_;
    std::shared_ptr<net::S3Client> client_;
};

static_assert(Store<S3Store>);
static_assert(WritableStore<S3Store>);
static_assert(SequencedWriteStore<S3Store>);
static_assert(BatchReadStore<S3Store>);
static_assert(BatchObjectStore<S3Store>);
static_assert(TimestampedStore<S3Store>);
static_assert(LatencyBoundStore<S3Store>);
static_assert(RequestCountingStore<S3Store>);
static_assert(ObjectInfoListingStore<S3Store>);

inline AnyStore open_s3_url(std::string_view url) { return AnyStore(S3Store(std::string(url))); }
inline AnyStore open_s3_url_with(std::string_view url, const StoreOpenOptions& options) {
    S3StoreOptions o;
    o.max_concurrency = options.max_concurrency.value_or(0);
    return AnyStore(S3Store(std::string(url), std::move(o)));
}
// A program that includes this header opens "s3://" paths with S3Store (open_store(), create_trial,
// Hook). Each translation unit sets the same opener; internal linkage keeps the initialiser alive.
[[maybe_unused]] static const bool s3_urls_enabled =
    register_url_opener("s3", &open_s3_url) && register_url_opener("s3", &open_s3_url_with);

}  // namespace smdebug
