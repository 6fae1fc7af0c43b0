// Uses the installed headers: reads the trial given on the command line, prints its step count.
#include <iostream>

#include <smdebug/smdebug.hpp>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    smdebug::TrialOptions options;
    options.training_end_delay_refresh = std::chrono::milliseconds(0);
    auto trial = smdebug::create_trial(argv[1], options);
    std::cout << "steps " << trial.steps().size() << "\n";
    return trial.steps().empty() ? 1 : 0;
}
