#pragma once
// JSON text of the API's answers: strings as cli::json_string writes them (valid UTF-8 whatever a
// trial holds), numbers as the shortest decimal that reads back as the same double, and NaN and
// the infinities — which JSON has no literal for — as the strings "NaN", "Infinity", "-Infinity"
// (what JavaScript's Number() reads back).
#include <cmath>
#include <string>
#include <string_view>

#include "../cli/escape.hpp"
#include "../cli/format.hpp"

namespace serve {

inline void append_number(std::string& out, double v) {
    if (std::isnan(v)) out += "\"NaN\"";
    else if (std::isinf(v)) out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    else out += cli::format_double(v);
}
inline void append_string(std::string& out, std::string_view s) { out += cli::json_string(s); }

inline std::string error_json(std::string_view message) { return "{\"error\":" + cli::json_string(message) + "}"; }

}  // namespace serve
