// Query layer: Trial/Tensor answers on trials written with the format layer, the deviations that
// the conformance cases do not exercise, and typed errors that name the file at fault.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>
#include <tuple>

#include <sys/wait.h>

#include <smdebug/core/tensor_view.hpp>
#include <smdebug/writer/step_writer.hpp>
#include <smdebug/smdebug.hpp>

#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_query {

using namespace smdebug;

namespace {

using test::fast;

collections_file::CollectionsFile collections(int num_workers = 1) {
    collections_file::CollectionsFile cf;
    cf.num_workers = num_workers;
    Collection w;
    w.name = "weights";
    w.include_regex = {"weight"};
    Collection l;
    l.name = "losses";
    l.add_tensor_name("loss");
    cf.collections = {w, l};
    return cf;
}

// Steps 0..4 in TRAIN (global 0..4), EVAL 0..1 at global 5..6, one worker, ended.
void write_small_trial(const LocalStore& store, bool end = true) {
    write_collections_file(store, "worker_0", collections());
    for (int g = 0; g < 7; ++g) {
        const Mode m = g < 5 ? Mode::TRAIN : Mode::EVAL;
        StepWriter w(g, "worker_0", m, g < 5 ? g : g - 5);
        const std::vector<float> weights = {float(g), -1.0f, 2.0f, 0.5f};
        w.add_tensor("fc.weight", TensorValue::from<float>(weights, {2, 2}));
        w.add_tensor("loss", TensorValue::scalar(1.0 / (g + 1)));
        const std::vector<double> mx = {9.0};
        w.add_tensor("smdebug/reductions/max/act", TensorValue::from<double>(mx, {1}));
        w.add_shape("act", {8, 16});
        w.flush(store);
    }
    if (end) write_end_marker(store);
}

}  // namespace

