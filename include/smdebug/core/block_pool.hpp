#pragma once
// A process-wide pool of large byte blocks for read buffers.
//
// Why: a trial is read as thousands of event-file-sized blocks (~100 KB – 16 MB). Fresh blocks
// from malloc are fresh pages: each 4 KB page costs a page fault on first touch (expensive under
// virtualisation), and glibc returns freed large blocks to the kernel, so the next read faults
// again. Reading a 200 MB trial that way spent more time in page faults than in copying. Blocks
// returned to this pool keep their pages, so steady-state reads touch memory that is mapped and
// cache-warm. The pool is bounded (`retained_limit`); blocks it cannot keep are freed.
// Blocks of 2 MiB and more are mapped on their own, 2 MiB-aligned and advised for transparent
// huge pages where Linux offers them: one fault then maps 512 pages (a fault costs ~12 µs under
// virtualisation, so a fresh 4 MiB batch buffer cost 12 ms of faults before).
#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace smdebug::detail {

class BlockPool {
public:
    static constexpr std::size_t min_pooled_bytes = std::size_t{64} << 10;   // smaller blocks: plain malloc
    static constexpr std::size_t max_pooled_bytes = std::size_t{32} << 20;   // larger blocks are not kept
    static constexpr std::size_t retained_limit = std::size_t{48} << 20;     // bytes kept while unused
    static constexpr std::size_t granularity = std::size_t{16} << 10;        // capacities are multiples
    static constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;     // from here on: own mapping

    // A block of at least `size` bytes (uninitialised), returned to the pool when the last owner
    // lets go of it.
    std::shared_ptr<std::byte[]> acquire(std::size_t size) {
        if (size < min_pooled_bytes || size > max_pooled_bytes) return std::make_shared_for_overwrite<std::byte[]>(size);
        const std::size_t unit = size >= huge_page_bytes ? huge_page_bytes : granularity;
        std::size_t capacity = (size + unit - 1) / unit * unit;
        std::byte* block = nullptr;
        {
            std::lock_guard lock(mu_);
            // Best fit among blocks not more than twice as large (keeps big blocks for big reads).
            auto best = free_.end();
            for (auto it = free_.begin(); it != free_.end(); ++it)
                if (it->capacity >= size && it->capacity <= 2 * capacity && (best == free_.end() || it->capacity < best->capacity))
                    best = it;
            if (best != free_.end()) {
                block = best->block;
                capacity = best->capacity;
                retained_ -= capacity;
                *best = free_.back();
                free_.pop_back();
            }
        }
        if (!block) block = allocate(capacity);
        try {
            return std::shared_ptr<std::byte[]>(block, Return{this, capacity});
        } catch (...) {
            release(block, capacity);
            throw;
        }
    }

    // Bytes held while unused (for tests and benchmarks).
    std::size_t retained_bytes() const {
        std::lock_guard lock(mu_);
        return retained_;
    }
    // Frees every unused block.
    void trim() {
        std::vector<Free> drop;
        {
            std::lock_guard lock(mu_);
            drop.swap(free_);
            retained_ = 0;
        }
        for (const auto& f : drop) deallocate(f.block, f.capacity);
    }

private:
    static constexpr std::size_t alignment = 64;
    struct Free {
        std::size_t capacity;
        std::byte* block;
    };
    struct Return {
        BlockPool* pool;
        std::size_t capacity;
        void operator()(std::byte* block) const noexcept { pool->release(block, capacity); }
    };

    void release(std::byte* block, std::size_t capacity) noexcept {
        {
            std::lock_guard lock(mu_);
            if (retained_ + capacity <= retained_limit) {
                try {
                    free_.push_back({capacity, block});
                    retained_ += capacity;
                    return;
                } catch (...) {
                }
            }
        }
        deallocate(block, capacity);
    }

    // Capacities of huge_page_bytes and more are whole huge pages (acquire rounds them).
    static std::byte* allocate(std::size_t capacity) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (capacity >= huge_page_bytes) {
            // Over-map by one huge page, then unmap the unaligned head and the tail.
            void* raw = ::mmap(nullptr, capacity + huge_page_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (raw == MAP_FAILED) throw std::bad_alloc();
            const auto base = reinterpret_cast<std::uintptr_t>(raw);
            const auto aligned = (base + huge_page_bytes - 1) & ~(std::uintptr_t{huge_page_bytes} - 1);
            if (aligned > base) ::munmap(raw, aligned - base);
            if (const auto tail = base + capacity + huge_page_bytes - (aligned + capacity))
                ::munmap(reinterpret_cast<void*>(aligned + capacity), tail);
            (void)::madvise(reinterpret_cast<void*>(aligned), capacity, MADV_HUGEPAGE);  // advice only
            return reinterpret_cast<std::byte*>(aligned);
        }
#endif
        return static_cast<std::byte*>(::operator new(capacity, std::align_val_t{alignment}));
    }
    static void deallocate(std::byte* block, std::size_t capacity) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (capacity >= huge_page_bytes) {
            ::munmap(block, capacity);
            return;
        }
#endif
        ::operator delete(block, std::align_val_t{alignment});
    }

    mutable std::mutex mu_;
    std::vector<Free> free_;
    std::size_t retained_ = 0;
};

// The pool read buffers come from. Never destroyed: blocks may outlive static destruction order.
inline BlockPool& block_pool() {
    static BlockPool* pool = new BlockPool;
    return *pool;
}

}  // namespace smdebug::detail
