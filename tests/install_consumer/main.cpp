// Uses the installed headers: reads the trial given on the command line and prints what the
// install_consumer test compares with the case's expected.json summary.
#include <iostream>

#ifdef SMDEBUG_CONSUMER_LOCAL
#include <smdebug/local.hpp>  // consumer_local: smdebug::local, local folders only
#else
#include <smdebug/smdebug.hpp>
#endif

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: consumer TRIAL\n";
        return 2;
    }
    smdebug::TrialOptions options;
    options.training_end_delay_refresh = std::chrono::milliseconds(0);
    auto trial = smdebug::create_trial(argv[1], options);
    std::cout << "steps " << trial.steps().size() << "\n"
              << "tensors " << trial.tensor_names().size() << "\n"
              << "workers " << trial.workers().size() << "\n";
    return 0;
}
