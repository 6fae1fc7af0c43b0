#pragma once
// OpenFileCache: a bounded, thread-safe cache of read-only file descriptors, so that reading many
// records of one event file does not reopen it for each record. Least recently used files are
// closed first; the bound leaves most of the process's descriptor limit (RLIMIT_NOFILE) to others.
//
// A cached descriptor is only handed out while its file is still linked in the file system (one
// fstat per lookup: removing the file, or renaming another over it, leaves the descriptor's inode
// with no link); otherwise the path is opened again, so a file removed under the reader is
// ObjectNotFound and a file replaced (renamed over) is read anew. fstat, not a stat of the path:
// it walks no directories, and a lookup is one system call however deep the trial lies. A file
// that shrinks gives short reads, which the store reports as TruncatedData (descriptors are read
// with pread, never mapped: no SIGBUS).
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

    struct Stats {
        std::uint64_t opens = 0;  // open() system calls
        std::uint64_t hits = 0;   // lookups served by a cached descriptor
    };

    // Called once per open with the new descriptor and its path; throws to refuse the file.
    using OpenCheck = std::function<void(int fd, const std::string& path)>;

    // capacity 0: a quarter of the soft descriptor limit, between 4 and 1024.
    explicit OpenFileCache(std::size_t capacity = 0, OpenCheck check = {})
        : capacity_(capacity ? capacity : default_capacity()), check_(std::move(check)) {}

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
    std::shared_ptr<const File> open(const std::string& path) {
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
                    return f;
                }
                if (auto again = index_.find(path); again != index_.end() && *again->second == f) {
                    lru_.erase(again->second);
                    index_.erase(again);
                }
            }
        }
        int fd = open_fd(path);
        try {
            (void)require_regular_file(fd, path);
            if (check_) check_(fd, path);
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
        return f;
    }

private:
    int open_fd(const std::string& path) {
        for (int attempt = 0;; ++attempt) {
            const int fd = open_for_reading_nonblocking(path);
            if (fd >= 0) return fd;
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
    const OpenCheck check_;
    mutable std::mutex mu_;
    std::list<std::shared_ptr<File>> lru_;  // most recently used first
    std::unordered_map<std::string, std::list<std::shared_ptr<File>>::iterator> index_;
    Stats stats_;
};

}  // namespace smdebug::detail
