// Speed features of the query layer, tested for their behaviour (the figures are in benchmarks/):
// the end-of-training settle of docs/deviations.md D21 on both sides of its boundary, and batch reads
// (many tensors of one step, many steps of one tensor, every record step by step) against the
// one-value-at-a-time answers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <smdebug/writer/step_writer.hpp>
#include <smdebug/smdebug.hpp>

#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_speed {

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

// Options for a trial whose training has ended: no end-of-training settle.
TrialOptions ended_trial_options() {
    TrialOptions o;
    o.training_end_delay_refresh = 0ms;
    return o;
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

// Flips a byte of `tensor`'s record header at `step` (worker_0): the record length, whose CRC then
// no longer matches (smdebug's footer is a constant, so the header's CRC is what catches damage).
void corrupt_record_header(const fs::path& trial, std::int64_t step, const std::string& tensor) {
    const auto file = trial / paths::event_key(step, "worker_0");
    std::string bytes, index_text;
    {
        std::ifstream in(file, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
        std::ifstream idx(trial / paths::index_key(step, "worker_0"), std::ios::binary);
        index_text.assign(std::istreambuf_iterator<char>(idx), {});
    }
    const auto index = index_file::parse(index_text, "index");
    const auto entry = std::find_if(index.tensors.begin(), index.tensors.end(), [&](const auto& e) { return e.name == tensor; });
    REQUIRE(entry != index.tensors.end());
    REQUIRE(entry->start + 2 < bytes.size());
    bytes[entry->start + 2] ^= 0x01;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
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
    TrialOptions o = ended_trial_options();
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

TEST_CASE("values_at: a step's records are cut from one read of their file; any subset, order, repeats; a bad record fails alone", "[batch]") {
    test::TempDir dir("values-at-ranges");
    write_trial(LocalStore(dir.path), 3, 6);
    TrialOptions o = ended_trial_options();
    Trial<LocalStore> trial(LocalStore(dir.path), o);
    const std::vector<std::string> some = {"t5", "t1", "t3", "t1"};  // gaps between them, reversed, a repeat
    for (int s = 0; s < 3; ++s) {
        const auto v = trial.values_at(s, some);
        REQUIRE(v.size() == 3);
        for (const auto& [n, value] : v) CHECK(value.elements<float>()[7] == static_cast<float>(s * 100 + std::stoi(n.substr(1))));
    }
    std::vector<Tensor<LocalStore>> tensors;
    for (const auto& n : some) tensors.push_back(trial.tensor(n));
    const auto shared = Tensor<LocalStore>::shared_values_at(tensors, 2);
    REQUIRE(shared.size() == 4);
    CHECK(shared[0]->elements<float>()[0] == 205.0f);
    CHECK(shared[1]->elements<float>()[0] == 201.0f);
    CHECK(shared[2]->elements<float>()[0] == 203.0f);
    CHECK(shared[3]->elements<float>()[0] == 201.0f);

    // t2's record header at step 1 damaged: t2 fails; its neighbours, read in the same range, do not.
    corrupt_record_header(dir.path, 1, "t2");
    Trial<LocalStore> damaged(LocalStore(dir.path), o);
    const auto names = damaged.tensor_names();
    try {
        (void)damaged.values_at(1, names);
        FAIL("expected a FormatError for t2");
    } catch (const FormatError& e) {
        CHECK_THAT(e.what(), Catch::Contains(paths::event_key(1, "worker_0")));
    }
    const std::vector<std::string> others = {"t0", "t1", "t3", "t4", "t5"};
    const auto v = damaged.values_at(1, others);
    REQUIRE(v.size() == 5);
    CHECK(v.at("t1").elements<float>()[0] == 101.0f);
    CHECK(v.at("t3").elements<float>()[0] == 103.0f);
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
    TrialOptions o = ended_trial_options();
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

TEST_CASE("read_all_records with reduce: raw values reduced as they are read; stored reductions, strings, unreadable records are not", "[batch]") {
    test::TempDir dir("all-records-reduce");
    LocalStore store(dir.path, LocalStore::Durability::none);
    write_trial(store, 12, 3, /*end=*/false);
    {
        StepWriter w(12, "worker_0", Mode::TRAIN, 12);
        const std::vector<double> mx = {7.0};
        w.add_tensor("smdebug/reductions/max/t0", TensorValue::from<double>(mx, {1}), 1.0);
        const std::vector<float> v = {-1.0f, 2.0f, -3.0f, 6.0f};
        w.add_tensor("t1", TensorValue::from<float>(v, {4}), 1.0);
        w.add_tensor("words", TensorValue(Shape{2}, {std::string("a"), std::string("b")}), 1.0);
        w.flush(store);
    }
    write_end_marker(store);
    fs::remove(dir.path / paths::event_key(5, "worker_0"));
    TrialOptions o = ended_trial_options();
    o.missing_event_file_retry_limit = 1;
    Trial<LocalStore> trial(LocalStore(dir.path), o);
    ReadOptions options;
    options.batch_bytes = 500;
    options.reduce = Reduction::mean;
    options.abs = true;
    std::size_t reduced = 0, unreadable = 0;
    read_all_records(trial, [&](std::span<const RecordRead> batch) {
        for (const auto& r : batch) {
            INFO(r.tensor << " step " << r.mode_step);
            if (r.error) {
                CHECK(r.mode_step == 5);
                CHECK_FALSE(r.reduced);
                ++unreadable;
            } else if (!r.reduction.empty() || r.tensor == "words") {
                CHECK_FALSE(r.reduced);
            } else {
                REQUIRE(r.reduced);
                const double want = r.mode_step == 12 ? 3.0 : r.mode_step * 100 + std::stoi(std::string(r.tensor.substr(1)));
                CHECK(*r.reduced == want);
                CHECK(*r.reduced == compute_reduction(*r.value, Reduction::mean, true));
                ++reduced;
            }
        }
    }, options);
    CHECK(unreadable == 3);
    CHECK(reduced == 11 * 3 + 1);

    // keep_values = false: the same reductions, sizes and errors, and no values held.
    options.keep_values = false;
    std::size_t records = 0, dropped_reduced = 0;
    read_all_records(trial, [&](std::span<const RecordRead> batch) {
        for (const auto& r : batch) {
            INFO(r.tensor << " step " << r.mode_step);
            ++records;
            CHECK_FALSE(r.value);
            if (r.error) {
                CHECK(r.mode_step == 5);
                CHECK(r.bytes == 0);
                continue;
            }
            if (r.tensor == "words") CHECK(r.bytes == 2);
            else if (!r.reduction.empty()) CHECK(r.bytes == sizeof(double));
            else CHECK(r.bytes == (r.mode_step == 12 ? 4 : 8) * sizeof(float));
            if (r.reduced) {
                const double want = r.mode_step == 12 ? 3.0 : r.mode_step * 100 + std::stoi(std::string(r.tensor.substr(1)));
                CHECK(*r.reduced == want);
                ++dropped_reduced;
            }
        }
    }, options);
    CHECK(dropped_reduced == reduced);
    CHECK(records == 12 * 3 + 3);
}

TEST_CASE("Tensor::values over many steps matches value() step by step", "[batch]") {
    test::TempDir dir("tensor-values");
    write_trial(LocalStore(dir.path), 50, 3);
    TrialOptions o = ended_trial_options();
    Trial<LocalStore> trial(LocalStore(dir.path), o);
    auto t = trial.tensor("t2");
    const auto all = t.values();
    REQUIRE(all.size() == 50);
    for (const auto& [step, v] : all) CHECK(v.elements<float>()[0] == static_cast<float>(step * 100 + 2));
}

// ---- the pieces the read path's speed rests on ------------------------------------------------

TEST_CASE("parallel_for: every index once, nested batches complete, the first error is rethrown", "[batch]") {
    detail::HelperPool pool;
    std::vector<std::atomic<int>> hits(1000);
    detail::parallel_for(pool, hits.size(), 4, [&](std::size_t i) { ++hits[i]; });
    for (const auto& h : hits) REQUIRE(h.load() == 1);

    // Nested: every helper may be busy with the outer batch; the inner callers still finish.
    std::atomic<int> inner{0};
    detail::parallel_for(pool, 8, 4, [&](std::size_t) { detail::parallel_for(pool, 16, 4, [&](std::size_t) { ++inner; }); });
    CHECK(inner.load() == 8 * 16);

    std::atomic<int> ran{0};
    CHECK_THROWS_AS(detail::parallel_for(pool, 100, 3,
                                         [&](std::size_t i) {
                                             ++ran;
                                             if (i == 5) throw StorageError("task 5 failed");
                                         }),
                    StorageError);
    CHECK(ran.load() <= 100);
    // Many small batches from several threads at once (what concurrent rules do).
    std::vector<std::thread> callers;
    std::atomic<long> total{0};
    for (int t = 0; t < 4; ++t)
        callers.emplace_back([&] {
            for (int b = 0; b < 200; ++b) detail::parallel_for(pool, 4, 4, [&](std::size_t i) { total += static_cast<long>(i); });
        });
    for (auto& c : callers) c.join();
    CHECK(total.load() == 4 * 200 * 6);
}

// Threads of this process, as the kernel lists them.
static std::size_t process_threads() {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/task"), {}));
}

// The thread count once joined threads have left the kernel's list: pthread_join returns when the
// thread has exited, but its /proc/self/task entry can outlive that briefly (the kernel reaps it
// after waking the joiner), so a count taken right after a join may still include it. Waits up to
// 2 s for `expected`, then returns what is listed.
static std::size_t process_threads_settled(std::size_t expected) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    std::size_t n = process_threads();
    while (n != expected && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        n = process_threads();
    }
    return n;
}

TEST_CASE("HelperPool: threads start on first use and are joined when their owner goes", "[batch]") {
    const std::size_t before = process_threads();
    {
        detail::HelperPool pool(3);
        CHECK(pool.threads() == 0);
        CHECK(process_threads() == before);  // none until a batch wants helpers
        std::atomic<int> n{0};
        detail::parallel_for(pool, 64, 4, [&](std::size_t) { ++n; });
        CHECK(n.load() == 64);
        CHECK(pool.threads() == 3);
        CHECK(process_threads() == before + 3);
    }
    CHECK(process_threads_settled(before) == before);

    // A LocalStore's pool is shared by its copies and joined when the last copy goes.
    test::TempDir dir("pool");
    {
        LocalStore first(dir.path, LocalStore::Durability::none, LocalReadOptions{.threads = 3});
        for (int i = 0; i < 64; ++i) first.write("f" + std::to_string(i), std::as_bytes(std::span<const char>("x", 1)));
        std::vector<std::string> keys;
        for (int i = 0; i < 64; ++i) keys.push_back("f" + std::to_string(i));
        std::optional<LocalStore> copy(first);
        REQUIRE(copy->read_objects(keys).size() == 64);
        const std::size_t with_pool = process_threads();
        CHECK(with_pool == before + 2);  // 3 readers: the caller and two helpers
        { LocalStore gone(std::move(first)); }
        CHECK(process_threads() == with_pool);  // the copy still holds the pool
        copy.reset();
    }
    CHECK(process_threads_settled(before) == before);

    // A Trial's pool (index parsing, read-ahead) goes with the Trial.
    test::TempDir trial_dir("pool_trial");
    write_trial(LocalStore(trial_dir.path, LocalStore::Durability::none), 200, 2);
    {
        Trial<LocalStore> trial(LocalStore(trial_dir.path), ended_trial_options());
        REQUIRE(trial.steps().size() == 200);
        for (auto s : trial.steps()) (void)trial.tensor("t0").value(s);  // a walk: read-ahead on the pool
    }
    CHECK(process_threads_settled(before) == before);
}

TEST_CASE("StepIndex: names resolved from the previous file's entries stay right when files differ", "[batch]") {
    detail::StepIndex index;
    auto file = [](std::int64_t ms, std::vector<std::string> names, std::vector<std::string> shapes) {
        index_file::IndexFile f;
        f.mode = Mode::TRAIN;
        f.mode_step = ms;
        f.event_file_name = "events/e" + std::to_string(ms) + ".tfevents";
        std::uint64_t start = 0;
        for (auto& n : names) {
            f.tensors.push_back({n, start, 100});
            start += 100;
        }
        for (auto& n : shapes) f.shapes.push_back({n, n + "_orig", {static_cast<std::int64_t>(n.size())}});
        return f;
    };
    // The same position holds another name, a reduction where a tensor was, and back again.
    index.ingest(0, "worker_0", file(0, {"a", "b", "smdebug/reductions/max/a"}, {"a", "b"}));
    index.ingest(1, "worker_0", file(1, {"b", "a", "smdebug/reductions/abs_min/b"}, {"b"}));
    index.ingest(2, "worker_0", file(2, {"smdebug/reductions/max/a", "a"}, {"a", "ccc"}));
    index.ingest(3, "worker_0", file(3, {"smdebug/reductions/max/a", "a"}, {"a", "ccc"}));
    const auto& tensors = index.tensors();
    REQUIRE(tensors.size() == 3);
    const auto train = mode_index(Mode::TRAIN);
    const auto& a = index.find_tensor("a")->steps[train];
    const auto& b = index.find_tensor("b")->steps[train];
    const auto& c = index.find_tensor("ccc")->steps[train];
    auto loc = [](const detail::ModeSteps& ms, std::int64_t step) { return ms.find(step).front().data().location; };
    REQUIRE(loc(a, 0));
    CHECK(loc(a, 0)->start == 0);
    CHECK(loc(a, 1)->start == 100);
    CHECK(loc(a, 2)->start == 100);
    CHECK(loc(b, 0)->start == 100);
    CHECK(loc(b, 1)->start == 0);
    CHECK_FALSE(b.contains(2));
    CHECK(loc(a, 1)->tag_hash == detail::record_tag_hash("a"));
    const auto* max0 = a.find(0).front().data().reduction("max", false);
    REQUIRE(max0);
    CHECK(max0->start == 200);
    CHECK(max0->tag_hash == detail::record_tag_hash("smdebug/reductions/max/a"));
    CHECK(a.find(2).front().data().reduction("max", false)->start == 0);
    CHECK_FALSE(a.find(1).front().data().reduction("max", false));
    CHECK(b.find(1).front().data().reduction("min", true)->start == 200);
    CHECK_FALSE(b.find(1).front().data().reduction("max", false));
    // Shapes: interned, by name.
    REQUIRE(a.find(0).front().data().shape);
    CHECK(*a.find(0).front().data().shape == Shape{1});
    CHECK(a.find(0).front().data().shape == a.find(3).front().data().shape);
    CHECK_FALSE(a.find(1).front().data().shape);
    CHECK(*b.find(1).front().data().shape == Shape{1});
    CHECK(*c.find(2).front().data().shape == Shape{3});
    CHECK(index.find_tensor("ccc")->original_name == "ccc_orig");
    CHECK_FALSE(c.find(2).front().data().location);
    const auto* at2 = index.tensors_of_step(2);
    REQUIRE(at2);
    CHECK(at2->size() == 2);  // a (its reduction and record), then ccc
}

TEST_CASE("StepIndex: a step of many workers, and a worker's mode step met again in another file", "[batch]") {
    // Each worker's first file at a step adds its records without searching the step's other
    // workers; a file of a (worker, mode step) seen before still finds and updates its record.
    detail::StepIndex index;
    auto file = [](Mode mode, std::int64_t ms, std::uint64_t start) {
        index_file::IndexFile f;
        f.mode = mode;
        f.mode_step = ms;
        f.event_file_name = "events/e.tfevents";
        f.tensors.push_back({"w", start, 100});
        f.shapes.push_back({"w", "w", {4}});
        return f;
    };
    auto worker = [](int k) { return "worker_" + std::to_string(k); };
    constexpr int workers = 300;
    for (int k = 0; k < workers; ++k) index.ingest(0, worker(k), file(Mode::TRAIN, 0, 1000 * k));
    for (int k = workers - 1; k >= 0; --k) index.ingest(1, worker(k), file(Mode::TRAIN, 1, 1000 * k + 1));
    const auto& train = index.find_tensor("w")->steps[mode_index(Mode::TRAIN)];
    auto starts_at = [&](std::int64_t ms) {
        std::vector<std::pair<std::string, std::uint64_t>> out;
        for (const auto& e : train.find(ms)) out.emplace_back(*e.worker, e.data().location->start);
        return out;
    };
    auto step0 = starts_at(0), step1 = starts_at(1);
    REQUIRE(step0.size() == workers);
    REQUIRE(step1.size() == workers);
    CHECK(step0[7] == std::pair(worker(7), std::uint64_t{7000}));              // reading order
    CHECK(step1[0] == std::pair(worker(workers - 1), std::uint64_t{299001}));
    CHECK(train.record_count() == 2 * workers);
    CHECK(index.worker_count(0) == workers);
    REQUIRE(index.tensors_of_step(0));
    CHECK(index.tensors_of_step(0)->size() == 1);  // "w" once, not once per worker's file
    // Worker 150's mode step 0 again, from another global step's file: its record is updated in place.
    index.ingest(7, worker(150), file(Mode::TRAIN, 0, 5));
    // Worker 0's file of step 1 again (its record is not the last of the step) and of step 0.
    index.ingest(1, worker(0), file(Mode::TRAIN, 1, 6));
    index.ingest(0, worker(3), file(Mode::TRAIN, 0, 8));
    CHECK(train.record_count() == 2 * workers);
    step0 = starts_at(0);
    step1 = starts_at(1);
    REQUIRE(step0.size() == workers);
    CHECK(step0[150] == std::pair(worker(150), std::uint64_t{5}));
    CHECK(step0[3] == std::pair(worker(3), std::uint64_t{8}));
    CHECK(step0[4] == std::pair(worker(4), std::uint64_t{4000}));
    REQUIRE(step1.size() == workers);
    CHECK(step1[workers - 1] == std::pair(worker(0), std::uint64_t{6}));
    CHECK(index.worker_count(0) == workers);
    CHECK(index.worker_count(1) == workers);
    CHECK(index.worker_count(7) == 1);
    // The same worker's mode step 0 in another mode is another record; and a file arriving out of
    // step order lands in order.
    index.ingest(8, worker(5), file(Mode::EVAL, 0, 9));
    index.ingest(9, worker(5), file(Mode::TRAIN, 2, 10));
    index.ingest(10, worker(6), file(Mode::TRAIN, 2, 11));
    index.ingest(11, worker(5), file(Mode::TRAIN, 1, 12));  // mode step 1 again, behind step 2
    CHECK(index.find_tensor("w")->steps[mode_index(Mode::EVAL)].record_count() == 1);
    CHECK(train.record_count() == 2 * workers + 2);
    CHECK(starts_at(1).size() == workers);
    CHECK(starts_at(1)[workers - 6] == std::pair(worker(5), std::uint64_t{12}));
    CHECK(starts_at(2) == std::vector<std::pair<std::string, std::uint64_t>>{{worker(5), 10}, {worker(6), 11}});
}

TEST_CASE("StepIndex: compact records, any ingestion order, stable record addresses", "[batch]") {
    detail::StepIndex index;
    auto file = [](std::int64_t ms, std::uint64_t start) {
        index_file::IndexFile f;
        f.mode = Mode::TRAIN;
        f.mode_step = ms;
        f.event_file_name = "events/e.tfevents";
        f.tensors.push_back({"w", start, 100});
        f.tensors.push_back({"w/reductions/abs_mean", start + 100, 40});  // not a reduction name
        f.shapes.push_back({"w", "w", {2, 3}});
        return f;
    };
    // Steps out of order, two workers, one step written twice by one worker.
    index.ingest(5, "worker_1", file(5, 0));
    const auto* w = index.find_tensor("w");
    REQUIRE(w);
    const detail::StepData* step5_worker1 = &w->steps[mode_index(Mode::TRAIN)].find(5).front().data();
    index.ingest(5, "worker_0", file(5, 1000));
    index.ingest(1, "worker_0", file(1, 2000));
    index.ingest(9, "worker_0", file(9, 3000));
    for (int s = 10; s < 2000; ++s) index.ingest(s, "worker_0", file(s, 10000 + 200 * s));
    index.ingest(3, "worker_1", file(3, 4000));
    const auto& steps = w->steps[mode_index(Mode::TRAIN)];
    std::vector<std::int64_t> order;
    for (const auto& [ms, workers] : steps) order.push_back(ms);
    REQUIRE(order.size() == 4 + 1990);
    CHECK(std::is_sorted(order.begin(), order.end()));
    CHECK(order[0] == 1);
    CHECK(order[1] == 3);
    CHECK(order[2] == 5);
    const auto five = steps.find(5);
    REQUIRE(five.size() == 2);
    CHECK(*five[0].worker == "worker_1");  // workers in reading order
    CHECK(*five[1].worker == "worker_0");
    CHECK(&five[0].data() == step5_worker1);  // later ingestion did not move it
    CHECK(five[1].data().location->start == 1000);
    REQUIRE(five[0].data().shape);
    CHECK(*five[0].data().shape == Shape{2, 3});
    CHECK(five[0].data().shape == five[1].data().shape);  // shapes are interned
    CHECK(steps.find(4).empty());
    // The same (step, worker) again replaces its location in place.
    index.ingest(5, "worker_0", file(5, 5000));
    CHECK(steps.find(5).size() == 2);
    CHECK(steps.find(5)[1].data().location->start == 5000);
    // Compact: per record (one tensor at one step of one worker) at most 72 bytes: the location
    // without optional's flag, stored reductions out of line.
    const std::size_t records = steps.record_count() + index.find_tensor("w/reductions/abs_mean")->steps[mode_index(Mode::TRAIN)].record_count();
    CHECK(index.record_bytes() / records <= 72);
    // A record with only a stored reduction has no location until the tensor's own entry comes.
    index_file::IndexFile reduced;
    reduced.mode = Mode::TRAIN;
    reduced.mode_step = 3000;
    reduced.event_file_name = "events/e.tfevents";
    reduced.tensors.push_back({"smdebug/reductions/max/v", 7, 30});
    reduced.tensors.push_back({"smdebug/reductions/abs_min/v", 37, 30});
    index.ingest(3000, "worker_0", reduced);
    const auto& v = index.find_tensor("v")->steps[mode_index(Mode::TRAIN)];
    REQUIRE(v.find(3000).size() == 1);
    const auto& sd = v.find(3000).front().data();
    CHECK_FALSE(sd.location);
    CHECK_FALSE(sd.location.has_value());
    CHECK_THROWS_AS(sd.location.value(), std::bad_optional_access);
    CHECK(sd.reductions.size() == 2);
    REQUIRE(sd.reduction("max", false));
    CHECK(sd.reduction("max", false)->start == 7);
    REQUIRE(sd.reduction("min", true));
    CHECK(sd.reduction("min", true)->start == 37);
    CHECK_FALSE(sd.reduction("min", false));
    reduced.tensors = {{"v", 100, 50}, {"smdebug/reductions/max/v", 150, 30}};
    index.ingest(3000, "worker_0", reduced);
    REQUIRE(sd.location);
    CHECK(sd.location->start == 100);
    CHECK(sd.reductions.size() == 2);  // max replaced in place
    CHECK(sd.reduction("max", false)->start == 150);
    CHECK(index.find_tensor("w")->steps[mode_index(Mode::TRAIN)].find(1).front().data().reductions.empty());
}

namespace {

// A local folder that says it is latency-bound (as S3Store does) and counts its requests: each
// read_range and each range of a read_ranges batch (the reader has merged a batch's neighbours
// into ranges already, as an S3 GET each).
class CountingRemoteStore {
public:
    explicit CountingRemoteStore(const fs::path& root) : local_(root) {}
    bool latency_bound() const noexcept { return true; }
    std::vector<std::string> list(std::string_view p, std::string_view a = {}) const { return local_.list(p, a); }
    ByteBuffer read(std::string_view k) const { return local_.read(k); }
    ByteBuffer read_range(std::string_view k, std::uint64_t o, std::uint64_t n) const {
        auto b = local_.read_range(k, o, n);
        std::lock_guard lock(state_->mu);  // a store is shared between threads (the read-ahead's helpers)
        ++state_->requests;
        state_->bytes += n;
        state_->buffers.push_back(b.share());
        return b;
    }
    void read_ranges(std::span<const RangeRequest> r, const RangeSink& sink) const {
        {
            std::lock_guard lock(state_->mu);
            state_->requests += r.size();
            for (const auto& q : r) state_->bytes += q.length;
        }
        local_.read_ranges(r, [&](std::size_t j, ByteBuffer&& b) {
            {
                std::lock_guard lock(state_->mu);  // the sink may run on several threads
                state_->buffers.push_back(b.share());
            }
            sink(j, std::move(b));
        });
    }
    // How many of the buffers the store handed out are still alive.
    std::size_t live_buffers() const {
        std::lock_guard lock(state_->mu);
        return static_cast<std::size_t>(std::ranges::count_if(state_->buffers, [](const auto& w) { return !w.expired(); }));
    }
    bool exists(std::string_view k) const { return local_.exists(k); }
    std::string describe(std::string_view k) const { return local_.describe(k); }
    std::uint64_t requests() const {
        std::lock_guard lock(state_->mu);
        return state_->requests;
    }
    std::uint64_t bytes() const {
        std::lock_guard lock(state_->mu);
        return state_->bytes;
    }

private:
    struct State {
        std::mutex mu;
        std::uint64_t requests = 0;
        std::uint64_t bytes = 0;
        std::vector<std::weak_ptr<const void>> buffers;
    };
    LocalStore local_;
    std::shared_ptr<State> state_ = std::make_shared<State>();
};
static_assert(LatencyBoundStore<CountingRemoteStore> && BatchReadStore<CountingRemoteStore>);

std::string tensor_name(int t) { return std::string("t").append(std::to_string(t)); }

void check_tensor_values(const std::map<std::int64_t, TensorValue>& values, int tensor, std::size_t steps) {
    REQUIRE(values.size() == steps);
    for (const auto& [step, v] : values) {
        const auto e = v.elements<float>();
        REQUIRE(std::vector<float>(e.begin(), e.end()) == std::vector<float>(8, static_cast<float>(step * 100 + tensor)));
    }
}

}  // namespace

TEST_CASE("read-ahead: a walk over steps reads the next ones on helpers and gives what value() gives", "[batch][read_ahead]") {
    test::TempDir dir("read-ahead");
    write_trial(LocalStore(dir.path), 30, 6);
    TrialOptions o = ended_trial_options();
    {
        // Not on a local store, where it was measured slower (docs/performance.md).
        Trial<LocalStore> local(LocalStore(dir.path), o);
        for (int s = 0; s < 30; ++s) REQUIRE(local.values_at(s, local.tensor_names()).size() == 6);
        CHECK(local.records().read_ahead_hits() == 0);
    }
    Trial<CountingRemoteStore> trial(CountingRemoteStore(dir.path), o);
    const auto names = trial.tensor_names();
    auto check_step = [&](const std::map<std::string, TensorValue>& values, int s, std::size_t count = 6) {
        REQUIRE(values.size() == count);
        for (const auto& [name, v] : values) {
            const auto e = v.elements<float>();
            REQUIRE(std::vector<float>(e.begin(), e.end()) == std::vector<float>(8, static_cast<float>(s * 100 + std::stoi(name.substr(1)))));
        }
    };
    for (int s = 0; s < 30; ++s) check_step(trial.values_at(s, names), s);
    // From the third batch on, every batch was read ahead (the first two show the walk).
    CHECK(trial.records().read_ahead_hits() == 28);
    // Any other access drops the read-ahead and reads what it is asked.
    check_step(trial.values_at(5, names), 5);
    check_step(trial.values_at(2, names), 2);
    check_step(trial.values_at(3, std::vector<std::string>{"t1", "t4"}), 3, 2);
    CHECK(trial.records().read_ahead_hits() == 28);
    // A subset of tensors walks too.
    const std::vector<std::string> two = {"t0", "t5"};
    for (int s = 10; s < 20; ++s) check_step(trial.values_at(s, two), s, 2);
    CHECK(trial.records().read_ahead_hits() == 28 + 9);  // 11..19: step 10 found step 4's batch of the old walk
}

TEST_CASE("read-ahead: a record that fails when read ahead fails as value() fails, and the walk goes on", "[batch][read_ahead]") {
    test::TempDir dir("read-ahead-bad");
    write_trial(LocalStore(dir.path), 12, 4);
    fs::resize_file(dir.path / paths::event_key(6, "worker_0"), 100);  // step 6's records are cut short
    TrialOptions o = ended_trial_options();
    Trial<CountingRemoteStore> trial(CountingRemoteStore(dir.path), o);
    const auto names = trial.tensor_names();
    for (int s = 0; s < 12; ++s) {
        if (s == 6) {
            try {
                (void)trial.values_at(s, names);
                FAIL("expected a FormatError for step 6");
            } catch (const FormatError& e) {
                CHECK_THAT(e.what(), Catch::Contains(paths::event_key(6, "worker_0")));
            }
            continue;
        }
        const auto values = trial.values_at(s, names);
        CHECK(values.at("t3").elements<float>()[0] == static_cast<float>(s * 100 + 3));
    }
}


TEST_CASE("event-file cache: on a latency-bound store, reading tensor by tensor costs one request per event file", "[batch][file_cache]") {
    test::TempDir dir("file-cache");
    write_trial(LocalStore(dir.path), 20, 6);
    const TrialOptions o = ended_trial_options();
    CountingRemoteStore store(dir.path);
    Trial<CountingRemoteStore> trial(store, o);
    const auto* cache = trial.records().file_cache();
    REQUIRE(cache != nullptr);
    CHECK(cache->capacity() == o.event_file_cache_bytes);

    check_tensor_values(trial.tensor("t0").values(), 0, 20);
    CHECK(store.requests() == 20);  // each step's event file whole, once
    CHECK(cache->blocks() == 20);
    for (int t = 1; t < 6; ++t) check_tensor_values(trial.tensor(tensor_name(t)).values(), t, 20);
    CHECK(store.requests() == 20);  // the other tensors came from the cache
    CHECK(cache->hits() == 5 * 20);
    CHECK(cache->blocks() == 0);    // every record handed out: the blocks are gone
    CHECK(cache->bytes() == 0);

    // Read again, the records come from the store (a record is handed out of the cache once) and
    // the values read first are untouched by the second decode.
    const auto first = trial.tensor("t3").values();
    check_tensor_values(trial.tensor("t3").values(), 3, 20);
    check_tensor_values(first, 3, 20);

    // value() step by step, as the Python API reads: one request per event file too.
    CountingRemoteStore one_by_one(dir.path);
    Trial<CountingRemoteStore> stepwise(one_by_one, o);
    for (int t = 0; t < 6; ++t)
        for (int s = 0; s < 20; ++s) CHECK(stepwise.tensor(tensor_name(t)).value(s).elements<float>()[3] == static_cast<float>(s * 100 + t));
    CHECK(one_by_one.requests() == 20);

    // A step's records read together (a rule) are read as they are: no whole file, nothing kept.
    CountingRemoteStore step_major(dir.path);
    Trial<CountingRemoteStore> rule_like(step_major, o);
    const auto names = rule_like.tensor_names();
    const std::vector<std::string> two = {"t1", "t4"};
    for (int s = 0; s < 20; ++s) {
        REQUIRE(rule_like.values_at(s, names).size() == 6);
        REQUIRE(rule_like.values_at(s, two).at("t4").elements<float>()[0] == static_cast<float>(s * 100 + 4));
    }
    CHECK(rule_like.records().file_cache()->blocks() == 0);

    // Without the cache: one request per record.
    TrialOptions none = o;
    none.event_file_cache_bytes = 0;
    CountingRemoteStore plain(dir.path);
    Trial<CountingRemoteStore> uncached(plain, none);
    CHECK(uncached.records().file_cache() == nullptr);
    for (int t = 0; t < 6; ++t) check_tensor_values(uncached.tensor(tensor_name(t)).values(), t, 20);
    CHECK(plain.requests() == 6 * 20);
    // Local folders never widen their reads.
    Trial<LocalStore> local(LocalStore(dir.path), o);
    CHECK(local.records().file_cache() == nullptr);
}

TEST_CASE("event-file cache: a value read through it keeps its own record alive, not its event file", "[batch][file_cache]") {
    test::TempDir dir("file-cache-own");
    write_trial(LocalStore(dir.path), 20, 6);
    CountingRemoteStore store(dir.path);
    Trial<CountingRemoteStore> trial(store, ended_trial_options());
    // Batch reads (values) and single reads (value) fetch the event files whole.
    const auto kept = trial.tensor("t0").values();
    std::vector<TensorValue> kept_one_by_one;
    for (int s = 0; s < 20; ++s) kept_one_by_one.push_back(trial.tensor("t1").value(s));
    REQUIRE(store.requests() == 20);
    for (int t = 2; t < 6; ++t) check_tensor_values(trial.tensor(tensor_name(t)).values(), t, 20);
    CHECK(store.requests() == 20);
    CHECK(trial.records().file_cache()->blocks() == 0);
    // The values kept hold copies of their records: no event file read whole is alive any more.
    CHECK(store.live_buffers() == 0);
    check_tensor_values(kept, 0, 20);
    for (int s = 0; s < 20; ++s) CHECK(kept_one_by_one[static_cast<std::size_t>(s)].elements<float>()[7] == static_cast<float>(s * 100 + 1));
}

TEST_CASE("event-file cache: bounded by bytes, it stops widening when full and never re-fetches", "[batch][file_cache]") {
    test::TempDir dir("file-cache-bound");
    write_trial(LocalStore(dir.path), 20, 6);
    TrialOptions o = ended_trial_options();
    std::uint64_t file_bytes = 0;  // one event file's run of records
    {
        CountingRemoteStore probe(dir.path);
        Trial<CountingRemoteStore> t(probe, o);
        (void)t.tensor("t0").value(0);
        file_bytes = t.records().file_cache()->bytes();
        REQUIRE(file_bytes > 6 * 8 * 4);
        CHECK(probe.bytes() == file_bytes);
    }
    o.event_file_cache_bytes = 5 * file_bytes + file_bytes / 2;  // room for five files
    CountingRemoteStore store(dir.path);
    Trial<CountingRemoteStore> trial(store, o);
    check_tensor_values(trial.tensor("t0").values(), 0, 20);
    CHECK(store.requests() == 20);
    CHECK(trial.records().file_cache()->blocks() == 5);
    CHECK(trial.records().file_cache()->bytes() <= o.event_file_cache_bytes);
    for (int t = 1; t < 6; ++t) check_tensor_values(trial.tensor(tensor_name(t)).values(), t, 20);
    CHECK(store.requests() == 20 + 5 * 15);  // five files served from the cache, the rest one record each
    // t5's read emptied the first five blocks, so it widened its next five files (steps 5-9).
    CHECK(trial.records().file_cache()->blocks() == 5);
    CHECK(trial.records().file_cache()->bytes() <= o.event_file_cache_bytes);
    // t0 again: steps 5-9 come from those blocks, steps 0-4 and 10-19 one request each.
    check_tensor_values(trial.tensor("t0").values(), 0, 20);
    CHECK(store.requests() == 20 + 5 * 15 + 15);
}

TEST_CASE("event-file cache: a bad record in a file fetched whole fails as value() fails; its neighbours do not", "[batch][file_cache]") {
    test::TempDir dir("file-cache-bad");
    write_trial(LocalStore(dir.path), 6, 4);
    corrupt_record_header(dir.path, 1, "t2");
    // Step 4's file loses its tail: the whole-file read is short, every record there is read alone.
    fs::resize_file(dir.path / paths::event_key(4, "worker_0"), fs::file_size(dir.path / paths::event_key(4, "worker_0")) - 10);
    const TrialOptions o = ended_trial_options();
    CountingRemoteStore store(dir.path);
    Trial<CountingRemoteStore> trial(store, o);
    Trial<LocalStore> local(LocalStore(dir.path), o);
    for (const std::string name : {"t0", "t1", "t3"})
        for (int s : {0, 1, 2, 3, 5}) CHECK(trial.tensor(name).value(s).elements<float>()[0] == local.tensor(name).value(s).elements<float>()[0]);
    try {
        (void)trial.tensor("t2").value(1);
        FAIL("expected a FormatError for t2 at step 1");
    } catch (const FormatError& e) {
        CHECK_THAT(e.what(), Catch::Contains(paths::event_key(1, "worker_0")));
    }
    CHECK_THROWS_AS(local.tensor("t2").value(1), FormatError);
    // values(): the first failing step raises, as on the local trial.
    CHECK_THROWS_AS(trial.tensor("t2").values(), FormatError);
    // At step 4 the last record (t3) is cut short; the others read as on the local trial.
    for (const std::string name : {"t0", "t1", "t2"}) CHECK(trial.tensor(name).value(4).elements<float>()[0] == 400.0f + static_cast<float>(name[1] - '0'));
    CHECK_THROWS_AS(trial.tensor("t3").value(4), FormatError);
    CHECK_THROWS_AS(local.tensor("t3").value(4), FormatError);
}

TEST_CASE("BackgroundTask: runs once, on a helper or on the waiting thread; its error reaches wait()", "[batch]") {
    detail::HelperPool pool;
    std::atomic<int> runs{0};
    {
        std::vector<std::unique_ptr<detail::BackgroundTask>> tasks;
        for (int i = 0; i < 100; ++i) tasks.push_back(std::make_unique<detail::BackgroundTask>(pool, [&] { ++runs; }));
        for (std::size_t i = 0; i < tasks.size(); i += 2) tasks[i]->wait();  // the others: by the destructor
    }
    CHECK(runs.load() == 100);
    detail::BackgroundTask failing(pool, [] { throw StorageError("read failed"); });
    CHECK_THROWS_AS(failing.wait(), StorageError);
    CHECK_NOTHROW(failing.wait());  // once
}

TEST_CASE("LocalStore::read_ranges: every request reaches the sink once, with its bytes", "[batch][storage]") {
    test::TempDir dir("sink");
    LocalStore store(dir.path, LocalStore::Durability::none, LocalReadOptions{.parallel_min_bytes = 0});
    std::vector<RangeRequest> reqs;
    for (int f = 0; f < 12; ++f) {
        std::string text(70000, static_cast<char>('a' + f));
        for (std::size_t i = 0; i < text.size(); i += 1000) text[i] = static_cast<char>('0' + (i / 1000) % 10);
        const auto key = "events/f" + std::to_string(f);
        store.write(key, std::as_bytes(std::span<const char>(text.data(), text.size())));
        for (std::uint64_t off : {0ull, 5000ull, 6000ull, 69000ull}) reqs.push_back({key, off, 1000});
    }
    reqs.push_back({"events/f3", 100, 0});  // empty: an empty buffer
    std::vector<std::atomic<int>> calls(reqs.size());
    std::vector<std::string> got(reqs.size());
    store.read_ranges(reqs, [&](std::size_t i, ByteBuffer&& b) {
        ++calls[i];
        got[i] = std::string(b.text());
    });
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        REQUIRE(calls[i].load() == 1);
        CHECK(got[i] == std::string(store.read_range(reqs[i].key, reqs[i].offset, reqs[i].length).text()));
    }
    CHECK(got.back().empty());
}

TEST_CASE("opening: index files are read in batches, the next on a helper while one is ingested; a bad file raises as read alone", "[batch]") {
    test::TempDir dir("index-batches");
    write_trial(LocalStore(dir.path), 700, 3);  // 6 batches of 128 files
    {
        Trial<LocalStore> trial(LocalStore(dir.path), ended_trial_options());
        const auto steps = trial.steps();
        REQUIRE(steps.size() == 700);
        for (std::int64_t s = 0; s < 700; ++s) REQUIRE(steps[static_cast<std::size_t>(s)] == s);
        CHECK(trial.refresh_stats().index_files_read == 700);
        for (std::int64_t s : {0, 127, 128, 129, 383, 512, 699})
            CHECK(trial.tensor("t2").value(s).elements<float>()[7] == static_cast<float>(s * 100 + 2));
    }
    // A file of a later batch that does not parse: the error names it, as a plain read would.
    {
        std::ofstream(dir.path / paths::index_key(450, "worker_0"), std::ios::trunc) << "{\"meta\": ";
    }
    try {
        Trial<LocalStore> trial(LocalStore(dir.path), ended_trial_options());
        (void)trial.steps();
        FAIL("an index file that does not parse was accepted");
    } catch (const SMDebugError& e) {
        CHECK_THAT(e.what(), Catch::Matchers::Contains("000000000450_worker_0.json"));
    }
}

TEST_CASE("LocalStore::read of a large object, and an index of more records than one chunk holds", "[batch]") {
    test::TempDir dir("large-read");
    std::string content((std::size_t{1} << 20) + 12'345, '\0');
    for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>('a' + i % 23);
    LocalStore store(dir.path, LocalStore::Durability::none);
    store.write("manifest/all/big.smdm", std::as_bytes(std::span<const char>(content.data(), content.size())));
    auto read = store.read("manifest/all/big.smdm");
    CHECK(read.text() == content);
    const auto tail = read.slice(content.size() - 1'000, 5'000);  // clamped to the size; shares the block
    CHECK(tail.size() == 1'000);
    read = ByteBuffer();
    CHECK(tail.text() == std::string_view(content).substr(content.size() - 1'000));  // the slice keeps it alive

    // The index keeps its records in 64 KiB chunks: more records than the first chunk holds stay
    // at their addresses (StepEntry points at them) and read back as written.
    test::TempDir index_dir("chunked-index");
    write_trial(LocalStore(index_dir.path), 40, 30);  // 1,200 records: past the first 64 KiB chunk
    Trial<LocalStore> trial(LocalStore(index_dir.path), ended_trial_options());
    for (int t = 0; t < 30; t += 7) check_tensor_values(trial.tensor(tensor_name(t)).values(), t, 40);
}

}  // namespace smdebug_test_speed
