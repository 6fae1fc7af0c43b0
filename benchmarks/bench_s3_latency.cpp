// bench_s3_latency: what a real object store's latency costs (issue 45). An in-process S3 endpoint
// (tests/unit/fault_server.hpp) answers every request after a fixed latency (plus jitter), counts
// the requests it serves at once, and optionally throttles past a number in flight; the trial and
// the CLI commands run against it. For each latency it prints, per command: the requests, the
// most in flight at once, the time, and the floor (requests x latency / window + the listing
// chains), as written and after `smdebug compact`.
//
//   bench_s3_latency [--latency 10,30,100] [--shape WORKERSxSTEPSxTENSORSxELEMENTS] [--window N]
//                    [--throttle-above N] [--cli PATH] [--hook-steps N]
//
// Defaults: latencies 30 ms, shape 64x20x4x256 float32 (the trial), window 64, the CLI
// next to this program. --hook-steps N also times the Hook writing N steps of 20 ms (8 tensors
// each) to the endpoint, against the same loop without saving. --rule-read-ahead N runs the rule
// ExplodingTensor in this process N times with TrialOptions::read_ahead on and off, interleaved.
// --mechanisms N decides the S3 client's and the writer's speed mechanisms (issue 51, item 4),
// in this process, N interleaved pairs each (the order within a pair alternates): every record of
// the trial read as `smdebug verify` reads it (Trial open + read_all_records) with the keep-alive
// pool on and off (a new connection's first answer waits one more latency: the handshake a remote
// store costs); and the Hook's loop of --hook-steps (default 100) steps with
// HookOptions::writer_steps_in_flight 16 and 1. (The signing-key cache measured here on 2026-12-02
// was removed: benchmarks/RESULTS.md.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <smdebug/rules/rules.hpp>
#include <smdebug/smdebug.hpp>
#include <smdebug/writer/step_writer.hpp>

#include "../tests/unit/fault_server.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Shape {
    int workers = 64, steps = 20, tensors = 4;
    std::size_t elements = 256;
};

void write_trial(const std::filesystem::path& dir, const Shape& shape) {
    std::filesystem::remove_all(dir);
    smdebug::LocalStore store(dir, smdebug::LocalStore::Durability::none);
    std::vector<float> data(shape.elements);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 97) / 7.0f - 3.0f;
    const auto value = smdebug::TensorValue::from<float>(data, {shape.elements});
    std::vector<std::string> tensor_names;
    for (int t = 0; t < shape.tensors; ++t) tensor_names.push_back(std::string("layer").append(std::to_string(t)).append("/weight"));
    for (int k = 0; k < shape.workers; ++k)
        smdebug::write_collections_file(store, "worker_" + std::to_string(k), smdebug::collections_file::match_all(shape.workers));
    for (int s = 0; s < shape.steps; ++s)
        for (int k = 0; k < shape.workers; ++k) {
            smdebug::StepWriter w(s, "worker_" + std::to_string(k), smdebug::Mode::TRAIN, s);
            for (const auto& name : tensor_names) w.add_tensor(name, value, 1.0);
            w.flush(store);
        }
    smdebug::write_end_marker(store);
}

struct Row {
    std::string what;
    int requests = 0, peak = 0, throttled = 0;
    double seconds = 0;
    int exit_code = 0;
};

bool trace = false;  // --trace: each command's requests as a timeline of rounds

// The requests from `first` on, as rounds: requests sent within a tenth of the latency of the
// round's first one are one round (what a window of requests in flight together looks like).
void print_rounds(test::FaultServer& server, int first, std::chrono::milliseconds latency) {
    const auto log = server.log();
    const auto times = server.request_times();
    if (first >= static_cast<int>(times.size())) return;
    const auto origin = times[first];
    const auto gap = std::max<Clock::duration>(latency / 2, 1ms);
    for (std::size_t i = first; i < times.size();) {
        std::size_t j = i + 1;
        while (j < times.size() && times[j] - times[j - 1] < gap) ++j;
        std::string what = log[i].method + " " + log[i].target.substr(0, 60);
        std::printf("      +%6.0f ms  %4zu request(s), first: %s\n",
                    std::chrono::duration<double, std::milli>(times[i] - origin).count(), j - i, what.c_str());
        i = j;
    }
}

