// A whole store in one file, as CONTRIBUTING.md "Adding a store" describes: the three operations
// of the Store concept (and the two of WritableStore) over a map in memory, and nothing else. The
// StepWriter writes a trial into it; a Trial, a Tensor's batched reads and an AnyStore read it back
// through the capabilities' defaults (storage/store.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/smdebug.hpp>
#include <smdebug/query/impl/trial.ipp>
#include <smdebug/writer/step_writer.hpp>

namespace smdebug_test_toy_store {

using namespace smdebug;

class MemoryStore {
public:
    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const {
        std::lock_guard lock(objects_->mutex);
        std::vector<std::string> keys;
        for (auto it = objects_->map.lower_bound(prefix); it != objects_->map.end() && it->first.starts_with(prefix); ++it)
            if (start_after.empty() || it->first > start_after) keys.push_back(it->first);
        return keys;
    }
    ByteBuffer read(std::string_view key) const {
        std::lock_guard lock(objects_->mutex);
        const auto& bytes = find(key);
        return ByteBuffer::copy_of(std::span<const std::byte>(bytes));
    }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        std::lock_guard lock(objects_->mutex);
        const auto& bytes = find(key);
        if (offset > bytes.size() || length > bytes.size() - offset)
            throw TruncatedData("mem:" + std::string(key) + ": wanted " + std::to_string(length) + " bytes at offset " +
                                std::to_string(offset) + " of " + std::to_string(bytes.size()));
        return ByteBuffer::copy_of(std::span<const std::byte>(bytes).subspan(offset, length));
    }
    void write(std::string_view key, std::span<const std::byte> bytes) const {
        std::lock_guard lock(objects_->mutex);
        objects_->map.insert_or_assign(std::string(key), std::vector<std::byte>(bytes.begin(), bytes.end()));
    }
    void remove(std::string_view key) const {
        std::lock_guard lock(objects_->mutex);
        if (auto it = objects_->map.find(key); it != objects_->map.end()) objects_->map.erase(it);
    }

private:
    const std::vector<std::byte>& find(std::string_view key) const {
        const auto it = objects_->map.find(key);
        if (it == objects_->map.end()) throw ObjectNotFound("no such object: mem:" + std::string(key));
        return it->second;
    }
    struct Objects {
        std::mutex mutex;
        std::map<std::string, std::vector<std::byte>, std::less<>> map;
    };
    std::shared_ptr<Objects> objects_ = std::make_shared<Objects>();  // copies share the objects
};

static_assert(Store<MemoryStore> && WritableStore<MemoryStore>);
static_assert(!BatchReadStore<MemoryStore> && !FirstKeysStore<MemoryStore> && !LocalRootStore<MemoryStore>);
static_assert(!LatencyBoundStore<MemoryStore> && !TimestampedStore<MemoryStore>);

// `steps` steps of a float32 "w" (8 elements of step * 10 + worker) by each of two workers.
void write_toy_trial(const MemoryStore& store, int steps) {
    for (const char* worker : {"worker_0", "worker_1"}) {
        write_collections_file(store, worker, collections_file::match_all());
        for (int s = 0; s < steps; ++s) {
            StepWriter w(s, worker, Mode::TRAIN, s);
            std::vector<float> v(8, static_cast<float>(s * 10 + (worker[7] - '0')));
            w.add_tensor("w", TensorValue::from<float>(v, {8}), 1.0);
            w.flush(store);
        }
    }
    write_end_marker(store);
}

float first_element(const TensorValue& v) { return v.elements<float>()[0]; }

TEST_CASE("A store of three operations: written by a StepWriter, read by a Trial and through AnyStore", "[storage][toy_store]") {
    MemoryStore store;
    write_toy_trial(store, 12);

    // The capabilities' defaults over the three operations.
    CHECK(exists(store, "training_job_end.ts"));
    CHECK_FALSE(exists(store, "training_job_end"));  // a prefix of a key is not the key
    CHECK_FALSE(exists(store, "index/"));
    CHECK(describe(store, "index/x.json") == "index/x.json");
    CHECK(list_first(store, "index/", "", 3).size() == 3);
    CHECK_FALSE(latency_bound(store));
    CHECK_FALSE(local_root_of(store).has_value());
    const std::vector<RangeRequest> ranges{{"training_job_end.ts", 0, 0}, {"collections/000000000/worker_0_collections.json", 0, 1}};
    const auto got = read_ranges(store, ranges);
    REQUIRE(got.size() == 2);
    CHECK(got[0].size() == 0);
    CHECK(got[1].text() == "{");
    CHECK_THROWS_AS(store.read_range("training_job_end.ts", 0, 1), TruncatedData);
    CHECK_THROWS_AS(store.read("absent"), ObjectNotFound);

    TrialOptions options;
    options.training_end_delay_refresh = std::chrono::milliseconds(0);
    Trial<MemoryStore> trial(store, options);
    std::vector<std::int64_t> expected_steps(12);
    for (int s = 0; s < 12; ++s) expected_steps[s] = s;
    CHECK(trial.steps() == expected_steps);
    CHECK(trial.workers() == std::vector<std::string>{"worker_0", "worker_1"});
    CHECK(first_element(trial.tensor("w").value(7, {.worker = "worker_1"})) == 71.0f);

    // A batched read of every step: read_ranges' default, one read_range after another.
    const auto values = trial.tensor("w").values({.worker = "worker_0"});
    REQUIRE(values.size() == 12);
    for (const auto& [step, v] : values) CHECK(first_element(v) == static_cast<float>(step * 10));

    // The same through the type-erased store that create_trial returns.
    Trial<AnyStore> any(AnyStore(store), options);
    CHECK(any.steps() == expected_steps);
    CHECK(first_element(any.tensor("w").value(11, {.worker = "worker_0"})) == 110.0f);
    CHECK(any.store().describe("k") == "k");

    // A record whose bytes are cut short is an error naming the object, not a crash.
    const auto key = paths::event_key(3, "worker_0");
    const auto bytes = store.read(key);
    store.write(key, std::span<const std::byte>(bytes.data(), bytes.size() / 2));
    Trial<MemoryStore> cut(store, options);
    try {
        (void)cut.tensor("w").value(3, {.worker = "worker_0"});
        FAIL("a truncated event file was read");
    } catch (const SMDebugError& e) {
        CHECK(std::string(e.what()).find(key) != std::string::npos);
    }
}

}  // namespace smdebug_test_toy_store
