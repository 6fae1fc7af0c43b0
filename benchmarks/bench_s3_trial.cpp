// Reading every tensor record of a 1000-step trial from S3 (s3rver on 127.0.0.1, see
// tests/s3rver/run-with-s3rver.sh) through S3Store::read_ranges, with 1 vs 16 requests in flight,
// one ranged GET per record (no coalescing) and with neighbouring records coalesced.
// Reports requests/s and MB/s. Needs SMDEBUG_S3RVER_ENDPOINT; skips itself otherwise.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>

#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/storage/s3_store.hpp>

#include "trial_fixture.hpp"

using namespace smdebug;

namespace {

struct Fixture {
    std::string url = "s3://smdebug-test/bench-trial-1000";
    std::vector<RangeRequest> requests;
    std::uint64_t bytes = 0;
};

S3StoreOptions options(std::size_t concurrency, bool coalesce) {
    S3StoreOptions o;
    o.max_concurrency = concurrency;
    if (!coalesce) o.max_coalesced_bytes = 0;
    return o;
}

const Fixture* fixture() {
    static std::optional<Fixture> f = []() -> std::optional<Fixture> {
        const char* endpoint = std::getenv("SMDEBUG_S3RVER_ENDPOINT");
        if (!endpoint) return std::nullopt;
        ::setenv("AWS_ENDPOINT_URL", endpoint, 1);
        ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
        ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
        ::setenv("AWS_REGION", "us-east-1", 1);
        Fixture fx;
        const auto dir = bench::make_trial("s3-1000", 1000, 8, 256);  // 1000 steps x 8 tensors x 1 KiB
        LocalStore local(dir);
        S3Store s3(fx.url, options(16, true));
        for (const auto& key : local.list("", "")) s3.write(key, local.read(key).bytes());
        for (const auto& key : local.list("index/", "")) {
            const auto idx = index_file::parse(local.read(key).text(), key);
            for (const auto& t : idx.tensors) {
                fx.requests.push_back({*idx.event_file_name, t.start, t.length});
                fx.bytes += t.length;
            }
        }
        return fx;
    }();
    return f ? &*f : nullptr;
}

void BM_ReadAllRecords(benchmark::State& state) {
    const auto* fx = fixture();
    if (!fx) {
        state.SkipWithError("SMDEBUG_S3RVER_ENDPOINT is not set (run under tests/s3rver/run-with-s3rver.sh)");
        return;
    }
    const bool coalesce = state.range(1) != 0;
    S3Store s3(fx->url, options(static_cast<std::size_t>(state.range(0)), coalesce));
    for (auto _ : state) {
        auto out = s3.read_ranges(fx->requests);
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["records/s"] = benchmark::Counter(static_cast<double>(fx->requests.size()) * state.iterations(), benchmark::Counter::kIsRate);
    state.counters["MB/s"] = benchmark::Counter(static_cast<double>(fx->bytes) * state.iterations() / 1e6, benchmark::Counter::kIsRate);
    state.SetLabel(coalesce ? "coalesced" : "one GET per record");
}

}  // namespace

BENCHMARK(BM_ReadAllRecords)->Args({1, 0})->Args({16, 0})->Args({1, 1})->Args({16, 1})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

BENCHMARK_MAIN();
