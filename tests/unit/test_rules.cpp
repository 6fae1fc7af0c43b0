// Unit tests for smdebug/rules/: the rule concepts, invoke/invoke_rule
// (docs/rules.md "invoke and invoke_rule", D17), the built-in rules on trials written by the Hook
// (each where it fires, at its exact first step, and where it does not; the reference's old tests
// of the built-in rules), string parameters and the registry, actions (docs/rules.md "Actions",
// D18), and the `smdebug rule` gate on trials written by the reference smdebug.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <csignal>

#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xarray.hpp>

#include <smdebug/rules/actions/action_spec.hpp>
#include <smdebug/rules/actions/aws_actions.hpp>
#include <smdebug/rules/rules.hpp>
#include <smdebug/smdebug.hpp>

#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_rules {

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
static_assert(Rule<Overfit<LocalStore>> && Rule<TreeDepth<LocalStore>> && Rule<PoorWeightInitialization<LocalStore>>);

std::vector<float> filled(std::size_t n, float v) { return std::vector<float>(n, v); }

}  // namespace

// ---- invoke_rule semantics (docs/rules.md "invoke and invoke_rule") -------------------------------

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

TEST_CASE("RequiredTensors: clear() forgets requirements and values; items are refilled step after step", "[rules][invoke]") {
    TempDir dir("rules");
    write_trial(dir.path, 3, [](auto& h, int s) {
        h.save_tensor("a", std::vector<float>{static_cast<float>(s), 1.0f});
        h.save_tensor("b", std::vector<float>{static_cast<float>(10 * s)});
    });
    auto trial = open_trial(dir.path);
    RequiredTensors req;
    CHECK(req.empty());
    for (std::int64_t step = 0; step <= 3; ++step) {
        INFO("step " << step);
        req.clear();
        CHECK(req.empty());
        CHECK(req.names(*trial).empty());
        // "b" only at odd steps: at even steps it is not required, and asking for it is an error.
        req.add(*trial, "a", step);
        if (step % 2 == 1) req.add(*trial, "b", std::vector<std::int64_t>{step, step - 1});
        req.add(*trial, "a", step);  // twice: one value
        req.fetch();
        CHECK(req.names(*trial) == (step % 2 == 1 ? std::vector<std::string>{"a", "b"} : std::vector<std::string>{"a"}));
        CHECK(req.steps(*trial, "a") == std::vector<std::int64_t>{step, step});
        CHECK(req.value(*trial, "a", step).elements<float>()[0] == static_cast<float>(step));
        CHECK(req.has_value(*trial, "a", step));
        CHECK_FALSE(req.has_value(*trial, "a", step + 1));
        CHECK_THROWS_AS(req.value(*trial, "a", step + 1), TensorUnavailableForStep);
        if (step % 2 == 1) {
            CHECK(req.value(*trial, "b", step).elements<float>()[0] == static_cast<float>(10 * step));
            CHECK(req.value(*trial, "b", step - 1).elements<float>()[0] == static_cast<float>(10 * (step - 1)));
            CHECK(req.reduction(*trial, "b", step - 1, Reduction::max) == 10.0 * (step - 1));
        } else {
            CHECK_FALSE(req.has_value(*trial, "b", step - 1));
            CHECK_THROWS_AS(req.value(*trial, "b", step), UsageError);
        }
    }
    CHECK_THROWS_AS(req.add(*trial, "nope", 0), TensorUnavailable);
}

