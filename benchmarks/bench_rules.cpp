// Rules over a realistic trial: 1000 steps x 50 float32 tensors x 1024 elements (200 MB, hot page
// cache). ExplodingTensor checks every value of every tensor; VanishingGradient computes mean(|g|)
// of the 50 tensors (all in collection `gradients`). Neither fires, so every step is visited.
// Reported: steps/s and GB/s of tensor payload (the whole invoke_rule loop: waiting for steps,
// tensor selection, fetching, checking).
#include <benchmark/benchmark.h>

#include <smdebug/rules/rules.hpp>
#include <smdebug/smdebug.hpp>

#include "trial_fixture.hpp"

namespace {

constexpr int kSteps = 1000, kTensors = 50;
constexpr std::size_t kElements = 1024;

const std::filesystem::path& trial_dir() {
    static const auto dir = [] {
        auto d = bench::make_trial("rules", kSteps, kTensors, kElements);
        // Every tensor is also a gradient, for VanishingGradient.
        smdebug::collections_file::CollectionsFile f = smdebug::collections_file::match_all();
        smdebug::Collection g;
        g.name = "gradients";
        g.include_regex = {"/weight$"};
        f.collections.push_back(g);
        smdebug::write_collections_file(smdebug::LocalStore(d), "worker_0", f);
        return d;
    }();
    return dir;
}

template <class MakeRule>
void run(benchmark::State& state, MakeRule make) {
    smdebug::TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    std::int64_t steps = 0;
    for (auto _ : state) {
        smdebug::Trial<smdebug::LocalStore> trial(smdebug::LocalStore(trial_dir()), o);
        auto rule = make(trial);
        const auto r = smdebug::invoke_rule(*rule);
        if (!r.fired_steps.empty() || r.end_step != kSteps) state.SkipWithError("the rule fired or stopped early");
        steps += kSteps;
    }
    const double bytes = double(steps) * kTensors * kElements * sizeof(float);
    state.counters["steps/s"] = benchmark::Counter(double(steps), benchmark::Counter::kIsRate);
    state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate);
}

void BM_ExplodingTensor_every_value(benchmark::State& state) {
    run(state, [](auto& t) { return std::make_unique<smdebug::ExplodingTensor<smdebug::LocalStore>>(t); });
}
void BM_VanishingGradient_50_gradients(benchmark::State& state) {
    run(state, [](auto& t) { return std::make_unique<smdebug::VanishingGradient<smdebug::LocalStore>>(t); });
}

}  // namespace

BENCHMARK(BM_ExplodingTensor_every_value)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_VanishingGradient_50_gradients)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK_MAIN();
