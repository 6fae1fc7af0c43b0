#pragma once
// `--steps A:B` (also `A:` or `:B`): the global steps [A, B) a command's trials load.
#include <cstdint>
#include <optional>
#include <string>

#include "args.hpp"
#include "errors.hpp"

namespace cli {

struct StepRange {
    std::optional<std::int64_t> begin, end;
};

inline StepRange parse_step_range(const std::string& text) {
    const auto colon = text.find(':');
    if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
        throw usage_error("--steps must be A:B, A: or :B (global steps, B excluded), not '" + text + "'");
    StepRange r;
    if (colon > 0) r.begin = parse_int(text.substr(0, colon), "--steps' first step");
    if (colon + 1 < text.size()) r.end = parse_int(text.substr(colon + 1), "--steps' end");
    if ((r.begin && *r.begin < 0) || (r.end && *r.end < 0) || (r.begin && r.end && *r.begin >= *r.end) || (!r.begin && !r.end))
        throw usage_error("--steps must name a non-empty range of non-negative steps, not '" + text + "'");
    return r;
}

}  // namespace cli
