#pragma once
// list_local(): LocalStore's listing — the keys below a folder that start with a prefix and sort
// after a key, in byte order, pruning sub-folders that cannot hold such keys. On Linux it reads
// directories with getdents64 into a stack buffer and reuses one key buffer, so that skipping the
// names of a folder allocates nothing: a trial's refresh lists the index bucket of its listing
// position on every poll, and with up to 1000 names per bucket and worker std::filesystem's
// per-name cost (a path object and several allocations per entry) dominated a refresh. Elsewhere
// (and as the reference the tests compare against) the portable std::filesystem walk is used.
// list_local_first(): the first n keys of such a listing, reading only the folders that hold them
// (getdents64 as well, keeping only the names that can be listed: past the last key of a bucket of
// 1,000 index files it allocates nothing).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <system_error>

#include <smdebug/core/errors.hpp>

// SMDEBUG_PORTABLE_LISTING (defined before any include of the library, in every translation unit):
// the std::filesystem walk on Linux too, the getdents64 listing's switch.
#if defined(__linux__) && !defined(SMDEBUG_PORTABLE_LISTING)
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#define SMDEBUG_HAS_GETDENTS 1

#include <smdebug/storage/detail/file_handle.hpp>
#endif

namespace smdebug {

// Listing limits. Folders nest 3 deep in a trial; a deeper tree is a symlink loop or a hostile
// folder, and each level of the walk costs a stack frame (with a 32 KiB getdents buffer).
inline constexpr std::size_t max_listing_depth = 32;
// More keys than this under one prefix is no trial (a trial of 1000 workers and a million steps
// has 2e9 files, but they are listed by step window, not at once): the listing stops with an error
// instead of growing until memory runs out.
inline constexpr std::size_t max_listing_keys = 20'000'000;

namespace detail {

[[noreturn]] inline void listing_too_deep(const std::string& where) {
    throw StorageError("listing " + where + ": folders nested deeper than " + std::to_string(max_listing_depth) +
                       " levels (a symlink loop?) (max_listing_depth)");
}
// A folder that cannot be listed for any reason but "it is not there" is an error, never an empty
// listing: an unreadable index folder must not look like a trial with no steps.
[[noreturn]] inline void listing_failed(const std::string& where, int err) {
    throw StorageError("listing " + where + " failed: " + std::strerror(err));
}
inline bool is_not_found(int err) noexcept { return err == ENOENT || err == ENOTDIR; }

[[noreturn]] inline void listing_too_long(const std::string& where) {
    throw StorageError("listing " + where + ": more than " + std::to_string(max_listing_keys) + " keys (max_listing_keys)");
}

// Whether the folder whose keys all start with `sub` (ending in '/') can hold a key that starts
// with `prefix` and sorts after `start_after`: the walks prune every other folder.
inline bool folder_may_hold(std::string_view sub, std::string_view prefix, std::string_view start_after) noexcept {
    const bool compatible = sub.size() <= prefix.size() ? prefix.starts_with(sub) : sub.starts_with(prefix);
    const bool before = !start_after.empty() && sub < start_after && !start_after.starts_with(sub);
    return compatible && !before;
}

// The portable walk: collects keys under `dir` (key prefix `rel`) that start with `prefix` and
// sort after `start_after`, pruning subtrees that cannot contain such keys.
inline void walk_portable(const std::filesystem::path& dir, const std::string& rel, std::string_view prefix,
                          std::string_view start_after, std::vector<std::string>& keys, std::size_t depth = 0) {
    if (depth > max_listing_depth) listing_too_deep(dir.string());
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        std::string key = rel.empty() ? name : rel + "/" + name;
        std::error_code tec;
        if (it->is_directory(tec)) {
            if (!folder_may_hold(key + "/", prefix, start_after)) continue;
            walk_portable(it->path(), key, prefix, start_after, keys, depth + 1);
        } else if (std::string_view(key).starts_with(prefix) && (start_after.empty() || std::string_view(key) > start_after)) {
            if (keys.size() >= max_listing_keys) listing_too_long(dir.string());
            keys.push_back(std::move(key));
        }
    }
    if (ec && !is_not_found(ec.value())) listing_failed(dir.string(), ec.value());
}

// The ordered walk: visits the entries of each folder in key order (a folder's keys all start with
// "name/", so it sorts as that) and stops once `n` keys are found.
inline void walk_first(const std::filesystem::path& dir, const std::string& rel, std::string_view prefix,
                       std::string_view start_after, std::size_t n, std::vector<std::string>& keys, std::size_t depth = 0) {
    if (depth > max_listing_depth) listing_too_deep(dir.string());
    struct Entry {
        std::string order;  // the name, with a '/' after a folder's
        std::filesystem::path path;
        bool folder;
    };
    std::vector<Entry> entries;
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        std::error_code tec;
        const bool folder = it->is_directory(tec);
        if (entries.size() >= max_listing_keys) listing_too_long(dir.string());
        entries.push_back({it->path().filename().string() + (folder ? "/" : ""), it->path(), folder});
    }
    if (ec && !is_not_found(ec.value())) listing_failed(dir.string(), ec.value());
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.order < b.order; });
    for (auto& e : entries) {
        if (keys.size() >= n) return;
        std::string key = rel.empty() ? e.order : rel + "/" + e.order;
        if (e.folder) {
            if (!folder_may_hold(key, prefix, start_after)) continue;  // key ends with '/'
            key.pop_back();
            walk_first(e.path, key, prefix, start_after, n, keys, depth + 1);
        } else if (std::string_view(key).starts_with(prefix) && (start_after.empty() || std::string_view(key) > start_after)) {
            keys.push_back(std::move(key));
        }
    }
}