TEST_CASE("Trial answers on a small TRAIN/EVAL trial", "[query]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    write_small_trial(store);
    Trial<LocalStore> trial(store, fast());

    CHECK(trial.steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
    CHECK(trial.steps(Mode::EVAL) == std::vector<std::int64_t>{0, 1});
    CHECK(trial.modes() == std::vector<Mode>{Mode::TRAIN, Mode::EVAL});
    CHECK(trial.mode(5) == Mode::EVAL);
    CHECK(trial.mode_step(6) == 1);
    CHECK_FALSE(trial.mode(99));
    CHECK(trial.global_step(Mode::TRAIN, 3) == 3);
    CHECK(trial.global_step(Mode::GLOBAL, 77) == 77);
    CHECK(trial.tensor_names() == std::vector<std::string>{"act", "fc.weight", "loss"});
    CHECK(trial.tensor_names({.collection = "weights"}) == std::vector<std::string>{"fc.weight"});
    CHECK(trial.tensor_names({.step = 5, .regex = {"^l"}}) == std::vector<std::string>{"loss"});
    CHECK(trial.tensor_names({.mode = Mode::PREDICT}).empty());                      // D5
    CHECK(trial.tensor_names({.collection = "no_such_collection"}).empty());         // D8
    CHECK(trial.collections().size() == 2);                                         // ...and nothing was created
    CHECK(trial.collection_names_in_file_order() == std::vector<std::string>{"weights", "losses"});  // as the file lists them
    CHECK_THROWS_AS(trial.collection("no_such_collection"), CollectionNotFound);
    CHECK_THROWS_AS(trial.tensor_names({.regex = {"a"}, .collection = "weights"}), SMDebugValueError);  // D7
    CHECK(trial.workers() == std::vector<std::string>{"worker_0"});
    CHECK(trial.has_passed_step(6) == StepState::AVAILABLE);
    CHECK(trial.has_passed_step(7) == StepState::UNAVAILABLE);

    auto w = trial.tensor("fc.weight");
    const auto v = w.value(6);
    CHECK(v.shape() == Shape{2, 2});
    CHECK(v.view<float>()(0, 0) == 6.0f);
    CHECK(w.value(1, Mode::EVAL).elements<float>()[0] == 6.0f);   // EVAL step 1 is global step 6
    CHECK(w.reduction_value(2, "max") == 2.0);                      // computed
    CHECK(w.reduction_value(2, "min", {}, true) == 0.5);            // computed on |x|
    CHECK(w.reduction_value(3, "l1") == Approx(3 + 1 + 2 + 0.5));   // D1: flattened vector norm
    CHECK_THROWS_AS(w.reduction_value(2, "median"), SMDebugValueError);
    CHECK(w.prev_steps(3, 2) == std::vector<std::int64_t>{2, 3});
    CHECK(w.prev_steps(3, 0).empty());                              // D15
    CHECK_THROWS_AS(w.value(0, {Mode::GLOBAL, "worker_9"}), InvalidWorker);
    CHECK_THROWS_AS(w.value(42), StepUnavailable);

    auto act = trial.tensor("act");
    CHECK(act.shape(0) == Shape{8, 16});
    CHECK(act.reduction_value(0, "max") == 9.0);                    // stored
    CHECK(act.reduction_values(0).size() == 1);
    try {
        act.value(0);
        FAIL("value of a reductions-only step must throw");
    } catch (const TensorUnavailableForStep& e) {
        CHECK(e.has_reductions);
        CHECK(e.tensor == "act");
    }
    try {
        act.reduction_value(0, "min");
        FAIL("a reduction that was not stored, of a tensor without a value, must throw");
    } catch (const TensorUnavailableForStep& e) {
        CHECK(e.tensor == "act");       // D14: the tensor, not the reduction
        CHECK(e.reduction == "min");
    }
    CHECK_THROWS_AS(trial.tensor("nope"), TensorUnavailable);
    const auto shapes = act.shapes();
    CHECK(shapes.size() == 7);
}

TEST_CASE("A running job: future steps are not yet available, and no value waits", "[query]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    write_small_trial(store, false);
    Trial<LocalStore> trial(store, fast());
    CHECK(trial.has_passed_step(7) == StepState::NOT_YET_AVAILABLE);
    CHECK_THROWS_AS(trial.tensor("loss").value(9), StepNotYetAvailable);
    CHECK_THROWS_AS(trial.wait_for_steps({7}, Mode::GLOBAL, std::chrono::milliseconds(30)), TimeoutError);
    write_end_marker(store);
    CHECK_THROWS_AS(trial.wait_for_steps({9}), NoMoreData);
    CHECK_THROWS_AS(trial.tensor("loss").value(9), StepUnavailable);
}

TEST_CASE("create_trial picks the store, the name and fails clearly on a missing path", "[query]") {
    test::TempDir dir;
    write_small_trial(LocalStore(dir.path / "job1"));
    auto trial = create_trial("  " + (dir.path / "job1").string() + "  ", fast());
    CHECK(trial.name() == "job1");
    CHECK(trial.steps().size() == 7);
    CHECK(default_trial_name("s3://bucket/prefix/run") == "run");
    CHECK(default_trial_name("/a/b/") == "");
    CHECK_THROWS_AS(create_trial((dir.path / "typo").string(), fast()), ObjectNotFound);
    CHECK_THROWS_WITH(create_trial((dir.path / "typo").string(), fast()), Catch::Contains("typo"));
    std::filesystem::create_directories(dir.path / "ended_no_collections");
    std::ofstream(dir.path / "ended_no_collections" / "training_job_end.ts");
    CHECK_THROWS_AS(create_trial((dir.path / "ended_no_collections").string(), fast()), MissingCollectionFiles);
    auto waiting = fast();
    waiting.wait_for_trial = true;
    waiting.wait_timeout = std::chrono::milliseconds(50);
    CHECK_THROWS_AS(create_trial((dir.path / "not_started").string(), waiting), TimeoutError);
}

// Issue 46 §1: a path that holds no trial fails at once, naming the path and the knob that waits.
TEST_CASE("create_trial fails at once on a folder that holds no trial, unless asked to wait", "[query][create]") {
    using namespace std::chrono_literals;
    test::TempDir dir;
    write_small_trial(LocalStore(dir.path / "parent" / "run_b"));
    write_small_trial(LocalStore(dir.path / "parent" / "run_a"));
    std::filesystem::create_directories(dir.path / "empty");
    std::filesystem::create_directories(dir.path / "docs");
    std::ofstream(dir.path / "docs" / "README.md") << "# not a trial\n";
    std::filesystem::create_directories(dir.path / "empty_index" / "index");  // a folder, no index file
    for (const char* name : {"empty", "docs", "parent", "empty_index", "missing"}) {
        INFO(name);
        const auto path = (dir.path / name).string();
        const auto start = std::chrono::steady_clock::now();
        try {
            create_trial(path, fast());
            FAIL("a path that holds no trial must throw");
        } catch (const ObjectNotFound& e) {
            CHECK_THAT(e.what(), Catch::Contains(path) && Catch::Contains("TrialOptions::wait_for_trial"));
        }
        CHECK(std::chrono::steady_clock::now() - start < 2s);
    }
    try {
        create_trial((dir.path / "parent").string(), fast());
    } catch (const ObjectNotFound& e) {
        CHECK_THAT(e.what(), Catch::Contains("not a trial") && Catch::Contains("(it holds trials: run_a, run_b)"));
    }
    auto hinted = fast();
    hinted.wait_hint = "--wait [SECONDS]";
    CHECK_THROWS_WITH(create_trial((dir.path / "empty").string(), hinted), Catch::Contains("--wait [SECONDS] waits for a job"));

    // Asked to wait: it says once what for, then times out (or opens when the job writes).
    std::vector<std::string> said;
    auto waiting = fast();
    waiting.wait_for_trial = true;
    waiting.wait_timeout = 200ms;
    waiting.on_wait = [&](const std::string& line) { said.push_back(line); };
    CHECK_THROWS_AS(create_trial((dir.path / "empty").string(), waiting), TimeoutError);
    REQUIRE(said.size() == 1);
    CHECK(said[0] == "waiting for the trial at " + (dir.path / "empty").string() +
                         "/ to be written (no collections file yet) for up to 200 ms");
    said.clear();
    waiting.wait_timeout.reset();
    std::jthread job([&] {
        std::this_thread::sleep_for(100ms);
        write_small_trial(LocalStore(dir.path / "empty"));
    });
    auto trial = create_trial((dir.path / "empty").string(), waiting);
    job.join();
    CHECK(trial.steps().size() == 7);
    CHECK(said == std::vector<std::string>{"waiting for the trial at " + (dir.path / "empty").string() +
                                           "/ to be written (no collections file yet) (no time limit)"});
}

TEST_CASE("Corrupt files raise typed errors that name the file", "[query]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    write_small_trial(store);
    SECTION("index file") {
        store.write("index/000000000/000000000003_worker_0.json", std::as_bytes(std::span<const char>("{\"meta\": ", 9)));
        try {
            Trial<LocalStore> trial(store, fast());
            FAIL("a corrupt index file must throw");
        } catch (const IndexReaderException& e) {
            CHECK_THAT(e.what(), Catch::Contains("000000000003_worker_0.json") && Catch::Contains("Empty/Corrupt Index File"));
        }
    }
    SECTION("event record after training end") {
        const auto key = paths::event_key(2, "worker_0");
        auto bytes = store.read(key);
        std::string data(bytes.text());
        data[9] ^= 0x01;  // the first record's length CRC
        store.write(key, std::as_bytes(std::span<const char>(data.data(), data.size())));
        Trial<LocalStore> trial(store, fast());
        try {
            trial.tensor("fc.weight").value(2);
            FAIL("a corrupt record must throw");
        } catch (const RecordCorrupted& e) {
            CHECK_THAT(e.what(), Catch::Contains("000000000002_worker_0.tfevents") && Catch::Contains("offset 0"));
        }
        CHECK(trial.tensor("fc.weight").value(3).size() == 4);  // other steps are unaffected
    }
    SECTION("event file shorter than its index says") {
        const auto key = paths::event_key(4, "worker_0");
        auto bytes = store.read(key);
        store.write(key, bytes.bytes().first(bytes.size() / 2));
        Trial<LocalStore> trial(store, fast());
        CHECK_THROWS_AS(trial.tensor("loss").value(4), TruncatedData);
    }
    SECTION("collections file") {
        store.write(paths::collections_key("worker_0"), std::as_bytes(std::span<const char>("[]", 2)));
        CHECK_THROWS_WITH(Trial<LocalStore>(store, fast()), Catch::Contains("worker_0_collections.json"));
    }
}

TEST_CASE("range_steps loads only [begin, end)", "[query]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    write_small_trial(store);
    auto o = fast();
    o.range_begin = 2;
    o.range_end = 5;
    Trial<LocalStore> trial(store, o);
    CHECK(trial.steps() == std::vector<std::int64_t>{2, 3, 4});
    auto bad = fast();
    bad.range_begin = 5;
    bad.range_end = 5;
    CHECK_THROWS_AS(Trial<LocalStore>(store, bad), SMDebugValueError);
}

TEST_CASE("the cache option keeps values; reductions of strings and empty tensors are typed errors", "[query]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    write_collections_file(store, "worker_0", collections());
    StepWriter w(0, "worker_0", Mode::GLOBAL, 0);
    w.add_tensor("s", TensorValue({2}, {"a", "b"}));
    w.add_tensor("e", TensorValue::from<float>(std::span<const float>(), {0}));
    w.flush(store);
    write_end_marker(store);
    auto o = fast();
    o.cache = true;
    Trial<LocalStore> trial(store, o);
    CHECK_THROWS_AS(trial.tensor("s").reduction_value(0, "mean"), SMDebugTypeError);
    CHECK_THROWS_AS(trial.tensor("e").reduction_value(0, "mean"), SMDebugValueError);
    CHECK(trial.tensor("e").value(0).shape() == Shape{0});
    CHECK(trial.tensor("s").value(0).strings() == std::vector<std::string>{"a", "b"});
}

TEST_CASE("TrialOptions::cache on and off give the same values, read twice", "[query]") {
    test::TempDir dir;
    LocalStore store(dir.path, LocalStore::Durability::none);
    write_collections_file(store, "worker_0", collections());
    for (std::int64_t step = 0; step < 3; ++step) {
        StepWriter w(step, "worker_0", Mode::GLOBAL, step);
        const std::vector<float> a{float(step), 1.5f, -2.0f}, b{float(step) * 10};
        w.add_tensor("a", TensorValue::from<float>(std::span<const float>(a), {3}));
        w.add_tensor("b", TensorValue::from<float>(std::span<const float>(b), {1}));
        w.flush(store);
    }
    write_end_marker(store);
    auto on = fast(), off = fast();
    on.cache = true;
    CHECK_FALSE(TrialOptions{}.cache);
    Trial<LocalStore> cached(store, on), uncached(store, off);
    for (int pass = 0; pass < 2; ++pass)
        for (std::int64_t step = 0; step < 3; ++step) {
            const std::vector<float> want_a{float(step), 1.5f, -2.0f};
            for (auto* t : {&cached, &uncached}) {
                const auto va = t->tensor("a").value(step), vb = t->tensor("b").value(step);
                const auto ea = va.elements<float>();
                CHECK(std::vector<float>(ea.begin(), ea.end()) == want_a);
                CHECK(vb.elements<float>()[0] == float(step) * 10);
            }
        }
}

TEST_CASE("the step-data arena and one allocation per record (its switch, step_data_chunk_bytes) keep the same records", "[query]") {
    detail::StepDataArena arena;
    detail::BasicStepDataArena<sizeof(detail::StepData)> per_record;
    STATIC_REQUIRE(decltype(per_record)::chunk_bytes == sizeof(detail::StepData));
    STATIC_REQUIRE(detail::StepDataArena::chunk_bytes == detail::step_data_chunk_bytes);
    const Shape shape{2, 3};
    std::vector<detail::StepData*> a, b;
    for (int i = 0; i < 3000; ++i) {  // several 64 KiB chunks
        a.push_back(arena.make());
        b.push_back(per_record.make());
        for (auto* d : {a.back(), b.back()}) {
            CHECK(d->shape == nullptr);
            CHECK(d->reductions.empty());
            if (i % 7 == 0) d->shape = &shape;
        }
    }
    for (int i = 0; i < 3000; ++i) {  // still there, where they were made
        CHECK(a[static_cast<std::size_t>(i)]->shape == (i % 7 == 0 ? &shape : nullptr));
        CHECK(b[static_cast<std::size_t>(i)]->shape == (i % 7 == 0 ? &shape : nullptr));
    }
    std::sort(a.begin(), a.end());
    CHECK(std::adjacent_find(a.begin(), a.end()) == a.end());
}

static_assert(std::is_same_v<decltype(create_trial("")), Trial<AnyStore>>);

using test::run_cli;

TEST_CASE("smdebug summary/verify exit codes: 0 clean, 1 bad data, 2 usage or unreadable path", "[query][cli]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    write_small_trial(store);
    const auto path = dir.path.string();
    CHECK(run_cli("summary " + path).status == 0);
    CHECK(run_cli("verify " + path + " --reduce l2 --abs").status == 0);
    CHECK(run_cli("verify " + path + " --reduce median").status == 2);
    CHECK(run_cli("verify").status == 2);
    CHECK(run_cli("frobnicate " + path).status == 2);
    CHECK(run_cli("verify " + (dir.path / "missing").string()).status == 2);
    // damage one record's length CRC: verify finds it, the rest still reads
    const auto key = paths::event_key(3, "worker_0");
    std::string data(store.read(key).text());
    data[9] ^= 0x01;
    store.write(key, std::as_bytes(std::span<const char>(data.data(), data.size())));
    CHECK(run_cli("verify " + path).status == 1);
}

TEST_CASE("Tensor::values and read_records fetch many records at once with single-read semantics", "[query]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    write_small_trial(store);
    Trial<LocalStore> trial(store, fast());
    auto w = trial.tensor("fc.weight");
    const auto all = w.values();
    REQUIRE(all.size() == 7);
    for (const auto& [step, v] : all) CHECK(v.elements<float>()[0] == float(step));
    std::size_t raw = 0, reductions = 0;
    const auto n = trial.tensor("act").read_records([&](const auto& rec, const TensorValue* v, std::exception_ptr err) {
        CHECK_FALSE(err);
        if (rec.reduction.empty()) ++raw;
        else {
            ++reductions;
            CHECK(rec.reduction == "max");
            CHECK(v->elements<double>()[0] == 9.0);
        }
    });
    CHECK(n == 7);
    CHECK(raw == 0);
    CHECK(reductions == 7);
    // a corrupt record fails alone, with the error value() gives
    const auto key = paths::event_key(2, "worker_0");
    std::string data(store.read(key).text());
    data[9] ^= 0x01;
    store.write(key, std::as_bytes(std::span<const char>(data.data(), data.size())));
    Trial<LocalStore> again(store, fast());
    std::size_t errors = 0;
    again.tensor("fc.weight").read_records([&](const auto&, const TensorValue* v, std::exception_ptr err) {
        if (err) {
            ++errors;
            CHECK_THROWS_AS(std::rethrow_exception(err), RecordCorrupted);
        } else {
            CHECK(v != nullptr);
        }
    });
    CHECK(errors == 1);
    CHECK_THROWS_AS(again.tensor("fc.weight").values(), RecordCorrupted);
}

namespace {
// A LocalStore that counts its batched reads and the ranges in them.
struct BatchCountingStore {
    LocalStore local;
    std::shared_ptr<std::atomic<int>> batches = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> single_reads = std::make_shared<std::atomic<int>>(0);
    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const { return local.list(prefix, start_after); }
    ByteBuffer read(std::string_view key) const { return local.read(key); }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        ++*single_reads;
        return local.read_range(key, offset, length);
    }
    void read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const {
        ++*batches;
        local.read_ranges(requests, sink);
    }
    bool exists(std::string_view key) const { return local.exists(key); }
    std::string describe(std::string_view key) const { return local.describe(key); }
};
// The small trial read through a BatchCountingStore (`trial`), and read plainly (`plain`: the
// answers, one value at a time).
struct CountedSmallTrial {
    static LocalStore written(const std::filesystem::path& dir) {
        LocalStore local(dir);
        write_small_trial(local);
        return local;
    }
    test::TempDir dir;
    LocalStore local = written(dir.path);
    BatchCountingStore store{local};
    Trial<BatchCountingStore> trial{store, fast()};
    Trial<LocalStore> plain{local, fast()};
    std::tuple<BatchCountingStore&, Trial<BatchCountingStore>&, Trial<LocalStore>&> parts() { return {store, trial, plain}; }
};
bool same_value(const TensorValue& a, const TensorValue& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() && std::ranges::equal(a.bytes(), b.bytes());
}
// Whether two values share one allocation (one owner).
bool same_owner(const std::shared_ptr<const TensorValue>& a, const std::shared_ptr<const TensorValue>& b) {
    return !a.owner_before(b) && !b.owner_before(a);
}
}  // namespace

