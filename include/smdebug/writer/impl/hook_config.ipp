#pragma once
// The definitions of writer/hook_config.hpp: the environment switches and the JSON hook configuration.
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <smdebug/core/environment.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/format/detail/json.hpp>
#include <smdebug/writer/hook_config.hpp>
#if !SMDEBUG_HEADER_ONLY && !defined(SMDEBUG_SOURCE)
#error "this file defines functions compiled once by <smdebug/src.hpp>: in separate mode include it only there"
#endif
#include <smdebug/writer/save_config.hpp>

namespace smdebug {

SMDEBUG_INLINE bool smdebug_enabled_by_env() {
    const auto v = environment::use_smdebug();
    if (!v) return true;
    const std::string s = text::to_lower(text::trim(*v, text::json_whitespace));
    return !(s == "0" || s == "false" || s == "no" || s == "off" || s == "n" || s == "f");
}

SMDEBUG_INLINE bool is_sagemaker_job() { return environment::in_sagemaker_job(); }

SMDEBUG_INLINE std::string hook_config_path_from_env() {
    return environment::hook_config_file().value_or(std::string(default_hook_config_path));
}

SMDEBUG_INLINE std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ObjectNotFound("cannot open configuration file " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw StorageError("cannot read configuration file " + path);
    return ss.str();
}

SMDEBUG_INLINE std::optional<std::string> tensorboard_dir_from_env_config() {
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

SMDEBUG_INLINE HookConfig parse_hook_config(std::string_view text, std::string_view context) {
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

SMDEBUG_INLINE HookConfig load_hook_config(const std::string& path) {
    const std::string p = path.empty() ? hook_config_path_from_env() : path;
    return parse_hook_config(read_text_file(p), p);
}

}  // namespace smdebug
