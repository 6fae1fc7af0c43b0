#pragma once
// RootContainment: checks that a file opened below a store's root is really inside that root once
// symbolic links are resolved (docs/deviations.md D22): a trial is untrusted input, and a link such
// as events/x.tfevents -> /etc/passwd must not make analysing it read other files. The check looks
// at what the open descriptor names (/proc/self/fd), so it is made after the open, on the file
// actually opened, once per open.
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include <unistd.h>

#include <smdebug/core/errors.hpp>

namespace smdebug::detail {

class RootContainment {
public:
    explicit RootContainment(std::filesystem::path root) : root_(std::move(root)) {}

    // Throws FormatError when `fd` (opened as `path`) resolves to a file outside the root.
    void check(int fd, const std::string& path) const {
        const auto real_root = resolved_root();
        if (!real_root) return;  // the root cannot be resolved: the open itself reported why
        const auto target = resolve_descriptor(fd, path);
        if (!target) return;
        if (*target == *real_root || (target->size() > real_root->size() && target->starts_with(*real_root) &&
                                      (*real_root == "/" || (*target)[real_root->size()] == '/')))
            return;
        throw FileRefused(path + " resolves to " + *target + ", outside the trial root " + *real_root +
                          " (a symbolic link leaves the trial; LocalReadOptions::allow_links_out_of_root permits it)");
    }

private:
    static std::optional<std::string> real_path(const std::string& p) {
        char buf[PATH_MAX];
        if (::realpath(p.c_str(), buf) == nullptr) return std::nullopt;
        return std::string(buf);
    }
    static std::optional<std::string> resolve_descriptor(int fd, const std::string& path) {
        char buf[PATH_MAX];
        const std::string link = "/proc/self/fd/" + std::to_string(fd);
        const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
        if (n > 0) return std::string(buf, static_cast<std::size_t>(n));
        return real_path(path);  // no /proc: resolve the name (racy, but still inside the check)
    }
    std::optional<std::string> resolved_root() const {
        std::lock_guard lock(mu_);
        if (!real_root_) real_root_ = real_path(root_.string());
        return real_root_;
    }

    std::filesystem::path root_;
    mutable std::mutex mu_;
    mutable std::optional<std::string> real_root_;
};

}  // namespace smdebug::detail
