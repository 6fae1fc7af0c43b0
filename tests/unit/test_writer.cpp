// Unit tests for smdebug/writer/: Hook<Store>, save and reduction configs, the JSON hook
// configuration, collections, TensorBoard export, and round trips through Trial<LocalStore> and the
// conformance runner.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <smdebug/core/tensor_view.hpp>
#include <smdebug/format/detail/protobuf.hpp>
#include <smdebug/query/create_trial.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/writer/hook.hpp>
#include <smdebug/s3.hpp>  // the [s3rver] hook test writes s3:// out_dirs

#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_writer {

namespace fs = std::filesystem;
namespace bj = boost::json;
using namespace smdebug;
using test::TempDir;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_text(const fs::path& p, std::string_view text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

std::vector<std::uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<std::uint8_t> hex(std::string_view h) {
    std::vector<std::uint8_t> out;
    int hi = -1;
    for (char c : h) {
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) continue;
        if (hi < 0) hi = v;
        else { out.push_back(static_cast<std::uint8_t>(hi * 16 + v)); hi = -1; }
    }
    return out;
}

// Options for tests: enabled whatever USE_SMDEBUG says, every step saved.
HookOptions options(std::int64_t interval = 1) {
    HookOptions o;
    o.enabled = true;
    o.write_end_marker = true;
    o.save_config = SaveConfig(save_config_mode(interval));
    return o;
}

using test::ScopedEnv;

// Without the background writer: next_step() writes the step and throws its error at once.
HookOptions sync_options(std::int64_t interval = 1) {
    HookOptions o = options(interval);
    o.background_writer = false;
    return o;
}

// A trial of a finished run (no waiting for late files after the end marker).
std::unique_ptr<Trial<LocalStore>> open_trial(const fs::path& dir) {
    TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    return std::make_unique<Trial<LocalStore>>(LocalStore(dir), o);
}

template <class T>
std::vector<T> elements(const TensorValue& v) {
    auto e = v.elements<T>();
    return {e.begin(), e.end()};
}

// A store whose writes fail while `failures` > 0 (disk full, permission denied, S3 outage), only
// for keys starting with `prefix` when that is set.
struct FlakyState {
    int failures = 0;
    std::string prefix;
};
class FlakyStore {
public:
    FlakyStore(fs::path root, std::shared_ptr<FlakyState> state) : inner_(std::move(root)), state_(std::move(state)) {}
    std::vector<std::string> list(std::string_view p, std::string_view a = {}) const { return inner_.list(p, a); }
    ByteBuffer read(std::string_view k) const { return inner_.read(k); }
    ByteBuffer read_range(std::string_view k, std::uint64_t o, std::uint64_t n) const { return inner_.read_range(k, o, n); }
    bool exists(std::string_view k) const { return inner_.exists(k); }
    std::string describe(std::string_view k) const { return inner_.describe(k); }
    void write(std::string_view k, std::span<const std::byte> b) const {
        if (state_->failures > 0 && k.starts_with(state_->prefix)) {
            --state_->failures;
            throw StorageError("write failed for " + describe(k) + ": No space left on device");
        }
        inner_.write(k, b);
    }
    void remove(std::string_view k) const { inner_.remove(k); }

private:
    LocalStore inner_;
    std::shared_ptr<FlakyState> state_;
};
static_assert(WritableStore<FlakyStore>);

}  // namespace

// ---- save configs -----------------------------------------------------------------------------------

TEST_CASE("save configs follow docs/format.md §9.1 through the hook", "[writer][save_config]") {
    struct Case {
        const char* what;
        SaveConfigMode cfg;
        std::vector<std::int64_t> saved;  // of mode steps 0..25
    };
    auto c = GENERATE(values<Case>({
        {"interval 5", save_config_mode(5), {0, 5, 10, 15, 20, 25}},
        {"start 3 interval 5: absolute modulus", save_config_mode(5, 3), {5, 10, 15, 20, 25}},
        {"end exclusive", save_config_mode(4, 0, 12), {0, 4, 8}},
        {"save_steps union with the interval", save_config_mode(500, 0, std::nullopt, {1}), {0, 1}},
        {"save_steps bypass start/end", save_config_mode(10, 5, 15, {2, 20}), {2, 10, 20}},
        {"interval 1 from 24", save_config_mode(1, 24), {24, 25}},
    }));
    CAPTURE(c.what);
    TempDir dir;
    auto o = options();
    o.save_config = SaveConfig(c.cfg);
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.set_mode(Mode::TRAIN);
        for (int i = 0; i <= 25; ++i) {
            hook.next_step();
            hook.save_tensor("t", static_cast<double>(i));
        }
        hook.close();
    }
    auto trial = open_trial(dir.path);
    CHECK(trial->steps(Mode::TRAIN) == c.saved);
    for (auto s : c.saved) CHECK(elements<double>(trial->tensor("t").value(s, Mode::TRAIN)) == std::vector<double>{double(s)});
}

TEST_CASE("steps and modes: TRAIN x4 then EVAL x3 with save_interval 2 (docs/format.md §7)", "[writer][steps]") {
    TempDir dir;
    {
        Hook<LocalStore> hook(dir.path.string(), options(2));
        CHECK(hook.global_step() == -1);
        hook.set_mode(Mode::TRAIN);
        for (int i = 0; i < 4; ++i) {
            hook.next_step();
            CHECK(hook.mode_step() == i);
            hook.save_tensor("CrossEntropyLoss_output_0", 0.25f * i);
        }
        hook.set_mode(Mode::EVAL);
        for (int i = 0; i < 3; ++i) {
            hook.next_step();
            CHECK(hook.global_step() == 4 + i);
            CHECK(hook.step_mode() == Mode::EVAL);
            CHECK(hook.mode_step() == i);
            hook.save_tensor("CrossEntropyLoss_output_0", 1.0f);
        }
        hook.close();
    }
    for (int s : {0, 2, 4, 6}) {
        CHECK(fs::exists(dir.path / paths::event_key(s, "worker_0")));
        CHECK(fs::exists(dir.path / paths::index_key(s, "worker_0")));
    }
    for (int s : {1, 3, 5}) CHECK_FALSE(fs::exists(dir.path / paths::index_key(s, "worker_0")));
    CHECK(fs::exists(dir.path / "collections/000000000/worker_0_collections.json"));
    CHECK(fs::file_size(dir.path / "training_job_end.ts") == 0);
    auto trial = open_trial(dir.path);
    CHECK(trial->steps() == std::vector<std::int64_t>{0, 2, 4, 6});
    CHECK(trial->steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 2});
    CHECK(trial->steps(Mode::EVAL) == std::vector<std::int64_t>{0, 2});
    CHECK(trial->mode(4) == Mode::EVAL);
    CHECK(trial->mode_step(6) == 2);
    CHECK(trial->workers() == std::vector<std::string>{"worker_0"});
}

TEST_CASE("GLOBAL mode step is the global step; a mode's counter starts at its first step", "[writer][steps]") {
    TempDir dir;
    Hook<LocalStore> hook(dir.path.string(), options());
    hook.next_step();
    CHECK((hook.global_step() == 0 && hook.step_mode() == Mode::GLOBAL && hook.mode_step() == 0));
    hook.next_step();
    hook.set_mode(Mode::PREDICT);
    CHECK(hook.step_mode() == Mode::GLOBAL);  // set_mode applies at the next boundary
    hook.next_step();
    CHECK((hook.global_step() == 2 && hook.mode_step() == 0));
    hook.set_mode(Mode::GLOBAL);
    hook.next_step();
    CHECK((hook.global_step() == 3 && hook.mode_step() == 3));
    hook.set_mode(Mode::PREDICT);
    hook.next_step();
    CHECK((hook.global_step() == 4 && hook.mode_step() == 1));
    hook.close();
}

TEST_CASE("saving before the first next_step() begins step 0", "[writer][steps]") {
    TempDir dir;
    {
        Hook<LocalStore> hook(dir.path.string(), options());
        hook.save_scalar("x", 1.0);
        CHECK(hook.global_step() == 0);
        hook.next_step();
        CHECK(hook.global_step() == 1);
        hook.close();
    }
    CHECK(open_trial(dir.path)->steps() == std::vector<std::int64_t>{0});
}

TEST_CASE("gradients and optimizer_variables are never saved in EVAL or PREDICT", "[writer][save_config]") {
    TempDir dir;
    auto o = options();
    o.include_collections = std::vector<std::string>{"gradients", "weights", "optimizer_variables"};
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.collection("optimizer_variables").include_regex = {"^adam/"};
        for (Mode m : {Mode::TRAIN, Mode::EVAL, Mode::PREDICT}) {
            hook.set_mode(m);
            hook.next_step();
            CHECK(hook.save_tensor("gradient/fc.weight", std::vector<float>{1, 2}) == (m == Mode::TRAIN));
            CHECK(hook.save_tensor("adam/m", std::vector<float>{1}) == (m == Mode::TRAIN));
            CHECK(hook.save_tensor("fc.weight", std::vector<float>{3, 4}));
        }
        hook.close();
    }
    auto trial = open_trial(dir.path);
    CHECK(trial->tensor("gradient/fc.weight").steps() == std::vector<std::int64_t>{0});
    CHECK(trial->tensor("fc.weight").steps() == std::vector<std::int64_t>{0, 1, 2});
    TensorNamesQuery q;
    q.collection = "gradients";
    CHECK(trial->tensor_names(q) == std::vector<std::string>{"gradient/fc.weight"});
}

// ---- reductions -------------------------------------------------------------------------------------

TEST_CASE("reduction strings (docs/format.md §6, §9.3)", "[writer][reductions]") {
    struct Case {
        const char* text;
        std::vector<std::string> reductions, abs_reductions, norms, abs_norms;
        const char* canonical;
    };
    auto c = GENERATE(values<Case>({
        {"mean,max,l2_norm,abs_max,abs_l1_norm", {"mean", "max"}, {"max"}, {"l2"}, {"l1"}, "mean,max,l2_norm,abs_max,abs_l1_norm"},
        {" abs_l2_norm , min", {"min"}, {}, {}, {"l2"}, "min,abs_l2_norm"},
        {"max,l2_norm,abs_mean", {"max"}, {"mean"}, {"l2"}, {}, "max,l2_norm,abs_mean"},
        {"", {}, {}, {}, {}, ""},
        {"std,variance,sum,prod,l1_norm", {"std", "variance", "sum", "prod"}, {}, {"l1"}, {}, "std,variance,sum,prod,l1_norm"},
    }));
    ReductionConfig r;
    r.add_reductions_string(c.text);
    CHECK(r.reductions == c.reductions);
    CHECK(r.abs_reductions == c.abs_reductions);
    CHECK(r.norms == c.norms);
    CHECK(r.abs_norms == c.abs_norms);
    CHECK(r.reductions_string() == c.canonical);
}

namespace {
// Independent double-precision reductions of the flattened data (ddof = 0, vector norms).
double expected_reduction(std::vector<double> x, const std::string& r, bool abs) {
    if (abs) for (auto& v : x) v = std::fabs(v);
    double s = 0, p = 1, s2 = 0, l1 = 0;
    for (double v : x) { s += v; p *= v; s2 += v * v; l1 += std::fabs(v); }
    const double n = static_cast<double>(x.size()), mean = s / n;
    double ss = 0;
    for (double v : x) ss += (v - mean) * (v - mean);
    if (r == "min") return *std::min_element(x.begin(), x.end());
    if (r == "max") return *std::max_element(x.begin(), x.end());
    if (r == "mean") return mean;
    if (r == "sum") return s;
    if (r == "prod") return p;
    if (r == "variance") return ss / n;
    if (r == "std") return std::sqrt(ss / n);
    if (r == "l1") return l1;
    if (r == "l2") return std::sqrt(s2);
    throw std::logic_error(r);
}
}  // namespace