namespace {
// The small trial with the first record of step 2's event file damaged (its length CRC), read
// through a CountingStore: what the store was asked is counted.
struct DamagedSmallTrial {
    static LocalStore written(const std::filesystem::path& dir, bool end) {
        LocalStore local(dir);
        write_small_trial(local, end);
        std::string data(local.read(damaged_key()).text());
        data[9] ^= 0x01;
        local.write(damaged_key(), std::as_bytes(std::span<const char>(data.data(), data.size())));
        return local;
    }
    static std::string damaged_key() { return paths::event_key(2, "worker_0"); }
    explicit DamagedSmallTrial(bool end) : local(written(dir.path, end)) {}
    test::TempDir dir;
    LocalStore local;
    CountingStore<LocalStore> counted{local};
    Trial<CountingStore<LocalStore>> trial{counted, fast()};
};
std::vector<ValueRequest> every_value_of_the_small_trial() {
    std::vector<ValueRequest> requests;
    for (std::int64_t s = 0; s < 7; ++s) {
        requests.push_back({"fc.weight", s});
        requests.push_back({"loss", s});
    }
    return requests;
}
}  // namespace

TEST_CASE("Trial::read: a corrupt record of a batch carries its error, naming its file, and is read once; the others come back", "[query][scale]") {
    DamagedSmallTrial small(/*end=*/true);
    auto& trial = small.trial;
    Trial<LocalStore> plain(small.local, fast());
    CHECK(trial.steps().size() == 7);  // sees that training ended: a record that does not decode is corrupt
    const auto requests = every_value_of_the_small_trial();
    const auto before = small.counted.counts();
    const auto results = trial.read(requests);
    const auto cost = small.counted.counts() - before;
    CHECK(cost.get == 7);   // one range per step's event file, the damaged one too: nothing read again
    CHECK(cost.head == 0);  // the end marker is not asked again
    std::size_t failed = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        INFO(requests[i].tensor << " " << requests[i].step);
        if (!results[i].error) {
            CHECK(same_value(results[i].get(), plain.tensor(requests[i].tensor).value(requests[i].step)));
            continue;
        }
        ++failed;
        CHECK(requests[i].step == 2);
        try {
            std::rethrow_exception(results[i].error);
        } catch (const RecordCorrupted& e) {
            CHECK_THAT(e.what(), Catch::Matchers::Contains(small.local.describe(DamagedSmallTrial::damaged_key()) + " at offset 0"));
        }
        CHECK_THROWS_AS(plain.tensor(requests[i].tensor).value(2), RecordCorrupted);  // what value() raises for it
    }
    CHECK(failed == 1);

    // read_all_records is the same read: every record once, the damaged one's error naming its file.
    const auto all_before = small.counted.counts();
    std::size_t records = 0, bad = 0;
    read_all_records(trial, [&](std::span<const RecordRead> batch) {
        for (const auto& r : batch) {
            ++records;
            if (!r.error) continue;
            ++bad;
            CHECK(r.mode_step == 2);
            CHECK_THROWS_WITH(std::rethrow_exception(r.error), Catch::Matchers::Contains(small.local.describe(DamagedSmallTrial::damaged_key())));
        }
    });
    const auto all_cost = small.counted.counts() - all_before;
    CHECK(records == 7 * 3);  // fc.weight, loss and act's stored max at each step
    CHECK(bad == 1);
    CHECK(all_cost.get == 7);
    CHECK(all_cost.head == 0);
}

