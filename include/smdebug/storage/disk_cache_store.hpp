#pragma once
// DiskCacheStore<S>: a Store that keeps the objects it reads from a remote store S in a folder on
// local disk, shared by every process on the host that uses the same folder.
//
// What is cached: whole objects for which `cacheable(key)` holds (the trial layer passes the
// trial's immutable files: index, event and collections files) and whose ETag and size are known
// from a listing — never a listing itself, and never an existence check (exists() always asks S).
// An entry is keyed by the object's URL (bucket and key), ETag and size, so a rewritten object is
// a new entry and never answered from the old one. The ETag and size come from:
//  - the listings the reader makes anyway (list(): the index and collections folders), and
//  - for a key read before any listing showed it (event files), one listing page that starts at
//    that key (at most 1,000 keys), which also covers the keys after it: reading every event file
//    of a trial costs one LIST per 1,000 files, not a HEAD per file.
// A read of an uncached object fetches it whole (one GET, then written to the cache) when it is at
// most max_object_bytes; a ranged read of a cached object is served from the entry (pread).
// Objects larger than that, keys that are not cacheable and keys no listing shows are read
// from S directly.
//
// Bounded: after a write brings the entries past max_bytes, the least recently used entries are
// removed until they take at most 90 % of it. Safe with several processes and threads at once:
// entries appear by atomic rename; a corrupt or truncated entry (length, identity or CRC-32C
// wrong; the CRC is checked on the first use of an entry by each cache object) is removed and
// the object fetched again, never returned. A cache that cannot be written (full disk) only makes
// reads uncached.
//
// S must be able to list with ETags and sizes (ObjectInfoListingStore, as S3Store and AnyStore);
// otherwise nothing is cached. Writes (write, remove, write_sequences) go to S, and the cache
// forgets what it knew of the keys written, so that their next read lists them again. The store
// has list_first, exists, describe, read_ranges and read_objects whatever S is (they serve what
// the folder holds), and each other capability of storage/store.hpp exactly when S has it
// (tests/unit/test_store_wrappers.cpp checks each).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/storage/detail/cache_file.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

inline constexpr std::uint64_t default_cache_max_bytes = std::uint64_t{1} << 30;  // 1 GiB

struct DiskCacheOptions {
    std::filesystem::path dir;                            // created when missing
    std::uint64_t max_bytes = default_cache_max_bytes;    // the entries' total, LRU-evicted past it
    std::uint64_t max_object_bytes = std::uint64_t{64} << 20;  // larger objects are not cached (also at most max_bytes / 4)
    std::function<bool(std::string_view key)> cacheable;  // empty: every key
    int listing_page = 1000;                              // keys of the listing made for an unlisted key
};

// What a cache object did (for tests and diagnostics).
struct DiskCacheStats {
    std::uint64_t hits = 0;      // reads answered from an entry
    std::uint64_t stored = 0;    // entries written
    std::uint64_t corrupt = 0;   // entries found corrupt, removed and fetched again
    std::uint64_t evicted = 0;   // entries removed to stay under max_bytes
};

template <Store S>
class DiskCacheStore {
public:
    DiskCacheStore(S store, DiskCacheOptions options) : store_(std::move(store)), state_(std::make_shared<State>()) {
        std::error_code ec;
        std::filesystem::create_directories(options.dir, ec);
        if (ec || !std::filesystem::is_directory(options.dir, ec))
            throw StorageError("cannot use the cache folder " + options.dir.string() + ": " +
                               (ec ? ec.message() : std::string("not a folder")));
        options.max_object_bytes = std::min(options.max_object_bytes, options.max_bytes / 4);
        state_->opts = std::move(options);
    }

