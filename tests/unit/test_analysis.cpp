// Unit tests for smdebug/analysis/ (docs/diagnose.md): diagnose() and diff() on MLP trials written
// by the Hook as a PyTorch job's hook writes them (tests/analysis/analysis_trials.hpp), their JSON,
// value comparison with and without a tolerance, and `smdebug diagnose` / `smdebug diff` through the
// built program (output and exit codes).
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <smdebug/analysis/diagnose.hpp>
#include <smdebug/analysis/diff.hpp>
#include <smdebug/analysis/json.hpp>
#include <smdebug/local.hpp>
#include <smdebug/rules/rules.hpp>
#include <smdebug/writer/step_writer.hpp>

#include "../analysis/analysis_trials.hpp"
#include "cli/plot/line_chart.hpp"
#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_analysis {

using namespace smdebug;
namespace fs = std::filesystem;
using test::TempDir;

namespace {

std::unique_ptr<Trial<LocalStore>> open(const fs::path& dir) { return std::make_unique<Trial<LocalStore>>(LocalStore(dir), test::fast()); }

TensorValue floats(std::vector<float> v) { return TensorValue::from<float>(v, Shape{v.size()}); }

}  // namespace

TEST_CASE("diagnose: a module output that turned finite inputs into inf is the first non-finite tensor", "[analysis]") {
    TempDir dir("diag-inf");
    analysis_trials::write_mlp(dir.path, {.inf_at = 12});
    auto trial = open(dir.path);
    const auto d = analysis::diagnose(*trial);
    REQUIRE(d.first_nonfinite);
    const auto& f = *d.first_nonfinite;
    CHECK(f.step == 16);  // TRAIN step 12 after two EVAL phases of 2 steps
    CHECK(f.mode == Mode::TRAIN);
    CHECK(f.mode_step == 12);
    CHECK(f.worker == "worker_0");
    CHECK(f.tensor == "fc2_output_0");
    CHECK(f.role == analysis::TensorRole::module_output);
    CHECK(f.module == "fc2");
    CHECK(f.value == "inf");
    CHECK(f.element == 1);
    REQUIRE(f.inputs.size() == 1);
    CHECK(f.inputs[0] == std::pair<std::string, bool>{"fc2_input_0", true});
    CHECK(f.verdict == "module `fc2` turned finite inputs into inf");
    // compute order: the output, the loss's input, the loss, then the gradients in backward order
    CHECK(f.nonfinite_tensors == std::vector<std::string>{"fc2_output_0", "CrossEntropyLoss_input_0", "CrossEntropyLoss_output_0",
                                                          "gradients/fc2.weight", "gradients/fc1.weight"});
    CHECK(d.wrong());
    CHECK_FALSE(d.partial);
    // ExplodingTensor's earliest finding is the same step
    bool exploding = false;
    for (const auto& r : d.findings)
        if (r.rule == "ExplodingTensor") {
            exploding = true;
            CHECK(r.step == 16);
            CHECK(r.mode == "TRAIN");
            CHECK(r.mode_step == 12);
        }
    CHECK(exploding);

    const auto j = analysis::to_json(d);
    const auto& jf = j.at("first_nonfinite").as_object();
    CHECK(jf.at("step").as_int64() == 16);
    CHECK(jf.at("mode").as_string() == "TRAIN");
    CHECK(jf.at("mode_step").as_int64() == 12);
    CHECK(jf.at("worker").as_string() == "worker_0");
    CHECK(jf.at("tensor").as_string() == "fc2_output_0");
    CHECK(jf.at("inputs").as_object().at("fc2_input_0").as_string() == "finite");
    CHECK(j.at("findings").is_array());
}

TEST_CASE("diagnose: without saved inputs, the module output written just before stands for the input", "[analysis]") {
    TempDir dir("diag-noinput");
    analysis_trials::write_mlp(dir.path, {.inf_at = 12, .drop_tensors = {"fc2_input_0"}});
    auto trial = open(dir.path);
    const auto d = analysis::diagnose(*trial);
    REQUIRE(d.first_nonfinite);
    const auto& f = *d.first_nonfinite;
    CHECK(f.tensor == "fc2_output_0");
    CHECK(f.inputs_inferred);
    REQUIRE(f.inputs.size() == 1);
    CHECK(f.inputs[0] == std::pair<std::string, bool>{"relu_output_0", true});
    CHECK_THAT(f.verdict, Catch::StartsWith("module `fc2` turned a finite input into inf (its inputs were not saved"));
}

