#pragma once
// Shared pieces of the `smdebug` command-line tool: exit codes and argument handling.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <smdebug/smdebug.hpp>

namespace cli {

enum Exit : int { ok = 0, bad_data = 1, usage = 2 };

struct Args {
    std::vector<std::string> positional;
    std::vector<std::pair<std::string, std::optional<std::string>>> options;

    // Parses "--name value" for names in `with_value`, "--flag" otherwise.
    static std::optional<Args> parse(int argc, char** argv, int first, const std::vector<std::string>& with_value,
                                     const std::vector<std::string>& flags) {
        Args a;
        for (int i = first; i < argc; ++i) {
            std::string s = argv[i];
            if (s.starts_with("--")) {
                if (std::find(with_value.begin(), with_value.end(), s) != with_value.end()) {
                    if (i + 1 >= argc) { std::cerr << "smdebug: " << s << " needs a value\n"; return std::nullopt; }
                    a.options.emplace_back(s, argv[++i]);
                } else if (std::find(flags.begin(), flags.end(), s) != flags.end()) {
                    a.options.emplace_back(s, std::nullopt);
                } else {
                    std::cerr << "smdebug: unknown option " << s << "\n";
                    return std::nullopt;
                }
            } else {
                a.positional.push_back(std::move(s));
            }
        }
        return a;
    }
    bool has(const std::string& name) const {
        for (const auto& [n, v] : options) if (n == name) return true;
        return false;
    }
    std::optional<std::string> value(const std::string& name) const {
        for (const auto& [n, v] : options) if (n == name) return v;
        return std::nullopt;
    }
};

inline std::string shape_text(const smdebug::Shape& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    if (s.size() == 1) out += ",";
    return out + ")";
}

}  // namespace cli