TEST_CASE("invoke_rule waits for a running job's steps and ends when training ends", "[rules][invoke][realtime]") {
    TempDir dir("rules");
    auto hook = std::make_unique<Hook<LocalStore>>(LocalStore(dir.path, LocalStore::Durability::none), every_step());
    hook->next_step();
    hook->save_tensor("x", std::vector<float>{0.0f});
    hook->next_step();  // step 0 is handed to the background writer, which may not have written it yet:
    TrialOptions wait;  // a job that has not started writing is waited for only when asked (D16)
    wait.training_end_delay_refresh = std::chrono::milliseconds(0);
    wait.poll_interval = std::chrono::milliseconds(50);
    wait.wait_for_trial = true;
    auto trial = std::make_unique<Trial<LocalStore>>(LocalStore(dir.path), wait);
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

TEST_CASE("ExplodingTensor: the reference's test, only_nan, and a finite run", "[rules][builtin]") {
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

// Issue 46 §5: a step's findings name every tensor that fired, in invoke_rule, RuleSet and the CLI.
TEST_CASE("A rule reports every tensor that fires at a step", "[rules][builtin][findings]") {
    TempDir dir("rules-all");
    // Four non-finite tensors at step 1, one (d) at step 2, none at 0.
    write_trial(dir.path, 2, [](auto& h, int s) {
        for (const char* n : {"a", "b", "c", "d", "ok"}) {
            const bool bad = std::string_view(n) != "ok" && (s == 1 || (s == 2 && std::string_view(n) == "d"));
            h.save_tensor(n, std::vector<float>{1.0f, bad ? (n[0] == 'b' ? inf_f : nan_f) : 2.0f});
        }
    });
    auto trial = open_trial(dir.path);
    ExplodingTensor<LocalStore> rule(*trial);
    std::vector<RuleFiring> firings;
    InvokeOptions o;
    o.on_fire = [&](const RuleFiring& f) { firings.push_back(f); };
    CHECK(invoke_rule(rule, o).fired_steps == std::vector<std::int64_t>{1, 2});
    REQUIRE(firings.size() == 2);
    using F = RuleFiring::Finding;
    CHECK(firings[0].findings == std::vector<F>{{"a", "tensor a: nan at element 1"}, {"b", "tensor b: inf at element 1"},
                                                {"c", "tensor c: nan at element 1"}, {"d", "tensor d: nan at element 1"}});
    CHECK((firings[0].finding == "tensor a: nan at element 1" && firings[0].tensor == "a"));
    CHECK(firings[1].findings == std::vector<F>{{"d", "tensor d: nan at element 1"}});
    CHECK(rule.findings().size() == 1);  // the last firing step's

    // raise_eval_cond: raised at the first step that fires (the reference's semantics), with all of it reported.
    ExplodingTensor<LocalStore> raising(*trial);
    firings.clear();
    o.raise_eval_cond = true;
    CHECK_THROWS_MATCHES(invoke_rule(raising, o), RuleEvaluationConditionMet,
                         Catch::Predicate<RuleEvaluationConditionMet>([](const auto& e) { return e.step == 1; }));
    REQUIRE(firings.size() == 1);
    CHECK(firings[0].findings.size() == 4);

    // A rule that fires without saying what: one empty finding.
    ExceedsRule<LocalStore, 0.0> custom(*trial);  // no tensor "x": never evaluated
    CHECK(fired(custom).empty());

    // RuleSet (smdebug monitor) sees the same.
    RuleSet<LocalStore> set(*trial);
    set.add(make_rule("ExplodingTensor", *trial, RuleParams{}));
    const auto at1 = set.run_at_step(1);
    REQUIRE(at1.fired.size() == 1);
    REQUIRE(at1.fired[0]);
    CHECK(at1.fired[0]->findings.size() == 4);
    const auto at0 = set.run_at_step(0);
    CHECK_FALSE(at0.fired[0]);

#ifdef SMDEBUG_BIN_DIR
    auto r = test::run_cli("rule ExplodingTensor " + test::shell_quote(dir.path.string()));
    CHECK(r.status == 1);
    // one line per step listing every tensor that fired there (issue 53 item 5)
    CHECK(r.out == "step 1 tensor a: nan at element 1 (and 3 more tensors: b, c, d)\nstep 2 tensor d: nan at element 1\n");
    r = test::run_cli("rule ExplodingTensor " + test::shell_quote(dir.path.string()) + " --param tensor_regex=^ok$");
    CHECK(r.status == 0);
    CHECK(r.out.empty());  // issue 46 §4: one summary line on stderr, not silence
    // issue 53 item 5: the count is of the tensors the rule inspected (the one ^ok$ selects), not the trial's 5
    CHECK_THAT(r.err, Catch::Matchers::Contains("checked 3 steps") && Catch::Matchers::Contains("of 1 tensor in") && Catch::Matchers::EndsWith("did not fire\n"));
#endif
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

TEST_CASE("UnchangedTensor: the reference test's expectations", "[rules][builtin]") {
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

TEST_CASE("LossNotDecreasing: the reference tests' expectations (first fire at 12; diff_percent 20 at 24)", "[rules][builtin]") {
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

TEST_CASE("Confusion: the four reference test cases", "[rules][builtin]") {
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

TEST_CASE("ClassImbalance: the reference test's expectation (fires at step 3)", "[rules][builtin]") {
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

TEST_CASE("registry: a step-local rule fires at the same steps over step ranges as over the whole trial", "[rules][registry]") {
    TempDir dir("rules");
    // g: zeros at odd steps, NaN at step 4, random-looking otherwise.
    write_trial(dir.path, 7, [](auto& h, int s) {
        std::vector<float> g{0.5f * s + 1, -2.0f, 3.0f, 0.25f};
        if (s % 2) g.assign(4, 0.0f);
        if (s == 4) g[1] = nan_f;
        h.save_tensor("g", g, "gradients");
    });
    const std::map<std::string, RuleParams> params{
        {"AllZero", {{"tensor_regex", "g"}}}, {"ExplodingTensor", {}}, {"VanishingGradient", {{"threshold", "1e-6"}}},
        {"TensorVariance", {{"collection_names", "gradients"}, {"max_threshold", "2"}}}, {"DeadRelu", {{"tensor_regex", "g"}}},
        {"SaturatedActivation", {{"tensor_regex", "g"}, {"threshold_tanh", "-0.1,0.1"}}}, {"TreeDepth", {}}};
    int step_local = 0;
    for (const auto& info : builtin_rules()) {
        CAPTURE(info.name);
        if (!is_step_local_rule(info.name)) continue;
        ++step_local;
        CHECK_FALSE(info.needs_other_trial);
        REQUIRE(params.count(std::string(info.name)));
        auto whole_trial = open_trial(dir.path);
        auto whole_rule = make_rule(info.name, *whole_trial, params.at(std::string(info.name)));
        const auto whole = fired(*whole_rule);
        std::vector<std::int64_t> by_range;
        for (std::int64_t a = 0; a < 8; a += 3) {
            TrialOptions o;
            o.training_end_delay_refresh = std::chrono::milliseconds(0);
            o.range_begin = a;
            o.range_end = a + 3;
            Trial<LocalStore> part(LocalStore(dir.path), o);
            auto rule = make_rule(info.name, part, params.at(std::string(info.name)));
            for (auto s : fired(*rule, a, a + 3)) by_range.push_back(s);
        }
        CHECK(by_range == whole);
    }
    CHECK(step_local == 7);
    CHECK(fired(*make_rule("AllZero", *open_trial(dir.path), params.at("AllZero"))) == std::vector<std::int64_t>{1, 3, 5, 7});
    CHECK_FALSE(is_step_local_rule("LossNotDecreasing"));
    CHECK_FALSE(is_step_local_rule("WeightUpdateRatio"));
    CHECK_FALSE(is_step_local_rule("SimilarAcrossRuns"));
}

namespace {
// A LocalStore that counts the reads of records: batched (read_ranges) and single (read_range).
struct ReadCountingStore {
    LocalStore local;
    std::shared_ptr<std::atomic<int>> reads = std::make_shared<std::atomic<int>>(0);
    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const { return local.list(prefix, start_after); }
    ByteBuffer read(std::string_view key) const { return local.read(key); }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        ++*reads;
        return local.read_range(key, offset, length);
    }
    void read_ranges(std::span<const RangeRequest> requests, const RangeSink& sink) const {
        ++*reads;
        local.read_ranges(requests, sink);
    }
    bool exists(std::string_view key) const { return local.exists(key); }
    std::string describe(std::string_view key) const { return local.describe(key); }
};
}  // namespace

TEST_CASE("RuleSet runs several rules on one read of each step and fires as invoke_rule does for each", "[rules][invoke]") {
    TempDir dir("rules");
    // g: zeros at odd steps, NaN at step 4; h (even steps only): constant from step 2 on.
    write_trial(dir.path, 7, [](auto& h, int s) {
        std::vector<float> g{0.5f * s + 1, -2.0f, 3.0f, 0.25f};
        if (s % 2) g.assign(4, 0.0f);
        if (s == 4) g[1] = nan_f;
        h.save_tensor("g", g, "gradients");
        if (s % 2 == 0) h.save_tensor("h", std::vector<float>{s < 2 ? 1.0f : 7.0f, 2.0f});
    });
    const std::vector<std::pair<std::string, RuleParams>> specs{
        {"AllZero", {{"tensor_regex", "g"}}},
        {"ExplodingTensor", {}},
        {"TensorVariance", {{"collection_names", "gradients"}, {"max_threshold", "2"}}},
        {"UnchangedTensor", {{"tensor_regex", "^h$"}, {"num_steps", "2"}}},  // reads earlier steps too
    };
    // Each rule alone, through invoke_rule: (step, finding) of every firing.
    std::vector<std::vector<std::pair<std::int64_t, std::string>>> alone(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
        auto trial = open_trial(dir.path);
        auto rule = make_rule(specs[i].first, *trial, specs[i].second);
        InvokeOptions o;
        o.on_fire = [&](const RuleFiring& f) { alone[i].emplace_back(f.step, f.finding); };
        invoke_rule(*rule, o);
    }
    CHECK(alone[0] == std::vector<std::pair<std::int64_t, std::string>>{
                          {1, "tensor g: 100% zeros (4 of 4)"}, {3, "tensor g: 100% zeros (4 of 4)"},
                          {5, "tensor g: 100% zeros (4 of 4)"}, {7, "tensor g: 100% zeros (4 of 4)"}});
    CHECK(alone[1] == std::vector<std::pair<std::int64_t, std::string>>{{4, "tensor g: nan at element 1"}});
    REQUIRE_FALSE(alone[3].empty());  // h is unchanged over its last two saved steps from step 4 on (2 vs 0 differs)
    CHECK(alone[3][0].first == 4);

    // All together, through one RuleSet on a trial that counts its record reads.
    TrialOptions options;
    options.training_end_delay_refresh = std::chrono::milliseconds(0);
    ReadCountingStore store{LocalStore(dir.path)};
    Trial<ReadCountingStore> trial(store, options);
    RuleSet<ReadCountingStore> set(trial);
    for (const auto& [name, params] : specs) set.add(make_rule(name, trial, params));
    Trial<ReadCountingStore> other(store, options);
    CHECK_THROWS_AS(set.add(make_rule("ExplodingTensor", other, {})), UsageError);  // not a rule of this trial
    const std::vector<RuleSet<ReadCountingStore>::ExtraRead> extra{{"g", std::nullopt}, {"no_such_tensor", std::nullopt}};
    std::vector<std::vector<std::pair<std::int64_t, std::string>>> together(specs.size());
    int steps = 0;
    *store.reads = 0;
    for (std::int64_t step = 0;; ++step) {
        try {
            trial.wait_for_steps({step});
        } catch (const NoMoreData&) {
            break;
        }
        const auto r = set.run_at_step(step, extra);
        ++steps;
        REQUIRE(r.fired.size() == specs.size());
        for (std::size_t i = 0; i < specs.size(); ++i)
            if (r.fired[i]) {
                together[i].emplace_back(r.fired[i]->step, r.fired[i]->finding);
                CHECK(r.fired[i]->rule == specs[i].first);
                CHECK(r.fired[i]->trial == (trial.name().empty() ? trial.path() : trial.name()));  // an unnamed trial: its path
            }
        REQUIRE(r.extra.size() == 2);
        REQUIRE(r.extra[0].value);
        CHECK(r.extra[0].value->elements<float>()[0] == (step % 2 ? 0.0f : 0.5f * float(step) + 1));
        CHECK_THROWS_AS(r.extra[1].get(), TensorUnavailable);
    }
    CHECK(steps == 8);
    CHECK(*store.reads == steps);  // one read per step, whatever the number of rules
    CHECK(together == alone);
}

// Whether every member of P's parameter table is equal in a and b.
template <class P>
bool same_parameters(const P& a, const P& b) {
    return std::apply([&](const auto&... row) { return ((a.*(row.member) == b.*(row.member)) && ...); }, P::parameters());
}

TEST_CASE("registry: a rule's parameter table is its defaults, its parse and its printed row", "[rules][registry][params]") {
    std::size_t rules = 0;
    detail::for_each_builtin_rule([&]<class E>() {
        using P = typename E::Params;
        const std::string name(P::rule_name);
        CAPTURE(name);
        ++rules;
        const auto* info = find_builtin_rule(name);
        REQUIRE(info);
        CHECK(info->fires_when == P::fires_when);
        CHECK(info->needs_other_trial == rule_needs_other_trial<P>());
        const auto rows = rule_parameter_infos<P>();
        REQUIRE(info->parameters.size() == rows.size());
        RuleParams given;  // every default written out, as a user would pass it
        for (std::size_t i = 0; i < rows.size(); ++i) {
            CHECK(info->parameters[i].name == rows[i].name);
            CHECK(info->parameters[i].default_value == rows[i].default_value);
            if (!rows[i].default_value.empty()) given.set(std::string(rows[i].name), std::string(rows[i].default_value));
        }
        RuleParams none;
        const P defaults{};
        CHECK(same_parameters(defaults, P::parse(name, none)));
        CHECK(same_parameters(defaults, P::parse(name, given)));
        CHECK_NOTHROW(given.finish(name));
        // A given value wins over the default, and only for its own member.
        if constexpr (requires { P{}.threshold; }) {
            RuleParams one{{"threshold", "123.5"}};
            const P parsed = P::parse(name, one);
            CHECK(parsed.threshold == 123.5);
        }
    });
    CHECK(rules == builtin_rules().size());
    CHECK(rules == 18);
    // Defaults that are only text in the table, read as a given value would be.
    CHECK(SaturatedActivationParams{}.threshold_tanh == std::pair<double, double>{-9.4999, 9.4999});
    CHECK(SaturatedActivationParams{}.tensor_regex == std::vector<std::string>{".*tanh_input", ".*sigmoid_input"});
    CHECK(NLPSequenceRatioParams{}.token_thresholds_percent == std::vector<double>{50, 50});
    CHECK(UnchangedTensorParams{}.atol == 1e-8);
    CHECK_FALSE(ConfusionParams{}.category_no.has_value());
    CHECK(ConfusionParams{}.labels_collection == "labels");
    CHECK_FALSE(LossNotDecreasingParams{}.mode.has_value());
    CHECK(CheckInputImagesParams{.threshold_mean = 0.5}.threshold_samples == 500);  // designated initializers keep the others' defaults
}

TEST_CASE("TensorSelection: collections and patterns at a step, as the per-collection queries answer", "[rules][registry]") {
    TempDir dir("rules");
    write_trial(dir.path, 3, [](auto& h, int s) {
        h.save_tensor("dense/kernel", std::vector<float>{1.0f}, "weights");
        h.save_tensor("dense/kernel_grad", std::vector<float>{1.0f}, "gradients");
        if (s % 2) h.save_tensor("odd/loss", std::vector<float>{1.0f}, "losses");
        h.save_tensor("relu_output_" + std::to_string(s % 2), std::vector<float>{1.0f});
    });
    auto trial = open_trial(dir.path);
    const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases{
        {{"weights"}, {}}, {{"gradients", "losses"}, {}}, {{}, {"relu"}}, {{"weights", "nope"}, {"output_1", "^odd"}},
        {{"nope"}, {}}, {{}, {}}, {{"losses", "losses"}, {"loss"}}};
    for (const auto& [collections, regex] : cases) {
        detail::TensorSelection selection(collections, regex);
        for (int pass = 0; pass < 2; ++pass)  // the second pass answers from what the first remembered
            for (std::int64_t step = 0; step <= 3; ++step) {
                CAPTURE(collections, regex, step, pass);
                std::set<std::string> want;
                for (const auto& c : collections)
                    for (auto& n : trial->tensor_names(detail::names_query(step, c))) want.insert(n);
                if (!regex.empty())
                    for (auto& n : trial->tensor_names(detail::names_query(step, std::nullopt, regex))) want.insert(n);
                CHECK(selection.at_step(*trial, step) == std::vector<std::string>(want.begin(), want.end()));
            }
    }
    CHECK(detail::TensorSelection({"gradients", "losses"}, {}).at_step(*trial, 1) == std::vector<std::string>{"dense/kernel_grad", "odd/loss"});
    // A bad pattern fails at the step it is used, every time, as the uncached query did.
    detail::TensorSelection bad({}, {"("});
    CHECK_THROWS_AS(bad.at_step(*trial, 0), SMDebugValueError);
    CHECK_THROWS_AS(bad.at_step(*trial, 1), SMDebugValueError);
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
using test::run_cli;
std::string case_trial(const std::string& name) {
    const auto p = fs::path(SMDEBUG_TEST_DATA_DIR) / "conformance" / "cases" / name / "trial";
    REQUIRE(fs::exists(p));
    return p.string();
}
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
}  // namespace

TEST_CASE("smdebug rule rejects bad parameters before it opens (and waits for) the trial", "[rules][cli]") {
    REQUIRE(fs::exists(fs::path(SMDEBUG_BIN_DIR) / "smdebug"));
    TempDir dir("rules");
    const auto missing = (dir.path / "not_written_yet").string();  // `smdebug rule` would wait for it
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(run_cli("rule AllZero " + missing + " --param 'tensor_regex=((a)'").status == 2);
    CHECK(run_cli("rule AllZero " + missing + " --param 'tensor_regex=" + std::string(40, '(') + "a" + std::string(40, ')') + "'").status == 2);
    CHECK(run_cli("rule VanishingGradient " + missing + " --param treshold=1").status == 2);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
}

TEST_CASE("smdebug rule: first firing step and exit code on reference-written trials", "[rules][cli]") {
    REQUIRE(fs::exists(fs::path(SMDEBUG_BIN_DIR) / "smdebug"));
    // dtype_zoo: the reference reads f16/special at step 0 as [nan, inf, -inf, ...] (expected.json).
    auto r = run_cli("rule ExplodingTensor " + case_trial("dtype_zoo"));
    CHECK(r.status == 1);
    CHECK(first_line(r.out) == "step 0 tensor f16/special: nan at element 0 (and 3 more tensors: nonfinite/all_nan, nonfinite/f32, nonfinite/f64)");
    r = run_cli("rule explodingtensor " + case_trial("dtype_zoo") + " --param tensor_regex=^f32/ ");
    CHECK(r.status == 0);
    CHECK(r.out.empty());  // issue 46 §4: one summary line on stderr, not silence
    // the tensors ExplodingTensor inspected (issue 53 item 5): the 5 that ^f32/ selects, not the trial's 30
    CHECK_THAT(r.err, Catch::Matchers::Contains("checked 3 steps") && Catch::Matchers::Contains("of 5 tensors") && Catch::Matchers::EndsWith("did not fire\n"));
    // pt_train_eval: gradients at TRAIN steps 0,3,6,9,16; the reference's values give a smallest
    // mean(|g|) per step of 0.00770, 0.00603, 0.00442 (gradient/MLP_fc1.bias), 0.00687, 0.00751.
    r = run_cli("rule VanishingGradient " + case_trial("pt_train_eval"));
    CHECK(r.status == 0);
    CHECK(r.out.empty());  // issue 46 §4: one summary line on stderr, not silence
    // the 6 gradients VanishingGradient inspected (issue 53 item 5), not the trial's 19 tensors
    CHECK_THAT(r.err, Catch::Matchers::Contains("checked 21 steps") && Catch::Matchers::Contains("of 6 tensors") && Catch::Matchers::EndsWith("did not fire\n"));
    r = run_cli("rule VanishingGradient " + case_trial("pt_train_eval") + " --param threshold=0.005");
    CHECK(r.status == 1);
    CHECK(first_line(r.out).starts_with("step 6 (TRAIN step 6) tensor gradient/MLP_fc1.bias: mean(|x|)=0.0044"));
    r = run_cli("rule VanishingGradient " + case_trial("pt_train_eval") + " --param threshold=0.0065 --start-step 4");
    CHECK(first_line(r.out).starts_with("step 6 "));
    r = run_cli("rule VanishingGradient " + case_trial("pt_train_eval") + " --param threshold=0.0065 --end-step 6");
    CHECK(r.status == 1);
    CHECK(r.out == first_line(r.out) + "\n");
    CHECK(r.out.starts_with("step 3 (TRAIN step 3) tensor gradient/MLP_fc1.weight"));
    // multiworker_incomplete: loss 1, 1/2, 1/3, ... decreases.
    r = run_cli("rule LossNotDecreasing " + case_trial("multiworker_incomplete") + " --param num_steps=2");
    CHECK(r.status == 0);
    // Usage and data errors exit 2.
    CHECK(run_cli("rule NoSuchRule " + case_trial("dtype_zoo")).status == 2);
    CHECK(run_cli("rule VanishingGradient " + case_trial("dtype_zoo") + " --param treshold=1").status == 2);
    CHECK(run_cli("rule VanishingGradient " + case_trial("dtype_zoo") + " --param threshold=abc").status == 2);
    CHECK(run_cli("rule VanishingGradient").status == 2);
    CHECK(run_cli("rule SimilarAcrossRuns " + case_trial("dtype_zoo")).status == 2);
    r = run_cli("rule SimilarAcrossRuns " + case_trial("pt_train_eval") + " --other " + case_trial("pt_train_eval"));
    CHECK(r.status == 0);
    r = run_cli("rules");
    CHECK(r.status == 0);
    CHECK(r.out.find("VanishingGradient") != std::string::npos);
    CHECK(r.out.find("threshold = 1e-07") != std::string::npos);
}

// ---- the rules SageMaker users look for (definitions from the AWS documentation) ---------------

namespace {
// A (batch, nodes) float tensor filled by f(sample, node).
template <class F>
xt::xarray<float> batch(std::size_t samples, std::size_t nodes, F&& f) {
    xt::xarray<float> a = xt::zeros<float>({samples, nodes});
    for (std::size_t b = 0; b < samples; ++b)
        for (std::size_t n = 0; n < nodes; ++n) a(b, n) = f(b, n);
    return a;
}

// Writes `modes[i]` steps with loss `losses[i]` (one scalar tensor "loss" in collection losses).
void write_mode_losses(const fs::path& dir, const std::vector<std::pair<Mode, float>>& steps) {
    Hook<LocalStore> hook(LocalStore(dir, LocalStore::Durability::none), every_step());
    for (const auto& [mode, loss] : steps) {
        hook.set_mode(mode);
        hook.next_step();
        hook.save_tensor("loss", std::vector<float>{loss}, "losses");
    }
    hook.close();
}
}  // namespace

TEST_CASE("DeadRelu fires when most ReLUs of a layer are dead", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 3, [](auto& h, int s) {
        h.save_tensor("fc1/relu_output", batch(10, 4, [&](std::size_t b, std::size_t n) { return s == 2 && n > 0 ? 0.0f : 0.1f * float(b + 1); }));
    });
    auto trial = open_trial(dir.path);
    DeadRelu<LocalStore> rule(*trial);
    CHECK(fired(rule) == std::vector<std::int64_t>{2});
    CHECK(rule.finding() == "tensor fc1/relu_output: 3 of 4 ReLUs dead (75% > 50%)");
    DeadRelu<LocalStore> lenient(*trial, {.tensor_regex = {".*relu_output"}, .threshold_inactivity = 1.0, .threshold_layer = 80.0});
    CHECK(fired(lenient).empty());
}

TEST_CASE("SaturatedActivation fires when tanh inputs leave (-9.4999, 9.4999)", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 2, [](auto& h, int s) {
        h.save_tensor("l1_tanh_input", batch(10, 4, [&](std::size_t, std::size_t) { return s == 1 ? 20.0f : 0.5f; }));
        h.save_tensor("l1_sigmoid_input", batch(10, 4, [&](std::size_t, std::size_t) { return 20.0f; }));  // < 16.99999? no: saturated
    });
    auto trial = open_trial(dir.path);
    SaturatedActivation<LocalStore>::Params tanh_only;
    tanh_only.tensor_regex = {".*tanh_input"};
    SaturatedActivation<LocalStore> rule(*trial, tanh_only);
    CHECK(fired(rule) == std::vector<std::int64_t>{1});
    SaturatedActivation<LocalStore> both(*trial);
    CHECK(fired(both) == std::vector<std::int64_t>{0, 1, 2});  // the sigmoid input is always above 16.99999
    CHECK_THROWS_AS(make_rule("SaturatedActivation", *trial, {{"threshold_tanh", "3"}}), InvalidRuleParameter);
}

TEST_CASE("TensorVariance fires outside [min_threshold, max_threshold]", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 4, [](auto& h, int s) { h.save_tensor("w", s == 3 ? std::vector<float>{-5, 5} : std::vector<float>{1.0f, 1.5f}); });
    auto trial = open_trial(dir.path);
    auto high = make_rule("TensorVariance", *trial, {{"tensor_regex", "w"}, {"max_threshold", "1"}});
    CHECK(fired(*high) == std::vector<std::int64_t>{3});
    auto low = make_rule("TensorVariance", *trial, {{"tensor_regex", "w"}, {"min_threshold", "0.1"}});
    CHECK(fired(*low) == std::vector<std::int64_t>{0, 1, 2, 4});  // variance 0.0625
    CHECK_THROWS_AS(make_rule("TensorVariance", *trial, {{"tensor_regex", "w"}}), InvalidRuleParameter);
}

TEST_CASE("CheckInputImages checks channel means once enough samples were seen", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 2, [](auto& h, int s) {
        xt::xarray<float> img = xt::zeros<float>({std::size_t(10), std::size_t(3), std::size_t(2), std::size_t(2)});
        for (std::size_t b = 0; b < 10; ++b)
            for (std::size_t c = 0; c < 3; ++c)
                for (std::size_t i = 0; i < 4; ++i) img(b, c, i / 2, i % 2) = (s >= 1 && c == 2) ? 1.0f : ((b + i) % 2 ? 1.0f : -1.0f);
        h.save_tensor("net_input_0", img);
    });
    auto trial = open_trial(dir.path);
    CheckInputImages<LocalStore> rule(*trial, {.threshold_mean = 0.2, .threshold_samples = 20, .regex = {"input_0"}, .channel = 1});
    CHECK(fired(rule) == std::vector<std::int64_t>{1, 2});  // step 0: 10 samples, not enough yet
    CHECK(rule.finding().starts_with("channel 2: mean 0.6"));
    CheckInputImages<LocalStore> tolerant(*trial, {.threshold_mean = 0.9, .threshold_samples = 20, .regex = {"input_0"}, .channel = 1});
    CHECK(fired(tolerant).empty());
}

TEST_CASE("NLPSequenceRatio fires when padding exceeds its share", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 2, [](auto& h, int s) {
        std::vector<float> tokens{5, 6, 7, 8, 9, 10, 11, 0, 0, 0};
        if (s == 1) tokens = {5, 6, 7, 8, 0, 0, 0, 0, 0, 0};
        h.save_tensor("embedding0_input_0", tokens);
    });
    auto trial = open_trial(dir.path);
    NLPSequenceRatio<LocalStore> rule(*trial);
    CHECK(fired(rule) == std::vector<std::int64_t>{1});
    CHECK_THROWS_AS(make_rule("NLPSequenceRatio", *trial, {{"token_values", "0,1,2"}, {"token_thresholds_percent", "50"}}), InvalidRuleParameter);
}

TEST_CASE("TreeDepth measures log2 of the largest node ID", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 1, [](auto& h, int s) {
        std::vector<float> ids;
        for (int i = 0; i <= (s == 0 ? 14 : 40); ++i) ids.push_back(float(i));
        h.save_tensor("trees/Node", ids);
    });
    auto trial = open_trial(dir.path);
    TreeDepth<LocalStore> rule(*trial);
    CHECK(fired(rule) == std::vector<std::int64_t>{1});
    CHECK(rule.finding() == "largest node ID 40: depth 5 > 4");
    TreeDepth<LocalStore> deep(*trial, {.depth = 5});
    CHECK(fired(deep).empty());
}

