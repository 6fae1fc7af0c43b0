#pragma once
// AnyStore: a type-erased Store, so that create_trial() returns one type whatever the path.
// Code that knows its store at compile time uses Trial<LocalStore> / Trial<S3Store> directly
// and pays nothing for the erasure.
#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

class AnyStore {
public:
    template <Store S>
        requires(!std::same_as<std::remove_cvref_t<S>, AnyStore>)
    explicit AnyStore(S store) : impl_(std::make_shared<Model<S>>(std::move(store))) {}

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const { return impl_->list(prefix, start_after); }
    std::vector<std::string> list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const {
        return impl_->list_first(prefix, start_after, n);
    }
    ByteBuffer read(std::string_view key) const { return impl_->read(key); }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const { return impl_->read_range(key, offset, length); }
    void read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const { impl_->read_ranges(requests, sink); }
    std::vector<ByteBuffer> read_ranges(std::span<const RangeRequest> requests) const { return smdebug::read_ranges(*this, requests); }
    std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string> keys) const { return impl_->read_objects(keys); }
    bool exists(std::string_view key) const { return impl_->exists(key); }
    std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view key) const { return impl_->last_modified(key); }
    std::string describe(std::string_view key) const { return impl_->describe(key); }
    void write(std::string_view key, std::span<const std::byte> bytes) const { impl_->write(key, bytes); }
    std::vector<std::exception_ptr> write_sequences(std::span<const std::vector<WriteRequest>> sequences) const {
        return impl_->write_sequences(sequences);
    }
    void remove(std::string_view key) const { impl_->remove(key); }
    // The folder behind the wrapped store, when it is a local one (LocalRootStore).
    std::optional<std::filesystem::path> local_root() const { return impl_->local_root(); }
    // Whether the wrapped store is a LatencyBoundStore that says so (S3).
    bool latency_bound() const { return impl_->latency_bound(); }
    // The wrapped store's transport request counts, when it is a RequestCountingStore.
    std::optional<RequestCounts> request_counts() const { return impl_->request_counts(); }
    // The wrapped store's listing with sizes and ETags, when it is an ObjectInfoListingStore.
    std::optional<std::vector<ObjectInfo>> list_info(std::string_view prefix, std::string_view start_after, std::size_t max_keys) const {
        return impl_->list_info(prefix, start_after, max_keys);
    }

    // The wrapped store, when it is an S.
    template <Store S>
    const S* get_if() const noexcept {
        auto* m = dynamic_cast<const Model<S>*>(impl_.get());
        return m ? &m->store : nullptr;
    }

private:
    struct Concept {
        virtual ~Concept() = default;
        virtual std::vector<std::string> list(std::string_view, std::string_view) const = 0;
        virtual std::vector<std::string> list_first(std::string_view, std::string_view, std::size_t) const = 0;
        virtual ByteBuffer read(std::string_view) const = 0;
        virtual ByteBuffer read_range(std::string_view, std::uint64_t, std::uint64_t) const = 0;
        virtual void read_ranges(std::span<const RangeRequest>, const RangeSink&) const = 0;
        virtual std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string>) const = 0;
        virtual bool exists(std::string_view) const = 0;
        virtual std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view) const = 0;
        virtual std::string describe(std::string_view) const = 0;
        virtual void write(std::string_view, std::span<const std::byte>) const = 0;
        virtual std::vector<std::exception_ptr> write_sequences(std::span<const std::vector<WriteRequest>>) const = 0;
        virtual void remove(std::string_view) const = 0;
        virtual std::optional<std::filesystem::path> local_root() const = 0;
        virtual bool latency_bound() const = 0;
        virtual std::optional<RequestCounts> request_counts() const = 0;
        virtual std::optional<std::vector<ObjectInfo>> list_info(std::string_view, std::string_view, std::size_t) const = 0;
    };
    template <class S>
    struct Model final : Concept {
        explicit Model(S s) : store(std::move(s)) {}
        std::vector<std::string> list(std::string_view p, std::string_view a) const override { return store.list(p, a); }
        std::vector<std::string> list_first(std::string_view p, std::string_view a, std::size_t n) const override {
            return smdebug::list_first(store, p, a, n);
        }
        ByteBuffer read(std::string_view k) const override { return store.read(k); }
        ByteBuffer read_range(std::string_view k, std::uint64_t o, std::uint64_t n) const override { return store.read_range(k, o, n); }
        void read_ranges(std::span<const RangeRequest> r, const RangeSink& sink) const override { smdebug::read_ranges(store, r, sink); }
        std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string> k) const override {
            return smdebug::read_objects(store, k);
        }
        bool exists(std::string_view k) const override { return smdebug::exists(store, k); }
        std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view k) const override {
            return smdebug::last_modified(store, k);
        }
        std::string describe(std::string_view k) const override { return smdebug::describe(store, k); }
        std::vector<std::exception_ptr> write_sequences(std::span<const std::vector<WriteRequest>> seqs) const override {
            if constexpr (WritableStore<S>) return smdebug::write_sequences(store, seqs);
            else throw StorageError("store is read-only: cannot write " + smdebug::describe(store, seqs.empty() || seqs[0].empty() ? "" : seqs[0][0].key));
        }
        void write(std::string_view k, std::span<const std::byte> b) const override {
            if constexpr (WritableStore<S>) store.write(k, b);
            else throw StorageError("store is read-only: cannot write " + smdebug::describe(store, k));
        }
        void remove(std::string_view k) const override {
            if constexpr (WritableStore<S>) store.remove(k);
            else throw StorageError("store is read-only: cannot remove " + smdebug::describe(store, k));
        }
        std::optional<std::filesystem::path> local_root() const override { return local_root_of(store); }
        bool latency_bound() const override { return smdebug::latency_bound(store); }
        std::optional<RequestCounts> request_counts() const override {
            if constexpr (RequestCountingStore<S>) return store.request_counts();
            else return std::nullopt;
        }
        std::optional<std::vector<ObjectInfo>> list_info(std::string_view p, std::string_view a, std::size_t n) const override {
            if constexpr (ObjectInfoListingStore<S>) return store.list_info(p, a, n);
            else return std::nullopt;
        }
        S store;
    };
    std::shared_ptr<const Concept> impl_;
};

static_assert(BatchReadStore<AnyStore>);
static_assert(TimestampedStore<AnyStore>);
static_assert(BatchObjectStore<AnyStore>);
static_assert(WritableStore<AnyStore>);
static_assert(LocalRootStore<AnyStore>);
static_assert(LatencyBoundStore<AnyStore>);
static_assert(RequestCountingStore<AnyStore>);
static_assert(ObjectInfoListingStore<AnyStore>);

}  // namespace smdebug
