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
// A Trial puts together focused parts, each in its own header:
//  - detail/trial_settings.hpp     its options checked, defaults from the environment;
//  - detail/trial_collections.hpp  opening the trial and loading its collections files;
//  - detail/step_index.hpp         what the index files read so far say was saved, and where;
//  - detail/refresh_cursor.hpp     the last complete step, the wait window and the listing position;
//  - detail/record_reader.hpp      reading records, with the rules for files not yet written, and
//                                  the values kept once read (detail/value_cache.hpp);
//  - detail/waiting.hpp            waiting for a running job (backoff, change watch, deadline);
//  - refresh_scope.hpp             no_refresh / refresh scopes over one or many trials.
//
// Realtime reading (a job that is still writing):
//  - refresh_data() lists index files after a remembered position (the listing token) and reads
//    only files it has not read yet, so a refresh costs O(new files + files of the newest
//    still-incomplete steps), not O(steps already read);
//  - completeness, the window (D12), end-of-training and waiting follow docs/semantics.md §2, §5;
//  - data of a file the writer has not finished (short event file, record CRC not yet valid) is
//    StepNotYetAvailable while training runs, and a FormatError naming the file after it ended.
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
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/query/detail/manifest_loader.hpp>
#include <smdebug/query/step_listing.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/detail/record_reader.hpp>
#include <smdebug/query/detail/refresh_cursor.hpp>
#include <smdebug/query/refresh_scope.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/query/detail/trial_collections.hpp>
#include <smdebug/query/detail/trial_settings.hpp>
#include <smdebug/query/detail/waiting.hpp>
#include <smdebug/storage/detail/parallel.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

// Counters of the work refresh_data() did, for tests and benchmarks.
struct RefreshStats {
    std::uint64_t refreshes = 0;           // refresh_data() calls that listed the store
    std::uint64_t index_files_listed = 0;  // keys returned by those listings
    std::uint64_t index_files_read = 0;    // index files read and ingested
    // Second listings of refreshes whose first listing brought new index files, and the keys they
    // returned (counted here, not above): they confirm that the first missed nothing (D11).
    std::uint64_t confirming_listings = 0;
    std::uint64_t confirming_keys_listed = 0;
    // Manifests (compacted index) the trial opened from, and the index files they stood for
    // (ingested without being listed or read; not counted above).
    std::uint64_t manifests_read = 0;
    std::uint64_t index_files_from_manifests = 0;
};

template <Store S>
class Trial {
public:
    using store_type = S;

    explicit Trial(S store, TrialOptions options = {})
        : store_(std::move(store)),
          options_(std::move(options)),
          settings_(options_),
          cursor_(index_, settings_.incomplete_step_wait_window, settings_.range),
          waiter_(store_, options_.poll_interval),
          records_(store_, helpers_, index_.event_files(), settings_.missing_event_file_retry_limit, options_.poll_interval,
                   options_.event_file_cache_bytes, options_.cache, options_.read_ahead) {
        auto loaded = detail::load_trial_collections(store_, waiter_, options_);
        index_.set_num_workers(loaded.num_workers);
        for (const auto& w : loaded.workers) index_.add_worker(w);
        collections_ = std::move(loaded.collections);
        collection_order_ = std::move(loaded.file_order);
        if (options_.index_mode && options_.use_manifests) {
            manifests_ = detail::load_manifests(store_, listing_start(), settings_.range.begin, settings_.range.end, index_.workers(),
                                                index_.num_workers(), [this](const std::string& line) { warn(options_, line); });
            stats_.manifests_read = manifests_.manifests_read;
        }
        refresh_data();
    }

    Trial(const Trial&) = delete;
    Trial& operator=(const Trial&) = delete;
    Trial(Trial&&) = delete;

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
            for (const auto& p : q.regex) re.patterns.push_back(detail::compile_regex(p));
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
        static_assert(TensorSource<Trial, S>);
        if (!has_tensor(name)) throw TensorUnavailable(name);
        return Tensor<S>(*this, *index_.find_tensor(name));
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
            Trial& t;
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
    const RefreshStats& refresh_stats() const noexcept { return stats_; }

