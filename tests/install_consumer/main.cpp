// Uses the installed headers: reads the trial given on the command line and prints what the
// install_consumer test compares with the case's expected.json summary.
#include <iostream>
#include <string>

#ifdef SMDEBUG_CONSUMER_LOCAL
#include <smdebug/local.hpp>  // consumer_local: smdebug::local, local folders only
#else
#include <smdebug/smdebug.hpp>
#endif

#ifdef SMDEBUG_CONSUMER_MIXED
std::size_t tensor_count_header_only(const std::string& path);
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
#ifdef SMDEBUG_CONSUMER_MIXED
    if (tensor_count_header_only(argv[1]) != trial.tensor_names().size()) {
        std::cerr << "the header-only and the separately compiled translation units disagree\n";
        return 1;
    }
#endif
    return 0;
}