TEST_CASE("Trial::read: while training runs, a record that does not decode is StepNotYetAvailable, read once", "[query][scale][realtime]") {
    DamagedSmallTrial small(/*end=*/false);
    auto& trial = small.trial;
    const auto requests = every_value_of_the_small_trial();
    const auto before = small.counted.counts();
    const auto results = trial.read(requests);
    const auto cost = small.counted.counts() - before;
    CHECK(cost.get == 7);
    CHECK(cost.head == 1);  // the end marker, asked once for the batch
    std::size_t not_yet = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (!results[i].error) continue;
        CHECK(requests[i].step == 2);
        CHECK_THROWS_AS(std::rethrow_exception(results[i].error), StepNotYetAvailable);
        ++not_yet;
    }
    CHECK(not_yet == 1);
    // Once training has ended the record is corrupt: the first read after the end reads it once
    // more (it may have been completed just before the marker), alone, and names the file.
    write_end_marker(small.local);
    const auto after_end = small.counted.counts();
    const auto again = trial.read(requests);
    const auto cost_after_end = small.counted.counts() - after_end;
    CHECK(cost_after_end.get == 7 + 1);
    std::size_t corrupt = 0;
    for (const auto& r : again)
        if (r.error) {
            CHECK_THROWS_AS(std::rethrow_exception(r.error), RecordCorrupted);
            ++corrupt;
        }
    CHECK(corrupt == 1);
}

TEST_CASE("Trial::read and Trial::values read many tensors at many steps in one batch, errors per request", "[query][scale]") {
    CountedSmallTrial small;
    auto [store, trial, plain] = small.parts();
    const std::vector<std::pair<std::string, std::vector<std::int64_t>>> wanted = {{"fc.weight", {0, 3, 6}}, {"loss", {1, 2, 5}}};
    *store.batches = 0;
    *store.single_reads = 0;
    const auto values = trial.values(wanted);
    CHECK(*store.batches == 1);  // one planned read for the six values
    CHECK(*store.single_reads == 0);
    REQUIRE(values.size() == 2);
    for (const auto& [name, steps] : wanted)
        for (auto s : steps) {
            INFO(name << " " << s);
            CHECK(same_value(values.at(name).at(s), plain.tensor(name).value(s)));
        }
    CHECK(values.at("fc.weight").at(3).elements<float>()[0] == 3.0f);
    // Errors stay with their request; the others are read: an unknown tensor, a step that was not
    // saved, a step not written yet, a worker that did not write, a mode step.
    const std::vector<ValueRequest> requests = {
        {"fc.weight", 4}, {"no.such.tensor", 1}, {"loss", 99}, {"fc.weight", 2, {Mode::GLOBAL, "worker_9"}},
        {"fc.weight", 1, {Mode::EVAL, std::nullopt}}, {"act", 2}};
    const auto results = trial.read(requests);
    REQUIRE(results.size() == requests.size());
    CHECK(same_value(results[0].get(), plain.tensor("fc.weight").value(4)));
    CHECK_THROWS_AS(results[1].get(), TensorUnavailable);
    CHECK_THROWS_AS(results[2].get(), StepUnavailable);
    CHECK_THROWS_AS(results[3].get(), InvalidWorker);
    CHECK(same_value(results[4].get(), plain.tensor("fc.weight").value(1, Mode::EVAL)));
    CHECK_THROWS_AS(results[5].get(), TensorUnavailableForStep);  // only reductions were saved
    CHECK_THROWS_AS(plain.tensor("act").value(2), TensorUnavailableForStep);
    CHECK_THROWS_AS(trial.values(std::vector<std::pair<std::string, std::vector<std::int64_t>>>{{"loss", {0, 99}}}), StepUnavailable);
    CHECK(trial.read(std::vector<ValueRequest>{}).empty());
}

TEST_CASE("Trial::read with the tensors already found answers as the read by name; bad positions and other trials' tensors are UsageError", "[query][scale]") {
    CountedSmallTrial small;
    auto [store, trial, plain] = small.parts();
    const std::vector<Tensor<BatchCountingStore>> tensors = {trial.tensor("fc.weight"), trial.tensor("loss"), trial.tensor("act")};
    // Names are not used: tensor_of says whose request it is (an empty name, or another one).
    const std::vector<ValueRequest> requests = {
        {"", 3}, {"", 5}, {"loss", 3}, {"ignored", 99}, {"", 1, {Mode::EVAL, std::nullopt}}, {"", 2}, {"", 4, {}, ReductionSpec{"max"}}};
    const std::vector<std::size_t> tensor_of = {0, 1, 0, 1, 0, 2, 0};
    *store.batches = 0;
    *store.single_reads = 0;
    const auto results = trial.read(tensors, requests, tensor_of);
    REQUIRE(results.size() == requests.size());
    CHECK(*store.batches == 1);
    CHECK(*store.single_reads == 0);
    CHECK(same_value(results[0].get(), plain.tensor("fc.weight").value(3)));
    CHECK(same_value(results[1].get(), plain.tensor("loss").value(5)));
    CHECK(same_value(results[2].get(), plain.tensor("fc.weight").value(3)));  // position 0, whatever the name says
    CHECK_THROWS_AS(results[3].get(), StepUnavailable);
    CHECK(same_value(results[4].get(), plain.tensor("fc.weight").value(1, Mode::EVAL)));
    CHECK_THROWS_AS(results[5].get(), TensorUnavailableForStep);  // only reductions were saved
    REQUIRE(results[6].reduced);
    CHECK(*results[6].reduced == plain.tensor("fc.weight").reduction_value(4, "max"));
    CHECK(trial.read(tensors, std::vector<ValueRequest>{}, std::vector<std::size_t>{}).empty());

    const std::vector<ValueRequest> one = {{"", 3}};
    CHECK_THROWS_WITH(trial.read(tensors, one, std::vector<std::size_t>{3}), Catch::Matchers::Contains("past the 3 tensors"));
    CHECK_THROWS_AS(trial.read(tensors, one, std::vector<std::size_t>{0, 1}), UsageError);  // one position per request
    Trial<BatchCountingStore> other(store, fast());
    const std::vector<Tensor<BatchCountingStore>> theirs = {other.tensor("fc.weight")};
    CHECK_THROWS_WITH(trial.read(theirs, one, std::vector<std::size_t>{0}), Catch::Matchers::Contains("fc.weight is not a tensor of trial"));
}

