#pragma once
// The table of fuzz targets (tests/fuzz/fuzz_targets.cpp) the libFuzzer driver picks from.
#include <cstddef>
#include <cstdint>
#include <span>

namespace smdebug::fuzz {

struct Target {
    const char* name;
    void (*run)(std::span<const std::uint8_t> input);
};
extern const Target targets[];
extern const std::size_t target_count;

}  // namespace smdebug::fuzz
