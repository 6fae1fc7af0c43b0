#pragma once
// Tensor<Store>: one named tensor of a Trial (docs/semantics.md §6). A Tensor is a cheap handle that
// refers to its Trial; it must not outlive it. Declared here, defined in query/impl/tensor.ipp.
#include <concepts>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/config.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/detail/fwd.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/read_request.hpp>
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
    const std::string& name() const noexcept;
    const std::optional<std::string>& original_name() const noexcept;

    std::vector<std::int64_t> steps(Mode mode = Mode::GLOBAL, bool show_incomplete_steps = false) const;

    // The full value at a step (D2: every dtype decodes to its own type; D19: kept with a shape).
    TensorValue value(std::int64_t step, const StepQuery& q = {}) const;
    TensorValue value(std::int64_t step, Mode mode) const;

    // The dtype and shape of the value at a step, from its record without decoding the values (a
    // value broadcast from one element is not expanded): what a summary needs.
    struct ValueInfo {
        DType dtype = DType::float32;
        Shape shape;
    };
    ValueInfo info(std::int64_t step, const StepQuery& q = {}) const;

    // Every complete step's value, read together (Trial::read: parallel ranged GETs on S3); the
    // first failing step raises what value() would have raised for it.
    std::map<std::int64_t, TensorValue> values(const StepQuery& q = {}) const;

    // Several tensors of one trial at one step (what rules do): each value as value(step, q)
    // gives it, the records read together — one pass over each event file, files in parallel,
    // values left in the read buffers. The first failing tensor, in the given order, raises
    // what value() would raise for it. Trial::values_at() is the same by tensor names.
    static std::map<std::string, TensorValue> values_at(std::span<const Tensor> tensors, std::int64_t step,
                                                       const StepQuery& q = {});
    // The same values in the order of `tensors`, shared rather than copied (no map, no copy of
    // a shape per value). A walk over steps reads the next steps ahead (ReadOptions::read_ahead).
    static std::vector<std::shared_ptr<const TensorValue>> shared_values_at(std::span<const Tensor> tensors, std::int64_t step,
                                                                           const StepQuery& q = {});

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
        return read_records_through(
            [&](const RecordRead& r, const TensorValue* v, const std::exception_ptr& e) { f(r, v, e); }, batch);
    }
    using RecordVisitor = std::function<void(const RecordRead&, const TensorValue*, const std::exception_ptr&)>;
    std::size_t read_records_through(const RecordVisitor& f, std::size_t batch = 256) const;

    Shape shape(std::int64_t step, const StepQuery& q = {}) const;

    // Every shape of this tensor, by step (the reference documents shapes() but lacks it).
    std::map<std::int64_t, Shape> shapes(const StepQuery& q = {}) const;

    // A stored reduction when one exists for this step and worker, else computed from the value.
    double reduction_value(std::int64_t step, std::string_view reduction, const StepQuery& q = {}, bool abs = false) const;

    // The stored reductions of a step (nothing is computed).
    std::vector<ReductionResult> reduction_values(std::int64_t step, const StepQuery& q = {}) const;

    // The handle of `data`, a tensor of `trial` (Trial::tensor() makes them).
    Tensor(Trial<S>& trial, const detail::TensorData& data) : trial_(&trial), data_(&data) {}
    // Whether this is a tensor of `trial`.
    bool of(const Trial<S>& trial) const noexcept { return trial_ == &trial; }

    // Workers that saved this tensor at the step, in the order their index files were read.
    std::vector<std::string> workers(std::int64_t step, Mode mode = Mode::GLOBAL) const;

    // Complete steps up to and including `step`; the last `n` of them when n is given (D15: 0 → none).
    std::vector<std::int64_t> prev_steps(std::int64_t step, std::optional<std::size_t> n = std::nullopt,
                                         Mode mode = Mode::GLOBAL) const;

private:
    friend class Trial<S>;
    friend class detail::ReadEngine<S>;

    // The workers of a step; empty when the tensor has none there.
    detail::WorkerSteps find_workers(std::int64_t step, Mode mode) const;

    const detail::StepData* lookup(std::int64_t step, const StepQuery& q) const;

    // The reference's Tensor._step (docs/semantics.md §6.1).
    const detail::StepData& step_data(std::int64_t step, const StepQuery& q) const;

    // The value the trial keeps for this record (TrialOptions::cache), if any.
    std::shared_ptr<const TensorValue> cached_value(const detail::StepData& sd) const;

    // The value of a record: the cached one, or read (and kept when the trial caches values).
    std::shared_ptr<const TensorValue> full_value(const detail::StepData& sd, std::int64_t step, Mode mode) const;

    // A reduction request answered without the tensor's value: a stored reduction, or the error
    // reduction_value() raises (no value saved, an unknown reduction). False: compute it from the value.
    bool reduce_without_value(const detail::StepData& sd, const ValueRequest& request, ValueResult& out) const;

    double stored_reduction(const detail::Location& loc, std::int64_t step, Mode mode) const;

    Trial<S>* trial_;
    const detail::TensorData* data_;
};

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/query/impl/tensor.ipp>
#endif
