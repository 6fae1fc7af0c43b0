#pragma once
// Trial<Store>: the analysis view of one training job's saved data, with the exact query,
// refresh and completeness semantics of smdebug's Trial (docs/semantics.md §1–§6), and the deliberate
// differences of docs/deviations.md.
//
// Thread safety: a Trial (and every Tensor taken from it) is used by one thread at a time, since
// queries refresh it lazily and reads fill its caches. Give each thread its own Trial over the
// same store, or share one through SharedTrial (query/shared_trial.hpp), which serialises calls.
// docs/thread-safety.md. `const` says what changes: the const members of the Trial and of its
// parts (the index, the record reader) change nothing — no refresh, no cache, no read-ahead —
// and the index hands out only const data; whatever reads records (Tensor's queries, read(),
// records() of a non-const Trial) may change the reader's caches.
//
// This header declares; the Trial is made of detail::TrialImpl (query/detail/trial_impl.hpp and
// the parts it lists), defined in query/impl/trial.ipp: included here in header-only mode, compiled
// once by <smdebug/src.hpp> in separate mode (core/config.hpp).
//
// Realtime reading (a job that is still writing):
//  - refresh_data() lists index files after a remembered position (the listing token) and reads
//    only files it has not read yet, so a refresh costs O(new files + files of the newest
//    still-incomplete steps), not O(steps already read);
//  - completeness, the window (D12), end-of-training and waiting follow docs/semantics.md §2, §5;
//  - data of a file the writer has not finished (short event file, record CRC not yet valid) is
//    StepNotYetAvailable while training runs, and a FormatError naming the file after it ended.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/config.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/read_request.hpp>
#include <smdebug/query/refresh_stats.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

template <Store S>
class Trial {
public:
    using store_type = S;

    explicit Trial(S store, TrialOptions options = {});
    ~Trial();
    Trial(const Trial&) = delete;
    Trial& operator=(const Trial&) = delete;
    Trial(Trial&&) = delete;  // its Tensors refer to it

    const S& store() const noexcept;
    const std::string& name() const noexcept;
    std::string path() const;
    const TrialOptions& options() const noexcept;

    // ---- tensors -------------------------------------------------------------------------------

    // Names of the tensors the query matches, sorted (D5, D8).
    std::vector<std::string> tensor_names(const TensorNamesQuery& q = {});
    bool has_tensor(const std::string& name);
    // Raises TensorUnavailable for a name the trial does not hold.
    Tensor<S> tensor(const std::string& name);

    // ---- steps and modes -------------------------------------------------------------------------

    std::vector<std::int64_t> steps(Mode mode = Mode::GLOBAL, bool show_incomplete_steps = false);
    // Modes with data, in the order they were first seen (never GLOBAL).
    std::vector<Mode> modes() const;
    std::optional<std::pair<Mode, std::int64_t>> mode_modestep(std::int64_t global_step);
    std::optional<Mode> mode(std::int64_t global_step);
    std::optional<std::int64_t> mode_step(std::int64_t global_step);
    std::optional<std::int64_t> global_step(Mode mode, std::int64_t mode_step);
    // docs/semantics.md §5 (D6 after the end): refreshes, then decides from the loaded steps with
    // binary searches (no list of all steps is built, so the cost does not grow with the trial).
    StepState has_passed_step(std::int64_t step, Mode mode = Mode::GLOBAL);

    // Blocks until every step is available (docs/semantics.md §5), checking in the given order.
    // Throws StepUnavailable / NoMoreData as the reference does, and TimeoutError naming the step
    // and the trial once `timeout` (for the whole call) passes. Polls with backoff, from 50 ms up
    // to options().poll_interval, and wakes early when the writer publishes a file (local trials).
    // Automatic refresh is on while waiting; the previous setting is restored afterwards (D10).
    void wait_for_steps(const std::vector<std::int64_t>& required, Mode mode = Mode::GLOBAL,
                        std::optional<std::chrono::milliseconds> timeout = std::nullopt);
    // Waits up to `timeout` for the writer to publish something under the trial (on local trials
    // through inotify; elsewhere, or without inotify, it just sleeps). True when woken by a
    // change. Does not refresh: callers refresh (any refreshing query) afterwards.
    bool wait_for_change(std::chrono::milliseconds timeout);

    // ---- workers and collections -------------------------------------------------------------

    std::vector<std::string> workers();
    int num_workers() const noexcept;
    // The global steps each worker saved (complete or not), ascending, by worker; every worker of
    // workers() is listed, one without a step with none. From the index: no record is read.
    std::map<std::string, std::vector<std::int64_t>> worker_steps();
    // Collections from the collections file, by name (queries never add any: D8).
    const std::map<std::string, Collection>& collections() const noexcept;
    // Their names in the order the collections file lists them (the order smdebug's dict has).
    const std::vector<std::string>& collection_names_in_file_order() const noexcept;
    // Raises CollectionNotFound.
    const Collection& collection(const std::string& name) const;

    // ---- refresh state -------------------------------------------------------------------------

