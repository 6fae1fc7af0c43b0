#pragma once
// Reading every record of a trial: read_all_records(trial, on_batch, options) — raw values and
// stored reductions of every tensor, mode, step and worker, complete or not — step by step; the
// records of about ReadOptions::batch_bytes worth of steps are read together and handed to
// on_batch(std::span<const RecordRead>), so memory stays bounded (`smdebug verify`, `smdebug
// export`). Each batch is one Trial::read (query/trial.hpp) of the records as the index locates
// them (no lookup by name, step or worker per record), past the value cache: one pass over each
// event file, files read and records decoded on a few threads, values left as zero-copy views into
// the read buffers; with ReadOptions::reduce each raw value is reduced by the thread that decoded
// it, while its bytes are in cache. A record that does not decode carries its error, read once.
//
// The other batched reads are Trial::read's too: trial.read(requests) and trial.values(...)
// (any values, errors per request), trial.values_at(step, names) (many tensors of one step: what
// rules do), tensor.values() (many steps of one tensor: what plots do).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/modes.hpp>
#include <smdebug/query/read_request.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug {

// See the top of this file. Records come in global-step order (mode steps without a known global
// step last), tensors by name within a step, workers in the order their index files were read.
// ReadOptions::use_cache and read_ahead are not used. Returns the number of records.
template <Store S, class F>
std::size_t read_all_records(Trial<S>& trial, F&& on_batch, const ReadOptions& options) {
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

template <Store S, class F>
std::size_t read_all_records(Trial<S>& trial, F&& on_batch, std::uint64_t batch_bytes = std::uint64_t{4} << 20) {
    return read_all_records(trial, std::forward<F>(on_batch), ReadOptions{.batch_bytes = batch_bytes});
}

}  // namespace smdebug
