// Unit tests for smdebug/rules/: the rule concepts, invoke/invoke_rule (SEMANTICS.md §10.3-10.4,
// D17), the built-in rules on trials written by the Hook (each where it fires, at its exact first
// step, and where it does not; the §10.6 test expectations), string parameters and the registry,
// actions (§10.5, D18), and the `smdebug rule` gate on trials written by the reference smdebug.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <xtensor/xarray.hpp>

#include <smdebug/rules/rules.hpp>
#include <smdebug/smdebug.hpp>

#include "test_support.hpp"

using namespace smdebug;
namespace fs = std::filesystem;
using test::TempDir;

namespace {

constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_f = std::numeric_limits<float>::infinity();

HookOptions every_step() {
    HookOptions o;
    o.enabled = true;
    o.write_end_marker = true;
    o.save_config = SaveConfig(save_config_mode(1));
    o.include_collections = std::vector<std::string>{"default", "gradients", "weights", "losses"};
    return o;
}

// Writes a finished trial: for each step in `steps` (GLOBAL mode) calls save(hook, step).
template <class F>
void write_trial(const fs::path& dir, int last_step, F&& save, std::vector<int> skip = {}) {
    Hook<LocalStore> hook(LocalStore(dir, LocalStore::Durability::none), every_step());
    for (int s = 0; s <= last_step; ++s) {
        hook.next_step();
        if (std::find(skip.begin(), skip.end(), s) != skip.end()) continue;
        save(hook, s);
    }
    hook.close();
}

std::unique_ptr<Trial<LocalStore>> open_trial(const fs::path& dir) {
    TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    o.poll_interval = std::chrono::milliseconds(50);
    return std::make_unique<Trial<LocalStore>>(LocalStore(dir), o);
}

// Steps at which `rule` fires over [start, end).
template <Rule R>
std::vector<std::int64_t> fired(R& rule, std::int64_t start = 0, std::optional<std::int64_t> end = std::nullopt) {
    return invoke_rule(rule, start, end).fired_steps;
}

// A custom rule with its parameter fixed at compile time: fires when tensor "x" exceeds Limit.
template <Store S, double Limit>
class ExceedsRule : public RuleBase<S> {
public:
    explicit ExceedsRule(Trial<S>& t) : RuleBase<S>(t, "Exceeds") {}
    void set_required_tensors(std::int64_t step) { this->req_.add(this->base_trial(), "x", step); }
    bool invoke_at_step(std::int64_t step) {
        visited.push_back(step);
        const double v = compute_reduction(this->req_.value(this->base_trial(), "x", step), Reduction::max);
        return v > Limit ? this->fired("x=" + std::to_string(v)) : false;
    }
    std::vector<std::int64_t> visited;
};

// The smallest thing that is a Rule: no base class at all.
struct BareRule {
    Trial<LocalStore>* t;
    std::string_view name() const { return "Bare"; }
    Trial<LocalStore>& base_trial() { return *t; }
    bool invoke_at_step(std::int64_t) { return false; }
};
struct NotARule {
    std::string_view name() const { return "No"; }
};

static_assert(Rule<BareRule>);
static_assert(!RuleWithRequiredTensors<BareRule> && !RuleWithActions<BareRule> && !RuleWithFinding<BareRule>);
static_assert(!Rule<NotARule>);
static_assert(Rule<ExceedsRule<LocalStore, 1.0>> && RuleWithRequiredTensors<ExceedsRule<LocalStore, 1.0>>);
static_assert(RuleWithOtherTrials<ExceedsRule<LocalStore, 1.0>> && RuleWithActions<ExceedsRule<LocalStore, 1.0>>);
static_assert(RuleWithFinding<ExceedsRule<LocalStore, 1.0>>);
static_assert(Rule<RuntimeRule<AnyStore>> && RuleWithRequiredTensors<RuntimeRule<AnyStore>>);
static_assert(Rule<VanishingGradient<LocalStore>> && Rule<ExplodingTensor<AnyStore>>);
static_assert(RuleTrial<Trial<LocalStore>> && RuleTrial<Trial<AnyStore>>);

std::vector<float> filled(std::size_t n, float v) { return std::vector<float>(n, v); }

}  // namespace

// ---- invoke_rule semantics (§10.4) -------------------------------------------------------------