TEST_CASE("Overfit compares each evaluation phase with the training phase before it", "[rules][builtin]") {
    TempDir dir("rules");
    write_mode_losses(dir.path, {{Mode::TRAIN, 1.0f}, {Mode::TRAIN, 1.0f}, {Mode::EVAL, 1.05f}, {Mode::EVAL, 1.05f},
                                 {Mode::TRAIN, 0.5f}, {Mode::TRAIN, 0.5f}, {Mode::EVAL, 0.8f}, {Mode::EVAL, 0.8f}});
    auto trial = open_trial(dir.path);
    Overfit<LocalStore> rule(*trial);
    CHECK(fired(rule) == std::vector<std::int64_t>{6, 7});
    Overfit<LocalStore> patient(*trial, {.tensor_regex = {}, .start_step = 0, .patience = 2, .ratio_threshold = 0.1});
    CHECK(fired(patient) == std::vector<std::int64_t>{7});
    Overfit<LocalStore> loose(*trial, {.tensor_regex = {}, .start_step = 0, .patience = 1, .ratio_threshold = 0.7});
    CHECK(fired(loose).empty());
}

TEST_CASE("Overtraining fires after patience_train steps without improvement", "[rules][builtin]") {
    TempDir dir("rules");
    std::vector<std::pair<Mode, float>> steps;
    for (float l : {1.0f, 0.9f, 0.8f, 0.8f, 0.795f, 0.8f, 0.8f, 0.8f, 0.7f}) steps.emplace_back(Mode::TRAIN, l);
    write_mode_losses(dir.path, steps);
    auto trial = open_trial(dir.path);
    Overtraining<LocalStore> rule(*trial);
    CHECK(fired(rule) == std::vector<std::int64_t>{7});  // best 0.8 at step 2; 3..7 do not beat 0.79
    Overtraining<LocalStore> patient(*trial, {.tensor_regex = {}, .patience_train = 6, .patience_validation = 10, .delta = 0.01});
    CHECK(fired(patient).empty());
}

