// consumer_mixed's header-only translation unit (SMDEBUG_SEPARATE_COMPILATION undefined for it).
#include <string>

#include <smdebug/smdebug.hpp>

#ifdef SMDEBUG_SEPARATE_COMPILATION
#error "header_only_tu.cpp must be compiled header-only"
#endif

std::size_t tensor_count_header_only(const std::string& path) {
    smdebug::TrialOptions options;
    options.training_end_delay_refresh = std::chrono::milliseconds(0);
    auto trial = smdebug::create_trial(path, options);
    return trial.tensor_names().size();
}
