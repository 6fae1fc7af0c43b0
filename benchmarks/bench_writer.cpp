// Save throughput of Hook<LocalStore> next to plain write() of the same bytes.
//
//   bench_writer [--benchmark_filter=...]      (writes under $TMPDIR or /tmp, removed afterwards)
//
// One benchmark iteration is one step: `tensors` tensors of `bytes` each are saved (float32), then
// next_step() writes the step's event file and index (each fsync'ed and renamed into place).
// HookSaveNoIO runs the same through a store that discards the bytes (the hook's CPU cost). The
// baselines write the same number of bytes per step into one file with write(), with and without
// fsync, and Encode measures one record's encoding into a fresh step buffer (no I/O).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <smdebug/storage/local_store.hpp>
#include <smdebug/writer/hook.hpp>
#include <smdebug/writer/step_writer.hpp>

namespace fs = std::filesystem;
using namespace smdebug;

namespace {

fs::path scratch(const std::string& name) {
    const char* tmp = std::getenv("TMPDIR");
    fs::path p = fs::path(tmp && *tmp ? tmp : "/tmp") / ("smdebug-bench-writer-" + std::to_string(::getpid())) / name;
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
}

void set_counters(benchmark::State& state) {
    const auto per_step = state.range(1);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * per_step * state.range(0));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * per_step);
}

// Arguments: bytes per tensor, tensors per step. Saves every step (collection `weights`).
template <WritableStore S>
void save_steps(benchmark::State& state, S store) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    std::vector<float> data(bytes / sizeof(float), 0.5f);
    std::vector<std::string> names;
    for (std::int64_t i = 0; i < state.range(1); ++i) names.push_back("layer" + std::to_string(i) + ".weight");
    HookOptions o;
    o.save_config = SaveConfig(save_config_mode(1));
    o.include_collections = std::vector<std::string>{"weights"};
    o.enabled = true;
    Hook<S> hook(std::move(store), o);
    for (auto _ : state) {
        hook.next_step();
        for (const auto& n : names) hook.save_tensor(n, data);
    }
    hook.close();
    set_counters(state);
}

void BM_HookSave(benchmark::State& state) {
    const auto dir = scratch("hook-" + std::to_string(state.range(0)));
    save_steps(state, LocalStore(dir));
    fs::remove_all(dir);
}

// A store that keeps nothing: the hook's CPU cost (conversion, reductions, encoding, index JSON).
struct NullStore {
    std::vector<std::string> list(std::string_view, std::string_view = {}) const { return {}; }
    ByteBuffer read(std::string_view) const { return {}; }
    ByteBuffer read_range(std::string_view, std::uint64_t, std::uint64_t) const { return {}; }
    bool exists(std::string_view) const { return false; }
    std::string describe(std::string_view k) const { return "null://" + std::string(k); }
    void write(std::string_view, std::span<const std::byte> b) const { benchmark::DoNotOptimize(b.data()); }
    void remove(std::string_view) const {}
};

void BM_HookSaveNoIO(benchmark::State& state) { save_steps(state, NullStore{}); }

// The same bytes per step, one file per step: open, write(), [fsync], close.
void write_baseline(benchmark::State& state, bool sync) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    const auto per_step = static_cast<int>(state.range(1));
    const auto dir = scratch(std::string(sync ? "fsync-" : "write-") + std::to_string(bytes));
    std::vector<char> buf(bytes * static_cast<std::size_t>(per_step), 1);
    std::int64_t step = 0;
    for (auto _ : state) {
        const auto path = dir / (std::to_string(step++) + ".bin");
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) { state.SkipWithError("open failed"); break; }
        std::size_t done = 0;
        while (done < buf.size()) {
            const auto n = ::write(fd, buf.data() + done, buf.size() - done);
            if (n <= 0) { state.SkipWithError("write failed"); break; }
            done += static_cast<std::size_t>(n);
        }
        if (sync) ::fsync(fd);
        ::close(fd);
    }
    fs::remove_all(dir);
    set_counters(state);
}
void BM_PlainWrite(benchmark::State& state) { write_baseline(state, false); }
void BM_PlainWriteFsync(benchmark::State& state) { write_baseline(state, true); }

// The training thread's cost per step with the background writer: save_tensor x tensors +
// next_step, timed alone (manual time), with `compute` ms of simulated training between steps
// so that the writer (fsync'ed files) keeps up, as it does in a real job. The reported time is
// the mean; p50_us and p90_us are the median and 90th percentile step (this VM's interrupts make
// the mean swing by tens of percent between runs). Arg 3: HookOptions::writer_poll_before_sleep in
// ms (250, the default; 0: the writer sleeps after each step and each next_step() wakes it).
void BM_HookTrainingThread(benchmark::State& state) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    const auto compute = std::chrono::milliseconds(state.range(2));
    const auto dir = scratch("training-thread");
    std::vector<float> data(bytes / sizeof(float), 0.5f);
    std::vector<std::string> names;
    for (std::int64_t i = 0; i < state.range(1); ++i) names.push_back("layer" + std::to_string(i) + ".weight");
    HookOptions o;
    o.save_config = SaveConfig(save_config_mode(1));
    o.include_collections = std::vector<std::string>{"weights"};
    o.enabled = true;
    o.writer_poll_before_sleep = std::chrono::milliseconds(state.range(3));
    std::vector<double> step_us;
    {
        Hook<LocalStore> hook(LocalStore(dir), o);
        for (auto _ : state) {
            const auto until = std::chrono::steady_clock::now() + compute;
            while (std::chrono::steady_clock::now() < until) {
            }
            const auto t0 = std::chrono::steady_clock::now();
            hook.next_step();
            for (const auto& n : names) hook.save_tensor(n, data);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            state.SetIterationTime(seconds);
            step_us.push_back(seconds * 1e6);
        }
        hook.close();
    }
    fs::remove_all(dir);
    set_counters(state);
    std::sort(step_us.begin(), step_us.end());
    if (!step_us.empty()) {
        state.counters["p50_us"] = step_us[step_us.size() / 2];
        state.counters["p90_us"] = step_us[step_us.size() * 9 / 10];
    }
}

// Encoding one tensor record into a step buffer (no I/O).
void BM_Encode(benchmark::State& state) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    std::vector<float> data(bytes / sizeof(float), 0.5f);
    const auto value = to_tensor_value(data);
    for (auto _ : state) {
        StepWriter w(0, "worker_0", Mode::TRAIN, 0);
        w.add_tensor("layer.weight", value, 1.0);
        benchmark::DoNotOptimize(w.event_bytes());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

// small: 64 tensors of 1 KiB per step; large: 1 tensor of 16 MiB per step.
void sizes(benchmark::internal::Benchmark* b) {
    b->Args({1024, 64})->Args({16 << 20, 1})->Unit(benchmark::kMicrosecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_HookSave)->Apply(sizes);
BENCHMARK(BM_HookSaveNoIO)->Apply(sizes);
BENCHMARK(BM_HookTrainingThread)->Args({4096, 64, 5, 250})->Args({4096, 64, 5, 0})->Unit(benchmark::kMicrosecond)->UseManualTime()->Iterations(400);
BENCHMARK(BM_PlainWrite)->Apply(sizes);
BENCHMARK(BM_PlainWriteFsync)->Apply(sizes);
BENCHMARK(BM_Encode)->Arg(1024)->Arg(16 << 20)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
