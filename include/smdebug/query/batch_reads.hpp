#pragma once
// Batch reads through the public API: every one is the trial's planned batch read
// (RecordReader::read_values, under Trial::read in query/trial.hpp) — many records read in one
// pass over each event file, the files read (and the records decoded) on a few
// threads, values left as zero-copy views into the read buffers (storage/local_store.hpp,
// storage/s3_store.hpp: one ranged GET per event file).
//
//  - read_all_records(trial, on_batch): every saved record of the trial — raw values and stored
//    reductions of every tensor, mode, step and worker, complete or not — step by step; the
//    records of about `batch_bytes` worth of steps are read together and handed to
//    on_batch(std::span<const RecordRead>), so memory stays bounded (`smdebug verify`);
//    with ReadAllOptions::reduce, each raw value is also reduced by the thread that decoded it,
//    while its bytes are in cache, instead of in a second pass over memory; it hands the reader
//    the records' locations from the index directly (what Trial::read looks up by name and step);
//  - trial.read(requests) and trial.values(...) (query/trial.hpp): any values, errors per request;
//  - trial.values_at(step, names) (query/trial.hpp): many tensors of one step (what rules do);
//  - tensor.values() (query/tensor.hpp): many steps of one tensor (what plots do).
#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/reductions.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug {

// One saved record of a trial — which one — and what reading it gave (Trial::read's result).
struct RecordRead : ValueResult {
    std::string_view tensor;
    Mode mode = Mode::GLOBAL;
    std::int64_t mode_step = 0;
    std::string_view worker;
    std::string_view reduction;  // empty: the raw value; else a stored reduction
    bool abs = false;
    bool payload_checksum = false;  // its index entry holds the payload's CRC-32C, which the read checked
};

// Which records read_all_records reads, and how (the last three are Trial::read's ReadOptions).
struct ReadAllOptions {
    std::uint64_t batch_bytes = std::uint64_t{4} << 20;  // about this much is read per batch
    std::optional<Reduction> reduce;                     // ReadOptions::reduce: every raw value reduced as it is read
    bool abs = false;                                    // ... of its absolute values
    bool keep_values = true;                             // ReadOptions::keep_values
    // When set, only the records it accepts are read and handed to on_batch. It is called before
    // any read, with each record's tensor, mode, mode step, global step (when known) and worker.
    std::function<bool(std::string_view tensor, Mode mode, std::int64_t mode_step, std::optional<std::int64_t> global_step,
                       std::string_view worker)>
        select;
};

// See the top of this file. Records come in global-step order (mode steps without a known global
// step last), tensors by name within a step, workers in the order their index files were read.
// Each batch is one read past the value cache. Returns the number of records.
template <Store S, class F>
std::size_t read_all_records(Trial<S>& trial, F&& on_batch, const ReadAllOptions& options) {
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

    // Each batch goes straight to the reader with the records' locations (the slots hold their
    // tensors: no lookup by name or step per record), as Trial::read would read them past the cache.
    const auto retention = options.keep_values ? detail::ValueRetention::keep
                           : options.reduce    ? detail::ValueRetention::drop
                                               : detail::ValueRetention::check;
    std::vector<RecordRead> batch;
    std::vector<detail::ReadRequest> reads;
    std::vector<const std::string*> tensor_of;
    std::uint64_t bytes = 0;
    std::size_t count = 0;
    auto flush = [&] {
        if (reads.empty()) return;
        // Raw values reduced by the thread that decoded them (Trial::read's ReadOptions::reduce).
        auto reduce = [&](std::size_t k, const TensorValue& v) noexcept {
            RecordRead& r = batch[k];
            if (!options.reduce || !r.reduction.empty() || !reducible(v)) return;
            try {
                r.reduced = compute_reduction(v, *options.reduce, options.abs);
            } catch (...) {
                r.error = std::current_exception();
            }
        };
        auto results = trial.records().read_values(
            reads, [&](std::size_t k) -> const std::string& { return *tensor_of[k]; }, reduce, retention);
        for (std::size_t k = 0; k < batch.size(); ++k) {
            RecordRead& r = batch[k];
            if (!r.error) r.error = results[k].error;
            r.bytes = results[k].bytes;
            if (options.keep_values && !r.error) r.value = std::move(results[k].value);
        }
        on_batch(std::span<const RecordRead>(batch));
        count += batch.size();
        batch.clear();
        reads.clear();
        tensor_of.clear();
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
                reads.push_back({&*sd.location, s.mode_step, s.mode});
                tensor_of.push_back(&s.tensor->name);
                bytes += sd.location->length;
            }
            for (const auto& r : sd.reductions) {
                batch.push_back({{}, s.tensor->name, s.mode, s.mode_step, worker, r.name, r.abs, r.location.has_payload_crc != 0});
                reads.push_back({&r.location, s.mode_step, s.mode});
                tensor_of.push_back(&s.tensor->name);
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
    return read_all_records(trial, std::forward<F>(on_batch), ReadAllOptions{.batch_bytes = batch_bytes});
}

}  // namespace smdebug
