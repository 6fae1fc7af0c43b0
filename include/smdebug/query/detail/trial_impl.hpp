#pragma once
// detail::TrialImpl<Store>: what a Trial<Store> (query/trial.hpp) is made of and does. Trial
// forwards to it (query/impl/trial.ipp), so that its public header declares and this one, with
// everything below it, is compiled once in separate mode (core/config.hpp). The documentation of
// each query is in query/trial.hpp.
//
// A TrialImpl puts together focused parts, each in its own header:
//  - detail/trial_settings.hpp     its options checked, defaults from the environment;
//  - detail/trial_collections.hpp  opening the trial and loading its collections files;
//  - detail/index_loader.hpp       what a refresh lists, reads and ingests (and the manifests);
//  - detail/step_index.hpp         what the index files read so far say was saved, and where;
//  - detail/refresh_cursor.hpp     the last complete step, the wait window and the listing position;
//  - detail/read_engine.hpp        read(): requests resolved to records, read in one batch, reduced;
//  - detail/record_reader.hpp      reading records, with the rules for files not yet written, and
//                                  the values kept once read (detail/value_cache.hpp);
//  - detail/waiting.hpp            waiting for a running job (backoff, change watch, deadline);
//  - refresh_scope.hpp             no_refresh / refresh scopes over one or many trials.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/regex.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/query/detail/index_loader.hpp>
#include <smdebug/query/step_listing.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/detail/record_reader.hpp>
#include <smdebug/query/detail/read_engine.hpp>
#include <smdebug/query/detail/refresh_cursor.hpp>
#include <smdebug/query/refresh_scope.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/query/detail/trial_collections.hpp>
#include <smdebug/query/detail/trial_settings.hpp>
#include <smdebug/query/detail/waiting.hpp>
#include <smdebug/storage/detail/parallel.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

template <Store S>
class TrialImpl {
public:
    using store_type = S;

    TrialImpl(Trial<S>& owner, S store, TrialOptions options)
        : owner_(owner),
          store_(std::move(store)),
          options_(std::move(options)),
          settings_(options_),
          cursor_(index_, settings_.incomplete_step_wait_window, settings_.range),
          waiter_(store_, options_.poll_interval),
          records_(store_, helpers_, index_.event_files(), settings_.missing_event_file_retry_limit, options_.poll_interval,
                   options_.event_file_cache_bytes, options_.cache, options_.read_ahead, settings_.max_expanded_elements),
          loader_(store_, helpers_, options_, settings_, index_, cursor_) {
        auto loaded = detail::load_trial_collections(store_, waiter_, options_);
        index_.set_num_workers(loaded.num_workers);
        for (const auto& w : loaded.workers) index_.add_worker(w);
        collections_ = std::move(loaded.collections);
        collection_order_ = std::move(loaded.file_order);
        if (options_.index_mode && options_.use_manifests) loader_.open_manifests();
        refresh_data();
    }

    TrialImpl(const TrialImpl&) = delete;
    TrialImpl& operator=(const TrialImpl&) = delete;

    const S& store() const noexcept { return store_; }
    const std::string& name() const noexcept { return settings_.name; }
    std::string path() const { return smdebug::describe(store_, ""); }
    const TrialOptions& options() const noexcept { return options_; }

    // ---- tensors -------------------------------------------------------------------------------

    std::vector<std::string> tensor_names(const TensorNamesQuery& q = {}) {
        maybe_refresh();
        std::vector<std::string> candidates;
        if (!q.step) {
            if (q.mode == Mode::GLOBAL) {
                for (const auto& [n, t] : index_.tensors()) candidates.push_back(n);
            } else {
                if (!index_.mode_seen(q.mode)) return {};  // D5
                const auto& set = index_.tensor_names_of_mode(q.mode);
                candidates.assign(set.begin(), set.end());
            }
        } else {
            std::optional<std::int64_t> g = q.step;
            if (q.mode != Mode::GLOBAL) {
                g = index_.lookup_global(q.mode, *q.step);
                if (!g) return {};  // D5
            }
            if (const auto* tensors = index_.tensors_of_step(*g)) {
                // Steps of a run usually hold the same tensors in the same order (a rule asks at
                // every step): the names sorted for the last list asked are used again for an equal one.
                auto& memo = step_names_memo_;
                if (!std::equal(tensors->begin(), tensors->end(), memo.tensors.begin(), memo.tensors.end())) {
                    memo.tensors.clear();
                    memo.names.clear();
                    for (const auto* t : *tensors) memo.names.push_back(t->name);
                    std::sort(memo.names.begin(), memo.names.end());
                    memo.names.erase(std::unique(memo.names.begin(), memo.names.end()), memo.names.end());
                    memo.tensors.assign(tensors->begin(), tensors->end());
                }
                candidates = memo.names;
            }
        }
        if (!q.regex.empty() && q.collection)
            throw SMDebugValueError("Only one of `regex` or `collection` can be passed to this method");
        if (!q.regex.empty()) {
            detail::CompiledRegex re;
            for (const auto& p : q.regex) re.add(p);
            std::erase_if(candidates, [&](const std::string& n) { return !re.search(n); });
        } else if (q.collection) {
            const auto* c = find_collection(*q.collection);
            if (!c) return {};  // D8: nothing is created
            std::erase_if(candidates, [&](const std::string& n) { return !index_.has_tensor(n) || !in_collection(*c, n); });
        }
        return candidates;  // already sorted: sets and maps iterate in order
    }