TEST_CASE("stored reductions: values in double, float64 [1], names and docs/format.md §9.3 order", "[writer][reductions]") {
    const std::string red = GENERATE("min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2");
    const bool abs = GENERATE(false, true);
    CAPTURE(red, abs);
    TempDir dir;
    const xt::xarray<float> w = {{1.5f, -2.0f, 3.25f}, {-0.5f, 4.0f, -6.0f}};
    auto o = options();
    CollectionSettings cs;
    cs.name = "weights";
    ReductionConfig rc;
    const bool norm = red == "l1" || red == "l2";
    (norm ? (abs ? rc.abs_norms : rc.norms) : (abs ? rc.abs_reductions : rc.reductions)).push_back(red);
    rc.save_raw_tensor = true;
    cs.reduction_config = rc;
    o.collections.push_back(cs);
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.next_step();
        CHECK(hook.save_tensor("fc.weight", w));
        hook.close();
    }
    const std::vector<double> data(w.begin(), w.end());
    auto trial = open_trial(dir.path);
    auto t = trial->tensor("fc.weight");
    CHECK(t.reduction_value(0, red, {}, abs) == Approx(expected_reduction(data, red, abs)).epsilon(1e-12));
    const auto idx = index_file::parse(slurp(dir.path / paths::index_key(0, "worker_0")), "index");
    REQUIRE(idx.tensors.size() == 2);
    CHECK(idx.tensors[0].name == reduction_tensor_name("fc.weight", red, abs));
    CHECK(idx.tensors[1].name == "fc.weight");
    // the stored record is a float64 of shape [1]
    const auto ev = slurp(dir.path / paths::event_key(0, "worker_0"));
    auto buf = std::make_shared<ByteBuffer>(ByteBuffer::copy_of(std::string_view(ev).substr(idx.tensors[0].start, idx.tensors[0].length)));
    const auto rec = tfrecord::parse(buf->bytes(), "record");
    const auto decoded = event::decode(buf, rec.payload, "record");
    CHECK(decoded.value.dtype() == DType::float64);
    CHECK(decoded.value.shape() == Shape{1});
}

TEST_CASE("reductions of several collections: each (name, abs) once, reductions, norms, abs, abs norms", "[writer][reductions]") {
    TempDir dir;
    auto o = options();
    CollectionSettings a;
    a.name = "weights";
    a.reduction_config.emplace();
    a.reduction_config->add_reductions_string("abs_l1_norm,max,l2_norm,abs_min");
    CollectionSettings b;
    b.name = "mine";
    b.include_regex = {"fc"};
    b.reduction_config.emplace();
    b.reduction_config->add_reductions_string("max,mean,abs_min");
    b.reduction_config->save_shape = true;
    o.collections = {a, b};
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.next_step();
        hook.save_tensor("fc.weight", std::vector<double>{1, -2, 3});
        hook.close();
    }
    const auto idx = index_file::parse(slurp(dir.path / paths::index_key(0, "worker_0")), "index");
    std::vector<std::string> names;
    for (const auto& e : idx.tensors) names.push_back(e.name);
    // collections in name order ("mine" < "weights"); no raw tensor (neither saves raw), shape recorded
    CHECK(names == std::vector<std::string>{"smdebug/reductions/max/fc.weight", "smdebug/reductions/mean/fc.weight",
                                            "smdebug/reductions/abs_min/fc.weight", "smdebug/reductions/l2/fc.weight",
                                            "smdebug/reductions/abs_l1/fc.weight"});
    REQUIRE(idx.shapes.size() == 1);
    CHECK(idx.shapes[0].shape == std::vector<std::int64_t>{3});
    auto trial = open_trial(dir.path);
    CHECK_THROWS_AS(trial->tensor("fc.weight").value(0), TensorUnavailableForStep);
    CHECK(trial->tensor("fc.weight").shape(0) == Shape{3});
    CHECK(trial->tensor("fc.weight").reduction_value(0, "l1", {}, true) == 6.0);
}

TEST_CASE("losses are raw-only: no reductions, no histograms", "[writer][reductions]") {
    TempDir dir;
    auto o = options();
    o.reduction_config.emplace();
    o.reduction_config->add_reductions_string("max");
    o.include_collections = std::vector<std::string>{"weights"};
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.next_step();
        hook.save_tensor("MSELoss_output_0", 2.5);
        hook.save_tensor("fc.weight", std::vector<double>{1, 2});
        hook.close();
    }
    const auto idx = index_file::parse(slurp(dir.path / paths::index_key(0, "worker_0")), "index");
    REQUIRE(idx.tensors.size() == 2);
    CHECK(idx.tensors[0].name == "MSELoss_output_0");
    CHECK(idx.tensors[1].name == "smdebug/reductions/max/fc.weight");  // hook config: reductions, no raw
}

// ---- values and dtypes --------------------------------------------------------------------------------

TEST_CASE("round trip of every dtype through Trial<LocalStore>", "[writer][roundtrip]") {
    TempDir dir;
    const std::vector<float16> f16 = {float16(1.5f), float16(-0.25f), float16(65504.0f)};
    const std::vector<float> f32 = {1.0f, -2.0f, std::numeric_limits<float>::infinity(), 1e-40f};
    const std::vector<double> f64 = {0.1, -0.0, 1e300};
    const std::vector<std::int8_t> i8 = {-128, -1, 0, 127};
    const std::vector<std::int16_t> i16 = {-32768, 1, 32767};
    const std::vector<std::int32_t> i32 = {INT32_MIN, 7, INT32_MAX};
    const std::vector<std::int64_t> i64 = {INT64_MIN, 7, INT64_MAX};
    const std::vector<std::uint8_t> u8 = {0, 255};
    const std::vector<std::uint16_t> u16 = {0, 65535};
    const std::vector<std::uint32_t> u32 = {0, 4294967295u};
    const std::vector<std::uint64_t> u64 = {0, UINT64_MAX};
    const std::array<bool, 3> b = {true, false, true};
    const std::vector<std::complex<float>> c64 = {{1, 2}, {-3, 0.5}};
    const std::vector<std::complex<double>> c128 = {{1e-3, -2}, {0, 1}};
    const std::vector<std::string> strs = {"hi", "", "ünïcode"};
    {
        Hook<LocalStore> hook(dir.path.string(), options());
        hook.set_mode(Mode::PREDICT);
        hook.next_step();
        hook.next_step();
        hook.save_tensor("f16", f16);
        hook.save_tensor("f32", f32);
        hook.save_tensor("f64", f64);
        hook.save_tensor("i8", i8);
        hook.save_tensor("i16", i16);
        hook.save_tensor("i32", i32);
        hook.save_tensor("i64", i64);
        hook.save_tensor("u8", u8);
        hook.save_tensor("u16", u16);
        hook.save_tensor("u32", u32);
        hook.save_tensor("u64", u64);
        hook.save_tensor("bool", b);
        hook.save_tensor("c64", c64);
        hook.save_tensor("c128", c128);
        hook.save_tensor("str", strs);
        hook.close();
    }
    auto trial = open_trial(dir.path);
    CHECK(trial->steps(Mode::PREDICT) == std::vector<std::int64_t>{1});
    auto v = [&](const char* n) { return trial->tensor(n).value(1, Mode::PREDICT); };
    CHECK(v("f16").dtype() == DType::float16);
    CHECK((v("f16").as<float>() == xt::xarray<float>{1.5f, -0.25f, 65504.0f}));
    CHECK(elements<float>(v("f32")) == f32);
    CHECK(elements<double>(v("f64")) == f64);
    CHECK(std::signbit(elements<double>(v("f64"))[1]));
    CHECK(elements<std::int8_t>(v("i8")) == i8);
    CHECK(elements<std::int16_t>(v("i16")) == i16);
    CHECK(elements<std::int32_t>(v("i32")) == i32);
    CHECK(elements<std::int64_t>(v("i64")) == i64);
    CHECK(elements<std::uint8_t>(v("u8")) == u8);
    CHECK(elements<std::uint16_t>(v("u16")) == u16);
    CHECK(elements<std::uint32_t>(v("u32")) == u32);
    CHECK(elements<std::uint64_t>(v("u64")) == u64);
    CHECK(elements<bool>(v("bool")) == std::vector<bool>{true, false, true});
    CHECK(elements<std::complex<float>>(v("c64")) == c64);
    CHECK(elements<std::complex<double>>(v("c128")) == c128);
    CHECK(v("str").strings() == strs);
    CHECK(v("str").shape() == Shape{3});
}

TEST_CASE("save_tensor accepts expressions, views, containers, scalars and raw memory", "[writer][roundtrip]") {
    TempDir dir;
    const xt::xarray<double> a = {{1, 2, 3}, {4, 5, 6}};
    const xt::xarray<double, xt::layout_type::column_major> cm = a;
    const xt::xtensor<std::int32_t, 3> cube = xt::reshape_view(xt::arange<std::int32_t>(24), {2, 3, 4});
    const xt::xarray<float> zero_d = xt::xarray<float>::from_shape({});
    const float raw[6] = {6, 5, 4, 3, 2, 1};
    {
        Hook<LocalStore> hook(dir.path.string(), options());
        hook.next_step();
        hook.save_tensor("expr", a * 2.0 + 1.0);             // lazy expression: evaluated
        hook.save_tensor("transposed", xt::transpose(a));    // strided view: copied row-major
        hook.save_tensor("column_major", cm);                // column-major container: row-major on disk
        hook.save_tensor("row", xt::view(a, 1, xt::all()));  // contiguous view: no copy
        hook.save_tensor("cube", cube);
        hook.save_tensor("scalar_d", 2.5);                   // single element: shape [1]
        hook.save_tensor("scalar_i", std::int64_t{7});
        hook.save_tensor("zero_d", zero_d);                  // 0-d stays 0-d
        hook.save_tensor("raw", raw, Shape{2, 3});
        hook.save_tensor("raw_void", static_cast<const void*>(raw), Shape{3, 2}, DType::float32);
        hook.save_tensor("vecbool", std::vector<bool>{true, false});
        hook.save_tensor("tv", TensorValue::from<std::uint16_t>(std::vector<std::uint16_t>{9, 8}, {2, 1}));
        hook.save_tensor("one_string", std::string_view("solo"));
        hook.close();
    }
    auto trial = open_trial(dir.path);
    auto v = [&](const char* n) { return trial->tensor(n).value(0); };
    CHECK((v("expr").as<double>() == xt::xarray<double>{{3, 5, 7}, {9, 11, 13}}));
    CHECK((v("transposed").as<double>() == xt::xarray<double>{{1, 4}, {2, 5}, {3, 6}}));
    CHECK((v("column_major").as<double>() == a));
    CHECK(elements<double>(v("column_major")) == std::vector<double>{1, 2, 3, 4, 5, 6});
    CHECK((v("row").as<double>() == xt::xarray<double>{4, 5, 6}));
    CHECK(v("cube").shape() == Shape{2, 3, 4});
    CHECK(elements<std::int32_t>(v("cube"))[23] == 23);
    CHECK((v("scalar_d").shape() == Shape{1} && v("scalar_d").dtype() == DType::float64));
    CHECK((v("scalar_i").shape() == Shape{1} && v("scalar_i").dtype() == DType::int64));
    CHECK((v("zero_d").shape() == Shape{} && v("zero_d").size() == 1));
    CHECK((v("raw").as<float>() == xt::xarray<float>{{6, 5, 4}, {3, 2, 1}}));
    CHECK(v("raw_void").shape() == Shape{3, 2});
    CHECK(elements<bool>(v("vecbool")) == std::vector<bool>{true, false});
    CHECK((v("tv").dtype() == DType::uint16 && v("tv").shape() == Shape{2, 1}));
    CHECK(v("one_string").strings() == std::vector<std::string>{"solo"});
}

