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

#include <smdebug/writer/step_writer.hpp>
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

// ---- batch reads ---------------------------------------------------------------------------------

TEST_CASE("values_at: many tensors of one step, read together, as value() gives them", "[batch]") {
    test::TempDir dir("values-at");
    write_trial(LocalStore(dir.path), 4, 6);
    TrialOptions o;
    o.training_end_delay_refresh = 0ms;
    Trial<LocalStore> trial(LocalStore(dir.path), o);
    const auto names = trial.tensor_names();
    REQUIRE(names.size() == 6);
    const auto at2 = trial.values_at(2, names);
    REQUIRE(at2.size() == 6);
    for (const auto& n : names) {
        const auto one = trial.tensor(n).value(2);
        const auto& batch = at2.at(n);
        CHECK(batch.shape() == one.shape());
        const auto e = batch.elements<float>();
        CHECK(std::vector<float>(e.begin(), e.end()) == std::vector<float>(8, 200.0f + static_cast<float>(std::stoi(n.substr(1)))));
    }
    // One pass over the step's event file: the values are views into one read buffer.
    const auto a = at2.at("t0").bytes().data(), b = at2.at("t5").bytes().data();
    CHECK(std::abs(a - b) < 4096);
    CHECK(trial.values_at(3).size() == 6);  // every tensor of the step
    // Errors: as value() raises them, the first failing name first.
    const std::vector<std::string> unknown = {"t0", "nope"};
    CHECK_THROWS_AS(trial.values_at(1, unknown), TensorUnavailable);
    CHECK_THROWS_AS(trial.values_at(9, names), StepUnavailable);
    // A damaged record names its file, as value() does.
    fs::resize_file(dir.path / paths::event_key(3, "worker_0"), 100);
    Trial<LocalStore> damaged(LocalStore(dir.path), o);
    try {
        (void)damaged.values_at(3, names);
        FAIL("expected a FormatError");
    } catch (const FormatError& e) {
        CHECK_THAT(e.what(), Catch::Contains(paths::event_key(3, "worker_0")));
    }
    CHECK(damaged.values_at(1, names).size() == 6);
}

TEST_CASE("read_all_records: every record step by step, in bounded batches", "[batch]") {
    test::TempDir dir("all-records");
    LocalStore store(dir.path, LocalStore::Durability::none);
    write_trial(store, 30, 5);
    {  // a stored reduction and a second mode
        StepWriter w(30, "worker_0", Mode::EVAL, 0);
        const std::vector<double> mx = {7.0};
        w.add_tensor("smdebug/reductions/max/t0", TensorValue::from<double>(mx, {1}), 1.0);
        std::vector<float> v(8, 3000.0f);
        w.add_tensor("t1", TensorValue::from<float>(v, {2, 4}), 1.0);
        w.flush(store);
    }
    TrialOptions o;
    o.training_end_delay_refresh = 0ms;
    Trial<LocalStore> trial(LocalStore(dir.path), o);
    std::size_t batches = 0, seen = 0;
    std::int64_t last_step = -1;
    bool ordered = true, values_ok = true;
    const std::size_t n = read_all_records(
        trial,
        [&](std::span<const RecordRead> batch) {
            ++batches;
            for (const auto& r : batch) {
                ++seen;
                REQUIRE(r.value);
                REQUIRE_FALSE(r.error);
                const std::int64_t g = r.mode == Mode::EVAL ? 30 : r.mode_step;
                ordered = ordered && g >= last_step;
                last_step = g;
                if (!r.reduction.empty()) {
                    values_ok = values_ok && r.tensor == "t0" && r.reduction == "max" && !r.abs && r.value->elements<double>()[0] == 7.0;
                } else {
                    const float want = r.mode == Mode::EVAL ? 3000.0f : static_cast<float>(r.mode_step * 100 + std::stoi(std::string(r.tensor.substr(1))));
                    values_ok = values_ok && r.value->elements<float>()[7] == want && r.worker == "worker_0";
                }
            }
        },
        /*batch_bytes=*/1000);
    CHECK(n == 30 * 5 + 2);
    CHECK(seen == n);
    CHECK(ordered);
    CHECK(values_ok);
    CHECK(batches >= 10);  // bounded batches, not one read of everything
    // Missing event files are reported per record, as value() reports them.
    fs::remove(dir.path / paths::event_key(4, "worker_0"));
    Trial<LocalStore> missing(LocalStore(dir.path), [] { TrialOptions m; m.training_end_delay_refresh = 0ms; m.missing_event_file_retry_limit = 1; return m; }());
    std::size_t unavailable = 0;
    read_all_records(missing, [&](std::span<const RecordRead> batch) {
        for (const auto& r : batch)
            if (r.error) {
                CHECK(r.mode_step == 4);
                CHECK_THROWS_AS(std::rethrow_exception(r.error), TensorUnavailableForStep);
                ++unavailable;
            }
    });
    CHECK(unavailable == 5);
}

TEST_CASE("Tensor::values over many steps matches value() step by step", "[batch]") {
    test::TempDir dir("tensor-values");
    write_trial(LocalStore(dir.path), 50, 3);
    TrialOptions o;
    o.training_end_delay_refresh = 0ms;
    Trial<LocalStore> trial(LocalStore(dir.path), o);
    auto t = trial.tensor("t2");
    const auto all = t.values();
    REQUIRE(all.size() == 50);
    for (const auto& [step, v] : all) CHECK(v.elements<float>()[0] == static_cast<float>(step * 100 + 2));
}