    const S& inner() const noexcept { return store_; }
    const DiskCacheOptions& options() const noexcept { return state_->opts; }
    DiskCacheStats stats() const noexcept {
        return {state_->hits.load(), state_->stored.load(), state_->corrupt.load(), state_->evicted.load()};
    }

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        if constexpr (ObjectInfoListingStore<S>) {
            if (auto infos = store_.list_info(prefix, start_after, 0)) {
                remember(*infos);
                std::vector<std::string> keys;
                keys.reserve(infos->size());
                for (auto& i : *infos) keys.push_back(std::move(i.key));
                return keys;
            }
        }
        return store_.list(prefix, start_after);
    }
    // FirstKeysStore: the first n keys (their ETags and sizes remembered, as list()'s).
    std::vector<std::string> list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const {
        if constexpr (ObjectInfoListingStore<S>) {
            if (n == 0) return {};
            if (auto infos = store_.list_info(prefix, start_after, n)) {
                if (infos->size() > n) infos->resize(n);
                remember(*infos);
                std::vector<std::string> keys;
                keys.reserve(infos->size());
                for (auto& i : *infos) keys.push_back(std::move(i.key));
                return keys;
            }
        }
        return smdebug::list_first(store_, prefix, start_after, n);
    }

    ByteBuffer read(std::string_view key) const {
        const auto meta = cached_meta(key);
        if (!meta) return store_.read(key);
        if (auto hit = lookup(key, *meta, 0, meta->size)) return std::move(*hit);
        ByteBuffer whole = store_.read(key);
        keep(key, *meta, whole);
        return whole;
    }

    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        const auto meta = length == 0 ? std::nullopt : cached_meta(key);
        if (!meta || offset > meta->size || length > meta->size - offset) return store_.read_range(key, offset, length);
        if (auto hit = lookup(key, *meta, offset, length)) return std::move(*hit);
        ByteBuffer whole = store_.read(key);
        if (whole.size() != meta->size) return store_.read_range(key, offset, length);  // changed since listed
        keep(key, *meta, whole);
        return whole.slice(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
    }

    // Cached ranges from their entries (one open per object), uncached objects fetched whole
    // together (S's read_objects), the rest through S's read_ranges.
    void read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const {
        std::map<std::string_view, std::vector<std::size_t>> by_key;
        std::vector<std::size_t> direct;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (requests[i].length == 0) sink(i, ByteBuffer());
            else by_key[requests[i].key].push_back(i);
        }
        std::vector<std::string> fetch;
        std::vector<ObjectInfo> fetch_meta;
        for (const auto& [key, members] : by_key) {
            const auto meta = cached_meta(key);
            const bool fits = meta && std::all_of(members.begin(), members.end(), [&](std::size_t m) {
                return requests[m].offset <= meta->size && requests[m].length <= meta->size - requests[m].offset;
            });
            if (!fits) {
                direct.insert(direct.end(), members.begin(), members.end());
            } else if (!serve_from_entry(key, *meta, requests, members, sink)) {
                fetch.emplace_back(key);
                fetch_meta.push_back(*meta);
            }
        }
        if (!fetch.empty()) {
            auto objects = smdebug::read_objects(store_, fetch);
            for (std::size_t f = 0; f < fetch.size(); ++f) {
                auto& members = by_key[fetch[f]];
                if (!objects[f] || objects[f]->size() != fetch_meta[f].size) {  // gone or changed: let S say what is wrong
                    direct.insert(direct.end(), members.begin(), members.end());
                    continue;
                }
                keep(fetch[f], fetch_meta[f], *objects[f]);
                for (std::size_t m : members)
                    sink(m, objects[f]->slice(static_cast<std::size_t>(requests[m].offset), static_cast<std::size_t>(requests[m].length)));
            }
        }
        if (direct.empty()) return;
        std::vector<RangeRequest> rest;
        rest.reserve(direct.size());
        for (std::size_t i : direct) rest.push_back(requests[i]);
        smdebug::read_ranges(store_, rest, [&](std::size_t i, ByteBuffer&& b) { sink(direct[i], std::move(b)); });
    }
    std::vector<ByteBuffer> read_ranges(std::span<const RangeRequest> requests) const { return smdebug::read_ranges(*this, requests); }

    std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string> keys) const {
        std::vector<std::optional<ByteBuffer>> out(keys.size());
        std::vector<std::size_t> missing;
        std::vector<std::optional<ObjectInfo>> metas(keys.size());
        for (std::size_t i = 0; i < keys.size(); ++i) {
            metas[i] = cached_meta(keys[i]);
            if (metas[i])
                if (auto hit = lookup(keys[i], *metas[i], 0, metas[i]->size)) {
                    out[i] = std::move(*hit);
                    continue;
                }
            missing.push_back(i);
        }
        if (missing.empty()) return out;
        std::vector<std::string> fetch;
        fetch.reserve(missing.size());
        for (std::size_t i : missing) fetch.push_back(keys[i]);
        auto got = smdebug::read_objects(store_, fetch);
        for (std::size_t f = 0; f < missing.size(); ++f) {
            const std::size_t i = missing[f];
            if (got[f] && metas[i] && got[f]->size() == metas[i]->size) keep(keys[i], *metas[i], *got[f]);
            out[i] = std::move(got[f]);
        }
        return out;
    }

    bool exists(std::string_view key) const { return smdebug::exists(store_, key); }
    std::string describe(std::string_view key) const { return smdebug::describe(store_, key); }

    std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view key) const
        requires TimestampedStore<S>
    {
        return store_.last_modified(key);
    }
    void write(std::string_view key, std::span<const std::byte> bytes) const
        requires WritableStore<S>
    {
        store_.write(key, bytes);
        forget(key);
    }
    void remove(std::string_view key) const
        requires WritableStore<S>
    {
        store_.remove(key);
        forget(key);
    }
    std::vector<std::exception_ptr> write_sequences(std::span<const std::vector<WriteRequest>> sequences) const
        requires SequencedWriteStore<S>
    {
        auto errors = store_.write_sequences(sequences);
        for (const auto& sequence : sequences)
            for (const auto& w : sequence) forget(w.key);
        return errors;
    }
    bool latency_bound() const
        requires LatencyBoundStore<S>
    {
        return store_.latency_bound();
    }
    std::optional<RequestCounts> request_counts() const
        requires RequestCountingStore<S>
    {
        return store_.request_counts();
    }
    std::optional<std::vector<ObjectInfo>> list_info(std::string_view prefix, std::string_view start_after, std::size_t max_keys) const
        requires ObjectInfoListingStore<S>
    {
        auto infos = store_.list_info(prefix, start_after, max_keys);
        if (infos) remember(*infos);
        return infos;
    }
    std::optional<std::filesystem::path> local_root() const
        requires LocalRootStore<S>
    {
        return store_.local_root();
    }