TEST_CASE("Trial::read with a reduction gives reduction_value's answer per request and keeps no value", "[query][scale]") {
    CountedSmallTrial small;
    auto [store, trial, plain] = small.parts();
    const std::vector<ValueRequest> requests = {
        {"fc.weight", 3, {}, ReductionSpec{"mean"}},       // computed from the value
        {"fc.weight", 5, {}, ReductionSpec{"l2", true}},
        {"loss", 2, {}, ReductionSpec{"max"}},
        {"act", 2, {}, ReductionSpec{"max"}},              // stored by the Hook, no value saved
        {"act", 2, {}, ReductionSpec{"min"}},              // neither: reduction_value's error
        {"fc.weight", 3, {}, ReductionSpec{"median"}},     // not a reduction
        {"fc.weight", 4}};                                 // a plain value among them
    *store.batches = 0;
    *store.single_reads = 0;
    const auto results = trial.read(requests);
    REQUIRE(results.size() == requests.size());
    CHECK(*store.batches == 1);
    auto expected = [&](std::size_t i) {
        const auto& r = requests[i];
        return plain.tensor(r.tensor).reduction_value(r.step, r.reduction->name, r.query, r.reduction->abs);
    };
    for (std::size_t i : {0u, 1u, 2u, 3u}) {
        INFO(i);
        REQUIRE(results[i].reduced);
        CHECK(*results[i].reduced == expected(i));
        CHECK(!results[i].value);  // reduced, then released: the trial does not cache values by default
    }
    CHECK(*results[0].reduced == Approx(1.125));  // mean of {3, -1, 2, 0.5}
    CHECK_THROWS_AS(results[4].get(), TensorUnavailableForStep);
    CHECK_THROWS_AS(expected(4), TensorUnavailableForStep);
    CHECK_THROWS_AS(results[5].get(), SMDebugValueError);
    CHECK(!results[6].reduced);
    CHECK(same_value(results[6].get(), plain.tensor("fc.weight").value(4)));
}

// ---- manifests (format/manifest.hpp, query/detail/manifest_loader.hpp, writer/manifest_writer.hpp) ----------