    bool has_tensor(const std::string& name) {
        if (!index_.has_tensor(name)) maybe_refresh();
        return index_.has_tensor(name);
    }

    Tensor<S> tensor(const std::string& name) {
        static_assert(TensorSource<Trial<S>, S>);
        if (!has_tensor(name)) throw TensorUnavailable(name);
        return Tensor<S>(owner_, *index_.find_tensor(name));
    }

    // ---- steps and modes -------------------------------------------------------------------------

    std::vector<std::int64_t> steps(Mode mode = Mode::GLOBAL, bool show_incomplete_steps = false) {
        maybe_refresh();
        return steps_no_refresh(mode, show_incomplete_steps);
    }

    // Modes with data, in the order they were first seen (never GLOBAL).
    std::vector<Mode> modes() const { return index_.modes(); }

    std::optional<std::pair<Mode, std::int64_t>> mode_modestep(std::int64_t global_step) {
        // The last step found is asked again for every tensor of a step (a rule, a batch read); a
        // loaded step never changes its mode or mode step, so the answer is kept.
        if (last_mode_step_ && last_mode_step_->first == global_step) return last_mode_step_->second;
        auto mm = index_.mode_modestep(global_step);
        if (!mm) {
            maybe_refresh();
            mm = index_.mode_modestep(global_step);
        }
        if (mm) last_mode_step_.emplace(global_step, *mm);
        return mm;
    }
    std::optional<Mode> mode(std::int64_t global_step) {
        auto mm = mode_modestep(global_step);
        return mm ? std::optional<Mode>(mm->first) : std::nullopt;
    }
    std::optional<std::int64_t> mode_step(std::int64_t global_step) {
        auto mm = mode_modestep(global_step);
        return mm ? std::optional<std::int64_t>(mm->second) : std::nullopt;
    }
    std::optional<std::int64_t> global_step(Mode mode, std::int64_t mode_step) {
        if (mode == Mode::GLOBAL) return mode_step;
        if (auto g = index_.lookup_global(mode, mode_step)) return g;
        maybe_refresh();
        return index_.lookup_global(mode, mode_step);
    }

    // docs/semantics.md §5 (D6 after the end): refreshes, then decides from the loaded steps with
    // binary searches (no list of all steps is built, so the cost does not grow with the trial).
    StepState has_passed_step(std::int64_t step, Mode mode = Mode::GLOBAL) {
        maybe_refresh();
        return cursor_.step_state(step, mode);
    }

    // Blocks until every step is available (docs/semantics.md §5), checking in the given order.
    // Throws StepUnavailable / NoMoreData as the reference does, and TimeoutError naming the step
    // and the trial once `timeout` (for the whole call) passes. Polls with backoff, from 50 ms up
    // to options().poll_interval, and wakes early when the writer publishes a file (local trials).
    // Automatic refresh is on while waiting; the previous setting is restored afterwards (D10).
    void wait_for_steps(const std::vector<std::int64_t>& required, Mode mode = Mode::GLOBAL,
                        std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
        struct Restore {
            TrialImpl& t;
            bool prev;
            ~Restore() { t.dynamic_refresh_ = prev; }
        } restore{*this, dynamic_refresh_};
        dynamic_refresh_ = true;
        const auto deadline = detail::deadline_after(timeout);
        for (std::int64_t step : required) {
            auto delay = waiter_.initial_delay();
            while (true) {
                const StepState s = has_passed_step(step, mode);
                if (s == StepState::AVAILABLE) break;
                if (s == StepState::UNAVAILABLE) {
                    if (!cursor_.loaded_all_steps()) throw StepUnavailable(step, mode);
                    const std::int64_t last = index_.last_step(mode).value_or(-1);
                    if (step < last) throw StepUnavailable(step, mode);
                    throw NoMoreData(step, mode, last);
                }
                // The change watch exists before the check that precedes each wait (a change
                // landing in between still wakes the wait); it is created on the first wait.
                if (!waiter_.prepared()) {
                    waiter_.prepare();
                    continue;
                }
                waiter_.wait_with_deadline(delay, deadline, [&] {
                    return "timed out waiting for step " + std::to_string(step) + " of mode " +
                           std::string(mode_name(mode)) + " in " + path();
                });
                delay = waiter_.next_delay(delay);
            }
        }
    }

