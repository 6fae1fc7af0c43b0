#pragma once
// LocalStore: a trial root on the local file system. Files are opened below the root by openat2
// (storage/detail/beneath_open.hpp). Ranges are read into an uninitialised buffer (no whole-file
// reads for a range) through a bounded cache of open descriptors (storage/detail/open_file_cache.hpp),
// so reading many records of one file opens it once; ranges are read with pread.
// read_ranges serves a batch: the ranges of each file are sorted, adjacent or nearby ones merged
// into one pread, each request handed a zero-copy slice of it, and files read in parallel on a
// few threads. Writes go to "<key>.tmp", are fsync'ed and renamed into place so readers never
// observe a partial object.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <smdebug/core/errors.hpp>
#include <smdebug/storage/detail/beneath_open.hpp>
#include <smdebug/storage/detail/regular_file.hpp>
#include <smdebug/storage/local_listing.hpp>
#include <smdebug/storage/detail/open_file_cache.hpp>
#include <smdebug/storage/detail/parallel.hpp>
#include <smdebug/storage/detail/range_plan.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

// How LocalStore reads batches.
struct LocalReadOptions {
    std::size_t open_files = 0;                 // cached descriptors; 0: from RLIMIT_NOFILE
    std::size_t threads = 0;                    // files read at once by read_ranges; 0: the cores, at most 4
    std::uint64_t coalesce_gap = 64u << 10;     // ranges of one file this close share one pread
    std::uint64_t max_coalesced_bytes = 16u << 20;  // but one pread spans at most this much
    std::uint64_t parallel_min_bytes = 1u << 20;    // smaller batches are read on the calling thread
    // A file whose symbolic links resolve outside the root is refused (FormatError, D22) unless set.
    bool allow_links_out_of_root = false;
};

class LocalStore {
public:
    // read_ranges packs the fetches of a batch into buffers of this size (a larger fetch gets its own).
    static constexpr std::size_t shared_block_bytes = std::size_t{8} << 20;

    // fsync: write() returns once the object is on stable storage (the default: the writer never
    // loses a step it reported saved). none: the same atomic rename, without the fsync — for
    // scratch trials, fixtures and benchmarks.
    enum class Durability { fsync, none };

    explicit LocalStore(std::filesystem::path root, Durability durability = Durability::fsync, LocalReadOptions read = {})
        : root_(std::move(root)), root_prefix_((root_ / "").string()), durability_(durability), read_opts_(read),
          opener_(std::make_shared<detail::BeneathOpener>(root_, read.allow_links_out_of_root)),
          files_(std::make_shared<detail::OpenFileCache>(read.open_files, opener_, root_prefix_.size())) {
        if (read_opts_.threads == 0) read_opts_.threads = detail::default_read_threads();
    }