TEST_CASE("empty tensors record their shape instead of a value; strings must be 1-D", "[writer][roundtrip]") {
    TempDir dir;
    {
        Hook<LocalStore> hook(dir.path.string(), options());
        hook.next_step();
        CHECK(hook.save_tensor("empty", xt::xarray<float>::from_shape({2, 0})));
        CHECK_THROWS_AS(hook.save_tensor("s2", TensorValue(Shape{1, 1}, {"x"})), UsageError);
        hook.close();
    }
    const auto idx = index_file::parse(slurp(dir.path / paths::index_key(0, "worker_0")), "index");
    CHECK(idx.tensors.empty());
    REQUIRE(idx.shapes.size() == 1);
    CHECK(idx.shapes[0].shape == std::vector<std::int64_t>{2, 0});
    CHECK_FALSE(idx.event_file_name);
    auto trial = open_trial(dir.path);
    CHECK(trial->tensor("empty").shape(0) == Shape{2, 0});
}

TEST_CASE("save_scalar: scalar/<name>, shape [1], written whatever the save config", "[writer][scalars]") {
    TempDir dir;
    {
        Hook<LocalStore> hook(dir.path.string(), options(1000));
        hook.set_mode(Mode::TRAIN);
        for (int i = 0; i < 4; ++i) {
            hook.next_step();
            hook.save_scalar("lr", 0.1 * i);
            hook.save_scalar("count", std::int32_t{i}, 1700000000.0 + i);
            hook.save_scalar("lr", 0.5 * i);  // same step: replaces
            hook.save_tensor("CrossEntropyLoss_output_0", 1.0f);  // not saved: interval 1000 (except step 0)
        }
        hook.close();
    }
    auto trial = open_trial(dir.path);
    CHECK(trial->steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 1, 2, 3});
    CHECK(trial->tensor("CrossEntropyLoss_output_0").steps() == std::vector<std::int64_t>{0});
    for (int i = 0; i < 4; ++i) {
        const auto lr = trial->tensor("scalar/lr").value(i, Mode::TRAIN);
        CHECK((lr.dtype() == DType::float64 && lr.shape() == Shape{1} && elements<double>(lr)[0] == 0.5 * i));
        CHECK(elements<std::int32_t>(trial->tensor("scalar/count").value(i))[0] == i);
    }
    // the explicit timestamp is the record's wall time
    const auto ev = slurp(dir.path / paths::event_key(2, "worker_0"));
    auto buf = std::make_shared<ByteBuffer>(ByteBuffer::copy_of(ev));
    tfrecord::Scanner sc(buf->bytes(), "events");
    tfrecord::Record r;
    std::map<std::string, double> wall;
    while (sc.next(r)) {
        const auto d = event::decode(buf, r.payload, "event");
        wall[d.tag] = d.wall_time;
    }
    CHECK(wall.at("scalar/count") == 1700000002.0);
}

TEST_CASE("shapes: not next to a saved raw value unless asked; shape-only index files (docs/format.md §4, §10)", "[writer][shapes]") {
    const bool force = GENERATE(false, true);
    TempDir dir;
    auto o = options();
    o.record_shape_with_raw_value = force;
    CollectionSettings w;
    w.name = "weights";
    w.reduction_config.emplace();
    w.reduction_config->save_raw_tensor = true;
    w.reduction_config->save_shape = true;
    CollectionSettings s;
    s.name = "biases";
    s.reduction_config.emplace();
    s.reduction_config->save_shape = true;  // shape only
    o.collections = {w, s};
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.next_step();
        hook.save_tensor("fc.weight", xt::xarray<float>{{1, 2, 3}});
        hook.next_step();
        hook.save_tensor("fc.bias", std::vector<float>{1, 2});
        hook.close();
    }
    const auto i0 = index_file::parse(slurp(dir.path / paths::index_key(0, "worker_0")), "index");
    CHECK(i0.tensors.size() == 1);
    CHECK(i0.shapes.size() == (force ? 1u : 0u));
    const auto text1 = slurp(dir.path / paths::index_key(1, "worker_0"));
    CHECK(text1 == R"({"meta": {"mode": "GLOBAL", "mode_step": 1}, "tensor_payload": [], "shape_payload": [{"tensorname": "fc.bias", "originalname": "fc.bias", "shape": [2]}]})");
    CHECK_FALSE(fs::exists(dir.path / paths::event_key(1, "worker_0")));
    auto trial = open_trial(dir.path);
    CHECK(trial->tensor("fc.weight").value(0).shape() == Shape{1, 3});
    CHECK(trial->tensor("fc.weight").shape(0) == Shape{1, 3});
    CHECK(trial->tensor("fc.bias").shape(1) == Shape{2});
}

// ---- byte and JSON layout ------------------------------------------------------------------------------

TEST_CASE("the records of docs/format.md §3.2 are byte-identical", "[writer][bytes]") {
    TempDir dir;
    auto o = options();
    o.clock = [] { return 1700000000.5; };
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.set_mode(Mode::EVAL);
        for (int i = 0; i < 3; ++i) hook.next_step();  // global 0..2
        hook.set_mode(Mode::TRAIN);
        for (int i = 0; i < 3; ++i) hook.next_step();  // global 3..5 = TRAIN 0..2
        REQUIRE((hook.global_step() == 5 && hook.mode_step() == 2));
        hook.save_tensor("w", std::vector<float>{1.0f, -2.0f});
        hook.save_tensor("loss", xt::xarray<float>(0.5f));
        hook.save_tensor("s", std::vector<std::string>{"hi"});
        hook.save_tensor("b", std::array<bool, 2>{true, false});
        hook.close();
    }
    CHECK(fs::is_directory(dir.path / "events"));
    const auto ev = bytes_of(slurp(dir.path / "events/000000000005/000000000005_worker_0.tfevents"));
    REQUIRE(ev.size() == 88 + 78 + 80 + 82);
    const auto record1 = hex(R"(
        48 00 00 00 00 00 00 00  fe 92 48 9d  09 00 00 20 40 fc 54 d9 41  10 05  2a 3b  0a 39  0a 01 77  42 17
        08 01  12 09 12 07 08 02 12 03 77 5f 32  22 08 00 00 80 3f 00 00 00 c0
        4a 1b 0a 0e 0a 09 6d 6f 64 65 5f 73 74 65 70 12 01 32 0a 09 0a 04 6d 6f 64 65 12 01 31  b3 c0 2d 06)");
    CHECK(std::vector<std::uint8_t>(ev.begin(), ev.begin() + 88) == record1);
    const auto wall_step = hex("09 00 00 20 40 fc 54 d9 41 10 05");
    const auto meta = hex("4a 1b 0a 0e 0a 09 6d 6f 64 65 5f 73 74 65 70 12 01 32 0a 09 0a 04 6d 6f 64 65 12 01 31");
    auto payload = [&](std::size_t off, std::size_t len) { return std::vector<std::uint8_t>(ev.begin() + off + 12, ev.begin() + off + 12 + len); };
    auto concat = [](std::initializer_list<std::vector<std::uint8_t>> parts) {
        std::vector<std::uint8_t> out;
        for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
        return out;
    };
    CHECK(payload(88, 62) == concat({wall_step, hex("2a 31 0a 2f 0a 04 6c 6f 73 73 42 0a 08 01 12 00 22 04 00 00 00 3f"), meta}));
    CHECK(payload(166, 64) == concat({wall_step, hex("2a 33 0a 31 0a 01 73 42 0f 12 09 12 07 08 01 12 03 73 5f 31 42 02 68 69"), meta}));
    CHECK(payload(246, 66) == concat({wall_step, hex("2a 35 0a 33 0a 01 62 42 11 08 0a 12 09 12 07 08 02 12 03 62 5f 32 22 02 01 00"), meta}));
    for (auto [off, size] : {std::pair{88, 78}, {166, 80}, {246, 82}})
        CHECK(std::vector<std::uint8_t>(ev.begin() + off + size - 4, ev.begin() + off + size) == hex("b3 c0 2d 06"));
    auto buf = ByteBuffer::copy_of(std::string_view(reinterpret_cast<const char*>(ev.data()), ev.size()));
    tfrecord::Scanner sc(buf.bytes(), "events");
    tfrecord::Record r;
    int n = 0;
    while (sc.next(r)) ++n;  // length CRCs valid
    CHECK(n == 4);
    auto crc = [&](std::size_t off, std::size_t size) {  // the payload's CRC-32C, which smdebug-cpp adds to each entry
        return std::to_string(crc32c(std::as_bytes(std::span<const std::uint8_t>(ev.data() + off + 12, size - 16))));
    };
    CHECK(slurp(dir.path / "index/000000000/000000000005_worker_0.json") ==
          R"({"meta": {"mode": "TRAIN", "mode_step": 2, "event_file_name": "events/000000000005/000000000005_worker_0.tfevents"}, )"
          R"("tensor_payload": [{"tensorname": "w", "start_idx": 0, "length": 88, "payload_crc32c": )" + crc(0, 88) +
              R"(}, {"tensorname": "loss", "start_idx": 88, "length": 78, "payload_crc32c": )" + crc(88, 78) +
              R"(}, {"tensorname": "s", "start_idx": 166, "length": 80, "payload_crc32c": )" + crc(166, 80) +
              R"(}, {"tensorname": "b", "start_idx": 246, "length": 82, "payload_crc32c": )" + crc(246, 82) + R"(}], "shape_payload": []})");
}

