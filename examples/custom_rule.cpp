// A custom rule configured at compile time, run with invoke_rule.
//
//   custom_rule [TRIAL_DIR]
//
// Without an argument it first writes a small training run of its own (a weight that blows up at
// step 6) and then checks it. The rule's parameters are template arguments: the compiler checks
// them and folds them into the loop, there is nothing to parse at run time.
//
// Exit code: 0 when the rule found what it was built to find (the demo run) or nothing (a given
// trial), 1 otherwise.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <smdebug/local.hpp>
#include <smdebug/rules/rules.hpp>

using namespace smdebug;

// Fires when the largest |value| of any tensor in collection Collection exceeds Limit.
template <Store S, double Limit, const char* Collection>
class MaxAbsAbove : public RuleBase<S> {
public:
    static_assert(Limit > 0, "MaxAbsAbove needs a positive limit");
    explicit MaxAbsAbove(Trial<S>& trial) : RuleBase<S>(trial, "MaxAbsAbove") {}

    // The tensors this step needs; invoke_rule fetches them together before invoke_at_step.
    void set_required_tensors(std::int64_t step) {
        TensorNamesQuery q;
        q.step = step;
        q.collection = Collection;
        names_ = this->base_trial().tensor_names(q);
        for (const auto& n : names_) this->require(n, step);
    }

    bool invoke_at_step(std::int64_t step) {
        for (const auto& n : names_) {
            const double m = compute_reduction(this->value(n, step), Reduction::max, /*abs=*/true);
            if (m > Limit) return this->fired(n + ": max |x| = " + std::to_string(m));
        }
        return false;
    }

private:
    std::vector<std::string> names_;
};

inline constexpr char weights[] = "weights";
using WeightsAboveTen = MaxAbsAbove<LocalStore, 10.0, weights>;
static_assert(Rule<WeightsAboveTen> && RuleWithRequiredTensors<WeightsAboveTen>);

int run_example(int argc, char** argv);

// Every failure (a full disk, an unreadable trial) ends with one line and exit 2, never an abort.
int main(int argc, char** argv) {
    int code = 0;
    try {
        code = run_example(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "custom_rule: " << e.what() << "\n";
        return 2;
    }
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {  // a full disk under a redirected stdout is a failure too
        std::cerr << "custom_rule: cannot write standard output: " << std::strerror(errno) << "\n";
        return 2;
    }
    return code;
}

int run_example(int argc, char** argv) {
    const bool demo = argc < 2;
    std::filesystem::path dir = demo ? std::filesystem::temp_directory_path() / "smdebug-custom-rule-demo" : std::filesystem::path(argv[1]);
    if (demo) {
        std::filesystem::remove_all(dir);
        HookOptions o;
        o.enabled = true;
        o.write_end_marker = true;
        o.save_config = SaveConfig(save_config_mode(1));
        o.include_collections = std::vector<std::string>{"weights"};
        Hook<LocalStore> hook(LocalStore(dir, LocalStore::Durability::none), o);
        hook.set_mode(Mode::TRAIN);
        for (int step = 0; step < 10; ++step) {
            hook.next_step();
            const float scale = step < 6 ? 1.0f : std::pow(10.0f, float(step - 4));
            hook.save_tensor("fc1.weight", std::vector<float>{0.5f * scale, -0.25f * scale, 0.1f}, "weights");
        }
        hook.close();
    }

    TrialOptions options;
    options.training_end_delay_refresh = std::chrono::milliseconds(0);
    Trial<LocalStore> trial(LocalStore(dir), options);
    WeightsAboveTen rule(trial);
    rule.actions().add("print", log_action(std::cout));

    std::vector<std::int64_t> steps;
    InvokeOptions run;
    run.on_fire = [&](const RuleFiring& f) { steps.push_back(f.step); };
    invoke_rule(rule, run);

    std::printf("%s fired at %zu step(s)%s\n", rule.name().c_str(), steps.size(),
                steps.empty() ? "" : (", first at step " + std::to_string(steps.front())).c_str());
    if (demo) return !steps.empty() && steps.front() == 6 ? 0 : 1;  // 0.5 * 100 = 50 > 10 first at step 6
    return steps.empty() ? 0 : 1;
}
