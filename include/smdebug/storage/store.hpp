#pragma once
// The storage contract. A store is rooted at a trial root (a folder, or s3://bucket/prefix) and
// addresses objects by keys relative to that root, with '/' separators ("index/000000000/...json").
//
// A store implements three operations (Store), two more when it can be written (WritableStore).
// Everything else a reader or the Hook asks of a store is a capability: an optional member a store
// adds when it can do better than the default, and a free function of the same name that uses the
// member when there is one and the default otherwise. Library code calls the free functions
// (`smdebug::exists(store, key)`), never the optional members. tests/unit/test_toy_store.cpp is a
// whole store of the three operations, read by a Trial.
#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/errors.hpp>

namespace smdebug {

// A readable store:
//  - list(prefix, start_after): every key that begins with `prefix` (plain string prefix, as in
//    S3) and sorts strictly after `start_after` (when non-empty), in lexical byte order;
//  - read(key): the whole object; read_range(key, offset, length): exactly those bytes, or a
//    TruncatedData error when the object is shorter; both throw ObjectNotFound for a missing key.
// Every member is const and a store is safe to share between threads (docs/thread-safety.md).
template <class S>
concept Store = requires(const S& s, std::string_view key, std::uint64_t n) {
    { s.list(key, key) } -> std::same_as<std::vector<std::string>>;
    { s.read(key) } -> std::same_as<ByteBuffer>;
    { s.read_range(key, n, n) } -> std::same_as<ByteBuffer>;
};

// A store that can also be written to (by the Hook). write() makes the object appear atomically
// and durably: a reader sees either nothing or the whole object.
template <class S>
concept WritableStore = Store<S> && requires(const S& s, std::string_view key, std::span<const std::byte> bytes) {
    { s.write(key, bytes) } -> std::same_as<void>;
    { s.remove(key) } -> std::same_as<void>;
};

// ---- capabilities: each an optional member, and the free function the library calls -------------

// describe(key): the full path or URL of `key`, for messages and logs (never secrets).
// Default: the key.
template <Store S>
std::string describe(const S& store, std::string_view key) {
    if constexpr (requires { { store.describe(key) } -> std::convertible_to<std::string>; }) return store.describe(key);
    else return std::string(key);
}

// list_first(prefix, start_after, n): at most n keys, the first that list() would return (one
// ListObjectsV2 page of max-keys n on S3). Readers use it to search a trial's index by step
// without listing all of it. Default: the whole listing, cut.
template <class S>
concept FirstKeysStore = Store<S> && requires(const S& s, std::string_view key, std::size_t n) {
    { s.list_first(key, key, n) } -> std::same_as<std::vector<std::string>>;
};

template <Store S>
std::vector<std::string> list_first(const S& store, std::string_view prefix, std::string_view start_after, std::size_t n) {
    if constexpr (FirstKeysStore<S>) {
        return store.list_first(prefix, start_after, n);
    } else {
        auto keys = store.list(prefix, start_after);
        if (keys.size() > n) keys.resize(n);
        return keys;
    }
}

// exists(key). Default: the first key listed at `key` is `key` itself (a key sorts before every
// longer key it prefixes). S3 asks with a HEAD, a folder with stat().
template <Store S>
bool exists(const S& store, std::string_view key) {
    if constexpr (requires { { store.exists(key) } -> std::same_as<bool>; }) {
        return store.exists(key);
    } else {
        const auto first = list_first(store, key, {}, 1);
        return !first.empty() && first.front() == key;
    }
}

// One byte range of one object, for batched reads.
struct RangeRequest {
    std::string key;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

// Receives the bytes of request `index` of a batch read, on the thread that read them, as soon as
// they are in memory (so that they are decoded while still in cache).
using RangeSink = std::function<void(std::size_t index, ByteBuffer&& bytes)>;

// read_ranges(requests, sink): many ranges at once (files on several threads, parallel ranged GETs
// on S3); sink(i, bytes) once for every request i, from any of the reading threads (calls for
// different requests may run at once). The first failure is thrown after the reads stop (some
// requests may then not have reached the sink). Default: read_range, one after another.
template <class S>
concept BatchReadStore = Store<S> && requires(const S& s, std::span<const RangeRequest> reqs, const RangeSink& sink) {
    { s.read_ranges(reqs, sink) } -> std::same_as<void>;
};

template <Store S>
void read_ranges(const S& store, std::span<const RangeRequest> requests, const RangeSink& sink) {
    if constexpr (BatchReadStore<S>) {
        store.read_ranges(requests, sink);
    } else {
        for (std::size_t i = 0; i < requests.size(); ++i)
            sink(i, store.read_range(requests[i].key, requests[i].offset, requests[i].length));
    }
}

// The same, results in request order.
template <Store S>
std::vector<ByteBuffer> read_ranges(const S& store, std::span<const RangeRequest> requests) {
    std::vector<ByteBuffer> out(requests.size());
    read_ranges(store, requests, [&](std::size_t i, ByteBuffer&& b) { out[i] = std::move(b); });
    return out;
}

// read_objects(keys): many whole objects at once (in parallel); one buffer per key, in key order,
// nullopt for a key that does not exist. Default: read, one after another.
template <class S>
concept BatchObjectStore = Store<S> && requires(const S& s, std::span<const std::string> keys) {
    { s.read_objects(keys) } -> std::same_as<std::vector<std::optional<ByteBuffer>>>;
};

template <Store S>
std::vector<std::optional<ByteBuffer>> read_objects(const S& store, std::span<const std::string> keys) {
    if constexpr (BatchObjectStore<S>) {
        return store.read_objects(keys);
    } else {
        std::vector<std::optional<ByteBuffer>> out;
        out.reserve(keys.size());
        for (const auto& k : keys) {
            try {
                out.emplace_back(store.read(k));
            } catch (const ObjectNotFound&) {
                out.emplace_back(std::nullopt);
            }
        }
        return out;
    }
}

// One object to write (write_sequences).
struct WriteRequest {
    std::string_view key;
    std::span<const std::byte> bytes;
};

// write_sequences(sequences), for stores whose writes cost a round trip each (S3): the writes of
// each sequence in order, each complete before the next begins, and the sequences at the same
// time; one result per sequence, nullptr when all of its writes succeeded (a sequence stops at its
// first failure). Default: one write after another.
template <class S>
concept SequencedWriteStore = WritableStore<S> && requires(const S& s, std::span<const std::vector<WriteRequest>> seqs) {
    { s.write_sequences(seqs) } -> std::same_as<std::vector<std::exception_ptr>>;
};

template <WritableStore S>
std::vector<std::exception_ptr> write_sequences(const S& store, std::span<const std::vector<WriteRequest>> sequences) {
    if constexpr (SequencedWriteStore<S>) {
        return store.write_sequences(sequences);
    } else {
        std::vector<std::exception_ptr> errors(sequences.size());
        for (std::size_t i = 0; i < sequences.size(); ++i) {
            try {
                for (const auto& w : sequences[i]) store.write(w.key, w.bytes);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
        return errors;
    }
}

// last_modified(key): when `key` was last modified (for the end-of-training settle, D21);
// nullopt when it does not exist. Default: nullopt (the store cannot tell).
template <class S>
concept TimestampedStore = Store<S> && requires(const S& s, std::string_view key) {
    { s.last_modified(key) } -> std::same_as<std::optional<std::chrono::system_clock::time_point>>;
};

template <Store S>
std::optional<std::chrono::system_clock::time_point> last_modified(const S& store, std::string_view key) {
    if constexpr (TimestampedStore<S>) return store.last_modified(key);
    else return std::nullopt;
}

// latency_bound(): true for a store whose requests cost far more than the bytes they carry (an
// object store over a network: a 4 KiB and a 200 KiB ranged GET take about as long). Readers then
// fetch a step's event file whole when asked for one of its records, and keep the rest for the
// next query (RecordReader's event-file cache). Default: false.
template <class S>
concept LatencyBoundStore = Store<S> && requires(const S& s) {
    { s.latency_bound() } -> std::convertible_to<bool>;
};

template <Store S>
bool latency_bound(const S& store) {
    if constexpr (LatencyBoundStore<S>) return store.latency_bound();
    else return false;
}

// local_root(): the local folder that holds the store's objects (LocalStore); nullopt when it
// knows only at run time that there is none (an AnyStore around an S3Store). Readers then check
// the folder directly and wait on inotify instead of polling listings. Default: nullopt.
template <class S>
concept LocalRootStore = Store<S> && requires(const S& s) {
    { s.local_root() } -> std::same_as<std::optional<std::filesystem::path>>;
};

template <Store S>
std::optional<std::filesystem::path> local_root_of(const S& store) {
    if constexpr (LocalRootStore<S>) return store.local_root();
    else return std::nullopt;
}

// Requests a store sent, by kind, and the bytes it received (storage/counting_store.hpp).
struct RequestCounts {
    std::uint64_t list = 0;   // listing requests
    std::uint64_t get = 0;    // reads of an object or a range
    std::uint64_t head = 0;   // existence and metadata checks
    std::uint64_t bytes = 0;  // bytes received
    friend bool operator==(const RequestCounts&, const RequestCounts&) = default;
    friend RequestCounts operator-(RequestCounts a, const RequestCounts& b) noexcept {
        return {a.list - b.list, a.get - b.get, a.head - b.head, a.bytes - b.bytes};
    }
};

// request_counts(): the requests the store's transport really sent (S3Store: every HTTP request,
// so a listing of many pages is many LISTs and a coalesced batch read one GET per merged range);
// nullopt: this store cannot tell (an AnyStore around a store without the capability).
template <class S>
concept RequestCountingStore = Store<S> && requires(const S& s) {
    { s.request_counts() } -> std::same_as<std::optional<RequestCounts>>;
};

// One object of a listing with its size and ETag (the version the store holds).
struct ObjectInfo {
    std::string key;
    std::uint64_t size = 0;
    std::string etag;
};

// list_info(prefix, start_after, max_keys): list() with each key's size and ETag, stopping after
// max_keys keys (0: every key); nullopt when this store cannot tell (an AnyStore around a store
// without the capability).
template <class S>
concept ObjectInfoListingStore = Store<S> && requires(const S& s, std::string_view p, std::size_t n) {
    { s.list_info(p, p, n) } -> std::same_as<std::optional<std::vector<ObjectInfo>>>;
};

}  // namespace smdebug