TEST_CASE("index and collections JSON of the docs/format.md §4 / §6 run", "[writer][json]") {
    TempDir dir;
    auto o = options();
    o.include_collections = std::vector<std::string>{"weights", "biases"};
    CollectionSettings biases;
    biases.name = "biases";
    biases.reduction_config.emplace();
    biases.reduction_config->reductions = {"max"};
    biases.reduction_config->abs_norms = {"l2"};
    biases.reduction_config->save_shape = true;
    o.collections = {biases};
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.set_mode(Mode::TRAIN);
        for (int i = 0; i < 2; ++i) {
            hook.next_step();
            hook.save_tensor("Net_fc.weight", xt::xarray<float>{{0.5f, -0.25f}});
            hook.save_tensor("Net_fc.bias", std::vector<float>{0.125f});
            hook.save_tensor("MSELoss_output_0", xt::xarray<float>(1.5f));
        }
        hook.close();
    }
    // record sizes from the event file, in order
    const auto ev = slurp(dir.path / paths::event_key(1, "worker_0"));
    std::vector<std::size_t> sizes;
    tfrecord::Scanner sc(std::as_bytes(std::span<const char>(ev.data(), ev.size())), "events");
    tfrecord::Record r;
    while (sc.next(r)) sizes.push_back(r.size);
    REQUIRE(sizes.size() == 4);
    std::vector<std::size_t> start{0};
    for (auto s : sizes) start.push_back(start.back() + s);
    auto entry = [&](const char* name, int i) {
        const auto payload_crc = crc32c(std::string_view(ev).substr(start[i] + tfrecord::header_size, sizes[i] - tfrecord::overhead));
        return "{\"tensorname\": \"" + std::string(name) + "\", \"start_idx\": " + std::to_string(start[i]) + ", \"length\": " +
               std::to_string(sizes[i]) + ", \"payload_crc32c\": " + std::to_string(payload_crc) + "}";
    };
    CHECK(slurp(dir.path / "index/000000000/000000000001_worker_0.json") ==
          R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": "events/000000000001/000000000001_worker_0.tfevents"}, "tensor_payload": [)" +
              entry("Net_fc.weight", 0) + ", " + entry("smdebug/reductions/max/Net_fc.bias", 1) + ", " +
              entry("smdebug/reductions/abs_l2/Net_fc.bias", 2) + ", " + entry("MSELoss_output_0", 3) +
              R"(], "shape_payload": [{"tensorname": "Net_fc.bias", "originalname": "Net_fc.bias", "shape": [1]}]})");
    const std::string every_step = R"({"TRAIN": {"save_interval": 1, "save_steps": [], "start_step": 0, "end_step": null}, )"
                                   R"("EVAL": {"save_interval": 1, "save_steps": [], "start_step": 0, "end_step": null}, )"
                                   R"("PREDICT": {"save_interval": 1, "save_steps": [], "start_step": 0, "end_step": null}, )"
                                   R"("GLOBAL": {"save_interval": 1, "save_steps": [], "start_step": 0, "end_step": null}})";
    const auto colls = slurp(dir.path / "collections/000000000/worker_0_collections.json");
    CHECK(colls.starts_with(R"({"collections": {"all": {"name": "all", "include_regex": [], )"));
    CHECK(colls.ends_with(R"(}, "_meta": {"num_workers": 1}})"));
    CHECK(colls.find(R"("biases": {"name": "biases", "include_regex": ["^(?!gradient).*bias"], "tensor_names": ["Net_fc.bias"], )"
                     R"("reduction_config": {"save_raw_tensor": false, "reductions": "max,abs_l2_norm", "save_shape": true}, "save_config": )" +
                     every_step + R"(, "save_histogram": true})") != std::string::npos);
    CHECK(colls.find(R"("losses": {"name": "losses", "include_regex": ["[Ll]oss_(?!input).*output"], "tensor_names": ["MSELoss_output_0"], )"
                     R"("reduction_config": {"save_raw_tensor": true, "reductions": "", "save_shape": false}, "save_config": )" +
                     every_step + R"(, "save_histogram": false})") != std::string::npos);
    const auto parsed = collections_file::parse(colls, "collections");
    std::vector<std::string> names;
    for (const auto& c : parsed.collections) names.push_back(c.name);
    CHECK(names == std::vector<std::string>{"all", "biases", "default", "gradients", "losses", "weights"});
}

// Issue 46 §9: smdebug's TFRecord footer is a constant, so only the payload CRC-32C of the index
// entry sees a changed byte inside a stored value.
TEST_CASE("payload CRC-32C in index entries: a changed value fails every read and verify, naming the tensor", "[writer][integrity][cli]") {
    TempDir dir;
    auto o = options();
    o.include_collections = std::vector<std::string>{"weights"};
    const float first = -1.625870943f;
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        for (int i = 0; i < 2; ++i) {
            hook.next_step();
            hook.save_tensor("Net_fc.weight", std::vector<float>{first, 0.5f, 0.25f, 0.125f});
        }
        hook.close();
    }
    const auto index_text = slurp(dir.path / paths::index_key(1, "worker_0"));
    const auto index = index_file::parse(index_text, "index");
    REQUIRE(index.tensors.size() == 1);
    const auto& e = index.tensors[0];
    const auto event_path = dir.path / paths::event_key(1, "worker_0");
    auto ev = slurp(event_path);
    REQUIRE(e.payload_crc32c);
    CHECK(*e.payload_crc32c == crc32c(std::string_view(ev).substr(e.start + tfrecord::header_size, e.length - tfrecord::overhead)));
    CHECK(index_file::parse_dom(index_text, "index").tensors[0].payload_crc32c == e.payload_crc32c);  // scanner and DOM agree
    CHECK(index_file::serialize(index) == index_text);
    CHECK(elements<float>(open_trial(dir.path)->tensor("Net_fc.weight").value(1))[0] == first);

    // One bit of the stored float changes: the TFRecord framing cannot see it (its footer is smdebug's constant).
    const auto at = ev.find(std::string_view(reinterpret_cast<const char*>(&first), sizeof first), e.start);
    REQUIRE(at < e.start + e.length);
    ev[at] = static_cast<char>(ev[at] ^ 0x01);
    write_text(event_path, ev);
    CHECK_NOTHROW(tfrecord::parse(std::as_bytes(std::span<const char>(ev.data() + e.start, e.length)), "record"));
    auto trial = open_trial(dir.path);
    try {
        (void)trial->tensor("Net_fc.weight").value(1);
        FAIL("a changed payload must not read");
    } catch (const PayloadChecksumMismatch& x) {
        CHECK_THAT(x.what(), Catch::Contains("tensor 'Net_fc.weight' at step 1") && Catch::Contains("000000000001_worker_0.tfevents") &&
                                 Catch::Contains("CRC-32C"));
    }
    CHECK(elements<float>(trial->tensor("Net_fc.weight").value(0))[0] == first);  // the other step is intact
#ifdef SMDEBUG_BIN_DIR
    const auto r = test::run_cli("verify " + test::shell_quote(dir.path.string()));
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::Contains("tensor Net_fc.weight") && Catch::Contains("step 1") && Catch::Contains("CRC-32C"));
    CHECK_THAT(r.out, Catch::Contains("payload checksums 2 of 2 records"));
    const auto value = test::run_cli("value " + test::shell_quote(dir.path.string()) + " Net_fc.weight 1");
    CHECK(value.status == 1);
    CHECK_THAT(value.err, Catch::Contains("Net_fc.weight"));
    // A trial the Python smdebug wrote still verifies, and says that nothing there can see a changed value.
    const auto py = test::run_cli("verify " + test::shell_quote((fs::path(SMDEBUG_TEST_DATA_DIR) / "conformance" / "cases" / "pt_train_eval" / "trial").string()));
    CHECK(py.status == 0);
    CHECK_THAT(py.out, Catch::Contains("payload checksums none: a changed byte inside a stored value cannot be detected"));
#endif
}

// ---- JSON hook configuration ------------------------------------------------------------------------------

namespace {
const char* kFormatExample = R"({
  "LocalPath": "LOCAL_PATH",
  "S3OutputPath": "s3://ignored/prefix",
  "HookParameters": {"save_interval": "2", "eval.save_interval": "1",
                     "save_steps": "1, 5", "end_step": "6",
                     "reductions": "max,l2_norm,abs_mean", "save_raw_tensor": true,
                     "include_regex": "fc1_output_0, relu"},
  "CollectionConfigurations": [
    {"CollectionName": "weights", "CollectionParameters": {"train.save_steps": "3", "save_histogram": "false"}},
    {"CollectionName": "custom",  "CollectionParameters": {"include_regex": "fc2", "reductions": "min", "save_shape": true}},
    {"CollectionName": "losses"}
  ]
})";

std::string with_path(std::string text, const fs::path& p) {
    text.replace(text.find("LOCAL_PATH"), 10, p.string());
    return text;
}
}  // namespace

TEST_CASE("JSON hook configuration: the docs/format.md §9.4 example saves the documented steps", "[writer][json_config]") {
    TempDir dir;
    const auto out = dir.path / "trial";
    const auto cfg_path = dir.path / "debughookconfig.json";
    write_text(cfg_path, with_path(kFormatExample, out));
    ScopedEnv env("SMDEBUG_CONFIG_FILE_PATH", cfg_path.c_str());
    ScopedEnv use("USE_SMDEBUG", nullptr);
    ScopedEnv job("TRAINING_JOB_NAME", nullptr);
    {
        auto hook = Hook<AnyStore>::create_from_json_file();
        CHECK(hook->out_dir() == out.string());
        hook->set_mode(Mode::TRAIN);
        for (int i = 0; i < 8; ++i) {
            hook->next_step();
            hook->save_tensor("fc1_output_0", std::vector<float>{1.0f * i, -2.0f});
            hook->save_tensor("relu_output_0", std::vector<float>{2.0f});
            hook->save_tensor("fc1.weight", std::vector<float>{0.5f, 1.5f});
            hook->save_tensor("fc2_output_0", std::vector<float>{3.0f, -4.0f});
            hook->save_tensor("MSELoss_output_0", 0.5f);
        }
        hook->set_mode(Mode::EVAL);
        for (int i = 0; i < 3; ++i) {
            hook->next_step();
            hook->save_tensor("fc1_output_0", std::vector<float>{1.0f, 2.0f});
            hook->save_tensor("fc1.weight", std::vector<float>{0.5f, 1.5f});
        }
        hook->close();
    }
    auto trial = open_trial(out);
    CHECK(trial->tensor("fc1_output_0").steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 1, 2, 4, 5});
    CHECK(trial->tensor("relu_output_0").steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 1, 2, 4, 5});
    CHECK(trial->tensor("fc1.weight").steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 2, 3, 4});
    CHECK(trial->tensor("MSELoss_output_0").steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 1, 2, 4, 5});
    CHECK(trial->tensor("fc2_output_0").steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 1, 2, 4, 5});
    CHECK(trial->tensor("fc1_output_0").steps(Mode::EVAL) == std::vector<std::int64_t>{0, 1, 2});
    CHECK(trial->tensor("fc1.weight").steps(Mode::EVAL) == std::vector<std::int64_t>{0, 1, 2});
    // hook reductions + raw for `default` and `weights`; `custom`: min + shape, no raw
    auto t = trial->tensor("fc1_output_0");
    CHECK(elements<float>(t.value(4, Mode::TRAIN)) == std::vector<float>{4.0f, -2.0f});
    CHECK(t.reduction_value(4, "max", StepQuery{Mode::TRAIN, std::nullopt}) == 4.0);
    CHECK(t.reduction_value(4, "l2", StepQuery{Mode::TRAIN, std::nullopt}) == Approx(std::sqrt(20.0)));
    CHECK(t.reduction_value(4, "mean", StepQuery{Mode::TRAIN, std::nullopt}, true) == 3.0);
    auto c = trial->tensor("fc2_output_0");
    CHECK_THROWS_AS(c.value(0, Mode::TRAIN), TensorUnavailableForStep);
    CHECK(c.reduction_value(0, "min", StepQuery{Mode::TRAIN, std::nullopt}) == -4.0);
    CHECK(c.shape(0, StepQuery{Mode::TRAIN, std::nullopt}) == Shape{2});
    // the collections file carries the merged configs
    const auto& w = trial->collection("weights");
    CHECK(w.save_histogram == false);
    CHECK((*w.save_config)[Mode::TRAIN]->save_steps == std::vector<std::int64_t>{3});
    CHECK((*w.save_config)[Mode::EVAL]->save_interval == 1);
    CHECK((*w.save_config)[Mode::EVAL]->save_steps == std::vector<std::int64_t>{1, 5});
    CHECK(w.reduction_config->reductions_string() == "max,l2_norm,abs_mean");
    CHECK(trial->collection("custom").reduction_config->save_raw_tensor == false);
    CHECK(trial->collection("custom").reduction_config->save_shape == true);
    CHECK(trial->collection("default").include_regex == std::vector<std::string>{"fc1_output_0", "relu"});
}