TEST_CASE("PoorWeightInitialization checks activation-input variances in the first steps", "[rules][builtin]") {
    TempDir dir("rules");
    write_trial(dir.path, 12, [](auto& h, int s) {
        h.save_tensor("a/relu_input", std::vector<float>{-1, 1});
        const float b = (s == 4 || s == 11) ? 10.0f : 1.0f;  // variance 100 vs 1 at steps 4 and 11
        h.save_tensor("b/relu_input", std::vector<float>{-b, b});
    });
    auto trial = open_trial(dir.path);
    PoorWeightInitialization<LocalStore> rule(*trial);
    CHECK(fired(rule) == std::vector<std::int64_t>{4});  // step 11 is past the first 10 steps
    CHECK(rule.finding().starts_with("activation input variance 100 (b/relu_input) vs 1 (a/relu_input)"));
}

// ---- AWS actions against a local fake that checks the SigV4 signature ----------------------------

namespace {

// A tiny HTTP/1.1 server on 127.0.0.1 standing in for SNS and SageMaker. For every request it
// recomputes the SigV4 signature from what it received (the signed headers, the body's hash and
// the secret it shares with the client) and records whether it matches.
class FakeAws {
public:
    struct Request {
        std::string target, service, amz_target, body;
        std::map<std::string, std::string> form;  // decoded form fields (SNS)
        bool signature_ok = false;
    };

    explicit FakeAws(std::string secret) : secret_(std::move(secret)), acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
        thread_ = std::thread([this] { serve(); });
    }
    ~FakeAws() {
        stop_ = true;
        boost::system::error_code ec;
        boost::asio::ip::tcp::socket poke(io_);
        poke.connect(acceptor_.local_endpoint(), ec);  // wakes accept()
        thread_.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
    std::vector<Request> requests() {
        std::lock_guard lock(mu_);
        return requests_;
    }

private:
    // One thread per connection: the SNS and SageMaker clients each keep a connection open.
    void serve() {
        while (!stop_) {
            auto s = std::make_shared<boost::asio::ip::tcp::socket>(io_);
            boost::system::error_code ec;
            acceptor_.accept(*s, ec);
            if (ec || stop_) break;
            std::lock_guard lock(mu_);
            sockets_.push_back(s);
            connections_.emplace_back([this, s] { serve_connection(*s); });
        }
        std::vector<std::thread> threads;
        {
            std::lock_guard lock(mu_);
            for (auto& s : sockets_) {
                boost::system::error_code ec;
                s->shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
            }
            threads.swap(connections_);
        }
        for (auto& t : threads) t.join();
    }

    void serve_connection(boost::asio::ip::tcp::socket& s) {
        boost::system::error_code ec;
        std::string buf;
        while (true) {  // keep-alive: requests until the client closes
            auto head_end = buf.find("\r\n\r\n");
            while (head_end == std::string::npos) {
                char tmp[4096];
                const auto n = s.read_some(boost::asio::buffer(tmp), ec);
                if (ec) return;
                buf.append(tmp, n);
                head_end = buf.find("\r\n\r\n");
            }
            const std::string head = buf.substr(0, head_end);
            std::vector<std::pair<std::string, std::string>> headers;
            std::istringstream lines(head);
            std::string line, request_line;
            std::getline(lines, request_line);
            std::size_t length = 0;
            while (std::getline(lines, line)) {
                if (!line.empty() && line.back() == '\r') line.pop_back();
                const auto colon = line.find(':');
                if (colon == std::string::npos) continue;
                std::string name = line.substr(0, colon), value = line.substr(colon + 1);
                while (!value.empty() && value.front() == ' ') value.erase(0, 1);
                if (net::iequals(name, "content-length")) length = std::stoul(value);
                headers.emplace_back(name, value);
            }
            while (buf.size() < head_end + 4 + length) {
                char tmp[4096];
                const auto n = s.read_some(boost::asio::buffer(tmp), ec);
                if (ec) return;
                buf.append(tmp, n);
            }
            const std::string body = buf.substr(head_end + 4, length);
            buf.erase(0, head_end + 4 + length);
            const std::string answer = handle(request_line, headers, body);
            const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(answer.size()) + "\r\n\r\n" + answer;
            boost::asio::write(s, boost::asio::buffer(response), ec);
            if (ec) return;
        }
    }

    std::string handle(const std::string& request_line, const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body) {
        Request r;
        r.target = request_line.substr(request_line.find(' ') + 1);
        r.target = r.target.substr(0, r.target.find(' '));
        r.body = body;
        auto header = [&](std::string_view n) -> std::string {
            for (const auto& [k, v] : headers)
                if (net::iequals(k, n)) return v;
            return {};
        };
        r.amz_target = header("X-Amz-Target");
        // Authorization: AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, SignedHeaders=a;b, Signature=hex
        const std::string auth = header("Authorization");
        auto field = [&](const std::string& key) {
            const auto at = auth.find(key + "=");
            if (at == std::string::npos) return std::string();
            const auto start = at + key.size() + 1;
            return auth.substr(start, auth.find_first_of(", ", start) - start);
        };
        const std::string credential = field("Credential"), signed_headers = field("SignedHeaders"), signature = field("Signature");
        std::vector<std::string> scope;
        for (std::size_t a = 0, b; a <= credential.size(); a = b + 1) {
            b = credential.find('/', a);
            if (b == std::string::npos) b = credential.size();
            scope.push_back(credential.substr(a, b - a));
        }
        if (scope.size() == 5) {
            r.service = scope[3];
            net::SigningRequest sr;
            sr.method = "POST";
            sr.scheme = "http";
            sr.host = header("Host");
            sr.path_as_sent = r.target;
            for (std::size_t a = 0, b; a <= signed_headers.size(); a = b + 1) {
                b = signed_headers.find(';', a);
                if (b == std::string::npos) b = signed_headers.size();
                const auto name = signed_headers.substr(a, b - a);
                sr.headers.emplace_back(name, header(name));
            }
            sr.payload_hash = net::sha256_hex(std::string_view(body));
            auto opts = net::SigningOptions::service_rules(scope[2], scope[3], header("X-Amz-Date"));
            opts.header_signing = net::HeaderSigning::components;
            try {
                r.signature_ok = !signature.empty() &&
                                 net::sign_request(sr, net::Credentials{scope[0], secret_, std::nullopt}, opts).signature == signature;
            } catch (const SMDebugError&) {
                r.signature_ok = false;
            }
        }
        if (r.amz_target.empty())
            for (std::size_t a = 0, b; a < body.size(); a = b + 1) {
                b = body.find('&', a);
                if (b == std::string::npos) b = body.size();
                const auto kv = body.substr(a, b - a);
                const auto eq = kv.find('=');
                r.form[net::percent_decode(kv.substr(0, eq), true)] = net::percent_decode(kv.substr(eq + 1), true);
            }
        std::string answer;
        const auto action = r.form.count("Action") ? r.form["Action"] : r.amz_target;
        if (action == "CreateTopic")
            answer = "<CreateTopicResponse><CreateTopicResult><TopicArn>arn:aws:sns:us-east-1:123456789012:SMDebugRules</TopicArn></CreateTopicResult></CreateTopicResponse>";
        else if (action == "ListSubscriptions")
            answer = "<ListSubscriptionsResponse><ListSubscriptionsResult><Subscriptions><member><Protocol>email</Protocol>"
                     "<TopicArn>arn:aws:sns:us-east-1:123456789012:SMDebugRules</TopicArn><Endpoint>a@b.c</Endpoint></member>"
                     "</Subscriptions></ListSubscriptionsResult></ListSubscriptionsResponse>";
        else if (action == "SageMaker.ListTrainingJobs")
            answer = R"({"TrainingJobSummaries":[{"TrainingJobName":"MyJob-7","TrainingJobStatus":"InProgress"},)"
                     R"({"TrainingJobName":"OldMyJob-1","TrainingJobStatus":"InProgress"}]})";
        else if (action == "SageMaker.StopTrainingJob")
            answer = "{}";
        else
            answer = "<" + action + "Response/>";
        std::lock_guard lock(mu_);
        requests_.push_back(std::move(r));
        return answer;
    }

    std::string secret_;
    boost::asio::io_context io_;
    boost::asio::ip::tcp::acceptor acceptor_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::vector<Request> requests_;
    std::vector<std::shared_ptr<boost::asio::ip::tcp::socket>> sockets_;
    std::vector<std::thread> connections_;
};

AwsActionConfig fake_config(const FakeAws& server, std::vector<std::string>& logs) {
    AwsActionConfig c;
    c.region = "us-east-1";
    c.sns_endpoint = net::Url::parse(server.url());
    c.sagemaker_endpoint = net::Url::parse(server.url());
    c.credentials = std::make_shared<net::StaticCredentialsProvider>(net::AwsCredentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "", std::nullopt, "test"});
    c.log = [&logs](std::string_view, std::string_view t) { logs.emplace_back(t); };
    return c;
}

}  // namespace

