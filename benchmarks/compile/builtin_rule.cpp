// A built-in rule chosen by name at run time (what `smdebug rule` does), invoked over a trial.
#include <cstdio>

#include <smdebug/local.hpp>
#include <smdebug/rules/rules.hpp>

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    auto trial = smdebug::create_trial(argv[1]);
    auto rule = smdebug::make_rule(argv[2], trial);
    const auto result = smdebug::invoke_rule(*rule);
    std::printf("fired at %zu steps\n", result.fired_steps.size());
}
