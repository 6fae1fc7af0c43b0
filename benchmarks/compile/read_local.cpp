// The 7-line program of issue 52: one tensor's mean at every step of a trial.
#include <smdebug/smdebug.hpp>
#include <cstdio>
int main(int argc, char** argv) {
    auto trial = smdebug::create_trial(argv[1]);
    auto t = trial.tensor(argv[2]);
    for (auto s : t.steps()) std::printf("%lld %g\n", static_cast<long long>(s), t.reduction_value(s, "mean"));
}
