#pragma once
// HugePageArena: a std::pmr::memory_resource for one large data structure that is built once and
// then grows in place (a trial's index). Small blocks (up to 64 KiB) come from 2 MiB blocks advised
// for transparent huge pages (after one small first block, so that a small structure commits
// little), rounded up to a power of two and reused by size when freed; larger ones get a mapping of
// their own (huge pages from 1 MiB on), unmapped when freed. Everything returns to the system with
// the arena. Waste is bounded: at most half of a small block, 64 KiB at the end of a 2 MiB block.
//
// Why: opening a trial of 1,000 steps x 50 tensors writes ~2 MB of arrays, maps and per-step lists
// into fresh heap pages, one page fault per 4 KiB (~15 us under virtualisation: ~300 faults, 4-5 ms
// of a 19 ms open through Python), unless the whole process opted into use_huge_page_heap(). The
// arena gets the same effect for the index alone, without changing malloc for the process.
//
// Not thread-safe, like the structure it serves: one writer at a time, readers never allocate.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <unordered_map>
#include <vector>

#include <smdebug/core/huge_page_heap.hpp>

namespace smdebug {

class HugePageArena final : public std::pmr::memory_resource {
public:
    static constexpr std::size_t first_block_bytes = std::size_t{64} << 10;
    static constexpr std::size_t block_bytes = HugePageBlock::huge_page_bytes;
    static constexpr std::size_t smallest_bytes = 16;
    static constexpr std::size_t largest_small_bytes = std::size_t{64} << 10;  // larger: a mapping of its own
    static constexpr std::size_t huge_own_bytes = std::size_t{1} << 20;        // from here on in huge pages

    HugePageArena() = default;
    HugePageArena(const HugePageArena&) = delete;
    HugePageArena& operator=(const HugePageArena&) = delete;
    ~HugePageArena() override = default;

    // Bytes mapped for the arena now (its blocks, including memory not handed out yet).
    std::size_t mapped_bytes() const noexcept {
        std::size_t n = 0;
        for (const auto& b : blocks_) n += b.size();
        for (const auto& [p, b] : own_) n += b.size();
        return n;
    }

private:
    static constexpr std::size_t classes = std::bit_width(largest_small_bytes) - std::bit_width(smallest_bytes) + 1;
    static std::size_t round_up(std::size_t n, std::size_t unit) noexcept { return (n + unit - 1) / unit * unit; }
    static std::size_t class_of(std::size_t bytes) noexcept {
        return static_cast<std::size_t>(std::bit_width(std::bit_ceil(std::max(bytes, smallest_bytes)))) - std::bit_width(smallest_bytes);
    }
    struct FreeBlock {
        FreeBlock* next;
    };

    void* do_allocate(std::size_t bytes, std::size_t align) override {
        if (bytes > largest_small_bytes || align > largest_small_bytes) return allocate_own(bytes, align);
        const std::size_t c = class_of(std::max(bytes, align));
        if (FreeBlock* f = free_[c]) {
            free_[c] = f->next;
            return f;
        }
        const std::size_t size = smallest_bytes << c;  // a power of two: aligned for any align <= size
        std::size_t at = round_up(used_, size);
        if (blocks_.empty() || at + size > blocks_.back().size()) {
            // A small first block in 4 KiB pages (a small index touches few of them), then huge pages.
            const bool small = blocks_.empty();
            blocks_.emplace_back(small ? first_block_bytes : block_bytes, !small);
            at = 0;
        }
        used_ = at + size;
        return static_cast<char*>(blocks_.back().data()) + at;
    }
    void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
        if (bytes > largest_small_bytes || align > largest_small_bytes) {
            own_.erase(p);
            return;
        }
        const std::size_t c = class_of(std::max(bytes, align));
        free_[c] = ::new (p) FreeBlock{free_[c]};
    }
    bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }

    void* allocate_own(std::size_t bytes, std::size_t align) {
        const bool huge = bytes >= huge_own_bytes || align > 4096;  // huge mappings are 2 MiB-aligned
        HugePageBlock block(huge ? round_up(bytes, block_bytes) : round_up(bytes, 4096), huge);
        void* p = block.data();
        own_.emplace(p, std::move(block));
        return p;
    }

    std::vector<HugePageBlock> blocks_;
    std::size_t used_ = 0;  // bytes handed out of blocks_.back()
    std::array<FreeBlock*, classes> free_{};
    std::unordered_map<void*, HugePageBlock> own_;
};

}  // namespace smdebug
