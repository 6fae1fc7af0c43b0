#pragma once
// BeneathOpener: opens a file below a store's root so that the kernel keeps the open inside the
// root (docs/deviations.md D22), in one system call: openat2(root_fd, key, RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS) on a descriptor of the root opened once (O_PATH) and shared by copies of
// the store. The root_containment.hpp check (open, then readlink of /proc/self/fd) stays the
// authority wherever openat2 cannot decide:
// - EXDEV / ELOOP: RESOLVE_BENEATH refuses every absolute link and every ".." that climbs above
//   the root, even one that lands inside it again; such a file is opened by its path and checked,
//   so a link resolving inside the root is still followed.
// - ENOSYS / EPERM / EINVAL / E2BIG (an old kernel, a seccomp filter): openat2 is not tried again.
// - any other failure (a missing file, a socket, a root folder replaced since it was opened): the
//   plain open gives the answer and its error; a root folder that was replaced is opened again.
// With allow_links_out_of_root the plain open is used and nothing is checked.
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__linux__) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define SMDEBUG_HAVE_OPENAT2 1
#endif

#include <smdebug/storage/detail/regular_file.hpp>
#include <smdebug/storage/detail/root_containment.hpp>

namespace smdebug::detail {

class BeneathOpener {
public:
    BeneathOpener(std::filesystem::path root, bool allow_links_out_of_root)
        : root_(std::move(root)), allow_links_(allow_links_out_of_root), containment_(root_) {}
    BeneathOpener(const BeneathOpener&) = delete;
    BeneathOpener& operator=(const BeneathOpener&) = delete;

    struct Opened {
        int fd = -1;             // -1: errno says why (as open(2) would)
        bool contained = false;  // the kernel kept the open below the root: no check needed
    };

    // Opens `path` (the root's path joined with `key`, `key` being its NUL-terminated tail) for
    // reading without blocking. Throws FileRefused for a socket (open_for_reading_nonblocking).
    Opened open(const std::string& path, const char* key) const {
        if (allow_links_) return {open_for_reading_nonblocking(path), true};
#ifdef SMDEBUG_HAVE_OPENAT2
        if (use_openat2_.load(std::memory_order_relaxed)) {
            const std::shared_ptr<const Directory> root = root_dir();
            if (root) {
                open_how how{};
                how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
                how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
                long fd;
                do fd = ::syscall(SYS_openat2, root->fd, key, &how, sizeof how);
                while (fd < 0 && errno == EINTR);
                if (fd >= 0) {
                    beneath_opens_.fetch_add(1, std::memory_order_relaxed);
                    return {static_cast<int>(fd), true};
                }
                const int err = errno;
                if (err == ENOSYS || err == EPERM || err == EINVAL || err == E2BIG)
                    use_openat2_.store(false, std::memory_order_relaxed);
                const Opened plain{open_for_reading_nonblocking(path), false};
                if (plain.fd >= 0 && (err == ENOENT || err == ENOTDIR)) reopen_root(root);
                return plain;
            }
        }
#else
        (void)key;
#endif
        return {open_for_reading_nonblocking(path), false};
    }

    // Throws FileRefused when `fd`, opened as `path` by the plain open, resolves outside the root.
    void check(int fd, const std::string& path) const {
        if (!allow_links_) containment_.check(fd, path);
    }

    // Opens that the kernel contained (tests and benchmarks: is openat2 in use?).
    std::uint64_t beneath_opens() const noexcept { return beneath_opens_.load(std::memory_order_relaxed); }

private:
    // The root's descriptor, closed when the last opener using it is done (a thread may still
    // be in openat2 on it while another replaces it).
    struct Directory {
        explicit Directory(int d) : fd(d) {}
        ~Directory() { ::close(fd); }
        Directory(const Directory&) = delete;
        Directory& operator=(const Directory&) = delete;
        int fd;
    };
    std::shared_ptr<const Directory> open_root() const {
        const int fd = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? nullptr : std::make_shared<const Directory>(fd);
    }
    std::shared_ptr<const Directory> root_dir() const {
        std::lock_guard lock(mu_);
        if (!root_dir_) root_dir_ = open_root();  // null while the root does not exist: tried again next time
        return root_dir_;
    }
    void reopen_root(const std::shared_ptr<const Directory>& stale) const {
        std::lock_guard lock(mu_);
        if (root_dir_ == stale) root_dir_ = open_root();  // else another thread did it
    }

    std::filesystem::path root_;
    bool allow_links_;
    RootContainment containment_;
    mutable std::mutex mu_;
    mutable std::shared_ptr<const Directory> root_dir_;
    mutable std::atomic<bool> use_openat2_{true};
    mutable std::atomic<std::uint64_t> beneath_opens_{0};
};

}  // namespace smdebug::detail
