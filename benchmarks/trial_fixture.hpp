#pragma once
// Writes synthetic trials for benchmarks: `steps` global steps, `tensors` float32 tensors each.
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <smdebug/writer/step_writer.hpp>
#include <smdebug/storage/local_store.hpp>

namespace bench {

inline std::filesystem::path make_trial(const std::string& name, int steps, int tensors, std::size_t elements,
                                        bool end_marker = true) {
    const auto dir = std::filesystem::temp_directory_path() / ("smdebug-bench-" + name);
    std::filesystem::remove_all(dir);
    smdebug::LocalStore store(dir);
    std::vector<float> data(elements);
    std::mt19937 rng(42);
    std::normal_distribution<float> dist;
    for (auto& x : data) x = dist(rng);
    const auto value = smdebug::TensorValue::from<float>(data, {elements});
    smdebug::write_collections_file(store, "worker_0", smdebug::collections_file::match_all());
    for (int s = 0; s < steps; ++s) {
        smdebug::StepWriter w(s, "worker_0", smdebug::Mode::TRAIN, s);
        for (int t = 0; t < tensors; ++t) w.add_tensor("layer" + std::to_string(t) + "/weight", value, 1.0);
        w.flush(store);
    }
    if (end_marker) smdebug::write_end_marker(store);
    return dir;
}

}  // namespace bench