TEST_CASE("AWS actions: SNS and StopTrainingJob requests are signed and shaped as the reference's", "[rules][actions][aws]") {
    FakeAws server("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    std::vector<std::string> logs;
    auto actions = Actions::parse(R"([{"name": "SMS", "endpoint": "+1555Ab"}, {"name": "StopTraining", "training_job_prefix": "MyJob-"}])",
                                  "ExplodingTensor", aws_action_factories(fake_config(server, logs)));
    REQUIRE(actions.size() == 2);
    actions.invoke(RuleFiring{"ExplodingTensor", 7, "tensor w: nan at element 0"});
    const auto got = server.requests();
    for (const auto& r : got) UNSCOPED_INFO(r.service << " " << (r.form.count("Action") ? r.form.at("Action") : r.amz_target) << " " << r.body);
    for (const auto& l : logs) UNSCOPED_INFO("log: " << l);
    REQUIRE(got.size() == 6);
    for (const auto& r : got) {
        CHECK(r.signature_ok);
        CHECK(r.target == "/");
    }
    CHECK(got[0].service == "sns");
    CHECK(got[0].form.at("Action") == "CreateTopic");
    CHECK(got[0].form.at("Name") == "SMDebugRules");
    CHECK(got[1].form.at("Action") == "ListSubscriptions");
    CHECK(got[2].form.at("Action") == "Subscribe");  // the existing subscription is another endpoint
    CHECK(got[2].form.at("Protocol") == "sms");
    CHECK(got[2].form.at("Endpoint") == "+1555Ab");  // case kept (D18)
    CHECK(got[2].form.at("Attributes.entry.1.value") == R"({"phone_num":["+1555Ab"]})");
    CHECK(got[3].service == "sagemaker");
    CHECK(got[3].amz_target == "SageMaker.ListTrainingJobs");
    CHECK(boost::json::parse(got[3].body) ==
          boost::json::parse(R"({"NameContains":"MyJob-","SortBy":"CreationTime","SortOrder":"Descending","StatusEquals":"InProgress"})"));
    CHECK(got[4].form.at("Action") == "Publish");
    CHECK(got[4].form.at("TopicArn") == "arn:aws:sns:us-east-1:123456789012:SMDebugRules");
    CHECK(got[4].form.at("Message") == "SMDebugRule:ExplodingTensor fired. tensor w: nan at element 0");
    CHECK(got[4].form.at("Subject") == "SMDebugRule:ExplodingTensor fired");
    CHECK(got[4].form.at("MessageAttributes.entry.1.Name") == "phone_num");
    CHECK(got[4].form.at("MessageAttributes.entry.1.Value.StringValue") == "+1555Ab");
    CHECK(got[5].amz_target == "SageMaker.StopTrainingJob");
    CHECK(boost::json::parse(got[5].body) == boost::json::parse(R"({"TrainingJobName":"MyJob-7"})"));  // "OldMyJob-1" does not start with the prefix
    CHECK(logs.empty());

    // The fake really checks: a client with another secret is rejected.
    FakeAws strict("another-secret");
    std::vector<std::string> logs2;
    auto wrong = message_action(fake_config(strict, logs2), "R", "email", "a@b.c");
    const auto rejected = strict.requests();
    REQUIRE(rejected.size() == 2);  // CreateTopic, ListSubscriptions (already subscribed: no Subscribe)
    CHECK_FALSE(rejected[0].signature_ok);
}

TEST_CASE("AWS actions: an unreachable endpoint is logged, never thrown", "[rules][actions][aws]") {
    std::vector<std::string> logs;
    AwsActionConfig c;
    c.sns_endpoint = net::Url::parse("http://127.0.0.1:1");
    c.sagemaker_endpoint = net::Url::parse("http://127.0.0.1:1");
    c.credentials = std::make_shared<net::StaticCredentialsProvider>(net::AwsCredentials{"AKID", "SECRET", "", std::nullopt, "test"});
    c.http.connect_timeout = std::chrono::milliseconds(500);
    c.log = [&](std::string_view, std::string_view t) { logs.emplace_back(t); };
    auto sms = message_action(c, "R", "sms", "+1");
    auto stop = stop_training_action(c, "R", "job");
    sms(RuleFiring{"R", 1, ""});
    stop(RuleFiring{"R", 1, ""});
    CHECK(logs.size() >= 2);
    for (const auto& l : logs) CHECK(l.find("SECRET") == std::string::npos);
}

TEST_CASE("validate_rule_params checks a rule's parameters as make_rule does, without a trial", "[rules][params]") {
    CHECK(validate_rule_params("explodingtensor", {{"only_nan", "true"}, {"tensor_regex", "grad.*, w"}}) == "ExplodingTensor");
    CHECK(validate_rule_params(" VanishingGradient ", {}) == "VanishingGradient");
    CHECK_THROWS_AS(validate_rule_params("NoSuchRule", {}), UnknownRule);
    try {
        validate_rule_params("VanishingGradient", {{"treshold", "1"}});
        FAIL("no error");
    } catch (const UnknownRuleParameter& e) {
        CHECK(e.parameter == "treshold");
    }
    CHECK_THROWS_AS(validate_rule_params("ExplodingTensor", {{"only_nan", "maybe"}}), InvalidRuleParameter);
    CHECK_THROWS_AS(validate_rule_params("SaturatedActivation", {{"threshold_tanh", "3"}}), InvalidRuleParameter);
    // Every pattern of a regex parameter is compiled: a bad one is an InvalidRuleParameter naming it.
    try {
        validate_rule_params("AllZero", {{"tensor_regex", "ok.*, bad(["}});
        FAIL("no error");
    } catch (const InvalidRuleParameter& e) {
        CHECK(e.rule == "AllZero");
        CHECK(e.parameter == "tensor_regex");
        CHECK(e.value == "ok.*, bad([");
    }
    CHECK_THROWS_AS(validate_rule_params("SimilarAcrossRuns", {{"include", "a)"}}), InvalidRuleParameter);
    CHECK_THROWS_AS(validate_rule_params("ClassImbalance", {{"labels_regex", "(a)\\1"}}), InvalidRuleParameter);  // no back-references
    // make_rule takes the same path: a bad pattern fails at construction, not at the first step.
    TempDir dir("rules");
    write_trial(dir.path, 0, [](auto& h, int) { h.save_tensor("g", std::vector<float>{1.0f}, "gradients"); });
    auto trial = open_trial(dir.path);
    CHECK_THROWS_AS(make_rule("ExplodingTensor", *trial, {{"tensor_regex", "[z-a]"}}), InvalidRuleParameter);
}

TEST_CASE("regex parameters: hostile patterns are rejected by named limits, accepted ones match fast", "[rules][params][regex]") {
    const auto rejects = [](const std::string& pattern, const std::string& limit) {
        try {
            validate_rule_params("AllZero", {{"tensor_regex", pattern}});
            FAIL("accepted " << pattern.substr(0, 40));
        } catch (const InvalidRuleParameter& e) {
            CHECK(e.parameter == "tensor_regex");
            INFO(pattern.substr(0, 40) << ": " << e.what());
            CHECK(std::string(e.what()).find(limit) != std::string::npos);
        }
    };
    rejects(std::string(20000, '(') + "a" + std::string(20000, ')'), "max_regex_pattern_bytes");
    rejects(std::string(max_regex_nesting + 1, '(') + "a" + std::string(max_regex_nesting + 1, ')'), "max_regex_nesting");
    rejects("(a{1000}){1000}", "max_regex_expanded_size");
    rejects("(.*.*.*.*.*.*.*.*){500}x", "max_regex_expanded_size");
    rejects("a{99999999999999999999999}", "max_regex_number_digits");  // no overflow in the count
    rejects("(){99999999999999999999999}", "max_regex_number_digits");  // nothing to repeat: still a number
    CHECK_THROWS_WITH(detail::check_regex("a{1,99999999999999999999999}"), Catch::Contains("max_regex_number_digits"));  // (lists split at commas)
    rejects("x\\66666666666666666666", "max_regex_number_digits");  // back-reference (fuzz finding)
    rejects("[\\66666666666666666666]", "max_regex_number_digits");
    rejects("[]+{2222222222222222222211}", "max_regex_number_digits");  // `[]` is an empty class (fuzz finding)
    CHECK_THROWS_WITH(detail::check_regex("[^]{1,99999999999999999999999}x"), Catch::Contains("max_regex_number_digits"));
    rejects("[]((a{100}){100})", "max_regex_expanded_size");            // nothing hides behind `[]`
    CHECK(validate_rule_params("AllZero", {{"tensor_regex", "step_20231123120000"}}) == "AllZero");  // plain digits are fine
    CHECK(validate_rule_params("AllZero", {{"tensor_regex", std::string(max_regex_nesting, '(') + "a" + std::string(max_regex_nesting, ')')}}) == "AllZero");
    CHECK(validate_rule_params("AllZero", {{"tensor_regex", "x{2}y{3}z{4}"}}) == "AllZero");  // (lists split at commas)
    CHECK_NOTHROW(detail::check_regex("x{2}y{3,}z{4,5}"));
    CHECK_THROWS_AS(detail::check_regex("(ab){200,300}"), SMDebugValueError);  // 600 atoms expanded
    CHECK(validate_rule_params("AllZero", {{"tensor_regex", "[{(]\\({1}"}}) == "AllZero");  // brackets and escapes are atoms

    // Search semantics (anywhere in the name) through the compiled, whole-name form.
    const auto matches = [](const std::string& pattern, const std::string& name) {
        detail::CompiledRegex re;
        re.add(pattern);
        return re.search(name);
    };
    CHECK(matches("relu", "dense/relu_output_0"));
    CHECK(matches("^dense", "dense/relu_output_0"));
    CHECK_FALSE(matches("^relu", "dense/relu_output_0"));
    CHECK(matches("output_0$", "dense/relu_output_0"));
    CHECK_FALSE(matches("output$", "dense/relu_output_0"));
    CHECK(matches("a|zzz", "xay"));
    CHECK_FALSE(matches("b|zzz", "xay"));
    CHECK(matches("", "anything"));
    CHECK_THROWS_AS(detail::check_regex("a)|(b"), SMDebugValueError);  // not rescued by the wrapper's group
    // Patterns that backtrack exponentially in std::regex's default matcher finish (polynomial matcher).
    const std::string as(4000, 'a');
    CHECK_FALSE(matches("(a|aa)*(a|aa)*(a|aa)*(a|aa)*b", as));
    CHECK_FALSE(matches("(a*)*(a*)*(a*)*$b", as));
    CHECK(matches("(a|aa)*$", as));  // and a name this long does not exhaust the stack
}

// ---- a tensor that cannot be read at a step is skipped alone (issue 30 §4) ---------------------

namespace {

// Adds a shape-only tensor `name` (a shape_payload entry, no value) to the index file of `step`.
void add_shape_only_tensor(const fs::path& dir, int step, const std::string& name) {
    const auto index = dir / paths::index_key(step, "worker_0");
    std::ifstream in(index, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    auto json = boost::json::parse(text).as_object();
    auto& shapes = json["shape_payload"];
    if (!shapes.is_array()) shapes = boost::json::array();
    shapes.as_array().push_back(boost::json::object{{"tensorname", name}, {"originalname", name}, {"shape", boost::json::array{3}}});
    std::ofstream(index, std::ios::binary | std::ios::trunc) << boost::json::serialize(json);
}

}  // namespace

TEST_CASE("built-in rules skip a tensor that cannot be read at a step alone, not the whole step", "[rules][builtin][reliability]") {
    TempDir dir("rules-skip");
    // Step 1: a NaN loss, a zero gradient, a constant weight — and beside them a shape-only
    // tensor, which has no value to read (TensorUnavailableForStep).
    write_trial(dir.path, 2, [](auto& h, int s) {
        h.save_tensor("loss", std::vector<float>{s == 1 ? nan_f : 1.0f}, "losses");
        h.save_tensor("grad", filled(4, s == 1 ? 0.0f : 1.0f), "gradients");
        h.save_tensor("w", filled(4, 2.0f), "weights");
    });
    add_shape_only_tensor(dir.path, 1, "shape_only");
    auto trial = open_trial(dir.path);
    REQUIRE(trial->tensor_names({.step = 1}).size() == 4);
    CHECK_THROWS_AS(trial->tensor("shape_only").value(1), TensorUnavailableForStep);

    ExplodingTensor<LocalStore> exploding(*trial);
    CHECK(fired(exploding) == std::vector<std::int64_t>{1});
    CHECK(exploding.finding() == "tensor loss: nan at element 0");
    AllZero<LocalStore> all_zero(*trial, {.collection_names = {}, .tensor_regex = {".*"}, .threshold = 100});
    CHECK(fired(all_zero) == std::vector<std::int64_t>{1});
    TensorVariance<LocalStore> variance(*trial, {.collection_names = {}, .tensor_regex = {"w|shape_only"}, .max_threshold = 10,
                                                  .min_threshold = 0.5});
    CHECK(fired(variance) == std::vector<std::int64_t>{0, 1, 2});  // w has variance 0 at every step

    // A custom rule keeps the reference's behaviour: a required tensor missing at a step skips it.
    struct NeedsShapeOnly : RuleBase<LocalStore> {
        explicit NeedsShapeOnly(Trial<LocalStore>& t) : RuleBase<LocalStore>(t, "NeedsShapeOnly") {}
        void set_required_tensors(std::int64_t step) {
            req_.add(base_trial(), "loss", step);
            if (step == 1) req_.add(base_trial(), "shape_only", step);
        }
        bool invoke_at_step(std::int64_t step) {
            visited.push_back(step);
            return false;
        }
        std::vector<std::int64_t> visited;
    } custom(*trial);
    invoke_rule(custom);
    CHECK(custom.visited == std::vector<std::int64_t>{0, 2});
}

// ---- actions that work anywhere (issue 26 §2): webhook, signal, exec, stop-file ---------------------

namespace {

// A webhook receiver on 127.0.0.1, plain HTTP or (with a certificate) HTTPS. Request n (1-based)
// is answered with statuses[n-1] (200 past the list), one request per connection; every request
// is recorded.
class HookReceiver {
public:
    struct Received {
        std::string method, target, content_type, body;
    };

    explicit HookReceiver(std::vector<int> statuses = {}, std::string cert_file = {}, std::string key_file = {})
        : statuses_(std::move(statuses)), acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
        if (!cert_file.empty()) {
            tls_ = std::make_unique<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server);
            tls_->use_certificate_chain_file(cert_file);
            tls_->use_private_key_file(key_file, boost::asio::ssl::context::pem);
        }
        thread_ = std::thread([this] { serve(); });
    }
    ~HookReceiver() {
        stop_ = true;
        boost::system::error_code ec;
        boost::asio::ip::tcp::socket poke(io_);
        poke.connect(acceptor_.local_endpoint(), ec);
        thread_.join();
    }
    std::string url(const std::string& target = "/") const {
        return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + target;
    }
    std::vector<Received> received() {
        std::lock_guard lock(mu_);
        return received_;
    }
    int connections() const { return connections_; }

private:
    void serve() {
        while (!stop_) {
            boost::asio::ip::tcp::socket s(io_);
            boost::system::error_code ec;
            acceptor_.accept(s, ec);
            if (ec || stop_) break;
            ++connections_;
            s.set_option(boost::asio::socket_base::linger(true, 2), ec);
            if (tls_) {
                boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream(std::move(s), *tls_);
                stream.handshake(boost::asio::ssl::stream_base::server, ec);
                if (!ec) answer(stream);
                stream.shutdown(ec);
            } else {
                answer(s);
                s.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
            }
        }
    }

    template <class Stream>
    void answer(Stream& s) {
        boost::system::error_code ec;
        std::string buf;
        auto head_end = buf.find("\r\n\r\n");
        while (head_end == std::string::npos) {
            char tmp[4096];
            const auto n = s.read_some(boost::asio::buffer(tmp), ec);
            if (ec) return;
            buf.append(tmp, n);
            head_end = buf.find("\r\n\r\n");
        }
        Received r;
        std::istringstream lines(buf.substr(0, head_end));
        std::string line;
        std::getline(lines, line);
        r.method = line.substr(0, line.find(' '));
        r.target = line.substr(line.find(' ') + 1);
        r.target = r.target.substr(0, r.target.find(' '));
        std::size_t length = 0;
        while (std::getline(lines, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            const auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string value = line.substr(colon + 1);
            while (!value.empty() && value.front() == ' ') value.erase(0, 1);
            if (net::iequals(line.substr(0, colon), "content-length")) length = std::stoul(value);
            if (net::iequals(line.substr(0, colon), "content-type")) r.content_type = value;
        }
        while (buf.size() < head_end + 4 + length) {
            char tmp[4096];
            const auto n = s.read_some(boost::asio::buffer(tmp), ec);
            if (ec) return;
            buf.append(tmp, n);
        }
        r.body = buf.substr(head_end + 4, length);
        int status = 200;
        {
            std::lock_guard lock(mu_);
            received_.push_back(r);
            if (received_.size() <= statuses_.size()) status = statuses_[received_.size() - 1];
        }
        const std::string response = "HTTP/1.1 " + std::to_string(status) + " Status\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        boost::asio::write(s, boost::asio::buffer(response), ec);
    }

    std::vector<int> statuses_;
    boost::asio::io_context io_;
    boost::asio::ip::tcp::acceptor acceptor_;
    std::unique_ptr<boost::asio::ssl::context> tls_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> connections_{0};
    std::mutex mu_;
    std::vector<Received> received_;
};

// A self-signed certificate for 127.0.0.1 made with the openssl program (setup-deps installs it).
struct SelfSignedCert {
    std::string cert, key;
};
SelfSignedCert make_self_signed(const fs::path& dir) {
    SelfSignedCert c{(dir / "cert.pem").string(), (dir / "key.pem").string()};
    const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=smdebug-test"
                            " -addext subjectAltName=IP:127.0.0.1 -addext basicConstraints=critical,CA:TRUE -keyout " +
                            test::shell_quote(c.key) + " -out " + test::shell_quote(c.cert) + " 2>/dev/null";
    INFO("the openssl program makes the test certificate: " << cmd);
    REQUIRE(std::system(cmd.c_str()) == 0);
    return c;
}

RuleFiring sample_firing() {
    RuleFiring f{"ExplodingTensor", 7, "tensor w: nan at element 0"};
    f.mode = "TRAIN";
    f.mode_step = 3;
    f.tensor = "w";
    f.trial = "run1";
    return f;
}

template <class F>
std::string failure_of(F&& f) {
    try {
        f();
    } catch (const ActionFailed& e) {
        return e.what();
    }
    return "(no ActionFailed)";
}

}  // namespace

TEST_CASE("actions: a firing tells the rule, global step, mode, mode step, tensor and trial", "[rules][actions]") {
    // pt_train_eval (TRAIN and EVAL steps): VanishingGradient with threshold 0.0065 fires at
    // TRAIN steps 3 (gradient/MLP_fc1.weight) and 6 (gradient/MLP_fc1.bias).
    auto trial = open_trial(case_trial("pt_train_eval"));
    auto rule = make_rule("VanishingGradient", *trial, {{"threshold", "0.0065"}});
    std::vector<RuleFiring> by_action, by_on_fire;
    rule->actions().add("record", callback_action([&](const RuleFiring& f) { by_action.push_back(f); }));
    InvokeOptions o;
    o.on_fire = [&](const RuleFiring& f) { by_on_fire.push_back(f); };
    CHECK(invoke_rule(*rule, o).fired_steps == std::vector<std::int64_t>{3, 6});
    for (const auto* list : {&by_action, &by_on_fire}) {
        REQUIRE(list->size() == 2);
        for (const auto& f : *list) {
            CHECK(f.rule == "VanishingGradient");
            CHECK(f.mode == "TRAIN");
            CHECK(f.mode_step == trial->mode_step(f.step).value_or(-2));
            CHECK(f.finding.starts_with("tensor " + f.tensor + ": mean(|x|)="));
            CHECK(f.trial == trial->path());  // the trial has no name: its path
        }
        CHECK((*list)[0].step == 3);
        CHECK((*list)[0].tensor == "gradient/MLP_fc1.weight");
        CHECK((*list)[1].step == 6);
        CHECK((*list)[1].tensor == "gradient/MLP_fc1.bias");
    }
    CHECK(tensor_of_finding("tensor a/b: 3 of 4") == "a/b");
    CHECK(tensor_of_finding("class 3 has 4 samples") == "");
    CHECK(tensor_of_finding("tensor : x") == "");
}

TEST_CASE("actions: the finding's JSON, its text and its environment variables", "[rules][actions]") {
    const auto when = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764112288123));  // 2025-11-25T23:11:28.123Z
    const auto j = finding_json(sample_firing(), when);
    CHECK(j == boost::json::parse(R"({"rule":"ExplodingTensor","step":7,"mode":"TRAIN","mode_step":3,"tensor":"w",
                                      "message":"tensor w: nan at element 0","trial":"run1","time":"2025-11-25T23:11:28.123Z"})"));
    CHECK(j.at("step").is_int64());
    const auto unknown = finding_json(RuleFiring{"R", 2, ""}, when);
    CHECK(unknown.at("mode").is_null());
    CHECK(unknown.at("mode_step").is_null());
    CHECK(unknown.at("tensor").is_null());
    CHECK(rfc3339_utc(std::chrono::system_clock::time_point{}) == "1970-01-01T00:00:00.000Z");
    CHECK(finding_text(sample_firing()) == "smdebug rule ExplodingTensor fired at step 7 (TRAIN step 3) of trial run1: tensor w: nan at element 0");
    const auto env = finding_environment(sample_firing(), when);
    CHECK(env == std::vector<std::string>{"SMDEBUG_RULE=ExplodingTensor", "SMDEBUG_STEP=7", "SMDEBUG_MODE=TRAIN", "SMDEBUG_MODE_STEP=3",
                                          "SMDEBUG_TENSOR=w", "SMDEBUG_MESSAGE=tensor w: nan at element 0", "SMDEBUG_TRIAL=run1",
                                          "SMDEBUG_TIME=2025-11-25T23:11:28.123Z"});
}

