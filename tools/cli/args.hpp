#pragma once
// A command's arguments: positional ones and options (Args::parse), and the readers of the
// options several commands share (--mode, --reduction, integers).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/reduction_kind.hpp>
#include <smdebug/core/text.hpp>

#include "errors.hpp"
#include "suggest.hpp"

namespace cli {

// Old spellings still accepted, each as the option it now is (docs/cli.md, "One spelling per concept").
inline const std::vector<std::pair<std::string, std::string>>& option_aliases() {
    static const std::vector<std::pair<std::string, std::string>> aliases = {{"--reduce", "--reduction"}};
    return aliases;
}
inline std::string canonical_option(const std::string& s) {
    for (const auto& [alias, name] : option_aliases())
        if (s == alias) return name;
    return s;
}

// The options main takes out of the arguments before a command sees them.
inline const std::vector<std::string>& options_of_every_command() {
    static const std::vector<std::string> names = {"--steps", "--requests", "--cache", "--cache-max-bytes", "--connect-timeout",
                                                   "--read-timeout", "--max-concurrency", "--help"};
    return names;
}

// `--wait [SECONDS]` (rule, watch, monitor): wait for a trial that has not started writing.
inline constexpr std::string_view wait_option = "--wait";
inline bool is_seconds(std::string_view text) {
    return !text.empty() && text.find_first_not_of("0123456789.") == std::string_view::npos && text != ".";
}

struct Args {
    std::vector<std::string> positional;
    std::vector<std::pair<std::string, std::optional<std::string>>> options;

    // Parses "--name value" (or "--name=value") for names in `with_value`, "--flag" otherwise.
    // Throws CliError(usage) on an unknown option or a missing value.
    static Args parse(int argc, char** argv, int first, const std::vector<std::string>& with_value,
                      const std::vector<std::string>& flags) {
        Args a;
        auto known = [](const std::vector<std::string>& v, const std::string& s) {
            return std::find(v.begin(), v.end(), s) != v.end();
        };
        for (int i = first; i < argc; ++i) {
            std::string s = argv[i];
            if (s.starts_with("--") && s.size() > 2) {
                std::optional<std::string> inline_value;
                if (const auto eq = s.find('='); eq != std::string::npos) {
                    inline_value = s.substr(eq + 1);
                    s.resize(eq);
                }
                s = canonical_option(s);
                if (known(with_value, s)) {
                    if (inline_value) a.options.emplace_back(s, inline_value);
                    else if (i + 1 >= argc) throw usage_error(s + " needs a value");
                    else a.options.emplace_back(s, argv[++i]);
                } else if (known(flags, s) && (!inline_value || s == wait_option)) {
                    // --wait takes an optional number of seconds: `--wait`, `--wait 30`, `--wait=30`
                    if (s == wait_option && !inline_value && i + 1 < argc && is_seconds(argv[i + 1])) inline_value = argv[++i];
                    a.options.emplace_back(s, inline_value);
                } else {
                    std::vector<std::string> all = with_value;
                    all.insert(all.end(), flags.begin(), flags.end());
                    all.insert(all.end(), options_of_every_command().begin(), options_of_every_command().end());
                    throw usage_error("unknown option " + s + did_you_mean(s, all));
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
        std::optional<std::string> out;  // the last one wins
        for (const auto& [n, v] : options) if (n == name) out = v;
        return out;
    }
};

inline std::int64_t parse_int(const std::string& text, const std::string& what) {
    std::int64_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) throw usage_error(what + " must be an integer, not '" + text + "'");
    return v;
}

// --mode M (TRAIN, EVAL, PREDICT, GLOBAL; case-insensitive); GLOBAL when absent.
inline smdebug::Mode mode_option(const Args& a) {
    const auto m = a.value("--mode");
    if (!m) return smdebug::Mode::GLOBAL;
    const auto mode = smdebug::parse_mode(smdebug::text::to_upper(*m));
    if (!mode) throw usage_error("unknown mode '" + *m + "' (TRAIN, EVAL, PREDICT or GLOBAL)");
    return *mode;
}

inline smdebug::Reduction reduction_option(const Args& a, const std::string& option, const std::string& fallback) {
    const auto name = a.value(option).value_or(fallback);
    const auto r = smdebug::parse_reduction(name);
    if (!r) throw usage_error("unknown reduction '" + name + "' (min, max, mean, std, variance, sum, prod, l1, l2)");
    return *r;
}

inline std::string the_path(const Args& a, const char* usage_line, std::size_t positional = 1) {
    if (a.positional.size() != positional) throw usage_error(std::string("expected ") + std::to_string(positional) +
                                                             " argument(s)\n" + usage_line);
    return a.positional[0];
}

}  // namespace cli
