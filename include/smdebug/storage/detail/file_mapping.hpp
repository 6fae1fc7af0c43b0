#pragma once
// Read-only mappings of page-cached files, for reading event-file ranges without a pread (and its
// copy out of the page cache) per range. A mapping is only ever read through guarded_copy
// (sigbus_guard.hpp): a file truncated under it gives `false` (the store's TruncatedData), never a
// SIGBUS that ends the process; no pointer into a mapping leaves the store, so the bytes users hold
// (values, numpy arrays) cannot fault later.
//
// When: only when asked (MapOptions::enabled, LocalReadOptions::map, SMDEBUG_LOCAL_MAP=1), and
// then on a file's second range read (after_reads), not its first. Measured on shape (a) (1,000
// event files of 205 KB, page cache hot, a 2-core VM where a page fault costs ~12 us), pread wins:
// a file read once (`smdebug verify`, step-major reads: one coalesced pread per file) costs 2.4x
// the CPU time when mapped (345-370 ms instead of 140-160 ms for verify: mmap, the faults or
// MAP_POPULATE, munmap cost more than pread's copy); files read in 50 ranges each (tensor-major
// reads, one record per tensor) save 196,000 of 212,000 preads of bench_trials but take 5x the
// page faults (38,000 instead of 4,000-8,000) and as much or more time (every value tensor-major
// 420-490 ms mapped, 330-450 ms with pread; every mean(abs) 540-600 ms against 380-390 ms).
// MAP_POPULATE was slower still. Where a fault is cheap (bare metal) the balance may differ.
//
// Bounded: files below min_bytes or above max_file_bytes are read with pread, and at most
// max_total_bytes are mapped at once by one store (a mapping lives as long as its cached descriptor).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <signal.h>
#include <sys/mman.h>

#include <smdebug/storage/detail/sigbus_guard.hpp>

namespace smdebug::detail {

struct MapOptions {
    bool enabled = false;                                 // pread unless asked (measured, see above)
    std::uint64_t min_bytes = 64u << 10;                  // smaller files: pread
    std::uint64_t max_file_bytes = std::uint64_t{1} << 30;  // larger files: pread
    std::uint64_t max_total_bytes = std::uint64_t{4} << 30; // mapped at once by one store
    bool populate = false;                                // MAP_POPULATE (measured slower, see above)
    std::uint32_t after_reads = 1;                        // range reads of a file with pread before it is mapped
};

class FileMapping {
public:
    FileMapping(const std::byte* data, std::size_t size, std::shared_ptr<std::atomic<std::uint64_t>> total)
        : data_(data), size_(size), total_(std::move(total)) {}
    ~FileMapping() {
        ::munmap(const_cast<std::byte*>(data_), size_);
        total_->fetch_sub(size_, std::memory_order_relaxed);
    }
    FileMapping(const FileMapping&) = delete;
    FileMapping& operator=(const FileMapping&) = delete;

    std::size_t size() const noexcept { return size_; }
    // Copies [offset, offset + n) (inside size()) to out; false when the file no longer holds it.
    bool copy(std::byte* out, std::uint64_t offset, std::size_t n) const {
        return guarded_copy(out, data_ + offset, n);
    }

private:
    const std::byte* data_;
    std::size_t size_;
    std::shared_ptr<std::atomic<std::uint64_t>> total_;
};

class FileMapper {
public:
    explicit FileMapper(MapOptions options = {}) : options_(options) {}

    const MapOptions& options() const noexcept { return options_; }
    std::uint64_t mapped_bytes() const noexcept { return total_->load(std::memory_order_relaxed); }
    std::uint64_t mappings_made() const noexcept { return made_.load(std::memory_order_relaxed); }

    // A mapping of the first `size` bytes of `fd`; null when the file should be read with pread
    // (limits, no SIGBUS guard, mmap refused).
    std::shared_ptr<const FileMapping> map(int fd, std::uint64_t size) const {
        if (!options_.enabled || size < options_.min_bytes || size > options_.max_file_bytes || size == 0) return nullptr;
        if (!guard_in_place()) return nullptr;
        if (total_->fetch_add(size, std::memory_order_relaxed) + size > options_.max_total_bytes) {
            total_->fetch_sub(size, std::memory_order_relaxed);
            return nullptr;
        }
        const int flags = MAP_SHARED | (options_.populate ? MAP_POPULATE : 0);
        void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, flags, fd, 0);
        if (p == MAP_FAILED) {
            total_->fetch_sub(size, std::memory_order_relaxed);
            return nullptr;
        }
        made_.fetch_add(1, std::memory_order_relaxed);
        try {
            return std::make_shared<const FileMapping>(static_cast<const std::byte*>(p), static_cast<std::size_t>(size), total_);
        } catch (...) {
            ::munmap(p, static_cast<std::size_t>(size));
            total_->fetch_sub(size, std::memory_order_relaxed);
            throw;
        }
    }

private:
    // Our SIGBUS handler is installed and still the process's (a library or Python's faulthandler
    // may have replaced it since: then no mapping, pread instead).
    static bool guard_in_place() {
        if (!sigbus_guard_available()) return false;
        struct sigaction now {};
        return ::sigaction(SIGBUS, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
               now.sa_sigaction == &sigbus_detail::handler;
    }

    MapOptions options_;
    std::shared_ptr<std::atomic<std::uint64_t>> total_ = std::make_shared<std::atomic<std::uint64_t>>(0);
    mutable std::atomic<std::uint64_t> made_{0};
};

}  // namespace smdebug::detail
