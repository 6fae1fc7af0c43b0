#pragma once
// Small text helpers shared by every layer: trimming, ASCII case-insensitive comparison and
// walking separated lists. Each caller names the characters it trims, because the formats differ:
// HTTP trims blanks (space, tab), JSON settings and index files Python's whitespace, AWS profile
// lines space, tab and CR.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

namespace smdebug::text {

inline constexpr std::string_view spaces = " ";
inline constexpr std::string_view blanks = " \t";                // HTTP's optional whitespace (OWS)
inline constexpr std::string_view line_blanks = " \t\r";         // blanks of a line split at '\n'
inline constexpr std::string_view json_whitespace = " \t\n\r";   // JSON's (and Python's str.strip()'s ASCII) whitespace
inline constexpr std::string_view whitespace = " \t\n\r\f\v";    // std::isspace in the C locale

constexpr std::string_view trim_front(std::string_view s, std::string_view chars = whitespace) noexcept {
    const auto b = s.find_first_not_of(chars);
    return b == std::string_view::npos ? std::string_view() : s.substr(b);
}
constexpr std::string_view trim_back(std::string_view s, std::string_view chars = whitespace) noexcept {
    const auto e = s.find_last_not_of(chars);
    return e == std::string_view::npos ? std::string_view() : s.substr(0, e + 1);
}
// `s` without leading and trailing `chars`.
constexpr std::string_view trim(std::string_view s, std::string_view chars = whitespace) noexcept {
    return trim_back(trim_front(s, chars), chars);
}

constexpr char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }
constexpr char ascii_upper(char c) noexcept { return (c >= 'a' && c <= 'z') ? char(c - 'a' + 'A') : c; }

inline std::string to_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = ascii_lower(c);
    return out;
}
inline std::string to_upper(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = ascii_upper(c);
    return out;
}

// ASCII case-insensitive equality (header names, rule names, "true"/"True").
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

// The shortest decimal that reads back as the same double; nan, inf and -inf spelled out (rule
// messages, CLI tables).
inline std::string format_double(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

// The value of a hexadecimal digit, or -1.
constexpr int hex_digit_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Calls f(item) for each `sep`-separated item of `list`, in order, trimmed of `chars`. As
// Python's str.split(sep), an empty list has one empty item and empty items are kept.
template <class F>
constexpr void for_each_item(std::string_view list, char sep, std::string_view chars, F&& f) {
    std::size_t pos = 0;
    while (true) {
        const auto end = list.find(sep, pos);
        f(trim(list.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos), chars));
        if (end == std::string_view::npos) return;
        pos = end + 1;
    }
}

// The items of a `sep`-separated list, trimmed of `chars` (empty items kept).
inline std::vector<std::string> split(std::string_view list, char sep = ',', std::string_view chars = whitespace) {
    std::vector<std::string> out;
    for_each_item(list, sep, chars, [&](std::string_view item) { out.emplace_back(item); });
    return out;
}

}  // namespace smdebug::text
