#pragma once
// Tensor<Store>: one named tensor of a Trial (docs/semantics.md §6). A Tensor is a cheap handle that
// refers to its Trial; it must not outlive it.
#include <algorithm>
#include <complex>
#include <concepts>
#include <cstdint>
#include <exception>
#include <span>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/reductions.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/read_request.hpp>
#include <smdebug/query/detail/record_reader.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

template <Store S> class Trial;
namespace detail {
template <Store S> class ReadEngine;
}

// What a Tensor asks of its trial — all of it public members of Trial<S>: refreshing step
// lookups, completeness, the step index and the record reader.
template <class T, class S>
concept TensorSource = requires(T& t, const T& ct, std::int64_t step, Mode mode) {
    t.maybe_refresh();
    { t.mode_modestep(step) } -> std::same_as<std::optional<std::pair<Mode, std::int64_t>>>;
    { t.has_passed_step(step, mode) } -> std::same_as<StepState>;
    { ct.is_complete(step) } -> std::same_as<bool>;
    { ct.index() } -> std::same_as<const detail::StepIndex&>;
    { t.records() } -> std::same_as<detail::RecordReader<S>&>;
    { ct.options() } -> std::same_as<const TrialOptions&>;
};

struct ReductionResult {
    std::string reduction;
    bool abs = false;
    double value = 0;
};

template <Store S>
class Tensor {
public:
    const std::string& name() const noexcept { return data_->name; }
    const std::optional<std::string>& original_name() const noexcept { return data_->original_name; }

    std::vector<std::int64_t> steps(Mode mode = Mode::GLOBAL, bool show_incomplete_steps = false) const {
        trial_->maybe_refresh();
        std::vector<std::int64_t> out;
        auto keep = [&](std::int64_t g) { return show_incomplete_steps || trial_->is_complete(g); };  // D9
        if (mode == Mode::GLOBAL) {
            for (Mode m : all_modes)
                for (const auto& [ms, ws] : data_->steps[mode_index(m)]) {
                    const auto g = m == Mode::GLOBAL ? std::optional(ms) : trial_->index().lookup_global(m, ms);
                    if (g && keep(*g)) out.push_back(*g);
                }
            std::sort(out.begin(), out.end());
            out.erase(std::unique(out.begin(), out.end()), out.end());
        } else {
            for (const auto& [ms, ws] : data_->steps[mode_index(mode)]) {
                const auto g = trial_->index().lookup_global(mode, ms);
                if (show_incomplete_steps || (g && keep(*g))) out.push_back(ms);
            }
        }
        return out;
    }

    // The full value at a step (D2: every dtype decodes to its own type; D19: kept with a shape).
    TensorValue value(std::int64_t step, const StepQuery& q = {}) const {
        const auto& sd = step_data(step, q);
        if (!sd.location) return *full_value(sd, step, q.mode);  // raises what it raises
        auto& reader = trial_->records();
        if (auto v = reader.cached(*sd.location)) return *v;
        auto v = reader.read_value(*sd.location, name(), step, q.mode);
        reader.remember(*sd.location, v);
        return *v;
    }
    TensorValue value(std::int64_t step, Mode mode) const { return value(step, StepQuery{mode, std::nullopt}); }

    // The dtype and shape of the value at a step, from its record without decoding the values (a
    // value broadcast from one element is not expanded): what a summary needs.
    struct ValueInfo {
        DType dtype = DType::float32;
        Shape shape;
    };
    ValueInfo info(std::int64_t step, const StepQuery& q = {}) const {
        const auto& sd = step_data(step, q);
        if (const auto v = cached_value(sd)) return {v->dtype(), v->shape()};
        if (!sd.location) throw TensorUnavailableForStep(name(), step, q.mode, !sd.reductions.empty());
        auto d = trial_->records().describe_record(*sd.location, name(), step, q.mode);
        return {d.dtype, std::move(d.shape)};
    }

    // Every complete step's value, read together (Trial::read: parallel ranged GETs on S3); the
    // first failing step raises what value() would have raised for it.
    std::map<std::int64_t, TensorValue> values(const StepQuery& q = {}) const {
        std::vector<ValueRequest> requests;
        for (auto s : steps(q.mode)) requests.push_back({name(), s, q});
        const auto results = trial_->read(requests);
        std::map<std::int64_t, TensorValue> out;
        for (std::size_t i = 0; i < requests.size(); ++i) out.emplace(requests[i].step, results[i].get());
        return out;
    }