private:
    struct State {
        DiskCacheOptions opts;
        std::mutex mutex;
        std::unordered_map<std::string, ObjectInfo> meta;  // listed cacheable keys: size and ETag
        std::unordered_set<std::string> used;              // entries this object checked and touched
        std::optional<std::uint64_t> bytes;                // the entries' total as last counted, plus writes since
        std::atomic<std::uint64_t> hits{0}, stored{0}, corrupt{0}, evicted{0};
    };

    bool is_cacheable(std::string_view key) const { return !state_->opts.cacheable || state_->opts.cacheable(key); }

    // After a write of `key`: its listed size and ETag no longer name what S holds.
    void forget(std::string_view key) const {
        std::lock_guard lock(state_->mutex);
        state_->meta.erase(std::string(key));
    }

    void remember(const std::vector<ObjectInfo>& infos) const {
        std::lock_guard lock(state_->mutex);
        for (const auto& i : infos)
            if (!i.etag.empty() && is_cacheable(i.key)) state_->meta.insert_or_assign(i.key, i);
    }

    // The size and ETag of a cacheable key small enough to cache; lists from the key on when no
    // listing showed it yet.
    std::optional<ObjectInfo> cached_meta(std::string_view key) const {
        if (key.empty() || !is_cacheable(key)) return std::nullopt;
        auto find = [&]() -> std::optional<ObjectInfo> {
            std::lock_guard lock(state_->mutex);
            const auto it = state_->meta.find(std::string(key));
            if (it == state_->meta.end()) return std::nullopt;
            return it->second;
        };
        auto meta = find();
        if constexpr (ObjectInfoListingStore<S>) {
            if (!meta) {
                const auto slash = key.find('/');
                const std::string_view folder = slash == std::string_view::npos ? std::string_view() : key.substr(0, slash + 1);
                if (auto infos = store_.list_info(folder, key.substr(0, key.size() - 1), static_cast<std::size_t>(state_->opts.listing_page))) {
                    remember(*infos);
                    meta = find();
                }
            }
        }
        if (!meta || meta->size > state_->opts.max_object_bytes) return std::nullopt;
        return meta;
    }

    std::string identity(std::string_view key, const ObjectInfo& m) const {
        return describe(key) + "\n" + m.etag + "\n" + std::to_string(m.size);
    }

    // The bytes [offset, offset + length) of the cached object, or nullopt (absent or corrupt).
    std::optional<ByteBuffer> lookup(std::string_view key, const ObjectInfo& m, std::uint64_t offset, std::uint64_t length) const {
        const std::string id = identity(key, m);
        const auto file = state_->opts.dir / detail::cache_entry_name(id);
        bool corrupt = false;
        auto entry = detail::CacheEntry::open(file, id, m.size, corrupt);
        if (corrupt) ++state_->corrupt;
        if (!entry) return std::nullopt;
        std::optional<ByteBuffer> out;
        if (first_use(file)) {
            out = entry->read_verified();
            if (out && (offset != 0 || length != m.size)) out = out->slice(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
        } else {
            out = entry->read(offset, length);
        }
        if (!out) {
            detail::CacheEntry::remove_file(file);
            forget_use(file);
            ++state_->corrupt;
            return std::nullopt;
        }
        ++state_->hits;
        return out;
    }

    // Hands every member request of `key` to the sink from its entry; false (nothing handed) when
    // the entry is absent or corrupt.
    bool serve_from_entry(std::string_view key, const ObjectInfo& m, std::span<const RangeRequest> requests,
                          const std::vector<std::size_t>& members, const RangeSink& sink) const {
        if (members.size() == 1) {
            const auto& q = requests[members[0]];
            auto hit = lookup(key, m, q.offset, q.length);
            if (hit) sink(members[0], std::move(*hit));
            return hit.has_value();
        }
        auto whole = lookup(key, m, 0, m.size);
        if (!whole) return false;
        for (std::size_t i : members)
            sink(i, whole->slice(static_cast<std::size_t>(requests[i].offset), static_cast<std::size_t>(requests[i].length)));
        return true;
    }

    // True the first time this cache object uses the entry (then checked whole and touched).
    bool first_use(const std::filesystem::path& file) const {
        {
            std::lock_guard lock(state_->mutex);
            if (!state_->used.insert(file.string()).second) return false;
        }
        detail::touch_cache_entry(file);
        return true;
    }
    void forget_use(const std::filesystem::path& file) const {
        std::lock_guard lock(state_->mutex);
        state_->used.erase(file.string());
    }

    // Writes the object to the cache, then evicts past max_bytes.
    void keep(std::string_view key, const ObjectInfo& m, const ByteBuffer& bytes) const {
        if (bytes.size() != m.size) return;
        const std::string id = identity(key, m);
        const auto file = state_->opts.dir / detail::cache_entry_name(id);
        const std::uint64_t written = detail::write_cache_entry(file, id, bytes.bytes());
        if (written == 0) return;
        ++state_->stored;
        std::uint64_t target = state_->opts.max_bytes;  // the first write counts what the folder holds
        {
            std::lock_guard lock(state_->mutex);
            state_->used.insert(file.string());  // written from bytes in hand: no need to check them again
            if (state_->bytes) {
                *state_->bytes += written;
                if (*state_->bytes <= state_->opts.max_bytes) return;
                target = state_->opts.max_bytes / 10 * 9;
            }
        }
        std::uint64_t evicted = 0;
        const std::uint64_t left = detail::evict_cache_entries(state_->opts.dir, target, &evicted);
        state_->evicted += evicted;
        std::lock_guard lock(state_->mutex);
        state_->bytes = left;
    }

    S store_;
    std::shared_ptr<State> state_;
};

}  // namespace smdebug
