#pragma once
// The storage contract. A store is rooted at a trial root (a folder, or s3://bucket/prefix) and
// addresses objects by keys relative to that root, with '/' separators ("index/000000000/...json").
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/storage/byte_buffer.hpp>

namespace smdebug {

// One byte range of one object, for batched reads.
struct RangeRequest {
    std::string key;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

// A readable store:
//  - list(prefix, start_after): every key that begins with `prefix` (plain string prefix, as in
//    S3) and sorts strictly after `start_after` (when non-empty), in lexical byte order;
//  - read(key): the whole object; read_range(key, offset, length): exactly those bytes, or a
//    TruncatedData error when the object is shorter; both throw ObjectNotFound for a missing key;
//  - exists(key); describe(key): the full path or URL, for messages and logs (never secrets).
// Every member is const and a store is safe to share between threads (docs/thread-safety.md).
template <class S>
concept Store = requires(const S& s, std::string_view key, std::uint64_t n) {
    { s.list(key, key) } -> std::same_as<std::vector<std::string>>;
    { s.read(key) } -> std::same_as<ByteBuffer>;
    { s.read_range(key, n, n) } -> std::same_as<ByteBuffer>;
    { s.exists(key) } -> std::same_as<bool>;
    { s.describe(key) } -> std::convertible_to<std::string>;
};

// A store that can also be written to (by the Hook). write() makes the object appear atomically
// and durably: a reader sees either nothing or the whole object.
template <class S>
concept WritableStore = Store<S> && requires(const S& s, std::string_view key, std::span<const std::byte> bytes) {
    { s.write(key, bytes) } -> std::same_as<void>;
    { s.remove(key) } -> std::same_as<void>;
};

// Stores that can serve many ranges at once (S3: parallel ranged GETs) advertise read_ranges.
template <class S>
concept BatchReadStore = Store<S> && requires(const S& s, std::span<const RangeRequest> reqs) {
    { s.read_ranges(reqs) } -> std::same_as<std::vector<ByteBuffer>>;
};

// Reads every request, in parallel where the store can, results in request order.
template <Store S>
std::vector<ByteBuffer> read_ranges(const S& store, std::span<const RangeRequest> requests) {
    if constexpr (BatchReadStore<S>) {
        return store.read_ranges(requests);
    } else {
        std::vector<ByteBuffer> out;
        out.reserve(requests.size());
        for (const auto& r : requests) out.push_back(store.read_range(r.key, r.offset, r.length));
        return out;
    }
}

}  // namespace smdebug