inline std::string prefix_folder(std::string_view prefix) {
    const auto slash = prefix.rfind('/');
    return slash == std::string_view::npos ? std::string() : std::string(prefix.substr(0, slash));
}

inline std::vector<std::string> list_local_portable(const std::filesystem::path& root, std::string_view prefix,
                                                    std::string_view start_after = {}) {
    std::vector<std::string> keys;
    const std::string base_dir = prefix_folder(prefix);
    const auto start = base_dir.empty() ? root : root / base_dir;
    std::error_code ec;
    if (!std::filesystem::is_directory(start, ec)) return keys;
    walk_portable(start, base_dir, prefix, start_after, keys);
    std::sort(keys.begin(), keys.end());
    return keys;
}

inline std::vector<std::string> list_local_first_portable(const std::filesystem::path& root, std::string_view prefix,
                                                          std::string_view start_after, std::size_t n) {
    std::vector<std::string> keys;
    if (n == 0) return keys;
    const std::string base_dir = prefix_folder(prefix);
    const auto start = base_dir.empty() ? root : root / base_dir;
    std::error_code ec;
    if (!std::filesystem::is_directory(start, ec)) return keys;
    walk_first(start, base_dir, prefix, start_after, n, keys);
    return keys;
}

#ifdef SMDEBUG_HAS_GETDENTS
struct LinuxDirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[1];  // the name's first byte; the rest of it follows (a flexible array in the kernel's)
};

// Opens the folder `name` relative to `parent` (AT_FDCWD: a path). Not there (or removed while
// listed) gives a closed handle; any other failure throws naming `where`.
inline FileHandle open_folder(int parent, const char* name, const std::string& where) {
    FileHandle fd(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd && !is_not_found(errno)) listing_failed(where, errno);
    return fd;
}

// What both getdents64 walks share: the key being visited (one buffer, grown and cut back, so
// that skipping a name allocates nothing), the reading of a folder's entries and the test of
// whether an entry is a folder.
class DirentWalk {
public:
    DirentWalk(std::string_view prefix, std::string_view start_after, std::string root)
        : prefix_(prefix), start_after_(start_after), root_(std::move(root)) {}

    // The key of the folder the walk starts in (no trailing '/'; "" for the root).
    void set_key(std::string k) { key_ = std::move(k); }

protected:
    // Calls visit(name, d_type) for each entry of the open folder `fd` (key_), but "." and "..",
    // with key_ extended by "/name" during the call.
    template <class Visit>
    void for_each_entry(int fd, Visit&& visit) {
        if (depth_ > max_listing_depth) listing_too_deep(where());
        alignas(8) char buf[32768];
        while (true) {
            const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
            if (n < 0) {
                if (errno == EINTR) continue;
                listing_failed(where(), errno);
            }
            if (n == 0) break;
            for (long pos = 0; pos < n;) {
                const auto* d = reinterpret_cast<const LinuxDirent64*>(buf + pos);
                pos += d->d_reclen;
                const std::string_view name(d->d_name);
                if (name == "." || name == "..") continue;
                const std::size_t base = key_.size();
                if (!key_.empty()) key_ += '/';
                key_ += name;
                visit(d->d_name, d->d_type);
                key_.resize(base);
            }
        }
    }

    // Whether entry `name` of `fd` (key_) is a folder, following symbolic links as LocalStore
    // does; a dangling link is a file (it reads as not found). A link loop or a denied stat of an
    // entry that may be listed is an error.
    bool is_folder(int fd, const char* name, unsigned char type) const {
        if (type != DT_UNKNOWN && type != DT_LNK) return type == DT_DIR;
        struct stat st {};
        if (::fstatat(fd, name, &st, 0) == 0) return S_ISDIR(st.st_mode);
        if (!is_not_found(errno) && may_match()) listing_failed(where(), errno);
        return false;
    }

    // Walks the sub-folder `name` of `fd` (key_), one level deeper, with `walk(child_fd)`.
    template <class Walk>
    void descend(int fd, const char* name, Walk&& walk) {
        const FileHandle child = open_folder(fd, name, where());
        if (!child) return;  // removed while listed
        ++depth_;
        walk(child.get());
        --depth_;
    }

