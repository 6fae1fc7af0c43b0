#pragma once
// The definitions of core/regex.hpp: the pattern limits' check and the compilation with std::regex.
#include <algorithm>
#include <cstddef>
#include <locale>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/regex.hpp>
#if !SMDEBUG_HEADER_ONLY && !defined(SMDEBUG_SOURCE)
#error "this file defines functions compiled once by <smdebug/src.hpp>: in separate mode include it only there"
#endif

namespace smdebug::detail {

// The scan is deliberately rough (it only has to bound cost): escapes and bracket expressions are
// single atoms, a well-formed `{m}`, `{m,}` or `{m,n}` multiplies the atom or group before it.
SMDEBUG_INLINE std::string regex_limit_violation(const std::string& pattern) {
    if (pattern.size() > max_regex_pattern_bytes)
        return "longer than " + std::to_string(max_regex_pattern_bytes) + " bytes (max_regex_pattern_bytes)";
    static constexpr std::size_t cap = max_regex_expanded_size + 1;  // saturate: anything above is too much
    const auto mul = [](std::size_t a, std::size_t b) { return b != 0 && a > cap / b ? cap : std::min(a * b, cap); };
    const auto add = [](std::size_t a, std::size_t b) { return std::min(a + b, cap); };
    const auto digits_at = [&](std::size_t j) {  // length of the run of digits starting at j
        std::size_t k = j;
        while (k < pattern.size() && pattern[k] >= '0' && pattern[k] <= '9') ++k;
        return k - j;
    };
    const std::string too_long_number = "a number longer than " + std::to_string(max_regex_number_digits) +
                                        " digits in a repetition or back-reference (max_regex_number_digits)";
    // Numbers first, wherever they are (inside a bracket expression too): the scan below follows
    // the structure, and a misreading of it must not let a long number through (a fuzz finding:
    // `[]+{2222222222222222222211}` read `[]` as the start of a class, the ECMAScript way is an empty class).
    const std::size_t n = pattern.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (pattern[i] == '\\') {
            if (digits_at(i + 1) > max_regex_number_digits) return too_long_number;
            ++i;
        } else if (pattern[i] == '{') {
            const auto d = digits_at(i + 1);
            if (d > max_regex_number_digits) return too_long_number;
            if (i + 1 + d < n && pattern[i + 1 + d] == ',' && digits_at(i + 2 + d) > max_regex_number_digits)
                return too_long_number;
        }
    }
    std::vector<std::size_t> sizes{0};  // expanded size of each open group; [0] = the whole pattern
    std::size_t last = 0;               // expanded size of the atom or group a quantifier would repeat
    for (std::size_t i = 0; i < n; ++i) {
        const char c = pattern[i];
        if (c == '(') {
            if (sizes.size() > max_regex_nesting)
                return "groups nested deeper than " + std::to_string(max_regex_nesting) + " (max_regex_nesting)";
            sizes.push_back(0);
            last = 0;
            continue;
        }
        if (c == ')' && sizes.size() > 1) {
            last = sizes.back();
            sizes.pop_back();
            sizes.back() = add(sizes.back(), last);
            continue;
        }
        if (c == '{') {
            std::size_t j = i + 1, lo = 0, hi = 0;
            bool digits = false, comma = false, hi_digits = false;
            for (; j < n && pattern[j] >= '0' && pattern[j] <= '9'; ++j, digits = true) lo = add(mul(lo, 10), static_cast<std::size_t>(pattern[j] - '0'));
            if (j < n && pattern[j] == ',') {
                comma = true;
                for (++j; j < n && pattern[j] >= '0' && pattern[j] <= '9'; ++j, hi_digits = true)
                    hi = add(mul(hi, 10), static_cast<std::size_t>(pattern[j] - '0'));
            }
            if (digits && j < n && pattern[j] == '}') {
                const std::size_t copies = hi_digits ? std::max(lo, hi) : comma ? add(lo, 1) : lo;
                const std::size_t repeated = mul(last, copies);
                sizes.back() = add(sizes.back() - std::min(sizes.back(), last), repeated);
                last = repeated;
                i = j;
                if (sizes.back() >= cap) break;
                continue;
            }
        }
        if (c == '\\') {
            ++i;
        } else if (c == '[') {  // ECMAScript: the first ']' ends it (`[]` is an empty class)
            std::size_t j = i + 1;
            if (j < n && pattern[j] == '^') ++j;
            for (; j < n && pattern[j] != ']'; ++j)
                if (pattern[j] == '\\') ++j;
            i = std::min(j, n);
        } else if (c == '|' || c == '*' || c == '+' || c == '?' || c == '^' || c == '$') {
            last = c == '|' ? 0 : last;
            continue;
        }
        last = 1;
        sizes.back() = add(sizes.back(), 1);
        if (sizes.back() >= cap) break;
    }
    std::size_t total = 0;
    for (auto s : sizes) total = add(total, s);
    if (total > max_regex_expanded_size)
        return "larger than " + std::to_string(max_regex_expanded_size) + " atoms once its repetitions are expanded (max_regex_expanded_size)";
    return {};
}

