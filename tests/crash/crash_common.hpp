#pragma once
// What the crash-test writer saves at each step, so that the driver can check every value it reads.
#include <cstdint>
#include <string>
#include <vector>

namespace crash {

inline constexpr std::size_t weight_count = 4096;

inline std::vector<float> weights(std::int64_t step) {
    std::vector<float> w(weight_count);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(step * 10000 + static_cast<std::int64_t>(i));
    return w;
}
inline std::vector<double> bias(std::int64_t step) {
    return {static_cast<double>(step), -static_cast<double>(step), 0.5, 1e300, static_cast<double>(step) / 3, 7, 8};
}
inline std::vector<std::int64_t> counter(std::int64_t step) { return {step}; }

// Tensors of every step, by name.
inline const std::vector<std::string>& tensor_names() {
    static const std::vector<std::string> names{"bias", "counter", "weight"};
    return names;
}

}  // namespace crash