    // Waits up to `timeout` for the writer to publish something under the trial (on local trials
    // through inotify; elsewhere, or without inotify, it just sleeps). True when woken by a
    // change. Does not refresh: callers refresh (any refreshing query) afterwards.
    bool wait_for_change(std::chrono::milliseconds timeout) { return waiter_.wait_for_change(timeout); }

    // ---- workers and collections -------------------------------------------------------------

    std::vector<std::string> workers() {
        maybe_refresh();
        return {index_.workers().begin(), index_.workers().end()};
    }
    int num_workers() const noexcept { return index_.num_workers(); }
    // The global steps each worker saved (complete or not), ascending, by worker; every worker of
    // workers() is listed, one without a step with none. From the index: no record is read.
    std::map<std::string, std::vector<std::int64_t>> worker_steps() {
        maybe_refresh();
        auto out = index_.steps_by_worker();
        for (const auto& w : index_.workers()) out[w];
        return out;
    }

    // Collections from the collections file, by name (queries never add any: D8).
    const std::map<std::string, Collection>& collections() const noexcept { return collections_; }
    // Their names in the order the collections file lists them (the order smdebug's dict has).
    const std::vector<std::string>& collection_names_in_file_order() const noexcept { return collection_order_; }
    const Collection& collection(const std::string& name) const {
        const auto* c = find_collection(name);
        if (!c) throw CollectionNotFound("collection " + name + " not found in " + path());
        return *c;
    }

    // ---- refresh state -------------------------------------------------------------------------

    std::int64_t last_complete_step() const noexcept { return cursor_.last_complete_step(); }
    // The listing position: index keys after it are listed on the next refresh. It is a key
    // prefix ("index/000000000/000000000003": every file of step 3 and later), or the last key
    // listed, or nothing before anything was loaded. It only moves forward. (The reference keeps
    // the lcs step's key; this one may stay lower, for D11.)
    const std::optional<std::string>& last_index_token() const noexcept { return cursor_.token(); }
    // The step of the index key smdebug reports as its last_index_token: lcs as of the last
    // refresh. The end of training makes every step complete (lcs jumps to the newest step) but
    // does not move smdebug's token (docs/semantics.md §2.6); -1 before any step was complete.
    std::int64_t reference_token_step() const noexcept { return reference_token_step_; }
    bool loaded_all_steps() const noexcept { return cursor_.loaded_all_steps(); }
    bool dynamic_refresh() const noexcept { return dynamic_refresh_; }
    void set_dynamic_refresh(bool on) noexcept { dynamic_refresh_ = on; }
    bool training_ended() const { return detail::training_ended(store_); }
    // The newest step any worker has written an index file for, searched in the store without
    // listing the whole index (query/step_listing.hpp: O(log steps) listings of one key; no refresh,
    // whatever range_steps says). nullopt when there is none.
    std::optional<std::int64_t> last_step() const { return find_last_step(store_); }
    std::int64_t incomplete_step_wait_window() const noexcept { return cursor_.wait_window(); }
    std::chrono::milliseconds training_end_delay_refresh() const noexcept { return settings_.training_end_delay_refresh; }
    const RefreshStats& refresh_stats() const noexcept { return loader_.stats(); }

    // Reads the index files written since the last refresh (docs/semantics.md §2.3, D11, D12;
    // detail/index_loader.hpp).
    void refresh_data() {
        if (!options_.index_mode) return;
        loader_.refresh();
        reference_token_step_ = cursor_.last_complete_step();
    }

