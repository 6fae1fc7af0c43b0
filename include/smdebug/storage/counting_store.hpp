#pragma once
// CountingStore<S>: a Store that forwards every call to the store it wraps, and counts the
// requests they cost. It has each capability of storage/store.hpp exactly when S has it (batch
// reads and whole objects, writes and write sequences, timestamps, latency bound, local folder,
// listings with ETags; tests/unit/test_store_wrappers.cpp checks each), and always list_first,
// exists, describe (S's own or the default) and request_counts (its counts).
//
// Where requests are counted:
//  - when S is a RequestCountingStore whose transport counts (S3Store, or an AnyStore or
//    DiskCacheStore around one), counts() is the transport's count since this wrapper was made:
//    real HTTP requests, counted in net::S3Client where they are sent — one listing call of many
//    ListObjectsV2 pages is many LISTs, a batched read whose ranges were merged is one GET per
//    merged range, every retry is one more request, bytes are response body bytes;
//  - otherwise (LocalStore) the store's calls: LIST = list() or list_first(); GET = read(),
//    read_range(), one per range of read_ranges() and one per key of read_objects() (each opens
//    or reads one file); HEAD = exists() or last_modified(); bytes = bytes returned.
// Writes (write, remove, write_sequences) are passed on and not counted.
// Copies share their counters, so a copy handed to a Trial (or into an AnyStore) is counted by
// the original. Counters are atomics: safe while several threads read through the store.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/storage/store.hpp>

namespace smdebug {

// "requests: LIST 3, GET 12, HEAD 0; bytes 40960" (what `smdebug ... --requests` prints).
inline std::string format_request_counts(const RequestCounts& c) {
    return "requests: LIST " + std::to_string(c.list) + ", GET " + std::to_string(c.get) + ", HEAD " + std::to_string(c.head) +
           "; bytes " + std::to_string(c.bytes);
}

template <Store S>
class CountingStore {
public:
    explicit CountingStore(S store) : store_(std::move(store)), counters_(std::make_shared<Counters>()) {
        if constexpr (RequestCountingStore<S>) counters_->baseline = store_.request_counts();
    }

    const S& inner() const noexcept { return store_; }

    // The requests sent since this wrapper was made (see the header comment for what counts).
    RequestCounts counts() const {
        if constexpr (RequestCountingStore<S>) {
            if (counters_->baseline)
                if (const auto now = store_.request_counts()) return *now - *counters_->baseline;
        }
        return store_calls();
    }
    // The store calls made through this wrapper, whatever the transport did for them.
    RequestCounts store_calls() const noexcept {
        return {counters_->list.load(std::memory_order_relaxed), counters_->get.load(std::memory_order_relaxed),
                counters_->head.load(std::memory_order_relaxed), counters_->bytes.load(std::memory_order_relaxed)};
    }
    // RequestCountingStore: a CountingStore always knows its counts.
    std::optional<RequestCounts> request_counts() const { return counts(); }

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        add(counters_->list, 1);
        return store_.list(prefix, start_after);
    }
    // FirstKeysStore (the wrapped store's own, or its listing cut): one LIST.
    std::vector<std::string> list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const {
        add(counters_->list, 1);
        return smdebug::list_first(store_, prefix, start_after, n);
    }
    ByteBuffer read(std::string_view key) const {
        add(counters_->get, 1);
        return received(store_.read(key));
    }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        add(counters_->get, 1);
        return received(store_.read_range(key, offset, length));
    }
    bool exists(std::string_view key) const {
        add(counters_->head, 1);
        return smdebug::exists(store_, key);
    }
    std::string describe(std::string_view key) const { return smdebug::describe(store_, key); }

    void read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const
        requires BatchReadStore<S>
    {
        add(counters_->get, requests.size());
        store_.read_ranges(requests, [&](std::size_t i, ByteBuffer&& b) { sink(i, received(std::move(b))); });
    }
    std::vector<ByteBuffer> read_ranges(std::span<const RangeRequest> requests) const
        requires BatchReadStore<S>
    {
        return smdebug::read_ranges(*this, requests);
    }
    std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string> keys) const
        requires BatchObjectStore<S>
    {
        add(counters_->get, keys.size());
        auto out = store_.read_objects(keys);
        for (const auto& b : out)
            if (b) add(counters_->bytes, b->size());
        return out;
    }
    std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view key) const
        requires TimestampedStore<S>
    {
        add(counters_->head, 1);
        return store_.last_modified(key);
    }

    void write(std::string_view key, std::span<const std::byte> bytes) const
        requires WritableStore<S>
    {
        store_.write(key, bytes);
    }
    void remove(std::string_view key) const
        requires WritableStore<S>
    {
        store_.remove(key);
    }
    std::vector<std::exception_ptr> write_sequences(std::span<const std::vector<WriteRequest>> sequences) const
        requires SequencedWriteStore<S>
    {
        return store_.write_sequences(sequences);
    }

    std::optional<std::vector<ObjectInfo>> list_info(std::string_view prefix, std::string_view start_after, std::size_t max_keys) const
        requires ObjectInfoListingStore<S>
    {
        add(counters_->list, 1);
        return store_.list_info(prefix, start_after, max_keys);
    }
    bool latency_bound() const
        requires LatencyBoundStore<S>
    {
        return store_.latency_bound();
    }
    std::optional<std::filesystem::path> local_root() const
        requires LocalRootStore<S>
    {
        return store_.local_root();
    }

private:
    struct Counters {
        std::atomic<std::uint64_t> list{0}, get{0}, head{0}, bytes{0};
        std::optional<RequestCounts> baseline;  // the transport's counts when the wrapper was made
    };
    static void add(std::atomic<std::uint64_t>& c, std::uint64_t n) noexcept { c.fetch_add(n, std::memory_order_relaxed); }
    ByteBuffer received(ByteBuffer b) const noexcept {
        add(counters_->bytes, b.size());
        return b;
    }

    S store_;
    std::shared_ptr<Counters> counters_;
};

}  // namespace smdebug