TEST_CASE("JSON hook configuration: merge rules and typed values", "[writer][json_config]") {
    ScopedEnv job("TRAINING_JOB_NAME", nullptr);
    SECTION("a collection's un-prefixed key overrides the hook's mode-prefixed key") {
        const auto cfg = parse_hook_config(R"({"HookParameters": {"save_interval": 2, "eval.save_interval": "3", "global.start_step": "4"},
            "CollectionConfigurations": [{"CollectionName": "weights", "CollectionParameters": {"save_interval": "7", "predict.save_interval": 9}},
                                         {"CollectionName": "biases", "CollectionParameters": null}]})");
        CHECK(cfg.out_dir == "/opt/ml/output/tensors");
        CHECK(cfg.options.save_config[Mode::TRAIN]->save_interval == 2);
        CHECK(cfg.options.save_config[Mode::EVAL]->save_interval == 3);
        CHECK(cfg.options.save_config[Mode::GLOBAL]->start_step == 4);
        REQUIRE(cfg.options.collections.size() == 2);
        const auto& w = *cfg.options.collections[0].save_config;
        CHECK(w[Mode::TRAIN]->save_interval == 7);
        CHECK(w[Mode::EVAL]->save_interval == 7);
        CHECK(w[Mode::PREDICT]->save_interval == 9);
        CHECK(w[Mode::GLOBAL]->start_step == 4);
        const auto& b = *cfg.options.collections[1].save_config;
        CHECK(b[Mode::EVAL]->save_interval == 3);
        CHECK(*cfg.options.include_collections == std::vector<std::string>{"weights", "biases"});
        CHECK_FALSE(cfg.options.reduction_config);
    }
    SECTION("save_raw_tensor and save_shape are read only with reductions, and default to false") {
        const auto cfg = parse_hook_config(R"({"HookParameters": {"reductions": "min"}})");
        REQUIRE(cfg.options.reduction_config);
        CHECK(cfg.options.reduction_config->save_raw_tensor == false);
        CHECK(parse_hook_config(R"({"HookParameters": {"save_raw_tensor": false}})").options.reduction_config == std::nullopt);
    }
    SECTION("booleans and lists") {
        const auto cfg = parse_hook_config(R"({"LocalPath": "/x", "HookParameters": {"save_all": "True", "include_workers": "all",
            "export_tensorboard": "true", "tensorboard_dir": "/tb", "include_regex": "a, b ,c", "end_step": null}, "CollectionConfigurations": null})");
        CHECK(cfg.options.save_all);
        CHECK(cfg.options.include_workers == IncludeWorkers::all);
        CHECK(cfg.options.export_tensorboard);
        CHECK(cfg.options.tensorboard_dir == "/tb");
        CHECK(*cfg.options.include_regex == std::vector<std::string>{"a", "b", "c"});
        CHECK_FALSE(cfg.options.include_collections);
    }
    SECTION("invalid values raise SMDebugValueError") {
        CHECK_THROWS_AS(parse_hook_config(R"({"HookParameters": {"reductions": "min", "save_raw_tensor": "true"}})"), SMDebugValueError);
        CHECK_THROWS_AS(parse_hook_config(R"({"HookParameters": {"reductions": "median"}})"), SMDebugValueError);
        CHECK_THROWS_AS(parse_hook_config(R"({"HookParameters": {"save_interval": "two"}})"), SMDebugValueError);
        CHECK_THROWS_AS(parse_hook_config(R"({"HookParameters": {"save_steps": "1,,2"}})"), SMDebugValueError);
        CHECK_THROWS_AS(parse_hook_config(R"({"HookParameters": {"save_all": "yes"}})"), SMDebugValueError);
        CHECK_THROWS_AS(parse_hook_config(R"({"HookParameters": {"include_workers": "some"}})"), SMDebugValueError);
        CHECK_THROWS_AS(parse_hook_config(R"({"CollectionConfigurations": [{"CollectionParameters": {}}]})"), SMDebugValueError);
        CHECK_THROWS_AS(parse_hook_config(R"([1, 2])"), SMDebugValueError);
        CHECK_THROWS_AS(parse_hook_config(R"({"HookParameters": )"), SMDebugValueError);
        CHECK_THROWS_AS(load_hook_config("/nonexistent/debughookconfig.json"), ObjectNotFound);
    }
    SECTION("a configured collection without patterns or names is rejected when the hook starts") {
        TempDir dir;
        auto cfg = parse_hook_config(R"({"CollectionConfigurations": [{"CollectionName": "nothing"}]})");
        cfg.out_dir = (dir.path / "t").string();
        cfg.options.enabled = true;
        Hook<LocalStore> hook(cfg);
        CHECK_THROWS_AS(hook.next_step(), InvalidCollectionConfiguration);
    }
}

TEST_CASE("inside SageMaker: TensorBoard folder from TENSORBOARD_CONFIG_FILE_PATH, no end marker", "[writer][json_config]") {
    TempDir dir;
    write_text(dir.path / "tb.json", R"({"LocalPath": ")" + (dir.path / "tb").string() + R"("})");
    ScopedEnv job("TRAINING_JOB_NAME", "my-job");
    ScopedEnv tbenv("TENSORBOARD_CONFIG_FILE_PATH", (dir.path / "tb.json").c_str());
    auto cfg = parse_hook_config(R"({"LocalPath": ")" + (dir.path / "t").string() + R"(", "HookParameters": {"tensorboard_dir": "/ignored"}})");
    CHECK(cfg.options.tensorboard_dir == (dir.path / "tb").string());
    CHECK(cfg.options.export_tensorboard);
    cfg.options.enabled = true;
    {
        Hook<LocalStore> hook(cfg);
        hook.next_step();
        hook.save_tensor("CrossEntropyLoss_output_0", 1.0f);
        hook.close();
    }
    CHECK_FALSE(fs::exists(dir.path / "t" / "training_job_end.ts"));
    CHECK(fs::exists(dir.path / "t" / paths::index_key(0, "worker_0")));
    CHECK(fs::is_directory(dir.path / "tb" / "GLOBAL"));
}

TEST_CASE("USE_SMDEBUG turns the hook into a no-op", "[writer][env]") {
    const char* value = GENERATE("0", "false", "NO", "off", "n", "F");
    CAPTURE(value);
    ScopedEnv use("USE_SMDEBUG", value);
    TempDir dir;
    HookOptions o;
    o.save_config = SaveConfig(save_config_mode(1));
    {
        Hook<LocalStore> hook((dir.path / "t").string(), o);
        CHECK_FALSE(hook.enabled());
        hook.next_step();
        CHECK_FALSE(hook.save_tensor("x", 1.0));
        hook.save_scalar("y", 2.0);
        hook.close();
    }
    CHECK_FALSE(fs::exists(dir.path / "t"));
    ScopedEnv on("USE_SMDEBUG", "1");
    CHECK(smdebug_enabled_by_env());
}

// ---- workers ----------------------------------------------------------------------------------------------

TEST_CASE("include_workers all: one multi-worker trial with num_workers = world size", "[writer][workers]") {
    TempDir dir;
    constexpr int world = 3;
    {
        std::vector<std::unique_ptr<Hook<LocalStore>>> hooks;
        for (int r = 0; r < world; ++r) {
            auto o = options();
            o.include_collections = std::vector<std::string>{"weights"};
            o.include_workers = IncludeWorkers::all;
            o.rank = r;
            o.world_size = world;
            hooks.push_back(std::make_unique<Hook<LocalStore>>(dir.path.string(), o));
            CHECK(hooks.back()->worker() == "worker_" + std::to_string(r));
            CHECK(hooks.back()->num_workers() == world);
        }
        for (int step = 0; step < 2; ++step)
            for (int r = 0; r < world; ++r) {
                hooks[r]->next_step();
                hooks[r]->save_tensor("fc.weight", std::vector<double>{double(r), double(step)}, "weights");
            }
        for (auto& h : hooks) h->close();
    }
    for (int r = 0; r < world; ++r) {
        const auto f = collections_file::parse(slurp(dir.path / paths::collections_key("worker_" + std::to_string(r))), "c");
        CHECK(f.num_workers == world);
    }
    auto trial = open_trial(dir.path);
    CHECK(trial->num_workers() == world);
    CHECK(trial->workers() == std::vector<std::string>{"worker_0", "worker_1", "worker_2"});
    CHECK(trial->steps() == std::vector<std::int64_t>{0, 1});
    auto t = trial->tensor("fc.weight");
    CHECK(t.workers(1).size() == 3);
    for (int r = 0; r < world; ++r)
        CHECK(elements<double>(t.value(1, StepQuery{Mode::GLOBAL, "worker_" + std::to_string(r)})) == std::vector<double>{double(r), 1.0});
}

TEST_CASE("include_workers one: only rank 0 writes, num_workers is 1", "[writer][workers]") {
    TempDir dir;
    {
        auto o0 = options();
        o0.world_size = 2;
        auto o1 = o0;
        o1.rank = 1;
        Hook<LocalStore> h0(dir.path.string(), o0), h1(dir.path.string(), o1);
        CHECK(h0.writes());
        CHECK_FALSE(h1.writes());
        for (int i = 0; i < 2; ++i) {
            h0.next_step();
            h1.next_step();
            CHECK(h0.save_tensor("a", 1.0));
            CHECK_FALSE(h1.save_tensor("a", 2.0));
        }
        h1.close();
        CHECK_FALSE(fs::exists(dir.path / "training_job_end.ts"));  // rank 1 writes nothing at all
        h0.close();
    }
    CHECK_FALSE(fs::exists(dir.path / paths::collections_key("worker_1")));
    auto trial = open_trial(dir.path);
    CHECK(trial->num_workers() == 1);
    CHECK(trial->workers() == std::vector<std::string>{"worker_0"});
    CHECK_THROWS_AS(Hook<LocalStore>(dir.path.string(), [] { auto o = options(); o.rank = 2; o.world_size = 2; return o; }()), UsageError);
}

// ---- collections file ---------------------------------------------------------------------------------------

TEST_CASE("collections file: after the first saved step, again at close if it changed", "[writer][collections]") {
    TempDir dir;
    const auto key = dir.path / paths::collections_key("worker_0");
    auto o = options();
    o.include_collections = std::vector<std::string>{"weights"};
    Hook<LocalStore> hook(dir.path.string(), o);
    hook.next_step();
    hook.save_tensor("a.weight", 1.0, "weights");
    CHECK_FALSE(fs::exists(key));
    hook.next_step();  // step 0 queued, then the collections file
    hook.flush();      // both durable
    REQUIRE(fs::exists(key));
    CHECK(collections_file::parse(slurp(key), "c").collections.size() == 6);
    hook.save_tensor("b", 2.0, "custom");
    hook.next_step();
    hook.flush();
    CHECK(slurp(key).find("custom") == std::string::npos);  // a snapshot from export time
    hook.close();
    const auto f = collections_file::parse(slurp(key), "c");
    auto it = std::find_if(f.collections.begin(), f.collections.end(), [](const Collection& c) { return c.name == "custom"; });
    REQUIRE(it != f.collections.end());
    CHECK(it->tensor_names == std::vector<std::string>{"b"});
}

TEST_CASE("collection membership: patterns, names, introduced collections, default", "[writer][collections]") {
    TempDir dir;
    auto o = options();
    o.include_collections = std::vector<std::string>{"weights"};
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.collection("acts").include_regex = {"relu"};
        hook.next_step();
        CHECK(hook.save_tensor("fc.weight", 1.0));            // weights (included) by pattern
        CHECK_FALSE(hook.save_tensor("fc.bias", 1.0));        // biases exists but is not included
        CHECK_FALSE(hook.save_tensor("relu_out", 1.0));       // acts is known, not included
        CHECK(hook.save_tensor("my_metric", 1.0));            // no collection describes it: default
        CHECK(hook.save_tensor("relu_in", 1.0, "probes"));    // a collection introduced here is included
        CHECK_FALSE(hook.save_tensor("x.bias", 1.0, "biases"));  // naming an existing collection does not include it
        hook.include_collection("acts");
        CHECK(hook.save_tensor("relu_2", 1.0));
        CHECK_THROWS_AS(hook.save_tensor("fc.weight", 2.0), UsageError);  // twice in one step
        hook.close();
        CHECK_THROWS_AS(hook.save_tensor("late", 1.0), UsageError);
        CHECK_THROWS_AS(hook.next_step(), UsageError);
    }
    auto trial = open_trial(dir.path);
    CHECK(trial->tensor_names() == std::vector<std::string>{"fc.weight", "my_metric", "relu_2", "relu_in"});
    CHECK(trial->collection("default").tensor_names == std::vector<std::string>{"my_metric"});
    CHECK(trial->collection("probes").tensor_names == std::vector<std::string>{"relu_in"});
    CHECK(trial->collection("biases").tensor_names == std::vector<std::string>{"x.bias"});
}

