#pragma once
// LocalStore's definitions (storage/local_store.hpp).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
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
#include <smdebug/storage/detail/open_file_cache.hpp>
#include <smdebug/storage/detail/parallel.hpp>
#include <smdebug/storage/detail/regular_file.hpp>
#include <smdebug/storage/local_listing.hpp>
#include <smdebug/storage/local_store.hpp>
#if !SMDEBUG_HEADER_ONLY && !defined(SMDEBUG_SOURCE)
#error "this file defines functions compiled once by <smdebug/src.hpp>: in separate mode include it only there"
#endif

namespace smdebug {

namespace detail {

[[noreturn]] SMDEBUG_INLINE void throw_local_errno(const char* what, const std::string& path) {
    throw StorageError(std::string(what) + " failed for " + path + ": " + std::strerror(errno));
}

// One file opened below the root for a whole read, closed when done.
struct LocalFile {
    LocalFile(std::string p, const BeneathOpener& opener, std::size_t key_offset) : path(std::move(p)) {
        const auto opened = opener.open(path, path.c_str() + std::min(key_offset, path.size()));
        fd = opened.fd;
        contained = opened.contained;
        if (fd < 0) {
            if (errno == ENOENT || errno == ENOTDIR) throw ObjectNotFound("no such file: " + path);
            throw_local_errno("open", path);
        }
    }
    ~LocalFile() { ::close(fd); }
    LocalFile(const LocalFile&) = delete;
    LocalFile& operator=(const LocalFile&) = delete;
    std::string path;
    int fd = -1;
    bool contained = false;
};

// A range past the end of the file (its size at this lookup) is TruncatedData before anything
// is allocated or read: an index entry claiming terabytes costs nothing.
SMDEBUG_INLINE void check_local_range(const OpenFileCache::Handle& f, std::uint64_t offset, std::uint64_t length) {
    if (offset > f.size || length > f.size - offset)
        throw TruncatedData(f->path + ": wanted " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                            " but the file has " + std::to_string(f.size) + " bytes");
}

// [offset, offset + length) of a file, read with pread. A file shorter than that (shrunk since
// check_local_range) is TruncatedData.
SMDEBUG_INLINE void read_local_exact(int fd, const std::string& path, std::byte* out, std::uint64_t offset, std::uint64_t length) {
    std::uint64_t done = 0;
    while (done < length) {
        ssize_t n = ::pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw_local_errno("read", path);
        }
        if (n == 0)
            throw TruncatedData(path + ": wanted " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                                " but the file ends after " + std::to_string(offset + done) + " bytes");
        done += static_cast<std::uint64_t>(n);
    }
}

}  // namespace detail

SMDEBUG_INLINE LocalStore::LocalStore(std::filesystem::path root, Durability durability, LocalReadOptions read)
    : root_(std::move(root)), root_prefix_((root_ / "").string()), durability_(durability), read_opts_(read),
      opener_(std::make_shared<detail::BeneathOpener>(root_, read.allow_links_out_of_root)),
      files_(std::make_shared<detail::OpenFileCache>(read.open_files == LocalReadOptions::open_files_from_limit ? detail::OpenFileCache::from_limit : read.open_files, opener_, root_prefix_.size())),
      helpers_(std::make_shared<detail::HelperPool>()) {
    if (read_opts_.threads == 0) read_opts_.threads = detail::default_read_threads();
}

SMDEBUG_INLINE std::vector<std::string> LocalStore::list(std::string_view prefix, std::string_view start_after) const {
    return list_local(root_, prefix, start_after);
}

SMDEBUG_INLINE std::vector<std::string> LocalStore::list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const {
    return list_local_first(root_, prefix, start_after, n);
}

SMDEBUG_INLINE bool LocalStore::exists(std::string_view key) const {
    struct stat st {};
    return ::stat(describe(key).c_str(), &st) == 0;
}