TEST_CASE("invoke_rule visits saved steps, end_step exclusive, returns at the end of training (D17)", "[rules][invoke]") {
    TempDir dir("rules");
    // Saved steps 0,1,2,4,5 (step 3 is skipped); x = step.
    write_trial(dir.path, 5, [](auto& h, int s) { h.save_tensor("x", std::vector<float>{float(s)}); }, {3});
    auto trial = open_trial(dir.path);
    ExceedsRule<LocalStore, 100.0> never(*trial);
    auto r = invoke_rule(never);
    CHECK(never.visited == std::vector<std::int64_t>{0, 1, 2, 4, 5});
    CHECK(r.training_ended);
    CHECK(r.fired_steps.empty());

    ExceedsRule<LocalStore, 100.0> ranged(*trial);
    r = invoke_rule(ranged, 1, 4);
    CHECK(ranged.visited == std::vector<std::int64_t>{1, 2});
    CHECK_FALSE(r.training_ended);
    CHECK(r.end_step == 3);

    ExceedsRule<LocalStore, 0.5> fires(*trial);  // fires at 1, 2, 4, 5
    CHECK(fired(fires) == std::vector<std::int64_t>{1, 2, 4, 5});
    ExceedsRule<LocalStore, 0.5> raises(*trial);
    try {
        invoke_rule(raises, 0, std::nullopt, true);
        FAIL("no RuleEvaluationConditionMet");
    } catch (const RuleEvaluationConditionMet& e) {
        CHECK(e.rule_name == "Exceeds");
        CHECK(e.step == 1);
        CHECK_FALSE(e.end_of_rule);
    }
    CHECK(raises.visited == std::vector<std::int64_t>{0, 1});
    CHECK(trial->dynamic_refresh());  // restored after the exception
}

TEST_CASE("invoke_rule skips steps whose required tensors are missing, without calling invoke_at_step", "[rules][invoke]") {
    TempDir dir("rules");
    write_trial(dir.path, 4, [](auto& h, int s) {
        if (s % 2 == 0) h.save_tensor("x", std::vector<float>{1.0f});
        h.save_tensor("y", std::vector<float>{1.0f});
    });
    auto trial = open_trial(dir.path);
    ExceedsRule<LocalStore, 5.0> r(*trial);
    invoke_rule(r);
    CHECK(r.visited == std::vector<std::int64_t>{0, 2, 4});
}

