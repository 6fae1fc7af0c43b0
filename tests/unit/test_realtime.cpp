// Realtime analysis: refresh, completeness, waiting and multi-worker behaviour of Trial on trials
// that are still being written (docs/semantics.md §1–§7, docs/deviations.md D9–D13, D16, D20), and the
// `smdebug watch` command. Trials are written into temporary folders with StepWriter, playing the
// training job; short poll intervals keep the whole file fast.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <smdebug/writer/step_writer.hpp>
#include <smdebug/smdebug.hpp>
#include <smdebug/query/change_watch.hpp>
#include <smdebug/storage/local_listing.hpp>

#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_realtime {

using namespace smdebug;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using Steps = std::vector<std::int64_t>;
using Names = std::vector<std::string>;

// Busy threads beside a test (CPU load on 2 cores), until stop() or the end of the scope.
class CpuBurners {
public:
    explicit CpuBurners(int n) {
        for (int i = 0; i < n; ++i)
            threads_.emplace_back([this] {
                volatile std::uint64_t spin = 0;
                while (!stop_.load(std::memory_order_relaxed)) spin = spin + 1;
            });
    }
    ~CpuBurners() { stop(); }
    CpuBurners(const CpuBurners&) = delete;
    CpuBurners& operator=(const CpuBurners&) = delete;
    void stop() {
        stop_ = true;
        for (auto& t : threads_)
            if (t.joinable()) t.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

// Trial folders in these tests start out missing, as for a job that has not started writing.
struct TempDir : test::TempDir {
    explicit TempDir(const std::string& name) : test::TempDir(name, test::TempDir::absent) {}
};


// Plays the training job: collections files, one index + event file per (step, worker), end marker.
struct JobWriter {
    LocalStore store;  // without fsync: the same atomic rename, for fast fixtures
    int num_workers;

    JobWriter(const fs::path& root, const Names& workers, int num_workers = 0)
        : store(root, LocalStore::Durability::none), num_workers(num_workers ? num_workers : static_cast<int>(workers.size())) {
        for (const auto& w : workers) collections(w);
    }
    void collections(const std::string& worker) const {
        write_collections_file(store, worker, collections_file::match_all(num_workers));
    }
    // Tensors t0, t1 (and `extra`) with value step*10 + worker number (the digits after the last '_').
    void step(std::int64_t g, const std::string& worker, Mode mode = Mode::GLOBAL, std::optional<std::int64_t> ms = {},
              const Names& names = {"t0", "t1"}) const {
        StepWriter w(g, worker, mode, ms.value_or(g));
        const float v = static_cast<float>(g * 10 + std::stoi(worker.substr(worker.rfind('_') + 1)));
        for (const auto& n : names) w.add_tensor(n, TensorValue::scalar<float>(v), 1.0);
        w.flush(store);
    }
    void steps(const Steps& gs, const Names& workers) const {
        for (auto g : gs)
            for (const auto& w : workers) step(g, w);
    }
    void end() const { write_end_marker(store); }
    void unend() const { store.remove(paths::end_marker); }
    fs::path event_file(std::int64_t g, const std::string& worker) const { return store.root() / paths::event_key(g, worker); }
};

// A job still writing: a missing event file gets three polls of 20 ms (test::fast(3, 20ms)).

using LocalTrial = Trial<LocalStore>;
std::unique_ptr<LocalTrial> open(const fs::path& root, TrialOptions o = test::fast(3, 20ms)) {
    return std::make_unique<LocalTrial>(LocalStore(root), std::move(o));
}

float scalar(const TensorValue& v) { return v.elements<float>()[0]; }

Steps range(std::int64_t a, std::int64_t b) {  // [a, b]
    Steps s;
    for (auto i = a; i <= b; ++i) s.push_back(i);
    return s;
}

using test::ScopedEnv;

const Names abc{"worker_0", "worker_1", "worker_2"};
constexpr auto AV = StepState::AVAILABLE;
constexpr auto UNAV = StepState::UNAVAILABLE;
constexpr auto NYA = StepState::NOT_YET_AVAILABLE;

}  // namespace

// ---- Appendix A and B -----------------------------------------------------------------------

TEST_CASE("Appendix A: single worker, steps 0,1,2,5, then the end marker", "[realtime][appendix]") {
    TempDir dir("appA");
    JobWriter job(dir.path, {"worker_0"});
    job.steps({0, 1, 2, 5}, {"worker_0"});
    auto trial = open(dir.path);
    auto& t = *trial;

    CHECK(t.last_complete_step() == 5);
    CHECK_FALSE(t.loaded_all_steps());
    CHECK(t.steps() == Steps{0, 1, 2, 5});
    CHECK(t.steps(Mode::TRAIN).empty());
    CHECK(t.modes().empty());
    CHECK(t.workers() == Names{"worker_0"});
    auto t0 = t.tensor("t0");
    CHECK_THROWS_AS(t0.value(3), StepUnavailable);
    CHECK_THROWS_AS(t0.value(9), StepNotYetAvailable);
    CHECK_THROWS_AS(t0.value(1, Mode::TRAIN), StepNotYetAvailable);
    TensorNamesQuery at3;
    at3.step = 3;
    CHECK(t.tensor_names(at3).empty());
    TensorNamesQuery train;
    train.mode = Mode::TRAIN;
    CHECK(t.tensor_names(train).empty());  // D5
    CHECK_THROWS_AS(t0.workers(3), TensorUnavailableForStep);
    CHECK(t.has_passed_step(-1) == UNAV);
    CHECK(t.has_passed_step(3) == UNAV);
    CHECK(t.has_passed_step(6) == NYA);

    job.end();
    CHECK(t.steps() == Steps{0, 1, 2, 5});
    CHECK(t.loaded_all_steps());
    CHECK(t.last_complete_step() == 5);
    CHECK_THROWS_AS(t0.value(9), StepUnavailable);
    CHECK_THROWS_AS(t0.value(3), StepUnavailable);
    t.wait_for_steps({0, 1});
    CHECK(t.dynamic_refresh());  // D10: restored (the reference leaves it false)
    CHECK_THROWS_AS(t.wait_for_steps({3}), StepUnavailable);
    try {
        t.wait_for_steps({9});
        FAIL("expected NoMoreData");
    } catch (const NoMoreData& e) {
        CHECK(e.last_step == 5);
        CHECK(std::string(e.what()).ends_with("Max step available is 5"));
    }
}

TEST_CASE("Appendix B: three workers, incomplete tail, late files (D11)", "[realtime][appendix][multiworker]") {
    TempDir dir("appB");
    JobWriter job(dir.path, abc);
    job.steps({0, 1, 2}, abc);
    job.steps({3, 4, 5}, {"worker_0", "worker_2"});
    auto trial = open(dir.path);
    auto& t = *trial;

    CHECK(t.num_workers() == 3);
    CHECK(t.last_complete_step() == 2);
    CHECK(t.steps() == Steps{0, 1, 2});
    CHECK(t.steps(Mode::GLOBAL, true) == range(0, 5));
    auto t0 = t.tensor("t0");
    CHECK(t0.steps() == Steps{0, 1, 2});
    CHECK(t0.steps(Mode::GLOBAL, true) == range(0, 5));
    CHECK(t.has_passed_step(3) == NYA);
    CHECK(scalar(t0.value(3)) == 30.0f);  // worker_0's data, without a completeness check
    CHECK_THROWS_AS(t0.value(3, StepQuery{Mode::GLOBAL, "worker_1"}), InvalidWorker);
    CHECK(t0.workers(3) == Names{"worker_0", "worker_2"});
    CHECK(scalar(t0.value(1)) == 10.0f);
    CHECK(scalar(t0.value(1, StepQuery{Mode::GLOBAL, "worker_2"})) == 12.0f);

    job.step(5, "worker_1");
    CHECK(t.steps() == range(0, 5));
    CHECK(t.last_complete_step() == 5);

    // The reference never loads this late file; the C++ reader does on the next refresh (D11).
    job.step(3, "worker_1");
    CHECK(t.steps() == range(0, 5));
    CHECK(t0.workers(3) == Names{"worker_0", "worker_2", "worker_1"});
    CHECK(scalar(t0.value(3, StepQuery{Mode::GLOBAL, "worker_1"})) == 31.0f);
    CHECK(t0.workers(4) == Names{"worker_0", "worker_2"});

    auto fresh = open(dir.path);
    CHECK(fresh->tensor("t0").workers(3) == Names{"worker_0", "worker_1", "worker_2"});
}

// ---- docs/semantics.md §5 table ------------------------------------------------------------

TEST_CASE("has_passed_step: the reference outcomes (docs/semantics.md §5)", "[realtime][has_passed_step]") {
    TempDir dir("hps");
    const Names one{"worker_0"};

    SECTION("1 worker, steps 0-6, ended") {
        JobWriter job(dir.path, one);
        job.steps(range(0, 6), one);
        job.end();
        auto t = open(dir.path);
        CHECK(t->steps(Mode::GLOBAL, true) == range(0, 6));
        CHECK(t->steps() == range(0, 6));
        CHECK(t->last_complete_step() == 6);
        CHECK(t->has_passed_step(3) == AV);
        CHECK(t->has_passed_step(8) == UNAV);
    }
    SECTION("1 worker, steps 0-6, running") {
        JobWriter job(dir.path, one);
        job.steps(range(0, 6), one);
        auto t = open(dir.path);
        CHECK(t->has_passed_step(8) == NYA);
        CHECK(t->last_complete_step() == 6);
    }
    SECTION("1 worker, step 4 missing, ended") {
        JobWriter job(dir.path, one);
        job.steps({0, 1, 2, 3, 5, 6}, one);
        job.end();
        auto t = open(dir.path);
        CHECK(t->steps() == Steps{0, 1, 2, 3, 5, 6});
        CHECK(t->has_passed_step(4) == UNAV);
        CHECK(t->last_complete_step() == 6);
        CHECK_THROWS_AS(t->wait_for_steps({1, 4}), StepUnavailable);
        CHECK_THROWS_AS(t->wait_for_steps({1, 7}), NoMoreData);
    }
    SECTION("1 worker, step 4 missing, running") {
        JobWriter job(dir.path, one);
        job.steps({0, 1, 2, 3, 5, 6}, one);
        auto t = open(dir.path);
        CHECK(t->has_passed_step(4) == UNAV);
        CHECK(t->has_passed_step(8) == NYA);
    }
    SECTION("3 workers, every step, running") {
        JobWriter job(dir.path, abc);
        job.steps(range(0, 6), abc);
        auto t = open(dir.path);
        CHECK(t->steps() == range(0, 6));
        CHECK(t->last_complete_step() == 6);
    }
    SECTION("steps 3-6 only by a and c: running, then ended") {
        JobWriter job(dir.path, abc);
        job.steps(range(0, 2), abc);
        job.steps(range(3, 6), {"worker_0", "worker_2"});
        auto t = open(dir.path);
        CHECK(t->steps(Mode::GLOBAL, true) == range(0, 6));
        CHECK(t->steps() == range(0, 2));
        CHECK(t->last_complete_step() == 2);
        CHECK(t->has_passed_step(4) == NYA);
        CHECK(t->has_passed_step(6) == NYA);
        CHECK(t->has_passed_step(8) == NYA);
        job.end();
        CHECK(t->steps() == range(0, 6));
        CHECK(t->last_complete_step() == 6);
        CHECK(t->has_passed_step(4) == AV);
        CHECK(t->has_passed_step(8) == UNAV);
    }
    SECTION("3-5 by a and c, 6 by all: lcs >= 4 makes 4 available") {
        JobWriter job(dir.path, abc);
        job.steps(range(0, 2), abc);
        job.steps(range(3, 5), {"worker_0", "worker_2"});
        job.steps({6}, abc);
        auto t = open(dir.path);
        CHECK(t->steps() == range(0, 6));
        CHECK(t->last_complete_step() == 6);
        CHECK(t->has_passed_step(4) == AV);
    }
    SECTION("3 absent, 4-6 by a and c") {
        JobWriter job(dir.path, abc);
        job.steps(range(0, 2), abc);
        job.steps(range(4, 6), {"worker_0", "worker_2"});
        auto t = open(dir.path);
        CHECK(t->steps(Mode::GLOBAL, true) == Steps{0, 1, 2, 4, 5, 6});
        CHECK(t->steps() == range(0, 2));
        CHECK(t->last_complete_step() == 2);
        CHECK(t->has_passed_step(3) == NYA);
    }
    SECTION("3 absent, 4-5 by a and c, 6 by all") {
        JobWriter job(dir.path, abc);
        job.steps(range(0, 2), abc);
        job.steps({4, 5}, {"worker_0", "worker_2"});
        job.steps({6}, abc);
        auto t = open(dir.path);
        CHECK(t->steps() == Steps{0, 1, 2, 4, 5, 6});
        CHECK(t->last_complete_step() == 6);
        CHECK(t->has_passed_step(3) == UNAV);
    }
    SECTION("TRAIN 0,10,20,30 at global 0-30, EVAL 0,10,20,30 at global 40-70: running, then ended") {
        JobWriter job(dir.path, one);
        for (int i = 0; i < 4; ++i) job.step(i * 10, "worker_0", Mode::TRAIN, i * 10);
        for (int i = 0; i < 4; ++i) job.step(40 + i * 10, "worker_0", Mode::EVAL, i * 10);
        auto t = open(dir.path);
        CHECK(t->last_complete_step() == 70);
        CHECK(t->steps(Mode::TRAIN) == Steps{0, 10, 20, 30});
        CHECK(t->has_passed_step(23, Mode::TRAIN) == UNAV);
        CHECK(t->has_passed_step(40, Mode::TRAIN) == NYA);
        CHECK(t->has_passed_step(80) == NYA);
        job.end();
        CHECK(t->has_passed_step(40, Mode::TRAIN) == UNAV);
        CHECK(t->has_passed_step(80) == UNAV);
        CHECK(t->has_passed_step(80, Mode::EVAL) == UNAV);
        CHECK(t->has_passed_step(10, Mode::EVAL) == AV);  // D6
        CHECK(t->has_passed_step(11, Mode::EVAL) == UNAV);
    }
    SECTION("2 workers, steps 3,4,8,9 by one worker only, end marker deleted") {
        const Names two{"worker_0", "worker_1"};
        JobWriter job(dir.path, two);
        for (int g = 0; g <= 9; ++g) {
            const bool one_only = g == 3 || g == 4 || g == 8 || g == 9;
            job.step(g, "worker_0", Mode::GLOBAL, {}, g >= 5 ? Names{"t0", "late"} : Names{"t0"});
            if (!one_only) job.step(g, "worker_1", Mode::GLOBAL, {}, g >= 5 ? Names{"t0", "late"} : Names{"t0"});
        }
        job.end();
        job.unend();
        auto t = open(dir.path);
        CHECK(t->steps(Mode::GLOBAL, true) == range(0, 9));
        CHECK(t->steps() == range(0, 7));
        CHECK(t->last_complete_step() == 7);
        CHECK(t->tensor("late").steps() == Steps{5, 6, 7});
    }
    SECTION("collections file but no index files: running, then ended") {
        JobWriter job(dir.path, one);
        auto t = open(dir.path);
        CHECK(t->has_passed_step(0) == NYA);
        CHECK(t->steps().empty());
        CHECK_FALSE(t->last_index_token());
        CHECK(t->last_complete_step() == -1);
        job.end();
        CHECK(t->has_passed_step(0) == UNAV);
        try {
            t->wait_for_steps({0});
            FAIL("expected NoMoreData");
        } catch (const NoMoreData& e) {
            CHECK(e.last_step == -1);
        }
    }
}

// ---- refresh --------------------------------------------------------------------------------

TEST_CASE("Incremental refresh reads only new index files", "[realtime][refresh]") {
    TempDir dir("incremental");
    const Names one{"worker_0"};
    JobWriter job(dir.path, one);
    job.steps(range(0, 1999), one);  // two index buckets
    auto t = open(dir.path);
    CHECK(t->refresh_stats().index_files_read == 2000);
    const auto before = t->refresh_stats();
    t->refresh_data();
    CHECK(t->refresh_stats().index_files_listed == before.index_files_listed);  // nothing new, nothing listed
    CHECK(t->refresh_stats().index_files_read == before.index_files_read);
    job.step(2000, "worker_0");
    CHECK(t->has_passed_step(2000) == AV);
    CHECK(t->refresh_stats().index_files_listed == before.index_files_listed + 1);
    CHECK(t->refresh_stats().index_files_read == before.index_files_read + 1);
    CHECK(*t->last_index_token() == "index/000000002/000000002001");
}

TEST_CASE("Incremental refresh, multi-worker: a lagging worker keeps only its own steps in the listing", "[realtime][refresh]") {
    TempDir d2("incremental-mw");
    const Names two{"worker_0", "worker_1"};
    JobWriter j2(d2.path, two);
    j2.steps(range(0, 99), two);
    j2.steps(range(100, 104), {"worker_0"});
    auto t2 = open(d2.path);
    CHECK(t2->last_complete_step() == 99);
    const auto s0 = t2->refresh_stats();
    t2->refresh_data();
    CHECK(t2->refresh_stats().index_files_listed - s0.index_files_listed == 5);  // steps 100-104 of worker_0
    CHECK(t2->refresh_stats().index_files_read == s0.index_files_read);         // already read: not again
    j2.step(100, "worker_1");
    CHECK(t2->steps().back() == 100);
    CHECK(t2->refresh_stats().index_files_read == s0.index_files_read + 1);
}

TEST_CASE("A writer's temporary index file does not move the listing past the final file", "[realtime][refresh]") {
    TempDir dir("tmpfile");
    JobWriter job(dir.path, {"worker_0"});
    job.step(0, "worker_0");
    auto t = open(dir.path);
    const auto final_path = dir.path / paths::index_key(1, "worker_0");
    job.step(1, "worker_0");
    fs::rename(final_path, final_path.string() + ".tmp");  // caught between write and rename
    CHECK(t->steps() == Steps{0});
    fs::rename(final_path.string() + ".tmp", final_path);
    CHECK(t->steps() == Steps{0, 1});
}

TEST_CASE("Which queries refresh (docs/semantics.md §2.3)", "[realtime][refresh]") {
    TempDir dir("which");
    const Names one{"worker_0"};
    JobWriter job(dir.path, one);
    for (int g = 0; g < 4; ++g) job.step(g, "worker_0", Mode::TRAIN, g);
    auto trial = open(dir.path);
    auto& t = *trial;
    auto count = [&] { return t.refresh_stats().refreshes; };
    CHECK(count() == 1);  // construction: refresh_data once, directly
    auto delta = [&](auto&& f) {
        const auto c = count();
        f();
        return count() - c;
    };
    CHECK(delta([&] { t.modes(); }) == 0);
    CHECK(delta([&] { t.collections(); }) == 0);
    CHECK(delta([&] { t.collection("default"); }) == 0);
    CHECK(delta([&] { t.steps(); }) == 1);
    CHECK(delta([&] { t.steps(Mode::TRAIN, true); }) == 1);
    CHECK(delta([&] { t.tensor_names(); }) == 1);
    CHECK(delta([&] { t.workers(); }) == 1);
    CHECK(delta([&] { t.has_passed_step(2); }) == 1);
    CHECK(delta([&] { t.has_tensor("t0"); }) == 0);
    CHECK(delta([&] { t.has_tensor("nope"); }) == 1);
    CHECK(delta([&] { t.tensor("t0"); }) == 0);
    CHECK(delta([&] { t.mode(2); }) == 0);
    CHECK(delta([&] { t.mode_step(9); }) == 1);
    CHECK(delta([&] { t.global_step(Mode::GLOBAL, 77); }) == 0);
    CHECK(delta([&] { t.global_step(Mode::TRAIN, 3); }) == 0);
    CHECK(delta([&] { t.global_step(Mode::TRAIN, 9); }) == 1);
    auto t0 = t.tensor("t0");
    CHECK(delta([&] { t0.steps(); }) == 1);
    CHECK(delta([&] { t0.prev_steps(2); }) == 1);
    CHECK(delta([&] { t0.values(); }) == 1);
    CHECK(delta([&] { t0.value(2); }) == 0);
    CHECK(delta([&] { t0.value(2, Mode::TRAIN); }) == 0);
    CHECK(delta([&] { t0.workers(2); }) == 0);
    CHECK(delta([&] { t0.reduction_value(1, "mean"); }) == 0);
    CHECK(delta([&] { CHECK_THROWS_AS(t0.value(7, Mode::TRAIN), StepNotYetAvailable); }) == 2);  // _step + has_passed_step
    CHECK(delta([&] { CHECK_THROWS_AS(t0.value(7), StepNotYetAvailable); }) == 3);  // + mode_modestep
    CHECK(delta([&] { CHECK_THROWS_AS(t0.workers(7), TensorUnavailableForStep); }) == 1);

    job.end();
    CHECK(delta([&] { t.steps(); }) == 2);  // the end: two refreshes D apart
    CHECK(t.loaded_all_steps());
    job.step(4, "worker_0", Mode::TRAIN, 4);
    CHECK(delta([&] { t.steps(); }) == 0);  // never again
    CHECK(t.steps() == range(0, 3));
}

TEST_CASE("range_steps loads only steps in range; begin inclusive, end exclusive", "[realtime][range]") {
    TempDir dir("range");
    const Names one{"worker_0"};
    JobWriter job(dir.path, one);
    job.steps(range(0, 9), one);

    auto o = test::fast(3, 20ms);
    o.range_begin = 2;
    o.range_end = 5;
    auto t = open(dir.path, o);
    CHECK(t->steps() == Steps{2, 3, 4});
    CHECK(t->refresh_stats().index_files_read == 3);
    CHECK(t->has_passed_step(1) == UNAV);
    CHECK(t->has_passed_step(4) == AV);
    CHECK(t->has_passed_step(5) == NYA);  // until the job ends
    CHECK(t->has_passed_step(7) == NYA);
    CHECK_THROWS_AS(t->tensor("t0").value(7), StepNotYetAvailable);

    // Steps past the end are listed once, then the listing moves past them.
    job.steps(range(10, 19), one);
    const auto s0 = t->refresh_stats();
    t->refresh_data();
    CHECK(t->refresh_stats().index_files_listed - s0.index_files_listed == 10);
    t->refresh_data();
    CHECK(t->refresh_stats().index_files_listed - s0.index_files_listed == 10);
    CHECK(t->refresh_stats().index_files_read == 3);

    job.end();
    CHECK(t->has_passed_step(7) == UNAV);
    CHECK(t->steps() == Steps{2, 3, 4});

    auto o2 = test::fast(3, 20ms);
    o2.range_end = 3;
    CHECK(open(dir.path, o2)->steps() == Steps{0, 1, 2});
    auto o3 = test::fast(3, 20ms);
    o3.range_begin = 5;
    o3.range_end = 5;
    CHECK_THROWS_AS(open(dir.path, o3), SMDebugValueError);
}

namespace {
// A LocalStore that counts its listings: whole listings, and listings of the first keys.
struct ListCountingStore {
    LocalStore local;
    std::shared_ptr<std::atomic<int>> lists = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> first_lists = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::set<std::string>> keys_listed = std::make_shared<std::set<std::string>>();  // one thread lists

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        ++*lists;
        auto keys = local.list(prefix, start_after);
        keys_listed->insert(keys.begin(), keys.end());
        return keys;
    }
    std::vector<std::string> list_first(std::string_view prefix, std::string_view start_after, std::size_t n) const {
        ++*first_lists;
        return local.list_first(prefix, start_after, n);
    }
    ByteBuffer read(std::string_view key) const { return local.read(key); }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        return local.read_range(key, offset, length);
    }
    bool exists(std::string_view key) const { return local.exists(key); }
    std::string describe(std::string_view key) const { return local.describe(key); }
};
static_assert(FirstKeysStore<ListCountingStore> && FirstKeysStore<LocalStore> && FirstKeysStore<S3Store> && FirstKeysStore<AnyStore>);
}  // namespace

