#pragma once
// read_all_records's definition (query/batch_reads.hpp).
#include <algorithm>
#include <cstdint>
#include <optional>

#include <smdebug/query/batch_reads.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/impl/trial.ipp>

namespace smdebug {

template <Store S>
std::size_t read_all_records_through(Trial<S>& trial, const RecordBatchVisitor& on_batch, const ReadOptions& options) {
    trial.maybe_refresh();
    const auto& index = trial.index();
    // (tensor, mode, mode step) in read order. Its records are looked up when the slot is read
    // (on_batch may run queries that refresh the index).
    struct Slot {
        std::int64_t order;
        const detail::TensorData* tensor;
        Mode mode;
        std::int64_t mode_step;
    };
    std::vector<Slot> slots;
    for (const auto& [name, t] : index.tensors())
        for (Mode m : all_modes)
            for (const auto& [ms, ws] : t->steps[mode_index(m)]) {
                const auto g = m == Mode::GLOBAL ? std::optional(ms) : index.lookup_global(m, ms);
                slots.push_back({g.value_or(INT64_MAX), t.get(), m, ms});
            }
    std::stable_sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.order < b.order; });

    std::vector<RecordRead> batch;
    std::vector<const detail::Location*> located;
    std::uint64_t bytes = 0;
    std::size_t count = 0;
    auto flush = [&] {
        if (batch.empty()) return;
        trial.read(std::span<RecordRead>(batch), located, options);
        on_batch(std::span<const RecordRead>(batch));
        count += batch.size();
        batch.clear();
        located.clear();
        bytes = 0;
    };
    for (std::size_t i = 0; i < slots.size(); ++i) {
        const Slot& s = slots[i];
        for (const auto& record : s.tensor->steps[mode_index(s.mode)].find(s.mode_step)) {
            const std::string_view worker = *record.worker;
            if (options.select && !options.select(s.tensor->name, s.mode, s.mode_step,
                                                  s.order == INT64_MAX ? std::nullopt : std::optional(s.order), worker))
                continue;
            const auto& sd = record.data();
            if (sd.location) {
                batch.push_back({{}, s.tensor->name, s.mode, s.mode_step, worker, {}, false, sd.location->has_payload_crc != 0});
                located.push_back(&*sd.location);
                bytes += sd.location->length;
            }
            for (const auto& r : sd.reductions) {
                batch.push_back({{}, s.tensor->name, s.mode, s.mode_step, worker, r.name, r.abs, r.location.has_payload_crc != 0});
                located.push_back(&r.location);
                bytes += r.location.length;
            }
        }
        // Batches end at step boundaries, so that each event file is read in one pass (unless
        // one step alone holds several batches' worth).
        const bool step_ends = i + 1 == slots.size() || slots[i + 1].order != s.order;
        if (bytes >= options.batch_bytes && (step_ends || bytes >= 4 * options.batch_bytes)) flush();
    }
    flush();
    return count;
}

}  // namespace smdebug
