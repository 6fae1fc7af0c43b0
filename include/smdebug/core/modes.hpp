#pragma once
// Training modes and step states, with the names smdebug writes into index and collection files.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include <smdebug/core/text.hpp>

namespace smdebug {

enum class Mode : std::uint8_t { TRAIN = 1, EVAL = 2, PREDICT = 3, GLOBAL = 4 };

inline constexpr std::array<Mode, 4> all_modes{Mode::TRAIN, Mode::EVAL, Mode::PREDICT, Mode::GLOBAL};

constexpr std::string_view mode_name(Mode m) noexcept {
    switch (m) {
        case Mode::TRAIN: return "TRAIN";
        case Mode::EVAL: return "EVAL";
        case Mode::PREDICT: return "PREDICT";
        case Mode::GLOBAL: return "GLOBAL";
    }
    return "INVALID";
}

// Parses the bare upper-case name used in index files ("TRAIN"), after trimming blanks.
constexpr std::optional<Mode> parse_mode(std::string_view s) noexcept {
    s = text::trim(s, text::json_whitespace);
    for (Mode m : all_modes)
        if (s == mode_name(m)) return m;
    return std::nullopt;
}

constexpr int mode_index(Mode m) noexcept { return static_cast<int>(m) - 1; }

enum class StepState : std::uint8_t { UNAVAILABLE = 0, AVAILABLE = 1, NOT_YET_AVAILABLE = 2 };

constexpr std::string_view step_state_name(StepState s) noexcept {
    switch (s) {
        case StepState::UNAVAILABLE: return "UNAVAILABLE";
        case StepState::AVAILABLE: return "AVAILABLE";
        case StepState::NOT_YET_AVAILABLE: return "NOT_YET_AVAILABLE";
    }
    return "INVALID";
}

}  // namespace smdebug
