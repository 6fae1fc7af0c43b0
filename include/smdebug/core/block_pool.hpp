#pragma once
// A process-wide pool of large byte blocks for read buffers.
//
// Why: a trial is read as thousands of event-file-sized blocks (~100 KB – 16 MB). Fresh blocks
// from malloc are fresh pages: each 4 KB page costs a page fault on first touch (expensive under
// virtualisation), and glibc returns freed large blocks to the kernel, so the next read faults
// again. Reading a 200 MB trial that way spent more time in page faults than in copying. Blocks
// returned to this pool keep their pages, so steady-state reads touch memory that is mapped and
// cache-warm. The pool is bounded (`retained_limit`); blocks it cannot keep are freed.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace smdebug::detail {

class BlockPool {
public:
    static constexpr std::size_t min_pooled_bytes = std::size_t{64} << 10;   // smaller blocks: plain malloc
    static constexpr std::size_t max_pooled_bytes = std::size_t{32} << 20;   // larger blocks are not kept
    static constexpr std::size_t retained_limit = std::size_t{48} << 20;     // bytes kept while unused
    static constexpr std::size_t granularity = std::size_t{16} << 10;        // capacities are multiples

    // A block of at least `size` bytes (uninitialised), returned to the pool when the last owner
    // lets go of it.
    std::shared_ptr<std::byte[]> acquire(std::size_t size) {
        if (size < min_pooled_bytes || size > max_pooled_bytes) return std::make_shared_for_overwrite<std::byte[]>(size);
        std::size_t capacity = (size + granularity - 1) / granularity * granularity;
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
        if (!block) block = static_cast<std::byte*>(::operator new(capacity, std::align_val_t{alignment}));
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
        for (const auto& f : drop) ::operator delete(f.block, std::align_val_t{alignment});
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
