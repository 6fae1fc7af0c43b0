#pragma once
// The Hook's options, and reading them from the JSON hook configuration SageMaker writes
// (SMDEBUG_CONFIG_FILE_PATH, docs/format.md §9.4) plus its environment switches.
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/environment.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/format/detail/json.hpp>
#include <smdebug/writer/save_config.hpp>

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
    std::size_t writer_queue_steps = 16;
    std::size_t writer_queue_bytes = std::size_t{256} << 20;
    // After a job the background writer looks for the next one every millisecond for this long
    // before it sleeps: a training loop that closes steps more often than this never pays for
    // waking the writer (docs/performance.md). 0: the writer sleeps after each job, and each
    // next_step() wakes it.
    std::chrono::milliseconds writer_poll_before_sleep{250};

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
inline bool smdebug_enabled_by_env() {
    const auto v = environment::use_smdebug();
    if (!v) return true;
    const std::string s = text::to_lower(text::trim(*v, text::json_whitespace));
    return !(s == "0" || s == "false" || s == "no" || s == "off" || s == "n" || s == "f");
}

// TRAINING_JOB_NAME present = running inside SageMaker.
inline bool is_sagemaker_job() { return environment::in_sagemaker_job(); }

inline std::string hook_config_path_from_env() {
    return environment::hook_config_file().value_or(std::string(default_hook_config_path));
}

inline std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ObjectNotFound("cannot open configuration file " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw StorageError("cannot read configuration file " + path);
    return ss.str();
}

// The TensorBoard folder SageMaker configures: LocalPath of the JSON file named by
// TENSORBOARD_CONFIG_FILE_PATH (default /opt/ml/input/config/tensorboardoutputconfig.json).
inline std::optional<std::string> tensorboard_dir_from_env_config() {
    const auto path = environment::tensorboard_config_file().value_or(std::string(default_tensorboard_config_path));
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    const auto root = json::parse<SMDebugValueError>(read_text_file(path), path, "invalid TensorBoard configuration JSON");
    if (!root.is_object()) return std::nullopt;
    const auto* lp = root.get_object().if_contains("LocalPath");
    if (!lp || !lp->is_string()) return std::nullopt;
    return std::string(lp->get_string());
}

// ---- JSON hook configuration ----------------------------------------------------------------------

namespace detail {
inline const json::bj::object* object_or_null(const json::bj::object& parent, std::string_view key, std::string_view context) {
    const auto* v = parent.if_contains(key);
    if (!v || v->is_null()) return nullptr;
    if (!v->is_object()) throw SMDebugValueError(std::string(context) + ": " + std::string(key) + " must be an object");
    return &v->get_object();
}
}  // namespace detail

// Parses a hook configuration (docs/format.md §9.4). LocalPath is the out_dir; S3OutputPath and other
// platform keys are ignored. `context` names the file in errors.
inline HookConfig parse_hook_config(std::string_view text, std::string_view context = "hook configuration") {
    const auto root = json::parse<SMDebugValueError>(text, context, "invalid hook configuration JSON");
    if (!root.is_object()) throw SMDebugValueError(std::string(context) + ": the hook configuration must be a JSON object");
    const auto& top = root.get_object();
    HookConfig cfg;
    auto& o = cfg.options;
    cfg.out_dir = std::string(default_sagemaker_out_dir);
    if (const auto* lp = top.if_contains("LocalPath"); lp && !lp->is_null()) {
        if (!lp->is_string()) throw SMDebugValueError(std::string(context) + ": LocalPath must be a string");
        cfg.out_dir = std::string(lp->get_string());
    }

    static const json::bj::object empty;
    const auto* hp_ptr = detail::object_or_null(top, "HookParameters", context);
    const auto& hp = hp_ptr ? *hp_ptr : empty;
    const std::string hctx = std::string(context) + ": HookParameters";
    const auto base = parse_save_config_modes(hp);
    o.save_config = resolve_save_config(base);
    if (hp.contains("reductions")) o.reduction_config = parse_reduction_config(hp, hctx);
    if (const auto* v = hp.if_contains("save_all"); v && !v->is_null()) o.save_all = settings::to_bool(*v, "save_all");
    if (const auto* v = hp.if_contains("include_regex"); v && !v->is_null()) o.include_regex = settings::to_list(*v, "include_regex");
    if (const auto* v = hp.if_contains("include_workers"); v && !v->is_null()) {
        if (!v->is_string() || (v->get_string() != "one" && v->get_string() != "all"))
            throw SMDebugValueError(hctx + ": include_workers=" + json::dumps(*v) + " must be \"one\" or \"all\"");
        o.include_workers = v->get_string() == "all" ? IncludeWorkers::all : IncludeWorkers::one;
    }
    if (is_sagemaker_job()) {  // SageMaker: TensorBoard only where the platform asks for it
        o.tensorboard_dir = tensorboard_dir_from_env_config();
        o.export_tensorboard = o.tensorboard_dir.has_value();
    } else {
        if (const auto* v = hp.if_contains("export_tensorboard"); v && !v->is_null())
            o.export_tensorboard = settings::to_bool(*v, "export_tensorboard");
        if (const auto* v = hp.if_contains("tensorboard_dir"); v && !v->is_null()) {
            if (!v->is_string()) throw SMDebugValueError(hctx + ": tensorboard_dir must be a string");
            o.tensorboard_dir = std::string(v->get_string());
        }
    }

    if (const auto* cc = top.if_contains("CollectionConfigurations"); cc && !cc->is_null()) {
        if (!cc->is_array()) throw SMDebugValueError(std::string(context) + ": CollectionConfigurations must be a list");
        o.include_collections.emplace();
        for (const auto& entry : cc->get_array()) {
            if (!entry.is_object()) throw SMDebugValueError(std::string(context) + ": CollectionConfigurations entries must be objects");
            const auto* name = entry.get_object().if_contains("CollectionName");
            if (!name) throw SMDebugValueError(std::string(context) + ": Must specify 'CollectionName' in JSON config.");
            if (!name->is_string()) throw SMDebugValueError(std::string(context) + ": CollectionName must be a string");
            CollectionSettings cs;
            cs.name = std::string(name->get_string());
            const std::string cctx = std::string(context) + ": collection " + cs.name;
            const auto* cp_ptr = detail::object_or_null(entry.get_object(), "CollectionParameters", cctx);
            const auto& cp = cp_ptr ? *cp_ptr : empty;
            cs.save_config = resolve_save_config(parse_save_config_modes(cp, &base));
            if (cp.contains("reductions")) cs.reduction_config = parse_reduction_config(cp, cctx);
            if (const auto* v = cp.if_contains("include_regex"); v && !v->is_null()) cs.include_regex = settings::to_list(*v, "include_regex");
            if (const auto* v = cp.if_contains("save_histogram"); v && !v->is_null()) cs.save_histogram = settings::to_bool(*v, "save_histogram");
            o.include_collections->push_back(cs.name);
            o.collections.push_back(std::move(cs));
        }
    }
    return cfg;
}

// Reads the configuration at `path`, or at SMDEBUG_CONFIG_FILE_PATH (default
// /opt/ml/input/config/debughookconfig.json) when `path` is empty. A missing file raises
// ObjectNotFound (create_from_json_file semantics).
inline HookConfig load_hook_config(const std::string& path = {}) {
    const std::string p = path.empty() ? hook_config_path_from_env() : path;
    return parse_hook_config(read_text_file(p), p);
}

}  // namespace smdebug