    const std::filesystem::path& root() const noexcept { return root_; }
    std::optional<std::filesystem::path> local_root() const { return root_; }  // LocalRootStore
    // root_ / key, as a string built from the root's (joined once: reads describe every record).
    std::string describe(std::string_view key) const {
        std::string out;
        out.reserve(root_prefix_.size() + key.size());
        out.append(root_prefix_).append(key);
        return out;
    }

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        return list_local(root_, prefix, start_after);
    }
    // FirstKeysStore: reads only the folders that hold the first n keys.
    std::vector<std::string> list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const {
        return list_local_first(root_, prefix, start_after, n);
    }

    bool exists(std::string_view key) const {
        struct stat st {};
        return ::stat(describe(key).c_str(), &st) == 0;
    }

    ByteBuffer read(std::string_view key) const {
        File f(describe(key), *opener_, root_prefix_.size());
        const struct stat st = detail::require_regular_file(f.fd, f.path);
        if (!f.contained) opener_->check(f.fd, f.path);
        const auto size = static_cast<std::size_t>(st.st_size);
        ByteBuffer buf(size);
        read_exact(f.fd, f.path, buf.data(), 0, buf.size());
        return buf;
    }

    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        if (length == 0) return ByteBuffer();
        const auto f = files_->open(describe(key));
        check_range(f, offset, length);
        ByteBuffer buf(static_cast<std::size_t>(length));
        read_file_range(f, buf.data(), offset, length);
        return buf;
    }

    // Every request, in request order (see the top of this file). Throws the first failure:
    // ObjectNotFound, TruncatedData (a range beyond the end of its file) or StorageError.
    std::vector<ByteBuffer> read_ranges(std::span<const RangeRequest> requests) const {
        return smdebug::read_ranges(*this, requests);
    }
    // Every request handed to `sink` right after the pread that read it, on that thread (the
    // bytes are still in cache). Throws as above.
    void read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const {
        for (std::size_t i = 0; i < requests.size(); ++i)
            if (requests[i].length == 0) sink(i, ByteBuffer());
        const auto fetches = detail::plan_fetches(requests, {read_opts_.coalesce_gap, read_opts_.max_coalesced_bytes});
        // Consecutive fetches share one buffer of up to shared_block_bytes (each at a 64-byte
        // aligned offset): a few large blocks instead of one per file.
        std::vector<std::size_t> block_of(fetches.size()), offset_in_block(fetches.size());
        std::vector<std::size_t> block_sizes;
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < fetches.size(); ++i) {
            const auto bytes = static_cast<std::size_t>(fetches[i].end - fetches[i].begin);
            total += bytes;
            const std::size_t at = block_sizes.empty() ? 0 : (block_sizes.back() + 63) / 64 * 64;
            if (block_sizes.empty() || at + bytes > shared_block_bytes) {
                block_sizes.push_back(bytes);
                offset_in_block[i] = 0;
            } else {
                block_sizes.back() = at + bytes;
                offset_in_block[i] = at;
            }
            block_of[i] = block_sizes.size() - 1;
        }
        std::vector<ByteBuffer> blocks;
        blocks.reserve(block_sizes.size());
        for (std::size_t n : block_sizes) blocks.emplace_back(n);
        const std::size_t threads = total >= read_opts_.parallel_min_bytes ? read_opts_.threads : 1;
        detail::parallel_for(*helpers_, fetches.size(), threads, [&](std::size_t i) {
            const detail::Fetch& f = fetches[i];
            const auto file = files_->open(describe(requests[f.members.front()].key));
            check_range(file, f.begin, f.end - f.begin);
            ByteBuffer& block = blocks[block_of[i]];
            read_file_range(file, block.data() + offset_in_block[i], f.begin, f.end - f.begin);
            for (std::size_t m : f.members) {
                const RangeRequest& q = requests[m];
                sink(m, block.slice(offset_in_block[i] + static_cast<std::size_t>(q.offset - f.begin), static_cast<std::size_t>(q.length)));
            }
        });
    }

    // Whole files, read on a few threads when there are many; nullopt for a missing file.
    std::vector<std::optional<ByteBuffer>> read_objects(std::span<const std::string> keys) const {
        std::vector<std::optional<ByteBuffer>> out(keys.size());
        const std::size_t threads = keys.size() >= 64 ? read_opts_.threads : 1;
        detail::parallel_for(*helpers_, keys.size(), threads, [&](std::size_t i) {
            try {
                out[i].emplace(read(keys[i]));
            } catch (const ObjectNotFound&) {
            }
        });
        return out;
    }

    // When the file was last modified (for the end-of-training settle, docs/deviations.md D21);
    // nullopt when it does not exist.
    std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view key) const {
        struct stat st {};
        if (::stat(describe(key).c_str(), &st) != 0) return std::nullopt;
        using namespace std::chrono;
        return system_clock::time_point(duration_cast<system_clock::duration>(seconds(st.st_mtim.tv_sec) + nanoseconds(st.st_mtim.tv_nsec)));
    }

    const LocalReadOptions& read_options() const noexcept { return read_opts_; }
    // Descriptor cache counters (shared by copies of this store).
    detail::OpenFileCache::Stats open_file_stats() const { return files_->stats(); }
    // Opens the kernel kept below the root (openat2); the others were checked after the open.
    std::uint64_t beneath_opens() const noexcept { return opener_->beneath_opens(); }
    std::size_t open_file_capacity() const noexcept { return files_->capacity(); }

    void write(std::string_view key, std::span<const std::byte> bytes) const {
        const auto final_path = root_ / std::string(key);
        const auto tmp_path = final_path.string() + ".tmp";
        std::error_code ec;
        std::filesystem::create_directories(final_path.parent_path(), ec);
        if (ec) throw StorageError("cannot create directory " + final_path.parent_path().string() + ": " + ec.message());
        // O_NONBLOCK: a FIFO planted at the temporary name fails at once (ENXIO) instead of waiting.
        int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644);
        if (fd < 0) throw_errno("open for writing", tmp_path);
        if (struct stat st {}; ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            throw StorageError("cannot write " + tmp_path + ": it exists and is not a regular file");
        }
        std::size_t done = 0;
        while (done < bytes.size()) {
            ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
            if (n < 0) {
                if (errno == EINTR) continue;
                int err = errno;
                ::close(fd);
                ::unlink(tmp_path.c_str());
                errno = err;
                throw_errno("write", tmp_path);
            }
            done += static_cast<std::size_t>(n);
        }
        if (durability_ == Durability::fsync && ::fsync(fd) != 0) {
            int err = errno;
            ::close(fd);
            ::unlink(tmp_path.c_str());
            errno = err;
            throw_errno("fsync", tmp_path);
        }
        if (::close(fd) != 0) throw_errno("close", tmp_path);
        if (::rename(tmp_path.c_str(), final_path.c_str()) != 0) throw_errno("rename", tmp_path);
    }

    void remove(std::string_view key) const {
        const auto p = describe(key);
        if (::unlink(p.c_str()) != 0 && errno != ENOENT) throw_errno("remove", p);
    }

