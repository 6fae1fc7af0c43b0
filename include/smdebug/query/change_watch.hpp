#pragma once
// ChangeWatch: lets a reader that waits for a running job (wait_for_steps, waiting for a trial to
// appear, `smdebug watch`) wake as soon as the writer publishes a file, instead of sleeping a whole
// poll interval. On Linux it uses inotify on the trial root, index/, the newest index bucket
// folders and collections/000000000/ (inotify is not recursive, so new bucket folders are added as
// they appear); while the root does not exist yet it watches the deepest existing ancestor. Where
// inotify is unavailable (other systems, no watches left) wait() simply sleeps: callers poll with
// backoff either way, so a missed event costs at most one poll interval, never correctness.
//
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <smdebug/format/paths.hpp>
#include <smdebug/storage/store.hpp>

#if defined(__linux__)
#include <cerrno>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>
#define SMDEBUG_HAS_INOTIFY 1
#endif

namespace smdebug {

class ChangeWatch {
public:
    explicit ChangeWatch(std::filesystem::path root) : root_(std::move(root)) {
#ifdef SMDEBUG_HAS_INOTIFY
        fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd_ >= 0) arm();
#endif
    }
    ~ChangeWatch() {
#ifdef SMDEBUG_HAS_INOTIFY
        if (fd_ >= 0) ::close(fd_);
#endif
    }
    ChangeWatch(const ChangeWatch&) = delete;
    ChangeWatch& operator=(const ChangeWatch&) = delete;

    const std::filesystem::path& root() const noexcept { return root_; }
    // True when change notifications work (otherwise wait() only sleeps).
    bool active() const noexcept { return fd_ >= 0 && !watches_.empty(); }
    std::size_t watch_count() const noexcept { return watches_.size(); }

    // Blocks until a file or folder was published under the watched folders since the watch was
    // created or since the previous wait() returned, or until `timeout` passes. Returns true when
    // woken by a change. Temporary files ("*.tmp", as LocalStore and smdebug's writers use) and
    // in-place creations of files (IN_CREATE; the file is complete only at close or rename) do
    // not count as changes.
    bool wait(std::chrono::milliseconds timeout) {
#ifdef SMDEBUG_HAS_INOTIFY
        if (fd_ >= 0) {
            if (watches_.empty()) arm();
            if (!watches_.empty()) {
                const auto deadline = std::chrono::steady_clock::now() + timeout;
                while (true) {
                    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now());
                    pollfd p{fd_, POLLIN, 0};
                    const int r = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
                    if (r < 0 && errno == EINTR) continue;
                    if (r <= 0) return false;
                    const bool relevant = drain();
                    if (relevant) return true;
                    if (std::chrono::steady_clock::now() >= deadline) return false;
                }
            }
        }
#endif
        std::this_thread::sleep_for(timeout);
        return false;
    }

private:
#ifdef SMDEBUG_HAS_INOTIFY
    static constexpr std::uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF;

    // Reads every queued event; true when one of them is a change a reader cares about. Folder
    // events re-arm the watches (a new index bucket, the root appearing).
    bool drain() {
        bool relevant = false, rearm = false;
        alignas(inotify_event) char buf[16384];
        while (true) {
            const ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n <= 0) break;
            for (char* p = buf; p < buf + n;) {
                const auto* ev = reinterpret_cast<const inotify_event*>(p);
                p += sizeof(inotify_event) + ev->len;
                const std::string_view name = ev->len ? std::string_view(ev->name) : std::string_view();
                if (ev->mask & (IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
                    relevant = rearm = true;
                    if (ev->mask & IN_IGNORED) watches_.erase(ev->wd);
                } else if (ev->mask & IN_ISDIR) {
                    // While waiting for the root to appear only the next folder on its path counts.
                    if (toward_root_.empty() || name == toward_root_) relevant = rearm = true;
                } else if (!name.ends_with(".tmp") && (ev->mask & (IN_MOVED_TO | IN_CLOSE_WRITE))) {
                    relevant = true;
                }
            }
        }
        if (rearm) arm();
        return relevant;
    }

    // The folders worth watching now.
    std::vector<std::filesystem::path> wanted() {
        std::vector<std::filesystem::path> out;
        std::error_code ec;
        toward_root_.clear();
        if (!std::filesystem::is_directory(root_, ec)) {
            // Wait for the root to appear: watch its deepest existing ancestor.
            auto p = root_.has_parent_path() ? root_.parent_path() : std::filesystem::path(".");
            while (!p.empty() && !std::filesystem::is_directory(p, ec)) {
                if (!p.has_parent_path() || p.parent_path() == p) { p.clear(); break; }
                p = p.parent_path();
            }
            if (p.empty()) p = ".";
            // The component of root_ just below p: the only folder creation that matters there.
            const auto rel = root_.lexically_relative(p);
            if (!rel.empty() && rel.begin() != rel.end() && *rel.begin() != "..") toward_root_ = rel.begin()->string();
            out.push_back(p);
            return out;
        }
        out.push_back(root_);
        for (std::string_view sub : {paths::index_folder, paths::collections_folder, paths::collections_bucket_folder}) {
            const auto d = root_ / sub;
            if (std::filesystem::is_directory(d, ec)) out.push_back(d);
        }
        // The two newest index buckets (index/<step // 1000>): new files land in the newest one;
        // the one before catches slow workers near a bucket boundary.
        std::vector<std::string> buckets;
        const auto index_dir = root_ / paths::index_folder;
        for (std::filesystem::directory_iterator it(index_dir, ec), end; !ec && it != end; it.increment(ec)) {
            std::error_code dec;
            if (it->is_directory(dec)) buckets.push_back(it->path().filename().string());
        }
        std::sort(buckets.begin(), buckets.end());
        for (std::size_t i = buckets.size() > 2 ? buckets.size() - 2 : 0; i < buckets.size(); ++i)
            out.push_back(index_dir / buckets[i]);
        return out;
    }

    void arm() {
        const auto want = wanted();
        std::map<int, std::filesystem::path> next;
        for (const auto& d : want) {
            const int wd = ::inotify_add_watch(fd_, d.c_str(), mask | IN_ONLYDIR);
            if (wd >= 0) next[wd] = d;
        }
        for (const auto& [wd, path] : watches_)
            if (!next.contains(wd)) ::inotify_rm_watch(fd_, wd);
        watches_ = std::move(next);
    }
#endif

    std::filesystem::path root_;
    std::string toward_root_;  // while the root is missing: the folder name to wait for
    int fd_ = -1;
    std::map<int, std::filesystem::path> watches_;  // watch descriptor -> folder
};

// Creates the watch ahead of a check-then-wait loop, so that a change landing between the check
// and the wait still wakes the waiter.
template <class S>
void prepare_store_watch(const S& store, std::unique_ptr<ChangeWatch>& watch) {
    if (!watch)
        if (auto root = local_root_of(store)) watch = std::make_unique<ChangeWatch>(std::move(*root));
}

// Waits up to `timeout` for a change under the store: through `watch` (created on first use for local stores; keep it between calls so that
// changes made between two waits are not missed), else by sleeping. True when woken by a change.
template <class S>
bool wait_for_store_change(const S& store, std::unique_ptr<ChangeWatch>& watch, std::chrono::milliseconds timeout) {
    prepare_store_watch(store, watch);
    if (watch) return watch->wait(timeout);
    std::this_thread::sleep_for(timeout);
    return false;
}


}  // namespace smdebug
