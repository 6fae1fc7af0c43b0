#pragma once
// Tensor-name patterns: smdebug matches Python `re` patterns with search semantics (anywhere in
// the name). The patterns smdebug uses are also valid ECMAScript, so std::regex serves both the
// reader (tensor_names, collections) and the writer (collection membership).
//
// Patterns come from users, hook configurations and collection files (outside input), and
// std::regex is fragile against hostile ones: its compiler recurses once per nesting level and per
// term (deep nesting overflows the stack), `{n}` repetitions are expanded into copies, and its
// default matcher backtracks (exponential time on `(a|aa)*b`, recursion as deep as the name). So
// every pattern is checked against the limits below before it is compiled, and with libstdc++ the
// matcher is its polynomial (Thompson NFA) one, which needs no back-references, run once over the
// name rather than once per start position.
//
// <regex> is parsed and std::basic_regex instantiated only where the definitions are compiled
// (core/impl/regex.ipp): in every including translation unit in header-only mode, in src.hpp in
// separate mode.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <smdebug/core/config.hpp>

namespace smdebug {

// Longest pattern accepted (tensor-name patterns are tens of bytes).
inline constexpr std::size_t max_regex_pattern_bytes = 1024;
// Deepest group nesting accepted: `((((a))))` is 4.
inline constexpr std::size_t max_regex_nesting = 32;
// Largest size of a pattern once its `{m,n}` repetitions are expanded (atoms counted once each):
// `(ab){3}` is 6. Bounds the automaton, and so compile and match time.
inline constexpr std::size_t max_regex_expanded_size = 512;
// Longest number accepted in a `{m,n}` repetition or a `\N` back-reference: libstdc++ reads such
// numbers into a long without checking for overflow (undefined behaviour on `\66666666666666666666`).
inline constexpr std::size_t max_regex_number_digits = 6;

}  // namespace smdebug

namespace smdebug::detail {

// Tensor-name patterns, each compiled for search semantics (see compile_regex in the .ipp): a
// name matches the set when any pattern occurs anywhere in it. Copies share the compiled patterns.
class CompiledRegex {
public:
    // Checks `pattern` against the limits above, compiles it and adds it to the set; throws
    // SMDebugValueError naming the pattern when it is outside the limits or invalid.
    void add(const std::string& pattern);
    // True when any pattern of the set occurs in `name` (false for an empty set).
    bool search(const std::string& name) const;
    std::size_t size() const noexcept { return patterns_.size(); }
    void clear() noexcept { patterns_.clear(); }

private:
    struct Pattern;  // a std::regex
    std::vector<std::shared_ptr<const Pattern>> patterns_;
};

// Throws as CompiledRegex::add would, without keeping the compiled pattern.
void check_regex(const std::string& pattern);

// Checks `pattern` against the limits above; returns what is wrong, or "" when it is within them.
std::string regex_limit_violation(const std::string& pattern);

}  // namespace smdebug::detail

#if SMDEBUG_HEADER_ONLY
#include <smdebug/core/impl/regex.ipp>
#endif