TEST_CASE("actions: specs are parsed strictly; bad ones name the spec without its secrets", "[rules][actions]") {
    CHECK(split_command(R"(notify-send  'rule fired' "a \"b\"" c\ d)") == std::vector<std::string>{"notify-send", "rule fired", "a \"b\"", "c d"});
    CHECK(split_command("  ").empty());
    CHECK_THROWS_AS(split_command("echo 'open"), InvalidActionSpec);
    CHECK(signal_number("TERM") == SIGTERM);
    CHECK(signal_number("sigkill") == SIGKILL);
    CHECK(signal_number("10") == 10);
    CHECK_FALSE(signal_number("0"));
    CHECK_FALSE(signal_number("BOGUS"));
    CHECK(describe_action("webhook:https://user:pw@hooks.example.com:8443/services/T0/B0/SECRET?token=SECRET") ==
          "webhook:https://hooks.example.com:8443/…");
    CHECK(describe_action("webhook-slack:http://h") == "webhook-slack:http://h");
    CHECK(describe_action("exec:notify --token SECRET") == "exec:notify …");
    CHECK(describe_action("signal:12:KILL") == "signal:12:KILL");
    for (const char* bad : {"webhook", "webhook:", "webhook:ftp://h/SECRET", "webhook:https://user:SECRET@h/x", "webhook:http://h:99999/SECRET",
                            "signal:abc", "signal:0", "signal:-1", "signal:12:BOGUS", "exec:", "exec:   ", "exec:echo 'SECRET", "stop-file:",
                            "teleport:now", ":x"}) {
        INFO(bad);
        try {
            (void)make_action(bad);
            FAIL("no exception");
        } catch (const InvalidActionSpec& e) {
            const std::string what = e.what();
            CHECK(what.find("SECRET") == std::string::npos);
            CHECK(what.find("action") != std::string::npos);
        }
    }
    for (const char* good : {"webhook:http://127.0.0.1:9/x", "webhook-slack:https://hooks.example.com/a/b", "signal:123", "signal:123:HUP",
                             "signal:123:9", "exec:true", "stop-file:/tmp/stop"})
        CHECK_NOTHROW(make_action(good));
}

