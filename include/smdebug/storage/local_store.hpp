#pragma once
// LocalStore: a trial root on the local file system. Ranges are read with pread into an
// uninitialised buffer (no whole-file reads for a range); writes go to "<key>.tmp", are fsync'ed
// and renamed into place so readers never observe a partial object.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <smdebug/core/errors.hpp>
#include <smdebug/storage/local_listing.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

class LocalStore {
public:
    // fsync: write() returns once the object is on stable storage (the default: the writer never
    // loses a step it reported saved). none: the same atomic rename, without the fsync — for
    // scratch trials, fixtures and benchmarks.
    enum class Durability { fsync, none };

    explicit LocalStore(std::filesystem::path root, Durability durability = Durability::fsync)
        : root_(std::move(root)), durability_(durability) {}

    const std::filesystem::path& root() const noexcept { return root_; }
    std::string describe(std::string_view key) const { return (root_ / std::string(key)).string(); }

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        return list_local(root_, prefix, start_after);
    }

    bool exists(std::string_view key) const {
        struct stat st {};
        return ::stat(describe(key).c_str(), &st) == 0;
    }

    ByteBuffer read(std::string_view key) const {
        File f(describe(key));
        struct stat st {};
        if (::fstat(f.fd, &st) != 0) throw_errno("stat", f.path);
        return read_exact(f, 0, static_cast<std::uint64_t>(st.st_size));
    }

    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        File f(describe(key));
        return read_exact(f, offset, length);
    }

    void write(std::string_view key, std::span<const std::byte> bytes) const {
        const auto final_path = root_ / std::string(key);
        const auto tmp_path = final_path.string() + ".tmp";
        std::error_code ec;
        std::filesystem::create_directories(final_path.parent_path(), ec);
        if (ec) throw StorageError("cannot create directory " + final_path.parent_path().string() + ": " + ec.message());
        int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) throw_errno("open for writing", tmp_path);
        std::size_t done = 0;
        while (done < bytes.size()) {
            ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
            if (n < 0) {
                if (errno == EINTR) continue;
                int err = errno;
                ::close(fd);
                ::unlink(tmp_path.c_str());
                errno = err;
                throw_errno("write", tmp_path);
            }
            done += static_cast<std::size_t>(n);
        }
        if (durability_ == Durability::fsync && ::fsync(fd) != 0) {
            int err = errno;
            ::close(fd);
            ::unlink(tmp_path.c_str());
            errno = err;
            throw_errno("fsync", tmp_path);
        }
        if (::close(fd) != 0) throw_errno("close", tmp_path);
        if (::rename(tmp_path.c_str(), final_path.c_str()) != 0) throw_errno("rename", tmp_path);
    }

    void remove(std::string_view key) const {
        const auto p = describe(key);
        if (::unlink(p.c_str()) != 0 && errno != ENOENT) throw_errno("remove", p);
    }

private:
    struct File {
        explicit File(std::string p) : path(std::move(p)) {
            fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                if (errno == ENOENT || errno == ENOTDIR) throw ObjectNotFound("no such file: " + path);
                throw_errno("open", path);
            }
        }
        ~File() { ::close(fd); }
        File(const File&) = delete;
        File& operator=(const File&) = delete;
        std::string path;
        int fd = -1;
    };

    [[noreturn]] static void throw_errno(const char* what, const std::string& path) {
        throw StorageError(std::string(what) + " failed for " + path + ": " + std::strerror(errno));
    }

    static ByteBuffer read_exact(const File& f, std::uint64_t offset, std::uint64_t length) {
        // A range past the end (an index entry claiming terabytes) fails before allocating it.
        struct stat st {};
        if (::fstat(f.fd, &st) == 0 && (offset > static_cast<std::uint64_t>(st.st_size) ||
                                        length > static_cast<std::uint64_t>(st.st_size) - offset))
            throw TruncatedData(f.path + ": wanted " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                                " but the file has " + std::to_string(st.st_size) + " bytes");
        ByteBuffer buf(static_cast<std::size_t>(length));
        std::uint64_t done = 0;
        while (done < length) {
            ssize_t n = ::pread(f.fd, buf.data() + done, length - done, static_cast<off_t>(offset + done));
            if (n < 0) {
                if (errno == EINTR) continue;
                throw_errno("read", f.path);
            }
            if (n == 0)
                throw TruncatedData(f.path + ": wanted " + std::to_string(length) + " bytes at offset " +
                                    std::to_string(offset) + " but the file ends after " +
                                    std::to_string(offset + done) + " bytes");
            done += static_cast<std::uint64_t>(n);
        }
        return buf;
    }

    std::filesystem::path root_;
    Durability durability_ = Durability::fsync;
};

static_assert(WritableStore<LocalStore>);

}  // namespace smdebug