TEST_CASE("diagnose: a weight already non-finite names the step it was last finite and its gradient there", "[analysis]") {
    TempDir dir("diag-weight");
    analysis_trials::write_mlp(dir.path, {.weight_nan_at = 7});
    auto trial = open(dir.path);
    const auto d = analysis::diagnose(*trial);
    REQUIRE(d.first_nonfinite);
    const auto& f = *d.first_nonfinite;
    CHECK(f.step == 9);
    CHECK(f.mode_step == 7);
    CHECK(f.tensor == "fc1.weight");
    CHECK(f.role == analysis::TensorRole::weight);
    CHECK(f.value == "nan");
    CHECK(f.element == 5);
    REQUIRE(f.weight);
    CHECK(f.weight->last_finite_step == 8);
    CHECK(f.weight->gradient == "gradients/fc1.weight");
    REQUIRE(f.weight->gradient_max_abs);
    CHECK(std::isfinite(*f.weight->gradient_max_abs));
    CHECK_THAT(f.verdict, Catch::Contains("already NaN") && Catch::Contains("finite at step 8") && Catch::Contains("gradients/fc1.weight"));
}

TEST_CASE("diagnose: a clean run has no non-finite value and no finding", "[analysis]") {
    TempDir dir("diag-clean");
    analysis_trials::write_mlp(dir.path, {});
    auto trial = open(dir.path);
    const auto d = analysis::diagnose(*trial);
    CHECK_FALSE(d.first_nonfinite);
    CHECK(d.steps_checked == 26);
    CHECK(d.records_checked > 0);
    for (const auto& f : d.findings) FAIL_CHECK(f.rule << " fired at step " << f.step << ": " << f.finding);
    CHECK_FALSE(d.wrong());
    CHECK(analysis::to_json(d).at("first_nonfinite").is_null());
}

TEST_CASE("compare_values: bitwise by default, a tolerance passes a float32 rounding, shapes and dtypes are reasons", "[analysis]") {
    const auto a = floats({1.f, 2.f, 3.f});
    CHECK_FALSE(analysis::compare_values(a, floats({1.f, 2.f, 3.f})).differ);
    const auto b = floats({1.f, std::nextafter(2.f, 3.f), 3.f});
    const auto c = analysis::compare_values(a, b);
    CHECK(c.differ);
    CHECK(c.max_abs == Approx(std::nextafter(2.f, 3.f) - 2.f));
    CHECK_FALSE(analysis::compare_values(a, b, {1e-5, 1e-8}).differ);
    CHECK(analysis::compare_values(a, floats({1.f, 2.5f, 3.f}), {1e-5, 1e-8}).differ);
    const auto shape = analysis::compare_values(a, floats({1.f, 2.f}));
    CHECK(shape.differ);
    CHECK(shape.reason == "shape [3] vs [2]");
    const std::vector<double> d{1, 2, 3};
    const auto dtype = analysis::compare_values(a, TensorValue::from<double>(d, Shape{3}));
    CHECK(dtype.reason == "dtype float32 vs float64");
    constexpr float nan = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(analysis::compare_values(floats({nan}), floats({nan})).differ);
    CHECK(analysis::compare_values(floats({nan}), floats({1.f})).differ);
}

TEST_CASE("diff: two runs that part at a step: the first step, the first tensor in compute order, how much", "[analysis]") {
    TempDir a("diff-a"), b("diff-b");
    analysis_trials::write_mlp(a.path, {});
    analysis_trials::write_mlp(b.path, {.perturb_from = 8, .perturbation = 0.5f});
    auto ta = open(a.path), tb = open(b.path);
    const auto r = analysis::diff(*ta, *tb);
    REQUIRE(r.first_difference);
    const auto& d = *r.first_difference;
    CHECK(d.step == 10);  // TRAIN step 8
    CHECK(d.mode == Mode::TRAIN);
    CHECK(d.mode_step == 8);
    CHECK(d.tensor == "fc2.weight");  // written before fc2_output_0
    CHECK(d.max_abs == Approx(0.5).epsilon(1e-5));
    REQUIRE(r.first_step_differences.size() == 3);  // fc2.weight, fc2_output_0, CrossEntropyLoss_input_0
    CHECK(r.first_step_differences[1].tensor == "fc2_output_0");
    CHECK(r.differing_tensors == 3);
    CHECK(r.differing_steps == 12);  // TRAIN steps 8..19
    CHECK(r.differing_values == 36);
    CHECK(r.nothing_shared.empty());
    const auto j = analysis::to_json(r);
    CHECK(j.at("first_difference").as_object().at("step").as_int64() == 10);
    CHECK(j.at("first_difference").as_object().at("tensor").as_string() == "fc2.weight");

    // a run against a copy of itself
    TempDir c("diff-c");
    analysis_trials::write_mlp(c.path, {});
    auto tc = open(c.path);
    const auto same = analysis::diff(*ta, *tc);
    CHECK_FALSE(same.first_difference);
    CHECK(same.compared_steps == 26);
    CHECK(same.differing_values == 0);
}