    std::int64_t last_complete_step() const noexcept;
    // The listing position: index keys after it are listed on the next refresh. It is a key
    // prefix ("index/000000000/000000000003": every file of step 3 and later), or the last key
    // listed, or nothing before anything was loaded. It only moves forward. (The reference keeps
    // the lcs step's key; this one may stay lower, for D11.)
    const std::optional<std::string>& last_index_token() const noexcept;
    // The step of the index key smdebug reports as its last_index_token: lcs as of the last
    // refresh. The end of training makes every step complete (lcs jumps to the newest step) but
    // does not move smdebug's token (docs/semantics.md §2.6); -1 before any step was complete.
    std::int64_t reference_token_step() const noexcept;
    bool loaded_all_steps() const noexcept;
    bool dynamic_refresh() const noexcept;
    void set_dynamic_refresh(bool on) noexcept;
    bool training_ended() const;
    // The newest step any worker has written an index file for, searched in the store without
    // listing the whole index (query/step_listing.hpp: O(log steps) listings of one key; no refresh,
    // whatever range_steps says). nullopt when there is none.
    std::optional<std::int64_t> last_step() const;
    std::int64_t incomplete_step_wait_window() const noexcept;
    std::chrono::milliseconds training_end_delay_refresh() const noexcept;
    const RefreshStats& refresh_stats() const noexcept;

    // Reads the index files written since the last refresh (docs/semantics.md §2.3, D11, D12;
    // detail/index_loader.hpp).
    void refresh_data();
    // One refresh as the queries do it (docs/semantics.md §2.6), including end-of-training handling:
    // once the end marker is seen, two refreshes D apart, then every loaded step is complete and
    // the trial never refreshes again.
    void maybe_refresh();

    // ---- reading values ------------------------------------------------------------------------

    // Several tensors at one step, read together (one pass over each event file): see
    // Tensor::values_at. Unknown names raise TensorUnavailable.
    std::map<std::string, TensorValue> values_at(std::int64_t step, std::span<const std::string> names, const StepQuery& q = {});
    // Every tensor saved at the step (the step's tensor_names).
    std::map<std::string, TensorValue> values_at(std::int64_t step, const StepQuery& q = {});
    // Many values of many tensors, read together (one planned set of reads: one pass over each
    // event file, files in parallel, parallel ranged GETs on S3), reduced on the reading threads
    // and released as `options` says. Never throws for one request: each result holds the value
    // or the error value() would raise for it (TensorUnavailable for an unknown name), carried from
    // the batch (a record that does not decode is not read again to find its error; see
    // RecordReader::read_values). Every batched read of the library (Tensor::values, values_at,
    // read_records, read_all_records, the rules' reads) is one of these overloads.
    std::vector<ValueResult> read(std::span<const ValueRequest> requests, const ReadOptions& options = {});
    // read() with the tensors already found (Trial::tensor): request i is of tensors[tensor_of[i]]
    // and its `tensor` name is not used. For callers that read the same tensors step after step (a
    // rule's required tensors) and look each name up once, not once a step.
    std::vector<ValueResult> read(std::span<const Tensor<S>> tensors, std::span<const ValueRequest> requests,
                                  std::span<const std::size_t> tensor_of, const ReadOptions& options = {});
    // read() of records the caller found by walking this trial's index (read_all_records,
    // Tensor::read_records): records[i] names the record at located[i] — its tensor (a name
    // the index holds), mode, mode step, worker, and the stored reduction when it is one — and
    // receives what reading it gave, as the overloads above would give it, with no lookup by name,
    // step or worker. Always past the value cache, without read-ahead; ReadOptions::reduce
    // reduces the raw values.
    void read(std::span<RecordRead> records, std::span<const detail::Location* const> located, const ReadOptions& options = {});
    // The values of each tensor at the given steps (one planned read for all of them); the
    // first failing request, in order, raises what value() would raise for it.
    std::map<std::string, std::map<std::int64_t, TensorValue>> values(
        std::span<const std::pair<std::string, std::vector<std::int64_t>>> wanted, const StepQuery& q = {});

    // ---- the parts, read by Tensor (and by tools that look below the queries) -----------------
    // Their types are complete where query/detail/step_index.hpp and record_reader.hpp are included.

    // Whether a loaded global step is complete (every worker wrote it, or it is at or below the
    // last complete step, or training ended). No refresh.
    bool is_complete(std::int64_t global_step) const;
    // What the index files read so far say was saved. No refresh.
    const detail::StepIndex& index() const noexcept;
    // The index's record of a tensor, or nullptr (index().find_tensor(name) without needing the
    // index's type: what Tensor is made from). No refresh.
    const detail::TensorData* find_tensor_data(const std::string& name) const;
    // Reads records, with the rules for files the writer has not finished, and keeps values
    // (TrialOptions::cache). Reading through it changes it (its caches, its read-ahead).
    const detail::RecordReader<S>& records() const noexcept;
    detail::RecordReader<S>& records() noexcept;

private:
    std::unique_ptr<detail::TrialImpl<S>> impl_;
};

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/query/impl/trial.ipp>
#endif
