#pragma once
// The read engine behind Trial::read (query/trial.hpp): requests resolved to the records the index
// names, the records read in one batch by the trial's RecordReader, each value reduced by the thread
// that decoded it, results and errors carried per request; and the batch read-ahead of a walk over
// steps (ReadOptions::read_ahead).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/reductions.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/detail/record_reader.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/read_request.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

template <Store S>
class ReadEngine {
public:
    using Tensor = smdebug::Tensor<S>;

    static constexpr std::size_t no_tensor = SIZE_MAX;

    // Trial::read's work once the names are resolved: request i is of tensors[tensor_of[i]]
    // (no_tensor: out[i] holds its error already). Plans one read of the records (RecordReader::
    // read_values), reduces on the reading threads, and never throws for a request.
    static void read(std::span<const Tensor> tensors, std::span<const ValueRequest> requests, std::span<const std::size_t> tensor_of,
                     const ReadOptions& options, std::vector<ValueResult>& out) {
        if (tensors.empty()) return;
        auto& reader = tensors.front().trial_->records();
        const bool cache_values = options.use_cache && reader.caches_values();
        std::vector<const detail::StepData*> data(requests.size(), nullptr);
        std::vector<detail::ReadRequest> reads;
        std::vector<std::size_t> requester;
        std::vector<std::size_t> without_read;  // cached, or no value saved: full_value() answers
        reads.reserve(requests.size());
        requester.reserve(requests.size());
        bool reduce_any = options.reduce.has_value();
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (tensor_of[i] == no_tensor) continue;
            const Tensor& t = tensors[tensor_of[i]];
            const ValueRequest& r = requests[i];
            const detail::Location* loc = nullptr;
            try {
                data[i] = &t.step_data(r.step, r.query);
                if (r.stored) {
                    loc = data[i]->reduction(r.stored->name, r.stored->abs);
                    if (!loc)
                        throw TensorUnavailableForStep(t.name(), r.step, r.query.mode, !data[i]->reductions.empty(), r.stored->name);
                } else {
                    if (r.reduction && t.reduce_without_value(*data[i], r, out[i])) continue;
                    reduce_any = reduce_any || r.reduction;
                    if (data[i]->location && !(options.use_cache && reader.cached(*data[i]->location))) loc = &*data[i]->location;
                }
            } catch (...) {
                out[i].error = std::current_exception();
                continue;
            }
            if (!loc) {
                without_read.push_back(i);
                continue;
            }
            reads.push_back({loc, t.name(), r.step, r.query.mode});
            requester.push_back(i);
        }
        // Reductions are computed by the thread that decoded the value, each into its own result.
        const auto reduce = [&](std::size_t k, const TensorValue& v) noexcept {
            reduce_into(out[requester[k]], v, requests[requester[k]], options);
        };
        const auto retention = options.keep_values || cache_values ? detail::ValueRetention::keep
                               : reduce_any                        ? detail::ValueRetention::drop
                                                                   : detail::ValueRetention::check;
        auto results = reader.read_values(reads, reduce, retention);
        for (std::size_t k = 0; k < results.size(); ++k) {
            const std::size_t i = requester[k];
            if (!out[i].error) out[i].error = results[k].error;
            out[i].bytes = results[k].bytes;
            out[i].value = std::move(results[k].value);
            if (out[i].value && cache_values && !requests[i].stored) reader.remember(*reads[k].location, out[i].value);
            if (requests[i].reduction || !options.keep_values || out[i].error) out[i].value.reset();
        }
        for (const std::size_t i : without_read) {
            const ValueRequest& r = requests[i];
            try {
                auto v = tensors[tensor_of[i]].full_value(*data[i], r.step, r.query.mode);
                out[i].bytes = v->byte_size();
                reduce_into(out[i], *v, r, options);
                if (options.keep_values && !r.reduction) out[i].value = std::move(v);
            } catch (...) {
                out[i].error = std::current_exception();
            }
        }
        if (options.read_ahead && !reads.empty()) read_ahead_after(tensors, requests, tensor_of, out);
    }

    // Trial::read of records the caller located in the index: records[i] names the record at
    // located[i] and receives what reading it gave — one batch past the value cache, each raw value
    // reduced (ReadOptions::reduce) by the thread that decoded it, never throwing for a record.
    static void read_located(RecordReader<S>& reader, std::span<RecordRead> records, std::span<const Location* const> located,
                             const ReadOptions& options) {
        auto& reads = reader.request_buffer();
        reads.clear();
        for (std::size_t i = 0; i < records.size(); ++i) reads.push_back({located[i], records[i].tensor, records[i].mode_step, records[i].mode});
        const auto reduce = [&](std::size_t i, const TensorValue& v) noexcept {
            RecordRead& r = records[i];
            if (!options.reduce || !r.reduction.empty() || !reducible(v)) return;
            try {
                r.reduced = compute_reduction(v, *options.reduce, options.abs);
            } catch (...) {
                r.error = std::current_exception();
            }
        };
        const auto retention = options.keep_values ? ValueRetention::keep : options.reduce ? ValueRetention::drop : ValueRetention::check;
        auto results = reader.read_values(reads, reduce, retention);
        for (std::size_t i = 0; i < records.size(); ++i) {
            RecordRead& r = records[i];
            if (!r.error) r.error = std::move(results[i].error);
            r.bytes = results[i].bytes;
            if (options.keep_values && !r.error) r.value = std::move(results[i].value);
        }
    }

    // The reduction `r` asks for (its own, else ReadOptions::reduce of a value read whole) into `result`.
    static void reduce_into(ValueResult& result, const TensorValue& v, const ValueRequest& r, const ReadOptions& options) noexcept {
        try {
            if (r.reduction)
                result.reduced = compute_reduction(v, *parse_reduction(r.reduction->name), r.reduction->abs);
            else if (options.reduce && !r.stored && reducible(v))
                result.reduced = compute_reduction(v, *options.reduce, options.abs);
        } catch (...) {
            result.error = std::current_exception();
        }
    }

    // ReadOptions::read_ahead after a read that succeeded: the tensors of its last step walk on.
    static void read_ahead_after(std::span<const Tensor> tensors, std::span<const ValueRequest> requests,
                                 std::span<const std::size_t> tensor_of, const std::vector<ValueResult>& out) {
        if (!tensors.front().trial_->records().read_ahead_enabled()) return;  // a local store: nothing to plan
        if (std::any_of(out.begin(), out.end(), [](const ValueResult& r) { return r.error != nullptr; })) return;
        std::int64_t step = requests.front().step;
        for (const auto& r : requests) {
            if (r.query.mode != requests.front().query.mode || r.reduction || r.stored) return;
            step = std::max(step, r.step);
        }
        std::vector<Tensor> walk;
        walk.reserve(tensors.size());
        const StepQuery* q = nullptr;
        for (std::size_t i = 0; i < requests.size(); ++i)
            if (requests[i].step == step) {
                walk.push_back(tensors[tensor_of[i]]);
                q = &requests[i].query;
            }
        if (tensors.front().trial_->records().note_batch_step(q->mode, step)) read_ahead_next_step(walk, step, *q);
    }

    // A walk over steps (a rule, a plot) reads step after step: the next saved steps of `tensors`
    // are read ahead while the caller works on this one (RecordReader::prefetch).
    static void read_ahead_next_step(std::span<const Tensor> tensors, std::int64_t step, const StepQuery& q) {
        const auto& trial = *tensors.front().trial_;
        auto& reader = tensors.front().trial_->records();
        // Steps read ahead in a mode ascend, so the ones after the last are not queued yet.
        std::int64_t next = std::max(step, reader.last_read_ahead(q.mode).value_or(step));
        for (std::size_t ahead = 0; ahead < detail::RecordReader<S>::max_read_ahead_steps; ++ahead) {
            if (q.mode == Mode::GLOBAL) {
                const auto after = trial.index().next_step(Mode::GLOBAL, next);
                if (!after) return;
                next = *after;
            } else {
                ++next;
            }
            std::vector<detail::ReadRequest> requests;
            requests.reserve(tensors.size());
            for (const auto& t : tensors) {
                try {
                    const auto* sd = t.lookup(next, q);
                    if (sd && sd->location && !reader.cached(*sd->location)) requests.push_back({&*sd->location, t.name(), next, q.mode});
                } catch (const SMDebugError&) {
                    // not there (or not for this worker): nothing to read ahead
                }
            }
            if (requests.empty() || !reader.prefetch(q.mode, next, requests)) return;
        }
    }
};

}  // namespace smdebug::detail