namespace {

// `workers` workers, steps 0..last every `every` (TRAIN below 2000, EVAL from there), a value, a
// reduction and a shape per step and worker; worker w skips the steps where (step / every) % 7 == w
// (so that steps have different workers). Steps from `first` on.
void write_workers_trial(const LocalStore& store, int workers, std::int64_t last, std::int64_t every, bool end,
                         std::int64_t first = 0, bool with_collections = true) {
    for (int w = 0; w < workers && with_collections; ++w) write_collections_file(store, "worker_" + std::to_string(w), collections(workers));
    for (std::int64_t g = first; g <= last; g += every)
        for (int w = 0; w < workers; ++w) {
            if ((g / every) % 7 == w && g != last) continue;
            const Mode m = g < 2000 ? Mode::TRAIN : Mode::EVAL;
            StepWriter sw(g, "worker_" + std::to_string(w), m, g < 2000 ? g / every : (g - 2000) / every);
            const std::vector<float> weights = {float(g), float(w), 2.0f, 0.5f};
            sw.add_tensor("fc.weight", TensorValue::from<float>(weights, {2, 2}));
            if (g % (2 * every) == 0) sw.add_tensor("loss", TensorValue::scalar(1.0 / double(g + 1)));
            const std::vector<double> mx = {double(g) / 3};
            sw.add_tensor("smdebug/reductions/max/act", TensorValue::from<double>(mx, {1}));
            sw.add_shape("act", {8, static_cast<std::uint64_t>(w + 1)});
            sw.flush(store);
        }
    if (end) write_end_marker(store);
}

// Everything the queries answer about a trial, as text (values as sums).
template <class S>
std::string answers(Trial<S>& t) {
    std::ostringstream o;
    for (Mode m : {Mode::GLOBAL, Mode::TRAIN, Mode::EVAL}) {
        o << mode_name(m) << " steps";
        for (auto s : t.steps(m)) o << " " << s;
        o << " / incomplete";
        for (auto s : t.steps(m, true)) o << " " << s;
        o << "\n";
    }
    o << "modes " << t.modes().size() << " last complete " << t.last_complete_step() << " workers";
    for (const auto& w : t.workers()) o << " " << w;
    o << "\n";
    for (const auto& name : t.tensor_names()) {
        auto tensor = t.tensor(name);
        o << name << ":";
        for (auto s : tensor.steps(Mode::GLOBAL, true)) {
            o << " " << s << "[";
            for (const auto& w : tensor.workers(s)) {
                o << w << "=";
                try {
                    o << tensor.value(s, {Mode::GLOBAL, w}).template as<double>().flat(0);
                } catch (const SMDebugError& e) {
                    o << "!" << e.python_name();
                }
                try {
                    o << "," << tensor.reduction_value(s, "max", {Mode::GLOBAL, w});
                } catch (const SMDebugError& e) {
                    o << ",!" << e.python_name();
                }
                try {
                    for (auto d : tensor.shape(s, {Mode::GLOBAL, w})) o << "x" << d;
                } catch (const SMDebugError& e) {
                    o << ",!" << e.python_name();
                }
                o << " ";
            }
            o << "]";
        }
        o << "\n";
    }
    for (auto s : t.steps(Mode::GLOBAL, true)) {
        o << s << ":";
        for (const auto& n : t.tensor_names({.step = s})) o << " " << n;
        o << "\n";
    }
    return o.str();
}

TrialOptions without_manifests(TrialOptions o = fast()) {
    o.use_manifests = false;
    return o;
}

// Options that collect warnings instead of printing them.
TrialOptions collecting(std::shared_ptr<std::vector<std::string>> warnings, TrialOptions o = fast()) {
    o.on_warning = [warnings](const std::string& line) { warnings->push_back(line); };
    return o;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

}  // namespace

TEST_CASE("manifest: a compacted trial opens from its manifests with the same answers, reading no index file", "[query][manifest]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    write_workers_trial(store, 3, 2550, 50, true);  // 52 steps in 3 buckets
    const auto files = list_index_keys(store, "", std::nullopt).size();
    CHECK(files == 133);
    Trial<LocalStore> plain(store, without_manifests());
    const auto expected = answers(plain);
    CHECK(plain.refresh_stats().manifests_read == 0);

    const auto r = compact_trial(store);
    CHECK(r.written == std::vector<std::string>{"manifest/all/000000000000_000000000999.smdm",
                                                "manifest/all/000000001000_000000001999.smdm",
                                                "manifest/all/000000002000_000000002550.smdm"});
    CHECK(r.files_covered == files);
    CHECK(r.files_left == 0);
    CHECK(r.last_step == 2550);
    CHECK(r.removed.empty());

    auto warnings = std::make_shared<std::vector<std::string>>();
    CountingStore<LocalStore> counted(store);
    Trial<CountingStore<LocalStore>> t(counted, collecting(warnings));
    CHECK(t.refresh_stats().manifests_read == 3);
    CHECK(t.refresh_stats().index_files_from_manifests == files);
    CHECK(t.refresh_stats().index_files_read == 0);
    // open: the collections file and the 3 manifests (no index file); listings of collections/,
    // manifest/, the index to check the manifests, and the index after them.
    CHECK(counted.counts().get == 4);
    CHECK(answers(t) == expected);
    CHECK(warnings->empty());

    // A range reads only the manifests it needs, and answers as without them.
    auto ranged = fast();
    ranged.range_begin = 1000;
    ranged.range_end = 1100;
    Trial<LocalStore> plain_range(store, without_manifests(ranged));
    CountingStore<LocalStore> counted_range(store);
    Trial<CountingStore<LocalStore>> in_range(counted_range, ranged);
    CHECK(in_range.refresh_stats().manifests_read == 1);
    CHECK(counted_range.counts().get == 2);
    CHECK(answers(in_range) == answers(plain_range));
    CHECK(in_range.steps() == std::vector<std::int64_t>{1000, 1050});

    // Compacting again writes the same manifests; removing them leaves the index as it was.
    const auto again = compact_trial(store);
    CHECK(again.written == r.written);
    CHECK(again.removed.empty());
    Trial<LocalStore> reopened(store, fast());
    CHECK(answers(reopened) == expected);
}

TEST_CASE("manifest: stale, truncated or corrupt manifests are ignored with a warning, answers unchanged", "[query][manifest]") {
    struct Damage {
        const char* what;
        std::function<void(const std::filesystem::path&)> apply;
        std::uint64_t manifests_used;  // the chain up to the first unusable manifest
        const char* warning;
    };
    const auto middle = std::filesystem::path("manifest/all/000000001000_000000001999.smdm");
    const auto last = std::filesystem::path("manifest/all/000000002000_000000002550.smdm");
    const std::vector<Damage> damages = {
        {"a flipped byte", [&](const auto& root) {
             std::fstream f(root / middle, std::ios::in | std::ios::out | std::ios::binary);
             f.seekp(40);
             f.put('\x7f');
         }, 1, "CRC-32C"},
        {"a truncated manifest", [&](const auto& root) {
             std::filesystem::resize_file(root / last, std::filesystem::file_size(root / last) - 9);
         }, 2, "truncated"},
        {"an empty manifest", [&](const auto& root) { std::filesystem::resize_file(root / middle, 0); }, 1, "truncated"},
        {"another version", [&](const auto& root) {
             std::fstream f(root / middle, std::ios::in | std::ios::out | std::ios::binary);
             f.seekp(8);
             f.put('\x03');  // this reader knows versions 1 and 2
         }, 1, "version 3"},
        {"a covered index file removed", [&](const auto& root) {
             std::filesystem::remove(root / paths::index_key(1500, "worker_1"));
         }, 0, "stale"},
        {"an index file added where the manifests cover", [&](const auto& root) {
             LocalStore s(root);
             StepWriter sw(1525, "worker_0", Mode::TRAIN, 99);
             sw.add_shape("act", {1});
             sw.flush(s);
         }, 0, "stale"},
        {"a manifest renamed to other steps", [&](const auto& root) {
             std::filesystem::rename(root / last, root / "manifest/all/000000002000_000000002600.smdm");
         }, 2, "not those its name says"},
    };
    for (const auto& d : damages) {
        INFO(d.what);
        test::TempDir dir;
        LocalStore store(dir.path);
        write_workers_trial(store, 3, 2550, 50, true);
        compact_trial(store);
        d.apply(dir.path);
        Trial<LocalStore> plain(store, without_manifests());
        auto warnings = std::make_shared<std::vector<std::string>>();
        Trial<LocalStore> t(store, collecting(warnings));
        CHECK(t.refresh_stats().manifests_read == d.manifests_used);
        CHECK(answers(t) == answers(plain));
        CHECK(warnings->size() == 1);
        CHECK_THAT(joined(*warnings), Catch::Contains(d.warning) && Catch::Contains(dir.path.string()));
        if (d.manifests_used == 0) CHECK(t.refresh_stats().index_files_read == list_index_keys(store, "", std::nullopt).size());
    }
}

TEST_CASE("manifest: index files newer than the manifests are read from the index; a live job is followed", "[query][manifest]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    write_workers_trial(store, 3, 1000, 50, false);  // a running job: steps 0..1000
    // worker_2 has written up to 1000 too (step 1000 is `last`: every worker writes it)
    auto r = compact_trial(store);
    CHECK(r.last_step == 1000);
    CHECK(r.written.size() == 2);

    // The job goes on: a reader opened now follows it as one without manifests does.
    auto warnings = std::make_shared<std::vector<std::string>>();
    Trial<LocalStore> live(store, collecting(warnings));
    CHECK(live.refresh_stats().manifests_read == 2);
    write_workers_trial(store, 3, 1500, 50, true, 1050, false);
    Trial<LocalStore> plain(store, without_manifests());
    live.refresh_data();
    CHECK(answers(live) == answers(plain));
    Trial<LocalStore> reopened(store, collecting(warnings));
    CHECK(reopened.refresh_stats().manifests_read == 2);
    CHECK(reopened.refresh_stats().index_files_read == list_index_keys(store, paths::index_step_prefix(1001), std::nullopt).size());
    CHECK(answers(reopened) == answers(plain));
    CHECK(warnings->empty());
}

TEST_CASE("manifest: a compaction while the job runs covers only what every worker has finished", "[query][manifest]") {
    test::TempDir dir;
    LocalStore store(dir.path);
    for (int w = 0; w < 2; ++w) write_collections_file(store, "worker_" + std::to_string(w), collections(2));
    auto step = [&](std::int64_t g, int w) {
        StepWriter sw(g, "worker_" + std::to_string(w), Mode::TRAIN, g);
        sw.add_tensor("loss", TensorValue::scalar(double(g)));
        sw.flush(store);
    };
    for (std::int64_t g = 0; g <= 30; g += 10) step(g, 0);
    CHECK(compact_trial(store).written.empty());  // worker_1 has written nothing yet
    for (std::int64_t g = 0; g <= 10; g += 10) step(g, 1);
    auto r = compact_trial(store);
    CHECK(r.last_step == 10);  // worker_1's newest step
    CHECK(r.files_covered == 4);
    CHECK(r.files_left == 2);
    step(20, 1);  // the lagging worker catches up: still read, from its index file
    Trial<LocalStore> plain(store, without_manifests());
    Trial<LocalStore> t(store, fast());
    CHECK(t.refresh_stats().manifests_read == 1);
    CHECK(answers(t) == answers(plain));
    CHECK(t.steps() == std::vector<std::int64_t>{0, 10, 20});

    // An index file that does not parse ends the compaction before its step.
    step(30, 1);
    write_end_marker(store);
    std::ofstream(dir.path / paths::index_key(20, "worker_1")) << "{not json";
    r = compact_trial(store);
    CHECK(r.last_step == 19);
    CHECK(r.removed == std::vector<std::string>{"manifest/all/000000000000_000000000010.smdm"});
    CHECK_THROWS_AS(Trial<LocalStore>(store, without_manifests()), IndexReaderException);
    CHECK_THROWS_WITH(Trial<LocalStore>(store, fast()), Catch::Contains(paths::index_key(20, "worker_1")));
}

TEST_CASE("manifest: the Hook's write_manifest writes each worker's manifests; readers open from them", "[query][manifest][writer]") {
    test::TempDir dir;
    for (int rank = 0; rank < 2; ++rank) {
        HookOptions o;
        o.enabled = true;
        o.write_end_marker = rank == 1;
        o.save_config = SaveConfig(save_config_mode(100));
        o.include_workers = IncludeWorkers::all;
        o.rank = rank;
        o.world_size = 2;
        o.write_manifest = true;
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.set_mode(Mode::TRAIN);
        for (int i = 0; i <= 2100; ++i) {
            hook.next_step();
            if (i % 100 == 0) hook.save_tensor("loss", double(i + rank));
        }
        hook.close();
    }
    LocalStore store(dir.path);
    const auto keys = store.list(paths::manifest_prefix, "");
    CHECK(keys == std::vector<std::string>{
                      "manifest/worker/worker_0/000000000000_000000000999.smdm", "manifest/worker/worker_0/000000001000_000000001999.smdm",
                      "manifest/worker/worker_0/000000002000_000000002100.smdm", "manifest/worker/worker_1/000000000000_000000000999.smdm",
                      "manifest/worker/worker_1/000000001000_000000001999.smdm", "manifest/worker/worker_1/000000002000_000000002100.smdm"});
    Trial<LocalStore> plain(store, without_manifests());
    auto warnings = std::make_shared<std::vector<std::string>>();
    Trial<LocalStore> t(store, collecting(warnings));
    CHECK(t.refresh_stats().manifests_read == 6);
    CHECK(t.refresh_stats().index_files_read == 0);
    CHECK(t.refresh_stats().index_files_from_manifests == 44);
    CHECK(answers(t) == answers(plain));
    CHECK(t.tensor("loss").value(2100, {Mode::GLOBAL, "worker_1"}).as<double>().flat(0) == 2101.0);
    CHECK(warnings->empty());

    // Without one worker's manifests the others are not enough: the index files are read.
    for (const auto& k : keys)
        if (k.find("worker_1") != std::string::npos) store.remove(k);
    Trial<LocalStore> partial(store, fast());
    CHECK(partial.refresh_stats().manifests_read == 0);
    CHECK(answers(partial) == answers(plain));
    // compact writes manifests of every worker beside them, and those are used.
    compact_trial(store);
    Trial<LocalStore> compacted(store, fast());
    CHECK(compacted.refresh_stats().manifests_read == 3);
    CHECK(answers(compacted) == answers(plain));
}

TEST_CASE("s3rver: a compacted 64-worker trial opens in at most 20 requests with the same answers", "[s3rver][requests][manifest]") {
    const char* endpoint = std::getenv("SMDEBUG_S3RVER_ENDPOINT");
    if (!endpoint || !*endpoint)
        FAIL("SMDEBUG_S3RVER_ENDPOINT is not set: run this case under tests/s3rver/run-with-s3rver.sh (CTest: s3rver.s3store)");
    test::ScopedEnv e1("AWS_ENDPOINT_URL", endpoint), e2("AWS_ACCESS_KEY_ID", "S3RVER"), e3("AWS_SECRET_ACCESS_KEY", "S3RVER"),
        e4("AWS_REGION", "us-east-1"), e5("AWS_PROFILE", nullptr), e6("AWS_SESSION_TOKEN", nullptr);
    const std::string url = "s3://smdebug-test/manifest-" + std::to_string(::getpid()) + "-" +
                            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    // 64 workers x 24 steps of index files (the open reads no event file), written to S3.
    // SMDEBUG_MANIFEST_TEST_STEPS=1000 measures the 64-worker x 1,000-step trial of docs/scale.md.
    constexpr int workers = 64;
    const std::int64_t steps = environment::integer("SMDEBUG_MANIFEST_TEST_STEPS").value_or(24);
    {
        test::TempDir dir;
        LocalStore local(dir.path);
        for (int w = 0; w < workers; ++w) write_collections_file(local, "worker_" + std::to_string(w), collections(workers));
        for (std::int64_t g = 0; g < steps; ++g)
            for (int w = 0; w < workers; ++w) {
                StepWriter sw(g, "worker_" + std::to_string(w), Mode::TRAIN, g);
                sw.add_tensor("loss", TensorValue::scalar(double(g)));
                sw.add_tensor("fc.weight", TensorValue::scalar(double(w)));
                sw.flush(local);
            }
        write_end_marker(local);
        const S3Store up(url);
        std::vector<std::string> keys;
        for (const auto& prefix : {"index/", "collections/", "training_job_end.ts"})
            for (auto& k : local.list(prefix, "")) keys.push_back(std::move(k));
        detail::HelperPool uploaders(15);
        detail::parallel_for(uploaders, keys.size(), 16, [&](std::size_t i) { up.write(keys[i], local.read(keys[i]).bytes()); });
    }
    S3StoreOptions so;
    so.client.list_page_size = steps > 100 ? 1000 : 100;  // 1,536 index files: 16 pages for a listing of index/
    const S3Store s3(url, so);
    auto summary = [](auto& t) {
        std::ostringstream o;
        for (auto s : t.steps()) o << s << " ";
        for (const auto& n : t.tensor_names()) o << n << " " << t.tensor(n).steps().size() << " ";
        o << t.workers().size() << " " << t.last_complete_step();
        return o.str();
    };
    CountingStore<S3Store> plain_store(s3);
    Trial<CountingStore<S3Store>> plain(plain_store, without_manifests());
    const auto plain_open = plain_store.counts();
    INFO("without manifests: " << format_request_counts(plain_open));
    CHECK(plain_open.get >= std::uint64_t(workers * steps));

    const auto r = compact_trial(s3);
    CHECK(r.written.size() == std::size_t((steps + 999) / 1000));
    CHECK(r.files_covered == std::size_t(workers * steps));

    auto warnings = std::make_shared<std::vector<std::string>>();
    CountingStore<S3Store> counted(s3);
    Trial<CountingStore<S3Store>> t(counted, collecting(warnings));
    const auto open = counted.counts();
    INFO("with manifests: " << format_request_counts(open));
    CHECK(open.list + open.get + open.head <= 20);
    std::cout << "s3rver, " << workers << " workers x " << steps << " steps: open without manifests " << format_request_counts(plain_open)
              << "; with " << format_request_counts(open) << "\n";
    CHECK(open.get == 1 + r.written.size());  // the first collections file and the manifests
    CHECK(t.refresh_stats().manifests_read == 1);
    CHECK(summary(t) == summary(plain));
    CHECK(warnings->empty());

    // A covered index object rewritten (another size and ETag) makes the manifest stale.
    const auto last_key = paths::index_key(steps - 1, "worker_9");
    {
        index_file::IndexFile f;
        f.mode = Mode::TRAIN;
        f.mode_step = steps - 1;
        f.shapes = {{"extra", "extra", {3}}};
        const auto text = index_file::serialize(f);
        s3.write(last_key, std::as_bytes(std::span<const char>(text.data(), text.size())));
    }
    Trial<S3Store> plain_after(s3, without_manifests());
    Trial<S3Store> after(s3, collecting(warnings));
    CHECK(after.refresh_stats().manifests_read == 0);
    CHECK(summary(after) == summary(plain_after));
    REQUIRE(warnings->size() == 1);
    CHECK_THAT(warnings->front(), Catch::Contains("stale"));
}

TEST_CASE("values decoded from one read range share one allocation, and each stays valid alone", "[query][scale]") {
    CountedSmallTrial small;
    auto [store, trial, plain] = small.parts();
    std::shared_ptr<const TensorValue> kept;
    {
        // Two records side by side in step 3's event file: one range, one group of values.
        const auto results = trial.read(std::vector<ValueRequest>{{"fc.weight", 3}, {"loss", 3}});
        REQUIRE(results.size() == 2);
        REQUIRE(results[0].value);
        REQUIRE(results[1].value);
        CHECK(same_owner(results[0].value, results[1].value));
        CHECK(results[0].value.use_count() == 2);
        CHECK(results[0].value.get() != results[1].value.get());
        kept = results[1].value;
    }
    CHECK(kept.use_count() == 1);  // the other value is gone, this one is whole
    CHECK(same_value(*kept, plain.tensor("loss").value(3)));
    CHECK(kept->elements<double>()[0] == 1.0 / 4);
}

TEST_CASE("tensor_names at a step answers for each step when steps hold different tensors", "[query]") {
    // The names of the last step asked are kept for a step whose index lists the same tensors:
    // steps with other tensors, or the same ones in another order, must not get them.
    test::TempDir dir;
    LocalStore store(dir.path);
    const std::vector<std::vector<std::string>> saved = {{"b", "a"}, {"c", "b"}, {"a", "b"}, {"b", "a"}};
    write_collections_file(store, "worker_0", collections());
    for (std::size_t g = 0; g < saved.size(); ++g) {
        StepWriter w(static_cast<std::int64_t>(g), "worker_0", Mode::TRAIN, static_cast<std::int64_t>(g));
        for (const auto& n : saved[g]) w.add_tensor(n, TensorValue::scalar(float(g)));
        w.flush(store);
    }
    write_end_marker(store);
    Trial<LocalStore> trial(store, fast());
    const std::vector<std::string> ab = {"a", "b"}, bc = {"b", "c"};
    for (std::int64_t s : {0, 0, 1, 0, 2, 3, 1, 1, 2}) {
        INFO("step " << s);
        CHECK(trial.tensor_names({.step = s}) == (s == 1 ? bc : ab));
    }
    CHECK(trial.tensor_names({.step = 1, .regex = {"^c"}}) == std::vector<std::string>{"c"});
    CHECK(trial.tensor_names({.step = 1}) == bc);  // the filter did not change the names kept
    CHECK(trial.tensor_names({.step = 9}).empty());
}

TEST_CASE("a value group holds at most max_group values, however many records its range asks for", "[query][scale][reliability]") {
    // A range may ask for one record many times (decoded once): the group's allocation follows
    // the values made, not the requests.
    using detail::ValueGroup;
    ValueGroup group(100000);
    std::vector<std::shared_ptr<const TensorValue>> made;
    for (std::size_t i = 0; i <= ValueGroup::max_group; ++i) made.push_back(group.adopt(TensorValue::scalar(float(i))));
    CHECK(same_owner(made.front(), made[ValueGroup::max_group - 1]));
    CHECK_FALSE(same_owner(made.front(), made.back()));  // the 65th starts a new group
    CHECK(made.front().use_count() == static_cast<long>(ValueGroup::max_group));
    for (std::size_t i = 0; i < made.size(); ++i) CHECK(made[i]->elements<float>()[0] == float(i));
    ValueGroup small(3);  // a group never holds more than its range asks for
    const auto a = small.adopt(TensorValue::scalar(1.0f)), b = small.adopt(TensorValue::scalar(2.0f)),
               c = small.adopt(TensorValue::scalar(3.0f)), d = small.adopt(TensorValue::scalar(4.0f));
    CHECK(same_owner(a, c));
    CHECK_FALSE(same_owner(a, d));
    CHECK(a.use_count() == 3);
}

TEST_CASE("a Trial decodes within TrialOptions::max_expanded_elements; SMDEBUG_MAX_EXPANDED_ELEMENTS is only its default",
          "[query][reliability][env]") {
    // A float32 record of 64 x 64 from one float_val (4096 elements from 4 bytes), as worker_1's
    // record at step 0 of a copy of a finished trial.
    auto varint = [](std::uint64_t v) {
        std::string out;
        for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7F) | 0x80);
        return out + static_cast<char>(v);
    };
    auto len_field = [&](std::uint32_t number, const std::string& bytes) { return varint(number << 3 | 2) + varint(bytes.size()) + bytes; };
    const std::string dim = len_field(2, varint(1 << 3) + varint(64));
    std::string one(4, '\0');
    const float v = 1.5f;
    std::memcpy(one.data(), &v, 4);
    const std::string tensor = varint(1 << 3) + varint(1) + len_field(2, dim + dim) + varint(5 << 3 | 5) + one;
    test::TempDir dir("expansion-budget");
    const auto t = dir.path / "t";
    std::filesystem::copy(std::filesystem::path(SMDEBUG_TEST_DATA_DIR) / "conformance/cases/pt_train_eval/trial", t,
                          std::filesystem::copy_options::recursive);
    std::string file;
    tfrecord::append(file, len_field(5, len_field(1, len_field(1, "bcast") + len_field(8, tensor))));
    const std::string event_key = "events/000000000000/000000000000_worker_1.tfevents";
    std::ofstream(t / event_key, std::ios::binary) << file;
    std::ofstream(t / "index/000000000/000000000000_worker_1.json")
        << R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": ")" << event_key << R"("}, )"
        << R"("tensor_payload": [{"tensorname": "bcast", "start_idx": 0, "length": )" << file.size() << R"(}], "shape_payload": []})";
    auto read = [&](std::optional<std::size_t> budget) {
        TrialOptions o = test::fast();
        o.max_expanded_elements = budget;
        Trial<LocalStore> trial(LocalStore(t), o);
        return trial.tensor("bcast").value(0, StepQuery{Mode::GLOBAL, "worker_1"});
    };
    {
        test::ScopedEnv env("SMDEBUG_MAX_EXPANDED_ELEMENTS", nullptr);
        CHECK(read(std::nullopt).size() == 4096u);  // the default, 2^20
        // The option set in code limits the record: a FormatError naming the file, the tensor and the budget.
        CHECK_THROWS_AS(read(1000), FormatError);
        CHECK_THROWS_WITH(read(1000), Catch::Contains("000000000000_worker_1.tfevents") && Catch::Contains("'bcast'") &&
                                          Catch::Contains("expansion budget of 1000"));
    }
    {
        test::ScopedEnv env("SMDEBUG_MAX_EXPANDED_ELEMENTS", "1000");
        CHECK_THROWS_WITH(read(std::nullopt), Catch::Contains("expansion budget of 1000"));  // the environment's default ...
        const auto value = read(5000);                                                        // ... an option in code wins
        REQUIRE(value.size() == 4096u);
        CHECK(value.elements<float>()[4095] == 1.5f);
    }
}

}  // namespace smdebug_test_query
