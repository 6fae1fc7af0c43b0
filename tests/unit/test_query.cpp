// Query layer: Trial/Tensor answers on trials written with the format layer, the deviations that
// the conformance cases do not exercise, and typed errors that name the file at fault.
#include <catch2/catch.hpp>

#include <filesystem>
#include <cstdlib>
#include <fstream>

#include <sys/wait.h>

#include <smdebug/writer/step_writer.hpp>
#include <smdebug/smdebug.hpp>

#include "test_support.hpp"

using namespace smdebug;

namespace {

TrialOptions fast() {
    TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    o.poll_interval = std::chrono::milliseconds(10);
    o.missing_event_file_retry_limit = 0;
    return o;
}

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
bool same_value(const TensorValue& a, const TensorValue& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() && std::ranges::equal(a.bytes(), b.bytes());
}
}  // namespace

TEST_CASE("Trial::read and Trial::values read many tensors at many steps in one batch, errors per request", "[query][scale]") {
    test::TempDir dir;
    LocalStore local(dir.path);
    write_small_trial(local);
    BatchCountingStore store{local};
    Trial<BatchCountingStore> trial(store, fast());
    Trial<LocalStore> plain(local, fast());
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

TEST_CASE("Trial::read with a reduction gives reduction_value's answer per request and keeps no value", "[query][scale]") {
    test::TempDir dir;
    LocalStore local(dir.path);
    write_small_trial(local);
    BatchCountingStore store{local};
    Trial<BatchCountingStore> trial(store, fast());
    Trial<LocalStore> plain(local, fast());
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
