#pragma once
// The options every command takes, which main takes out of the arguments before the command sees
// them: --steps, --requests, and how stores are opened (--cache, --cache-max-bytes,
// --connect-timeout, --read-timeout, --max-concurrency; docs/cli.md).
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <smdebug/query/options.hpp>

#include "errors.hpp"
#include "step_range.hpp"

namespace cli {

struct CommonOptions {
    StepRange steps;              // --steps A:B
    bool count_requests = false;  // --requests
    std::optional<std::string> cache_dir;                   // --cache DIR
    std::optional<std::uint64_t> cache_max_bytes;           // --cache-max-bytes N
    std::optional<std::chrono::milliseconds> connect_timeout;  // --connect-timeout S
    std::optional<std::chrono::milliseconds> read_timeout;     // --read-timeout S
    std::optional<std::size_t> max_concurrency;             // --max-concurrency N

    // Sets the options of `o` these give (what is not given keeps the library's default, which
    // may come from the environment: core/environment.hpp, net/aws_config.hpp).
    void apply(smdebug::TrialOptions& o) const {
        o.range_begin = steps.begin;
        o.range_end = steps.end;
        if (cache_dir) o.cache_dir = cache_dir;
        if (cache_max_bytes) o.cache_max_bytes = cache_max_bytes;
        if (connect_timeout) o.connect_timeout = connect_timeout;
        if (read_timeout) o.read_timeout = read_timeout;
        if (max_concurrency) o.max_concurrency = max_concurrency;
    }
};

namespace common_options_detail {

// The value of `flag` at argv[i] ("--flag VALUE", i moves past it, or "--flag=VALUE"); nullopt
// when argv[i] is another argument. `missing` is the message when VALUE is absent.
inline std::optional<std::string> value_of(std::string_view flag, int argc, char** argv, int& i, const std::string& missing) {
    const std::string_view a = argv[i];
    if (a == flag) {
        if (i + 1 >= argc) throw usage_error(missing);
        return std::string(argv[++i]);
    }
    if (a.starts_with(flag) && a.size() > flag.size() && a[flag.size()] == '=') return std::string(a.substr(flag.size() + 1));
    return std::nullopt;
}

// A decimal integer from 1 to `most`, or a usage error "<flag> must be a number <what>, not '<text>'".
inline long long bounded(const std::string& text, std::string_view flag, long long most, std::string_view what) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || v < 1 || v > most)
        throw usage_error(std::string(flag) + " must be a number " + std::string(what) + ", not '" + text + "'");
    return v;
}

}  // namespace common_options_detail

// Takes the common options out of argv[2..argc) (argc shrinks to the arguments left for the
// command). Throws CliError(usage) on a bad or missing value.
inline CommonOptions take_common_options(int& argc, char** argv) {
    using common_options_detail::bounded;
    using common_options_detail::value_of;
    CommonOptions o;
    int out = 2;
    for (int i = 2; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--requests") {
            o.count_requests = true;
        } else if (const auto v = value_of("--steps", argc, argv, i, "--steps needs a range A:B")) {
            o.steps = parse_step_range(*v);
        } else if (const auto v = value_of("--cache", argc, argv, i, "--cache needs a value")) {
            if (v->empty()) throw usage_error("--cache needs a folder");
            o.cache_dir = *v;
        } else if (const auto v = value_of("--cache-max-bytes", argc, argv, i, "--cache-max-bytes needs a value")) {
            if (v->starts_with('-')) throw usage_error("--cache-max-bytes must be a number of bytes from 1 to 2^62, not '" + *v + "'");
            o.cache_max_bytes = static_cast<std::uint64_t>(bounded(*v, "--cache-max-bytes", 1ll << 62, "of bytes from 1 to 2^62"));
        } else if (const auto v = value_of("--connect-timeout", argc, argv, i, "--connect-timeout needs a number of seconds")) {
            o.connect_timeout = std::chrono::seconds(bounded(*v, "--connect-timeout", 86400, "of seconds from 1 to 86400"));
        } else if (const auto v = value_of("--read-timeout", argc, argv, i, "--read-timeout needs a number of seconds")) {
            o.read_timeout = std::chrono::seconds(bounded(*v, "--read-timeout", 86400, "of seconds from 1 to 86400"));
        } else if (const auto v = value_of("--max-concurrency", argc, argv, i, "--max-concurrency needs a number of requests")) {
            o.max_concurrency = static_cast<std::size_t>(bounded(*v, "--max-concurrency", 1024, "of requests from 1 to 1024"));
        } else {
            argv[out++] = argv[i];
        }
    }
    argc = out;
    return o;
}

}  // namespace cli
