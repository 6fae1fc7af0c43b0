#pragma once
// FileHandle: an open file descriptor (a file or a folder), closed when it goes out of scope —
// also when the code using it throws. POSIX only.
#include <utility>

#include <unistd.h>

namespace smdebug::detail {

class FileHandle {
public:
    explicit FileHandle(int fd = -1) noexcept : fd_(fd) {}
    FileHandle(FileHandle&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    FileHandle& operator=(FileHandle&& o) noexcept {
        std::swap(fd_, o.fd_);
        return *this;
    }
    ~FileHandle() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }

private:
    int fd_;
};

}  // namespace smdebug::detail
