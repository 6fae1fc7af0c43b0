#pragma once
// Every environment variable the library reads, read here and nowhere else, but for the S3
// client's configuration (AWS_*, the profile files, and SMDEBUG_S3_MAX_CONCURRENCY,
// SMDEBUG_S3_CONNECT_TIMEOUT, SMDEBUG_S3_READ_TIMEOUT: defaults of TrialOptions::max_concurrency,
// connect_timeout and read_timeout), read in net/aws_config.hpp and net/detail/aws_profile.hpp.
// Each is only the default of an option that code can set: an option set in code wins. None is
// written.
//
// The reader (defaults of TrialOptions fields; the first four are the Python smdebug's conventions):
//   SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW (or INCOMPLETE_STEP_WAIT_WINDOW)  incomplete_step_wait_window
//   SMDEBUG_TRAINING_END_DELAY_REFRESH (or TRAINING_END_DELAY_REFRESH), s training_end_delay_refresh
//   SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT                                missing_event_file_retry_limit
//   SMDEBUG_CACHE_DIR                                                     cache_dir (create_trial)
//   SMDEBUG_CACHE_MAX_BYTES                                               cache_max_bytes (create_trial)
//   SMDEBUG_MAX_EXPANDED_ELEMENTS                                         max_expanded_elements
// The Hook (defaults of HookOptions fields and of Hook::create_from_json_file, as SageMaker sets them):
//   USE_SMDEBUG                     "0", "false", "no", "off", "n", "f" (any case) turn the Hook off
//   TRAINING_JOB_NAME               set: running as a SageMaker job (no end marker by default)
//   SMDEBUG_CONFIG_FILE_PATH        the Hook's JSON configuration (/opt/ml/input/config/debughookconfig.json)
//   TENSORBOARD_CONFIG_FILE_PATH    SageMaker's TensorBoard output configuration
// Rules:
//   SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE  the stop-signal file's name (stop_signal_file_action)
// Paths:
//   HOME                            "~/" at the start of a local path (open_store)
//
// A value that is not an integer where one is wanted is ignored (the default stays), as the
// reference's int() would fail only when the value is used.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace smdebug::environment {

inline std::optional<std::string> string(const char* name) {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
}

// An integer variable: the SMDEBUG_-prefixed name first, then the plain one (may be null).
inline std::optional<long long> integer(const char* prefixed, const char* plain = nullptr) {
    for (const char* name : {prefixed, plain}) {
        if (!name) continue;
        if (const char* v = std::getenv(name); v && *v) {
            try {
                return std::stoll(v);
            } catch (...) {
            }
        }
    }
    return std::nullopt;
}

// ---- the reader --------------------------------------------------------------------------------

inline std::optional<std::int64_t> incomplete_step_wait_window() {
    return integer("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "INCOMPLETE_STEP_WAIT_WINDOW");
}
inline std::optional<std::chrono::milliseconds> training_end_delay_refresh() {
    const auto seconds = integer("SMDEBUG_TRAINING_END_DELAY_REFRESH", "TRAINING_END_DELAY_REFRESH");
    if (!seconds) return std::nullopt;
    return std::chrono::milliseconds(1000 * *seconds);
}
inline std::optional<int> missing_event_file_retry_limit() {
    const auto n = integer("SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT");
    if (!n) return std::nullopt;
    return static_cast<int>(*n);
}
// The disk cache folder of remote trials.
inline std::optional<std::string> cache_dir() { return string("SMDEBUG_CACHE_DIR"); }
// The disk cache's bound; nothing when unset or not a positive integer.
inline std::optional<std::uint64_t> cache_max_bytes() {
    const auto n = integer("SMDEBUG_CACHE_MAX_BYTES");
    if (!n || *n <= 0) return std::nullopt;
    return static_cast<std::uint64_t>(*n);
}

// The expansion budget of decoded records (TrialOptions::max_expanded_elements); nothing when
// unset or not a positive integer.
inline std::optional<std::size_t> max_expanded_elements() {
    const auto n = integer("SMDEBUG_MAX_EXPANDED_ELEMENTS");
    if (!n || *n <= 0) return std::nullopt;
    return static_cast<std::size_t>(*n);
}

// ---- the Hook ----------------------------------------------------------------------------------

inline std::optional<std::string> use_smdebug() { return string("USE_SMDEBUG"); }
inline bool in_sagemaker_job() { return std::getenv("TRAINING_JOB_NAME") != nullptr; }
inline std::optional<std::string> hook_config_file() { return string("SMDEBUG_CONFIG_FILE_PATH"); }
inline std::optional<std::string> tensorboard_config_file() { return string("TENSORBOARD_CONFIG_FILE_PATH"); }

// ---- rules and paths ---------------------------------------------------------------------------

inline std::optional<std::string> rule_stop_signal_file() { return string("SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE"); }
inline std::optional<std::string> home() { return string("HOME"); }

}  // namespace smdebug::environment
