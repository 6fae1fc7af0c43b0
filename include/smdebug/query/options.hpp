#pragma once
// Options of Trial construction and of the queries whose Python counterparts take keywords.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/environment.hpp>

namespace smdebug {

struct TrialOptions {
    std::optional<std::string> name;                  // default: the path's base name
    std::optional<std::int64_t> range_begin;          // range_steps: begin (inclusive)
    std::optional<std::int64_t> range_end;            // range_steps: end (exclusive)
    bool cache = false;                               // keep full values once read
    // On a latency-bound store (S3; LatencyBoundStore): a read of a few records of an event file of
    // at most 1 MiB fetches the file's whole run of records and keeps the others, up to this many
    // bytes, until each is read once (query/detail/event_file_cache.hpp) — reading tensor by tensor then
    // costs one request per event file, not one per record. 0: fetch only what is asked for.
    std::uint64_t event_file_cache_bytes = std::uint64_t{64} << 20;
    bool index_mode = true;                           // false: never load steps (reference semantics)
    // On a latency-bound store (S3), batched reads of ascending steps (values_at, the rules) read
    // the next steps' batches on the Trial's helper threads while the caller works on this one
    // (docs/performance.md; not on local stores, where it was measured slower). false: every
    // value is read when asked.
    bool read_ahead = true;
    // D16: wait for a trial that has not started writing (instead of failing at once), and the
    // longest time to wait for it and for its collection files (none = forever, as the reference;
    // TimeoutError naming the path when it passes).
    // A path that holds no trial yet (missing, or a folder without collections/, index/ or events/
    // files: an empty folder, a docs folder, a trial's parent) fails at once unless wait_for_trial.
    bool wait_for_trial = false;
    std::optional<std::chrono::milliseconds> wait_timeout;
    // How the caller asks to wait, as the error for a path that holds no trial names it (the Python
    // package says "wait_timeout=SECONDS", the CLI "--wait [SECONDS]").
    std::string wait_hint = "TrialOptions::wait_for_trial";
    // Told once per open, before opening first waits, what it waits for (the trial to appear, or
    // its collection files); unset: the line goes to stderr, prefixed "smdebug: ".
    std::function<void(const std::string&)> on_wait;
    // Waiting (for the trial, its collection files, wait_for_steps) checks again after 50 ms, then
    // doubles the pause up to poll_interval; on local trials it also wakes as soon as the writer
    // publishes a file. It is also the pause between checks for a missing event file
    // (docs/semantics.md §7).
    std::chrono::milliseconds poll_interval{2000};    // the reference polls every 2 s
    // Defaults come from SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW, SMDEBUG_TRAINING_END_DELAY_REFRESH and
    // SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT (or their unprefixed names) when left unset
    // (core/environment.hpp).
    std::optional<std::int64_t> incomplete_step_wait_window;
    std::optional<std::chrono::milliseconds> training_end_delay_refresh;
    std::optional<int> missing_event_file_retry_limit;
    // What one index file may cost: its size, and the length of a tensor name in it. Over either
    // is a FormatError naming the file (reference-written index files hold ~100 bytes per record).
    std::size_t max_index_file_bytes = std::size_t{64} << 20;
    std::size_t max_tensor_name_bytes = std::size_t{16} << 10;
    // The most elements one typed value of a record may be expanded to when it is decoded (the
    // expansion budget: a TensorFlow-style record of a few bytes may claim any shape). Over it,
    // reading the value is a FormatError naming the file, the tensor, its shape and the budget;
    // describing the record (Tensor::info, `smdebug verify`) never expands it. Default:
    // SMDEBUG_MAX_EXPANDED_ELEMENTS (core/environment.hpp), else 2^20
    // (event::detail::max_broadcast_elements).
    std::optional<std::size_t> max_expanded_elements;
    // A folder on local disk that keeps the trial's index, event and collections files read from
    // a remote store (S3), shared by the processes that use it (storage/disk_cache_store.hpp),
    // applied by create_trial / open_trial_store. Default: SMDEBUG_CACHE_DIR (core/environment.hpp);
    // none when unset.
    std::optional<std::string> cache_dir;
    // The most the cache folder holds (least recently used files removed past it). Default:
    // SMDEBUG_CACHE_MAX_BYTES, else 1 GiB.
    std::optional<std::uint64_t> cache_max_bytes;
    // Requests in flight at most on a remote store (S3), applied by create_trial /
    // open_trial_store; default: the AWS configuration's (net::AwsConfig::concurrency, 64).
    std::optional<std::size_t> max_concurrency;
    // On a remote store (S3), applied by create_trial / open_trial_store: the longest a connection
    // may take to open, and a response to progress. Default: SMDEBUG_S3_CONNECT_TIMEOUT and
    // SMDEBUG_S3_READ_TIMEOUT (seconds; net::AwsConfig), else 10 s and 20 s.
    std::optional<std::chrono::milliseconds> connect_timeout, read_timeout;
    // Open from the trial's manifests (compacted index; format/manifest.hpp) when they are complete
    // and current; false: always list and read the index files.
    bool use_manifests = true;
    // Called with one line for what the reader ignores and goes on without (a stale, truncated
    // or corrupt manifest); unset: the line goes to stderr, prefixed "smdebug: warning: ".
    std::function<void(const std::string&)> on_warning;
};

inline void warn(const TrialOptions& o, const std::string& line) {
    if (o.on_warning) o.on_warning(line);
    else std::cerr << "smdebug: warning: " << line << "\n";
}

inline void announce_wait(const TrialOptions& o, const std::string& line) {
    if (o.on_wait) o.on_wait(line);
    else std::cerr << "smdebug: " << line << "\n" << std::flush;
}

struct TensorNamesQuery {
    std::optional<std::int64_t> step;
    Mode mode = Mode::GLOBAL;
    std::vector<std::string> regex;      // any pattern may match, anywhere in the name
    std::optional<std::string> collection;
};

struct StepQuery {
    Mode mode = Mode::GLOBAL;
    std::optional<std::string> worker;   // default: the first worker by name
};

}  // namespace smdebug
