// Rules over a realistic trial: 1000 steps x 50 float32 tensors x 1024 elements (200 MB, hot page
// cache). ExplodingTensor checks every value of every tensor; VanishingGradient computes mean(|g|)
// of the 50 tensors (all in collection `gradients`). Neither fires, so every step is visited.
// Reported: steps/s and GB/s of tensor payload (the whole invoke_rule loop: waiting for steps,
// tensor selection, fetching, checking). With SMDEBUG_S3RVER_ENDPOINT set (run under
// tests/s3rver/run-with-s3rver.sh) the same rules also run over a 200-step copy on s3rver.
#include <benchmark/benchmark.h>

#include <smdebug/rules/rules.hpp>
#include <smdebug/smdebug.hpp>

#include <cstdlib>
#include <ctime>

#include <smdebug/storage/s3_store.hpp>

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

constexpr int kS3Steps = 200;
const char* s3_trial() {
    static const char* url = []() -> const char* {
        const char* endpoint = std::getenv("SMDEBUG_S3RVER_ENDPOINT");
        if (!endpoint) return nullptr;
        ::setenv("AWS_ENDPOINT_URL", endpoint, 1);
        ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
        ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
        ::setenv("AWS_REGION", "us-east-1", 1);
        static const std::string u = "s3://smdebug-test/bench-rules-200";
        const auto dir = bench::make_trial("rules-s3", kS3Steps, kTensors, kElements);
        smdebug::collections_file::CollectionsFile f = smdebug::collections_file::match_all();
        smdebug::Collection g;
        g.name = "gradients";
        g.include_regex = {"/weight$"};
        f.collections.push_back(g);
        smdebug::LocalStore local(dir);
        smdebug::write_collections_file(local, "worker_0", f);
        smdebug::S3Store s3(u);
        for (const auto& key : local.list("", "")) s3.write(key, local.read(key).bytes());
        return u.c_str();
    }();
    return url;
}

template <class Store, class MakeTrial, class MakeRule>
void run_on(benchmark::State& state, int expected_steps, MakeTrial make_trial, MakeRule make, bool read_ahead = true) {
    smdebug::TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    o.read_ahead = read_ahead;
    std::int64_t steps = 0;
    (void)make_trial();  // the fixture is written on first use: not part of the measurement
    const std::clock_t cpu_start = std::clock();
    for (auto _ : state) {
        smdebug::Trial<Store> trial(make_trial(), o);
        auto rule = make(trial);
        const auto r = smdebug::invoke_rule(*rule);
        if (!r.fired_steps.empty() || !r.training_ended || r.end_step != expected_steps - 1) state.SkipWithError("the rule fired or stopped early");
        steps += expected_steps;
    }
    const double cpu_seconds = double(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    const double bytes = double(steps) * kTensors * kElements * sizeof(float);
    // Per CPU-second of this process: the figure that holds on a machine shared with other work.
    state.counters["GB/cpu-s"] = cpu_seconds > 0 ? bytes / 1e9 / cpu_seconds : 0.0;
    state.counters["steps/s"] = benchmark::Counter(double(steps), benchmark::Counter::kIsRate);
    state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate);
}

template <class MakeRule>
void run(benchmark::State& state, MakeRule make, bool read_ahead = true) {
    run_on<smdebug::LocalStore>(state, kSteps, [] { return smdebug::LocalStore(trial_dir()); }, make, read_ahead);
}
template <class MakeRule>
void run_s3(benchmark::State& state, MakeRule make) {
    const char* url = s3_trial();
    if (!url) {
        state.SkipWithError("SMDEBUG_S3RVER_ENDPOINT is not set (run under tests/s3rver/run-with-s3rver.sh)");
        return;
    }
    run_on<smdebug::S3Store>(state, kS3Steps, [url] { return smdebug::S3Store(url); }, make);
}

void BM_ExplodingTensor_every_value(benchmark::State& state) {
    run(state, [](auto& t) { return std::make_unique<smdebug::ExplodingTensor<smdebug::LocalStore>>(t); });
}
// The same without reading the next steps ahead (TrialOptions::read_ahead = false): what the
// read-ahead buys (docs/performance.md).
void BM_ExplodingTensor_every_value_no_read_ahead(benchmark::State& state) {
    run(state, [](auto& t) { return std::make_unique<smdebug::ExplodingTensor<smdebug::LocalStore>>(t); }, false);
}
void BM_VanishingGradient_50_gradients(benchmark::State& state) {
    run(state, [](auto& t) { return std::make_unique<smdebug::VanishingGradient<smdebug::LocalStore>>(t); });
}
void BM_S3_ExplodingTensor_every_value(benchmark::State& state) {
    run_s3(state, [](auto& t) { return std::make_unique<smdebug::ExplodingTensor<smdebug::S3Store>>(t); });
}
void BM_S3_VanishingGradient_50_gradients(benchmark::State& state) {
    run_s3(state, [](auto& t) { return std::make_unique<smdebug::VanishingGradient<smdebug::S3Store>>(t); });
}

}  // namespace

BENCHMARK(BM_ExplodingTensor_every_value)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_ExplodingTensor_every_value_no_read_ahead)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_VanishingGradient_50_gradients)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_S3_ExplodingTensor_every_value)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
BENCHMARK(BM_S3_VanishingGradient_50_gradients)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
BENCHMARK_MAIN();
