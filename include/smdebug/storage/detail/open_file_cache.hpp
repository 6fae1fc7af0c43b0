#pragma once
// OpenFileCache: a bounded, thread-safe cache of read-only file descriptors, so that reading many
// records of one event file does not reopen it for each record. Least recently used files are
// closed first; the bound leaves most of the process's descriptor limit (RLIMIT_NOFILE) to others.
//
// A cached descriptor is only handed out while its file is still linked in the file system (one
// fstat per lookup: removing the file, or renaming another over it, leaves the descriptor's inode
// with no link); otherwise the path is opened again, so a file removed under the reader is
// ObjectNotFound and a file replaced (renamed over) is read anew. fstat, not a stat of the path:
// it walks no directories, and a lookup is one system call however deep the trial lies. The same
// fstat gives the file's current size with each lookup (the store checks ranges against it).
//
// Files are opened through a BeneathOpener (beneath_open.hpp: kept below the store's root).
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <smdebug/core/errors.hpp>
#include <smdebug/storage/detail/beneath_open.hpp>
#include <smdebug/storage/detail/open_file_stats.hpp>
#include <smdebug/storage/detail/regular_file.hpp>

namespace smdebug::detail {

class OpenFileCache {
public:
    struct File {
        File(int fd_, std::string path_) : fd(fd_), path(std::move(path_)) {}
        ~File() { ::close(fd); }
        File(const File&) = delete;
        File& operator=(const File&) = delete;
        int fd;
        std::string path;
    };

    // A cached or fresh descriptor and the file's size at this lookup.
    struct Handle {
        std::shared_ptr<const File> file;
        std::uint64_t size = 0;
        const File* operator->() const noexcept { return file.get(); }
    };

    using Stats = OpenFileStats;

    // capacity from_limit: a quarter of the soft descriptor limit, between 4 and 1024 (the
    // default); 0: no descriptor is kept (each open() opens the file, whose descriptor closes when
    // its last Handle goes: the same path, the file evicted as soon as it is inserted). Paths are
    // opened through `opener` (its key: the path from character key_offset on), else plainly.
    static constexpr std::size_t from_limit = static_cast<std::size_t>(-1);
    explicit OpenFileCache(std::size_t capacity = from_limit, std::shared_ptr<const BeneathOpener> opener = nullptr,
                           std::size_t key_offset = 0)
        : capacity_(capacity == from_limit ? default_capacity() : capacity), opener_(std::move(opener)), key_offset_(key_offset) {}

    static std::size_t default_capacity() noexcept {
        rlimit lim{};
        if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 1024;
        return static_cast<std::size_t>(std::clamp<rlim_t>(lim.rlim_cur / 4, 4, 1024));
    }

    std::size_t capacity() const noexcept { return capacity_; }
    std::size_t size() const {
        std::lock_guard lock(mu_);
        return index_.size();
    }
    Stats stats() const {
        std::lock_guard lock(mu_);
        return stats_;
    }
    // Closes every cached descriptor (those in use close when their last reader lets go).
    void clear() {
        std::lock_guard lock(mu_);
        index_.clear();
        lru_.clear();
    }

    // An open descriptor for `path`. ObjectNotFound when the path names no file.
    Handle open(const std::string& path) {
        {
            std::unique_lock lock(mu_);
            if (auto it = index_.find(path); it != index_.end()) {
                std::shared_ptr<File> f = *it->second;
                lock.unlock();
                struct stat st {};
                const bool linked = ::fstat(f->fd, &st) == 0 && st.st_nlink > 0;
                lock.lock();
                if (linked) {
                    ++stats_.hits;
                    if (auto again = index_.find(path); again != index_.end()) lru_.splice(lru_.begin(), lru_, again->second);
                    return {std::move(f), static_cast<std::uint64_t>(st.st_size)};
                }
                if (auto again = index_.find(path); again != index_.end() && *again->second == f) {
                    lru_.erase(again->second);
                    index_.erase(again);
                }
            }
        }
        const BeneathOpener::Opened opened = open_fd(path);
        const int fd = opened.fd;
        struct stat st {};
        try {
            st = require_regular_file(fd, path);
            if (!opened.contained && opener_) opener_->check(fd, path);
        } catch (...) {
            ::close(fd);
            throw;
        }
        auto f = std::make_shared<File>(fd, path);
        std::lock_guard lock(mu_);
        ++stats_.opens;
        if (auto it = index_.find(path); it != index_.end()) {  // another thread opened it meanwhile
            lru_.erase(it->second);
            index_.erase(it);
        }
        lru_.push_front(f);
        index_.emplace(path, lru_.begin());
        while (index_.size() > capacity_) {
            index_.erase(lru_.back()->path);
            lru_.pop_back();
        }
        return {std::move(f), static_cast<std::uint64_t>(st.st_size)};
    }

private:
    BeneathOpener::Opened open_fd(const std::string& path) {
        for (int attempt = 0;; ++attempt) {
            const BeneathOpener::Opened opened =
                opener_ ? opener_->open(path, path.c_str() + std::min(key_offset_, path.size()))
                        : BeneathOpener::Opened{open_for_reading_nonblocking(path), true};
            if (opened.fd >= 0) return opened;
            const int err = errno;
            if (err == ENOENT || err == ENOTDIR) throw ObjectNotFound("no such file: " + path);
            if ((err == EMFILE || err == ENFILE) && attempt == 0) {
                clear();  // out of descriptors: give back the cached ones and try once more
                continue;
            }
            if (err == EINTR) continue;
            throw StorageError("open failed for " + path + ": " + std::strerror(err));
        }
    }

    const std::size_t capacity_;
    const std::shared_ptr<const BeneathOpener> opener_;
    const std::size_t key_offset_;
    mutable std::mutex mu_;
    std::list<std::shared_ptr<File>> lru_;  // most recently used first
    std::unordered_map<std::string, std::list<std::shared_ptr<File>>::iterator> index_;
    Stats stats_;
};

}  // namespace smdebug::detail
