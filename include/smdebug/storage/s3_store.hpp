#pragma once
// S3Store: a trial root in Amazon S3 (or an S3-compatible server), "s3://bucket/prefix".
// Keys are relative to the root prefix; runs of '/' in the full key collapse into one (as the
// reference writer normalises them). Satisfies WritableStore and BatchReadStore:
//  - list(prefix, start_after): ListObjectsV2 over all pages, relative keys in byte order;
//  - read / read_range: GetObject (ranged), ObjectNotFound for a missing key, TruncatedData when
//    the object is shorter than the asked range; a 0-length range returns an empty buffer
//    without any request;
//  - read_ranges: neighbouring or overlapping ranges of one object are coalesced into one GET
//    (then sliced), and up to `concurrency` GETs run at once; results in request order;
//  - write: PutObject (atomic in S3); remove: DeleteObject.
// Configuration comes from the environment by default (net/aws_config.hpp).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/s3_client.hpp>
#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/url_openers.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

struct S3StoreOptions {
    std::optional<net::AwsConfig> aws;     // nullopt: net::AwsConfig::from_environment()
    net::S3ClientOptions client;           // HTTP timeouts, retries, list page size
    std::size_t concurrency = 32;          // ranged GETs in flight in read_ranges
    std::uint64_t coalesce_gap = 0;        // ranges of one object at most this far apart share a GET
    std::uint64_t max_coalesced_bytes = 64u << 20;  // but a shared GET spans at most this much
};

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
        client_ = std::make_shared<net::S3Client>(opts_.aws ? *opts_.aws : net::AwsConfig::from_environment(), opts_.client);
        if (opts_.concurrency == 0) opts_.concurrency = 1;
    }
    // Shares an existing client (connection pool, credentials) between stores.
    S3Store(std::string_view url, std::shared_ptr<net::S3Client> client, S3StoreOptions options = {})
        : loc_(parse_s3_url(url)), opts_(std::move(options)), client_(std::move(client)) {
        if (!client_) throw UsageError("S3Store: null S3 client for " + std::string(url));
        if (opts_.concurrency == 0) opts_.concurrency = 1;
    }

    const std::string& bucket() const noexcept { return loc_.bucket; }
    const std::string& prefix() const noexcept { return loc_.prefix; }
    net::S3Client& client() const noexcept { return *client_; }

    std::string describe(std::string_view key) const { return net::s3_url(loc_.bucket, full_key(key)); }

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        net::ListObjectsRequest r;
        r.bucket = loc_.bucket;
        r.prefix = full_key(prefix);
        if (!start_after.empty()) r.start_after = full_key(start_after);
        std::vector<std::string> keys;
        for (auto& o : client_->list_objects(std::move(r)).objects) {
            if (!o.key.starts_with(loc_.prefix)) continue;
            std::string rel = o.key.substr(loc_.prefix.size());
            // The server filtered already; filter again in byte order (some servers order differently).
            if (!rel.starts_with(prefix) || (!start_after.empty() && std::string_view(rel) <= start_after)) continue;
            keys.push_back(std::move(rel));
        }
        std::sort(keys.begin(), keys.end());
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        return keys;
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

    std::vector<ByteBuffer> read_ranges(std::span<const RangeRequest> requests) const {
        std::vector<ByteBuffer> out(requests.size());
        std::vector<Fetch> fetches = plan(requests);
        parallel_for(fetches.size(), [&](std::size_t i) {
            const Fetch& f = fetches[i];
            const RangeRequest& first = requests[f.members.front()];
            net::GetObjectResult r = get_range(first.key, f.begin, f.end - f.begin);
            const std::uint64_t have_end = f.begin + r.data.size();
            for (std::size_t m : f.members) {
                const RangeRequest& q = requests[m];
                if (q.offset + q.length > have_end) throw short_object(q.key, q.offset, q.length, r.object_size);
            }
            if (f.members.size() == 1 && requests[f.members[0]].offset == f.begin && r.data.size() == f.end - f.begin) {
                out[f.members[0]] = std::move(r.data);
                return;
            }
            for (std::size_t m : f.members) {
                const RangeRequest& q = requests[m];
                out[m] = ByteBuffer::copy_of(r.data.bytes().subspan(static_cast<std::size_t>(q.offset - f.begin), static_cast<std::size_t>(q.length)));
            }
        });
        return out;
    }

