#pragma once
// Tensor<Store>'s definitions (query/tensor.hpp).
#include <algorithm>
#include <complex>
#include <type_traits>

#include <smdebug/core/reductions.hpp>
#include <smdebug/query/detail/record_reader.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug {

template <Store S>
const std::string& Tensor<S>::name() const noexcept { return data_->name; }

template <Store S>
const std::optional<std::string>& Tensor<S>::original_name() const noexcept { return data_->original_name; }

template <Store S>
std::vector<std::int64_t> Tensor<S>::steps(Mode mode, bool show_incomplete_steps) const {
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

template <Store S>
TensorValue Tensor<S>::value(std::int64_t step, const StepQuery& q) const {
        const auto& sd = step_data(step, q);
        if (!sd.location) return *full_value(sd, step, q.mode);  // raises what it raises
        auto& reader = trial_->records();
        if (auto v = reader.cached(*sd.location)) return *v;
        auto v = reader.read_value(*sd.location, name(), step, q.mode);
        reader.remember(*sd.location, v);
        return *v;
    }

template <Store S>
TensorValue Tensor<S>::value(std::int64_t step, Mode mode) const { return value(step, StepQuery{mode, std::nullopt}); }

template <Store S>
typename Tensor<S>::ValueInfo Tensor<S>::info(std::int64_t step, const StepQuery& q) const {
        const auto& sd = step_data(step, q);
        if (const auto v = cached_value(sd)) return {v->dtype(), v->shape()};
        if (!sd.location) throw TensorUnavailableForStep(name(), step, q.mode, !sd.reductions.empty());
        auto d = trial_->records().describe_record(*sd.location, name(), step, q.mode);
        return {d.dtype, std::move(d.shape)};
    }

template <Store S>
std::map<std::int64_t, TensorValue> Tensor<S>::values(const StepQuery& q) const {
        std::vector<ValueRequest> requests;
        for (auto s : steps(q.mode)) requests.push_back({name(), s, q});
        const auto results = trial_->read(requests);
        std::map<std::int64_t, TensorValue> out;
        for (std::size_t i = 0; i < requests.size(); ++i) out.emplace(requests[i].step, results[i].get());
        return out;
    }

template <Store S>
std::map<std::string, TensorValue> Tensor<S>::values_at(std::span<const Tensor> tensors, std::int64_t step,
                                                       const StepQuery& q) {
        std::map<std::string, TensorValue> out;
        const auto values = shared_values_at(tensors, step, q);
        for (std::size_t i = 0; i < tensors.size(); ++i) out.insert_or_assign(tensors[i].name(), *values[i]);
        return out;
    }

template <Store S>
std::vector<std::shared_ptr<const TensorValue>> Tensor<S>::shared_values_at(std::span<const Tensor> tensors, std::int64_t step,
                                                                           const StepQuery& q) {
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

template <Store S>
Shape Tensor<S>::shape(std::int64_t step, const StepQuery& q) const {
        const auto& sd = step_data(step, q);
        if (sd.shape) return *sd.shape;
        try {
            return full_value(sd, step, q.mode)->shape();
        } catch (const TensorUnavailableForStep&) {
            throw ShapeUnavailableForStep(name(), step, q.mode);
        }
    }

template <Store S>
std::map<std::int64_t, Shape> Tensor<S>::shapes(const StepQuery& q) const {
        std::map<std::int64_t, Shape> out;
        for (auto s : steps(q.mode)) out.emplace(s, shape(s, q));
        return out;
    }

template <Store S>
double Tensor<S>::reduction_value(std::int64_t step, std::string_view reduction, const StepQuery& q, bool abs) const {
        const auto& sd = step_data(step, q);
        if (const auto* loc = sd.reduction(reduction, abs)) return stored_reduction(*loc, step, q.mode);
        if (!sd.location)
            throw TensorUnavailableForStep(name(), step, q.mode, !sd.reductions.empty(), std::string(reduction));
        const auto r = parse_reduction(reduction);
        if (!r) throw SMDebugValueError("Invalid reduction type " + std::string(reduction));
        return compute_reduction(*full_value(sd, step, q.mode), *r, abs);
    }

template <Store S>
std::vector<ReductionResult> Tensor<S>::reduction_values(std::int64_t step, const StepQuery& q) const {
        const auto& sd = step_data(step, q);
        std::vector<ReductionResult> out;
        for (const auto& r : sd.reductions) out.push_back({r.name, r.abs, stored_reduction(r.location, step, q.mode)});
        return out;
    }

template <Store S>
std::vector<std::string> Tensor<S>::workers(std::int64_t step, Mode mode) const {
        std::vector<std::string> out;
        for (const auto& record : find_workers(step, mode)) out.push_back(*record.worker);
        if (out.empty()) throw TensorUnavailableForStep(name(), step, mode);
        return out;
    }

template <Store S>
std::vector<std::int64_t> Tensor<S>::prev_steps(std::int64_t step, std::optional<std::size_t> n,
                                         Mode mode) const {
        auto all = steps(mode);
        all.erase(std::upper_bound(all.begin(), all.end(), step), all.end());
        if (n && *n < all.size()) all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(*n));
        return all;
    }

template <Store S>
detail::WorkerSteps Tensor<S>::find_workers(std::int64_t step, Mode mode) const {
        if (mode == Mode::GLOBAL) {
            if (auto ws = data_->steps[mode_index(Mode::GLOBAL)].find(step); !ws.empty()) return ws;
            const auto mm = trial_->mode_modestep(step);
            if (!mm) return {};
            mode = mm->first;
            step = mm->second;
        }
        return data_->steps[mode_index(mode)].find(step);
    }

template <Store S>
const detail::StepData* Tensor<S>::lookup(std::int64_t step, const StepQuery& q) const {
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

template <Store S>
const detail::StepData& Tensor<S>::step_data(std::int64_t step, const StepQuery& q) const {
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

template <Store S>
std::shared_ptr<const TensorValue> Tensor<S>::cached_value(const detail::StepData& sd) const {
        return sd.location ? trial_->records().cached(*sd.location) : nullptr;
    }

template <Store S>
std::shared_ptr<const TensorValue> Tensor<S>::full_value(const detail::StepData& sd, std::int64_t step, Mode mode) const {
        if (!sd.location) throw TensorUnavailableForStep(name(), step, mode, !sd.reductions.empty());
        auto& reader = trial_->records();
        if (auto v = reader.cached(*sd.location)) return v;
        auto v = reader.read_value(*sd.location, name(), step, mode);
        reader.remember(*sd.location, v);
        return v;
    }

template <Store S>
bool Tensor<S>::reduce_without_value(const detail::StepData& sd, const ValueRequest& request, ValueResult& out) const {
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

template <Store S>
double Tensor<S>::stored_reduction(const detail::Location& loc, std::int64_t step, Mode mode) const {
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

template <Store S>
std::size_t Tensor<S>::read_records_through(const RecordVisitor& f, std::size_t batch) const {
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

}  // namespace smdebug
