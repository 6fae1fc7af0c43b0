#pragma once
// The files of the disk cache (storage/disk_cache_store.hpp). One file per cached object version,
//   <dir>/<2 hex digits>/<30 hex digits>.obj
// named by a hash of the object's identity (its URL, ETag and size), holding
//   "SMDCACH1" | u32 identity length | u32 CRC-32C of the bytes | u64 number of bytes | identity | bytes
// (integers little-endian). An entry is written to a temporary file in the same folder and renamed
// into place, so readers (any process) see no file or a whole one. A file whose length, identity or
// CRC disagrees is corrupt: it is removed and reported as absent, never returned.
// An entry's modification time is its last use (touched on first use by each cache object): the
// eviction removes the least recently used entries first.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/crc32c.hpp>
#include <smdebug/storage/detail/file_handle.hpp>

namespace smdebug::detail {

inline constexpr char cache_magic[8] = {'S', 'M', 'D', 'C', 'A', 'C', 'H', '1'};
inline constexpr std::size_t cache_header_bytes = 24;
inline constexpr std::string_view cache_entry_suffix = ".obj";
inline constexpr std::string_view cache_temp_suffix = ".tmp";

// "<2 hex>/<30 hex>.obj" for an identity (two 64-bit FNV-1a hashes; a collision is caught by the
// identity stored in the file, and then is a miss).
inline std::string cache_entry_name(std::string_view identity) {
    auto fnv = [&](std::uint64_t h) {
        for (unsigned char c : identity) h = (h ^ c) * 0x100000001b3ull;
        return h;
    };
    const std::uint64_t a = fnv(0xcbf29ce484222325ull), b = fnv(0x84222325cbf29ce4ull);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(40);
    for (std::uint64_t v : {a, b})
        for (int i = 60; i >= 0; i -= 4) {
            out += hex[(v >> i) & 0xf];
            if (out.size() == 2) out += '/';
        }
    out += cache_entry_suffix;
    return out;
}

// Reads exactly n bytes at offset; false on a short read or an error.
inline bool pread_exact(int fd, void* out, std::size_t n, std::uint64_t offset) noexcept {
    auto* p = static_cast<char*>(out);
    while (n > 0) {
        const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= static_cast<std::size_t>(r);
        offset += static_cast<std::uint64_t>(r);
    }
    return true;
}

inline bool write_all(int fd, const void* data, std::size_t n) noexcept {
    auto* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t r = ::write(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

template <class T>
void put_le(std::byte* at, T v) noexcept {
    for (std::size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}
template <class T>
T get_le(const std::byte* at) noexcept {
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(std::to_integer<unsigned>(at[i])) << (8 * i);
    return v;
}

// An entry opened and checked against its identity and length (not yet its CRC).
class CacheEntry {
public:
    // nullopt when there is no such file; a file that is not the entry of `identity` with `size`
    // bytes is removed (`corrupt` set) and nullopt returned.
    static std::optional<CacheEntry> open(const std::filesystem::path& file, std::string_view identity, std::uint64_t size,
                                          bool& corrupt) {
        corrupt = false;
        FileHandle fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) return std::nullopt;
        struct stat st {};
        std::vector<std::byte> head(cache_header_bytes + identity.size());
        bool ok = ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
                  static_cast<std::uint64_t>(st.st_size) == head.size() + size && pread_exact(fd.get(), head.data(), head.size(), 0) &&
                  std::memcmp(head.data(), cache_magic, sizeof cache_magic) == 0 &&
                  get_le<std::uint32_t>(head.data() + 8) == identity.size() && get_le<std::uint64_t>(head.data() + 16) == size &&
                  std::memcmp(head.data() + cache_header_bytes, identity.data(), identity.size()) == 0;
        if (!ok) {
            remove_file(file);
            corrupt = true;
            return std::nullopt;
        }
        return CacheEntry(std::move(fd), head.size(), size, get_le<std::uint32_t>(head.data() + 12));
    }

    // `length` bytes at `offset` of the object; nullopt when the file came out short.
    std::optional<ByteBuffer> read(std::uint64_t offset, std::uint64_t length) const {
        ByteBuffer b(static_cast<std::size_t>(length));
        if (length > 0 && !pread_exact(fd_.get(), b.data(), b.size(), content_offset_ + offset)) return std::nullopt;
        return b;
    }
    // The whole object, its CRC checked; nullopt when it disagrees.
    std::optional<ByteBuffer> read_verified() const {
        auto b = read(0, size_);
        if (!b || crc32c(b->bytes()) != crc_) return std::nullopt;
        return b;
    }

    static void remove_file(const std::filesystem::path& file) noexcept {
        std::error_code ec;
        std::filesystem::remove(file, ec);
    }

private:
    CacheEntry(FileHandle fd, std::uint64_t content_offset, std::uint64_t size, std::uint32_t crc)
        : fd_(std::move(fd)), content_offset_(content_offset), size_(size), crc_(crc) {}
    FileHandle fd_;
    std::uint64_t content_offset_, size_;
    std::uint32_t crc_;
};

// Writes the entry of `identity` holding `bytes` at `file` (temporary file, then rename). Returns
// the bytes the file takes, or 0 when it could not be written (a full disk: the read goes on
// uncached).
inline std::uint64_t write_cache_entry(const std::filesystem::path& file, std::string_view identity, std::span<const std::byte> bytes) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    // A fresh name (mkostemps: random, O_EXCL) per writer, whatever thread or process writes.
    std::string temp = file.string() + ".XXXXXX" + std::string(cache_temp_suffix);
    FileHandle fd(::mkostemps(temp.data(), static_cast<int>(cache_temp_suffix.size()), O_CLOEXEC));
    if (!fd) return 0;
    ::fchmod(fd.get(), 0644);
    std::byte head[cache_header_bytes];
    std::memcpy(head, cache_magic, sizeof cache_magic);
    put_le<std::uint32_t>(head + 8, static_cast<std::uint32_t>(identity.size()));
    put_le<std::uint32_t>(head + 12, crc32c(bytes));
    put_le<std::uint64_t>(head + 16, bytes.size());
    const bool ok = write_all(fd.get(), head, sizeof head) && write_all(fd.get(), identity.data(), identity.size()) &&
                    write_all(fd.get(), bytes.data(), bytes.size());
    fd = FileHandle();
    if (!ok || ::rename(temp.c_str(), file.c_str()) != 0) {
        CacheEntry::remove_file(temp);
        return 0;
    }
    return sizeof head + identity.size() + bytes.size();
}

// Marks an entry used now (its modification time orders the eviction).
inline void touch_cache_entry(const std::filesystem::path& file) noexcept { ::utimensat(AT_FDCWD, file.c_str(), nullptr, 0); }

// Removes the least recently used entries until the entries take at most `target` bytes, and
// temporary files older than an hour (left by a killed process). Returns the bytes left.
inline std::uint64_t evict_cache_entries(const std::filesystem::path& dir, std::uint64_t target, std::uint64_t* evicted = nullptr) {
    struct Entry {
        std::filesystem::file_time_type used;
        std::uint64_t bytes;
        std::filesystem::path path;
    };
    std::vector<Entry> entries;
    std::uint64_t total = 0;
    std::error_code ec;
    const auto stale_before = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec)) {
        std::error_code e2;
        if (!it->is_regular_file(e2)) continue;
        const auto name = it->path().filename().string();
        const auto used = it->last_write_time(e2);
        if (e2) continue;
        if (name.ends_with(cache_temp_suffix)) {
            if (used < stale_before) CacheEntry::remove_file(it->path());
            continue;
        }
        if (!name.ends_with(cache_entry_suffix)) continue;
        const std::uint64_t bytes = it->file_size(e2);
        if (e2) continue;
        entries.push_back({used, bytes, it->path()});
        total += bytes;
    }
    if (total <= target) return total;
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
    for (const auto& e : entries) {
        if (total <= target) break;
        CacheEntry::remove_file(e.path);
        total -= e.bytes;
        if (evicted) ++*evicted;
    }
    return total;
}

}  // namespace smdebug::detail
