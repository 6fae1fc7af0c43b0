// The wrapper stores (CountingStore, DiskCacheStore) against the capabilities of storage/store.hpp:
// at compile time, a wrapper has each capability exactly when the store it wraps has it (or always,
// where the wrapper does the work itself); at run time, write_sequences through a wrapper reaches
// the wrapped store's own.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/counting_store.hpp>
#include <smdebug/storage/disk_cache_store.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/s3_store.hpp>

#include "test_support.hpp"

namespace smdebug_test_store_wrappers {

using namespace smdebug;

// ---- every capability, as a bit ----------------------------------------------------------------

enum Capability : unsigned {
    has_describe = 1u << 0,
    has_exists = 1u << 1,
    first_keys = 1u << 2,
    batch_read = 1u << 3,
    batch_objects = 1u << 4,
    writable = 1u << 5,
    sequenced_write = 1u << 6,
    timestamped = 1u << 7,
    latency_bound_store = 1u << 8,
    local_root_store = 1u << 9,
    request_counting = 1u << 10,
    info_listing = 1u << 11,
};
constexpr unsigned every_capability = (1u << 12) - 1;

template <class S>
constexpr unsigned capabilities_of() {
    constexpr bool describes = requires(const S& s, std::string_view k) {
        { s.describe(k) } -> std::convertible_to<std::string>;
    };
    constexpr bool checks = requires(const S& s, std::string_view k) {
        { s.exists(k) } -> std::same_as<bool>;
    };
    return (describes ? has_describe : 0u) | (checks ? has_exists : 0u) | (FirstKeysStore<S> ? first_keys : 0u) |
           (BatchReadStore<S> ? batch_read : 0u) | (BatchObjectStore<S> ? batch_objects : 0u) | (WritableStore<S> ? writable : 0u) |
           (SequencedWriteStore<S> ? sequenced_write : 0u) | (TimestampedStore<S> ? timestamped : 0u) |
           (LatencyBoundStore<S> ? latency_bound_store : 0u) | (LocalRootStore<S> ? local_root_store : 0u) |
           (RequestCountingStore<S> ? request_counting : 0u) | (ObjectInfoListingStore<S> ? info_listing : 0u);
}

// A store of the three operations plus the capabilities named by the bits of C (members only
// declared for their signatures: these stores are only looked at by the compiler).
template <unsigned C>
class ProbeStore {
    static constexpr bool with(unsigned bit) { return (C & bit) != 0; }

public:
    std::vector<std::string> list(std::string_view, std::string_view = {}) const { return {}; }
    ByteBuffer read(std::string_view) const { return {}; }
    ByteBuffer read_range(std::string_view, std::uint64_t, std::uint64_t) const { return {}; }

    std::string describe(std::string_view) const
        requires(with(has_describe));
    bool exists(std::string_view) const
        requires(with(has_exists));
    std::vector<std::string> list_first(std::string_view, std::string_view, std::size_t) const
        requires(with(first_keys));
    void read_ranges(std::span<const RangeRequest>, const RangeSink&) const
        requires(with(batch_read));
    std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string>) const
        requires(with(batch_objects));
    void write(std::string_view, std::span<const std::byte>) const
        requires(with(writable));
    void remove(std::string_view) const
        requires(with(writable));
    std::vector<std::exception_ptr> write_sequences(std::span<const std::vector<WriteRequest>>) const
        requires(with(sequenced_write));
    std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view) const
        requires(with(timestamped));
    bool latency_bound() const
        requires(with(latency_bound_store));
    std::optional<std::filesystem::path> local_root() const
        requires(with(local_root_store));
    std::optional<RequestCounts> request_counts() const
        requires(with(request_counting));
    std::optional<std::vector<ObjectInfo>> list_info(std::string_view, std::string_view, std::size_t) const
        requires(with(info_listing));
};

// SequencedWriteStore refines WritableStore: its bit alone gives nothing.
static_assert(capabilities_of<ProbeStore<0>>() == 0);
static_assert(capabilities_of<ProbeStore<every_capability>>() == every_capability);
static_assert(capabilities_of<ProbeStore<sequenced_write>>() == 0);
static_assert(capabilities_of<ProbeStore<writable | sequenced_write>>() == (writable | sequenced_write));

// What a wrapper has whatever it wraps, because it does the work itself: CountingStore counts its
// own requests, and answers describe, exists and list_first through the wrapped store's or the
// defaults; DiskCacheStore serves reads, batches and first keys from its folder.
template <template <Store> class W>
constexpr unsigned always_has = 0;
template <>
constexpr unsigned always_has<CountingStore> = has_describe | has_exists | first_keys | request_counting;
template <>
constexpr unsigned always_has<DiskCacheStore> = has_describe | has_exists | first_keys | batch_read | batch_objects;

constexpr bool same_bit(unsigned got, unsigned want, unsigned bit) { return (got & bit) == (want & bit); }