SMDEBUG_INLINE ByteBuffer LocalStore::read(std::string_view key) const {
    detail::LocalFile f(describe(key), *opener_, root_prefix_.size());
    const struct stat st = detail::require_regular_file(f.fd, f.path);
    if (!f.contained) opener_->check(f.fd, f.path);
    const auto size = static_cast<std::size_t>(st.st_size);
    ByteBuffer buf(size);
    detail::read_local_exact(f.fd, f.path, buf.data(), 0, buf.size());
    return buf;
}

SMDEBUG_INLINE ByteBuffer LocalStore::read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
    if (length == 0) return ByteBuffer();
    const auto f = files_->open(describe(key));
    detail::check_local_range(f, offset, length);
    ByteBuffer buf(static_cast<std::size_t>(length));
    detail::read_local_exact(f->fd, f->path, buf.data(), offset, length);
    return buf;
}

SMDEBUG_INLINE void LocalStore::read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const {
    // Each range is one pread into its own buffer: a batch's bytes are planned once, by the caller
    // (the record reader's plan_ranges coalesces the records of a batch; docs/performance.md).
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const RangeRequest& q = requests[i];
        if (q.length > 0 && q.offset > UINT64_MAX - q.length)
            throw UsageError("read_ranges: range at offset " + std::to_string(q.offset) + " overflows for " + q.key);
        total += q.length;
    }
    const std::size_t threads = total >= read_opts_.parallel_min_bytes ? read_opts_.threads : 1;
    detail::parallel_for(*helpers_, requests.size(), threads, [&](std::size_t i) {
        const RangeRequest& q = requests[i];
        sink(i, read_range(q.key, q.offset, q.length));
    });
}

SMDEBUG_INLINE std::vector<std::optional<ByteBuffer>> LocalStore::read_objects(std::span<const std::string> keys) const {
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

SMDEBUG_INLINE std::optional<std::chrono::system_clock::time_point> LocalStore::last_modified(std::string_view key) const {
    struct stat st {};
    if (::stat(describe(key).c_str(), &st) != 0) return std::nullopt;
    using namespace std::chrono;
    return system_clock::time_point(duration_cast<system_clock::duration>(seconds(st.st_mtim.tv_sec) + nanoseconds(st.st_mtim.tv_nsec)));
}

SMDEBUG_INLINE detail::OpenFileStats LocalStore::open_file_stats() const { return files_->stats(); }
SMDEBUG_INLINE std::uint64_t LocalStore::beneath_opens() const noexcept { return opener_->beneath_opens(); }
SMDEBUG_INLINE std::size_t LocalStore::open_file_capacity() const noexcept { return files_->capacity(); }

SMDEBUG_INLINE void LocalStore::write(std::string_view key, std::span<const std::byte> bytes) const {
    const auto final_path = root_ / std::string(key);
    const auto tmp_path = final_path.string() + ".tmp";
    std::error_code ec;
    std::filesystem::create_directories(final_path.parent_path(), ec);
    if (ec) throw StorageError("cannot create directory " + final_path.parent_path().string() + ": " + ec.message());
    // O_NONBLOCK: a FIFO planted at the temporary name fails at once (ENXIO) instead of waiting.
    int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0) detail::throw_local_errno("open for writing", tmp_path);
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
            detail::throw_local_errno("write", tmp_path);
        }
        done += static_cast<std::size_t>(n);
    }
    if (durability_ == Durability::fsync && ::fsync(fd) != 0) {
        int err = errno;
        ::close(fd);
        ::unlink(tmp_path.c_str());
        errno = err;
        detail::throw_local_errno("fsync", tmp_path);
    }
    if (::close(fd) != 0) detail::throw_local_errno("close", tmp_path);
    if (::rename(tmp_path.c_str(), final_path.c_str()) != 0) detail::throw_local_errno("rename", tmp_path);
}

SMDEBUG_INLINE void LocalStore::remove(std::string_view key) const {
    const auto p = describe(key);
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) detail::throw_local_errno("remove", p);
}

}  // namespace smdebug