    // Reads the index files written since the last refresh (docs/semantics.md §2.3, D11, D12). The
    // new files are read together (in parallel where the store can) and parsed on a few threads
    // when there are many; they are ingested in listing order, as one by one.
    void refresh_data() {
        if (!options_.index_mode) return;
        ++stats_.refreshes;
        const auto listing_began = std::chrono::system_clock::now();
        const auto first = list_and_read(false);
        // A listing is not a snapshot: a file renamed into place while it ran can be missing from
        // it while a later one is there. When it brought new files, a second listing, begun after
        // it ended, reads what it missed; everything up to its newest key is then loaded. A job
        // whose end marker had settled before the listing began writes nothing any more: its
        // listing is a snapshot and confirms itself.
        if (first.brought_new_files && !ended_before(listing_began)) list_and_read(true);
        cursor_.confirm_through(first.newest_key);
        cursor_.finish_refresh();
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
        std::this_thread::sleep_for(end_settle_remaining());
        refresh_data();
        cursor_.mark_loaded_all_steps();
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
    // or the error value() would raise for it (TensorUnavailable for an unknown name). Every
    // batched read of the library (Tensor::values, values_at, read_records, read_all_records,
    // the rules' reads) is this one.
    std::vector<ValueResult> read(std::span<const ValueRequest> requests, const ReadOptions& options = {}) {
        std::vector<ValueResult> out(requests.size());
        std::vector<Tensor<S>> tensors;
        std::map<std::string_view, std::size_t> tensor_at;
        std::vector<std::size_t> tensor_of(requests.size(), Tensor<S>::no_tensor);
        std::size_t last = Tensor<S>::no_tensor;  // the tensor of the request before (a run of one tensor: no lookup)
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const auto& name = requests[i].tensor;
            if (last != Tensor<S>::no_tensor && tensors[last].name() == name) {
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
        Tensor<S>::read_resolved(tensors, requests, tensor_of, options, out);
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
            if (!t.of(*this)) throw UsageError("Trial::read: tensor " + t.name() + " is not a tensor of trial " + path());
        std::vector<ValueResult> out(requests.size());
        Tensor<S>::read_resolved(tensors, requests, tensor_of, options, out);
        return out;
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
    // D21: the end-of-training settle lasts what remains of D after the end marker's
    // last-modified time — all of D when the store cannot tell or the time lies ahead (clock
    // skew), nothing once D has passed.
    std::chrono::milliseconds end_settle_remaining() const {
        const auto delay = settings_.training_end_delay_refresh;
        const auto modified = last_modified(store_, paths::end_marker);
        if (!modified) return delay;
        const auto age = std::chrono::system_clock::now() - *modified;
        if (age < std::chrono::system_clock::duration::zero()) return delay;
        if (age >= delay) return std::chrono::milliseconds(0);
        return std::chrono::ceil<std::chrono::milliseconds>(delay - age);
    }

    // Whether the end marker existed, settled (D and at least a second old), at time `t`.
    bool ended_before(std::chrono::system_clock::time_point t) const {
        const auto modified = last_modified(store_, paths::end_marker);
        const auto settle = std::max<std::chrono::milliseconds>(settings_.training_end_delay_refresh, std::chrono::seconds(1));
        return modified && *modified + settle <= t;
    }

    // Where a first listing starts: with range_steps, at the range's first step (the keys before
    // it name steps the trial never loads).
    std::string listing_start() const {
        return settings_.range.begin && *settings_.range.begin > 0 ? paths::index_step_prefix(*settings_.range.begin) : std::string();
    }

    struct ListingOutcome {
        std::optional<std::string> newest_key;  // the newest index file listed
        bool brought_new_files = false;         // an index file not read before was listed
    };
    // One listing from the token, and the index files it lists that were not read yet.
    ListingOutcome list_and_read(bool confirming) {
        // Until the listing position is set, listings start after what the manifests stand for.
        const auto start = cursor_.token().value_or(manifests_.resume_after.empty() ? listing_start() : manifests_.resume_after);
        const auto keys = list_index_keys(store_, start, settings_.range.end);
        if (confirming) {
            ++stats_.confirming_listings;
            stats_.confirming_keys_listed += keys.size();
        } else {
            stats_.index_files_listed += keys.size();
        }
        ListingOutcome outcome;
        if (!manifests_.manifests.empty()) ingest_manifest_files(outcome);
        // Only index files count, for reading and for the listing position: a writer's
        // "*.json.tmp" sorts after its final name, so remembering it would skip that file.
        auto is_index_file = [](const std::string& key) {
            const auto name = paths::basename(key);
            return name.ends_with(".json") || name.ends_with(".csv");
        };
        // The files this refresh reads (up to the first invalid name, which throws below).
        std::vector<std::string> to_read;
        for (const auto& key : keys) {
            if (!is_index_file(key) || cursor_.was_read(key)) continue;
            const auto sf = paths::parse_step_file(key);
            if (!sf) break;
            if (settings_.range.contains(sf->step)) to_read.push_back(key);
        }
        // Bounds the memory of a first open; small enough that the buffers of one batch are
        // reused by the one after next (fresh pages cost a fault each). While a batch is ingested
        // (here, in key order), the next one is read and parsed on a helper thread.
        constexpr std::size_t files_per_batch = 128;
        auto batch_at = [&](std::size_t begin) {
            return std::span<const std::string>(to_read).subspan(begin, std::min(files_per_batch, to_read.size() - begin));
        };
        std::vector<ParsedIndexFile> parsed, parsed_ahead;
        std::size_t parsed_begin = 0, next = 0, ahead_begin = 0;
        std::optional<detail::BackgroundTask> ahead;  // reads batch_at(ahead_begin) into parsed_ahead (waited for first)
        for (const auto& key : keys) {
            if (!is_index_file(key)) continue;
            outcome.newest_key = key;  // keys come sorted
            if (!cursor_.note_listed(key)) continue;
            outcome.brought_new_files = true;
            const auto sf = paths::parse_step_file(key);
            if (!sf) throw IndexReaderException("Invalid File Found: " + smdebug::describe(store_, key));
            if (settings_.range.contains(sf->step)) {
                if (next >= to_read.size() || to_read[next] != key)
                    throw SMDebugRuntimeError("internal error: index listing changed during a refresh of " + path());
                if (next >= parsed_begin + parsed.size()) {
                    if (ahead && ahead_begin == next) {
                        ahead->wait();  // rethrows what reading the batch threw, where a read here would have
                        ahead.reset();
                        std::swap(parsed, parsed_ahead);
                    } else {
                        ahead.reset();
                        read_index_files(batch_at(next), parsed);
                    }
                    parsed_begin = next;
                    if (const std::size_t after = next + parsed.size(); after < to_read.size()) {
                        ahead_begin = after;
                        ahead.emplace(helpers_, [this, keys = batch_at(after), &parsed_ahead] { read_index_files(keys, parsed_ahead); });
                    }
                }
                const auto& file = parsed[next++ - parsed_begin];
                if (file.error) std::rethrow_exception(file.error);
                if (file.gone) continue;  // removed between listing and reading
                detail::IngestedStep ingested;
                try {
                    ingested = index_.ingest(sf->step, sf->worker, file.index);
                } catch (const InvalidIndexValue& e) {
                    throw InvalidIndexValue(smdebug::describe(store_, key) + ": " + e.what());
                }
                cursor_.note_ingested(sf->step, ingested);
                ++stats_.index_files_read;
            }
            cursor_.mark_read(key);
        }
        return outcome;
    }

    // The index files the manifests stand for, as if listed and read (before the keys listed
    // after them: key order, as one listing).
    void ingest_manifest_files(ListingOutcome& outcome) {
        std::vector<detail::StepIndex::ManifestNames> names;  // names resolved once per manifest
        names.reserve(manifests_.manifests.size());
        for (const auto& m : manifests_.manifests) names.emplace_back(m);
        {
            detail::StepIndex::RecordCounts counts;  // each tensor's records, to size its arrays once
            for (const auto& ref : manifests_.files) {
                const auto& f = manifests_.file(ref);
                if (!cursor_.was_read(f.key) && settings_.range.contains(paths::parse_step_file(f.key)->step))
                    index_.count_records(counts, names[ref.manifest], f);
            }
            index_.reserve_records(counts);
        }
        for (const auto& ref : manifests_.files) {
            const auto& f = manifests_.file(ref);
            outcome.newest_key = f.key;
            if (!cursor_.note_listed(f.key)) continue;
            outcome.brought_new_files = true;
            const auto sf = paths::parse_step_file(f.key);  // checked when the manifest was decoded
            if (settings_.range.contains(sf->step)) {
                detail::IngestedStep ingested;
                try {
                    ingested = index_.ingest(sf->step, sf->worker, names[ref.manifest], f);
                } catch (const InvalidIndexValue& e) {
                    throw InvalidIndexValue(smdebug::describe(store_, f.key) + ": " + e.what());
                }
                cursor_.note_ingested(sf->step, ingested);
                ++stats_.index_files_from_manifests;
            }
            cursor_.mark_read(f.key);
        }
        manifests_.files = {};
        manifests_.manifests = std::vector<manifest::CompactManifest>();
    }

    struct ParsedIndexFile {
        index_file::IndexFile index;
        bool gone = true;          // the file is gone (removed between listing and reading)
        std::exception_ptr error;  // it does not parse
    };
    // Reads and parses index files into `out` (in parallel when there are many), reusing the
    // memory of what `out` held (the previous batch): fresh memory costs a fault per page. On a
    // store that is not latency-bound (a local folder) each thread parses a file as soon as it
    // has read it, so the texts of a batch are never held at once.
    void read_index_files(std::span<const std::string> keys, std::vector<ParsedIndexFile>& out) const {
        out.resize(keys.size());
        for (auto& p : out) {
            p.error = nullptr;
            p.gone = true;
        }
        if (keys.empty()) return;
        const std::size_t n = keys.size();
        // Chunks of 16 files, taken by whichever thread is free: one that was busy elsewhere (the
        // caller ingesting the batch before this one) joins the rest when it is done.
        const std::size_t threads = n >= 64 ? std::min(detail::default_read_threads(), n) : 1;
        const std::size_t chunks = threads == 1 ? 1 : (n + 15) / 16;
        const index_file::Limits limits{options_.max_index_file_bytes, options_.max_tensor_name_bytes};
        auto parse = [&](std::size_t i, const ByteBuffer& text) {
            try {
                index_file::parse_into(text.text(), smdebug::describe(store_, keys[i]), limits, out[i].index);
                out[i].gone = false;
            } catch (...) {
                out[i].error = std::current_exception();
            }
        };
        if (!latency_bound(store_)) {
            detail::parallel_for(helpers_, chunks, threads, [&](std::size_t c) {
                for (std::size_t i = c * n / chunks; i < (c + 1) * n / chunks; ++i) {
                    std::optional<ByteBuffer> text;
                    try {
                        text.emplace(store_.read(keys[i]));
                    } catch (const ObjectNotFound&) {
                        continue;  // removed between listing and reading
                    }
                    parse(i, *text);
                }
            });
            return;
        }
        auto texts = read_objects(store_, keys);
        detail::parallel_for(helpers_, chunks, threads, [&](std::size_t c) {
            for (std::size_t i = c * n / chunks; i < (c + 1) * n / chunks; ++i)
                if (texts[i]) parse(i, *texts[i]);
        });
    }

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
        if (re.patterns.size() != c.include_regex.size()) {
            re.patterns.clear();
            for (const auto& p : c.include_regex) re.patterns.push_back(detail::compile_regex(p));
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
    mutable detail::HelperPool helpers_;
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
    RefreshStats stats_;
    std::int64_t reference_token_step_ = -1;  // reference_token_step()
    detail::LoadedManifests manifests_;  // its files are dropped once ingested
    std::map<std::string, Collection> collections_;
    std::vector<std::string> collection_order_;  // collection_names_in_file_order()
    std::map<std::string, detail::CompiledRegex> collection_regex_;
    std::map<std::string, std::unordered_map<std::string, bool>> collection_members_;
    bool dynamic_refresh_ = true;
};

}  // namespace smdebug
