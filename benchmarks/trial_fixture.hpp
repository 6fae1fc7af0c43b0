#pragma once
// Writes synthetic trials for benchmarks: `steps` global steps, `tensors` float32 tensors each,
// one event file and one index file per step (the reference writer's layout).
//
// The issue-10 shapes (realistic trials):
//   a: 1000 steps x 50 tensors x 1024 float32   (205 MB of values, many small tensors)
//   b:   20 steps x  4 tensors x 16 Mi float32  (5.4 GB of values, few large tensors)
//   c: 10000 steps x 20 scalars                 (a long run of scalars, 0.8 MB of values)
//   w: 64 workers x 200 steps x 4 x 1024 float32 (210 MB, a wide job: the Dask benchmark, issue 24)
// The issue-25 scale shapes (index cost per entry, requests on S3):
//   m: 1000 workers x 100 steps x 50 scalars     (5,000,000 index entries in 100,000 index files)
//   x: 64 workers x 1000 steps x 4 x 64 float32  (128,000 objects: the S3 cost table of docs/scale.md)
//   y: 64 workers x 20 steps x 4 x 64 float32    (x cut to 20 steps, for trying the cost table quickly)
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <smdebug/writer/step_writer.hpp>
#include <smdebug/storage/local_store.hpp>

namespace bench {

struct TrialShape {
    const char* name;
    int steps;
    int tensors;
    std::size_t elements;  // float32 elements per tensor (1: a scalar of shape [1])
    int workers = 1;       // worker_0 .. worker_{n-1}, each writing every step
};

inline constexpr TrialShape shape_a{"a", 1000, 50, 1024};
inline constexpr TrialShape shape_b{"b", 20, 4, std::size_t{16} << 20};
inline constexpr TrialShape shape_c{"c", 10000, 20, 1};
// (a) cut to 200 steps (40 MB): the S3 comparison with the reference's boto3 path.
inline constexpr TrialShape shape_s{"s", 200, 50, 1024};
inline constexpr TrialShape shape_w{"w", 200, 4, 1024, 64};
inline constexpr TrialShape shape_m{"m", 100, 50, 1, 1000};
inline constexpr TrialShape shape_x{"x", 1000, 4, 64, 64};
inline constexpr TrialShape shape_y{"y", 20, 4, 64, 64};

inline const TrialShape* find_shape(std::string_view name) {
    for (const auto* s : {&shape_a, &shape_b, &shape_c, &shape_s, &shape_w, &shape_m, &shape_x, &shape_y})
        if (name == s->name) return s;
    return nullptr;
}

// Writes the trial into `dir` (replacing it).
inline void write_trial(const std::filesystem::path& dir, int steps, int tensors, std::size_t elements,
                        bool end_marker = true, int workers = 1) {
    std::filesystem::remove_all(dir);
    smdebug::LocalStore store(dir, smdebug::LocalStore::Durability::none);
    std::vector<float> data(elements);
    std::mt19937 rng(42);
    std::normal_distribution<float> dist;
    for (auto& x : data) x = dist(rng);
    const auto value = smdebug::TensorValue::from<float>(data, {elements});
    std::vector<std::string> workers_names;
    for (int k = 0; k < workers; ++k) workers_names.push_back("worker_" + std::to_string(k));
    for (const auto& worker : workers_names)
        smdebug::write_collections_file(store, worker, smdebug::collections_file::match_all(workers));
    std::vector<std::string> names;
    for (int t = 0; t < tensors; ++t) names.push_back("layer" + std::to_string(t) + "/weight");
    for (int s = 0; s < steps; ++s) {
        for (const auto& worker : workers_names) {
            smdebug::StepWriter w(s, worker, smdebug::Mode::TRAIN, s);
            for (const auto& n : names) w.add_tensor(n, value, 1.0);
            w.flush(store);
        }
    }
    if (end_marker) smdebug::write_end_marker(store);
}

inline void write_trial(const std::filesystem::path& dir, const TrialShape& shape, bool end_marker = true) {
    write_trial(dir, shape.steps, shape.tensors, shape.elements, end_marker, shape.workers);
}

// A trial under the temporary folder, written afresh.
inline std::filesystem::path make_trial(const std::string& name, int steps, int tensors, std::size_t elements,
                                        bool end_marker = true) {
    const auto dir = std::filesystem::temp_directory_path() / ("smdebug-bench-" + name);
    write_trial(dir, steps, tensors, elements, end_marker);
    return dir;
}

}  // namespace bench