TEST_CASE("actions: signal stops a child process, exec runs argv with the finding, stop-file writes it", "[rules][actions]") {
    TempDir dir("actions");
    SECTION("signal: the default SIGTERM, and a named signal") {
        for (const auto& [suffix, sig] : {std::pair<std::string, int>{"", SIGTERM}, {":KILL", SIGKILL}, {":usr1", SIGUSR1}}) {
            const pid_t child = ::fork();
            REQUIRE(child >= 0);
            if (child == 0) {
                ::execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
                ::_exit(127);
            }
            const auto action = make_action("signal:" + std::to_string(child) + suffix);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));  // sleep is running (or about to)
            action(sample_firing());
            int status = 0;
            REQUIRE(::waitpid(child, &status, 0) == child);
            CHECK(WIFSIGNALED(status));
            CHECK(WTERMSIG(status) == sig);
            // The process is gone now: a second firing fails, naming the action.
            CHECK(failure_of([&] { action(sample_firing()); }).find("signal:" + std::to_string(child)) != std::string::npos);
        }
    }
    SECTION("exec: argv without a shell, the finding in SMDEBUG_* variables") {
        const auto out = dir.path / "env.txt";
        test::ScopedEnv keep("SMDEBUG_TENSOR", "stale value from the parent");
        const auto action = make_action("exec:sh -c 'env | grep ^SMDEBUG_ | sort > \"$0\"' " + test::shell_quote(out.string()));
        action(sample_firing());
        std::ifstream in(out);
        std::vector<std::string> lines;
        // The finding's variables (the environment may hold other SMDEBUG_* settings; the time varies).
        const std::vector<std::string> finding_vars = {"SMDEBUG_MESSAGE", "SMDEBUG_MODE", "SMDEBUG_MODE_STEP", "SMDEBUG_RULE",
                                                       "SMDEBUG_STEP", "SMDEBUG_TENSOR", "SMDEBUG_TRIAL"};
        for (std::string l; std::getline(in, l);)
            if (std::find(finding_vars.begin(), finding_vars.end(), l.substr(0, l.find('='))) != finding_vars.end()) lines.push_back(l);
        CHECK(lines == std::vector<std::string>{"SMDEBUG_MESSAGE=tensor w: nan at element 0", "SMDEBUG_MODE=TRAIN", "SMDEBUG_MODE_STEP=3",
                                                "SMDEBUG_RULE=ExplodingTensor", "SMDEBUG_STEP=7", "SMDEBUG_TENSOR=w", "SMDEBUG_TRIAL=run1"});
        // A semicolon is an argument, not a command separator: no shell runs.
        const auto marker = dir.path / "marker";
        make_action("exec:echo hi ; touch " + marker.string())(sample_firing());
        CHECK_FALSE(fs::exists(marker));
        CHECK(failure_of([] { make_action("exec:false")(sample_firing()); }) == "exec:false exited with status 1");
        CHECK(failure_of([] { make_action("exec:/nonexistent/notify --token SECRET")(sample_firing()); })
                  .starts_with("exec:/nonexistent/notify could not be started: "));
        ActionSettings quick;
        quick.timeout = std::chrono::milliseconds(200);
        const auto t0 = std::chrono::steady_clock::now();
        CHECK(failure_of([&] { make_action("exec:sleep 20", quick)(sample_firing()); }) == "exec:sleep was still running after 200 ms and was killed");
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    }
    SECTION("stop-file: the finding's JSON at PATH; an unwritable folder fails naming the path") {
        const auto stop = dir.path / "STOP";
        make_action("stop-file:" + stop.string())(sample_firing());
        std::ifstream in(stop);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto j = boost::json::parse(text);
        CHECK(j.at("rule") == "ExplodingTensor");
        CHECK(j.at("step") == 7);
        CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);  // no temporary left
        const auto missing = dir.path / "no" / "such" / "STOP";
        CHECK(failure_of([&] { make_action("stop-file:" + missing.string())(sample_firing()); }).starts_with("stop-file:" + missing.string() + ": "));
    }
}

