#pragma once
// SaveConfig building blocks for the writer (docs/format.md §9.1, §9.4): parsing the loosely typed
// values of a JSON hook configuration ("2" or 2, "true" or true, "1, 5"), partial per-mode save
// configs and their merge rules, and completing a SaveConfig from the hook's defaults.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/format/detail/json.hpp>

namespace smdebug {

namespace settings {

// "foo, bar,baz" -> {"foo", "bar", "baz"} (items trimmed, empty items kept, as Python's split()).
inline std::vector<std::string> split_list(std::string_view s) { return text::split(s, ',', text::json_whitespace); }

// An integer setting: a JSON integer, a float (truncated, as Python's int()) or a numeric string.
inline std::int64_t to_int(const json::bj::value& v, std::string_view key) {
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(v.get_uint64());
    if (v.is_double() && std::isfinite(v.get_double()) && std::fabs(v.get_double()) < 9.2e18)
        return static_cast<std::int64_t>(v.get_double());
    if (v.is_string()) {
        auto s = text::trim(v.get_string(), text::json_whitespace);
        if (!s.empty() && s.front() == '+') s.remove_prefix(1);
        std::int64_t out = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        if (!s.empty() && ec == std::errc() && p == s.data() + s.size()) return out;
    }
    throw SMDebugValueError(std::string(key) + "=" + json::dumps(v) + " must be an integer");
}

// A boolean setting: a JSON boolean or one of "true", "True", "false", "False" (parse_bool).
inline bool to_bool(const json::bj::value& v, std::string_view key) {
    if (v.is_bool()) return v.get_bool();
    if (v.is_string()) {
        const auto s = v.get_string();
        if (s == "true" || s == "True") return true;
        if (s == "false" || s == "False") return false;
    }
    throw SMDebugValueError(std::string(key) + "=" + json::dumps(v) + ": boolean argument expected");
}

// A boolean that must be a JSON boolean (ReductionConfig's save_raw_tensor / save_shape).
inline bool to_strict_bool(const json::bj::value& v, std::string_view key) {
    if (v.is_bool()) return v.get_bool();
    throw SMDebugValueError(std::string(key) + "=" + json::dumps(v) + " must be a boolean");
}

// A comma-separated string setting (a JSON list of strings is accepted too).
inline std::vector<std::string> to_list(const json::bj::value& v, std::string_view key) {
    if (v.is_string()) return split_list(v.get_string());
    if (v.is_array()) {
        std::vector<std::string> out;
        for (const auto& e : v.get_array()) {
            if (!e.is_string()) throw SMDebugValueError(std::string(key) + " must be a comma-separated string");
            out.emplace_back(e.get_string());
        }
        return out;
    }
    throw SMDebugValueError(std::string(key) + "=" + json::dumps(v) + " must be a comma-separated string");
}

// "1, 5" -> {1, 5}; every item must be an integer (a JSON list of integers is accepted too).
inline std::vector<std::int64_t> to_int_list(const json::bj::value& v, std::string_view key) {
    std::vector<std::int64_t> out;
    if (v.is_array()) {
        for (const auto& e : v.get_array()) out.push_back(to_int(e, key));
        return out;
    }
    for (const auto& item : to_list(v, key)) out.push_back(to_int(json::bj::value(item), key));
    return out;
}

}  // namespace settings


// The save-config keys one JSON object sets for one mode; absent keys are inherited
// (docs/format.md §9.4).
struct PartialSaveConfigMode {
    std::optional<std::int64_t> save_interval;
    std::optional<std::int64_t> start_step;
    std::optional<std::optional<std::int64_t>> end_step;  // set to "no end" by an explicit null
    std::optional<std::vector<std::int64_t>> save_steps;

