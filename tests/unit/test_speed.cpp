// Speed features of the query layer, tested for their behaviour (the figures are in benchmarks/):
// the end-of-training settle of DEVIATIONS.md D21 on both sides of its boundary, and batch reads
// (many tensors of one step, many steps of one tensor, every record step by step) against the
// one-value-at-a-time answers.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>

#include <smdebug/format/step_writer.hpp>
#include <smdebug/smdebug.hpp>

#include "test_support.hpp"

using namespace smdebug;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// `steps` steps of `tensors` float32 tensors (value: step * 100 + tensor, 8 elements), one worker.
void write_trial(const LocalStore& store, int steps, int tensors, bool end = true) {
    write_collections_file(store, "worker_0", collections_file::match_all());
    for (int s = 0; s < steps; ++s) {
        StepWriter w(s, "worker_0", Mode::TRAIN, s);
        for (int t = 0; t < tensors; ++t) {
            std::vector<float> v(8, static_cast<float>(s * 100 + t));
            w.add_tensor(std::string("t").append(std::to_string(t)), TensorValue::from<float>(v, {2, 4}), 1.0);
        }
        w.flush(store);
    }
    if (end) write_end_marker(store);
}

// Sets the end marker's modification time `age` before now (negative: in the future).
void age_end_marker(const fs::path& root, std::chrono::milliseconds age) {
    const auto t = std::chrono::system_clock::now() - age;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    const timespec times[2] = {{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)},
                               {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)}};
    REQUIRE(::utimensat(AT_FDCWD, (root / "training_job_end.ts").c_str(), times, 0) == 0);
}

// Seconds the first refreshing query of a fresh trial takes (it settles the end of training).
double first_query_seconds(const fs::path& root, std::chrono::milliseconds delay) {
    TrialOptions o;
    o.training_end_delay_refresh = delay;
    Trial<LocalStore> trial(LocalStore(root), o);
    const auto t0 = Clock::now();
    (void)trial.steps();
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    CHECK(trial.loaded_all_steps());
    return secs;
}

}  // namespace

TEST_CASE("D21: a trial that ended more than D ago settles without sleeping", "[d21]") {
    test::TempDir dir("d21-old");
    write_trial(LocalStore(dir.path), 3, 2);
    age_end_marker(dir.path, 10s);
    CHECK(first_query_seconds(dir.path, 3000ms) < 1.0);
    // just past the boundary: ended D + 0.3 s ago
    age_end_marker(dir.path, 1300ms);
    CHECK(first_query_seconds(dir.path, 1000ms) < 0.5);
}

TEST_CASE("D21: a trial that ended less than D ago sleeps what remains of D, never more", "[d21]") {
    test::TempDir dir("d21-new");
    write_trial(LocalStore(dir.path), 3, 2);
    // just inside the boundary: ended D - 0.6 s ago -> about 0.6 s left
    age_end_marker(dir.path, 900ms);
    const double inside = first_query_seconds(dir.path, 1500ms);
    CHECK(inside >= 0.45);
    CHECK(inside < 1.2);
    // a marker from the future (clock skew) waits D, not more
    age_end_marker(dir.path, -3600s);
    const double future = first_query_seconds(dir.path, 400ms);
    CHECK(future >= 0.35);
    CHECK(future < 1.5);
}

TEST_CASE("D21: data landing just after the end marker is still loaded", "[d21]") {
    test::TempDir dir("d21-late");
    LocalStore store(dir.path, LocalStore::Durability::none);
    write_trial(store, 2, 1, /*end=*/false);
    write_end_marker(store);  // ended now; step 2 lands 300 ms later
    TrialOptions o;
    o.training_end_delay_refresh = 1200ms;
    Trial<LocalStore> trial(LocalStore(dir.path), o);
    std::thread late([&] {
        std::this_thread::sleep_for(300ms);
        StepWriter w(2, "worker_0", Mode::TRAIN, 2);
        std::vector<float> v(8, 200.0f);
        w.add_tensor("t0", TensorValue::from<float>(v, {2, 4}), 1.0);
        w.flush(store);
    });
    const auto steps = trial.steps();
    late.join();
    CHECK(steps == std::vector<std::int64_t>{0, 1, 2});
}
