#pragma once
// LocalStore: a trial root on the local file system. Files are opened below the root by openat2
// (storage/detail/beneath_open.hpp). Ranges are read into an uninitialised buffer (no whole-file
// reads for a range) through a bounded cache of open descriptors (storage/detail/open_file_cache.hpp),
// so reading many records of one file opens it once; ranges are read with pread.
// read_ranges serves a batch: each range one pread into its own buffer (the batch's caller has
// planned its ranges: the record reader coalesces a batch's records once), read in parallel on a
// few threads. Writes go to "<key>.tmp", are fsync'ed and renamed into place so readers never
// observe a partial object.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/config.hpp>
#include <smdebug/storage/detail/open_file_stats.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {
class BeneathOpener;
class OpenFileCache;
class HelperPool;
}  // namespace smdebug::detail

namespace smdebug {

// How LocalStore reads batches.
struct LocalReadOptions {
    // open_files_from_limit: a quarter of the soft descriptor limit (RLIMIT_NOFILE), between 4 and 1024.
    static constexpr std::size_t open_files_from_limit = static_cast<std::size_t>(-1);
    std::size_t open_files = open_files_from_limit;  // cached descriptors; 0: none (each read opens its file)
    std::size_t threads = 0;                    // files read at once by read_ranges; 0: the cores, at most 4
    std::uint64_t parallel_min_bytes = 1u << 20;    // smaller batches are read on the calling thread
    // A file whose symbolic links resolve outside the root is refused (FormatError, D22) unless set.
    bool allow_links_out_of_root = false;
};

class LocalStore {
public:
    // fsync: write() returns once the object is on stable storage (the default: the writer never
    // loses a step it reported saved). none: the same atomic rename, without the fsync — for
    // scratch trials, fixtures and benchmarks.
    enum class Durability { fsync, none };

    explicit LocalStore(std::filesystem::path root, Durability durability = Durability::fsync, LocalReadOptions read = {});

    const std::filesystem::path& root() const noexcept { return root_; }
    std::optional<std::filesystem::path> local_root() const { return root_; }  // LocalRootStore
    // root_ / key, as a string built from the root's (joined once: reads describe every record).
    std::string describe(std::string_view key) const {
        std::string out;
        out.reserve(root_prefix_.size() + key.size());
        out.append(root_prefix_).append(key);
        return out;
    }

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const;
    // FirstKeysStore: reads only the folders that hold the first n keys.
    std::vector<std::string> list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const;

    bool exists(std::string_view key) const;

    ByteBuffer read(std::string_view key) const;
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const;

    // Every request, in request order (see the top of this file). Throws the first failure:
    // ObjectNotFound, TruncatedData (a range beyond the end of its file) or StorageError.
    std::vector<ByteBuffer> read_ranges(std::span<const RangeRequest> requests) const {
        return smdebug::read_ranges(*this, requests);
    }
    // Every request handed to `sink` right after the pread that read it, on that thread (the
    // bytes are still in cache). Throws as above.
    void read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const;

    // Whole files, read on a few threads when there are many; nullopt for a missing file.
    std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string> keys) const;

    // When the file was last modified (for the end-of-training settle, docs/deviations.md D21);
    // nullopt when it does not exist.
    std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view key) const;

    const LocalReadOptions& read_options() const noexcept { return read_opts_; }
    // Descriptor cache counters (shared by copies of this store).
    detail::OpenFileStats open_file_stats() const;
    // Opens the kernel kept below the root (openat2); the others were checked after the open.
    std::uint64_t beneath_opens() const noexcept;
    std::size_t open_file_capacity() const noexcept;

    void write(std::string_view key, std::span<const std::byte> bytes) const;
    void remove(std::string_view key) const;

private:
    std::filesystem::path root_;
    std::string root_prefix_;  // root_ with a trailing separator
    Durability durability_ = Durability::fsync;
    LocalReadOptions read_opts_;
    std::shared_ptr<const detail::BeneathOpener> opener_;
    std::shared_ptr<detail::OpenFileCache> files_;  // shared by copies of the store
    // Threads of read_ranges/read_objects, shared by copies of the store, joined when the last goes.
    std::shared_ptr<detail::HelperPool> helpers_;
};

static_assert(BatchReadStore<LocalStore>);
static_assert(BatchObjectStore<LocalStore>);
static_assert(TimestampedStore<LocalStore>);
static_assert(!LatencyBoundStore<LocalStore>);

static_assert(WritableStore<LocalStore>);

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/storage/impl/local_store.ipp>
#endif
