// Realtime refresh benchmarks: the time a reader following a running job needs to pick up one
// new step, on a trial that already has N steps loaded (single worker, local folder). The figure
// must not grow with N: a refresh lists only index keys after the remembered position and reads
// only new files.
//
// Each iteration (untimed) writes step N+i (event file, then index file), then (timed) asks
// has_passed_step(N+i) — the refresh a realtime query does (end-marker check, listing, reading
// and ingesting the new index file) plus the decision — and checks the answer is AVAILABLE.
// Counters: keys listed and files read per pick-up.
//
//   N = 1000, 10000: the new steps go into a fresh index bucket (index/<step // 1000>/);
//   N = 1500, 10500: the current bucket already holds 500 files. A local listing reads the
//   names of the bucket folder the position falls in (a directory cannot be listed from a
//   name), so the cost depends on the position within its 1000-step bucket — bounded by 1000
//   names — but not on N.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <smdebug/writer/step_writer.hpp>
#include <smdebug/smdebug.hpp>

using namespace smdebug;
namespace fs = std::filesystem;

namespace {


// Lets the file also build against a Trial without refresh_stats() (for before/after comparisons).
struct RefreshStatsFallback {
    std::uint64_t refreshes = 0, index_files_listed = 0, index_files_read = 0;
};

constexpr int tensors_per_step = 8;

void write_step(const LocalStore& store, std::int64_t step, const std::string& worker = "worker_0") {
    StepWriter w(step, worker, Mode::TRAIN, step);
    const float v = static_cast<float>(step);
    for (int t = 0; t < tensors_per_step; ++t)
        w.add_tensor("layer" + std::to_string(t) + "/weight", TensorValue::scalar<float>(v), 1.0);
    w.flush(store);
}

fs::path make_running_trial(std::int64_t steps, int num_workers = 1) {
    const auto dir = fs::temp_directory_path() / ("smdebug-bench-refresh-" + std::to_string(steps));
    fs::remove_all(dir);
    const LocalStore store(dir, LocalStore::Durability::none);  // fixtures of 10,000 steps build quickly
    const auto cf = collections_file::match_all(num_workers);
    for (int w = 0; w < num_workers; ++w) write_collections_file(store, "worker_" + std::to_string(w), cf);
    for (std::int64_t s = 0; s < steps; ++s) write_step(store, s);
    ::sync();  // no write-back of the fixture competing with the measurement
    return dir;  // no end marker: the job is still running
}

}  // namespace

static void BM_PickUpOneNewStep(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    const auto dir = make_running_trial(n);
    const LocalStore writer(dir, LocalStore::Durability::none);
    TrialOptions options;
    options.training_end_delay_refresh = std::chrono::milliseconds(0);
    Trial<LocalStore> trial(LocalStore(dir), options);
    if (trial.steps().size() != static_cast<std::size_t>(n)) state.SkipWithError("fixture not loaded");
    std::int64_t next = n;
    const auto stats = [](auto& t) {
        if constexpr (requires { t.refresh_stats(); }) return RefreshStatsFallback{t.refresh_stats().refreshes, t.refresh_stats().index_files_listed, t.refresh_stats().index_files_read};
        else return RefreshStatsFallback{};
    };
    const auto before = stats(trial);
    for (auto _ : state) {
        state.PauseTiming();
        write_step(writer, next);
        state.ResumeTiming();
        const auto s = trial.has_passed_step(next);
        if (s != StepState::AVAILABLE) {
            state.SkipWithError("new step not picked up");
            break;
        }
        ++next;
    }
    const auto after = stats(trial);
    const double it = static_cast<double>(state.iterations());
    state.counters["listed/pickup"] = static_cast<double>(after.index_files_listed - before.index_files_listed) / it;
    state.counters["read/pickup"] = static_cast<double>(after.index_files_read - before.index_files_read) / it;
    state.counters["steps_at_end"] = static_cast<double>(next);
    fs::remove_all(dir);
}
BENCHMARK(BM_PickUpOneNewStep)->Arg(1000)->Arg(10000)->Arg(1500)->Arg(10500)->Iterations(500)->Repetitions(3)->ReportAggregatesOnly(true)->Unit(benchmark::kMicrosecond);

// A refresh that finds nothing new (the idle poll of a waiting reader).
static void BM_IdleRefresh(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    const auto dir = make_running_trial(n);
    TrialOptions options;
    options.training_end_delay_refresh = std::chrono::milliseconds(0);
    Trial<LocalStore> trial(LocalStore(dir), options);
    for (auto _ : state) benchmark::DoNotOptimize(trial.has_passed_step(n));
    fs::remove_all(dir);
}
BENCHMARK(BM_IdleRefresh)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// Two workers, worker_1 never writes (a dead worker): every step stays incomplete, the window
// (W = 1000) gives up on old steps, and the reader keeps looking back at the newest W steps for
// late files (D11). A pick-up then lists the files of the newest ~W steps — bounded by W, not by N.
static void BM_PickUpOneNewStep_DeadWorker(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    const auto dir = make_running_trial(n, 2);
    const LocalStore writer(dir, LocalStore::Durability::none);
    TrialOptions options;
    options.training_end_delay_refresh = std::chrono::milliseconds(0);
    options.incomplete_step_wait_window = 1000;
    Trial<LocalStore> trial(LocalStore(dir), options);
    std::int64_t next = n;
    const auto before = trial.refresh_stats();
    for (auto _ : state) {
        state.PauseTiming();
        write_step(writer, next);
        state.ResumeTiming();
        benchmark::DoNotOptimize(trial.has_passed_step(next));  // one refresh; NOT_YET_AVAILABLE
        ++next;
    }
    const auto after = trial.refresh_stats();
    state.counters["listed/pickup"] =
        static_cast<double>(after.index_files_listed - before.index_files_listed) / static_cast<double>(state.iterations());
    state.counters["read/pickup"] =
        static_cast<double>(after.index_files_read - before.index_files_read) / static_cast<double>(state.iterations());
    fs::remove_all(dir);
}
BENCHMARK(BM_PickUpOneNewStep_DeadWorker)->Arg(3000)->Arg(10000)->Iterations(300)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