    // Several tensors of one trial at one step (what rules do): each value as value(step, q)
    // gives it, the records read together — one pass over each event file, files in parallel,
    // values left in the read buffers. The first failing tensor, in the given order, raises
    // what value() would raise for it. Trial::values_at() is the same by tensor names.
    static std::map<std::string, TensorValue> values_at(std::span<const Tensor> tensors, std::int64_t step,
                                                       const StepQuery& q = {}) {
        std::map<std::string, TensorValue> out;
        const auto values = shared_values_at(tensors, step, q);
        for (std::size_t i = 0; i < tensors.size(); ++i) out.insert_or_assign(tensors[i].name(), *values[i]);
        return out;
    }
    // The same values in the order of `tensors`, shared rather than copied (no map, no copy of
    // a shape per value). A walk over steps reads the next steps ahead (ReadOptions::read_ahead).
    static std::vector<std::shared_ptr<const TensorValue>> shared_values_at(std::span<const Tensor> tensors, std::int64_t step,
                                                                           const StepQuery& q = {}) {
        if (tensors.empty()) return {};
        std::vector<ValueRequest> requests;
        requests.reserve(tensors.size());
        for (const auto& t : tensors) {
            if (t.trial_ != tensors.front().trial_) throw UsageError("Tensor::shared_values_at: tensors of different trials");
            requests.push_back({t.name(), step, q});
        }
        auto results = tensors.front().trial_->read(requests, ReadOptions{.read_ahead = true});
        std::vector<std::shared_ptr<const TensorValue>> values(tensors.size());
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            if (results[i].error) std::rethrow_exception(results[i].error);
            values[i] = std::move(results[i].value);
        }
        return values;
    }

    // One saved record of this tensor (read_records): deprecated name of RecordRead.
    using Record = RecordRead;

    // Reads every saved record of this tensor — raw values and stored reductions, in every mode,
    // step and worker, complete or not — `batch` records at a time (Trial::read of the records as
    // the index locates them, past the value cache), and calls f(record, value, error) for each:
    // value is null and error set when the record fails as value() would fail on it. Returns the
    // number of records. (The integrity check of one tensor; `smdebug verify` checks a whole trial
    // with read_all_records.)
    template <class F>
    std::size_t read_records(F&& f, std::size_t batch = 256) const {
        trial_->maybe_refresh();
        std::vector<RecordRead> records;
        std::vector<const detail::Location*> located;
        std::size_t count = 0;
        auto flush = [&] {
            trial_->read(std::span<RecordRead>(records), located, ReadOptions{.use_cache = false});
            for (const auto& r : records) f(r, r.value.get(), r.error);
            count += records.size();
            records.clear();
            located.clear();
        };
        for (Mode m : all_modes)
            for (const auto& [ms, workers] : data_->steps[mode_index(m)])
                for (const auto& record : workers) {
                    const auto& sd = record.data();
                    if (sd.location) {
                        records.push_back({{}, name(), m, ms, *record.worker, {}, false, sd.location->has_payload_crc != 0});
                        located.push_back(&*sd.location);
                    }
                    for (const auto& r : sd.reductions) {
                        records.push_back({{}, name(), m, ms, *record.worker, r.name, r.abs, r.location.has_payload_crc != 0});
                        located.push_back(&r.location);
                    }
                    if (records.size() >= batch) flush();
                }
        if (!records.empty()) flush();
        return count;
    }

    Shape shape(std::int64_t step, const StepQuery& q = {}) const {
        const auto& sd = step_data(step, q);
        if (sd.shape) return *sd.shape;
        try {
            return full_value(sd, step, q.mode)->shape();
        } catch (const TensorUnavailableForStep&) {
            throw ShapeUnavailableForStep(name(), step, q.mode);
        }
    }

    // Every shape of this tensor, by step (the reference documents shapes() but lacks it).
    std::map<std::int64_t, Shape> shapes(const StepQuery& q = {}) const {
        std::map<std::int64_t, Shape> out;
        for (auto s : steps(q.mode)) out.emplace(s, shape(s, q));
        return out;
    }

    // A stored reduction when one exists for this step and worker, else computed from the value.
    double reduction_value(std::int64_t step, std::string_view reduction, const StepQuery& q = {}, bool abs = false) const {
        const auto& sd = step_data(step, q);
        if (const auto* loc = sd.reduction(reduction, abs)) return stored_reduction(*loc, step, q.mode);
        if (!sd.location)
            throw TensorUnavailableForStep(name(), step, q.mode, !sd.reductions.empty(), std::string(reduction));
        const auto r = parse_reduction(reduction);
        if (!r) throw SMDebugValueError("Invalid reduction type " + std::string(reduction));
        return compute_reduction(*full_value(sd, step, q.mode), *r, abs);
    }

    // The stored reductions of a step (nothing is computed).
    std::vector<ReductionResult> reduction_values(std::int64_t step, const StepQuery& q = {}) const {
        const auto& sd = step_data(step, q);
        std::vector<ReductionResult> out;
        for (const auto& r : sd.reductions) out.push_back({r.name, r.abs, stored_reduction(r.location, step, q.mode)});
        return out;
    }

    // The handle of `data`, a tensor of `trial` (Trial::tensor() makes them).
    Tensor(Trial<S>& trial, const detail::TensorData& data) : trial_(&trial), data_(&data) {}
    // Whether this is a tensor of `trial`.
    bool of(const Trial<S>& trial) const noexcept { return trial_ == &trial; }

    // Workers that saved this tensor at the step, in the order their index files were read.
    std::vector<std::string> workers(std::int64_t step, Mode mode = Mode::GLOBAL) const {
        std::vector<std::string> out;
        for (const auto& record : find_workers(step, mode)) out.push_back(*record.worker);
        if (out.empty()) throw TensorUnavailableForStep(name(), step, mode);
        return out;
    }

    // Complete steps up to and including `step`; the last `n` of them when n is given (D15: 0 → none).
    std::vector<std::int64_t> prev_steps(std::int64_t step, std::optional<std::size_t> n = std::nullopt,
                                         Mode mode = Mode::GLOBAL) const {
        auto all = steps(mode);
        all.erase(std::upper_bound(all.begin(), all.end(), step), all.end());
        if (n && *n < all.size()) all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(*n));
        return all;
    }