namespace {

// StepWriter's index entries hold no shapes (as benchmarks/trial_fixture.hpp's trials): diff once
// counted its batches in elements from those shapes, so such a trial was one batch and both runs
// were held whole. Steps x tensors x 8 KiB per run; run B's layer3/weight differs from step `parts`.
void write_plain_trial(const fs::path& dir, int steps, int tensors, int parts) {
    LocalStore store(dir, LocalStore::Durability::none);
    std::vector<float> data(2048);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.5f;
    write_collections_file(store, "worker_0", collections_file::match_all(1));
    for (int s = 0; s < steps; ++s) {
        StepWriter w(s, "worker_0", Mode::TRAIN, s);
        for (int t = 0; t < tensors; ++t) {
            auto v = data;
            if (parts >= 0 && s >= parts && t == 3) v[5] += 1;
            w.add_tensor("layer" + std::to_string(t) + "/weight", TensorValue::from<float>(v, Shape{v.size()}), 1.0);
        }
        w.flush(store);
    }
    write_end_marker(store);
}

std::int64_t peak_rss_kib() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

}  // namespace

TEST_CASE("diff: batches of a few MB when the index holds no shapes; differences counted across batches", "[analysis]") {
    TempDir a("diff-plain-a"), b("diff-plain-b");
    write_plain_trial(a.path, 200, 20, -1);  // 32 MB per run: 8 batches of about 4 MB
    write_plain_trial(b.path, 200, 20, 150);
    auto ta = open(a.path), tb = open(b.path);
    (void)ta->tensor_names(), (void)tb->tensor_names();
    const auto before = peak_rss_kib();
    const auto r = analysis::diff(*ta, *tb);
    // Both runs whole would add 64 MB to the peak; batches of 4 MB per run add a few.
    CHECK(peak_rss_kib() - before < 24 * 1024);
    CHECK(r.compared_values == 4000);
    CHECK(r.compared_steps == 200);
    REQUIRE(r.first_difference);
    CHECK(r.first_difference->step == 150);
    CHECK(r.first_difference->mode_step == 150);
    CHECK(r.first_difference->tensor == "layer3/weight");
    CHECK(r.first_difference->max_abs == 1);
    CHECK(r.first_step_differences.size() == 1);
    CHECK(r.differing_values == 50);  // steps 150..199, in the last batches
    CHECK(r.differing_steps == 50);
    CHECK(r.differing_tensors == 1);
    CHECK_FALSE(r.partial);
}

TEST_CASE("diff: a tolerance passes small differences; tensors and steps one run lacks are listed", "[analysis]") {
    TempDir a("diff-tol-a"), b("diff-tol-b");
    analysis_trials::write_mlp(a.path, {});
    analysis_trials::write_mlp(b.path, {.train_steps = 18, .perturb_from = 8, .perturbation = 1e-6f, .drop_tensors = {"relu_output_0"}});
    auto ta = open(a.path), tb = open(b.path);
    const auto bitwise = analysis::diff(*ta, *tb);
    REQUIRE(bitwise.first_difference);
    CHECK(bitwise.first_difference->step == 10);
    const auto tolerant = analysis::diff(*ta, *tb, {1e-4, 1e-6});
    CHECK_FALSE(tolerant.first_difference);
    CHECK(tolerant.only_in_a.tensors == std::vector<std::string>{"relu_output_0"});
    CHECK(tolerant.only_in_b.tensors.empty());
    REQUIRE(tolerant.only_in_a.steps.size() == 2);  // TRAIN steps 18 and 19
    CHECK(tolerant.only_in_a.steps[0].mode == Mode::TRAIN);
    CHECK(tolerant.only_in_a.steps[0].mode_step == 18);
}

