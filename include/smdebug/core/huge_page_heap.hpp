#pragma once
// Fewer page faults for large trials: HugePageBlock, memory of its own backed by transparent huge
// pages (the index uses it), and opt-in process tuning for programs that open large trials: the
// malloc heap grows in large steps backed by transparent huge pages.
//
// Why: opening a trial builds an index of tens of thousands of small objects, and each fresh 4 KiB
// page of heap costs a page fault on first touch. Under virtualisation a fault costs about 12 µs
// (measured on the 2-core CI machine), so opening a 1000-step × 50-tensor trial spent a third of
// its time faulting in heap pages. With the heap in 2 MiB pages, one fault maps 512 pages.
//
// This changes malloc settings for the whole process, so the library never does it on its own:
// programs call it once, at the start of main, before they start threads (the smdebug CLI, the
// benchmarks). It is a no-op returning false where glibc or THP are not available, and in any
// case behaviour is unchanged — only page faults are fewer. Memory is committed as it is touched,
// in 2 MiB units, so peak RSS can grow by up to 2 MiB per partly used huge page.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <cstring>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
#endif
// Under LeakSanitizer, memory the library maps itself is scanned for pointers like the heap: the
// index keeps pointers to heap objects in HugePageBlocks.
#if defined(__SANITIZE_ADDRESS__)
#define SMDEBUG_LEAK_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define SMDEBUG_LEAK_SANITIZER 1
#endif
#endif
#if defined(SMDEBUG_LEAK_SANITIZER)
#include <sanitizer/lsan_interface.h>
#endif

namespace smdebug {

namespace detail {
inline std::atomic<bool> huge_page_heap_in_use{false};
}  // namespace detail

// Whether use_huge_page_heap() took effect in this process: large structures then come from the
// heap as they are, instead of from huge-page memory of their own (HugePageArena).
inline bool huge_page_heap_active() noexcept { return detail::huge_page_heap_in_use.load(std::memory_order_relaxed); }

// Grows the main heap by `reserve` bytes now and advises the kernel to back them with huge pages;
// later growth is as usual. Returns whether the advice was taken.
inline bool use_huge_page_heap(std::size_t reserve = std::size_t{24} << 20) {
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t huge_page = std::uintptr_t{2} << 20;
    constexpr std::size_t mmap_threshold = std::size_t{32} << 20;  // glibc's largest
    if (reserve < 2 * huge_page || reserve >= mmap_threshold) return false;
    // Blocks below 32 MiB come from the heap (not from their own mmap, which would fault again),
    // and free memory at the top of the heap is kept rather than trimmed and faulted in again.
    if (!mallopt(M_MMAP_THRESHOLD, static_cast<int>(mmap_threshold)) || !mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * reserve)))
        return false;
    // One allocation spanning the new memory: malloc writes only at its two ends, so the 2 MiB
    // ranges in between have no page table yet and their first touch can map a huge page (a
    // range with one 4 KiB page already mapped stays in 4 KiB pages). Freed, it returns to the top.
    // The allocation also takes the free space already at the top of the heap (keepcost), so
    // that `reserve` fresh bytes follow it.
    const std::size_t size = std::min(reserve + mallinfo2().keepcost, mmap_threshold - huge_page);
    auto* const before = static_cast<char*>(sbrk(0));
    auto* const grow = static_cast<char*>(std::malloc(size));
    if (!grow) return false;
    if (grow + size > static_cast<char*>(sbrk(0)) || before == reinterpret_cast<char*>(-1)) {  // not glibc's brk heap
        std::free(grow);                                                                           // (a sanitizer's malloc)
        return false;
    }
    const auto begin = (std::max(reinterpret_cast<std::uintptr_t>(before), reinterpret_cast<std::uintptr_t>(grow)) + huge_page - 1) &
                       ~(huge_page - 1);
    const auto end = reinterpret_cast<std::uintptr_t>(grow + size) & ~(huge_page - 1);
    const bool advised = end > begin && madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE) == 0;
    std::free(grow);
    if (!advised) return false;
    // The heap's 2 MiB range that was partly in use already can only have 4 KiB pages, and the
    // next allocations would come from its unused rest, one fault per 4 KiB (about 130 faults of
    // opening a 1000-step trial). A block from the top of the heap up to the first huge page, kept
    // for good and never written (its pages stay unbacked), makes them start in the huge pages.
    static void* skipped_to_huge_pages = nullptr;
    constexpr std::uintptr_t chunk_overhead = 2 * sizeof(std::size_t);
    if (const auto from = reinterpret_cast<std::uintptr_t>(grow); !skipped_to_huge_pages && begin > from + 2 * chunk_overhead) {
        void* const pad = std::malloc(begin - from - 2 * chunk_overhead);
        if (pad == grow) skipped_to_huge_pages = pad;  // the top of the heap, as when `grow` was taken
        else std::free(pad);
    }
    detail::huge_page_heap_in_use.store(true, std::memory_order_relaxed);
    return true;
#else
    (void)reserve;
    return false;
#endif
}

// Memory of its own mapping for data structures that grow large (a trial's index), advised for
// transparent huge pages when `huge` is set and the size is a multiple of 2 MiB: its first touch
// then costs one fault per 2 MiB instead of one per 4 KiB. Unlike use_huge_page_heap() it changes
// nothing for the rest of the process. Zero-filled; throws std::bad_alloc when it cannot be mapped.
class HugePageBlock {
public:
    static constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

    HugePageBlock() = default;
    explicit HugePageBlock(std::size_t bytes, bool huge = true) : size_(bytes) {
#if defined(__linux__)
        const std::size_t align = huge && bytes % huge_page_bytes == 0 ? huge_page_bytes : 0;
        const std::size_t mapped = bytes + align;
        void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        auto* const first = static_cast<char*>(p);
        auto* const aligned = align ? reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(first) + align - 1) & ~(align - 1)) : first;
        if (aligned > first) munmap(first, static_cast<std::size_t>(aligned - first));
        if (const std::size_t tail = static_cast<std::size_t>(first + mapped - (aligned + bytes)); tail > 0) munmap(aligned + bytes, tail);
#if defined(MADV_HUGEPAGE)
        if (align) (void)madvise(aligned, bytes, MADV_HUGEPAGE);  // advice only: without it, 4 KiB pages
#endif
        data_ = aligned;
#if defined(SMDEBUG_LEAK_SANITIZER)
        __lsan_register_root_region(data_, size_);
#endif
#else
        (void)huge;
        data_ = static_cast<char*>(::operator new(bytes));
        std::memset(data_, 0, bytes);
#endif
    }
    HugePageBlock(HugePageBlock&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    HugePageBlock& operator=(HugePageBlock&& o) noexcept {
        if (this != &o) {
            release();
            data_ = std::exchange(o.data_, nullptr);
            size_ = std::exchange(o.size_, 0);
        }
        return *this;
    }
    HugePageBlock(const HugePageBlock&) = delete;
    HugePageBlock& operator=(const HugePageBlock&) = delete;
    ~HugePageBlock() { release(); }

    void* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    void release() noexcept {
        if (!data_) return;
#if defined(SMDEBUG_LEAK_SANITIZER) && defined(__linux__)
        __lsan_unregister_root_region(data_, size_);
#endif
#if defined(__linux__)
        munmap(data_, size_);
#else
        ::operator delete(data_);
#endif
        data_ = nullptr;
    }
    char* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace smdebug