TEST_CASE("find_last_step finds the newest step in O(log steps) listings of one key", "[realtime][range][scale]") {
    TempDir dir("last-step");
    const Names two{"worker_0", "worker_1"};
    JobWriter job(dir.path, two);
    ListCountingStore store{LocalStore(dir.path)};
    CHECK_FALSE(find_last_step(store).has_value());  // no index file yet
    Steps written;
    for (std::int64_t g = 0; g <= 12'340; g += 20) written.push_back(g);
    for (auto g : written) job.step(g, g % 40 ? "worker_1" : "worker_0");  // one worker per step: any counts
    // What a listing must pass over: a writer's temporary file and a stray name after the last step.
    std::ofstream(dir.path / "index/000000012/000000012340_worker_0.json.tmp") << "{}";
    std::ofstream(dir.path / "index/000000012/zzz_notes.txt") << "{}";
    CHECK(find_last_step(store) == 12'340);
    CHECK(*store.lists == 0);  // never the whole index
    CHECK(*store.first_lists <= 2 * 15 + 2);  // two searches over < 2^14 steps, and the first probe
    CHECK(find_last_step(LocalStore(dir.path)) == 12'340);
    // A step far away: found with a few more probes, not a listing of what lies between.
    job.step(987'654'321, "worker_0");
    *store.first_lists = 0;
    CHECK(find_last_step(store) == 987'654'321);
    CHECK(*store.lists == 0);
    CHECK(*store.first_lists <= 2 * 31 + 2);
    Trial<ListCountingStore> t(store, test::fast(3, 20ms));
    CHECK(t.last_step() == 987'654'321);
}

namespace {
// A store whose index lists without end keys that are not index files (a broken or hostile server).
struct EndlessJunkStore {
    std::shared_ptr<std::atomic<std::size_t>> listed = std::make_shared<std::atomic<std::size_t>>(0);
    std::vector<std::string> list(std::string_view, std::string_view = {}) const { throw StorageError("not this way"); }
    std::vector<std::string> list_first(std::string_view, std::string_view, std::size_t n) const {
        std::vector<std::string> keys;  // ascending from call to call, each after every index key
        for (std::size_t i = 0; i < n; ++i) keys.push_back("index/000000000/zzz_" + paths::step_digits(static_cast<std::int64_t>((*listed)++), 12) + ".json.tmp");
        return keys;
    }
    ByteBuffer read(std::string_view key) const { throw ObjectNotFound(std::string(key)); }
    ByteBuffer read_range(std::string_view key, std::uint64_t, std::uint64_t) const { throw ObjectNotFound(std::string(key)); }
    bool exists(std::string_view) const { return false; }
    std::string describe(std::string_view key) const { return "endless://" + std::string(key); }
};
}  // namespace

TEST_CASE("find_last_step over an index of endless junk keys ends with a FormatError, bounded", "[realtime][range][scale]") {
    EndlessJunkStore store;
    try {
        (void)find_last_step(store);
        FAIL("an endless index listing was searched to its end");
    } catch (const FormatError& e) {
        CHECK_THAT(e.what(), Catch::Contains("endless://index/") && Catch::Contains("not index files"));
    }
    CHECK(*store.listed <= detail::max_skipped_index_keys + 8);
}

TEST_CASE("range_steps lists only the index buckets of its range", "[realtime][range][scale]") {
    TempDir dir("range-buckets");
    const Names one{"worker_0"};
    JobWriter job(dir.path, one);
    Steps written;
    for (std::int64_t g = 0; g < 10'000; g += 50) written.push_back(g);  // 20 steps in each of 10 buckets
    job.steps(written, one);
    job.end();
    ListCountingStore store{LocalStore(dir.path)};
    auto o = test::fast(3, 20ms);
    o.range_begin = 3'000;
    o.range_end = 4'100;  // buckets 3 and 4
    Trial<ListCountingStore> t(store, o);
    Steps expected;
    for (std::int64_t g = 3'000; g < 4'100; g += 50) expected.push_back(g);
    CHECK(t.steps() == expected);
    CHECK(t.tensor("t0").value(4'050).elements<float>()[0] == 40'500.0f);
    // Listed: bucket 3 from the range's start and bucket 4, never another bucket.
    std::size_t index_keys = 0;
    for (const auto& key : *store.keys_listed) {
        if (!key.starts_with(paths::index_prefix)) continue;
        INFO(key);
        CHECK((key.starts_with("index/000000003/") || key.starts_with("index/000000004/")));
        ++index_keys;
    }
    CHECK(index_keys == 40);
    CHECK(t.refresh_stats().index_files_read == expected.size());
    // The whole trial still reads as before, and so do open ranges.
    ListCountingStore all{LocalStore(dir.path)};
    CHECK(Trial<ListCountingStore>(all, test::fast(3, 20ms)).steps() == written);
    auto to = test::fast(3, 20ms);
    to.range_end = 120;
    CHECK(Trial<LocalStore>(LocalStore(dir.path), to).steps() == Steps{0, 50, 100});
    auto from = test::fast(3, 20ms);
    from.range_begin = 9'900;
    CHECK(Trial<LocalStore>(LocalStore(dir.path), from).steps() == Steps{9'900, 9'950});
}

// ---- training end and environment -----------------------------------------------------------

TEST_CASE("End-of-training delay and window come from the environment", "[realtime][env]") {
    TempDir dir("env");
    JobWriter job(dir.path, {"worker_0"});
    {
        ScopedEnv a("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"), b("TRAINING_END_DELAY_REFRESH", "7");
        ScopedEnv c("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", nullptr), d("INCOMPLETE_STEP_WAIT_WINDOW", "12");
        LocalTrial t{LocalStore(dir.path)};
        CHECK(t.training_end_delay_refresh() == 0ms);
        CHECK(t.incomplete_step_wait_window() == 12);
    }
    {
        ScopedEnv a("SMDEBUG_TRAINING_END_DELAY_REFRESH", nullptr), b("TRAINING_END_DELAY_REFRESH", "7");
        ScopedEnv c("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "5"), d("INCOMPLETE_STEP_WAIT_WINDOW", "12");
        LocalTrial t{LocalStore(dir.path)};
        CHECK(t.training_end_delay_refresh() == 7000ms);
        CHECK(t.incomplete_step_wait_window() == 5);
    }
    {
        ScopedEnv a("SMDEBUG_TRAINING_END_DELAY_REFRESH", nullptr), b("TRAINING_END_DELAY_REFRESH", nullptr);
        ScopedEnv c("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", nullptr), d("INCOMPLETE_STEP_WAIT_WINDOW", nullptr);
        LocalTrial t{LocalStore(dir.path)};
        CHECK(t.training_end_delay_refresh() == 1000ms);
        CHECK(t.incomplete_step_wait_window() == 1000);
    }
    SECTION("the delay is slept once, between the two final refreshes") {
        ScopedEnv a("SMDEBUG_TRAINING_END_DELAY_REFRESH", nullptr), b("TRAINING_END_DELAY_REFRESH", nullptr);
        auto o = test::fast(3, 20ms);
        o.training_end_delay_refresh = 150ms;
        auto t = open(dir.path, o);
        job.step(0, "worker_0");
        job.end();
        const auto start = std::chrono::steady_clock::now();
        CHECK(t->steps() == Steps{0});
        const auto took = std::chrono::steady_clock::now() - start;
        // D21: the settle lasts until the end marker's mtime + 150 ms. The kernel stamps files with
        // a coarse clock (a tick, up to ~10 ms, behind), so measured from after job.end() it can
        // be a few ms short of 150 ms; a settle that was skipped would take ~0 ms.
        CHECK(took >= 130ms);
        CHECK(took < 1500ms);
        const auto again = std::chrono::steady_clock::now();
        t->steps();
        CHECK(std::chrono::steady_clock::now() - again < 100ms);
    }
}

// ---- incomplete-step window (D12) -----------------------------------------------------------

TEST_CASE("Incomplete-step window: the older half is given up on (D12)", "[realtime][window]") {
    TempDir dir("window");
    JobWriter job(dir.path, abc);

    SECTION("dense steps, W = 4") {
        job.steps(range(0, 9), {"worker_0"});
        auto o = test::fast(3, 20ms);
        o.incomplete_step_wait_window = 4;
        auto t = open(dir.path, o);
        CHECK(t->last_complete_step() == 4);  // 10 incomplete > 4: give up on 0..4
        CHECK(t->steps() == range(0, 7));     // next refresh: 5 incomplete > 4: give up on 5..7
        CHECK(t->last_complete_step() == 7);
        CHECK(t->steps() == range(0, 7));  // 2 incomplete: wait
        CHECK(t->steps(Mode::GLOBAL, true) == range(0, 9));
        CHECK(t->has_passed_step(8) == NYA);
        CHECK(t->has_passed_step(5) == AV);
        // New complete steps still move lcs normally.
        job.steps({10}, abc);
        CHECK(t->steps() == range(0, 10));
    }
    SECTION("sparse steps, W = 10: counts steps, not step numbers") {
        Steps sparse;
        for (int i = 0; i < 20; ++i) sparse.push_back(i * 100);
        job.steps(sparse, {"worker_0"});
        auto o = test::fast(3, 20ms);
        o.incomplete_step_wait_window = 10;
        auto t = open(dir.path, o);
        CHECK(t->last_complete_step() == 900);
        const Steps expected(sparse.begin(), sparse.begin() + 10);
        CHECK(t->steps() == expected);  // 10 incomplete is not more than 10
        CHECK(t->last_complete_step() == 900);
    }
    SECTION("odd count: ceil(count / 2) oldest") {
        job.steps(range(0, 6), {"worker_0"});  // 7 incomplete
        auto o = test::fast(3, 20ms);
        o.incomplete_step_wait_window = 6;
        auto t = open(dir.path, o);
        CHECK(t->last_complete_step() == 3);  // 4 given up: 0..3
    }
    SECTION("not more than W: nothing given up") {
        job.steps(range(0, 3), {"worker_0"});
        auto o = test::fast(3, 20ms);
        o.incomplete_step_wait_window = 4;
        auto t = open(dir.path, o);
        CHECK(t->last_complete_step() == -1);
        CHECK(t->steps().empty());
    }
}

// ---- waiting --------------------------------------------------------------------------------

TEST_CASE("A reader waits for steps while several workers write them", "[realtime][wait][thread]") {
    TempDir dir("writer-thread");
    const Names workers{"worker_0", "worker_1", "worker_2"};
    JobWriter job(dir.path, workers);
    constexpr int last = 11;

    std::promise<void> partial, go;
    auto go_future = go.get_future();
    std::jthread writer([&] {
        // Step 0 by two of three workers, then wait for the reader to look at it.
        job.step(0, "worker_0");
        job.step(0, "worker_1");
        partial.set_value();
        go_future.wait();
        job.step(0, "worker_2");
        for (int g = 1; g <= last; ++g) {
            for (const auto& w : workers) {
                std::this_thread::sleep_for(2ms);
                job.step(g, w, Mode::TRAIN, g - 1);
            }
        }
        std::this_thread::sleep_for(20ms);
        job.end();
    });

    auto o = test::fast(3, 20ms);
    o.poll_interval = 200ms;  // wake-ups come from the change watch, not from polling
    auto trial = open(dir.path, o);
    auto& t = *trial;
    partial.get_future().wait();
    CHECK(t.has_passed_step(0) == NYA);
    CHECK(t.steps().empty());
    CHECK(t.steps(Mode::GLOBAL, true) == Steps{0});
    CHECK(t.tensor("t0").workers(0) == Names{"worker_0", "worker_1"});
    go.set_value();

    std::vector<std::vector<StepState>> seen(last + 1);
    for (int g = 0; g <= last; ++g) {
        seen[g].push_back(t.has_passed_step(g));
        t.wait_for_steps({g}, Mode::GLOBAL, 5s);
        seen[g].push_back(t.has_passed_step(g));
        auto t0 = t.tensor("t0");
        for (std::size_t w = 0; w < workers.size(); ++w)
            CHECK(scalar(t0.value(g, StepQuery{Mode::GLOBAL, workers[w]})) == static_cast<float>(g * 10 + static_cast<int>(w)));
    }
    // Transitions: NOT_YET_AVAILABLE (possibly) then AVAILABLE, never UNAVAILABLE, never back.
    for (int g = 0; g <= last; ++g) {
        INFO("step " << g);
        CHECK(seen[g].back() == AV);
        for (auto s : seen[g]) CHECK(s != UNAV);
    }
    CHECK(t.steps(Mode::TRAIN).size() == static_cast<std::size_t>(last));
    t.wait_for_steps({5}, Mode::TRAIN, 1s);
    try {
        t.wait_for_steps({last + 1}, Mode::GLOBAL, 5s);
        FAIL("expected NoMoreData");
    } catch (const NoMoreData& e) {
        CHECK(e.last_step == last);
    }
    CHECK(t.loaded_all_steps());
    CHECK(t.has_passed_step(last + 1) == UNAV);
    writer.join();
}

TEST_CASE("wait_for_steps wakes on new files instead of sleeping a poll interval", "[realtime][wait]") {
    TempDir dir("wake");
    JobWriter job(dir.path, {"worker_0"});
    auto o = test::fast(3, 20ms);
    o.poll_interval = 5s;
    auto t = open(dir.path, o);
    std::jthread writer([&] {
        std::this_thread::sleep_for(300ms);  // the waiter's backoff has grown past 300 ms by then
        job.step(0, "worker_0");
    });
    const auto start = std::chrono::steady_clock::now();
    t->wait_for_steps({0}, Mode::GLOBAL, 4s);
    const auto took = std::chrono::steady_clock::now() - start;
    writer.join();
    CHECK(took < 700ms);
}

TEST_CASE("Waiting can time out", "[realtime][wait][timeout]") {
    TempDir dir("timeout");
    JobWriter job(dir.path, {"worker_0"});
    job.step(0, "worker_0");
    auto t = open(dir.path);
    {
        auto scope = no_refresh(*t);
        const auto start = std::chrono::steady_clock::now();
        try {
            t->wait_for_steps({0, 3}, Mode::GLOBAL, 150ms);
            FAIL("expected TimeoutError");
        } catch (const TimeoutError& e) {
            CHECK(std::string(e.what()).find("step 3") != std::string::npos);
            CHECK(std::string(e.what()).find(dir.path.string()) != std::string::npos);
        }
        const auto took = std::chrono::steady_clock::now() - start;
        CHECK(took >= 150ms);
        CHECK(took < 1s);
        CHECK_FALSE(t->dynamic_refresh());  // D10: restored, also on an exception
    }
    CHECK(t->dynamic_refresh());
    CHECK_THROWS_AS(t->wait_for_steps({3}, Mode::GLOBAL, 0ms), TimeoutError);
}

TEST_CASE("A trial that does not exist yet (D16)", "[realtime][wait][create]") {
    TempDir dir("missing");
    SECTION("fails at once by default, naming the path") {
        const auto start = std::chrono::steady_clock::now();
        try {
            create_trial(dir.path.string());
            FAIL("expected an error");
        } catch (const ObjectNotFound& e) {
            CHECK(std::string(e.what()).find(dir.path.string()) != std::string::npos);
        }
        CHECK(std::chrono::steady_clock::now() - start < 500ms);
    }
    SECTION("wait_for_trial with a timeout") {
        auto o = test::fast(3, 20ms);
        o.wait_for_trial = true;
        o.wait_timeout = 150ms;
        CHECK_THROWS_AS(create_trial(dir.path.string(), o), TimeoutError);
    }
    SECTION("a folder with index files but no collections file yet waits for it, within the timeout") {
        fs::create_directories(dir.path / "index" / "000000000");
        std::ofstream(dir.path / "index" / "000000000" / "000000000000_worker_0.json") << "{}";
        auto o = test::fast(3, 20ms);
        o.wait_timeout = 100ms;
        CHECK_THROWS_AS(create_trial(dir.path.string(), o), TimeoutError);
    }
    SECTION("wait_for_trial: the job starts writing later") {
        auto o = test::fast(3, 20ms);
        o.wait_for_trial = true;
        o.wait_timeout = 5s;
        o.poll_interval = 2s;
        std::jthread writer([&] {
            std::this_thread::sleep_for(250ms);
            JobWriter job(dir.path, {"worker_0", "worker_1"});
            job.steps({0}, {"worker_0", "worker_1"});
        });
        const auto start = std::chrono::steady_clock::now();
        auto t = create_trial(dir.path.string(), o);
        CHECK(std::chrono::steady_clock::now() - start < 1500ms);  // woken by the change watch
        writer.join();
        CHECK(t.num_workers() == 2);
        CHECK(t.workers() == Names{"worker_0", "worker_1"});
    }
    SECTION("ended without collections files") {
        fs::create_directories(dir.path);
        write_end_marker(LocalStore(dir.path));
        CHECK_THROWS_AS(create_trial(dir.path.string(), test::fast(3, 20ms)), MissingCollectionFiles);
    }
}

// ---- refresh scopes (D20) -------------------------------------------------------------------

TEST_CASE("Refresh scopes restore the previous setting (D20)", "[realtime][scopes]") {
    TempDir d1("scope1"), d2("scope2");
    JobWriter j1(d1.path, {"worker_0"}), j2(d2.path, {"worker_0"});
    j1.step(0, "worker_0");
    j2.step(0, "worker_0");
    auto a = open(d1.path), b = open(d2.path);

    SECTION("no_refresh hides new data until the scope ends") {
        {
            auto s = no_refresh(*a);
            j1.step(1, "worker_0");
            CHECK(a->steps() == Steps{0});
            CHECK_THROWS_AS(a->tensor("t0").value(1), StepNotYetAvailable);
        }
        CHECK(a->dynamic_refresh());
        CHECK(a->steps() == Steps{0, 1});
    }
    SECTION("nesting, several trials") {
        {
            auto outer = no_refresh(*a, *b);
            CHECK_FALSE(a->dynamic_refresh());
            CHECK_FALSE(b->dynamic_refresh());
            {
                auto inner = refresh(*a);
                CHECK(a->dynamic_refresh());
                CHECK_FALSE(b->dynamic_refresh());
                {
                    auto innermost = no_refresh(*a);
                    CHECK_FALSE(a->dynamic_refresh());
                }
                CHECK(a->dynamic_refresh());
            }
            CHECK_FALSE(a->dynamic_refresh());  // the reference would force it back to false... and then true
        }
        CHECK(a->dynamic_refresh());
        CHECK(b->dynamic_refresh());
        a->set_dynamic_refresh(false);
        {
            auto s = refresh(*a);
            CHECK(a->dynamic_refresh());
        }
        CHECK_FALSE(a->dynamic_refresh());  // restored, not forced to false or true
    }
    SECTION("exceptions restore too") {
        try {
            auto s = no_refresh(*a, *b);
            throw std::runtime_error("boom");
        } catch (const std::runtime_error&) {
        }
        CHECK(a->dynamic_refresh());
        CHECK(b->dynamic_refresh());
        a->set_dynamic_refresh(false);
        try {
            auto s = refresh(*a);
            a->wait_for_steps({5}, Mode::GLOBAL, 30ms);
        } catch (const TimeoutError&) {
        }
        CHECK_FALSE(a->dynamic_refresh());
    }
    SECTION("lists, spans and pointers of trials") {
        std::vector<LocalTrial*> ptrs{a.get(), b.get()};
        {
            auto s = no_refresh(ptrs);
            CHECK(s.size() == 2);
            CHECK_FALSE(a->dynamic_refresh());
            CHECK_FALSE(b->dynamic_refresh());
        }
        CHECK(a->dynamic_refresh());
        {
            auto s = no_refresh(std::span(ptrs).first(1));
            CHECK_FALSE(a->dynamic_refresh());
            CHECK(b->dynamic_refresh());
        }
        std::vector<std::unique_ptr<LocalTrial>> owned;
        owned.push_back(std::move(a));
        owned.push_back(std::move(b));
        {
            auto s = no_refresh(owned);
            CHECK_FALSE(owned[0]->dynamic_refresh());
            CHECK_FALSE(owned[1]->dynamic_refresh());
            auto s2 = refresh({owned[1].get()});
            CHECK(owned[1]->dynamic_refresh());
        }
        CHECK(owned[0]->dynamic_refresh());
        CHECK(owned[1]->dynamic_refresh());
        std::list<Trial<AnyStore>> any;
        any.emplace_back(AnyStore(LocalStore(d1.path)), test::fast(3, 20ms));
        {
            auto s = no_refresh(any);
            CHECK_FALSE(any.front().dynamic_refresh());
        }
        CHECK(any.front().dynamic_refresh());
    }
    SECTION("wait_for_steps inside no_refresh sees new data, then restores (D10)") {
        auto s = no_refresh(*a);
        j1.step(1, "worker_0");
        a->wait_for_steps({1}, Mode::GLOBAL, 1s);
        CHECK_FALSE(a->dynamic_refresh());
        CHECK(a->steps() == Steps{0, 1});
    }
}

// ---- half-written data ----------------------------------------------------------------------

TEST_CASE("A half-written event file is not yet available while training runs", "[realtime][partial]") {
    TempDir dir("partial");
    JobWriter job(dir.path, {"worker_0"});
    job.step(0, "worker_0");
    job.step(1, "worker_0", Mode::GLOBAL, {}, {"t0", "t1", "smdebug/reductions/mean/t0"});
    const auto file = job.event_file(1, "worker_0");
    const auto full_size = fs::file_size(file);
    std::string full;
    {
        std::ifstream in(file, std::ios::binary);
        full.assign(std::istreambuf_iterator<char>(in), {});
    }
    auto write_raw = [&](const std::string& bytes) {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    };
    auto t = open(dir.path);
    auto t0 = t->tensor("t0");
    REQUIRE(t->has_passed_step(1) == AV);

    SECTION("short file: StepNotYetAvailable, then TruncatedData naming the file after the end") {
        fs::resize_file(file, full_size / 6);  // inside the first record
        CHECK_THROWS_AS(t0.value(1), StepNotYetAvailable);
        CHECK_THROWS_AS(t->tensor("t1").value(1), StepNotYetAvailable);
        CHECK_THROWS_AS(t0.reduction_value(1, "mean"), StepNotYetAvailable);  // stored reduction
        CHECK(scalar(t0.value(0)) == 0.0f);
        write_raw(full);  // the writer finishes
        CHECK(scalar(t0.value(1)) == 10.0f);
        fs::resize_file(file, full_size / 6);
        job.end();
        try {
            t0.value(1);
            FAIL("expected TruncatedData");
        } catch (const TruncatedData& e) {
            CHECK(std::string(e.what()).find(file.string()) != std::string::npos);
        }
    }
    SECTION("bytes not written yet (zeros): StepNotYetAvailable, then RecordCorrupted naming the file") {
        write_raw(std::string(full.size(), '\0'));
        CHECK_THROWS_AS(t0.value(1), StepNotYetAvailable);
        job.end();
        try {
            t0.value(1);
            FAIL("expected RecordCorrupted");
        } catch (const RecordCorrupted& e) {
            CHECK(std::string(e.what()).find(file.string()) != std::string::npos);
        }
    }
    SECTION("payload with a real CRC that does not match yet") {
        // A record written with a real payload CRC (TensorBoard style) whose payload is still
        // being filled in: the footer is checked and fails.
        std::string rec;
        tfrecord::append(rec, std::string(40, 'x'), tfrecord::Footer::payload_crc);
        rec[20] = 'y';
        std::string bytes = full;
        bytes.replace(0, rec.size(), rec);
        write_raw(bytes);
        CHECK_THROWS_AS(t0.value(1), StepNotYetAvailable);
        job.end();
        CHECK_THROWS_AS(t0.value(1), FormatError);
    }
    SECTION("a missing event file: the reference's retry loop") {
        fs::remove(file);
        const auto start = std::chrono::steady_clock::now();
        CHECK_THROWS_AS(t0.value(1), TensorUnavailableForStep);  // 3 retries, 20 ms apart
        CHECK(std::chrono::steady_clock::now() - start < 1s);
    }
    SECTION("a missing event file that the worker skipped fails at once") {
        job.step(2, "worker_0");
        fs::remove(file);
        auto o = test::fast(3, 20ms);
        o.missing_event_file_retry_limit = 1000;
        o.poll_interval = 1s;
        auto t2 = open(dir.path, o);
        const auto start = std::chrono::steady_clock::now();
        CHECK_THROWS_AS(t2->tensor("t0").value(1), TensorUnavailableForStep);
        CHECK(std::chrono::steady_clock::now() - start < 500ms);
    }
}

// ---- change watch ---------------------------------------------------------------------------

TEST_CASE("ChangeWatch wakes on published files and new index buckets", "[realtime][watch]") {
    TempDir dir("changewatch");
    JobWriter job(dir.path, {"worker_0"});
    ChangeWatch w(dir.path);
#ifdef __linux__
    REQUIRE(w.active());
#endif
    CHECK_FALSE(w.wait(30ms));
    job.step(0, "worker_0");  // creates index/000000000/ and the file in it
    CHECK(w.wait(1s));
    while (w.wait(30ms)) {
    }
    job.step(1, "worker_0");  // a file in an existing bucket
    CHECK(w.wait(1s));
    while (w.wait(30ms)) {
    }
    job.step(1000, "worker_0");  // a new bucket
    CHECK(w.wait(1s));
    while (w.wait(30ms)) {
    }
    job.step(1001, "worker_0");
    CHECK(w.wait(1s));
    while (w.wait(30ms)) {
    }
    {
        std::ofstream tmp(dir.path / "index" / "000000001" / "000000001002_worker_0.json.tmp");
        tmp << "{";
    }
    CHECK_FALSE(w.wait(50ms));  // temporary files do not count
    job.end();
    CHECK(w.wait(1s));
}

// ---- smdebug watch --------------------------------------------------------------------------

#ifdef SMDEBUG_BIN_DIR
using test::run_cli;

TEST_CASE("smdebug watch follows a running job", "[realtime][cli]") {
    if (!fs::exists(fs::path(SMDEBUG_BIN_DIR) / "smdebug")) {
        FAIL("the smdebug CLI is not built: " << (fs::path(SMDEBUG_BIN_DIR) / "smdebug").string());
    }
    TempDir dir("cli-watch");
    const Names two{"worker_0", "worker_1"};
    std::jthread writer([&] {
        std::this_thread::sleep_for(150ms);  // the trial does not exist when watch starts
        JobWriter job(dir.path, two);
        auto loss_step = [&](std::int64_t g, Mode m, std::int64_t ms, float loss, bool save_loss) {
            for (const auto& w : two) {
                StepWriter sw(g, w, m, ms);
                if (save_loss) sw.add_tensor("loss", TensorValue::scalar<float>(w == "worker_0" ? loss : 99.0f), 1.0);
                sw.add_tensor("other", TensorValue::scalar<float>(1.0f), 1.0);
                sw.flush(job.store);
                std::this_thread::sleep_for(5ms);
            }
        };
        loss_step(0, Mode::TRAIN, 0, 0.5f, true);
        loss_step(1, Mode::TRAIN, 1, -0.25f, true);
        loss_step(2, Mode::EVAL, 0, 0.125f, true);
        loss_step(3, Mode::TRAIN, 2, 0.0f, false);
        std::this_thread::sleep_for(50ms);
        loss_step(4, Mode::TRAIN, 3, 2.0f, true);
        job.end();
    });
    const auto r = run_cli("watch " + dir.path.string() + " --wait --tensor loss --reduce mean");
    writer.join();
    CHECK(r.status == 0);
    CHECK(r.out ==
          "step 0 TRAIN 0 loss mean=0.5\n"
          "step 1 TRAIN 1 loss mean=-0.25\n"
          "step 2 EVAL 0 loss mean=0.125\n"
          "step 3 TRAIN 2 loss mean=n/a\n"
          "step 4 TRAIN 3 loss mean=2\n");

    const auto plain = run_cli("watch " + dir.path.string());
    CHECK(plain.status == 0);
    CHECK(plain.out == "step 0 TRAIN 0\nstep 1 TRAIN 1\nstep 2 EVAL 0\nstep 3 TRAIN 2\nstep 4 TRAIN 3\n");
    const auto abs = run_cli("watch " + dir.path.string() + " --tensor loss --reduce max --abs");
    CHECK(abs.status == 0);
    CHECK(abs.out.starts_with("step 0 TRAIN 0 loss abs_max=0.5\nstep 1 TRAIN 1 loss abs_max=0.25\n"));

    CHECK(run_cli("watch").status == 2);
    CHECK(run_cli("watch " + dir.path.string() + " --reduce mean").status == 2);
    CHECK(run_cli("watch " + dir.path.string() + " --tensor loss").status == 2);
    CHECK(run_cli("watch " + dir.path.string() + " --tensor loss --reduce median").status == 2);
    CHECK(run_cli("watch " + dir.path.string() + " --bogus").status == 2);
}

// Issue 30 §1 for `smdebug watch`: it prints every step of a job written as fast as the writer can,
// with CPU burners beside it (once it skipped a step in 5 runs).
TEST_CASE("smdebug watch following a job under CPU load prints every step", "[realtime][cli][reliability][load]") {
    if (!fs::exists(fs::path(SMDEBUG_BIN_DIR) / "smdebug")) {
        FAIL("the smdebug CLI is not built: " << (fs::path(SMDEBUG_BIN_DIR) / "smdebug").string());
    }
    const int steps = 1000;
    for (int run = 0; run < 3; ++run) {
        INFO("run " << run);
        TempDir dir("cli-watch-race");
        CpuBurners burners(3);
        std::thread writer([&] {
            std::this_thread::sleep_for(20ms);
            JobWriter job(dir.path, Names{"worker_0"});
            for (int g = 0; g < steps; ++g) job.step(g, "worker_0");
            job.end();
        });
        const auto r = run_cli("watch " + dir.path.string() + " --wait 60");
        writer.join();
        burners.stop();
        CHECK(r.status == 0);
        std::string want;
        for (int g = 0; g < steps; ++g) want += "step " + std::to_string(g) + " GLOBAL " + std::to_string(g) + "\n";
        CHECK(r.out == want);
    }
}
#endif

// ---- local listing ----------------------------------------------------------------------------

TEST_CASE("the getdents listings of LocalStore (all keys, first n keys) list exactly what the portable walks list", "[realtime][listing]") {
    TempDir dir("listing");
    JobWriter job(dir.path, {"worker_0", "worker_1"});
    for (std::int64_t g : {0, 1, 2, 999, 1000, 1001, 2500, 12000})
        for (const char* w : {"worker_0", "worker_1"}) job.step(g, w);
    {
        std::ofstream tmp(dir.path / "index" / "000000001" / "000000001002_worker_0.json.tmp");
        tmp << "{";
    }
    fs::create_directories(dir.path / "elsewhere");
    {
        std::ofstream f(dir.path / "elsewhere" / "000000005000_worker_0.json");
        f << "{}";
    }
    fs::create_directory_symlink(dir.path / "elsewhere", dir.path / "index" / "000000005");
    const LocalStore store(dir.path);
    for (std::string prefix : {"index/", "index/000000001/", "index/0000000", "events/", "", "collections/000000000/", "nope/"}) {
        for (std::string after : {"", "index/", "index/000000000/000000000001", "index/000000000/000000000001_worker_0.json",
                                  "index/000000001/000000001001_worker_1.json", "index/000000002/000000002500",
                                  "index/000000005", "index/000000012/000000012001", "zzz", "events/000000001000"}) {
            INFO("prefix '" << prefix << "' after '" << after << "'");
            const auto expected = smdebug::detail::list_local_portable(dir.path, prefix, after);
            CHECK(list_local(dir.path, prefix, after) == expected);
            CHECK(store.list(prefix, after) == expected);
            // The first n keys (getdents64 walk in key order) are the listing's first n, as the
            // portable ordered walk finds them.
            for (std::size_t n : {1, 2, 3, 17, 1000}) {
                const std::vector<std::string> first(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(std::min(n, expected.size())));
                CHECK(list_local_first(dir.path, prefix, after, n) == first);
                CHECK(store.list_first(prefix, after, n) == first);
                CHECK(smdebug::detail::list_local_first_portable(dir.path, prefix, after, n) == first);
            }
        }
    }
    CHECK(list_local(dir.path / "missing", "index/", "").empty());
    CHECK(list_local_first(dir.path / "missing", "index/", "", 5).empty());
    CHECK(list_local_first(dir.path, "index/", "", 0).empty());
}

// ---- the same over S3 (s3rver) ----------------------------------------------------------------

// The store options of the s3rver that tests/s3rver/run-with-s3rver.sh started (its endpoint in
// SMDEBUG_S3RVER_ENDPOINT), with an AWS environment of its own (HOME = `home`).
namespace {
S3StoreOptions s3rver_options(const TempDir& home) {
    const char* endpoint = std::getenv("SMDEBUG_S3RVER_ENDPOINT");
    if (!endpoint || !*endpoint) {
        FAIL("SMDEBUG_S3RVER_ENDPOINT is not set: run this case under tests/s3rver/run-with-s3rver.sh (CTest: s3rver.s3store)");
    }
    auto vars = std::make_shared<std::map<std::string, std::string>>(std::map<std::string, std::string>{
        {"HOME", home.path.string()}, {"AWS_ENDPOINT_URL_S3", endpoint}, {"AWS_ACCESS_KEY_ID", "S3RVER"},
        {"AWS_SECRET_ACCESS_KEY", "S3RVER"}, {"AWS_REGION", "us-east-1"}, {"AWS_EC2_METADATA_DISABLED", "true"}});
    S3StoreOptions so;
    so.aws = net::AwsConfig::from_environment([vars](std::string_view n) -> std::optional<std::string> {
        auto it = vars->find(std::string(n));
        return it == vars->end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    return so;
}
}  // namespace

// Issue 30 §1 over S3: a writer puts steps into s3rver while a long-lived Trial lists them, with
// CPU burners beside them; the reader ends with every step. (s3rver is slow: 2 runs x 300 steps.)
TEST_CASE("s3rver: a live reader following a job on S3 under CPU load ends with every step", "[s3rver][realtime][reliability]") {
    TempDir home("s3home-race");
    const S3StoreOptions so = s3rver_options(home);
    const int steps = 300;
    for (int run = 0; run < 2; ++run) {
        INFO("run " << run);
        const std::string root = "s3://smdebug-test/live-race-" + std::to_string(::getpid()) + "-" + std::to_string(run) + "-" +
                                 std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
        const S3Store store(root, so);
        write_collections_file(store, "worker_0", collections_file::match_all(1));
        CpuBurners burners(2);
        std::thread writer([&] {
            for (int g = 0; g < steps; ++g) {
                StepWriter sw(g, "worker_0", Mode::GLOBAL, g);
                sw.add_tensor("t0", TensorValue::scalar<float>(static_cast<float>(g)), 1.0);
                sw.flush(store);
            }
            write_end_marker(store);
        });
        auto o = test::fast(3, 20ms);
        o.poll_interval = 5ms;
        std::size_t polls = 0;
        std::vector<std::int64_t> seen;
        {
            Trial<S3Store> t(store, o);
            while (!t.loaded_all_steps()) {
                seen = t.steps();
                ++polls;
            }
            seen = t.steps();
            CHECK(t.tensor("t0").value(steps - 1).elements<float>()[0] == static_cast<float>(steps - 1));
        }
        writer.join();
        burners.stop();
        CHECK(polls > 1);
        CHECK(seen == range(0, steps - 1));
    }
}

// Runs in the s3rver.s3store CTest test (tests/cmake/s3.cmake), which starts s3rver and sets
// SMDEBUG_S3RVER_ENDPOINT, like the other [s3rver] cases.
TEST_CASE("s3rver: realtime refresh, late files, waiting and the end over S3", "[s3rver][realtime]") {
    TempDir home("s3home");
    const S3StoreOptions so = s3rver_options(home);
    const std::string root = "s3://smdebug-test/realtime-" + std::to_string(::getpid()) + "-" +
                             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    const S3Store store(root, so);
    const Names two{"worker_0", "worker_1"};
    for (const auto& w : two) {
        collections_file::CollectionsFile cf;
        cf.num_workers = 2;
        write_collections_file(store, w, cf);
    }
    auto step = [&](std::int64_t g, const std::string& w) {
        StepWriter sw(g, w, Mode::GLOBAL, g);
        sw.add_tensor("t0", TensorValue::scalar<float>(static_cast<float>(g * 10 + (w == "worker_1"))), 1.0);
        sw.flush(store);
    };
    for (std::int64_t g = 0; g < 3; ++g)
        for (const auto& w : two) step(g, w);
    step(3, "worker_0");
    step(4, "worker_0");

    auto o = test::fast(3, 20ms);
    Trial<S3Store> t(store, o);
    CHECK(t.num_workers() == 2);
    CHECK(t.steps() == range(0, 2));
    CHECK(t.steps(Mode::GLOBAL, true) == range(0, 4));
    CHECK(t.has_passed_step(3) == NYA);
    CHECK(*t.last_index_token() == "index/000000000/000000000003");

    step(4, "worker_1");  // 4 complete: 3 becomes complete through lcs
    CHECK(t.steps() == range(0, 4));
    CHECK(t.has_passed_step(3) == AV);
    step(3, "worker_1");  // late (D11)
    t.steps();
    CHECK(t.tensor("t0").workers(3) == Names{"worker_0", "worker_1"});
    CHECK(scalar(t.tensor("t0").value(3, StepQuery{Mode::GLOBAL, "worker_1"})) == 31.0f);

    const auto before = t.refresh_stats();
    t.refresh_data();
    CHECK(t.refresh_stats().index_files_listed == before.index_files_listed);  // nothing after the token
    CHECK_THROWS_AS(t.wait_for_steps({5}, Mode::GLOBAL, 100ms), TimeoutError);
    std::jthread writer([&] {
        std::this_thread::sleep_for(50ms);
        step(5, "worker_0");
        step(5, "worker_1");
        write_end_marker(store);
    });
    t.wait_for_steps({5}, Mode::GLOBAL, 10s);
    CHECK_THROWS_AS(t.wait_for_steps({6}, Mode::GLOBAL, 10s), NoMoreData);
    CHECK(t.loaded_all_steps());
}

// ---- a live reader loses no step (issue 30 §1, docs/semantics.md §2.4) -------------------------

namespace {

// A LocalStore whose next index listings leave out one named key, as a directory listing does
// for a file renamed into place while it runs.
struct KeyDroppingStore {
    LocalStore inner;
    std::shared_ptr<std::string> hidden = std::make_shared<std::string>();
    std::shared_ptr<int> listings_left = std::make_shared<int>(0);  // listings that still drop it
    // Run once, right after the next index listing was taken: files a job writes meanwhile.
    std::shared_ptr<std::function<void()>> after_listing = std::make_shared<std::function<void()>>();

    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        auto keys = inner.list(prefix, start_after);
        if (prefix != paths::index_prefix) return keys;
        if (*listings_left > 0) {
            --*listings_left;
            std::erase(keys, *hidden);
        }
        if (*after_listing) std::exchange(*after_listing, {})();
        return keys;
    }
    ByteBuffer read(std::string_view key) const { return inner.read(key); }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        return inner.read_range(key, offset, length);
    }
    bool exists(std::string_view key) const { return inner.exists(key); }
    std::string describe(std::string_view key) const { return inner.describe(key); }
};
static_assert(Store<KeyDroppingStore>);

}  // namespace

TEST_CASE("A key a listing leaves out is read by the same refresh's confirming listing", "[realtime][refresh][reliability]") {
    TempDir dir("dropped-key");
    const Names one{"worker_0"};
    JobWriter job(dir.path, one);
    job.steps(range(0, 5), one);
    KeyDroppingStore store{LocalStore(dir.path)};
    *store.hidden = paths::index_key(3, "worker_0");
    *store.listings_left = 1;
    Trial<AnyStore> t(AnyStore(store), test::fast(3, 20ms));
    CHECK(t.steps() == range(0, 5));  // before the fix: {0, 1, 2, 4, 5}, and 3 never again
    CHECK(t.refresh_stats().confirming_listings == 1);

    // While the job runs: steps 6..9 written, 7 left out of the refresh's first listing.
    job.steps(range(6, 9), one);
    *store.hidden = paths::index_key(7, "worker_0");
    *store.listings_left = 1;
    CHECK(t.steps() == range(0, 9));
    CHECK(t.has_passed_step(7) == StepState::AVAILABLE);

    // Steps 11 and 12 land while the first listing runs, and the confirming listing returns 12
    // but not 11: past the first listing's newest key nothing is complete, the listing position
    // stays there, and the next refresh reads 11.
    job.step(10, "worker_0");
    *store.after_listing = [&] { job.steps(range(11, 12), one); };
    *store.hidden = paths::index_key(11, "worker_0");
    *store.listings_left = 2;
    t.refresh_data();
    CHECK(t.last_complete_step() == 10);
    CHECK(t.index().worker_count(12) == 1);
    CHECK(!t.is_complete(12));
    REQUIRE(t.last_index_token());
    CHECK(*t.last_index_token() <= paths::index_key(10, "worker_0"));
    CHECK(t.steps() == range(0, 12));
    CHECK(t.last_complete_step() == 12);
}

// Issue 30's acceptance run is 3 runs x 3,000 steps (SMDEBUG_LIVE_RACE_STEPS=3000); CI runs
// 3 x 1,000 (the race shows within the first thousand steps), and not under TSan ([load]).
TEST_CASE("A live reader following a job under CPU load ends with every step", "[realtime][refresh][reliability][load]") {
    const char* configured = std::getenv("SMDEBUG_LIVE_RACE_STEPS");
    const int steps = configured ? std::atoi(configured) : 1000;
    REQUIRE(steps > 0);
    for (int run = 0; run < 3; ++run) {
        INFO("run " << run);
        TempDir dir("live-race");
        const Names one{"worker_0"};
        JobWriter job(dir.path, one);
        CpuBurners burners(4);
        std::thread writer([&] {
            for (int g = 0; g < steps; ++g) job.step(g, "worker_0");
            job.end();
        });
        auto o = test::fast(3, 20ms);
        o.poll_interval = 1ms;
        std::size_t polls = 0;
        std::vector<std::int64_t> seen;
        {
            LocalTrial t(LocalStore(dir.path), o);
            while (!t.loaded_all_steps()) {
                seen = t.steps();
                ++polls;
            }
            seen = t.steps();
        }
        writer.join();
        burners.stop();
        CHECK(polls > 1);
        CHECK(seen.size() == static_cast<std::size_t>(steps));
        CHECK(seen == range(0, steps - 1));
    }
}

}  // namespace smdebug_test_realtime
