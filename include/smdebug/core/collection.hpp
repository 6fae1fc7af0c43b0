#pragma once
// Collections and their configuration (docs/format.md §6, §9): which tensors belong together,
// on which steps they are saved, and which reductions are saved instead of (or with) raw values.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/text.hpp>

namespace smdebug {

struct SaveConfigMode {
    std::int64_t save_interval = 500;
    std::vector<std::int64_t> save_steps;
    std::int64_t start_step = 0;
    std::optional<std::int64_t> end_step;  // exclusive

    // docs/format.md §9.1: save_steps are a union with the interval schedule and bypass start/end.
    bool should_save(std::int64_t mode_step) const noexcept {
        if (std::find(save_steps.begin(), save_steps.end(), mode_step) != save_steps.end()) return true;
        return mode_step >= start_step && (!end_step || mode_step < *end_step) && save_interval > 0 &&
               mode_step % save_interval == 0;
    }
    friend bool operator==(const SaveConfigMode&, const SaveConfigMode&) = default;
};

// One SaveConfigMode per mode; a missing entry means "not configured" (null in the JSON).
// A SaveConfigMode in one call: save_config_mode(2) saves every second step.
inline SaveConfigMode save_config_mode(std::int64_t save_interval, std::int64_t start_step = 0,
                                       std::optional<std::int64_t> end_step = std::nullopt,
                                       std::vector<std::int64_t> save_steps = {}) {
    SaveConfigMode m;
    m.save_interval = save_interval;
    m.start_step = start_step;
    m.end_step = end_step;
    m.save_steps = std::move(save_steps);
    return m;
}

struct SaveConfig {
    std::array<std::optional<SaveConfigMode>, 4> modes;

    SaveConfig() = default;
    explicit SaveConfig(const SaveConfigMode& all) { modes.fill(all); }

    std::optional<SaveConfigMode>& operator[](Mode m) noexcept { return modes[mode_index(m)]; }
    const std::optional<SaveConfigMode>& operator[](Mode m) const noexcept { return modes[mode_index(m)]; }
    friend bool operator==(const SaveConfig&, const SaveConfig&) = default;
};

inline constexpr std::array<std::string_view, 7> reduction_names{"min", "max", "mean", "std", "variance", "sum", "prod"};
inline constexpr std::array<std::string_view, 2> norm_names{"l1", "l2"};

struct ReductionConfig {
    std::vector<std::string> reductions;      // min, max, mean, std, variance, sum, prod
    std::vector<std::string> abs_reductions;  // same names, computed on |x|
    std::vector<std::string> norms;           // l1, l2
    std::vector<std::string> abs_norms;
    bool save_raw_tensor = false;
    bool save_shape = false;

    // "mean,max,l2_norm,abs_max,abs_l1_norm" (docs/format.md §6).
    std::string reductions_string() const {
        std::string s;
        auto add = [&](const std::string& item) { if (!s.empty()) s += ","; s += item; };
        for (const auto& r : reductions) add(r);
        for (const auto& n : norms) add(n + "_norm");
        for (const auto& r : abs_reductions) add("abs_" + r);
        for (const auto& n : abs_norms) add("abs_" + n + "_norm");
        return s;
    }

    // Adds the items of a reductions string; throws SMDebugValueError on an unknown name.
    void add_reductions_string(std::string_view s) {
        text::for_each_item(s, ',', text::spaces, [&](std::string_view item) {
            if (!item.empty()) add_item(item);
        });
    }
    bool has_reductions() const noexcept {
        return !reductions.empty() || !abs_reductions.empty() || !norms.empty() || !abs_norms.empty();
    }
    friend bool operator==(const ReductionConfig&, const ReductionConfig&) = default;

private:
    void add_item(std::string_view item) {
        const bool abs = item.starts_with("abs_");
        if (abs) item.remove_prefix(4);
        const bool norm = item.ends_with("_norm");
        if (norm) item.remove_suffix(5);
        const bool known = norm ? std::find(norm_names.begin(), norm_names.end(), item) != norm_names.end()
                                : std::find(reduction_names.begin(), reduction_names.end(), item) != reduction_names.end();
        if (!known)
            throw SMDebugValueError("reduction " + std::string(item) + (norm ? "_norm" : "") + " is not supported");
        auto& target = norm ? (abs ? abs_norms : norms) : (abs ? abs_reductions : reductions);
        target.emplace_back(item);
    }
};

struct Collection {
    std::string name;
    std::vector<std::string> include_regex;
    std::vector<std::string> tensor_names;  // sorted, unique
    std::optional<ReductionConfig> reduction_config;
    std::optional<SaveConfig> save_config;
    bool save_histogram = true;

    void add_tensor_name(std::string n) {
        auto it = std::lower_bound(tensor_names.begin(), tensor_names.end(), n);
        if (it == tensor_names.end() || *it != n) tensor_names.insert(it, std::move(n));
    }
    bool has_tensor_name(std::string_view n) const {
        return std::binary_search(tensor_names.begin(), tensor_names.end(), n);
    }
};

}  // namespace smdebug