TEST_CASE("invoke_rule waits for a running job's steps and ends when training ends", "[rules][invoke][realtime]") {
    TempDir dir("rules");
    auto hook = std::make_unique<Hook<LocalStore>>(LocalStore(dir.path, LocalStore::Durability::none), every_step());
    hook->next_step();
    hook->save_tensor("x", std::vector<float>{0.0f});
    hook->next_step();  // step 0 is on disk
    auto trial = open_trial(dir.path);
    std::atomic<bool> writer_done{false};
    std::thread writer([&] {
        for (int s = 1; s <= 5; ++s) {
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            hook->save_tensor("x", std::vector<float>{s == 3 ? 10.0f : 0.0f});
            if (s < 5) hook->next_step();
        }
        hook->close();
        writer_done = true;
    });
    ExceedsRule<LocalStore, 5.0> r(*trial);
    std::vector<RuleFiring> firings;
    InvokeOptions o;
    o.on_fire = [&](const RuleFiring& f) { firings.push_back(f); };
    const auto result = invoke_rule(r, o);
    writer.join();
    CHECK(writer_done);
    CHECK(result.training_ended);
    CHECK(r.visited == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
    REQUIRE(firings.size() == 1);
    CHECK(firings[0].step == 3);
    CHECK(firings[0].rule == "Exceeds");
    CHECK(firings[0].finding.starts_with("x=10"));
}

// ---- built-in rules ----------------------------------------------------------------------------

TEST_CASE("ExplodingTensor: the §10.6 test, only_nan, and a finite run", "[rules][builtin]") {
    TempDir dir("rules");
    // foo_0..2 in gradients: NaN at steps 0 and 2, finite at 1; +inf in bar at step 1.
    write_trial(dir.path, 2, [](auto& h, int s) {
        for (int k = 0; k < 3; ++k) h.save_tensor("foo_" + std::to_string(k), filled(8, s == 1 ? 1.0f : nan_f), "gradients");
        h.save_tensor("bar", std::vector<float>{s == 1 ? inf_f : 0.0f});
    });
    auto trial = open_trial(dir.path);
    ExplodingTensor<LocalStore> rule(*trial, {.collection_names = {"gradients", "weights"}, .tensor_regex = {}, .only_nan = false});
    int raises = 0;
    for (std::int64_t start : {0, 1}) {
        try {
            invoke_rule(rule, start, 3, true);
        } catch (const RuleEvaluationConditionMet& e) {
            CHECK(e.step == (start == 0 ? 0 : 2));
            ++raises;
        }
    }
    CHECK(raises == 2);
    CHECK(rule.finding() == "tensor foo_0: nan at element 0");

    ExplodingTensor<LocalStore> inf_rule(*trial, {.collection_names = {}, .tensor_regex = {"bar"}, .only_nan = false});
    CHECK(fired(inf_rule) == std::vector<std::int64_t>{1});
    ExplodingTensor<LocalStore> nan_only(*trial, {.collection_names = {}, .tensor_regex = {"bar"}, .only_nan = true});
    CHECK(fired(nan_only).empty());
    ExplodingTensor<LocalStore> everything(*trial);
    CHECK(fired(everything) == std::vector<std::int64_t>{0, 1, 2});
}

TEST_CASE("VanishingGradient fires at the first step with a tiny mean |gradient|", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 5, [](auto& h, int s) {
        h.save_tensor("grad/a", std::vector<float>{1e-3f, -1e-3f}, "gradients");
        h.save_tensor("grad/b", std::vector<float>{s >= 3 ? 1e-9f : 1e-2f, s >= 3 ? -1e-9f : 1e-2f}, "gradients");
        h.save_tensor("w", std::vector<float>{0.0f}, "weights");  // not a gradient: ignored
    });
    auto trial = open_trial(dir.path);
    VanishingGradient<LocalStore> rule(*trial);
    const auto steps = fired(rule);
    REQUIRE_FALSE(steps.empty());
    CHECK(steps.front() == 3);
    CHECK(rule.finding().starts_with("tensor grad/b: mean(|x|)=9.99"));
    VanishingGradient<LocalStore> strict(*trial, {.threshold = 1e-10});
    CHECK(fired(strict).empty());
}

TEST_CASE("AllZero needs a selection and fires on an all-zero tensor", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 3, [](auto& h, int s) {
        h.save_tensor("act/relu", std::vector<float>{s == 2 ? 0.0f : 1.0f, 0.0f, 0.0f, 0.0f});
    });
    auto trial = open_trial(dir.path);
    CHECK_THROWS_AS(AllZero<LocalStore>(*trial), InvalidRuleParameter);
    AllZero<LocalStore> rule(*trial, {.collection_names = {}, .tensor_regex = {"relu"}, .threshold = 100});
    CHECK(fired(rule) == std::vector<std::int64_t>{2});
    AllZero<LocalStore> seventy(*trial, {.collection_names = {}, .tensor_regex = {"relu"}, .threshold = 70});
    CHECK(fired(seventy) == std::vector<std::int64_t>{0, 1, 2, 3});
}

TEST_CASE("UnchangedTensor: the §10.6 expectations", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 5, [](auto& h, int s) {
        if (s <= 2)
            for (int k = 0; k < 3; ++k) h.save_tensor("foo_" + std::to_string(k), filled(4, 1.0f));
        if (s == 5)
            for (int k = 0; k < 3; ++k) h.save_tensor("boo_" + std::to_string(k), filled(4, 1.0f));
    }, {3, 4});
    auto trial = open_trial(dir.path);
    UnchangedTensor<LocalStore>::Params p;
    p.tensor_regex = {".*"};
    UnchangedTensor<LocalStore> a(*trial, p), b(*trial, p), c(*trial, p), d(*trial, p);
    CHECK(fired(a, 0, 2).empty());
    CHECK(fired(b, 0, 3) == std::vector<std::int64_t>{2});
    CHECK(fired(c, 2, 3) == std::vector<std::int64_t>{2});
    CHECK(fired(d, 3, 6).empty());
    CHECK_THROWS_AS(UnchangedTensor<LocalStore>(*trial), InvalidRuleParameter);
}

