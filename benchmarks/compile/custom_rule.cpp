// A rule configured at compile time, invoked over a local trial.
#include <cstdio>
#include <string>
#include <vector>

#include <smdebug/local.hpp>
#include <smdebug/rules/rules.hpp>

using namespace smdebug;

template <Store S, double Limit>
class MaxAbsAbove : public RuleBase<S> {
public:
    explicit MaxAbsAbove(Trial<S>& trial) : RuleBase<S>(trial, "MaxAbsAbove") {}
    void set_required_tensors(std::int64_t step) {
        names_ = this->base_trial().tensor_names({.step = step});
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) {
        for (const auto& n : names_)
            if (compute_reduction(this->value(n, step), Reduction::max, true) > Limit) return this->fired(n);
        return false;
    }

private:
    std::vector<std::string> names_;
};

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    Trial<LocalStore> trial{LocalStore(argv[1])};
    MaxAbsAbove<LocalStore, 10.0> rule(trial);
    const auto result = invoke_rule(rule);
    std::printf("fired at %zu steps\n", result.fired_steps.size());
}