TEST_CASE("an invalid collection pattern raises SMDebugValueError", "[writer][collections]") {
    TempDir dir;
    auto o = options();
    o.include_regex = std::vector<std::string>{"(unclosed"};
    Hook<LocalStore> hook(dir.path.string(), o);
    hook.next_step();
    CHECK_THROWS_AS(hook.save_tensor("x", 1.0), SMDebugValueError);
}

TEST_CASE("save_all saves every tensor in `all`; include_regex feeds `default`", "[writer][collections]") {
    TempDir dir;
    auto o = options();
    o.save_all = GENERATE(false, true);
    o.include_regex = std::vector<std::string>{"^conv"};
    o.include_collections = std::vector<std::string>{};
    {
        Hook<LocalStore> hook(dir.path.string(), o);
        hook.next_step();
        CHECK(hook.save_tensor("conv1_output_0", 1.0));
        CHECK(hook.save_tensor("fc.bias", 1.0) == o.save_all);
        hook.close();
    }
    auto trial = open_trial(dir.path);
    CHECK(trial->collection("default").include_regex == std::vector<std::string>{"^conv"});
    CHECK(trial->collection("all").include_regex == (o.save_all ? std::vector<std::string>{".*"} : std::vector<std::string>{}));
}

// ---- errors -----------------------------------------------------------------------------------------------------

TEST_CASE("an unwritable out_dir raises StorageError; the step is kept and retried", "[writer][errors]") {
    TempDir dir;
    const auto blocker = dir.path / "blocker";
    write_text(blocker, "a file where a folder should be");
    const auto out = blocker / "trial";
    Hook<LocalStore> hook(out.string(), sync_options());
    hook.next_step();
    hook.save_tensor("a", 1.0);
    CHECK_THROWS_AS(hook.next_step(), StorageError);
    CHECK(hook.global_step() == 1);
    CHECK(hook.pending_steps() == 1);
    hook.save_tensor("a", 2.0);
    CHECK_THROWS_AS(hook.close(), StorageError);
    CHECK_FALSE(hook.closed());
    CHECK(hook.pending_steps() == 2);
    CHECK_THROWS_AS(hook.save_tensor("b", 1.0), UsageError);  // closing: no more data
    fs::remove(blocker);  // the disk is back
    hook.close();
    CHECK(hook.closed());
    CHECK(hook.pending_steps() == 0);
    auto trial = open_trial(out);
    CHECK(trial->steps() == std::vector<std::int64_t>{0, 1});
    CHECK(elements<double>(trial->tensor("a").value(1)) == std::vector<double>{2.0});
    CHECK(fs::exists(out / "training_job_end.ts"));
}

