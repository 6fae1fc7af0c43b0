// The Hook's anomaly window (HookOptions::anomaly_window, writer/flight_recorder.hpp): steps the
// save config does not ask for are kept in memory and written only before a step that records a
// NaN or an infinity; the recorder fires again only after a finite step; its memory is bounded.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <smdebug/query/trial.hpp>
#include <smdebug/writer/flight_recorder.hpp>
#include <smdebug/writer/hook.hpp>

#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt may compile several areas as one unity translation unit.
namespace smdebug_test_flight_recorder {

using namespace smdebug;
using test::TempDir;

namespace {

HookOptions window_options(std::size_t window, std::size_t bytes = std::size_t{256} << 20) {
    HookOptions o;
    o.save_config = SaveConfig(save_config_mode(1000));
    o.include_collections = std::vector<std::string>{"weights"};
    o.anomaly_window = window;
    o.anomaly_window_bytes = bytes;
    o.background_writer = false;
    return o;
}

// A trial of a finished run (no waiting for late files after the end marker).
std::unique_ptr<Trial<LocalStore>> open_trial(const std::filesystem::path& dir) {
    TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    return std::make_unique<Trial<LocalStore>>(LocalStore(dir), o);
}

std::vector<std::int64_t> steps_of(const std::filesystem::path& dir) { return open_trial(dir)->steps(); }

}  // namespace

TEST_CASE("anomaly window: the K steps before the first non-finite value, that step, then the save config", "[writer][flight_recorder]") {
    TempDir dir;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    {
        Hook<LocalStore> hook(dir.path.string(), window_options(3));
        for (int i = 0; i < 30; ++i) {
            hook.next_step();
            CHECK_FALSE(hook.step_collections().empty());  // every step records
            const bool bad = (i >= 10 && i < 20) || i == 25;
            hook.save_tensor("fc.weight", std::vector<float>{bad ? nan : static_cast<float>(i), 1.0f});
        }
        hook.close();
    }
    // 0: the save config; 7-9 and 10: the first NaN; 11-19 stay NaN (no new window); 20-24 finite
    // re-arm the recorder; 22-24 and 25: the second NaN.
    CHECK(steps_of(dir.path) == std::vector<std::int64_t>{0, 7, 8, 9, 10, 22, 23, 24, 25});
    auto trial = open_trial(dir.path);
    CHECK(std::isnan(trial->tensor("fc.weight").value(10).as<float>().flat(0)));
    CHECK(trial->tensor("fc.weight").value(9).as<float>().flat(0) == 9.0f);
}

TEST_CASE("anomaly window: the kept steps are bounded by bytes (the oldest dropped first)", "[writer][flight_recorder]") {
    TempDir dir;
    {
        // One step of 1,000 floats is ~4 KB of event data: 6 KB keeps one step.
        Hook<LocalStore> hook(dir.path.string(), window_options(5, 6000));
        for (int i = 0; i < 8; ++i) {
            hook.next_step();
            std::vector<float> v(1000, 1.0f);
            if (i == 7) v[3] = std::numeric_limits<float>::infinity();
            hook.save_tensor("fc.weight", v);
        }
        hook.close();
    }
    CHECK(steps_of(dir.path) == std::vector<std::int64_t>{0, 6, 7});
}

TEST_CASE("anomaly window off: steps the save config does not ask for record nothing", "[writer][flight_recorder]") {
    TempDir dir;
    {
        Hook<LocalStore> hook(dir.path.string(), window_options(0));
        hook.next_step();
        CHECK_FALSE(hook.step_collections().empty());
        hook.next_step();
        CHECK(hook.step_collections().empty());
        CHECK_FALSE(hook.save_tensor("fc.weight", std::vector<float>{std::numeric_limits<float>::quiet_NaN()}));
        hook.close();
    }
    CHECK(steps_of(dir.path) == std::vector<std::int64_t>{});
}

TEST_CASE("has_non_finite: floating and complex dtypes, float16 by its bits, never integers", "[writer][flight_recorder]") {
    const float inf = std::numeric_limits<float>::infinity();
    CHECK(has_non_finite(TensorValue::from<float>(std::vector<float>{1.0f, inf}, Shape{2})));
    CHECK_FALSE(has_non_finite(TensorValue::from<double>(std::vector<double>{1.0, -2.0}, Shape{2})));
    CHECK(has_non_finite(TensorValue::from<std::complex<double>>(
        std::vector<std::complex<double>>{{1.0, std::numeric_limits<double>::quiet_NaN()}}, Shape{1})));
    CHECK_FALSE(has_non_finite(TensorValue::from<std::int32_t>(std::vector<std::int32_t>{-1, 7}, Shape{2})));
    const std::uint16_t half_inf = 0x7c00, half_one = 0x3c00;
    std::vector<std::byte> raw(4);
    std::memcpy(raw.data(), &half_one, 2);
    std::memcpy(raw.data() + 2, &half_inf, 2);
    CHECK(has_non_finite(tensor_view(raw.data(), Shape{2}, DType::float16)));
    std::memcpy(raw.data() + 2, &half_one, 2);
    CHECK_FALSE(has_non_finite(tensor_view(raw.data(), Shape{2}, DType::float16)));
}

}  // namespace smdebug_test_flight_recorder