TEST_CASE("UnchangedTensor: a changing tensor never fires; tolerances apply", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 5, [](auto& h, int s) { h.save_tensor("w", std::vector<float>{1.0f + 1e-3f * float(s)}, "weights"); });
    auto trial = open_trial(dir.path);
    UnchangedTensor<LocalStore>::Params p;
    p.collection_names = {"weights"};
    UnchangedTensor<LocalStore> strict(*trial, p);
    CHECK(fired(strict).empty());
    p.atol = 0.01;
    UnchangedTensor<LocalStore> loose(*trial, p);
    CHECK(fired(loose) == std::vector<std::int64_t>{2, 3, 4, 5});
}

namespace {
void write_losses(const fs::path& dir, const std::vector<std::pair<int, float>>& losses) {
    const int last = losses.back().first;
    write_trial(dir, last, [&](auto& h, int s) {
        for (const auto& [step, v] : losses)
            if (step == s)
                for (const char* n : {"loss_0", "loss_1"}) h.save_tensor(n, std::vector<float>{v}, "default", "gradients");
    });
}
}  // namespace

TEST_CASE("LossNotDecreasing: the §10.6 expectations (first fire at 12; diff_percent 20 at 24)", "[rules][builtin]") {
    TempDir dir("rules");
    write_losses(dir.path, {{0, 0.30f}, {4, 0.33f}, {8, 0.31f}, {12, 0.30f}, {16, 0.28f}});
    auto trial = open_trial(dir.path);
    LossNotDecreasing<LocalStore>::Params by_regex;
    by_regex.tensor_regex = split_list("loss, losses");
    LossNotDecreasing<LocalStore>::Params by_collection;
    by_collection.collection_names = {"default"};
    for (const auto& p : {by_regex, by_collection, LossNotDecreasing<LocalStore>::Params{}}) {
        LossNotDecreasing<LocalStore> rule(*trial, p);
        const auto steps = fired(rule, 0, 17);
        REQUIRE_FALSE(steps.empty());
        CHECK(steps.front() == 12);
        CHECK(fired(rule, 13, 17).empty());  // the same rule object: next check at >= 22
    }

    TempDir dir2("rules");
    write_losses(dir2.path, {{0, 0.30f}, {4, 0.33f}, {8, 0.31f}, {12, 0.30f}, {16, 0.28f}, {20, 0.2f}, {24, 0.42f}});
    auto trial2 = open_trial(dir2.path);
    LossNotDecreasing<LocalStore>::Params p20;
    p20.diff_percent = 20;
    LossNotDecreasing<LocalStore> rule(*trial2, p20);
    const auto steps = fired(rule, 0, 25);
    REQUIRE_FALSE(steps.empty());
    CHECK(steps.front() == 24);
}

TEST_CASE("LossNotDecreasing stays quiet on a decreasing loss", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 40, [](auto& h, int s) { h.save_tensor("loss", std::vector<float>{1.0f / float(s + 1)}, "losses"); });
    auto trial = open_trial(dir.path);
    LossNotDecreasing<LocalStore> rule(*trial);
    CHECK(fired(rule).empty());
}

TEST_CASE("Confusion: the four §10.6 cases", "[rules][builtin]") {
    auto run = [](auto labels_name, auto preds_name, std::vector<float> y, std::vector<float> yhat, ConfusionParams p, bool in_collections) {
        TempDir dir("rules");
        write_trial(dir.path, 0, [&](auto& h, int) {
            if (in_collections) {
                h.save_tensor(labels_name, y, "labels");
                h.save_tensor(preds_name, yhat, "predictions");
            } else {
                h.save_tensor(labels_name, y);
                h.save_tensor(preds_name, yhat);
            }
        });
        auto trial = open_trial(dir.path);
        Confusion<LocalStore> rule(*trial, p);
        return fired(rule);
    };
    std::vector<float> random_labels;
    std::uint32_t seed = 7;
    for (int i = 0; i < 100; ++i) random_labels.push_back(float((seed = seed * 1664525u + 1013904223u) >> 16 & 7u));
    CHECK(run("y", "y_hat", random_labels, random_labels, {}, true).empty());  // (1)
    std::vector<float> y, yhat;
    for (int i = 0; i < 10; ++i) y.push_back(float(i));
    yhat = y;
    yhat[4] = 7;
    ConfusionParams foo_bar;
    foo_bar.category_no = 10;
    foo_bar.labels = "foo";
    foo_bar.predictions = "bar";
    CHECK(run("foo", "bar", y, yhat, foo_bar, false) == std::vector<std::int64_t>{0});  // (2)
    ConfusionParams strict = foo_bar;
    strict.min_diag = 0.0;
    strict.max_off_diag = 0.01;
    CHECK(run("foo", "bar", y, yhat, strict, false) == std::vector<std::int64_t>{0});  // (3)
    CHECK(run("labels", "predictions", y, y, {}, false).empty());                       // (4)
}