TEST_CASE("failing writes (disk full, S3 outage) never drop a step", "[writer][errors]") {
    const std::string prefix = GENERATE(std::string(""), std::string("index/"), std::string("collections/"));
    CAPTURE(prefix);
    TempDir dir;
    auto state = std::make_shared<FlakyState>();
    state->prefix = prefix;
    int thrown = 0;
    {
        Hook<FlakyStore> hook(FlakyStore(dir.path, state), sync_options());
        for (int i = 0; i < 6; ++i) {
            if (i == 1) state->failures = 4;  // writes fail for a while
            try {
                hook.next_step();
            } catch (const StorageError&) {
                ++thrown;
            }
            hook.save_tensor("a", double(i));
            hook.save_scalar("s", double(i));
        }
        try {
            hook.close();
        } catch (const StorageError&) {
            ++thrown;
        }
        if (!hook.closed()) hook.close();
        CHECK(hook.pending_steps() == 0);
    }
    CHECK(thrown == 4);
    auto trial = open_trial(dir.path);
    CHECK(trial->steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
    for (int i = 0; i < 6; ++i) {
        CHECK(elements<double>(trial->tensor("a").value(i)) == std::vector<double>{double(i)});
        CHECK(elements<double>(trial->tensor("scalar/s").value(i)) == std::vector<double>{double(i)});
    }
    CHECK(fs::exists(dir.path / "training_job_end.ts"));
}

TEST_CASE("next_step throws the store's error once per failure; the destructor never throws", "[writer][errors]") {
    TempDir dir;
    auto state = std::make_shared<FlakyState>();
    {
        Hook<FlakyStore> hook(FlakyStore(dir.path, state), sync_options());
        hook.next_step();
        hook.save_tensor("a", 1.0);
        state->failures = 1;
        CHECK_THROWS_AS(hook.next_step(), StorageError);
        CHECK(hook.pending_steps() == 1);
        hook.save_tensor("a", 2.0);
        hook.next_step();  // retries step 0, writes step 1
        CHECK(hook.pending_steps() == 0);
        hook.close();
    }
    CHECK(open_trial(dir.path)->steps() == std::vector<std::int64_t>{0, 1});
    TempDir dir2;
    auto broken = std::make_shared<FlakyState>();
    {
        Hook<FlakyStore> hook(FlakyStore(dir2.path, broken), options());
        hook.save_tensor("a", 1.0);
        broken->failures = 1000;
    }  // logs to stderr, does not throw
    CHECK_FALSE(fs::exists(dir2.path / "training_job_end.ts"));
}

TEST_CASE("a finished trial in out_dir is refused with OutDirAlreadyExists", "[writer][errors]") {
    TempDir dir;
    {
        Hook<LocalStore> hook(dir.path.string(), options());
        hook.save_tensor("a", 1.0);
    }  // destructor closes
    REQUIRE(fs::exists(dir.path / "training_job_end.ts"));
    CHECK_THROWS_AS(Hook<LocalStore>(dir.path.string(), options()), OutDirAlreadyExists);
    try {
        Hook<LocalStore> again(dir.path.string(), options());
    } catch (const SMDebugError& e) {
        CHECK(std::string(e.python_name()) == "SMDebugRuntimeError");
        CHECK(std::string(e.what()).find(dir.path.string()) != std::string::npos);
    }
    // a folder with data but no end marker is accepted (e.g. a resumed job)
    fs::remove(dir.path / "training_job_end.ts");
    CHECK_NOTHROW(Hook<LocalStore>(dir.path.string(), [] { auto o = options(); o.write_end_marker = false; return o; }()));
}

// ---- TensorBoard -------------------------------------------------------------------------------------------------

namespace {
struct TbValue {
    std::string tag;
    std::optional<float> simple;
    std::optional<tensorboard::Histogram> histo;
    std::int64_t step = 0;
};

std::vector<TbValue> read_tb(const fs::path& file) {
    const auto text = slurp(file);
    tfrecord::Scanner sc(std::as_bytes(std::span<const char>(text.data(), text.size())), file.string());
    tfrecord::Record r;
    std::vector<TbValue> out;
    while (sc.next(r)) {
        REQUIRE(r.payload_verified);  // a real payload CRC
        TbValue v;
        proto::Reader er(r.payload, "event");
        proto::Field f;
        while (er.next(f)) {
            if (f.number == 2) v.step = static_cast<std::int64_t>(f.varint);
            if (f.number != 5) continue;
            proto::Reader sr(f.bytes, "summary");
            proto::Field sv;
            while (sr.next(sv)) {
                proto::Reader vr(sv.bytes, "value");
                proto::Field vf;
                while (vr.next(vf)) {
                    if (vf.number == 1) v.tag.assign(reinterpret_cast<const char*>(vf.bytes.data()), vf.bytes.size());
                    if (vf.number == 2) v.simple = std::bit_cast<float>(static_cast<std::uint32_t>(vf.varint));
                    if (vf.number == 5) {
                        tensorboard::Histogram h;
                        proto::Reader hr(vf.bytes, "histo");
                        proto::Field hf;
                        auto doubles = [](std::span<const std::byte> b) {
                            std::vector<double> d(b.size() / 8);
                            std::memcpy(d.data(), b.data(), b.size());
                            return d;
                        };
                        while (hr.next(hf)) {
                            const double d = std::bit_cast<double>(hf.varint);
                            switch (hf.number) {
                                case 1: h.min = d; break;
                                case 2: h.max = d; break;
                                case 3: h.num = d; break;
                                case 4: h.sum = d; break;
                                case 5: h.sum_squares = d; break;
                                case 6: h.bucket_limit = doubles(hf.bytes); break;
                                case 7: h.bucket = doubles(hf.bytes); break;
                            }
                        }
                        v.histo = h;
                    }
                }
            }
        }
        out.push_back(std::move(v));
    }
    return out;
}
}  // namespace

TEST_CASE("histograms bin like numpy over TensorFlow's default buckets", "[writer][tensorboard]") {
    const auto& edges = tensorboard::default_bucket_edges();
    CHECK(edges.size() == 2 * 774 + 1);
    CHECK(edges[774] == 0.0);
    CHECK(edges[775] == 1e-12);
    CHECK(edges.front() == -edges.back());
    const std::vector<double> x = {0.5, -1.0, 0.5, 3.0, 0.0};
    const auto h = tensorboard::make_histogram(TensorValue::from<double>(x, {5}));
    REQUIRE(h);
    CHECK((h->min == -1.0 && h->max == 3.0 && h->num == 5 && h->sum == 3.0 && h->sum_squares == 10.5));
    REQUIRE(h->bucket.size() == h->bucket_limit.size());
    CHECK(h->bucket.front() == 0.0);  // the empty bucket on the left
    double total = 0;
    for (double c : h->bucket) total += c;
    CHECK(total == 5);
    // each value lies in the bucket whose right limit is the first edge above it
    for (double v : x) {
        const auto it = std::upper_bound(h->bucket_limit.begin(), h->bucket_limit.end(), v);
        REQUIRE(it != h->bucket_limit.end());
        CHECK(h->bucket[static_cast<std::size_t>(it - h->bucket_limit.begin())] >= 1);
    }
    CHECK(h->bucket_limit.front() < -1.0);
    CHECK(h->bucket_limit.back() > 3.0);
    // bool, empty, strings and values outside every bucket give none
    const bool flags[2] = {true, false};
    CHECK_FALSE(tensorboard::make_histogram(TensorValue::from<bool>(std::span<const bool>(flags, 2), {2})));
    CHECK_FALSE(tensorboard::make_histogram(TensorValue::from<double>(std::span<const double>(), {0})));
    CHECK_FALSE(tensorboard::make_histogram(TensorValue(Shape{1}, {"a"})));
    CHECK_FALSE(tensorboard::make_histogram(TensorValue::from<double>(std::vector<double>{std::nan(""), 1e30}, {2})));
    CHECK(tensorboard::clean_tag("/a b:c/d.e-f_g") == "a_b_c/d.e-f_g");
}

TEST_CASE("TensorBoard export: <tb dir>/<MODE>/{step}_{pid}_{host}.tfevents with histograms and scalars", "[writer][tensorboard]") {
    TempDir dir;
    const bool own_dir = GENERATE(false, true);
    auto o = options();
    o.include_collections = std::vector<std::string>{"weights"};
    if (own_dir) o.tensorboard_dir = (dir.path / "tb").string();
    else o.export_tensorboard = true;
    {
        Hook<LocalStore> hook((dir.path / "t").string(), o);
        hook.set_mode(Mode::TRAIN);
        hook.next_step();
        hook.save_tensor("fc.weight", std::vector<float>{0.5f, -1.0f});
        hook.save_tensor("CrossEntropyLoss_output_0", 0.75f);
        hook.save_scalar("lr", 0.01);
        hook.set_mode(Mode::EVAL);
        hook.next_step();
        hook.save_tensor("CrossEntropyLoss_output_0", 0.5f);
        hook.close();
    }
    const auto tb = own_dir ? dir.path / "tb" : dir.path / "t" / "tensorboard";
    const auto file = tb / tensorboard::file_key(Mode::TRAIN, 0);
    REQUIRE(fs::exists(file));
    CHECK(file.filename().string().starts_with("000000000000_" + std::to_string(::getpid()) + "_"));
    const auto values = read_tb(file);
    REQUIRE(values.size() == 3);
    CHECK(values[0].tag == "weights/fc.weight");
    REQUIRE(values[0].histo);
    CHECK((values[0].histo->min == -1.0 && values[0].histo->max == 0.5 && values[0].histo->num == 2));
    CHECK(values[1].tag == "CrossEntropyLoss_output_0");
    CHECK(values[1].simple == 0.75f);
    CHECK(values[2].tag == "scalar/lr");
    CHECK(values[2].simple == 0.01f);
    const auto eval = read_tb(tb / tensorboard::file_key(Mode::EVAL, 1));
    REQUIRE(eval.size() == 1);
    CHECK((eval[0].simple == 0.5f && eval[0].step == 1));
}

// ---- conformance runner ------------------------------------------------------------------------------------------

namespace {
bj::value json_number(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    return d;
}

struct Expected {
    bj::array queries;
    void add(bj::object q) {
        q["id"] = static_cast<std::int64_t>(queries.size());
        queries.push_back(std::move(q));
    }
};

template <class T>
bj::value array_json(const std::vector<T>& data, const Shape& shape, std::string_view dtype) {
    bj::array d, s;
    for (const auto& x : data) {
        if constexpr (std::is_same_v<T, bool>) d.emplace_back(static_cast<bool>(x));
        else if constexpr (std::is_same_v<T, std::string>) d.emplace_back(x);
        else if constexpr (std::is_floating_point_v<T>) d.push_back(json_number(static_cast<double>(x)));
        else if constexpr (std::is_signed_v<T>) d.emplace_back(static_cast<std::int64_t>(x));
        else d.emplace_back(static_cast<std::uint64_t>(x));
    }
    for (auto n : shape) s.emplace_back(static_cast<std::uint64_t>(n));
    return bj::object{{"dtype", dtype}, {"shape", std::move(s)}, {"data", std::move(d)}};
}
}  // namespace

TEST_CASE("a hook-written trial passes the conformance runner with expected values from the writer's inputs", "[writer][conformance]") {
    const fs::path runner = fs::path(SMDEBUG_BIN_DIR) / "conformance_runner";
    INFO("build the conformance_runner target first: " << runner.string());
    REQUIRE(fs::exists(runner));
    TempDir dir;
    const auto case_dir = dir.path / "hook_written";
    Expected ex;
    std::map<std::string, std::vector<std::int64_t>> tensor_steps;
    std::vector<std::int64_t> all_steps;
    std::map<Mode, std::vector<std::int64_t>> mode_steps;

    auto o = options();
    o.include_collections = std::vector<std::string>{"weights", "biases", "gradients"};
    CollectionSettings w;
    w.name = "weights";
    w.reduction_config.emplace();
    w.reduction_config->add_reductions_string("min,max,mean,std,variance,sum,prod,l1_norm,l2_norm,abs_min,abs_mean,abs_l2_norm");
    w.reduction_config->save_raw_tensor = true;
    o.collections = {w};
    {
        Hook<LocalStore> hook((case_dir / "trial").string(), o);
        auto record_value = [&](const std::string& name, bj::value v, std::int64_t g, Mode m, std::int64_t ms) {
            ex.add({{"call", "tensor.value"}, {"tensor", name}, {"args", {{"step_num", g}}}, {"result", v}});
            ex.add({{"call", "tensor.value"}, {"tensor", name}, {"args", {{"step_num", ms}, {"mode", mode_name(m)}}}, {"result", v}});
            ex.add({{"call", "tensor.shape"}, {"tensor", name}, {"args", {{"step_num", g}}}, {"result", v.as_object().at("shape")}});
            tensor_steps[name].push_back(g);
        };
        for (Mode m : {Mode::TRAIN, Mode::EVAL}) {
            hook.set_mode(m);
            for (int i = 0; i < 3; ++i) {
                hook.next_step();
                const auto g = hook.global_step();
                all_steps.push_back(g);
                mode_steps[m].push_back(i);
                const std::vector<float> wv = {0.5f * g, -1.25f, 3.0f + i, 1e-3f};
                hook.save_tensor("fc1.weight", wv.data(), Shape{2, 2});
                record_value("fc1.weight", array_json(wv, {2, 2}, "float32"), g, m, i);
                std::vector<double> wd(wv.begin(), wv.end());
                for (const char* r : {"min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2"})
                    ex.add({{"call", "tensor.reduction_value"}, {"tensor", "fc1.weight"}, {"args", {{"step_num", g}, {"reduction_name", r}}},
                            {"result", array_json(std::vector<double>{expected_reduction(wd, r, false)}, {1}, "float64")}, {"rtol", 1e-12}});
                for (const char* r : {"min", "mean", "l2"})
                    ex.add({{"call", "tensor.reduction_value"}, {"tensor", "fc1.weight"}, {"args", {{"step_num", g}, {"reduction_name", r}, {"abs", true}}},
                            {"result", array_json(std::vector<double>{expected_reduction(wd, r, true)}, {1}, "float64")}, {"rtol", 1e-12}});
                const std::vector<std::int64_t> bias = {g, -g, 1LL << 40};
                hook.save_tensor("fc1.bias", bias);
                record_value("fc1.bias", array_json(bias, {3}, "int64"), g, m, i);
                if (m == Mode::TRAIN) {
                    const std::vector<float16> grad = {float16(0.5f * i), float16(-2.0f)};
                    hook.save_tensor("gradient/fc1.weight", grad);
                    record_value("gradient/fc1.weight", array_json(std::vector<float>{0.5f * i, -2.0f}, {2}, "float16"), g, m, i);
                }
                const float loss = 1.0f / (1.0f + g);
                hook.save_tensor("CrossEntropyLoss_output_0", xt::xarray<float>(loss));
                record_value("CrossEntropyLoss_output_0", array_json(std::vector<float>{loss}, {}, "float32"), g, m, i);
                const std::vector<std::string> tags = {"step", std::to_string(g)};
                hook.save_tensor("tags", tags, "text");
                record_value("tags", array_json(tags, {2}, "str"), g, m, i);
                const std::vector<std::uint8_t> mask = {1, 0, 255};
                hook.save_tensor("mask", mask, "text");
                record_value("mask", array_json(mask, {3}, "uint8"), g, m, i);
                hook.save_scalar("lr", 0.1 / (g + 1));
                record_value("scalar/lr", array_json(std::vector<double>{0.1 / (g + 1)}, {1}, "float64"), g, m, i);
            }
        }
        hook.close();
    }
    std::vector<std::string> names;
    for (const auto& [n, s] : tensor_steps) {
        names.push_back(n);
        ex.add({{"call", "tensor.steps"}, {"tensor", n}, {"args", bj::object{}}, {"result", bj::value_from(s)}});
    }
    ex.add({{"call", "trial.workers"}, {"args", bj::object{}}, {"result", bj::array{"worker_0"}}});
    ex.add({{"call", "trial.steps"}, {"args", bj::object{}}, {"result", bj::value_from(all_steps)}});
    for (auto& [m, s] : mode_steps) ex.add({{"call", "trial.steps"}, {"args", {{"mode", mode_name(m)}}}, {"result", bj::value_from(s)}});
    ex.add({{"call", "trial.tensor_names"}, {"args", bj::object{}}, {"result", bj::value_from(names)}});
    ex.add({{"call", "trial.tensor_names"}, {"args", {{"collection", "text"}}}, {"result", bj::array{"mask", "tags"}}});
    const std::size_t n = ex.queries.size();
    bj::object top{{"case", "hook_written"},
                   {"schema_version", 1},
                   {"trial_dir", "trial"},
                   {"blocks", bj::array{bj::object{{"name", "main"}, {"trial_args", bj::object{}}, {"order_independent", true}, {"queries", std::move(ex.queries)}}}}};
    write_text(case_dir / "expected.json", bj::serialize(top));

    ScopedEnv no_delay("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0");
    const std::string cmd = "'" + runner.string() + "' '" + case_dir.string() + "' 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    std::string output, last;
    char line[4096];
    while (std::fgets(line, sizeof line, p)) {
        output += line;
        last = line;
    }
    const int status = ::pclose(p);
    INFO(output);
    CHECK(last == std::to_string(n) + " passed, 0 failed\n");
    CHECK(status == 0);
}

// ---- S3 ------------------------------------------------------------------------------------------------------------

TEST_CASE("an unreachable S3 out_dir raises a StorageError", "[writer][s3]") {
    net::AwsConfig c;
    c.region = "us-east-1";
    c.endpoint = net::Url::parse("http://127.0.0.1:1");
    c.credentials = std::make_shared<net::StaticCredentialsProvider>(net::AwsCredentials{"AKIDTEST", "SECRET", "", std::nullopt, "test"});
    S3StoreOptions so;
    so.aws = c;
    so.client.retry.max_attempts = 1;
    so.client.http.connect_timeout = std::chrono::milliseconds(2000);
    CHECK_THROWS_AS(Hook<S3Store>(S3Store("s3://bucket/prefix", so), options()), StorageError);
}

TEST_CASE("s3rver: a hook writes s3:// out_dirs; S3 errors keep the step", "[s3rver][writer]") {
    const char* endpoint = std::getenv("SMDEBUG_S3RVER_ENDPOINT");
    if (!endpoint || !*endpoint) {
        FAIL("SMDEBUG_S3RVER_ENDPOINT is not set: run this case under tests/s3rver/run-with-s3rver.sh (CTest: s3rver.s3store)");
    }
    TempDir home;
    ScopedEnv e1("HOME", home.path.c_str()), e2("AWS_ENDPOINT_URL_S3", endpoint), e3("AWS_ACCESS_KEY_ID", "S3RVER"),
        e4("AWS_SECRET_ACCESS_KEY", "S3RVER"), e5("AWS_REGION", "us-east-1"), e6("AWS_EC2_METADATA_DISABLED", "true"),
        e7("AWS_PROFILE", nullptr), e8("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0");
    const std::string url = "s3://smdebug-test/writer-" + std::to_string(::getpid()) + "-" +
                            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "/trial";
    {
        Hook<AnyStore> hook(url, options());
        hook.set_mode(Mode::TRAIN);
        for (int i = 0; i < 3; ++i) {
            hook.next_step();
            hook.save_tensor("CrossEntropyLoss_output_0", xt::xarray<float>(0.5f * i));
            hook.save_tensor("values", std::vector<std::int64_t>{i, -i});
        }
        hook.close();
    }
    {
        auto trial = create_trial(url);
        CHECK(trial.steps(Mode::TRAIN) == std::vector<std::int64_t>{0, 1, 2});
        CHECK(elements<std::int64_t>(trial.tensor("values").value(2)) == std::vector<std::int64_t>{2, -2});
        CHECK(trial.training_ended());
    }
    CHECK_THROWS_AS(Hook<AnyStore>(url, options()), OutDirAlreadyExists);
    // a bucket that does not exist: PutObject fails, the step stays pending
    Hook<AnyStore> broken("s3://no-such-bucket-smdebug/x", sync_options());
    broken.next_step();
    broken.save_tensor("a", 1.0);
    CHECK_THROWS_AS(broken.next_step(), StorageError);
    CHECK(broken.pending_steps() == 1);
    CHECK_THROWS_AS(broken.close(), StorageError);
}

// ---- background writer (writer/detail/step_queue.hpp) ------------------------------------------------------

namespace {

// A LocalStore that records the order of its writes, can hold them back (a slow disk), and can
// fail a number of them; safe to use from the hook's writer thread.
struct GateState {
    std::mutex mu;
    std::condition_variable cv;
    bool open = true;
    int failures = 0;
    std::vector<std::string> written;  // keys, in the order their write completed
};
class GatedStore {
public:
    GatedStore(fs::path root, std::shared_ptr<GateState> st) : inner_(std::move(root)), st_(std::move(st)) {}
    std::vector<std::string> list(std::string_view p, std::string_view a = {}) const { return inner_.list(p, a); }
    ByteBuffer read(std::string_view k) const { return inner_.read(k); }
    ByteBuffer read_range(std::string_view k, std::uint64_t o, std::uint64_t n) const { return inner_.read_range(k, o, n); }
    bool exists(std::string_view k) const { return inner_.exists(k); }
    std::string describe(std::string_view k) const { return inner_.describe(k); }
    void remove(std::string_view k) const { inner_.remove(k); }
    void write(std::string_view k, std::span<const std::byte> b) const {
        std::unique_lock lock(st_->mu);
        st_->cv.wait(lock, [&] { return st_->open; });
        if (st_->failures > 0) {
            --st_->failures;
            throw StorageError("write failed for " + describe(k) + ": No space left on device");
        }
        lock.unlock();
        inner_.write(k, b);
        lock.lock();
        st_->written.emplace_back(k);
    }

private:
    LocalStore inner_;
    std::shared_ptr<GateState> st_;
};
static_assert(WritableStore<GatedStore>);

void set_gate(GateState& st, bool open) {
    {
        std::lock_guard lock(st.mu);
        st.open = open;
    }
    st.cv.notify_all();
}

}  // namespace

TEST_CASE("background writer: flush() returns once every closed step is durable, event file before index", "[writer][background]") {
    TempDir dir;
    auto st = std::make_shared<GateState>();
    Hook<GatedStore> hook(GatedStore(dir.path, st), options());
    REQUIRE(options().background_writer);
    for (int i = 0; i < 30; ++i) {
        hook.next_step();
        hook.save_tensor("w", std::vector<float>(1000, float(i)));
        hook.save_scalar("loss", double(i));
    }
    hook.next_step();  // closes step 29; step 30 is open (and empty)
    hook.flush();
    CHECK(hook.pending_steps() == 0);
    for (int i = 0; i < 30; ++i) {
        INFO("step " << i);
        CHECK(fs::exists(dir.path / paths::index_key(i, "worker_0")));
        CHECK(fs::exists(dir.path / paths::event_key(i, "worker_0")));
    }
    CHECK(fs::exists(dir.path / paths::collections_key("worker_0")));
    {
        std::lock_guard lock(st->mu);
        for (int i = 0; i < 30; ++i) {
            const auto ev = std::find(st->written.begin(), st->written.end(), paths::event_key(i, "worker_0"));
            const auto ix = std::find(st->written.begin(), st->written.end(), paths::index_key(i, "worker_0"));
            REQUIRE(ev != st->written.end());
            REQUIRE(ix != st->written.end());
            CHECK(ev < ix);
            if (i > 0) CHECK(std::find(st->written.begin(), st->written.end(), paths::index_key(i - 1, "worker_0")) < ev);
        }
    }
    hook.close();
    auto trial = open_trial(dir.path);
    CHECK(trial->steps().size() == 30);
    CHECK(elements<float>(trial->tensor("w").value(29))[999] == 29.0f);
}

TEST_CASE("background writer: pushes do not wake a polling writer; after a pause it sleeps and a push wakes it", "[writer][background]") {
    using namespace std::chrono;
    TempDir dir;
    const LocalStore store(dir.path);
    detail::StepQueue<LocalStore> queue(store, true, 8, 1 << 20);
    const auto written_within = [&](milliseconds limit) {
        const auto until = steady_clock::now() + limit;
        while (queue.pending() != 0 && steady_clock::now() < until) std::this_thread::sleep_for(milliseconds(1));
        return queue.pending() == 0;
    };
    CHECK_FALSE(queue.writer_asleep());
    queue.push(detail::FileJob{"a.txt", "first"});  // found by the polling writer, no drain()
    CHECK(written_within(seconds(5)));
    const auto until = steady_clock::now() + seconds(5);
    while (!queue.writer_asleep() && steady_clock::now() < until) std::this_thread::sleep_for(milliseconds(10));
    REQUIRE(queue.writer_asleep());  // idle for its poll_before_sleep (250 ms by default)
    queue.push(detail::FileJob{"b.txt", "second"});
    CHECK(written_within(seconds(5)));
    CHECK_FALSE(queue.writer_asleep());
    CHECK(slurp(dir.path / "a.txt") == "first");
    CHECK(slurp(dir.path / "b.txt") == "second");
}

TEST_CASE("background writer: HookOptions::writer_poll_before_sleep = 0 sleeps after each job, and each push wakes it", "[writer][background]") {
    using namespace std::chrono;
    CHECK(HookOptions{}.writer_poll_before_sleep == milliseconds(250));
    TempDir dir;
    const LocalStore store(dir.path);
    detail::StepQueue<LocalStore> queue(store, true, 8, 1 << 20, milliseconds(0));
    const auto asleep_within = [&](milliseconds limit) {
        const auto until = steady_clock::now() + limit;
        while (!queue.writer_asleep() && steady_clock::now() < until) std::this_thread::sleep_for(milliseconds(1));
        return queue.writer_asleep();
    };
    for (int i = 0; i < 3; ++i) {
        REQUIRE(asleep_within(seconds(5)));
        queue.push(detail::FileJob{std::to_string(i) + ".txt", std::to_string(i)});
        queue.drain();
        CHECK(slurp(dir.path / (std::to_string(i) + ".txt")) == std::to_string(i));
    }
    // Asleep again before a polling writer could be (it polls for 250 ms after its last job).
    const auto start = steady_clock::now();
    REQUIRE(asleep_within(seconds(5)));
    CHECK(steady_clock::now() - start < milliseconds(240));
}

TEST_CASE("background writer: a full queue makes next_step() wait (back-pressure)", "[writer][background]") {
    TempDir dir;
    auto st = std::make_shared<GateState>();
    HookOptions o = options();
    o.writer_queue_steps = 3;
    o.writer_bounded_lag = false;  // the queue's bound alone (the lag bound would stop training sooner)
    Hook<GatedStore> hook(GatedStore(dir.path, st), o);
    set_gate(*st, false);  // the disk stalls
    std::atomic<int> boundaries{0};
    std::thread training([&] {
        for (int i = 0; i < 10; ++i) {
            hook.next_step();
            hook.save_tensor("w", std::vector<float>(100, 1.0f));
            ++boundaries;
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    // Steps 0.. are closed at boundaries 1..; at most 3 jobs wait, so training is held back.
    CHECK(boundaries.load() <= 5);
    CHECK(boundaries.load() >= 3);
    CHECK(hook.pending_steps() <= 3);
    set_gate(*st, true);
    training.join();
    CHECK(boundaries.load() == 10);
    hook.close();
    CHECK(open_trial(dir.path)->steps().size() == 10);
}

TEST_CASE("background writer: on a local folder a step's files are complete once the second step after it begins", "[writer][background]") {
    // The reference's readers open a trial between steps of a live training (its tests/pytorch
    // test_modes reads five saved steps after five more that save nothing, without close()).
    for (const bool bounded : {true, false}) {
        INFO("writer_bounded_lag " << bounded);
        TempDir dir;
        auto st = std::make_shared<GateState>();
        HookOptions o = options();
        o.writer_bounded_lag = bounded;
        Hook<GatedStore> hook(GatedStore(dir.path, st), o);
        set_gate(*st, false);  // the disk stalls until the training thread has moved on
        std::atomic<int> boundaries{0};
        std::thread training([&] {
            for (int i = 0; i < 3; ++i) {
                hook.next_step();
                hook.save_tensor("w", std::vector<float>(10, float(i)));
                ++boundaries;
            }
            for (int i = 0; i < 2; ++i) {  // two steps that save nothing
                hook.next_step();
                ++boundaries;
            }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (bounded) {
            CHECK(boundaries.load() == 2);  // steps 0 and 1 begun; beginning step 2 waits for step 0's files
        } else {
            CHECK(boundaries.load() == 5);  // nothing waits for the writer
            CHECK_FALSE(fs::exists(dir.path / paths::index_key(0, "worker_0")));
        }
        set_gate(*st, true);
        training.join();
        // Step 4 has begun: steps 0-2 are complete on disk, without flush() or close().
        for (int i = 0; i < 3 && bounded; ++i) {
            INFO("step " << i);
            CHECK(fs::exists(dir.path / paths::event_key(i, "worker_0")));
            CHECK(fs::exists(dir.path / paths::index_key(i, "worker_0")));
        }
        hook.close();
        CHECK(open_trial(dir.path)->steps() == std::vector<std::int64_t>{0, 1, 2});
    }
}

TEST_CASE("background writer: write errors surface once each on a later call; no step is dropped", "[writer][background]") {
    TempDir dir;
    auto st = std::make_shared<GateState>();
    int thrown = 0;
    {
        Hook<GatedStore> hook(GatedStore(dir.path, st), options());
        for (int i = 0; i < 8; ++i) {
            if (i == 3) {
                std::lock_guard lock(st->mu);
                st->failures = 2;
            }
            try {
                hook.next_step();
            } catch (const StorageError& e) {
                CHECK_THAT(e.what(), Catch::Contains("No space left on device"));
                ++thrown;
            }
            hook.save_tensor("a", double(i));
        }
        for (int attempt = 0; attempt < 5 && !hook.closed(); ++attempt) {
            try {
                hook.close();
            } catch (const StorageError&) {
                ++thrown;
            }
        }
        CHECK(hook.closed());
        CHECK(hook.pending_steps() == 0);
    }
    CHECK(thrown == 2);
    auto trial = open_trial(dir.path);
    CHECK(trial->steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    for (int i = 0; i < 8; ++i) CHECK(elements<double>(trial->tensor("a").value(i)) == std::vector<double>{double(i)});
    CHECK(fs::exists(dir.path / "training_job_end.ts"));
}

TEST_CASE("background writer: a failing flush() throws and keeps the step for the next one", "[writer][background]") {
    TempDir dir;
    auto st = std::make_shared<GateState>();
    Hook<GatedStore> hook(GatedStore(dir.path, st), options());
    hook.next_step();
    hook.save_tensor("a", 1.0);
    {
        std::lock_guard lock(st->mu);
        st->failures = 1;
    }
    // The error surfaces once: at next_step() when the writer has already failed by the time it
    // returns (it takes waiting errors), else at flush().
    int thrown = 0;
    try {
        hook.next_step();
    } catch (const StorageError&) {
        ++thrown;
    }
    if (thrown == 0) {
        CHECK_THROWS_AS(hook.flush(), StorageError);
        ++thrown;
    }
    hook.flush();  // retried
    CHECK(thrown == 1);
    CHECK(hook.pending_steps() == 0);
    CHECK(fs::exists(dir.path / paths::index_key(0, "worker_0")));
    hook.close();
}

}  // namespace smdebug_test_writer
