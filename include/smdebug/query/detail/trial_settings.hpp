#pragma once
// The configuration of a Trial: its options, checked, with the defaults the reference takes from
// the environment filled in (core/environment.hpp).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <smdebug/core/errors.hpp>
#include <smdebug/format/detail/tensor_proto.hpp>
#include <smdebug/core/environment.hpp>
#include <smdebug/query/options.hpp>

namespace smdebug::detail {

// range_steps: the global steps a trial loads, [begin, end).
struct StepRange {
    std::optional<std::int64_t> begin;
    std::optional<std::int64_t> end;

    bool contains(std::int64_t g) const { return (!begin || g >= *begin) && (!end || g < *end); }
};

struct TrialSettings {
    std::string name;
    StepRange range;
    std::int64_t incomplete_step_wait_window = 1000;
    std::chrono::milliseconds training_end_delay_refresh{1000};
    int missing_event_file_retry_limit = 100;
    std::size_t max_expanded_elements = event::detail::max_broadcast_elements;  // the decoder's expansion budget

    // Throws SMDebugValueError for a range that is not (begin, end) with 0 <= begin < end.
    explicit TrialSettings(const TrialOptions& options) : range{options.range_begin, options.range_end} {
        if (range.begin && *range.begin < 0) throw SMDebugValueError("range_steps begin must be a non-negative integer");
        if (range.end && *range.end < 0) throw SMDebugValueError("range_steps end must be a non-negative integer");
        if (range.begin && range.end && *range.end <= *range.begin)
            throw SMDebugValueError("range_steps should be of the form (begin, end) where begin is less than end");
        incomplete_step_wait_window =
            options.incomplete_step_wait_window.value_or(environment::incomplete_step_wait_window().value_or(1000));
        training_end_delay_refresh = options.training_end_delay_refresh.value_or(
            environment::training_end_delay_refresh().value_or(std::chrono::milliseconds(1000)));
        missing_event_file_retry_limit =
            options.missing_event_file_retry_limit.value_or(environment::missing_event_file_retry_limit().value_or(100));
        max_expanded_elements = options.max_expanded_elements.value_or(
            environment::max_expanded_elements().value_or(event::detail::max_broadcast_elements));
        name = options.name.value_or(std::string());
    }
};

}  // namespace smdebug::detail
