#pragma once
// S3Store's definitions (storage/s3_store.hpp): the only part of the store that sees the S3 client.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include <smdebug/core/errors.hpp>
#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/aws_credentials.hpp>
#include <smdebug/net/s3_client.hpp>
#include <smdebug/storage/detail/builtin_openers.hpp>
#include <smdebug/storage/detail/range_plan.hpp>
#include <smdebug/storage/s3_store.hpp>
#if !SMDEBUG_HEADER_ONLY && !defined(SMDEBUG_SOURCE)
#error "this file defines functions compiled once by <smdebug/src.hpp>: in separate mode include it only there"
#endif

namespace smdebug {

namespace net::detail {

SMDEBUG_INLINE std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text) {
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

namespace detail {

// One PUT of a sequence: its key, its body and the body's SHA-256, hashed before the uploads start.
struct HashedPut {
    std::string key;
    std::span<const std::byte> bytes;
    std::string sha256;
};

// One sequence of write_sequences: its PUTs one after another (the arguments are copied into the
// coroutine's frame).
SMDEBUG_INLINE boost::asio::awaitable<void> put_in_order(net::S3Client& client, std::string bucket, std::vector<HashedPut> writes) {
    for (auto& w : writes)
        (void)co_await client.async_put_object(bucket, std::move(w.key), w.bytes, "application/octet-stream", std::move(w.sha256));
}

}  // namespace detail

SMDEBUG_INLINE S3Location parse_s3_url(std::string_view url) {
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

SMDEBUG_INLINE S3Store::S3Store(std::string_view url, S3StoreOptions options) : loc_(parse_s3_url(url)), opts_(std::move(options)) {
    if (opts_.max_concurrency) opts_.client.max_concurrency = opts_.max_concurrency;
    client_ = std::make_shared<net::S3Client>(opts_.aws ? *opts_.aws : net::AwsConfig::from_environment(), opts_.client);
}

SMDEBUG_INLINE S3Store::S3Store(std::string_view url, std::shared_ptr<net::S3Client> client, S3StoreOptions options)
    : loc_(parse_s3_url(url)), opts_(std::move(options)), client_(std::move(client)) {
    if (!client_) throw UsageError("S3Store: null S3 client for " + std::string(url));
}

SMDEBUG_INLINE std::optional<RequestCounts> S3Store::request_counts() const noexcept {
    const net::S3RequestCounts c = client_->request_counts();
    return RequestCounts{c.list, c.get, c.head, c.bytes_received};
}

SMDEBUG_INLINE std::string S3Store::describe(std::string_view key) const { return net::s3_url(loc_.bucket, full_key(key)); }

SMDEBUG_INLINE std::vector<std::string> S3Store::list(std::string_view prefix, std::string_view start_after) const {
    std::vector<std::string> keys;
    for (auto& o : list_objects(prefix, start_after, 0)) keys.push_back(std::move(o.key));
    return keys;
}

SMDEBUG_INLINE std::vector<std::string> S3Store::list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const {
    if (n == 0) return {};
    std::vector<std::string> keys;
    for (auto& o : list_objects(prefix, start_after, n)) keys.push_back(std::move(o.key));
    if (keys.size() > n) keys.resize(n);
    return keys;
}

SMDEBUG_INLINE std::optional<std::vector<ObjectInfo>> S3Store::list_info(std::string_view prefix, std::string_view start_after,
                                                                         std::size_t max_keys) const {
    return list_objects(prefix, start_after, max_keys);
}

SMDEBUG_INLINE bool S3Store::exists(std::string_view key) const { return client_->head_object(loc_.bucket, full_key(key)).has_value(); }

SMDEBUG_INLINE ByteBuffer S3Store::read(std::string_view key) const {
    try {
        return client_->get_object(loc_.bucket, full_key(key)).data;
    } catch (const S3Error& e) {
        rethrow_not_found(e, key);
    }
}

SMDEBUG_INLINE ByteBuffer S3Store::read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
    if (length == 0) return ByteBuffer();
    net::GetObjectResult r = get_range(key, offset, length);
    if (r.data.size() < length) throw short_object(key, offset, length, r.object_size);
    return std::move(r.data);
}

SMDEBUG_INLINE void S3Store::write(std::string_view key, std::span<const std::byte> bytes) const {
    client_->put_object(loc_.bucket, full_key(key), bytes);
}

SMDEBUG_INLINE void S3Store::remove(std::string_view key) const { client_->delete_object(loc_.bucket, full_key(key)); }

SMDEBUG_INLINE std::vector<std::exception_ptr> S3Store::write_sequences(std::span<const std::vector<WriteRequest>> sequences) const {
    // On this thread, before the uploads enter the client's I/O thread: the credentials (a failure
    // fails every sequence) and each body's SHA-256.
    std::vector<std::exception_ptr> errors(sequences.size());
    try {
        client_->resolve_credentials();
    } catch (...) {
        for (auto& e : errors) e = std::current_exception();
        return errors;
    }
    std::vector<std::future<void>> running;
    running.reserve(sequences.size());
    for (const auto& seq : sequences) {
        std::vector<detail::HashedPut> writes;
        writes.reserve(seq.size());
        for (const auto& w : seq) writes.push_back({full_key(w.key), w.bytes, net::sha256_hex(w.bytes)});
        running.push_back(boost::asio::co_spawn(client_->http().executor(), detail::put_in_order(*client_, loc_.bucket, std::move(writes)),
                                                boost::asio::use_future));
    }
    for (std::size_t i = 0; i < running.size(); ++i) {
        try {
            running[i].get();
        } catch (...) {
            errors[i] = std::current_exception();
        }
    }
    return errors;
}

SMDEBUG_INLINE void S3Store::read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const {
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

SMDEBUG_INLINE std::vector<std::optional<ByteBuffer>> S3Store::read_objects(std::span<const std::string> keys) const {
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

SMDEBUG_INLINE std::optional<std::chrono::system_clock::time_point> S3Store::last_modified(std::string_view key) const {
    const auto info = client_->head_object(loc_.bucket, full_key(key));
    if (!info) return std::nullopt;
    return net::detail::parse_http_date(info->last_modified);
}

SMDEBUG_INLINE std::vector<ObjectInfo> S3Store::list_objects(std::string_view prefix, std::string_view start_after, std::size_t max_keys) const {
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

SMDEBUG_INLINE std::string S3Store::full_key(std::string_view key) const {
    std::string k = loc_.prefix;
    for (char c : key)
        if (c != '/' || k.empty() || k.back() != '/') k += c;
    return k;
}

SMDEBUG_INLINE bool S3Store::is_not_found(const S3Error& e) noexcept { return e.code == "NoSuchKey" || (e.http_status == 404 && e.code.empty()); }

SMDEBUG_INLINE void S3Store::rethrow_not_found(const S3Error& e, std::string_view key) const {
    if (is_not_found(e)) throw ObjectNotFound("no such object: " + describe(key) + " (" + e.what() + ")");
    throw e;
}

SMDEBUG_INLINE TruncatedData S3Store::short_object(std::string_view key, std::uint64_t offset, std::uint64_t length, std::uint64_t size) const {
    return TruncatedData(describe(key) + ": wanted " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                         " but the object has " + std::to_string(size) + " bytes");
}

SMDEBUG_INLINE net::GetObjectResult S3Store::get_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
    try {
        return client_->get_object(loc_.bucket, full_key(key), net::ByteRange{offset, length});
    } catch (const S3Error&) {
        rethrow_range_error(std::current_exception(), key, offset, length);
    }
}

SMDEBUG_INLINE void S3Store::rethrow_range_error(const std::exception_ptr& error, std::string_view key, std::uint64_t offset,
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

SMDEBUG_INLINE AnyStore open_s3_url(std::string_view url) { return AnyStore(S3Store(std::string(url))); }

SMDEBUG_INLINE AnyStore open_s3_url_with(std::string_view url, const StoreOpenOptions& options) {
    S3StoreOptions o;
    o.max_concurrency = options.max_concurrency.value_or(0);
    if (options.connect_timeout || options.read_timeout) {
        o.aws = net::AwsConfig::from_environment();
        if (options.connect_timeout) o.aws->connect_timeout = *options.connect_timeout;
        if (options.read_timeout) o.aws->read_timeout = *options.read_timeout;
    }
    return AnyStore(S3Store(std::string(url), std::move(o)));
}

// The definitions open_store() finds at link time. `used`: emitted by every translation unit that
// includes this file, whether it calls them or not.
[[gnu::used]] SMDEBUG_INLINE AnyStore detail::open_builtin_s3_url(std::string_view url) { return open_s3_url(url); }
[[gnu::used]] SMDEBUG_INLINE AnyStore detail::open_builtin_s3_url_with(std::string_view url, const StoreOpenOptions& options) {
    return open_s3_url_with(url, options);
}

}  // namespace smdebug