    // One refresh as the queries do it (docs/semantics.md §2.6), including end-of-training handling:
    // once the end marker is seen, two refreshes D apart, then every loaded step is complete and
    // the trial never refreshes again.
    void maybe_refresh() {
        if (cursor_.loaded_all_steps() || !dynamic_refresh_) return;
        if (!training_ended()) {
            refresh_data();
            return;
        }
        refresh_data();
        std::this_thread::sleep_for(loader_.end_settle_remaining());
        refresh_data();
        cursor_.mark_loaded_all_steps();
        records_.note_training_ended();
    }

    // Several tensors at one step, read together (one pass over each event file): see
    // Tensor::values_at. Unknown names raise TensorUnavailable.
    std::map<std::string, TensorValue> values_at(std::int64_t step, std::span<const std::string> names, const StepQuery& q = {}) {
        std::vector<Tensor<S>> tensors;
        tensors.reserve(names.size());
        for (const auto& n : names) tensors.push_back(tensor(n));
        return Tensor<S>::values_at(tensors, step, q);
    }
    // Many values of many tensors, read together (one planned set of reads: one pass over each
    // event file, files in parallel, parallel ranged GETs on S3), reduced on the reading threads
    // and released as `options` says. Never throws for one request: each result holds the value
    // or the error value() would raise for it (TensorUnavailable for an unknown name), carried from
    // the batch (a record that does not decode is not read again to find its error; see
    // RecordReader::read_values). Every batched read of the library (Tensor::values, values_at,
    // read_records, read_all_records, the rules' reads) is one of these overloads.
    std::vector<ValueResult> read(std::span<const ValueRequest> requests, const ReadOptions& options = {}) {
        std::vector<ValueResult> out(requests.size());
        std::vector<Tensor<S>> tensors;
        std::map<std::string_view, std::size_t> tensor_at;
        std::vector<std::size_t> tensor_of(requests.size(), detail::ReadEngine<S>::no_tensor);
        std::size_t last = detail::ReadEngine<S>::no_tensor;  // the tensor of the request before (a run of one tensor: no lookup)
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const auto& name = requests[i].tensor;
            if (last != detail::ReadEngine<S>::no_tensor && tensors[last].name() == name) {
                tensor_of[i] = last;
                continue;
            }
            auto it = tensor_at.find(name);
            if (it == tensor_at.end()) {
                try {
                    tensors.push_back(tensor(name));
                } catch (...) {
                    out[i].error = std::current_exception();
                    continue;
                }
                it = tensor_at.emplace(name, tensors.size() - 1).first;
            }
            tensor_of[i] = last = it->second;
        }
        detail::ReadEngine<S>::read(tensors, requests, tensor_of, options, out);
        return out;
    }
    // read() with the tensors already found (Trial::tensor): request i is of tensors[tensor_of[i]]
    // and its `tensor` name is not used. For callers that read the same tensors step after step (a
    // rule's required tensors) and look each name up once, not once a step.
    std::vector<ValueResult> read(std::span<const Tensor<S>> tensors, std::span<const ValueRequest> requests,
                                  std::span<const std::size_t> tensor_of, const ReadOptions& options = {}) {
        if (tensor_of.size() != requests.size())
            throw UsageError("Trial::read: " + std::to_string(requests.size()) + " requests but " + std::to_string(tensor_of.size()) +
                             " tensor positions");
        for (const auto t : tensor_of)
            if (t >= tensors.size()) throw UsageError("Trial::read: a tensor position is past the " + std::to_string(tensors.size()) + " tensors");
        for (const auto& t : tensors)
            if (!t.of(owner_)) throw UsageError("Trial::read: tensor " + t.name() + " is not a tensor of trial " + path());
        std::vector<ValueResult> out(requests.size());
        detail::ReadEngine<S>::read(tensors, requests, tensor_of, options, out);
        return out;
    }
    // read() of records the caller found by walking this trial's index (read_all_records,
    // Tensor::read_records): records[i] names the record at located[i] — its tensor (a name
    // the index holds), mode, mode step, worker, and the stored reduction when it is one — and
    // receives what reading it gave, as the overloads above would give it, with no lookup by name,
    // step or worker. Always past the value cache, without read-ahead; ReadOptions::reduce
    // reduces the raw values.
    void read(std::span<RecordRead> records, std::span<const detail::Location* const> located, const ReadOptions& options = {}) {
        if (located.size() != records.size())
            throw UsageError("Trial::read: " + std::to_string(records.size()) + " records but " + std::to_string(located.size()) + " locations");
        for (const auto* l : located)
            if (!l) throw UsageError("Trial::read: a record's location is null");
        detail::ReadEngine<S>::read_located(records_, records, located, options);
    }
    // The values of each tensor at the given steps (#98: one planned read for all of them); the
    // first failing request, in order, raises what value() would raise for it.
    std::map<std::string, std::map<std::int64_t, TensorValue>> values(
        std::span<const std::pair<std::string, std::vector<std::int64_t>>> wanted, const StepQuery& q = {}) {
        std::vector<ValueRequest> requests;
        for (const auto& [name, steps] : wanted)
            for (auto s : steps) requests.push_back({name, s, q});
        const auto results = read(requests);
        std::map<std::string, std::map<std::int64_t, TensorValue>> out;
        for (std::size_t i = 0; i < requests.size(); ++i) out[requests[i].tensor].insert_or_assign(requests[i].step, results[i].get());
        return out;
    }

    // Every tensor saved at the step (the step's tensor_names).
    std::map<std::string, TensorValue> values_at(std::int64_t step, const StepQuery& q = {}) {
        TensorNamesQuery nq;
        nq.step = step;
        nq.mode = q.mode;
        const auto names = tensor_names(nq);
        return values_at(step, names, q);
    }

    // ---- the parts, read by Tensor (and by tools that look below the queries) -----------------

    // Whether a loaded global step is complete (every worker wrote it, or it is at or below the
    // last complete step, or training ended). No refresh.
    bool is_complete(std::int64_t global_step) const { return cursor_.is_complete(global_step); }
    // What the index files read so far say was saved. No refresh.
    const detail::StepIndex& index() const noexcept { return index_; }
    // Reads records, with the rules for files the writer has not finished, and keeps values
    // (TrialOptions::cache). Reading through it changes it (its caches, its read-ahead).
    const detail::RecordReader<S>& records() const noexcept { return records_; }
    detail::RecordReader<S>& records() noexcept { return records_; }