TEST_CASE("actions: webhook posts the finding once per firing, retries 5xx and 429, and bounds its time", "[rules][actions][webhook]") {
    SECTION("the finding's JSON, then Slack's text") {
        HookReceiver rx;
        make_action("webhook:" + rx.url("/hook/abc?x=1"))(sample_firing());
        make_action("webhook-slack:" + rx.url("/slack"))(sample_firing());
        const auto got = rx.received();
        REQUIRE(got.size() == 2);
        CHECK(got[0].method == "POST");
        CHECK(got[0].target == "/hook/abc?x=1");
        CHECK(got[0].content_type == "application/json");
        auto j = boost::json::parse(got[0].body).as_object();
        CHECK(j.at("time").as_string().size() == 24);
        j.erase("time");
        CHECK(j == boost::json::parse(R"({"rule":"ExplodingTensor","step":7,"mode":"TRAIN","mode_step":3,"tensor":"w",
                                           "message":"tensor w: nan at element 0","trial":"run1"})"));
        CHECK(got[1].target == "/slack");
        CHECK(boost::json::parse(got[1].body) == boost::json::object{{"text", finding_text(sample_firing())}});
    }
    SECTION("500 then 429 then 200: three attempts, one delivery, retries logged") {
        HookReceiver rx({500, 429});
        std::vector<std::string> logs;
        ActionSettings s;
        s.log = [&](std::string_view level, std::string_view line) { logs.push_back(std::string(level) + " " + std::string(line)); };
        make_action("webhook:" + rx.url("/hook/SECRET"), s)(sample_firing());
        CHECK(rx.received().size() == 3);
        REQUIRE(logs.size() == 2);
        CHECK(logs[0].starts_with("warning webhook " + rx.url("/…") + ": HTTP 500"));
        CHECK(logs[1].find("HTTP 429") != std::string::npos);
        for (const auto& l : logs) CHECK(l.find("SECRET") == std::string::npos);
    }
    SECTION("a 404 fails at once; always 503 fails after max_attempts; a short timeout cuts the retries") {
        HookReceiver not_found({404});
        CHECK(failure_of([&] { make_action("webhook:" + not_found.url("/SECRET"))(sample_firing()); }) ==
              "webhook " + not_found.url("/…") + " answered HTTP 404 Status");
        CHECK(not_found.received().size() == 1);
        HookReceiver down({503, 503, 503, 503, 503});
        const auto msg = failure_of([&] { make_action("webhook:" + down.url("/SECRET"))(sample_firing()); });
        CHECK(msg.find("failed after 3 attempts") != std::string::npos);
        CHECK(msg.find("HTTP 503") != std::string::npos);
        CHECK(down.received().size() == 3);
        HookReceiver slow({500, 500, 500, 500, 500});
        ActionSettings s;
        s.timeout = std::chrono::milliseconds(400);
        s.max_attempts = 5;
        const auto t0 = std::chrono::steady_clock::now();
        CHECK(failure_of([&] { make_action("webhook:" + slow.url("/x"), s)(sample_firing()); }).find("2 attempts") != std::string::npos);
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1500));
        CHECK(slow.received().size() == 2);  // 250 ms pause, then the next (500 ms) does not fit
    }
    SECTION("an unreachable URL fails after its attempts without naming the path or query") {
        ActionSettings s;
        s.timeout = std::chrono::milliseconds(3000);
        const auto msg = failure_of([&] { make_action("webhook:http://127.0.0.1:1/hook/SECRET?token=SECRET", s)(sample_firing()); });
        CHECK(msg.starts_with("webhook http://127.0.0.1:1/… failed after 3 attempts"));
        CHECK(msg.find("SECRET") == std::string::npos);
    }
    SECTION("HTTPS: a self-signed server is refused, and trusted with ca_file") {
        TempDir dir("tls");
        const auto cert = make_self_signed(dir.path);
        HookReceiver rx({}, cert.cert, cert.key);
        const auto msg = failure_of([&] { make_action("webhook:" + rx.url("/SECRET"))(sample_firing()); });
        CHECK(msg.starts_with("webhook " + rx.url("/…") + ": "));
        CHECK(msg.find("SECRET") == std::string::npos);
        CHECK(rx.received().empty());
        ActionSettings s;
        s.ca_file = cert.cert;
        make_action("webhook:" + rx.url("/SECRET"), s)(sample_firing());
        REQUIRE(rx.received().size() == 1);
        CHECK(boost::json::parse(rx.received()[0].body).at("step") == 7);
    }
    SECTION("make_actions: a failing action is reported once and the next one still runs") {
        HookReceiver rx;
        std::vector<std::string> errors;
        ActionSettings s;
        s.timeout = std::chrono::milliseconds(500);
        s.max_attempts = 1;
        s.log = [&](std::string_view level, std::string_view line) {
            if (level == "error") errors.emplace_back(line);
        };
        auto actions = make_actions({"webhook:http://127.0.0.1:1/SECRET", "exec:false", "webhook:" + rx.url("/ok")}, s);
        CHECK(actions.descriptions() == std::vector<std::string>{"webhook:http://127.0.0.1:1/…", "exec:false", "webhook:" + rx.url("/…")});
        CHECK_NOTHROW(actions.invoke(sample_firing()));
        CHECK(rx.received().size() == 1);
        REQUIRE(errors.size() == 2);
        CHECK(errors[0].starts_with("action failed: webhook http://127.0.0.1:1/… failed after 1 attempt"));
        CHECK(errors[1] == "action failed: exec:false exited with status 1");
    }
}

TEST_CASE("smdebug rule --action: every action once per firing; failures reported, the run goes on", "[rules][cli][actions]") {
    REQUIRE(fs::exists(fs::path(SMDEBUG_BIN_DIR) / "smdebug"));
    TempDir dir("rule-actions");
    HookReceiver rx;
    const auto env_log = dir.path / "exec.txt", stop = dir.path / "STOP";
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // VanishingGradient with threshold 0.0065 fires at TRAIN steps 3 and 6 of pt_train_eval.
    const std::string args = "rule VanishingGradient " + case_trial("pt_train_eval") + " --param threshold=0.0065" +
                             " --action " + test::shell_quote("webhook:" + rx.url("/hook/SECRET")) +
                             " --action " + test::shell_quote("webhook:http://127.0.0.1:1/down?token=SECRET") +
                             " --action " + test::shell_quote("exec:sh -c 'echo $SMDEBUG_STEP $SMDEBUG_MODE $SMDEBUG_TENSOR >> \"$0\"' " + env_log.string()) +
                             " --action " + test::shell_quote("stop-file:" + stop.string()) +
                             " --action signal:" + std::to_string(child);
    const auto r = run_cli(args);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
    INFO(r.err);
    CHECK(r.status == 1);
    // One line per step (step 6 lists its three gradients under the threshold), the actions once per step.
    std::vector<std::int64_t> steps;
    std::size_t lines = 0;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line); ++lines)
        if (const auto s = std::stoll(line.substr(5)); steps.empty() || steps.back() != s) steps.push_back(s);
    CHECK(steps == std::vector<std::int64_t>{3, 6});
    CHECK(lines == 2);
    const auto got = rx.received();
    REQUIRE(got.size() == steps.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].target == "/hook/SECRET");
        const auto j = boost::json::parse(got[i].body).as_object();
        CHECK(j.at("rule") == "VanishingGradient");
        CHECK(j.at("step") == steps[i]);
        CHECK(j.at("mode") == "TRAIN");
        CHECK(j.at("mode_step").as_int64() >= 0);
        CHECK(std::string_view(j.at("tensor").as_string()).starts_with("gradient/"));
        CHECK(std::string_view(j.at("message").as_string()).starts_with("tensor " + std::string(j.at("tensor").as_string()) + ": mean(|x|)="));
        CHECK(j.at("trial").as_string().size() > 0);
    }
    std::ifstream exec_out(env_log);
    std::vector<std::string> exec_lines;
    for (std::string l; std::getline(exec_out, l);) exec_lines.push_back(l);
    REQUIRE(exec_lines.size() == 2);
    CHECK(exec_lines[0].starts_with("3 TRAIN gradient/"));
    CHECK(exec_lines[1].starts_with("6 TRAIN gradient/"));
    std::ifstream stop_in(stop);
    CHECK(boost::json::parse(std::string((std::istreambuf_iterator<char>(stop_in)), std::istreambuf_iterator<char>())).at("step") == 6);
    // The unreachable webhook: one line per firing, naming no secret.
    std::istringstream err(r.err);
    int down = 0;
    for (std::string line; std::getline(err, line);)
        if (line.starts_with("smdebug rule: action failed: webhook http://127.0.0.1:1/… failed after 3 attempts")) ++down;
    CHECK(down == 2);
    CHECK(r.err.find("SECRET") == std::string::npos);

    // HTTPS: refused without --ca-file, delivered with it.
    const auto cert = make_self_signed(dir.path);
    HookReceiver tls({}, cert.cert, cert.key);
    const std::string once = "rule VanishingGradient " + case_trial("pt_train_eval") + " --param threshold=0.0065 --end-step 4 --action " +
                             test::shell_quote("webhook-slack:" + tls.url("/services/SECRET"));
    auto r2 = run_cli(once);
    CHECK(r2.status == 1);
    CHECK(r2.err.starts_with("smdebug rule: action failed: webhook " + tls.url("/…") + ": "));
    CHECK(tls.received().empty());
    r2 = run_cli(once + " --ca-file " + test::shell_quote(cert.cert));
    INFO(r2.err);
    CHECK(r2.status == 1);
    CHECK(r2.err.starts_with("VanishingGradient: checked "));  // only the closing summary line: no failure
    CHECK(r2.err.find('\n') + 1 == r2.err.size());
    REQUIRE(tls.received().size() == 1);
    CHECK(std::string(boost::json::parse(tls.received()[0].body).at("text").as_string())
              .starts_with("smdebug rule VanishingGradient fired at step 3 (TRAIN step "));

    // Bad specs and a missing CA file are usage errors, reported before the trial is opened.
    const std::string missing = test::shell_quote((dir.path / "no-such-trial").string());
    for (const char* bad : {"--action teleport:now", "--action signal:abc", "--action 'webhook:https://u:SECRET@h/x'", "--action exec:",
                            "--ca-file /no/such/ca.pem"}) {
        INFO(bad);
        const auto b = run_cli("rule ExplodingTensor " + missing + " " + bad);
        CHECK(b.status == 2);
        CHECK(b.err.starts_with("smdebug rule: "));
        CHECK(b.err.find("SECRET") == std::string::npos);
    }
}

}  // namespace smdebug_test_rules
