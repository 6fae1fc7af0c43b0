#pragma once
// The Hook's options, and reading them from the JSON hook configuration SageMaker writes
// (SMDEBUG_CONFIG_FILE_PATH, docs/format.md §9.4) plus its environment switches. The reading is
// defined in writer/impl/hook_config.ipp.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/config.hpp>
#include <smdebug/core/errors.hpp>

namespace smdebug {

inline constexpr std::string_view default_hook_config_path = "/opt/ml/input/config/debughookconfig.json";
inline constexpr std::string_view default_sagemaker_out_dir = "/opt/ml/output/tensors";
inline constexpr std::string_view default_tensorboard_config_path = "/opt/ml/input/config/tensorboardoutputconfig.json";

enum class IncludeWorkers { one, all };

// Settings for one collection, applied on top of the built-in collections (or creating one).
struct CollectionSettings {
    std::string name;
    std::vector<std::string> include_regex;           // appended to the collection's patterns
    std::vector<std::string> tensor_names;            // added to the collection
    std::optional<SaveConfig> save_config;            // modes left unset come from the hook's
    std::optional<ReductionConfig> reduction_config;  // unset: the hook's reduction config
    std::optional<bool> save_histogram;
};

struct HookOptions {
    // Hook-wide schedule; every mode defaults to SaveConfigMode{} (every 500 steps from 0).
    SaveConfig save_config = SaveConfig(SaveConfigMode{});
    // Hook-wide reductions for collections without their own; unset = raw tensors only.
    std::optional<ReductionConfig> reduction_config;
    // Patterns of the `default` collection; giving them (even empty) includes `default`.
    std::optional<std::vector<std::string>> include_regex;
    // Collections to save (always with `losses`); unset = only `losses` (+ default/all below).
    std::optional<std::vector<std::string>> include_collections;
    bool save_all = false;                       // include `all` (pattern ".*")
    std::vector<CollectionSettings> collections; // per-collection settings (they are included)

    // Distributed jobs: this process's rank and the number of processes. With
    // include_workers == one only rank 0 writes (and num_workers is 1); with all, every rank
    // writes its own files as worker_<rank> and num_workers is world_size.
    IncludeWorkers include_workers = IncludeWorkers::one;
    int rank = 0;
    int world_size = 1;
    std::string worker_name;                     // "" = "worker_<rank>"

    bool export_tensorboard = false;             // TensorBoard files under <out_dir>/tensorboard
    std::optional<std::string> tensorboard_dir;  // explicit TensorBoard folder (implies export)

    // The reference reader loses a tensor's value when one index file records both its value
    // and its shape (docs/format.md §10), so by default a shape asked for by save_shape is recorded
    // only when the raw value is not saved in that step (the value carries the shape anyway).
    // true: record it in every case (readable by smdebug-cpp, docs/deviations.md D19).
    bool record_shape_with_raw_value = false;

    // Closed steps are written by a background thread (encoding stays on the training thread,
    // file I/O and fsync do not). At most writer_queue_steps steps / writer_queue_bytes of event
    // data wait to be written; next_step() blocks while the queue is full. false: next_step()
    // writes the step itself before returning (and throws its write error at once).
    bool background_writer = true;
    // Twice writer_steps_in_flight: on S3 the steps being uploaded stay queued until written, and
    // training fills the next batch meanwhile (a queue of 16 stopped it for every batch's round
    // trips: docs/performance.md).
    std::size_t writer_queue_steps = 32;
    std::size_t writer_queue_bytes = std::size_t{256} << 20;
    // After a job the background writer looks for the next one every millisecond for this long
    // before it sleeps: a training loop that closes steps more often than this never pays for
    // waking the writer (docs/performance.md). 0: the writer sleeps after each job, and each
    // next_step() wakes it.
    std::chrono::milliseconds writer_poll_before_sleep{250};
    // On a latency-bound store (S3) the background writer writes up to this many consecutive
    // closed steps at once, their uploads in flight together within the client's window
    // (docs/performance.md). 1: one step at a time, as on a local folder. 0 counts as 1.
    std::size_t writer_steps_in_flight = 16;
    // On a local folder, next_step() also waits until every step before the previous one is
    // written: a step's files are complete once the second step after it begins, as the
    // reference writes them (its readers open a trial in the middle of training, between steps).
    // A writer that keeps pace with training is never waited for. Not on latency-bound stores
    // (S3): the steps in flight are what hides the round trips there. false: only
    // writer_queue_steps bounds the lag.
    bool writer_bounded_lag = true;

    // Also write this worker's manifests (compacted index, format/manifest.hpp) under manifest/:
    // one per bucket of 1000 steps as the steps enter the next, and one at close(). Readers then
    // open the trial from them (the Python smdebug does not look there).
    bool write_manifest = false;

    // Anomaly window (flight recorder, writer/flight_recorder.hpp): with K > 0 every step records the
    // included collections; steps the save configs do not ask for are kept in memory (the last K,
    // at most anomaly_window_bytes of event data) and written only when a later step records a
    // NaN or an infinity, before that step. 0: off.
    std::size_t anomaly_window = 0;
    std::size_t anomaly_window_bytes = std::size_t{256} << 20;

    std::optional<bool> enabled;           // unset: USE_SMDEBUG decides (default on)
    std::optional<bool> write_end_marker;  // unset: yes unless TRAINING_JOB_NAME is set
    std::function<double()> clock;         // wall time of saved records; unset: system clock
};

struct HookConfig {
    std::string out_dir;
    HookOptions options;
};

// ---- environment (core/environment.hpp reads it) ------------------------------------------------

// USE_SMDEBUG: "0", "false", "no", "off", "n", "f" (any case) turn the hook off; unset = on.
bool smdebug_enabled_by_env();
// TRAINING_JOB_NAME present = running inside SageMaker.
bool is_sagemaker_job();
std::string hook_config_path_from_env();
// The whole file at `path`; ObjectNotFound when it cannot be opened.
std::string read_text_file(const std::string& path);
// The TensorBoard folder SageMaker configures: LocalPath of the JSON file named by
// TENSORBOARD_CONFIG_FILE_PATH (default /opt/ml/input/config/tensorboardoutputconfig.json).
std::optional<std::string> tensorboard_dir_from_env_config();

// ---- JSON hook configuration ----------------------------------------------------------------------

// Parses a hook configuration (docs/format.md §9.4). LocalPath is the out_dir; S3OutputPath and other
// platform keys are ignored. `context` names the file in errors.
HookConfig parse_hook_config(std::string_view text, std::string_view context = "hook configuration");
// Reads the configuration at `path`, or at SMDEBUG_CONFIG_FILE_PATH (default
// /opt/ml/input/config/debughookconfig.json) when `path` is empty. A missing file raises
// ObjectNotFound (create_from_json_file semantics).
HookConfig load_hook_config(const std::string& path = {});

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/writer/impl/hook_config.ipp>
#endif