private:
    std::vector<std::int64_t> steps_no_refresh(Mode mode, bool show_incomplete) const {
        std::vector<std::int64_t> out;
        if (mode == Mode::GLOBAL) {
            out.reserve(index_.steps().size());
            for (const auto& [g, mm] : index_.steps())
                if (show_incomplete || is_complete(g)) out.push_back(g);
        } else {
            for (const auto& [ms, g] : index_.mode_steps(mode))
                if (show_incomplete || is_complete(g)) out.push_back(ms);
        }
        return out;
    }

    const Collection* find_collection(const std::string& name) const {
        auto it = collections_.find(name);
        return it == collections_.end() ? nullptr : &it->second;
    }
    const detail::CompiledRegex& collection_regex(const Collection& c) {
        auto& re = collection_regex_[c.name];
        if (re.size() != c.include_regex.size()) {
            re.clear();
            for (const auto& p : c.include_regex) re.add(p);
        }
        return re;
    }

    // Whether tensor `name` belongs to collection `c`, remembered: rules ask every step, and the
    // collections are loaded once (at construction), so the answer never changes.
    bool in_collection(const Collection& c, const std::string& name) {
        auto& members = collection_members_[c.name];
        if (auto it = members.find(name); it != members.end()) return it->second;
        const bool in = c.has_tensor_name(name) || collection_regex(c).search(name);
        members.emplace(name, in);
        return in;
    }

    // Index parsing and read-ahead threads, joined when the Trial goes (declared first: destroyed
    // after everything that may still wait on it).
    Trial<S>& owner_;  // the Trial this is the implementation of (its Tensors refer to it)
    detail::HelperPool helpers_;
    S store_;
    TrialOptions options_;
    detail::TrialSettings settings_;
    detail::StepIndex index_;
    std::optional<std::pair<std::int64_t, std::pair<Mode, std::int64_t>>> last_mode_step_;  // mode_modestep's
    struct StepNames {
        std::vector<const detail::TensorData*> tensors;  // a step's tensors, as the index lists them
        std::vector<std::string> names;                  // ... their names, sorted, no repeats
    } step_names_memo_;                                  // tensor_names
    detail::RefreshCursor cursor_;
    detail::Waiter<S> waiter_;
    detail::RecordReader<S> records_;
    detail::IndexLoader<S> loader_;
    std::int64_t reference_token_step_ = -1;  // reference_token_step()
    std::map<std::string, Collection> collections_;
    std::vector<std::string> collection_order_;  // collection_names_in_file_order()
    std::map<std::string, detail::CompiledRegex> collection_regex_;
    std::map<std::string, std::unordered_map<std::string, bool>> collection_members_;
    bool dynamic_refresh_ = true;
};

}  // namespace smdebug::detail
