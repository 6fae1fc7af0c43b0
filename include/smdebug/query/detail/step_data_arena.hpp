#pragma once
// Where a trial's step index keeps its StepData records (query/detail/index_types.hpp).
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include <smdebug/query/detail/index_types.hpp>

namespace smdebug::detail {

// StepData records at fixed addresses (StepEntry points at them), in chunks of 64 KiB from the
// heap: one allocation per chunk, not per record.
class StepDataArena {
public:
    StepDataArena() = default;
    StepDataArena(StepDataArena&&) noexcept = default;
    StepDataArena& operator=(StepDataArena&& o) noexcept {
        destroy();
        chunks_ = std::move(o.chunks_);
        return *this;
    }
    ~StepDataArena() { destroy(); }

    StepData* make() {
        if (chunks_.empty() || chunks_.back().used == chunks_.back().capacity) grow();
        Chunk& c = chunks_.back();
        return ::new (static_cast<void*>(c.first() + c.used++)) StepData();
    }

private:
    static constexpr std::size_t chunk_bytes = std::size_t{64} << 10;
    struct Release {
        void operator()(void* p) const noexcept { ::operator delete(p, std::align_val_t{alignof(StepData)}); }
    };
    struct Chunk {
        std::unique_ptr<void, Release> memory;
        std::size_t capacity = 0;
        std::size_t used = 0;
        StepData* first() const noexcept { return static_cast<StepData*>(memory.get()); }
    };
    void grow() {
        std::unique_ptr<void, Release> memory(::operator new(chunk_bytes, std::align_val_t{alignof(StepData)}));
        chunks_.push_back(Chunk{std::move(memory), chunk_bytes / sizeof(StepData), 0});
    }
    void destroy() noexcept {
        for (auto& c : chunks_) std::destroy_n(c.first(), c.used);
        chunks_.clear();
    }
    std::vector<Chunk> chunks_;
};

}  // namespace smdebug::detail
