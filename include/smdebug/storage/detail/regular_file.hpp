#pragma once
// Opening a trial's file for reading so that nothing in the trial can make the reader block or
// read something that is not a file: the open never waits (O_NONBLOCK: a FIFO would otherwise wait
// for a writer forever, a device or tty could too), and only a regular file is read. A FIFO,
// socket, device or folder where a file should be is a FormatError naming the path and what it is.
#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <smdebug/core/errors.hpp>

namespace smdebug::detail {

inline const char* file_kind_name(mode_t mode) noexcept {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

[[noreturn]] inline void throw_not_regular_file(const std::string& path, mode_t mode) {
    throw FileRefused(path + " is " + file_kind_name(mode) + ", not a regular file: a trial's files must be regular files");
}

// Throws FormatError unless the open descriptor `fd` is a regular file; returns its stat.
inline struct stat require_regular_file(int fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        throw StorageError("stat failed for " + path + ": " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) throw_not_regular_file(path, st.st_mode);
    return st;
}

// open(2) for reading that cannot block: -1 with errno set on failure. An open refused because the
// path is a socket (ENXIO, EOPNOTSUPP) is reported as what the path is.
inline int open_for_reading_nonblocking(const std::string& path) {
    for (;;) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd >= 0) return fd;
        const int err = errno;
        if (err == EINTR) continue;
        if (err == ENXIO || err == EOPNOTSUPP) {
            struct stat st {};
            if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) throw_not_regular_file(path, st.st_mode);
        }
        errno = err;
        return -1;
    }
}

}  // namespace smdebug::detail
