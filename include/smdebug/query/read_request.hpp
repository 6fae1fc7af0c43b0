#pragma once
// What a batched read (Trial::read, query/trial.hpp; read_all_records, query/batch_reads.hpp) is
// asked and gives back, and how it reads: ValueRequest (with ReductionSpec) -> ValueResult, or
// RecordRead for a record found by walking the index; ReadOptions.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/reduction_kind.hpp>

#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/options.hpp>

namespace smdebug {

// A reduction asked of a batched read instead of the value: what reduction_value(step, name, q, abs) gives.
struct ReductionSpec {
    std::string name;  // min, max, mean, prod, std, variance, sum, l1, l2, ...
    bool abs = false;
};

// One value of a batched read (Trial::read): a tensor, a step and the query value() would take;
// with `reduction`, that reduction of it instead (the stored one where the Hook saved it); with
// `stored`, the record of that stored reduction itself, as a value (what `smdebug verify` reads).
struct ValueRequest {
    std::string tensor;
    std::int64_t step = 0;
    StepQuery query = {};
    std::optional<ReductionSpec> reduction = std::nullopt;
    std::optional<ReductionSpec> stored = std::nullopt;
};
// What reading it gave: the value (or, for a reduction, `reduced`), or the error value() or
// reduction_value() would have raised for it.
struct ValueResult {
    std::shared_ptr<const TensorValue> value;  // null after an error, for a reduction, and without ReadOptions::keep_values
    std::exception_ptr error;
    std::optional<double> reduced;  // a request's reduction, or ReadOptions::reduce of the value
    std::uint64_t bytes = 0;        // the value's byte_size() (also when it is not kept)
    // The value, or the error rethrown.
    const TensorValue& get() const {
        if (error) std::rethrow_exception(error);
        return *value;
    }
};

// How Trial::read reads.
struct ReadOptions {
    // Every value read is also reduced into ValueResult::reduced — by the thread that decoded it,
    // while its bytes are in cache — when it is numeric, non-empty and not complex (reducible());
    // not a request's `stored` record, nor a request with its own `reduction`.
    std::optional<Reduction> reduce = std::nullopt;
    bool abs = false;  // ... of its absolute values
    // false: results hold no value, only `bytes`, `reduced` and `error` (each value released by the
    // thread that read it); with nothing to reduce no value is built at all: each record is checked
    // as decoding checks it (event::describe), so a broadcast value is not expanded.
    bool keep_values = true;
    // false: every record is read from the store — none is served from the trial's value cache
    // (TrialOptions::cache), none is added to it.
    bool use_cache = true;
    // A walk over steps (a rule, a plot): after a read of the tensors of one step that read
    // records and failed nowhere, the next steps of the same tensors are read ahead on helper
    // threads while the caller works on this one (RecordReader::prefetch).
    bool read_ahead = false;

    // read_all_records only (which always reads past the value cache, without read-ahead):
    // about this many bytes of records are read per batch;
    std::uint64_t batch_bytes = std::uint64_t{4} << 20;
    // when set, only the records it accepts are read and handed to on_batch. It is called before
    // any read, with each record's tensor, mode, mode step, global step (when known) and worker.
    std::function<bool(std::string_view tensor, Mode mode, std::int64_t mode_step, std::optional<std::int64_t> global_step,
                       std::string_view worker)>
        select = nullptr;
};
// Deprecated: read_all_records takes ReadOptions (the two restated each other).
using ReadAllOptions = ReadOptions;

// One saved record of a trial — which one — and what reading it gave (Trial::read's result), as
// read_all_records and Tensor::read_records hand it out.
struct RecordRead : ValueResult {
    std::string_view tensor;
    Mode mode = Mode::GLOBAL;
    std::int64_t mode_step = 0;
    std::string_view worker;
    std::string_view reduction;  // empty: the raw value; else a stored reduction
    bool abs = false;
    bool payload_checksum = false;  // its index entry holds the payload's CRC-32C, which the read checked
};

}  // namespace smdebug