TEST_CASE("diff: runs sharing no tensor, and tensors whose shapes differ", "[analysis]") {
    TempDir a("diff-none-a"), b("diff-none-b");
    {
        Hook<LocalStore> h(LocalStore(a.path, LocalStore::Durability::none), analysis_trials::hook_options());
        h.next_step();
        const std::vector<float> x{1, 2, 3};
        h.save_tensor("x", x.data(), Shape{3}, "weights");
        h.save_tensor("s", x.data(), Shape{3}, "weights");
        h.close();
    }
    {
        Hook<LocalStore> h(LocalStore(b.path, LocalStore::Durability::none), analysis_trials::hook_options());
        h.next_step();
        const std::vector<float> y{1, 2};
        h.save_tensor("y", y.data(), Shape{2}, "weights");
        h.save_tensor("s", y.data(), Shape{2}, "weights");
        h.close();
    }
    auto ta = open(a.path), tb = open(b.path);
    const auto r = analysis::diff(*ta, *tb);
    REQUIRE(r.first_difference);
    CHECK(r.first_difference->tensor == "s");
    CHECK(r.first_difference->reason == "shape [3] vs [2]");
    CHECK(r.only_in_a.tensors == std::vector<std::string>{"x"});

    TempDir c("diff-none-c");
    {
        Hook<LocalStore> h(LocalStore(c.path, LocalStore::Durability::none), analysis_trials::hook_options());
        h.next_step();
        const std::vector<float> z{1};
        h.save_tensor("z", z.data(), Shape{1}, "weights");
        h.close();
    }
    auto tc = open(c.path);
    const auto none = analysis::diff(*ta, *tc);
    CHECK_FALSE(none.first_difference);
    CHECK(none.nothing_shared == "the runs share no tensor");
}

TEST_CASE("diagnose and diff of a job still writing: the complete steps, and they say so", "[analysis]") {
    TempDir dir("diag-live"), done("diag-done");
    analysis_trials::write_mlp(done.path, {});
    auto options = analysis_trials::hook_options();
    options.write_end_marker = false;
    Hook<LocalStore> hook(LocalStore(dir.path, LocalStore::Durability::none), options);
    for (int s = 0; s < 4; ++s) {
        hook.set_mode(Mode::TRAIN);
        hook.next_step();
        const std::vector<float> w(16, 0.1f * static_cast<float>(s + 1));
        hook.save_tensor("fc1.weight", w.data(), Shape{16}, "weights");
    }
    hook.flush();  // steps 0-2 written; step 3 open
    auto trial = open(dir.path);
    const auto d = analysis::diagnose(*trial);
    CHECK(d.partial);
    CHECK_FALSE(d.first_nonfinite);
    CHECK(analysis::to_json(d).at("partial").as_bool());
    auto other = open(done.path);
    const auto r = analysis::diff(*trial, *other);
    CHECK(r.partial);
    REQUIRE(r.first_difference);  // fc1.weight differs from the MLP's at TRAIN step 0
    CHECK(r.first_difference->mode_step == 0);
    hook.close();
}

// ---- rules that do not mislead (issue 53 item 6; docs/deviations.md D26-D28)

TEST_CASE("WeightUpdateRatio compares consecutive TRAIN steps only: no ratio 0 after an EVAL phase", "[analysis][rules]") {
    TempDir dir("wur");
    analysis_trials::write_mlp(dir.path, {});
    auto trial = open(dir.path);
    WeightUpdateRatio<LocalStore> rule(*trial);
    CHECK(invoke_rule(rule).fired_steps.empty());  // before: fired at every EVAL step and the TRAIN step after it

    // weights that stop changing between TRAIN steps still fire, at the TRAIN step (global 7 is TRAIN step 5)
    TempDir frozen("wur-frozen");
    {
        Hook<LocalStore> h(LocalStore(frozen.path, LocalStore::Durability::none), analysis_trials::hook_options());
        for (int s = 0; s < 8; ++s) {
            h.set_mode(s == 5 || s == 6 ? Mode::EVAL : Mode::TRAIN);
            h.next_step();
            const std::vector<float> w{1.0f + 0.1f * static_cast<float>(std::min(s, 4)), 2.0f};
            h.save_tensor("fc.weight", w.data(), Shape{2}, "weights");
        }
        h.close();
    }
    auto t2 = open(frozen.path);
    WeightUpdateRatio<LocalStore> frozen_rule(*t2);
    CHECK(invoke_rule(frozen_rule).fired_steps == std::vector<std::int64_t>{7});
    CHECK_THAT(frozen_rule.finding(), Catch::Contains("ratio 0"));
}

