#pragma once
// Tensor-name patterns: smdebug matches Python `re` patterns with search semantics (anywhere in
// the name). The patterns smdebug uses are also valid ECMAScript, so std::regex serves both the
// reader (tensor_names, collections) and the writer (collection membership).
#include <regex>
#include <string>
#include <vector>

#include <smdebug/core/errors.hpp>

namespace smdebug::detail {

struct CompiledRegex {
    std::vector<std::regex> patterns;
    bool search(const std::string& s) const {
        for (const auto& r : patterns)
            if (std::regex_search(s, r)) return true;
        return false;
    }
};

inline std::regex compile_regex(const std::string& pattern) {
    try {
        return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
        throw SMDebugValueError("invalid regular expression '" + pattern + "': " + e.what());
    }
}

}  // namespace smdebug::detail