private:
    struct File {
        File(std::string p, const detail::BeneathOpener& opener, std::size_t key_offset) : path(std::move(p)) {
            const auto opened = opener.open(path, path.c_str() + std::min(key_offset, path.size()));
            fd = opened.fd;
            contained = opened.contained;
            if (fd < 0) {
                if (errno == ENOENT || errno == ENOTDIR) throw ObjectNotFound("no such file: " + path);
                throw_errno("open", path);
            }
        }
        ~File() { ::close(fd); }
        File(const File&) = delete;
        File& operator=(const File&) = delete;
        std::string path;
        int fd = -1;
        bool contained = false;
    };

    [[noreturn]] static void throw_errno(const char* what, const std::string& path) {
        throw StorageError(std::string(what) + " failed for " + path + ": " + std::strerror(errno));
    }

    // A range past the end of the file (its size at this lookup) is TruncatedData before anything
    // is allocated or read: an index entry claiming terabytes costs nothing.
    static void check_range(const detail::OpenFileCache::Handle& f, std::uint64_t offset, std::uint64_t length) {
        if (offset > f.size || length > f.size - offset)
            throw TruncatedData(f->path + ": wanted " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                                " but the file has " + std::to_string(f.size) + " bytes");
    }

    // [offset, offset + length) of a file checked by check_range, read with pread. A file shrunk
    // since the lookup is TruncatedData.
    static void read_file_range(const detail::OpenFileCache::Handle& f, std::byte* out, std::uint64_t offset, std::uint64_t length) {
        read_exact(f->fd, f->path, out, offset, length);
    }

    static void read_exact(int fd, const std::string& path, std::byte* out, std::uint64_t offset, std::uint64_t length) {
        std::uint64_t done = 0;
        while (done < length) {
            ssize_t n = ::pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
            if (n < 0) {
                if (errno == EINTR) continue;
                throw_errno("read", path);
            }
            if (n == 0)
                throw TruncatedData(path + ": wanted " + std::to_string(length) + " bytes at offset " +
                                    std::to_string(offset) + " but the file ends after " +
                                    std::to_string(offset + done) + " bytes");
            done += static_cast<std::uint64_t>(n);
        }
    }

    std::filesystem::path root_;
    std::string root_prefix_;  // root_ with a trailing separator
    Durability durability_ = Durability::fsync;
    LocalReadOptions read_opts_;
    std::shared_ptr<const detail::BeneathOpener> opener_;
    std::shared_ptr<detail::OpenFileCache> files_;  // shared by copies of the store
    // Threads of read_ranges/read_objects, shared by copies of the store, joined when the last goes.
    std::shared_ptr<detail::HelperPool> helpers_ = std::make_shared<detail::HelperPool>();
};

static_assert(BatchReadStore<LocalStore>);
static_assert(BatchObjectStore<LocalStore>);
static_assert(TimestampedStore<LocalStore>);
static_assert(!LatencyBoundStore<LocalStore>);

static_assert(WritableStore<LocalStore>);

}  // namespace smdebug
