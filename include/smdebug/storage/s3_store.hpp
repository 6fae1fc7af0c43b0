#pragma once
// S3Store: a trial root in Amazon S3 (or an S3-compatible server), "s3://bucket/prefix".
// Keys are relative to the root prefix; runs of '/' in the full key collapse into one (as the
// reference writer normalises them). Satisfies WritableStore and BatchReadStore:
//  - list(prefix, start_after): ListObjectsV2 over all pages, relative keys in byte order; with
//    list_folders_concurrently (off by default), a listing past its first page lists the prefix's
//    sub-folders concurrently (S3Client::list_objects_by_folder);
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
// The S3 client (Asio, TLS, SigV4) is only named here: S3Store's members are defined in
// storage/impl/s3_store.ipp, so a program that compiles the library separately parses the client
// in one translation unit.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/config.hpp>
#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/s3_types.hpp>
#include <smdebug/net/transport_errors.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/store.hpp>
#include <smdebug/storage/url_openers.hpp>

namespace smdebug {

namespace net {
class S3Client;
}  // namespace net

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
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text);
}  // namespace net::detail

struct S3Location {
    std::string bucket;
    std::string prefix;  // "" or ending in '/'
};

// "s3://bucket[/prefix]" -> bucket and prefix (with a trailing '/' added, runs of '/' collapsed).
S3Location parse_s3_url(std::string_view url);

class S3Store {
public:
    explicit S3Store(std::string_view url, S3StoreOptions options = {});
    // Shares an existing client (connection pool, credentials) between stores.
    S3Store(std::string_view url, std::shared_ptr<net::S3Client> client, S3StoreOptions options = {});

    const std::string& bucket() const noexcept { return loc_.bucket; }
    const std::string& prefix() const noexcept { return loc_.prefix; }
    net::S3Client& client() const noexcept { return *client_; }
    // The HTTP requests of this store's client (RequestCountingStore); a client shared between
    // stores counts the requests of all of them.
    std::optional<RequestCounts> request_counts() const noexcept;

    std::string describe(std::string_view key) const;
    // A request's round trip, not its bytes, is what a small read costs (LatencyBoundStore).
    static constexpr bool latency_bound() noexcept { return true; }

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const;
    // FirstKeysStore: the first n keys, from the pages that bring them (max-keys n, up to 1000 a page).
    std::vector<std::string> list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const;
    // list() with each key's size and ETag (ObjectInfoListingStore); with max_keys > 0, only the
    // pages that bring the first max_keys keys.
    std::optional<std::vector<ObjectInfo>> list_info(std::string_view prefix, std::string_view start_after, std::size_t max_keys) const;

    bool exists(std::string_view key) const;
    ByteBuffer read(std::string_view key) const;
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const;

    void write(std::string_view key, std::span<const std::byte> bytes) const;
    void remove(std::string_view key) const;
    // SequencedWriteStore: each sequence's PUTs one after another, the sequences in flight together
    // (within the client's window). One result per sequence; a sequence stops at its first failure.
    std::vector<std::exception_ptr> write_sequences(std::span<const std::vector<WriteRequest>> sequences) const;

    std::vector<ByteBuffer> read_ranges(std::span<const RangeRequest> requests) const {
        return smdebug::read_ranges(*this, requests);
    }
    // Every request handed to `sink` on the calling thread, as soon as the GET that fetched it
    // completed; the GETs stay in flight together (S3Client::get_many).
    void read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const;

    // Whole objects, kept in flight together; nullopt for a missing key.
    std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string> keys) const;

    // When the object was last modified (HeadObject's Last-Modified); nullopt when it does not
    // exist or the server sent no parseable date.
    std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view key) const;

private:
    std::vector<ObjectInfo> list_objects(std::string_view prefix, std::string_view start_after, std::size_t max_keys) const;
    std::string full_key(std::string_view key) const;
    static bool is_not_found(const S3Error& e) noexcept;
    [[noreturn]] void rethrow_not_found(const S3Error& e, std::string_view key) const;
    TruncatedData short_object(std::string_view key, std::uint64_t offset, std::uint64_t length, std::uint64_t size) const;
    net::GetObjectResult get_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const;
    // A ranged GET's S3Error as the store reports it: TruncatedData past the end, ObjectNotFound
    // for a missing key; anything else as it is.
    [[noreturn]] void rethrow_range_error(const std::exception_ptr& error, std::string_view key, std::uint64_t offset,
                                          std::uint64_t length) const;

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

// The store of an "s3://" path, as open_store() opens it. A program that includes this header (or
// links the separately compiled library) opens "s3://" paths in open_store(), create_trial and
// Hook with it (storage/detail/builtin_openers.hpp).
AnyStore open_s3_url(std::string_view url);
AnyStore open_s3_url_with(std::string_view url, const StoreOpenOptions& options);
}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/storage/impl/s3_store.ipp>
#endif
