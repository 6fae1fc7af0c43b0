#pragma once
// Text a trial supplied, made safe to print: for a terminal (printable) and inside JSON
// (json_string, json_number).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <smdebug/core/text.hpp>

namespace cli {

// The length of the valid UTF-8 sequence at s[i] (1-4), or 0 when the byte there does not start one
// (overlong forms, surrogates and code points past U+10FFFF are invalid).
inline std::size_t utf8_sequence(std::string_view s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    std::uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

// Text a trial supplied (names of tensors, workers, collections, paths; messages that quote them),
// made safe for a terminal: valid UTF-8 passes, except control characters (C0, DEL, C1), and every
// byte that is not valid UTF-8, which appear as \xNN; a backslash appears as \\. Nothing a trial
// holds can move the cursor, forge a line or change the terminal.
inline std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    auto hex = [&](unsigned char c) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
    };
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0 || c < 0x20 || c == 0x7F) {
            hex(c);
            ++i;
        } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {  // C1 controls U+0080-U+009F
            hex(c);
            hex(static_cast<unsigned char>(s[i + 1]));
            i += 2;
        } else if (c == '\\') {
            out += "\\\\";
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

// JSON string literal; always valid UTF-8. A byte of `s` that is not part of valid UTF-8 becomes the
// four characters \xNN (in JSON: "\\xNN"), the one escape JSON has no form for.
inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\\\x%02x", c);
            out += buf;
            ++i;
            continue;
        }
        if (n > 1) {
            out.append(s.substr(i, n));
            i += n;
            continue;
        }
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7F) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
        ++i;
    }
    return out + "\"";
}
// JSON number; null for nan and infinities (strict JSON has no literal for them).
inline std::string json_number(double v) { return std::isfinite(v) ? smdebug::text::format_double(v) : "null"; }

}  // namespace cli