    // Whether key_ could be a listed key or a folder holding some (before its type is known).
    bool may_match() const {
        const std::string_view key(key_);
        return key.starts_with(prefix_) || prefix_.starts_with(key);
    }
    // Whether key_ (a file's) is listed.
    bool is_listed() const {
        const std::string_view key(key_);
        return key.starts_with(prefix_) && (start_after_.empty() || key > start_after_);
    }
    // Whether the folder key_ can hold a listed key.
    bool folder_may_be_listed() {
        key_ += '/';
        const bool may_hold = folder_may_hold(key_, prefix_, start_after_);
        key_.pop_back();
        return may_hold;
    }
    std::string where() const { return key_.empty() ? root_ : root_ + "/" + key_; }

    std::string_view prefix_, start_after_;
    std::string root_;  // for messages
    std::string key_;
    std::size_t depth_ = 0;
};

// The walk of list_local on getdents64: every listed key, unordered.
class FastLister : public DirentWalk {
public:
    FastLister(std::string_view prefix, std::string_view start_after, std::vector<std::string>& out, std::string root = {})
        : DirentWalk(prefix, start_after, std::move(root)), out_(out) {}

    // Walks the open folder `fd` whose key is key_.
    void walk(int fd) {
        for_each_entry(fd, [&](const char* name, unsigned char type) {
            if (is_folder(fd, name, type)) {
                if (folder_may_be_listed()) descend(fd, name, [&](int child) { walk(child); });
            } else if (is_listed()) {
                if (out_.size() >= max_listing_keys) listing_too_long(key_);
                out_.push_back(key_);
            }
        });
    }

private:
    std::vector<std::string>& out_;
};

// The ordered walk of list_local_first on getdents64: each folder's names that may be listed (or
// hold listed keys) are read, sorted as keys (a folder as "name/") and visited in that order until
// n keys are found.
class FirstKeysLister : public DirentWalk {
public:
    FirstKeysLister(std::string_view prefix, std::string_view start_after, std::size_t n, std::vector<std::string>& out,
                    std::string root = {})
        : DirentWalk(prefix, start_after, std::move(root)), n_(n), out_(out) {}

    // Walks the open folder `fd` whose key is key_.
    void walk(int fd) {
        struct Entry {
            std::string order;  // the name, with a '/' after a folder's
            bool folder;
        };
        std::vector<Entry> entries;
        for_each_entry(fd, [&](const char* name, unsigned char type) {
            const bool folder = is_folder(fd, name, type);
            if (!(folder ? folder_may_be_listed() : is_listed())) return;
            if (entries.size() >= max_listing_keys) listing_too_long(where());
            entries.push_back({folder ? std::string(name) + '/' : std::string(name), folder});
        });
        std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.order < b.order; });
        for (auto& e : entries) {
            if (out_.size() >= n_) return;
            const std::size_t base = key_.size();
            if (!key_.empty()) key_ += '/';
            if (e.folder) e.order.pop_back();
            key_ += e.order;
            if (e.folder) descend(fd, e.order.c_str(), [&](int child) { walk(child); });
            else out_.push_back(key_);
            key_.resize(base);
        }
    }

private:
    std::size_t n_;
    std::vector<std::string>& out_;
};
#endif
}  // namespace detail

// Every key under `root` that starts with `prefix` and sorts after `start_after` (when not
// empty), sorted.
inline std::vector<std::string> list_local(const std::filesystem::path& root, std::string_view prefix,
                                           std::string_view start_after = {}) {
#ifdef SMDEBUG_HAS_GETDENTS
    std::vector<std::string> keys;
    const std::string base_dir = detail::prefix_folder(prefix);
    const auto start = base_dir.empty() ? root : root / base_dir;
    const detail::FileHandle fd = detail::open_folder(AT_FDCWD, start.c_str(), start.string());
    if (!fd) return keys;
    detail::FastLister lister(prefix, start_after, keys, root.string());
    lister.set_key(base_dir);
    lister.walk(fd.get());
    std::sort(keys.begin(), keys.end());
    return keys;
#else
    return detail::list_local_portable(root, prefix, start_after);
#endif
}

// The first (at most) n keys that list_local(root, prefix, start_after) would return, reading
// only the folders that hold them (a search over a large index by step).
inline std::vector<std::string> list_local_first(const std::filesystem::path& root, std::string_view prefix,
                                                 std::string_view start_after, std::size_t n) {
    std::vector<std::string> keys;
    if (n == 0) return keys;
    const std::string base_dir = detail::prefix_folder(prefix);
    const auto start = base_dir.empty() ? root : root / base_dir;
#ifdef SMDEBUG_HAS_GETDENTS
    const detail::FileHandle fd = detail::open_folder(AT_FDCWD, start.c_str(), start.string());
    if (!fd) return keys;
    detail::FirstKeysLister lister(prefix, start_after, n, keys, root.string());
    lister.set_key(base_dir);
    lister.walk(fd.get());
    return keys;
#else
    return detail::list_local_first_portable(root, prefix, start_after, n);
#endif
}

}  // namespace smdebug
