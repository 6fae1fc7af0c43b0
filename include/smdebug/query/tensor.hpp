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
#include <smdebug/query/record_reader.hpp>
#include <smdebug/query/step_index.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

template <Store S> class Trial;

// What a Tensor asks of its trial — all of it public members of Trial<S>: refreshing step
// lookups, completeness, the step index and the record reader.
template <class T, class S>
concept TensorSource = requires(T& t, const T& ct, std::int64_t step, Mode mode) {
    t.maybe_refresh();
    { t.mode_modestep(step) } -> std::same_as<std::optional<std::pair<Mode, std::int64_t>>>;
    { t.has_passed_step(step, mode) } -> std::same_as<StepState>;
    { ct.is_complete(step) } -> std::same_as<bool>;
    { ct.index() } -> std::same_as<const detail::StepIndex&>;
    { ct.records() } -> std::same_as<const detail::RecordReader<S>&>;
    { ct.options() } -> std::same_as<const TrialOptions&>;
};

// A reduction asked of a batched read instead of the value: what reduction_value(step, name, q, abs) gives.
struct ReductionSpec {
    std::string name;  // min, max, mean, prod, std, variance, sum, l1, l2, ...
    bool abs = false;
};

// One value of a batched read (Trial::read): a tensor, a step and the query value() would take;
// with `reduction`, that reduction of it instead (the stored one where the Hook saved it).
struct ValueRequest {
    std::string tensor;
    std::int64_t step = 0;
    StepQuery query = {};
    std::optional<ReductionSpec> reduction = std::nullopt;
};
// What reading it gave: the value (or, for a reduction, `reduced`), or the error value() or
// reduction_value() would have raised for it.
struct ValueResult {
    std::shared_ptr<const TensorValue> value;  // null after an error, and for a reduction
    std::exception_ptr error;
    std::optional<double> reduced;  // a request's reduction
    // The value, or the error rethrown.
    const TensorValue& get() const {
        if (error) std::rethrow_exception(error);
        return *value;
    }
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
        auto& sd = step_data(step, q);
        return *full_value(sd, step, q.mode);
    }
    TensorValue value(std::int64_t step, Mode mode) const { return value(step, StepQuery{mode, std::nullopt}); }

    // The dtype and shape of the value at a step, from its record without decoding the values (a
    // value broadcast from one element is not expanded): what a summary needs.
    struct ValueInfo {
        DType dtype = DType::float32;
        Shape shape;
    };
    ValueInfo info(std::int64_t step, const StepQuery& q = {}) const {
        auto& sd = step_data(step, q);
        if (sd.cached) return {sd.cached->dtype(), sd.cached->shape()};
        if (!sd.location) throw TensorUnavailableForStep(name(), step, q.mode, !sd.reductions.empty());
        auto d = trial_->records().describe_record(*sd.location, name(), step, q.mode);
        return {d.dtype, std::move(d.shape)};
    }

    // Every complete step's value. The records are fetched together (parallel ranged GETs on S3);
    // the first failing step raises what value() would have raised for it.
    std::map<std::int64_t, TensorValue> values(const StepQuery& q = {}) const {
        std::map<std::int64_t, TensorValue> out;
        const auto all = steps(q.mode);
        std::vector<detail::StepData*> data;
        std::exception_ptr lookup_error;
        for (auto s : all) {
            try {
                data.push_back(&step_data(s, q));
            } catch (...) {
                lookup_error = std::current_exception();
                break;
            }
        }
        std::vector<detail::ReadRequest> requests;
        for (std::size_t i = 0; i < data.size(); ++i)
            if (!data[i]->cached && data[i]->location) requests.push_back({&*data[i]->location, all[i], q.mode});
        auto results = trial_->records().read_values(requests, name());
        for (std::size_t i = 0, r = 0; i < data.size(); ++i) {
            if (data[i]->cached || !data[i]->location) {
                out.emplace(all[i], *full_value(*data[i], all[i], q.mode));
                continue;
            }
            auto& res = results[r++];
            if (res.error) std::rethrow_exception(res.error);
            if (trial_->options().cache) data[i]->cached = res.value;
            out.emplace(all[i], *res.value);
        }
        if (lookup_error) std::rethrow_exception(lookup_error);
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
    // a shape per value): what the rules layer reads, step after step.
    static std::vector<std::shared_ptr<const TensorValue>> shared_values_at(std::span<const Tensor> tensors, std::int64_t step,
                                                                           const StepQuery& q = {}) {
        if (tensors.empty()) return {};
        std::vector<Item> items(tensors.size());
        for (std::size_t i = 0; i < tensors.size(); ++i) items[i] = {i, step, q};
        bool read_any = false;
        auto results = read(tensors, items, &read_any);
        std::vector<std::shared_ptr<const TensorValue>> values(tensors.size());
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            if (results[i].error) std::rethrow_exception(results[i].error);
            values[i] = std::move(results[i].value);
        }
        const auto& trial = *tensors.front().trial_;
        if (read_any && trial.records().note_batch_step(q.mode, step)) read_ahead_next_step(tensors, step, q);
        return values;
    }

    // One value of a batched read: tensors[tensor] at `step` under `query`.
    struct Item {
        std::size_t tensor = 0;
        std::int64_t step = 0;
        StepQuery query = {};
        std::optional<ReductionSpec> reduction = std::nullopt;  // reduction_value() of it instead
    };
    // The values of `items`, read together — one read of the records (one pass over each event
    // file, files in parallel, parallel ranged GETs on S3), values left in the read buffers. Never
    // throws for an item: each result holds its value or the error value() would raise for it.
    // `read_any`, when given, says whether any record had to be read (none were cached).
    static std::vector<ValueResult> read(std::span<const Tensor> tensors, std::span<const Item> items, bool* read_any = nullptr) {
        std::vector<ValueResult> out(items.size());
        if (items.empty()) return out;
        for (const auto& t : tensors)
            if (t.trial_ != tensors.front().trial_) throw UsageError("Tensor::read: tensors of different trials");
        std::vector<detail::StepData*> data(items.size(), nullptr);
        std::vector<detail::ReadRequest> requests;
        std::vector<std::size_t> requester;
        for (std::size_t i = 0; i < items.size(); ++i) {
            const Item& item = items[i];
            if (item.tensor >= tensors.size()) throw UsageError("Tensor::read: an item names no tensor");
            try {
                data[i] = &tensors[item.tensor].step_data(item.step, item.query);
                if (item.reduction && tensors[item.tensor].reduce_without_value(*data[i], item, out[i])) continue;
            } catch (...) {
                out[i].error = std::current_exception();
                continue;
            }
            if (!data[i]->cached && data[i]->location) {
                requests.push_back({&*data[i]->location, item.step, item.query.mode});
                requester.push_back(i);
            }
        }
        const auto& trial = *tensors.front().trial_;
        auto results = trial.records().read_values(
            requests, [&](std::size_t r) -> const std::string& { return tensors[items[requester[r]].tensor].name(); });
        for (std::size_t r = 0; r < results.size(); ++r) {
            const std::size_t i = requester[r];
            out[i].error = results[r].error;
            out[i].value = std::move(results[r].value);
            if (out[i].value && trial.options().cache) data[i]->cached = out[i].value;
        }
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (out[i].error || out[i].reduced || !data[i]) continue;
            try {
                // cached, or no value (only reductions): value()'s answer
                if (!out[i].value) out[i].value = tensors[items[i].tensor].full_value(*data[i], items[i].step, items[i].query.mode);
                if (const auto& r = items[i].reduction) {
                    out[i].reduced = compute_reduction(*out[i].value, *parse_reduction(r->name), r->abs);
                    out[i].value.reset();  // released here, batch by batch, unless the trial caches it
                }
            } catch (...) {
                out[i].error = std::current_exception();
            }
        }
        if (read_any) *read_any = !requests.empty();
        return out;
    }

    // One saved record of this tensor: its raw value (reduction empty) or a stored reduction.
    struct Record {
        Mode mode;
        std::int64_t mode_step;
        std::string_view worker;
        std::string_view reduction;
        bool abs = false;
    };

    // Reads every saved record of this tensor — raw values and stored reductions, in every mode,
    // step and worker, complete or not — `batch` records at a time in parallel, and calls
    // f(record, value, error) for each: value is null and error set when the record fails as
    // value() would fail on it. Returns the number of records. (The integrity check behind
    // `smdebug verify`.)
    template <class F>
    std::size_t read_records(F&& f, std::size_t batch = 256) const {
        trial_->maybe_refresh();
        std::vector<Record> records;
        std::vector<detail::ReadRequest> requests;
        std::size_t count = 0;
        auto flush = [&] {
            auto results = trial_->records().read_values(requests, name());
            for (std::size_t i = 0; i < records.size(); ++i) f(records[i], results[i].value.get(), results[i].error);
            count += records.size();
            records.clear();
            requests.clear();
        };
        for (Mode m : all_modes)
            for (const auto& [ms, workers] : data_->steps[mode_index(m)])
                for (const auto& record : workers) {
                    const auto& sd = *record.data;
                    if (sd.location) {
                        records.push_back({m, ms, *record.worker, {}, false});
                        requests.push_back({&*sd.location, ms, m});
                    }
                    for (const auto& [key, loc] : sd.reductions) {
                        records.push_back({m, ms, *record.worker, key.first, key.second});
                        requests.push_back({&loc, ms, m});
                    }
                    if (records.size() >= batch) flush();
                }
        if (!records.empty()) flush();
        return count;
    }

    Shape shape(std::int64_t step, const StepQuery& q = {}) const {
        auto& sd = step_data(step, q);
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
        auto& sd = step_data(step, q);
        if (const auto* loc = sd.reduction(reduction, abs)) return stored_reduction(*loc, step, q.mode);
        if (!sd.cached && !sd.location)
            throw TensorUnavailableForStep(name(), step, q.mode, !sd.reductions.empty(), std::string(reduction));
        const auto r = parse_reduction(reduction);
        if (!r) throw SMDebugValueError("Invalid reduction type " + std::string(reduction));
        return compute_reduction(*full_value(sd, step, q.mode), *r, abs);
    }

    // The stored reductions of a step (nothing is computed).
    std::vector<ReductionResult> reduction_values(std::int64_t step, const StepQuery& q = {}) const {
        auto& sd = step_data(step, q);
        std::vector<ReductionResult> out;
        for (const auto& [key, loc] : sd.reductions)
            out.push_back({key.first, key.second, stored_reduction(loc, step, q.mode)});
        return out;
    }

    // The handle of `data`, a tensor of `trial` (Trial::tensor() makes them).
    Tensor(Trial<S>& trial, detail::TensorData& data) : trial_(&trial), data_(&data) {}

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

    // A walk over steps (a rule, a plot) reads step after step: the next saved steps of `tensors`
    // are read ahead while the caller works on this one (RecordReader::prefetch).
    static void read_ahead_next_step(std::span<const Tensor> tensors, std::int64_t step, const StepQuery& q) {
        const auto& trial = *tensors.front().trial_;
        const auto& reader = trial.records();
        // Steps read ahead in a mode ascend, so the ones after the last are not queued yet.
        std::int64_t next = std::max(step, reader.last_read_ahead(q.mode).value_or(step));
        for (std::size_t ahead = 0; ahead < detail::RecordReader<S>::max_read_ahead_steps; ++ahead) {
            if (q.mode == Mode::GLOBAL) {
                const auto& steps = trial.index().steps();
                const auto it = steps.upper_bound(next);
                if (it == steps.end()) return;
                next = it->first;
            } else {
                ++next;
            }
            std::vector<detail::ReadRequest> requests;
            requests.reserve(tensors.size());
            for (const auto& t : tensors) {
                try {
                    const auto* sd = t.lookup(next, q);
                    if (sd && !sd->cached && sd->location) requests.push_back({&*sd->location, next, q.mode});
                } catch (const SMDebugError&) {
                    // not there (or not for this worker): nothing to read ahead
                }
            }
            if (requests.empty() || !reader.prefetch(q.mode, next, requests)) return;
        }
    }

    const detail::StepData* lookup(std::int64_t step, const StepQuery& q) const {
        const auto ws = find_workers(step, q.mode);
        if (ws.empty()) return nullptr;
        if (q.worker) {
            for (const auto& record : ws)
                if (*record.worker == *q.worker) return record.data;
            throw InvalidWorker(*q.worker);
        }
        const auto best = std::min_element(ws.begin(), ws.end(), [](const auto& a, const auto& b) { return *a.worker < *b.worker; });
        return best->data;
    }

    // The reference's Tensor._step (docs/semantics.md §6.1).
    detail::StepData& step_data(std::int64_t step, const StepQuery& q) const {
        if (const auto* sd = lookup(step, q)) return const_cast<detail::StepData&>(*sd);
        trial_->maybe_refresh();
        switch (trial_->has_passed_step(step, q.mode)) {
            case StepState::AVAILABLE:
                if (const auto* sd = lookup(step, q)) return const_cast<detail::StepData&>(*sd);
                throw TensorUnavailableForStep(name(), step, q.mode);
            case StepState::UNAVAILABLE: throw StepUnavailable(step, q.mode);
            case StepState::NOT_YET_AVAILABLE: break;
        }
        throw StepNotYetAvailable(step, q.mode);
    }

    std::shared_ptr<const TensorValue> full_value(detail::StepData& sd, std::int64_t step, Mode mode) const {
        if (sd.cached) return sd.cached;
        if (!sd.location) throw TensorUnavailableForStep(name(), step, mode, !sd.reductions.empty());
        auto v = trial_->records().read_value(*sd.location, name(), step, mode);
        if (trial_->options().cache) sd.cached = v;
        return v;
    }

    // A reduction request answered without the tensor's value: a stored reduction, or the error
    // reduction_value() raises (no value saved, an unknown reduction). False: compute it from the value.
    bool reduce_without_value(detail::StepData& sd, const Item& item, ValueResult& out) const {
        const auto& r = *item.reduction;
        if (const auto* loc = sd.reduction(r.name, r.abs)) {
            out.reduced = stored_reduction(*loc, item.step, item.query.mode);
            return true;
        }
        if (!sd.cached && !sd.location)
            throw TensorUnavailableForStep(name(), item.step, item.query.mode, !sd.reductions.empty(), r.name);
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
    detail::TensorData* data_;
};

}  // namespace smdebug