private:
    // One GET covering [begin, end) of one object for the requests `members`.
    struct Fetch {
        std::uint64_t begin = 0, end = 0;
        std::vector<std::size_t> members;
    };

    std::string full_key(std::string_view key) const {
        std::string k = loc_.prefix;
        for (char c : key)
            if (c != '/' || k.empty() || k.back() != '/') k += c;
        return k;
    }

    [[noreturn]] void rethrow_not_found(const S3Error& e, std::string_view key) const {
        if (e.code == "NoSuchKey" || (e.http_status == 404 && e.code.empty()))
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
        } catch (const S3Error& e) {
            if (e.http_status == 416 || e.code == "InvalidRange")
                throw TruncatedData(describe(key) + ": wanted " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                                    " but the object ends before that offset (" + e.what() + ")");
            rethrow_not_found(e, key);
        }
    }

    // Groups the non-empty requests by object and merges overlapping or near ranges.
    std::vector<Fetch> plan(std::span<const RangeRequest> requests) const {
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < requests.size(); ++i)
            if (requests[i].length > 0) {
                if (requests[i].offset > UINT64_MAX - requests[i].length)
                    throw UsageError("read_ranges: range overflows for " + describe(requests[i].key));
                order.push_back(i);
            }
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const auto &x = requests[a], &y = requests[b];
            if (x.key != y.key) return x.key < y.key;
            return x.offset < y.offset;
        });
        std::vector<Fetch> fetches;
        for (std::size_t i : order) {
            const RangeRequest& q = requests[i];
            const std::uint64_t end = q.offset + q.length;
            if (!fetches.empty()) {
                Fetch& f = fetches.back();
                const RangeRequest& head = requests[f.members.front()];
                const bool near = q.offset <= f.end || q.offset - f.end <= opts_.coalesce_gap;
                if (head.key == q.key && near && std::max(f.end, end) - f.begin <= opts_.max_coalesced_bytes) {
                    f.end = std::max(f.end, end);
                    f.members.push_back(i);
                    continue;
                }
            }
            fetches.push_back(Fetch{q.offset, end, {i}});
        }
        return fetches;
    }

    // Runs fn(0..n-1) on up to `concurrency` threads (the caller's included); rethrows the first
    // exception after every thread has stopped.
    template <class F>
    void parallel_for(std::size_t n, F&& fn) const {
        if (n == 0) return;
        const std::size_t workers = std::min(n, opts_.concurrency);
        if (workers == 1) {
            for (std::size_t i = 0; i < n; ++i) fn(i);
            return;
        }
        std::atomic<std::size_t> next{0};
        std::atomic<bool> failed{false};
        std::exception_ptr error;
        std::mutex error_mu;
        auto work = [&] {
            while (!failed.load(std::memory_order_relaxed)) {
                std::size_t i = next.fetch_add(1);
                if (i >= n) return;
                try {
                    fn(i);
                } catch (...) {
                    std::lock_guard lock(error_mu);
                    if (!error) error = std::current_exception();
                    failed = true;
                }
            }
        };
        std::vector<std::thread> threads;
        threads.reserve(workers - 1);
        try {
            for (std::size_t t = 1; t < workers; ++t) threads.emplace_back(work);
        } catch (...) {
            // Could not start a thread: the threads that did start and this one do the work.
        }
        work();
        for (auto& t : threads) t.join();
        if (error) std::rethrow_exception(error);
    }

    S3Location loc_;
    S3StoreOptions opts_;
    std::shared_ptr<net::S3Client> client_;
};

static_assert(Store<S3Store>);
static_assert(WritableStore<S3Store>);
static_assert(BatchReadStore<S3Store>);

inline AnyStore open_s3_url(std::string_view url) { return AnyStore(S3Store(std::string(url))); }
// A program that includes this header opens "s3://" paths with S3Store (open_store(), create_trial,
// Hook). Each translation unit sets the same opener; internal linkage keeps the initialiser alive.
[[maybe_unused]] static const bool s3_urls_enabled = (s3_url_opener() = &open_s3_url, true);

}  // namespace smdebug