private:
    friend class Trial<S>;
    friend class detail::ReadEngine<S>;

    // The workers of a step; empty when the tensor has none there.
    detail::WorkerSteps find_workers(std::int64_t step, Mode mode) const {
        if (mode == Mode::GLOBAL) {
            if (auto ws = data_->steps[mode_index(Mode::GLOBAL)].find(step); !ws.empty()) return ws;
            const auto mm = trial_->mode_modestep(step);
            if (!mm) return {};
            mode = mm->first;
            step = mm->second;
        }
        return data_->steps[mode_index(mode)].find(step);
    }

    const detail::StepData* lookup(std::int64_t step, const StepQuery& q) const {
        const auto ws = find_workers(step, q.mode);
        if (ws.empty()) return nullptr;
        if (q.worker) {
            // By address: a step may hold a thousand workers' records.
            if (const auto* worker = trial_->index().find_worker(*q.worker))
                for (const auto& record : ws)
                    if (record.worker == worker) return &record.data();
            throw InvalidWorker(*q.worker);
        }
        const auto best = std::min_element(ws.begin(), ws.end(), [](const auto& a, const auto& b) { return *a.worker < *b.worker; });
        return &best->data();
    }

    // The reference's Tensor._step (docs/semantics.md §6.1).
    const detail::StepData& step_data(std::int64_t step, const StepQuery& q) const {
        if (const auto* sd = lookup(step, q)) return *sd;
        trial_->maybe_refresh();
        switch (trial_->has_passed_step(step, q.mode)) {
            case StepState::AVAILABLE:
                if (const auto* sd = lookup(step, q)) return *sd;
                throw TensorUnavailableForStep(name(), step, q.mode);
            case StepState::UNAVAILABLE: throw StepUnavailable(step, q.mode);
            case StepState::NOT_YET_AVAILABLE: break;
        }
        throw StepNotYetAvailable(step, q.mode);
    }

    // The value the trial keeps for this record (TrialOptions::cache), if any.
    std::shared_ptr<const TensorValue> cached_value(const detail::StepData& sd) const {
        return sd.location ? trial_->records().cached(*sd.location) : nullptr;
    }

    // The value of a record: the cached one, or read (and kept when the trial caches values).
    std::shared_ptr<const TensorValue> full_value(const detail::StepData& sd, std::int64_t step, Mode mode) const {
        if (!sd.location) throw TensorUnavailableForStep(name(), step, mode, !sd.reductions.empty());
        auto& reader = trial_->records();
        if (auto v = reader.cached(*sd.location)) return v;
        auto v = reader.read_value(*sd.location, name(), step, mode);
        reader.remember(*sd.location, v);
        return v;
    }

    // A reduction request answered without the tensor's value: a stored reduction, or the error
    // reduction_value() raises (no value saved, an unknown reduction). False: compute it from the value.
    bool reduce_without_value(const detail::StepData& sd, const ValueRequest& request, ValueResult& out) const {
        const auto& r = *request.reduction;
        if (const auto* loc = sd.reduction(r.name, r.abs)) {
            out.reduced = stored_reduction(*loc, request.step, request.query.mode);
            return true;
        }
        if (!sd.location)
            throw TensorUnavailableForStep(name(), request.step, request.query.mode, !sd.reductions.empty(), r.name);
        if (!parse_reduction(r.name)) throw SMDebugValueError("Invalid reduction type " + r.name);
        return false;
    }

    double stored_reduction(const detail::Location& loc, std::int64_t step, Mode mode) const {
        const auto v = trial_->records().read_value(loc, name(), step, mode);
        if (v->is_string() || v->empty())
            throw FormatError(trial_->records().describe(loc) + ": stored reduction of " + name() + " is not a number");
        return visit_dtype(v->dtype(), [&](auto tag) -> double {
            using T = decltype(tag);
            if constexpr (!std::is_same_v<T, std::complex<float>> && !std::is_same_v<T, std::complex<double>>)
                return detail::to_double(v->template elements<T>()[0]);
            else throw FormatError(trial_->records().describe(loc) + ": stored reduction of " + name() + " is complex");
        });
    }

    Trial<S>* trial_;
    const detail::TensorData* data_;
};

}  // namespace smdebug