// Runs `command` (a shell line) against the server and measures it.
Row run(test::FaultServer& server, const std::string& what, const std::string& command) {
    const int r0 = server.requests(), t0 = server.throttled();
    server.reset_peak();
    const auto start = Clock::now();
    const int status = std::system((command + " > /dev/null 2> /tmp/bench_s3_latency.err").c_str());
    Row row;
    row.what = what;
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    row.requests = server.requests() - r0;
    row.throttled = server.throttled() - t0;
    row.peak = server.peak_in_flight();
    row.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (trace) print_rounds(server, r0, server.latency);
    return row;
}

void print(const Row& r, std::chrono::milliseconds latency, std::size_t window) {
    // The floor: every request at `window` in flight, each one latency long.
    const double floor = static_cast<double>(r.requests) * static_cast<double>(latency.count()) / 1000.0 / static_cast<double>(window);
    std::printf("  %-34s requests %6d  peak in flight %3d  throttled %5d  time %7.2f s  floor %6.2f s  exit %d\n", r.what.c_str(),
                r.requests, r.peak, r.throttled, r.seconds, floor, r.exit_code);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> latencies{30};
    Shape shape;
    std::size_t window = 64;
    int throttle_above = 0, hook_steps = 0, rule_pairs = 0, mechanism_pairs = 0;
    std::string only_mechanism;  // --mechanism pool|steps: that one alone
    std::filesystem::path cli = std::filesystem::canonical("/proc/self/exe").parent_path() / "smdebug";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--latency") {
            latencies.clear();
            std::stringstream ss(next());
            for (std::string item; std::getline(ss, item, ',');) latencies.push_back(std::stoi(item));
        } else if (a == "--shape") {
            const auto v = next();
            if (std::sscanf(v.c_str(), "%dx%dx%dx%zu", &shape.workers, &shape.steps, &shape.tensors, &shape.elements) != 4) {
                std::cerr << "--shape WORKERSxSTEPSxTENSORSxELEMENTS\n";
                return 2;
            }
        } else if (a == "--window") {
            window = std::stoul(next());
        } else if (a == "--throttle-above") {
            throttle_above = std::stoi(next());
        } else if (a == "--cli") {
            cli = next();
        } else if (a == "--trace") {
            trace = true;
        } else if (a == "--hook-steps") {
            hook_steps = std::stoi(next());
        } else if (a == "--rule-read-ahead") {
            rule_pairs = std::stoi(next());
        } else if (a == "--mechanisms") {
            mechanism_pairs = std::stoi(next());
        } else if (a == "--mechanism") {
            only_mechanism = next();
        } else {
            std::cerr << "usage: bench_s3_latency [--latency 10,30,100] [--shape 64x20x4x256] [--window N] [--throttle-above N] "
                         "[--cli PATH] [--hook-steps N] [--rule-read-ahead N] [--mechanisms N]\n";
            return 2;
        }
    }
    const auto dir = std::filesystem::temp_directory_path() / "smdebug-bench-s3-latency";
    write_trial(dir, shape);
    std::printf("trial %d workers x %d steps x %d tensors x %zu float32; window %zu%s\n", shape.workers, shape.steps, shape.tensors,
                shape.elements, window, throttle_above ? (", throttling past " + std::to_string(throttle_above) + " in flight").c_str() : "");

    for (int ms : latencies) {
        test::FaultServer server;
        server.latency = std::chrono::milliseconds(ms);
        server.jitter = std::chrono::milliseconds(ms / 10);
        server.throttle_above = throttle_above;
        server.put_folder("trial/", dir);
        ::setenv("AWS_ENDPOINT_URL", server.endpoint().c_str(), 1);
        ::setenv("AWS_ACCESS_KEY_ID", "AKIDBENCH", 1);
        ::setenv("AWS_SECRET_ACCESS_KEY", "bench-secret", 1);
        ::setenv("AWS_REGION", "us-east-1", 1);
        ::setenv("AWS_CONFIG_FILE", "/nonexistent", 1);
        ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent", 1);
        ::setenv("SMDEBUG_S3_MAX_CONCURRENCY", std::to_string(window).c_str(), 1);
        const std::string url = "s3://bench/trial";
        const std::string smdebug = cli.string();
        std::printf("latency %d ms (+ up to %d ms jitter)\n", ms, ms / 10);
        if (mechanism_pairs > 0) {
            server.connect_latency = server.latency;
            // Every record, as `smdebug verify` reads it; seconds and requests.
            const auto verify = [&](const smdebug::S3StoreOptions& so, const char* what) {
                smdebug::TrialOptions o;
                o.training_end_delay_refresh = 0ms;
                const int r0 = server.requests(), c0 = server.connections();
                const auto cpu = [] {
                    rusage u{};
                    ::getrusage(RUSAGE_SELF, &u);
                    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
                };
                const double cpu0 = cpu();
                const auto start = Clock::now();
                smdebug::Trial<smdebug::AnyStore> trial(smdebug::AnyStore(smdebug::S3Store(url, so)), o);  // as the CLI opens it
                std::size_t records = 0;
                smdebug::ReadOptions ro;
                ro.keep_values = false;
                smdebug::read_all_records(trial, [&](std::span<const smdebug::RecordRead> batch) { records += batch.size(); }, ro);
                const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
                const double cpu_seconds = cpu() - cpu0;  // the in-process server's included (the same in both)
                const int requests = server.requests() - r0;
                std::printf("  verify in process, %-24s records %6zu  requests %6d  connections %5d  time %7.3f s  %8.1f requests/s  "
                            "CPU %6.3f s\n",
                            what, records, requests, server.connections() - c0, seconds, requests / seconds, cpu_seconds);
                std::fflush(stdout);
            };
            const auto hook_run = [&](std::size_t in_flight, int run) {
                constexpr auto step_time = 20ms;
                const int steps = hook_steps > 0 ? hook_steps : 100;
                std::vector<float> data(1024, 0.5f);
                const auto value = smdebug::TensorValue::from<float>(data, {data.size()});
                smdebug::HookOptions ho;
                ho.save_config = smdebug::SaveConfig(smdebug::save_config_mode(1));
                ho.writer_steps_in_flight = in_flight;
                const int r0 = server.requests();
                const auto start = Clock::now();
                {
                    smdebug::Hook<smdebug::S3Store> hook(
                        smdebug::S3Store("s3://bench/mech-hook-" + std::to_string(run) + "-" + std::to_string(in_flight)), ho);
                    for (int s = 0; s < steps; ++s) {
                        hook.next_step();
                        for (int t = 0; t < 8; ++t) hook.save_tensor("t" + std::to_string(t), value);
                        std::this_thread::sleep_until(start + (s + 1) * step_time);
                    }
                    hook.close();
                }
                const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
                std::printf("  Hook, writer_steps_in_flight %2zu: %d steps of 20 ms, 8 x 4 KiB  time %7.3f s  %6.1f steps/s  requests %d\n",
                            in_flight, steps, seconds, steps / seconds, server.requests() - r0);
                std::fflush(stdout);
            };
            for (int pair = 0; pair < mechanism_pairs; ++pair) {
                const bool with_first = pair % 2 == 0;
                for (int k = 0; k < 2 && (only_mechanism.empty() || only_mechanism == "pool"); ++k) {
                    smdebug::S3StoreOptions so;
                    const bool pool = (k == 0) == with_first;
                    if (!pool) so.client.http.max_idle_per_endpoint = 0;
                    verify(so, pool ? "keep-alive pool on" : "keep-alive pool off");
                }
                for (int k = 0; k < 2 && (only_mechanism.empty() || only_mechanism == "steps"); ++k) hook_run((k == 0) == with_first ? 16 : 1, pair);
            }
            continue;
        }
        if (rule_pairs > 0) {
            // The rule in this process, the step read-ahead on and off (the CLI has no switch for it).
            const auto rule = [&](bool read_ahead) {
                smdebug::TrialOptions o;
                o.read_ahead = read_ahead;
                o.training_end_delay_refresh = 0ms;
                const int r0 = server.requests();
                server.reset_peak();
                const auto start = Clock::now();
                smdebug::Trial<smdebug::S3Store> trial(smdebug::S3Store(url), o);
                smdebug::ExplodingTensor<smdebug::S3Store> exploding(trial);
                const auto result = smdebug::invoke_rule(exploding);
                const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
                std::printf("  rule ExplodingTensor in process, read_ahead %-3s  requests %6d  peak in flight %3d  time %7.2f s  steps to %lld%s\n",
                            read_ahead ? "on" : "off", server.requests() - r0, server.peak_in_flight(), seconds,
                            static_cast<long long>(result.end_step), result.fired_steps.empty() ? "" : "  FIRED");
                std::fflush(stdout);
            };
            for (int pair = 0; pair < rule_pairs; ++pair) {
                rule(true);
                rule(false);
            }
            continue;
        }
        print(run(server, "summary, as written", smdebug + " summary " + url), server.latency, window);
        print(run(server, "verify, as written", smdebug + " verify " + url), server.latency, window);
        print(run(server, "rule ExplodingTensor, as written", smdebug + " rule " + url + " ExplodingTensor"), server.latency, window);
        print(run(server, "compact", smdebug + " compact " + url), server.latency, window);
        print(run(server, "summary, compacted", smdebug + " summary " + url), server.latency, window);
        print(run(server, "verify, compacted", smdebug + " verify " + url), server.latency, window);
        print(run(server, "rule ExplodingTensor, compacted", smdebug + " rule " + url + " ExplodingTensor"), server.latency, window);
        std::fflush(stdout);

        if (hook_steps > 0) {
            constexpr auto step_time = 20ms;
            std::vector<float> data(1024, 0.5f);
            const auto value = smdebug::TensorValue::from<float>(data, {data.size()});
            const std::vector<std::string> hook_names{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
            auto loop = [&](smdebug::Hook<smdebug::S3Store>* hook) {
                const auto start = Clock::now();
                for (int s = 0; s < hook_steps; ++s) {
                    if (hook) {
                        hook->next_step();
                        for (const auto& name : hook_names) hook->save_tensor(name, value);
                    }
                    std::this_thread::sleep_until(start + (s + 1) * step_time);
                }
                if (hook) hook->close();
                return std::chrono::duration<double>(Clock::now() - start).count();
            };
            const double bare = loop(nullptr);
            server.reset_peak();
            const int before = server.requests();
            smdebug::HookOptions ho;
            ho.save_config = smdebug::SaveConfig(smdebug::save_config_mode(1));  // every step
            smdebug::Hook<smdebug::S3Store> hook(smdebug::S3Store("s3://bench/hook-" + std::to_string(ms)), ho);
            const double with = loop(&hook);
            const int requests = server.requests() - before, peak = server.peak_in_flight();
            smdebug::Trial<smdebug::S3Store> written(smdebug::S3Store("s3://bench/hook-" + std::to_string(ms)));
            std::printf("  Hook: %d steps of 20 ms saving 8 x 4 KiB: %.2f s (the loop alone %.2f s: %.2fx); %d requests, peak in flight %d; "
                        "read back: %zu steps\n",
                        hook_steps, with, bare, with / bare, requests, peak, written.steps().size());
        }
    }
    std::filesystem::remove_all(dir);
    return 0;
}
