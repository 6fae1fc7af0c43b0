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
#include <cstdint>
#include <functional>
#include <span>

#include <smdebug/core/config.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/query/read_request.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/storage/any_store.hpp>

namespace smdebug {

// See the top of this file. Records come in global-step order (mode steps without a known global
// step last), tensors by name within a step, workers in the order their index files were read.
// ReadOptions::use_cache and read_ahead are not used. Returns the number of records.
using RecordBatchVisitor = std::function<void(std::span<const RecordRead>)>;

// read_all_records with the callback type-erased (one call per batch): what it calls.
template <Store S>
std::size_t read_all_records_through(Trial<S>& trial, const RecordBatchVisitor& on_batch, const ReadOptions& options);

template <Store S, class F>
std::size_t read_all_records(Trial<S>& trial, F&& on_batch, const ReadOptions& options) {
    return read_all_records_through(trial, RecordBatchVisitor([&](std::span<const RecordRead> batch) { on_batch(batch); }), options);
}

template <Store S, class F>
std::size_t read_all_records(Trial<S>& trial, F&& on_batch, std::uint64_t batch_bytes = std::uint64_t{4} << 20) {
    return read_all_records(trial, std::forward<F>(on_batch), ReadOptions{.batch_bytes = batch_bytes});
}

}  // namespace smdebug

#if !SMDEBUG_HEADER_ONLY
namespace smdebug {
extern template std::size_t read_all_records_through(Trial<AnyStore>&, const RecordBatchVisitor&, const ReadOptions&);
}  // namespace smdebug
#else
#include <smdebug/query/impl/batch_reads.ipp>
#endif
