// Read-path benchmarks: trial open + index load, value() throughput, record decoding, CRC32C and
// reductions.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include <smdebug/format/detail/event_decode.hpp>
#include <smdebug/smdebug.hpp>

#include "trial_fixture.hpp"

using namespace smdebug;

// Opening a 1000-step x 50-tensor trial: collections, 1000 index files, 50,000 entries.
static void BM_OpenTrial_1000x50(benchmark::State& state) {
    static const auto dir = bench::make_trial("open", 1000, 50, 4);
    for (auto _ : state) {
        Trial<LocalStore> trial{LocalStore(dir)};
        benchmark::DoNotOptimize(trial.last_complete_step());
    }
    state.counters["steps/s"] = benchmark::Counter(1000.0 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_OpenTrial_1000x50)->Unit(benchmark::kMillisecond);

// value() on page-cached data: 1 MiB float32 tensors.
static void BM_Value_1MiB(benchmark::State& state) {
    static const auto dir = bench::make_trial("value", 20, 10, 1 << 18);
    TrialOptions opts;
    opts.training_end_delay_refresh = std::chrono::milliseconds(0);
    Trial<LocalStore> trial(LocalStore(dir), opts);
    std::vector<Tensor<LocalStore>> tensors;
    for (const auto& n : trial.tensor_names()) tensors.push_back(trial.tensor(n));
    std::size_t bytes = 0;
    for (auto _ : state)
        for (auto& t : tensors)
            for (std::int64_t s = 0; s < 20; ++s) {
                auto v = t.value(s);
                bytes += v.byte_size();
                benchmark::DoNotOptimize(v.bytes().data());
            }
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Value_1MiB)->Unit(benchmark::kMillisecond);

// value() tensor by tensor, step by step (what a notebook loop or a plot does) over 500 steps of
// 20 tensors of 4 KiB, one event file per step: each tensor's walk visits the 500 files in turn.
// Arg 1: ascending steps; arg 0: descending. Each value is read when asked (the walk read-ahead
// was removed: slower on every measured pair, docs/performance.md).
static void BM_ValueWalk_4KiB(benchmark::State& state) {
    static const auto dir = bench::make_trial("walk", 500, 20, 1024);
    TrialOptions opts;
    opts.training_end_delay_refresh = std::chrono::milliseconds(0);
    Trial<LocalStore> trial(LocalStore(dir), opts);
    std::vector<Tensor<LocalStore>> tensors;
    for (const auto& n : trial.tensor_names()) tensors.push_back(trial.tensor(n));
    std::vector<std::int64_t> order(500);
    for (std::int64_t s = 0; s < 500; ++s) order[static_cast<std::size_t>(s)] = state.range(0) ? s : 499 - s;
    std::size_t values = 0;
    for (auto _ : state)
        for (auto& t : tensors)
            for (const auto s : order) {
                auto v = t.value(s);
                ++values;
                benchmark::DoNotOptimize(v.bytes().data());
            }
    state.counters["values/s"] = benchmark::Counter(static_cast<double>(values), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ValueWalk_4KiB)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

static std::vector<std::byte> random_bytes(std::size_t n) {
    std::vector<std::byte> b(n);
    std::mt19937_64 rng(1);
    for (auto& x : b) x = static_cast<std::byte>(rng());
    return b;
}

static void BM_CRC32C(benchmark::State& state) {
    const auto data = random_bytes(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(crc32c(data));
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(data.size()) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CRC32C)->Arg(64 << 10)->Arg(16 << 20);

static void BM_CRC32C_Portable(benchmark::State& state) {
    const auto data = random_bytes(16 << 20);
    for (auto _ : state) benchmark::DoNotOptimize(crc32c_portable(data));
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(data.size()) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CRC32C_Portable);

// Decoding records as a step's read hands them over: 50 records of 1,024 float32 (trial (a)'s
// event file of one step, as smdebug writes them: tag, shape, mode plugin data), the file's bytes
// copied first as pread would. Arg 0: checked only (event::outline, what `smdebug verify` does);
// arg 1: decoded (event::decode_value, what a rule or value() does). Records/s.
static void BM_EventDecode(benchmark::State& state) {
    std::string file;
    std::vector<std::pair<std::size_t, std::size_t>> records;  // (offset, size)
    for (int t = 0; t < 50; ++t) {
        const auto value = TensorValue::from<float>(std::vector<float>(1024, 0.5f), Shape{1024});
        const std::size_t at = file.size();
        tfrecord::append(file, event::encode("layer" + std::to_string(t) + "/weight", value, 5, 1.7e9, Mode::TRAIN, 5));
        records.emplace_back(at, file.size() - at);
    }
    const bool decode = state.range(0) != 0;
    std::size_t bytes = 0;
    for (auto _ : state) {
        ByteBuffer read = ByteBuffer::copy_of(std::string_view(file));
        for (const auto& [at, size] : records) {
            auto record = read.slice(at, size);
            const auto payload = tfrecord::parse(record.bytes(), "bench").payload;
            if (decode) {
                auto v = event::decode_value(record, record.share(), payload, "bench", [](std::string_view, std::int64_t) {});
                bytes += v.byte_size();
            } else {
                bytes += event::outline(payload, "bench").byte_size;
            }
        }
    }
    benchmark::DoNotOptimize(bytes);
    state.counters["records/s"] = benchmark::Counter(static_cast<double>(records.size()) * state.iterations(), benchmark::Counter::kIsRate);
    state.SetLabel(decode ? "decode_value" : "outline");
}
BENCHMARK(BM_EventDecode)->Arg(0)->Arg(1);

// Reductions over a 4 MiB float32 tensor (in cache-cold sizes the figure is memory-bound).
static void BM_Reduction(benchmark::State& state) {
    std::vector<float> data(1 << 20);
    std::mt19937 rng(3);
    std::normal_distribution<float> dist;
    for (auto& x : data) x = dist(rng);
    const auto v = TensorValue::from<float>(data, {data.size()});
    const auto r = static_cast<Reduction>(state.range(0));
    for (auto _ : state) benchmark::DoNotOptimize(compute_reduction(v, r, false));
    state.SetLabel(std::string(reduction_name(r)));
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(v.byte_size()) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Reduction)->DenseRange(0, 8);

BENCHMARK_MAIN();
