// The crash test: runs crash_writer and kills it with SIGKILL at random points, KILLS times. After
// each kill it checks the folder twice — independently (every index file's entries point at a
// complete record with a valid length CRC whose decoded tensor is exactly what the writer saved)
// and through a Trial (the steps form a prefix 0..k of the steps written, include every step the
// writer had reported durable, and every value reads back exactly). Then readers race a live
// writer (a fresh Trial per check and one long-lived refreshing Trial) with the same checks.
//
//   crash_driver WRITER_PROGRAM [KILLS] [LIVE_SECONDS]
//
// Prints one line per failure and a closing summary; exits 1 when any check failed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <smdebug/format/detail/event.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/storage/local_store.hpp>

#include "crash_common.hpp"

namespace {

using namespace smdebug;

struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string& what) { throw Failure(what); }

template <class T>
bool equals(const TensorValue& v, const std::vector<T>& expected) {
    if (v.size() != expected.size()) return false;
    const auto e = v.elements<T>();
    return std::equal(e.begin(), e.end(), expected.begin());
}

void check_value(const std::string& name, std::int64_t step, const TensorValue& v, const std::string& where) {
    bool ok = false;
    if (name == "weight") ok = equals(v, crash::weights(step));
    else if (name == "bias") ok = equals(v, crash::bias(step));
    else if (name == "counter") ok = equals(v, crash::counter(step));
    if (!ok) fail(where + ": tensor " + name + " of step " + std::to_string(step) + " does not hold what the writer saved");
}

// The independent check: every index file on disk, entry by entry. Returns the steps indexed.
std::vector<std::int64_t> check_files(const std::filesystem::path& dir) {
    LocalStore store(dir, LocalStore::Durability::none);
    std::vector<std::int64_t> steps;
    for (const auto& key : store.list("index/")) {
        if (key.ends_with(".tmp")) continue;  // a write in progress: not part of the trial
        const auto sf = paths::parse_step_file(key);
        if (!sf) fail("unexpected file " + key);
        const auto text = store.read(key);
        const auto idx = index_file::parse(text.text(), key);  // a complete, valid JSON file
        if (!idx.event_file_name) fail(key + ": no event file");
        std::vector<std::string> seen;
        for (const auto& e : idx.tensors) {
            const auto buf = std::make_shared<ByteBuffer>(store.read_range(*idx.event_file_name, e.start, e.length));
            const auto rec = tfrecord::parse(buf->bytes(), *idx.event_file_name);  // length CRC checked
            if (rec.size != e.length) fail(key + ": entry " + e.name + " length " + std::to_string(e.length) + " != record " + std::to_string(rec.size));
            const auto ev = event::decode(buf, rec.payload, *idx.event_file_name);
            if (ev.tag != e.name) fail(key + ": entry " + e.name + " points at the record of " + ev.tag);
            check_value(e.name, sf->step, ev.value, key);
            seen.push_back(e.name);
        }
        std::sort(seen.begin(), seen.end());
        if (seen != crash::tensor_names()) fail(key + ": an index file without all three tensors");
        steps.push_back(sf->step);
    }
    std::sort(steps.begin(), steps.end());
    return steps;
}

void check_prefix(const std::vector<std::int64_t>& steps, std::int64_t reported, const std::string& who, bool upper_bound) {
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (steps[i] != static_cast<std::int64_t>(i)) fail(who + ": the steps are not a prefix 0..k (gap at " + std::to_string(i) + ")");
    const std::int64_t last = steps.empty() ? -1 : steps.back();
    if (last < reported)
        fail(who + ": step " + std::to_string(reported) + " was reported durable but the trial ends at " + std::to_string(last));
    // One step may be on disk without its report (killed between the write and the print).
    if (upper_bound && last > reported + 1)
        fail(who + ": step " + std::to_string(last) + " is on disk but only " + std::to_string(reported) + " was reported");
}

void check_trial(Trial<LocalStore>& trial, std::int64_t reported, const std::string& who, bool upper_bound) {
    const auto steps = trial.steps();
    check_prefix(steps, reported, who, upper_bound);
    for (const auto& name : crash::tensor_names()) {
        auto t = trial.tensor(name);
        for (auto s : steps) check_value(name, s, t.value(s), who);
    }
}

// The Trial needs the collections file, which the Hook writes with its first step. It must be
// there once a step was reported durable; before that a reader has nothing to open (and a Trial
// would wait for it, as smdebug's does), so only the file check runs.
bool has_collections(const std::filesystem::path& dir) {
    return std::filesystem::exists(dir / "collections" / "000000000" / "worker_0_collections.json");
}

TrialOptions reader_options() {
    TrialOptions o;
    o.wait_timeout = std::chrono::milliseconds(2000);  // a reader that waits is a failure, not a hang
    return o;
}

struct Writer {
    pid_t pid = -1;
    int out = -1;
    std::string pending;
    std::int64_t reported = -1;