TEST_CASE("ClassImbalance: the §10.6 expectation (fires at step 3)", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 3, [](auto& h, int s) {
        if (s != 3) return;
        std::vector<float> labels(1000, 0.0f);
        for (int i = 0; i < 10; ++i) labels[i] = 1.0f;
        h.save_tensor("labels_0", labels);
    }, {0, 1, 2});
    auto trial = open_trial(dir.path);
    ClassImbalanceParams p;
    p.labels_regex = {"labels_0"};
    p.predictions_regex = {"labels_0"};
    ClassImbalance<LocalStore> rule(*trial, p);
    CHECK(fired(rule) == std::vector<std::int64_t>{3});
    p.threshold_imbalance = 200;
    ClassImbalance<LocalStore> tolerant(*trial, p);
    CHECK(fired(tolerant).empty());
}

TEST_CASE("SimilarAcrossRuns: identical runs are quiet, a difference fires at its step", "[rules][builtin]") {
    TempDir a("rules"), b("rules"), c("rules");
    auto save = [](float bump_at_2) {
        return [=](auto& h, int s) { h.save_tensor("w", std::vector<float>{float(s), s == 2 ? bump_at_2 : 0.0f}); };
    };
    write_trial(a.path, 3, save(0.0f));
    write_trial(b.path, 3, save(0.0f));
    write_trial(c.path, 3, save(1.0f));
    auto ta = open_trial(a.path), tb = open_trial(b.path), tc = open_trial(c.path);
    SimilarAcrossRuns<LocalStore> same(*ta, *tb);
    CHECK(fired(same).empty());
    SimilarAcrossRuns<LocalStore> differ(*ta, *tc);
    CHECK(fired(differ) == std::vector<std::int64_t>{2});
    CHECK(differ.finding() == "tensor w: element 1 is 0 vs 1");
}

TEST_CASE("WeightUpdateRatio fires when the weights stop moving", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 5, [](auto& h, int s) {
        const float w = 1.0f + 0.01f * float(std::min(s, 2));  // unchanged from step 2 on
        h.save_tensor("fc.weight", std::vector<float>{w, w}, "weights");
    });
    auto trial = open_trial(dir.path);
    WeightUpdateRatio<LocalStore> rule(*trial);
    const auto steps = fired(rule);
    REQUIRE_FALSE(steps.empty());
    CHECK(steps.front() == 3);
    WeightUpdateRatio<LocalStore> lenient(*trial, {.large_threshold = 10, .small_threshold = -1, .epsilon = 1e-9});
    CHECK(fired(lenient).empty());
}

// ---- registry and parameters -------------------------------------------------------------------

