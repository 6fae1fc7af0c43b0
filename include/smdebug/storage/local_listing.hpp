#pragma once
// list_local(): LocalStore's listing — the keys below a folder that start with a prefix and sort
// after a key, in byte order, pruning sub-folders that cannot hold such keys. On Linux it reads
// directories with getdents64 into a stack buffer and reuses one key buffer, so that skipping the
// names of a folder allocates nothing: a trial's refresh lists the index bucket of its listing
// position on every poll, and with up to 1000 names per bucket and worker std::filesystem's
// per-name cost (a path object and several allocations per entry) dominated a refresh. Elsewhere
// (and as the reference the tests compare against) the portable std::filesystem walk is used.
#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <system_error>

#if defined(__linux__)
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#define SMDEBUG_HAS_GETDENTS 1
#endif

namespace smdebug {

namespace detail {

// The portable walk: collects keys under `dir` (key prefix `rel`) that start with `prefix` and
// sort after `start_after`, pruning subtrees that cannot contain such keys.
inline void walk_portable(const std::filesystem::path& dir, const std::string& rel, std::string_view prefix,
                          std::string_view start_after, std::vector<std::string>& keys) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        std::string key = rel.empty() ? name : rel + "/" + name;
        std::error_code tec;
        if (it->is_directory(tec)) {
            std::string sub = key + "/";
            bool compatible = sub.size() <= prefix.size() ? prefix.starts_with(sub) : std::string_view(sub).starts_with(prefix);
            if (!compatible) continue;
            if (!start_after.empty() && std::string_view(sub) < start_after && !start_after.starts_with(sub)) continue;
            walk_portable(it->path(), key, prefix, start_after, keys);
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

#ifdef SMDEBUG_HAS_GETDENTS
struct LinuxDirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

class FastLister {
public:
    FastLister(std::string_view prefix, std::string_view start_after, std::vector<std::string>& out)
        : prefix_(prefix), start_after_(start_after), out_(out) {}

    // Walks the open folder `fd` whose key is key_ (no trailing '/'; "" for the root).
    void walk(int fd) {
        alignas(8) char buf[32768];
        while (true) {
            const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
            if (n <= 0) break;
            for (long pos = 0; pos < n;) {
                const auto* d = reinterpret_cast<const LinuxDirent64*>(buf + pos);
                pos += d->d_reclen;
                const std::string_view name(d->d_name);
                if (name == "." || name == "..") continue;
                const std::size_t base = key_.size();
                if (!key_.empty()) key_ += '/';
                key_ += name;
                visit(fd, d->d_name, d->d_type);
                key_.resize(base);
            }
        }
    }

private:
    void visit(int fd, const char* name, unsigned char type) {
        bool is_dir = type == DT_DIR;
        if (type == DT_UNKNOWN || type == DT_LNK) {  // follow symlinks, as LocalStore does
            struct stat st {};
            is_dir = ::fstatat(fd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
        }
        if (is_dir) {
            key_ += '/';
            const std::string_view sub(key_);
            const bool compatible = sub.size() <= prefix_.size() ? prefix_.starts_with(sub) : sub.starts_with(prefix_);
            const bool before = !start_after_.empty() && sub < start_after_ && !start_after_.starts_with(sub);
            key_.pop_back();
            if (!compatible || before) return;
            const int child = ::openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (child < 0) return;
            walk(child);
            ::close(child);
        } else {
            const std::string_view key(key_);
            if (key.starts_with(prefix_) && (start_after_.empty() || key > start_after_)) out_.emplace_back(key);
        }
    }

    std::string_view prefix_, start_after_;
    std::vector<std::string>& out_;
    std::string key_;

public:
    void set_key(std::string k) { key_ = std::move(k); }
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
    const int fd = ::open(start.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return keys;
    detail::FastLister lister(prefix, start_after, keys);
    lister.set_key(base_dir);
    lister.walk(fd);
    ::close(fd);
    std::sort(keys.begin(), keys.end());
    return keys;
#else
    return detail::list_local_portable(root, prefix, start_after);
#endif
}

}  // namespace smdebug
