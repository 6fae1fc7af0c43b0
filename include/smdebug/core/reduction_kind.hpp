#pragma once
// The reductions smdebug knows by name (docs/semantics.md §6.4); core/reductions.hpp computes them.
#include <cstdint>
#include <optional>
#include <string_view>

namespace smdebug {

enum class Reduction : std::uint8_t { min, max, mean, std, variance, sum, prod, l1, l2 };

constexpr std::string_view reduction_name(Reduction r) noexcept {
    constexpr std::string_view names[] = {"min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2"};
    return names[static_cast<int>(r)];
}

constexpr std::optional<Reduction> parse_reduction(std::string_view name) noexcept {
    for (int i = 0; i <= static_cast<int>(Reduction::l2); ++i)
        if (reduction_name(static_cast<Reduction>(i)) == name) return static_cast<Reduction>(i);
    return std::nullopt;
}

}  // namespace smdebug