TEST_CASE("registry: case-insensitive names, string parameters, typed errors", "[rules][registry]") {
    TempDir dir("rules");
    write_trial(dir.path, 2, [](auto& h, int s) { h.save_tensor("g", std::vector<float>{s == 1 ? 1e-9f : 1.0f}, "gradients"); });
    auto trial = open_trial(dir.path);
    auto rule = make_rule("vanishingGRADIENT", *trial, {{"Threshold", "1e-6"}});
    CHECK(rule->name() == "VanishingGradient");
    CHECK(fired(*rule) == std::vector<std::int64_t>{1});

    try {
        make_rule("NoSuchRule", *trial);
        FAIL("no error");
    } catch (const UnknownRule& e) {
        CHECK(e.rule == "NoSuchRule");
        CHECK(std::string(e.what()).find("VanishingGradient") != std::string::npos);
    }
    try {
        make_rule("VanishingGradient", *trial, {{"treshold", "1"}});
        FAIL("no error");
    } catch (const UnknownRuleParameter& e) {
        CHECK(e.parameter == "treshold");
        CHECK(e.rule == "VanishingGradient");
    }
    try {
        make_rule("VanishingGradient", *trial, {{"threshold", "1e-7x"}});
        FAIL("no error");
    } catch (const InvalidRuleParameter& e) {
        CHECK(e.parameter == "threshold");
        CHECK(e.value == "1e-7x");
    }
    CHECK_THROWS_AS(make_rule("ExplodingTensor", *trial, {{"only_nan", "maybe"}}), InvalidRuleParameter);
    CHECK_THROWS_AS(make_rule("UnchangedTensor", *trial, {{"num_steps", "3.5"}, {"tensor_regex", "g"}}), InvalidRuleParameter);
    CHECK_THROWS_AS(make_rule("AllZero", *trial), InvalidRuleParameter);
    CHECK_THROWS_AS(make_rule("SimilarAcrossRuns", *trial), InvalidRuleParameter);
    CHECK_THROWS_AS(make_rule("LossNotDecreasing", *trial, {{"mode", "SOMETIMES"}}), InvalidRuleParameter);

    // Lists are comma separated, blanks trimmed.
    auto et = make_rule("explodingtensor", *trial, {{"collection_names", " gradients , weights"}, {"only_nan", "True"}});
    CHECK(fired(*et).empty());
    CHECK(split_list(" a, b ,,c ") == std::vector<std::string>{"a", "b", "c"});
    RuleParams p;
    CHECK_THROWS_AS(p.set_assignment("novalue"), UsageError);
    p.set_assignment("Only_NaN=true");
    CHECK(p.values().at("only_nan") == "true");
    CHECK(find_builtin_rule("similaracrossruns")->needs_other_trial);
}

// ---- actions -----------------------------------------------------------------------------------

TEST_CASE("actions: JSON parsing (D18), callback and stop-signal file on every firing step", "[rules][actions]") {
    std::vector<std::string> logs;
    Actions::Factories f;
    std::vector<std::string> made;
    f.log = [&](std::string_view, std::string_view t) { logs.emplace_back(t); };
    f.message = [&](const std::string& rule, const std::string& proto, const std::string& ep) -> Actions::Action {
        made.push_back(rule + " " + proto + " " + ep);
        return [](const RuleFiring&) {};
    };
    f.stop_training = [&](const std::string& rule, const std::string& prefix) -> Actions::Action {
        made.push_back(rule + " stop " + prefix);
        return [](const RuleFiring&) {};
    };
    auto a = Actions::parse(R"([{"Name": "SMS", "Endpoint": "+1-555-Abc"}, {"name": "email"}, 3,
                                {"name": "StopTraining", "training_job_prefix": "MyJob-"}, {"name": "dance"}])", "R", f);
    CHECK(a.size() == 2);
    CHECK(made == std::vector<std::string>{"R sms +1-555-Abc", "R stop MyJob-"});  // values keep their case
    CHECK(logs.size() == 3);  // email without endpoint, 3 not an object, dance unsupported
    CHECK(Actions::parse("  ", "R", f).empty());
    CHECK(Actions::parse("\"stoptraining\"", "R", f).empty());
    CHECK_THROWS_AS(Actions::parse("{not json", "R", f), InvalidRuleParameter);
    CHECK(Actions::parse(R"({"name":"sms","endpoint":"x"})", "R").empty());  // no AWS factory: skipped

    TempDir dir("rules");
    write_trial(dir.path, 3, [](auto& h, int s) { h.save_tensor("x", std::vector<float>{s % 2 ? 9.0f : 0.0f}); });
    auto trial = open_trial(dir.path);
    ExceedsRule<LocalStore, 5.0> rule(*trial);
    std::vector<std::int64_t> called;
    rule.actions().add("callback", callback_action([&](const RuleFiring& fi) { called.push_back(fi.step); }));
    rule.actions().add("stop file", stop_signal_file_action(dir.path, "rule_stop_signal"));
    std::ostringstream log;
    rule.actions().add("log", log_action(log));
    CHECK(fired(rule) == std::vector<std::int64_t>{1, 3});
    CHECK(called == std::vector<std::int64_t>{1, 3});
    std::ifstream stop(dir.path / "rule_stop_signal");
    long long when = 0;
    stop >> when;
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    CHECK(when > now - 60);
    CHECK(when <= now);
    CHECK(log.str().find("SMDebugRule:Exceeds fired at step 3. x=9") != std::string::npos);
}

