#pragma once
// The environment variables the reader honours, read here and nowhere else in query/ (the AWS
// configuration chain is read in net/; the writer's SageMaker variables in writer/hook_config.hpp).
// Each is only the default of a TrialOptions field: an option set in code wins.
//
//   SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW (or INCOMPLETE_STEP_WAIT_WINDOW)  incomplete_step_wait_window
//   SMDEBUG_TRAINING_END_DELAY_REFRESH (or TRAINING_END_DELAY_REFRESH), s training_end_delay_refresh
//   SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT                                missing_event_file_retry_limit
//   SMDEBUG_CACHE_DIR                                                     cache_dir (create_trial)
//   SMDEBUG_CACHE_MAX_BYTES                                               cache_max_bytes (create_trial)
//   SMDEBUG_MAX_EXPANDED_ELEMENTS                                         max_expanded_elements
//
// The first three are the conventions the Python smdebug reads; the others are smdebug-cpp's. A
// value that is not an integer is ignored (the default stays), as the reference's int() would fail
// only when the value is used.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace smdebug {

// Reads an integer environment variable: the SMDEBUG_-prefixed name first, then the plain one.
inline std::optional<long long> env_integer(const char* prefixed, const char* plain) {
    for (const char* name : {prefixed, plain}) {
        if (!name) continue;
        if (const char* v = std::getenv(name); v && *v) {
            try { return std::stoll(v); } catch (...) {}
        }
    }
    return std::nullopt;
}

namespace environment {

inline std::optional<std::int64_t> incomplete_step_wait_window() {
    return env_integer("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "INCOMPLETE_STEP_WAIT_WINDOW");
}
inline std::optional<std::chrono::milliseconds> training_end_delay_refresh() {
    const auto seconds = env_integer("SMDEBUG_TRAINING_END_DELAY_REFRESH", "TRAINING_END_DELAY_REFRESH");
    if (!seconds) return std::nullopt;
    return std::chrono::milliseconds(1000 * *seconds);
}
inline std::optional<int> missing_event_file_retry_limit() {
    const auto n = env_integer("SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT", nullptr);
    if (!n) return std::nullopt;
    return static_cast<int>(*n);
}
// The disk cache folder of remote trials; empty when unset.
inline std::optional<std::string> cache_dir() {
    if (const char* v = std::getenv("SMDEBUG_CACHE_DIR")) return std::string(v);
    return std::nullopt;
}
// The disk cache's bound; nothing when unset or not a positive integer.
inline std::optional<std::uint64_t> cache_max_bytes() {
    const auto n = env_integer("SMDEBUG_CACHE_MAX_BYTES", nullptr);
    if (!n || *n <= 0) return std::nullopt;
    return static_cast<std::uint64_t>(*n);
}

// The expansion budget of decoded records (TrialOptions::max_expanded_elements); nothing when
// unset or not a positive integer.
inline std::optional<std::size_t> max_expanded_elements() {
    const auto n = env_integer("SMDEBUG_MAX_EXPANDED_ELEMENTS", nullptr);
    if (!n || *n <= 0) return std::nullopt;
    return static_cast<std::size_t>(*n);
}

}  // namespace environment
}  // namespace smdebug
