#pragma once
// Trials for the tests of `diagnose` and `diff` (smdebug/analysis/), written with the project's own
// Hook as a PyTorch job's hook writes them: in each step the weights, then each module's input and
// output in forward order, the loss, then the gradients in backward order (docs/diagnose.md).
// A 3-layer MLP (fc1, relu, fc2, CrossEntropyLoss) in TRAIN mode, with an EVAL phase of 2 steps
// after every 5 TRAIN steps. Used by tests/unit/test_analysis.cpp and by the program
// make_analysis_trials (tests/analysis/make_analysis_trials.cpp) that the Python and serve tests run.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <smdebug/writer/hook.hpp>
#include <smdebug/storage/local_store.hpp>

namespace analysis_trials {

struct MlpSpec {
    int train_steps = 20;
    // The TRAIN step (mode step) at which fc2's output becomes +inf although its input is finite;
    // the loss and the gradients of that step are NaN, and every weight from the next TRAIN step on.
    std::optional<int> inf_at;
    // The TRAIN step (mode step) at which fc1.weight alone becomes NaN when its step begins (the update
    // of the step before made it so); nothing else before it is non-finite.
    std::optional<int> weight_nan_at;
    // From this TRAIN step (mode step) on, fc2.weight is perturbed by `perturbation` (a second run
    // that parts from the first there).
    std::optional<int> perturb_from;
    float perturbation = 1e-3f;
    int eval_every = 5;  // an EVAL phase of 2 steps after every eval_every TRAIN steps (0: none)
    std::vector<std::string> drop_tensors;  // never saved
};

inline smdebug::HookOptions hook_options() {
    smdebug::HookOptions o;
    o.enabled = true;
    o.write_end_marker = true;
    o.save_config = smdebug::SaveConfig(smdebug::save_config_mode(1));
    o.include_collections = std::vector<std::string>{"weights", "biases", "gradients", "losses"};
    o.collections.push_back({.name = "inputs", .include_regex = {"_input_"}});
    o.collections.push_back({.name = "outputs", .include_regex = {"_output_"}});
    return o;
}

// Writes the MLP trial into `dir` (a finished job: the end marker is written).
inline void write_mlp(const std::filesystem::path& dir, const MlpSpec& spec) {
    using smdebug::Mode;
    constexpr float inf = std::numeric_limits<float>::infinity();
    constexpr float nan = std::numeric_limits<float>::quiet_NaN();
    smdebug::Hook<smdebug::LocalStore> hook(smdebug::LocalStore(dir, smdebug::LocalStore::Durability::none), hook_options());
    auto dropped = [&](const std::string& n) {
        for (const auto& d : spec.drop_tensors)
            if (d == n) return true;
        return false;
    };
    auto save = [&](const std::string& name, std::vector<float> v, const char* collection) {
        if (dropped(name)) return;
        hook.save_tensor(name, v.data(), smdebug::Shape{v.size()}, collection);
    };
    auto values = [](int n, float scale, float offset) {
        std::vector<float> v(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = offset + scale * std::sin(0.7f * static_cast<float>(i) + offset);
        return v;
    };
    auto fill = [](std::vector<float> v, float x) {
        for (auto& e : v) e = x;
        return v;
    };
    int train = 0, eval = 0;
    bool broken = false;  // weights are NaN from here on
    auto step = [&](Mode mode, int ms) {
        hook.set_mode(mode);
        hook.next_step();
        const float t = static_cast<float>(ms) * 0.01f;
        const bool training = mode == Mode::TRAIN;
        const bool inf_here = training && spec.inf_at && ms == *spec.inf_at;
        const bool weight_nan_here = training && spec.weight_nan_at && ms >= *spec.weight_nan_at;
        auto fc2w = values(8, 0.5f, 0.2f + (training ? t : 0.f));
        if (training && spec.perturb_from && ms >= *spec.perturb_from) fc2w[3] += spec.perturbation;
        auto fc1w = values(16, 0.3f, 0.1f + (training ? t : 0.f));
        if (weight_nan_here) fc1w[5] = nan;
        save("fc1.weight", broken ? fill(fc1w, nan) : fc1w, "weights");
        save("fc1.bias", broken ? fill(values(4, 0.1f, 0.f), nan) : values(4, 0.1f, 0.f), "biases");
        save("fc2.weight", broken ? fill(fc2w, nan) : fc2w, "weights");
        const auto x = values(4, 1.f, 0.5f + static_cast<float>(ms));
        save("fc1_input_0", x, "inputs");
        const bool nan_forward = broken || weight_nan_here;
        save("fc1_output_0", nan_forward ? fill(values(4, 1.f, 0.f), nan) : values(4, 0.8f, 0.3f + t), "outputs");
        save("relu_input_0", nan_forward ? fill(values(4, 1.f, 0.f), nan) : values(4, 0.8f, 0.3f + t), "inputs");
        save("relu_output_0", nan_forward ? fill(values(4, 1.f, 0.f), nan) : values(4, 0.4f, 0.6f + t), "outputs");
        save("fc2_input_0", nan_forward ? fill(values(4, 1.f, 0.f), nan) : values(4, 0.4f, 0.6f + t), "inputs");
        auto out = nan_forward ? fill(values(2, 1.f, 0.f), nan) : values(2, 0.9f, 0.1f + t);
        if (inf_here) out[1] = inf;
        if (training && spec.perturb_from && ms >= *spec.perturb_from) out[0] += spec.perturbation;
        save("fc2_output_0", out, "outputs");
        save("CrossEntropyLoss_input_0", out, "inputs");
        const float loss = 1.0f - 0.02f * static_cast<float>(train);  // the same in both modes: no overfitting
        save("CrossEntropyLoss_output_0", {inf_here || nan_forward ? nan : loss}, "losses");
        if (training) {
            const bool nan_backward = inf_here || nan_forward;
            save("gradients/fc2.weight", nan_backward ? fill(values(8, 1.f, 0.f), nan) : values(8, 0.01f, 0.02f), "gradients");
            save("gradients/fc1.weight", nan_backward ? fill(values(16, 1.f, 0.f), nan) : values(16, 0.01f, 0.03f), "gradients");
            if (inf_here) broken = true;
        }
    };
    while (train < spec.train_steps) {
        step(Mode::TRAIN, train++);
        if (spec.eval_every > 0 && train % spec.eval_every == 0 && train < spec.train_steps)
            for (int i = 0; i < 2; ++i) step(Mode::EVAL, eval++);
    }
    hook.close();
}

}  // namespace analysis_trials