// ---- the `smdebug rule` gate on trials written by the reference ---------------------------------

namespace {
struct Run {
    int exit_code;
    std::string out;
};
Run run_cli(const std::string& args) {
    const std::string cmd = std::string(SMDEBUG_BIN_DIR) + "/smdebug " + args + " 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    std::string out;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int status = ::pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}
std::string case_trial(const std::string& name) {
    const auto p = fs::path(SMDEBUG_TEST_DATA_DIR) / "conformance" / "cases" / name / "trial";
    REQUIRE(fs::exists(p));
    return p.string();
}
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
}  // namespace

TEST_CASE("smdebug rule: first firing step and exit code on reference-written trials", "[rules][cli]") {
    REQUIRE(fs::exists(fs::path(SMDEBUG_BIN_DIR) / "smdebug"));
    // dtype_zoo: the reference reads f16/special at step 0 as [nan, inf, -inf, ...] (expected.json).
    auto r = run_cli("rule ExplodingTensor " + case_trial("dtype_zoo"));
    CHECK(r.exit_code == 1);
    CHECK(first_line(r.out) == "step 0 tensor f16/special: nan at element 0");
    r = run_cli("rule explodingtensor " + case_trial("dtype_zoo") + " --param tensor_regex=^f32/ ");
    CHECK(r.exit_code == 0);
    CHECK(r.out.empty());
    // pt_train_eval: gradients at TRAIN steps 0,3,6,9,16; the reference's values give a smallest
    // mean(|g|) per step of 0.00770, 0.00603, 0.00442 (gradient/MLP_fc1.bias), 0.00687, 0.00751.
    r = run_cli("rule VanishingGradient " + case_trial("pt_train_eval"));
    CHECK(r.exit_code == 0);
    CHECK(r.out.empty());
    r = run_cli("rule VanishingGradient " + case_trial("pt_train_eval") + " --param threshold=0.005");
    CHECK(r.exit_code == 1);
    CHECK(first_line(r.out).starts_with("step 6 tensor gradient/MLP_fc1.bias: mean(|x|)=0.0044"));
    r = run_cli("rule VanishingGradient " + case_trial("pt_train_eval") + " --param threshold=0.0065 --start-step 4");
    CHECK(first_line(r.out).starts_with("step 6 "));
    r = run_cli("rule VanishingGradient " + case_trial("pt_train_eval") + " --param threshold=0.0065 --end-step 6");
    CHECK(r.exit_code == 1);
    CHECK(r.out == first_line(r.out) + "\n");
    CHECK(r.out.starts_with("step 3 tensor gradient/MLP_fc1.weight"));
    // multiworker_incomplete: loss 1, 1/2, 1/3, ... decreases.
    r = run_cli("rule LossNotDecreasing " + case_trial("multiworker_incomplete") + " --param num_steps=2");
    CHECK(r.exit_code == 0);
    // Usage and data errors exit 2.
    CHECK(run_cli("rule NoSuchRule " + case_trial("dtype_zoo")).exit_code == 2);
    CHECK(run_cli("rule VanishingGradient " + case_trial("dtype_zoo") + " --param treshold=1").exit_code == 2);
    CHECK(run_cli("rule VanishingGradient " + case_trial("dtype_zoo") + " --param threshold=abc").exit_code == 2);
    CHECK(run_cli("rule VanishingGradient").exit_code == 2);
    CHECK(run_cli("rule SimilarAcrossRuns " + case_trial("dtype_zoo")).exit_code == 2);
    r = run_cli("rule SimilarAcrossRuns " + case_trial("pt_train_eval") + " --other " + case_trial("pt_train_eval"));
    CHECK(r.exit_code == 0);
    r = run_cli("rules");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("VanishingGradient") != std::string::npos);
    CHECK(r.out.find("threshold = 1e-07") != std::string::npos);
}
