#pragma once
// Numbers, shapes, step lists, byte counts and names as the CLI prints them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/tensor_value.hpp>
#include <smdebug/core/text.hpp>

namespace cli {

inline std::string shape_text(const smdebug::Shape& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    if (s.size() == 1) out += ",";
    return out + ")";
}

using smdebug::text::format_double;  // the shortest decimal that reads back as the same double

// A short list of steps: all of them up to 8, else the first 3, "...", the last 3, and the count.
inline std::string steps_text(const std::vector<std::int64_t>& steps) {
    std::string out;
    const auto add = [&](std::size_t i) {
        if (!out.empty()) out += ", ";
        out += std::to_string(steps[i]);
    };
    if (steps.size() <= 8) {
        for (std::size_t i = 0; i < steps.size(); ++i) add(i);
        return out;
    }
    for (std::size_t i = 0; i < 3; ++i) add(i);
    out += ", ...";
    for (std::size_t i = steps.size() - 3; i < steps.size(); ++i) add(i);
    return out + " (" + std::to_string(steps.size()) + " steps)";
}

// Bytes for a human: "812 B", "19.3 KB", "204.8 MB", "1.20 GB" (powers of 1000, as rates are given).
inline std::string human_bytes(double bytes) {
    static constexpr const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    std::size_t u = 0;
    while (bytes >= 999.95 && u + 1 < std::size(units)) bytes /= 1000, ++u;
    char buf[32];
    if (u == 0) std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[u]);
    else std::snprintf(buf, sizeof buf, bytes < 10 ? "%.2f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

// Natural order of names: runs of digits compare by their number, so `layer2` comes before
// `layer10`; otherwise byte order (and the shorter run of equal numbers, e.g. `01` after `1`).
inline bool natural_less(std::string_view a, std::string_view b) {
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t i0 = i, j0 = j;
            while (i0 < a.size() && a[i0] == '0') ++i0;
            while (j0 < b.size() && b[j0] == '0') ++j0;
            std::size_t i1 = i0, j1 = j0;
            while (i1 < a.size() && digit(a[i1])) ++i1;
            while (j1 < b.size() && digit(b[j1])) ++j1;
            if (i1 - i0 != j1 - j0) return i1 - i0 < j1 - j0;
            if (const auto c = a.substr(i0, i1 - i0).compare(b.substr(j0, j1 - j0)); c != 0) return c < 0;
            if (i1 - i != j1 - j) return i1 - i < j1 - j;
            i = i1, j = j1;
            continue;
        }
        if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
        ++i, ++j;
    }
    return a.size() - i < b.size() - j;
}
inline std::vector<std::string> naturally_sorted(std::vector<std::string> names) {
    std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    return names;
}

// "1 step", "2 steps".
inline std::string plural(std::size_t n, std::string_view one, std::string_view many = {}) {
    if (n == 1) return "1 " + std::string(one);
    return std::to_string(n) + " " + (many.empty() ? std::string(one) + "s" : std::string(many));
}

}  // namespace cli