TEST_CASE("LossNotDecreasing reports a non-finite loss and says when its mode has too few steps", "[analysis][rules]") {
    TempDir dir("lnd");
    analysis_trials::write_mlp(dir.path, {.inf_at = 12});
    auto trial = open(dir.path);
    LossNotDecreasing<LocalStore> rule(*trial);
    const auto fired = invoke_rule(rule).fired_steps;
    REQUIRE_FALSE(fired.empty());
    CHECK(fired.front() == 16);  // TRAIN step 12: the loss is NaN
    auto again = open(dir.path);
    LossNotDecreasing<LocalStore> first(*again);
    CHECK(invoke_rule(first, 0, 17).fired_steps == std::vector<std::int64_t>{16});
    CHECK(first.finding() == "tensor CrossEntropyLoss_output_0: loss is nan at step 16 (TRAIN step 12)");
    // its default mode, EVAL, holds 6 steps: fewer than num_steps + 1 = 11, never compared
    const auto notes = first.notes();
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("mode EVAL has 6 saved steps") && Catch::Contains("never compared"));
}

TEST_CASE("SimilarAcrossRuns passes a float32 rounding by default, fires beyond the tolerance, and compares bitwise at 0", "[analysis][rules]") {
    TempDir a("sar-a"), b("sar-b"), c("sar-c");
    auto write = [](const fs::path& dir, float x) {
        Hook<LocalStore> h(LocalStore(dir, LocalStore::Durability::none), analysis_trials::hook_options());
        h.next_step();
        const std::vector<float> w{x, 2.0f, std::numeric_limits<float>::quiet_NaN()};
        h.save_tensor("fc.weight", w.data(), Shape{3}, "weights");
        h.close();
    };
    write(a.path, 0.1f);
    write(b.path, std::nextafter(0.1f, 1.0f));  // one float32 rounding away
    write(c.path, 0.1001f);
    auto ta = open(a.path), tb = open(b.path), tc = open(c.path);
    SimilarAcrossRuns<LocalStore> rounding(*ta, *tb);
    CHECK(invoke_rule(rounding).fired_steps.empty());  // NaN agrees with NaN too
    SimilarAcrossRuns<LocalStore> beyond(*ta, *tc);
    CHECK(invoke_rule(beyond).fired_steps == std::vector<std::int64_t>{0});
    CHECK_THAT(beyond.finding(), Catch::StartsWith("tensor fc.weight: element 0 is 0.1"));
    auto exact = make_rule("SimilarAcrossRuns", *ta, {{"rtol", "0"}, {"atol", "0"}}, {tb.get()});
    CHECK(invoke_rule(*exact).fired_steps == std::vector<std::int64_t>{0});
    CHECK_THROWS_AS(make_rule("SimilarAcrossRuns", *ta, {{"rtol", "-1"}}, {tb.get()}), InvalidRuleParameter);
}

TEST_CASE("plots: non-finite points are markers on the edge; a log axis never clips the largest value", "[analysis][cli]") {
    cli::plot::Series loss{"loss", {}};
    for (int k = 0; k < 100; ++k) loss.points.emplace_back(k, 1.0 / (1 + k));
    loss.points[90].second = 1e30;  // the explosion
    loss.points[95].second = std::numeric_limits<double>::quiet_NaN();
    loss.points[96].second = std::numeric_limits<double>::infinity();
    loss.points[97].second = -std::numeric_limits<double>::infinity();
    cli::plot::LineChartSpec spec;
    spec.log_y = true;
    const auto L = cli::plot::line_chart_layout(spec, {loss});
    CHECK(L.clipped_high == 0);
    CHECK(std::max(L.y.lo, L.y.hi) >= 1e30);
    CHECK(L.nonfinite == 3);
    const auto svg = cli::plot::render_line_chart(spec, {loss});
    std::size_t triangles = 0;
    for (auto at = svg.find("<polygon"); at != std::string::npos; at = svg.find("<polygon", at + 1)) ++triangles;
    CHECK(triangles == 3);
    CHECK(svg.find("3 non-finite point(s) marked on the edge") != std::string::npos);
    CHECK(svg.find("clipped") == std::string::npos);
}