    // Keys of `this` win over `base`'s.
    PartialSaveConfigMode over(const PartialSaveConfigMode& base) const {
        PartialSaveConfigMode m = *this;
        if (!m.save_interval) m.save_interval = base.save_interval;
        if (!m.start_step) m.start_step = base.start_step;
        if (!m.end_step) m.end_step = base.end_step;
        if (!m.save_steps) m.save_steps = base.save_steps;
        return m;
    }
    // Missing keys take the SaveConfigMode defaults (interval 500, start 0, no end, no steps).
    SaveConfigMode resolve() const {
        SaveConfigMode m;
        if (save_interval) m.save_interval = *save_interval;
        if (start_step) m.start_step = *start_step;
        if (end_step) m.end_step = *end_step;
        if (save_steps) m.save_steps = *save_steps;
        if (m.save_interval <= 0)
            throw SMDebugValueError("save_interval=" + std::to_string(m.save_interval) + " must be a positive integer");
        return m;
    }
};

constexpr std::string_view mode_prefix(Mode m) noexcept {
    switch (m) {
        case Mode::TRAIN: return "train.";
        case Mode::EVAL: return "eval.";
        case Mode::PREDICT: return "predict.";
        case Mode::GLOBAL: return "global.";
    }
    return "";
}

// The save-config keys of `params` that start with `prefix` ("" or "train." ...).
inline PartialSaveConfigMode parse_save_config_keys(const json::bj::object& params, std::string_view prefix) {
    PartialSaveConfigMode m;
    auto key = [&](std::string_view name) { return std::string(prefix) + std::string(name); };
    if (const auto* v = params.if_contains(key("save_interval"))) m.save_interval = settings::to_int(*v, key("save_interval"));
    if (const auto* v = params.if_contains(key("start_step"))) m.start_step = settings::to_int(*v, key("start_step"));
    if (const auto* v = params.if_contains(key("end_step")))
        m.end_step = v->is_null() ? std::optional<std::int64_t>() : std::optional<std::int64_t>(settings::to_int(*v, key("end_step")));
    if (const auto* v = params.if_contains(key("save_steps"))) m.save_steps = settings::to_int_list(*v, key("save_steps"));
    return m;
}

// Per mode: the un-prefixed keys overridden by the mode-prefixed ones, then laid over `base`
// (the hook's per-mode values when `params` configures a collection). docs/format.md §9.4.
inline std::array<PartialSaveConfigMode, 4> parse_save_config_modes(const json::bj::object& params,
                                                                    const std::array<PartialSaveConfigMode, 4>* base = nullptr) {
    const auto plain = parse_save_config_keys(params, "");
    std::array<PartialSaveConfigMode, 4> out;
    for (Mode m : all_modes) {
        auto& e = out[mode_index(m)];
        e = parse_save_config_keys(params, mode_prefix(m)).over(plain);
        if (base) e = e.over((*base)[mode_index(m)]);
    }
    return out;
}

inline SaveConfig resolve_save_config(const std::array<PartialSaveConfigMode, 4>& modes) {
    SaveConfig c;
    for (Mode m : all_modes) c[m] = modes[mode_index(m)].resolve();
    return c;
}

// Fills the modes `config` leaves unset from `defaults` (then from SaveConfigMode{}).
inline void fill_missing_modes(SaveConfig& config, const SaveConfig& defaults) {
    for (Mode m : all_modes)
        if (!config[m]) config[m] = defaults[m].value_or(SaveConfigMode{});
}

// The reductions of a JSON parameter object: `reductions` plus `save_raw_tensor` / `save_shape`
// (JSON booleans, default false). Only meaningful when `reductions` is present (docs/format.md §9.4).
inline ReductionConfig parse_reduction_config(const json::bj::object& params, std::string_view context) {
    ReductionConfig r;
    if (const auto* v = params.if_contains("reductions"); v && !v->is_null()) {
        if (!v->is_string()) throw SMDebugValueError(std::string(context) + ": reductions must be a comma-separated string");
        r.add_reductions_string(v->get_string());
    }
    if (const auto* v = params.if_contains("save_raw_tensor"); v && !v->is_null())
        r.save_raw_tensor = settings::to_strict_bool(*v, std::string(context) + ".save_raw_tensor");
    if (const auto* v = params.if_contains("save_shape"); v && !v->is_null())
        r.save_shape = settings::to_strict_bool(*v, std::string(context) + ".save_shape");
    return r;
}

}  // namespace smdebug