    Writer(const std::string& program, const std::filesystem::path& dir) {
        int p[2];
        if (::pipe2(p, O_CLOEXEC) != 0) fail("pipe");
        pid = ::fork();
        if (pid < 0) fail("fork");
        if (pid == 0) {
            ::dup2(p[1], 1);
            ::execl(program.c_str(), program.c_str(), dir.c_str(), static_cast<char*>(nullptr));
            std::_Exit(127);
        }
        ::close(p[1]);
        out = p[0];
    }
    ~Writer() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        if (out >= 0) ::close(out);
    }
    // Reads what the writer printed so far (all of it once it is dead).
    void drain(bool blocking) {
        ::fcntl(out, F_SETFL, blocking ? 0 : O_NONBLOCK);
        char buf[4096];
        while (true) {
            const ssize_t n = ::read(out, buf, sizeof buf);
            if (n <= 0) break;
            pending.append(buf, static_cast<std::size_t>(n));
        }
        std::size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
            const std::string line = pending.substr(0, nl);
            pending.erase(0, nl + 1);
            if (!line.starts_with("durable ")) fail("writer printed '" + line + "'");
            const std::int64_t s = std::atoll(line.c_str() + 8);
            if (s != reported + 1) fail("writer reported step " + std::to_string(s) + " after " + std::to_string(reported));
            reported = s;
        }
    }
    void kill_now() {
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        pid = -1;
        if (!WIFSIGNALED(status)) fail("the writer exited by itself (status " + std::to_string(status) + ")");
        drain(true);
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: crash_driver WRITER_PROGRAM [KILLS] [LIVE_SECONDS]\n");
        return 2;
    }
    const std::string program = argv[1];
    const int kills = argc > 2 ? std::atoi(argv[2]) : 100;
    const double live_seconds = argc > 3 ? std::atof(argv[3]) : 5;
    std::mt19937_64 rng(std::random_device{}());
    const auto base = std::filesystem::temp_directory_path() / ("smdebug-crash-" + std::to_string(::getpid()));
    std::filesystem::remove_all(base);

    int passed = 0, failed = 0;
    std::vector<std::int64_t> durable_per_kill;
    for (int k = 0; k < kills; ++k) {
        const auto dir = base / ("kill" + std::to_string(k));
        // Kill points: even kills at 0..400 ms after the start (start-up and the first steps), odd
        // kills during steady writing, 0..30 ms after the writer reported 1..40 steps durable.
        const bool steady = k % 2 == 1;
        const auto delay = std::chrono::microseconds(std::uniform_int_distribution<int>(0, steady ? 30'000 : 400'000)(rng));
        const std::int64_t wait_for_reported = std::uniform_int_distribution<int>(0, 39)(rng);
        try {
            std::int64_t reported;
            {
                Writer w(program, dir);
                if (steady) {
                    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
                    while (w.reported < wait_for_reported && std::chrono::steady_clock::now() < give_up) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                        w.drain(false);
                    }
                }
                std::this_thread::sleep_for(delay);
                w.kill_now();
                reported = w.reported;
            }
            durable_per_kill.push_back(reported + 1);
            check_prefix(check_files(dir), reported, "kill " + std::to_string(k) + " (files)", true);
            if (has_collections(dir)) {
                Trial<LocalStore> trial(LocalStore(dir, LocalStore::Durability::none), reader_options());
                check_trial(trial, reported, "kill " + std::to_string(k) + " (trial)", true);
            } else if (reported >= 0) {
                fail("kill " + std::to_string(k) + ": step " + std::to_string(reported) + " was reported durable but there is no collections file");
            }
            ++passed;
        } catch (const std::exception& e) {
            ++failed;
            std::printf("FAILED kill %d after %lld us: %s\n", k, static_cast<long long>(delay.count()), e.what());
        }
        std::filesystem::remove_all(dir);
    }

    // Readers racing a live writer.
    int live_checks = 0, live_failed = 0;
    std::int64_t live_reported = -1;
    if (live_seconds > 0) {
        const auto dir = base / "live";
        try {
            Writer w(program, dir);
            std::optional<Trial<LocalStore>> refreshing;
            const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(live_seconds);
            while (std::chrono::steady_clock::now() < end) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                w.drain(false);
                const std::int64_t reported = w.reported;  // reported before this read began
                if (!has_collections(dir)) {
                    if (reported >= 0) fail("live: steps reported durable but no collections file");
                    continue;
                }
                try {
                    check_prefix(check_files(dir), reported, "live (files)", false);
                    Trial<LocalStore> fresh(LocalStore(dir, LocalStore::Durability::none), reader_options());
                    check_trial(fresh, reported, "live (fresh trial)", false);
                    if (!refreshing) refreshing.emplace(LocalStore(dir, LocalStore::Durability::none), reader_options());
                    check_trial(*refreshing, reported, "live (refreshing trial)", false);
                    ++live_checks;
                } catch (const std::exception& e) {
                    ++live_failed;
                    std::printf("FAILED live check %d: %s\n", live_checks, e.what());
                }
            }
            w.kill_now();
            live_reported = w.reported;
            check_prefix(check_files(dir), w.reported, "live (after the kill)", true);
        } catch (const std::exception& e) {
            ++live_failed;
            std::printf("FAILED live: %s\n", e.what());
        }
        std::filesystem::remove_all(dir);
    }
    std::filesystem::remove_all(base);

    std::sort(durable_per_kill.begin(), durable_per_kill.end());
    const auto at = [&](double q) { return durable_per_kill.empty() ? 0 : durable_per_kill[static_cast<std::size_t>(q * (durable_per_kill.size() - 1))]; };
    std::printf("crash test: %d/%d kills passed (steps reported durable per kill: min %lld, median %lld, max %lld); "
                "live readers: %d checks, %d failed, %lld steps durable\n",
                passed, kills, static_cast<long long>(at(0)), static_cast<long long>(at(0.5)), static_cast<long long>(at(1)),
                live_checks, live_failed, static_cast<long long>(live_reported + 1));
    return failed == 0 && live_failed == 0 && (live_seconds <= 0 || live_checks > 0) ? 0 : 1;
}