// Compiles `pattern` for search semantics as a whole-string match: regex_match(name, result) is
// regex_search(name, pattern) (so is regex_search(name, result)). One pass over the name instead of
// one per start position. The pattern is first compiled alone, so that it is checked as written
// (an unbalanced ')' must not pair with the wrapper's parenthesis).
#if defined(__GLIBCXX__)
// libstdc++'s std::ctype<char>::narrow fills a cache of the facet on the first use of each
// character, unsynchronised (GCC PR 77704): two threads compiling their first patterns at once
// (two Hooks saving their first tensors) race on it, and ThreadSanitizer reports the race in the
// application. Filling the cache of the global locale's facet once, before the first pattern is
// compiled, leaves only reads. (A global locale installed later has a facet of its own.)
SMDEBUG_INLINE void fill_regex_ctype_cache() {
    static std::once_flag once;
    std::call_once(once, [] {
        const auto& ctype = std::use_facet<std::ctype<char>>(std::locale());
        for (int c = 0; c < 256; ++c) (void)ctype.narrow(static_cast<char>(c), '\0');  // the regex scanner's default
    });
}
#endif

SMDEBUG_INLINE std::regex compile_regex(const std::string& pattern) {
#if defined(__GLIBCXX__)
    fill_regex_ctype_cache();
#endif
    if (auto why = regex_limit_violation(pattern); !why.empty())
        throw SMDebugValueError("regular expression '" + pattern.substr(0, 64) + (pattern.size() > 64 ? "...'" : "'") + " is " + why);
    auto flags = std::regex::ECMAScript | std::regex::optimize;
#if defined(__GLIBCXX__)
    flags |= std::regex_constants::__polynomial;  // breadth-first matcher: polynomial time, shallow recursion
#endif
    try {
        (void)std::regex(pattern, flags);
        return std::regex("[\\s\\S]*(?:" + pattern + ")[\\s\\S]*", flags);
    } catch (const std::regex_error& e) {
        throw SMDebugValueError("invalid regular expression '" + pattern + "': " + e.what());
    }
}

struct CompiledRegex::Pattern {
    std::regex regex;
};

SMDEBUG_INLINE void CompiledRegex::add(const std::string& pattern) {
    patterns_.push_back(std::make_shared<const Pattern>(Pattern{compile_regex(pattern)}));
}

SMDEBUG_INLINE bool CompiledRegex::search(const std::string& name) const {
    for (const auto& p : patterns_)
        if (std::regex_match(name, p->regex)) return true;
    return false;
}

SMDEBUG_INLINE void check_regex(const std::string& pattern) { (void)compile_regex(pattern); }

}  // namespace smdebug::detail
