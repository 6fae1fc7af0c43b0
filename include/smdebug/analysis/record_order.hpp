#pragma once
// Compute order inside a step: where a worker's record of a tensor sits in that worker's event file
// for the step. Hooks write a step's records in the order the training computed them (the PyTorch
// hook: weights, then each module's inputs and outputs in forward order, the loss, then gradients in
// backward order), so the record's position orders the tensors of one step and worker. Read from
// the index the Trial loaded (Trial::index()): no record is read.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <smdebug/core/modes.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug::analysis {

// A record's place: its event file (interned id) and byte offset in it.
struct RecordPosition {
    std::uint32_t event_file = 0;
    std::uint64_t offset = 0;
    auto operator<=>(const RecordPosition&) const = default;
};

// Where `worker`'s record of `tensor` at (mode, mode_step) is; its first stored reduction's when
// only reductions were saved; nullopt when the worker saved nothing of it there.
template <Store S>
std::optional<RecordPosition> record_position(const Trial<S>& trial, const std::string& tensor, Mode mode, std::int64_t mode_step,
                                              std::string_view worker) {
    const auto* t = trial.find_tensor_data(tensor);
    if (!t) return std::nullopt;
    for (const auto& e : t->steps[mode_index(mode)].find(mode_step)) {
        if (*e.worker != worker) continue;
        const auto& d = e.data();
        if (d.location) return RecordPosition{d.location->event_file, d.location->start};
        for (const auto& r : d.reductions) return RecordPosition{r.location.event_file, r.location.start};
    }
    return std::nullopt;
}

// Whether `worker` saved `tensor` at (mode, mode_step) (a value or a stored reduction).
template <Store S>
bool saved_by(const Trial<S>& trial, const std::string& tensor, Mode mode, std::int64_t mode_step, std::string_view worker) {
    return record_position(trial, tensor, mode, mode_step, worker).has_value();
}

}  // namespace smdebug::analysis