// W<S> has a capability iff S has it, or W always has it; one assertion per capability, so that a
// failure names the one that is dropped (or invented).
template <template <Store> class W, class S>
consteval bool forwards_every_capability() {
    constexpr unsigned got = capabilities_of<W<S>>();
    constexpr unsigned want = capabilities_of<S>() | always_has<W>;
    static_assert(same_bit(got, want, has_describe), "describe");
    static_assert(same_bit(got, want, has_exists), "exists");
    static_assert(same_bit(got, want, first_keys), "FirstKeysStore");
    static_assert(same_bit(got, want, batch_read), "BatchReadStore");
    static_assert(same_bit(got, want, batch_objects), "BatchObjectStore");
    static_assert(same_bit(got, want, writable), "WritableStore");
    static_assert(same_bit(got, want, sequenced_write), "SequencedWriteStore");
    static_assert(same_bit(got, want, timestamped), "TimestampedStore");
    static_assert(same_bit(got, want, latency_bound_store), "LatencyBoundStore");
    static_assert(same_bit(got, want, local_root_store), "LocalRootStore");
    static_assert(same_bit(got, want, request_counting), "RequestCountingStore");
    static_assert(same_bit(got, want, info_listing), "ObjectInfoListingStore");
    return true;
}

template <template <Store> class W>
consteval bool forwards_for_every_store() {
    return forwards_every_capability<W, ProbeStore<0>>() && forwards_every_capability<W, ProbeStore<every_capability>>() &&
           forwards_every_capability<W, ProbeStore<has_describe>>() && forwards_every_capability<W, ProbeStore<has_exists>>() &&
           forwards_every_capability<W, ProbeStore<first_keys>>() && forwards_every_capability<W, ProbeStore<batch_read>>() &&
           forwards_every_capability<W, ProbeStore<batch_objects>>() && forwards_every_capability<W, ProbeStore<writable>>() &&
           forwards_every_capability<W, ProbeStore<writable | sequenced_write>>() &&
           forwards_every_capability<W, ProbeStore<timestamped>>() && forwards_every_capability<W, ProbeStore<latency_bound_store>>() &&
           forwards_every_capability<W, ProbeStore<local_root_store>>() && forwards_every_capability<W, ProbeStore<request_counting>>() &&
           forwards_every_capability<W, ProbeStore<info_listing>>() &&
           forwards_every_capability<W, ProbeStore<every_capability & ~(writable | sequenced_write)>>() &&
           forwards_every_capability<W, LocalStore>() && forwards_every_capability<W, AnyStore>() &&
           forwards_every_capability<W, S3Store>() && forwards_every_capability<W, CountingStore<S3Store>>();
}

static_assert(forwards_for_every_store<CountingStore>());
static_assert(forwards_for_every_store<DiskCacheStore>());
// What the CLI reads through with --requests and --cache: every capability (AnyStore has them all).
static_assert(capabilities_of<CountingStore<AnyStore>>() == every_capability);
static_assert(capabilities_of<DiskCacheStore<AnyStore>>() == every_capability);

// ---- write_sequences reaches the wrapped store ---------------------------------------------------