TEST_CASE("smdebug diagnose and smdebug diff: output and exit codes", "[analysis][cli]") {
    TempDir dir("diag-cli");
    analysis_trials::write_mlp(dir.path / "inf", {.inf_at = 12});
    analysis_trials::write_mlp(dir.path / "clean", {});
    analysis_trials::write_mlp(dir.path / "clean_b", {});
    analysis_trials::write_mlp(dir.path / "parted", {.perturb_from = 8});
    const auto q = [&](const char* n) { return test::shell_quote((dir.path / n).string()); };

    auto bad = test::run_cli("diagnose " + q("inf"));
    CHECK(bad.status == 1);
    CHECK_THAT(bad.out, Catch::Contains("first non-finite value: step 16 (TRAIN step 12), worker worker_0, tensor fc2_output_0 (inf at element 1)"));
    CHECK_THAT(bad.out, Catch::Contains("verdict: module `fc2` turned finite inputs into inf"));
    CHECK_THAT(bad.out, Catch::Contains("input fc2_input_0: finite"));
    CHECK_THAT(bad.out, Catch::Contains("ExplodingTensor: first fired at step 16 (TRAIN step 12)"));

    auto json = test::run_cli("diagnose " + q("inf") + " --json");
    CHECK(json.status == 1);
    const auto j = boost::json::parse(json.out).as_object();
    CHECK(j.at("first_nonfinite").as_object().at("tensor").as_string() == "fc2_output_0");
    CHECK(j.at("first_nonfinite").as_object().at("mode").as_string() == "TRAIN");

    auto clean = test::run_cli("diagnose " + q("clean"));
    CHECK(clean.status == 0);
    CHECK_THAT(clean.out, Catch::Contains("no non-finite value"));
    CHECK(boost::json::parse(test::run_cli("diagnose " + q("clean") + " --json").out).at("first_nonfinite").is_null());

    auto differ = test::run_cli("diff " + q("clean") + " " + q("parted"));
    CHECK(differ.status == 1);
    CHECK_THAT(differ.out, Catch::Contains("runs part at step 10 (TRAIN step 8), tensor fc2.weight"));
    auto djson = test::run_cli("diff " + q("clean") + " " + q("parted") + " --json");
    CHECK(djson.status == 1);
    const auto dj = boost::json::parse(djson.out).as_object();
    CHECK(dj.at("first_difference").as_object().at("mode_step").as_int64() == 8);
    CHECK(test::run_cli("diff " + q("clean") + " " + q("clean_b")).status == 0);
    CHECK(test::run_cli("diff " + q("clean") + " " + q("parted") + " --rtol 0.01 --atol 0.01").status == 0);
    CHECK(test::run_cli("diff " + q("clean") + " " + q("parted") + " --rtol -1").status == 2);
    // `smdebug rule` counts the tensors the rule inspected, not the trial's 15
    auto rule = test::run_cli("rule " + q("clean") + " ExplodingTensor --param tensor_regex=fc1_");
    CHECK(rule.status == 0);
    CHECK_THAT(rule.err, Catch::Contains("steps (0..25) of 2 tensors in"));
    // a firing rule ends with its first firing as a headline, mode step beside the step
    auto fired = test::run_cli("rule " + q("inf") + " ExplodingTensor");
    CHECK(fired.status == 1);
    CHECK_THAT(fired.err, Catch::Contains("; first fired at step 16 (TRAIN step 12): tensor CrossEntropyLoss_input_0: inf at element 1 (and 4 more tensors); fired at 10 steps"));
    // one line per step listing the tensors it fired on, the mode step beside the step (issue 53 item 5)
    std::vector<std::string> fired_lines;
    for (std::size_t at = 0, end; (end = fired.out.find('\n', at)) != std::string::npos; at = end + 1) fired_lines.push_back(fired.out.substr(at, end - at));
    REQUIRE(fired_lines.size() == 10);  // steps 16..25
    CHECK(fired_lines[0] ==
          "step 16 (TRAIN step 12) tensor CrossEntropyLoss_input_0: inf at element 1 (and 4 more tensors: CrossEntropyLoss_output_0, "
          "fc2_output_0, gradients/fc1.weight, gradients/fc2.weight)");
    CHECK(fired_lines[3].starts_with("step 19 (EVAL step 4) tensor CrossEntropyLoss_input_0: nan at element 0 (and 9 more tensors: "));
    // and LossNotDecreasing says its default mode had too few steps
    auto lnd = test::run_cli("rule " + q("clean") + " LossNotDecreasing");
    CHECK(lnd.status == 0);
    CHECK_THAT(lnd.err, Catch::Contains("LossNotDecreasing: tensor CrossEntropyLoss_output_0: mode EVAL has 6 saved steps"));

    auto missing = test::run_cli("diagnose " + q("nowhere"));
    CHECK(missing.status == 2);
    CHECK_THAT(missing.err, Catch::Contains("no such trial folder"));
}

}  // namespace smdebug_test_analysis
