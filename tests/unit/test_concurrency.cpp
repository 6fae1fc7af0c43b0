// Concurrency (the thread-safety contract of docs/thread-safety.md), run under ThreadSanitizer by
// scripts/test-sanitizers.sh: many threads reading one trial folder through their own Trials and
// one shared S3 client, many threads querying one SharedTrial while it refreshes and a Hook
// writes, and many Hooks in one process.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <smdebug/net/s3_client.hpp>
#include <smdebug/query/shared_trial.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/s3_store.hpp>
#include <smdebug/writer/hook.hpp>

#include "fault_server.hpp"
#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_concurrency {

using namespace smdebug;
using namespace std::chrono_literals;

namespace {

constexpr int threads = 8;

HookOptions every_step() {
    HookOptions o;
    o.save_config = SaveConfig(save_config_mode(1));
    o.save_all = true;
    return o;
}

std::vector<float> weight_of(int step, int salt = 0) {
    std::vector<float> w(64);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(salt * 100000 + step * 100 + static_cast<int>(i));
    return w;
}

void write_steps(Hook<LocalStore>& hook, int from, int to, int salt = 0) {
    for (int s = from; s < to; ++s) {
        hook.next_step();
        hook.save_tensor("w", weight_of(s, salt));
        hook.save_tensor("step", std::vector<std::int64_t>{s});
    }
}

bool holds(const TensorValue& v, const std::vector<float>& expected) {
    const auto e = v.elements<float>();
    return std::vector<float>(e.begin(), e.end()) == expected;
}

}  // namespace

TEST_CASE("concurrency: threads with their own Trials read one folder", "[concurrency]") {
    test::TempDir dir("conc-read");
    {
        Hook<LocalStore> hook(LocalStore(dir.path, LocalStore::Durability::none), every_step());
        write_steps(hook, 0, 20);
        hook.close();
    }
    std::atomic<int> wrong{0}, done{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            Trial<LocalStore> trial(LocalStore(dir.path));
            if (trial.steps().size() != 20) ++wrong;
            for (int round = 0; round < 3; ++round)
                for (int s = (t + round) % 20, n = 0; n < 20; s = (s + 1) % 20, ++n)
                    if (!holds(trial.tensor("w").value(s), weight_of(s))) ++wrong;
            if (trial.tensor("w").values().size() != 20) ++wrong;
            ++done;
        });
    for (auto& t : ts) t.join();
    CHECK(done == threads);
    CHECK(wrong == 0);
}

TEST_CASE("concurrency: one SharedTrial queried by many threads while it refreshes and a Hook writes", "[concurrency]") {
    test::TempDir dir("conc-shared");
    Hook<LocalStore> hook(LocalStore(dir.path, LocalStore::Durability::none), every_step());
    write_steps(hook, 0, 3);
    hook.next_step();  // steps 0-2 are handed to the background writer
    TrialOptions wait;
    wait.wait_for_trial = true;  // it may not have written anything yet (D16: then only a wait asked for waits)
    SharedTrial<LocalStore> shared(LocalStore(dir.path), wait);
    std::atomic<bool> stop{false};
    std::atomic<int> wrong{0}, queries{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < threads; ++t)
        readers.emplace_back([&] {
            while (!stop) {
                const auto steps = shared.steps();
                for (std::size_t i = 0; i < steps.size(); ++i)
                    if (steps[i] != static_cast<std::int64_t>(i)) ++wrong;  // always a prefix
                if (!steps.empty()) {
                    const auto s = steps[static_cast<std::size_t>(queries) % steps.size()];
                    if (!holds(shared.value("w", s), weight_of(static_cast<int>(s)))) ++wrong;
                }
                (void)shared.tensor_names();
                ++queries;
            }
        });
    std::thread refresher([&] {
        while (!stop) {
            shared.refresh();
            std::this_thread::sleep_for(1ms);
        }
    });
    // The writer adds steps 3..39 (the hook already began step 3 above).
    hook.save_tensor("w", weight_of(3));
    hook.save_tensor("step", std::vector<std::int64_t>{3});
    write_steps(hook, 4, 40);
    hook.close();
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (shared.steps().size() < 40 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
    stop = true;
    for (auto& t : readers) t.join();
    refresher.join();
    CHECK(wrong == 0);
    CHECK(queries > threads);
    CHECK(shared.steps().size() == 40);
    CHECK(shared.with([](Trial<LocalStore>& t) { return t.tensor("w").values().size(); }) == 40);
}

TEST_CASE("concurrency: many Hooks in one process", "[concurrency]") {
    test::TempDir root("conc-hooks");
    std::atomic<int> failures{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            try {
                Hook<LocalStore> hook(LocalStore(root.path / ("run" + std::to_string(t)), LocalStore::Durability::none), every_step());
                write_steps(hook, 0, 15, t);
                hook.close();
            } catch (...) {
                ++failures;
            }
        });
    for (auto& t : ts) t.join();
    REQUIRE(failures == 0);
    for (int t = 0; t < threads; ++t) {
        Trial<LocalStore> trial(LocalStore(root.path / ("run" + std::to_string(t))));
        REQUIRE(trial.steps().size() == 15);
        for (int s = 0; s < 15; ++s) CHECK(holds(trial.tensor("w").value(s), weight_of(s, t)));
    }
}

TEST_CASE("concurrency: one S3 client shared by Trials on many threads", "[concurrency][s3]") {
    test::TempDir dir("conc-s3");
    {
        Hook<LocalStore> hook(LocalStore(dir.path, LocalStore::Durability::none), every_step());
        write_steps(hook, 0, 10);
        hook.close();
    }
    test::FaultServer server;
    server.put_folder("t/", dir.path);
    // Every fifth request fails once: retries run concurrently on the shared pool.
    server.fault_for = [](int n, const test::Request&) { return n % 5 == 0 ? test::Fault::slow_down : test::Fault::none; };
    net::AwsConfig config;
    config.endpoint = net::Url::parse(server.endpoint());
    config.addressing = net::AddressingStyle::path;
    config.credentials = std::make_shared<net::StaticCredentialsProvider>(net::AwsCredentials{"AKID", "SECRET", "", std::nullopt, "test"});
    net::S3ClientOptions o;
    o.retry.base_delay = 1ms;
    o.retry.max_delay = 4ms;
    // Requests of all threads share the fault counter, so one request can draw a fault on several
    // of its attempts; enough attempts make an unlucky run (not a bug) impossible in practice.
    o.retry.max_attempts = 12;
    auto client = std::make_shared<net::S3Client>(config, o);
    std::atomic<int> wrong{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([&] {
            try {
                Trial<S3Store> trial(S3Store("s3://b/t", client));
                if (trial.steps().size() != 10) ++wrong;
                for (int s = 0; s < 10; ++s)
                    if (!holds(trial.tensor("w").value(s), weight_of(s))) ++wrong;
            } catch (const std::exception& e) {
                UNSCOPED_INFO(e.what());
                ++wrong;
            }
        });
    for (auto& t : ts) t.join();
    CHECK(wrong == 0);
    CHECK(server.requests() > threads * 10);
}

}  // namespace smdebug_test_concurrency