// A writable store in memory that lists with sizes and ETags (so that DiskCacheStore caches what it
// holds), writes sequences itself, counts how it was written to, and fails every write of a key
// under "refused/".
class SequencingStore {
public:
    struct Calls {
        std::atomic<int> sequence_batches{0}, single_writes{0}, reads{0};
    };

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        auto infos = list_info(prefix, start_after, 0);
        std::vector<std::string> keys;
        for (auto& i : *infos) keys.push_back(std::move(i.key));
        return keys;
    }
    std::optional<std::vector<ObjectInfo>> list_info(std::string_view prefix, std::string_view start_after, std::size_t max_keys) const {
        std::lock_guard lock(state_->mutex);
        std::vector<ObjectInfo> out;
        for (const auto& [k, v] : state_->objects)
            if (k.starts_with(prefix) && (start_after.empty() || k > start_after) && (max_keys == 0 || out.size() < max_keys))
                out.push_back({k, v.bytes.size(), "\"v" + std::to_string(v.version) + "\""});
        return out;
    }
    ByteBuffer read(std::string_view key) const {
        ++state_->calls.reads;
        std::lock_guard lock(state_->mutex);
        const auto it = state_->objects.find(std::string(key));
        if (it == state_->objects.end()) throw ObjectNotFound("no such object: mem:" + std::string(key));
        return ByteBuffer::copy_of(std::string_view(it->second.bytes));
    }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        const ByteBuffer all = read(key);
        if (offset > all.size() || length > all.size() - offset) throw TruncatedData("mem:" + std::string(key) + ": short");
        return all.slice(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
    }
    static constexpr bool latency_bound() noexcept { return true; }

    void write(std::string_view key, std::span<const std::byte> bytes) const {
        ++state_->calls.single_writes;
        put(key, bytes);
    }
    void remove(std::string_view key) const {
        std::lock_guard lock(state_->mutex);
        state_->objects.erase(std::string(key));
    }
    std::vector<std::exception_ptr> write_sequences(std::span<const std::vector<WriteRequest>> sequences) const {
        ++state_->calls.sequence_batches;
        std::vector<std::exception_ptr> errors(sequences.size());
        for (std::size_t i = 0; i < sequences.size(); ++i) {
            try {
                for (const auto& w : sequences[i]) put(w.key, w.bytes);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
        return errors;
    }

    const Calls& calls() const noexcept { return state_->calls; }
    std::optional<std::string> object(const std::string& key) const {
        std::lock_guard lock(state_->mutex);
        const auto it = state_->objects.find(key);
        if (it == state_->objects.end()) return std::nullopt;
        return it->second.bytes;
    }

private:
    void put(std::string_view key, std::span<const std::byte> bytes) const {
        if (key.starts_with("refused/")) throw StorageError("mem:" + std::string(key) + ": refused");
        std::lock_guard lock(state_->mutex);
        auto& o = state_->objects[std::string(key)];
        o.bytes.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        o.version = ++state_->versions;
    }
    struct Object {
        std::string bytes;
        std::uint64_t version = 0;
    };
    struct State {
        std::mutex mutex;
        std::map<std::string, Object> objects;
        std::uint64_t versions = 0;
        Calls calls;
    };
    std::shared_ptr<State> state_ = std::make_shared<State>();  // copies share the objects
};
static_assert(SequencedWriteStore<SequencingStore> && ObjectInfoListingStore<SequencingStore>);

std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

// Writes two sequences (two objects, then one refused write and one that must not happen) through
// `store` and checks what reached `inner`: one write_sequences call of its own, no single writes.
template <class W>
void check_sequences_reach(const W& store, const SequencingStore& inner) {
    const std::string a = "alpha", b = "bravo!", c = "charlie", d = "delta";
    const std::vector<std::vector<WriteRequest>> sequences = {
        {{"index/a", bytes_of(a)}, {"index/b", bytes_of(b)}},
        {{"refused/c", bytes_of(c)}, {"index/d", bytes_of(d)}},
    };
    const auto errors = smdebug::write_sequences(store, sequences);
    REQUIRE(errors.size() == 2);
    CHECK(errors[0] == nullptr);
    REQUIRE(errors[1] != nullptr);
    CHECK_THROWS_WITH(std::rethrow_exception(errors[1]), Catch::Matchers::Contains("refused/c"));
    CHECK(inner.calls().sequence_batches == 1);
    CHECK(inner.calls().single_writes == 0);
    CHECK(inner.object("index/a") == "alpha");
    CHECK(inner.object("index/b") == "bravo!");
    CHECK(inner.object("index/d") == std::nullopt);  // the sequence stopped at its failure
}

TEST_CASE("CountingStore hands write_sequences to the store it wraps", "[storage][wrappers]") {
    const SequencingStore inner;
    SECTION("directly") { check_sequences_reach(CountingStore<SequencingStore>(inner), inner); }
    SECTION("inside an AnyStore") { check_sequences_reach(AnyStore(CountingStore<SequencingStore>(inner)), inner); }
}

TEST_CASE("DiskCacheStore hands write_sequences to the store it wraps, and reads what was written", "[storage][wrappers][cache]") {
    test::TempDir dir("wrapper-cache");
    const SequencingStore inner;
    DiskCacheOptions options;
    options.dir = dir.path;
    const DiskCacheStore<SequencingStore> cache(inner, options);
    check_sequences_reach(cache, inner);

    // index/a is listed, read (and cached), then rewritten through write_sequences: the next read
    // is the new object, not the cached entry of the old one.
    CHECK(cache.list("index/") == std::vector<std::string>{"index/a", "index/b"});
    CHECK(cache.read("index/a").text() == "alpha");
    const int reads = inner.calls().reads;
    CHECK(cache.read("index/a").text() == "alpha");
    CHECK(inner.calls().reads == reads);  // answered from the cache folder
    const std::string rewritten = "alpha, rewritten";
    const std::vector<std::vector<WriteRequest>> again = {{{"index/a", bytes_of(rewritten)}}};
    CHECK(smdebug::write_sequences(cache, again) == std::vector<std::exception_ptr>{nullptr});
    CHECK(inner.calls().sequence_batches == 2);
    CHECK(cache.read("index/a").text() == "alpha, rewritten");
    CHECK(cache.read_range("index/a", 7, 9).text() == "rewritten");

    SECTION("inside an AnyStore, under a CountingStore") {
        const AnyStore any{CountingStore<AnyStore>(AnyStore(cache))};
        const std::string e = "echo";
        const std::vector<std::vector<WriteRequest>> one = {{{"index/e", bytes_of(e)}}};
        CHECK(any.write_sequences(one) == std::vector<std::exception_ptr>{nullptr});
        CHECK(inner.calls().sequence_batches == 3);
        CHECK(inner.calls().single_writes == 0);
        CHECK(any.read("index/e").text() == "echo");
    }
}

}  // namespace smdebug_test_store_wrappers
