#pragma once
// Where a trial's step index keeps its StepData records (query/detail/index_types.hpp).
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include <smdebug/query/detail/index_types.hpp>

namespace smdebug::detail {

// StepData records at fixed addresses (StepEntry points at them), in chunks of ChunkBytes from the
// heap: one allocation per chunk, not per record (a trial's open 12 % faster, its CPU 17 %:
// docs/performance.md). The switch is step_data_chunk_bytes: sizeof(StepData) gives one
// allocation per record, the arena off, through the same code.
template <std::size_t ChunkBytes>
class BasicStepDataArena {
public:
    static constexpr std::size_t chunk_bytes = ChunkBytes > sizeof(StepData) ? ChunkBytes : sizeof(StepData);

    BasicStepDataArena() = default;
    BasicStepDataArena(BasicStepDataArena&&) noexcept = default;
    BasicStepDataArena& operator=(BasicStepDataArena&& o) noexcept {
        destroy();
        chunks_ = std::move(o.chunks_);
        return *this;
    }
    ~BasicStepDataArena() { destroy(); }

    StepData* make() {
        if (chunks_.empty() || chunks_.back().used == chunks_.back().capacity) grow();
        Chunk& c = chunks_.back();
        return ::new (static_cast<void*>(c.first() + c.used++)) StepData();
    }

private:
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

inline constexpr std::size_t step_data_chunk_bytes = std::size_t{64} << 10;
using StepDataArena = BasicStepDataArena<step_data_chunk_bytes>;

}  // namespace smdebug::detail
