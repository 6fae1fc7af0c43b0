#pragma once
// Trial<Store>: the analysis view of one training job's saved data, with the exact query,
// refresh and completeness semantics of smdebug's Trial (SEMANTICS.md §2–§6), and the deliberate
// differences of DEVIATIONS.md.
//
// Thread safety: a Trial (and every Tensor taken from it) is used by one thread at a time, since
// queries refresh it lazily. Give each thread its own Trial over the same store, or share one
// through SharedTrial (query/shared_trial.hpp), which serialises calls. docs/thread-safety.md.
//
// Realtime reading (a job that is still writing):
//  - refresh_data() lists index files after a remembered position (the listing token) and reads
//    only files it has not read yet, so a refresh costs O(new files + files of the newest
//    still-incomplete steps), not O(steps already read);
//  - the token sits just before the oldest step that may still receive files: the step after the
//    last complete step, or an older step among the newest W (the incomplete-step window) that
//    not every worker has written yet, so slow workers' late index files are still loaded (D11);
//  - completeness, the window (D12), end-of-training and waiting follow SEMANTICS.md §4–§6.8;
//  - waiting (wait_for_steps, waiting for a trial to appear) polls with backoff and wakes early on
//    local file changes (storage/change_watch.hpp); a caller-supplied timeout gives TimeoutError;
//  - data of a file the writer has not finished (short event file, record CRC not yet valid) is
//    StepNotYetAvailable while training runs, and a FormatError naming the file after it ended.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <iterator>
#include <ranges>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/regex.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/collections_file.hpp>
#include <smdebug/format/event.hpp>
#include <smdebug/format/index_file.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/tfrecord.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/storage/change_watch.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

template <Store S> class Tensor;

namespace detail {

// Where one saved record lives.
struct Location {
    std::uint32_t event_file = 0;  // interned key of the event file, relative to the trial root
    std::uint64_t start = 0;
    std::uint64_t length = 0;
};

// What one worker saved for one tensor at one (mode, mode step).
struct StepData {
    std::optional<Location> location;
    std::optional<Shape> shape;
    std::vector<std::pair<std::pair<std::string, bool>, Location>> reductions;  // (name, abs) -> location
    std::shared_ptr<const TensorValue> cached;

    const Location* reduction(std::string_view name, bool abs) const {
        for (const auto& [key, loc] : reductions)
            if (key.first == name && key.second == abs) return &loc;
        return nullptr;
    }
};

// Workers of one step in insertion order (as the reference's dict).
using WorkerSteps = std::vector<std::pair<std::string, StepData>>;

struct TensorData {
    std::string name;
    std::optional<std::string> original_name;
    std::array<std::map<std::int64_t, WorkerSteps>, 4> steps;  // per mode: mode step -> workers

    StepData& at(Mode m, std::int64_t mode_step, const std::string& worker) {
        auto& ws = steps[mode_index(m)][mode_step];
        for (auto& [w, d] : ws)
            if (w == worker) return d;
        return ws.emplace_back(worker, StepData{}).second;
    }
};

}  // namespace detail

// Counters of the work refresh_data() did, for tests and benchmarks.
struct RefreshStats {
    std::uint64_t refreshes = 0;           // refresh_data() calls that listed the store
    std::uint64_t index_files_listed = 0;  // keys returned by those listings
    std::uint64_t index_files_read = 0;    // index files read and ingested
};

template <Store S>
class Trial {
public:
    using store_type = S;

    explicit Trial(S store, TrialOptions options = {}) : store_(std::move(store)), options_(std::move(options)) {
        if (options_.range_begin && *options_.range_begin < 0) throw SMDebugValueError("range_steps begin must be a non-negative integer");
        if (options_.range_end && *options_.range_end < 0) throw SMDebugValueError("range_steps end must be a non-negative integer");
        if (options_.range_begin && options_.range_end && *options_.range_end <= *options_.range_begin)
            throw SMDebugValueError("range_steps should be of the form (begin, end) where begin is less than end");
        window_ = options_.incomplete_step_wait_window.value_or(
            env_integer("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "INCOMPLETE_STEP_WAIT_WINDOW").value_or(1000));
        end_delay_ = options_.training_end_delay_refresh.value_or(std::chrono::milliseconds(
            1000 * env_integer("SMDEBUG_TRAINING_END_DELAY_REFRESH", "TRAINING_END_DELAY_REFRESH").value_or(1)));
        missing_event_retry_limit_ = options_.missing_event_file_retry_limit.value_or(
            static_cast<int>(env_integer("SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT", nullptr).value_or(100)));
        name_ = options_.name.value_or(std::string());
        lookback_begin_ = global_to_mode_.end();
        local_root_ = local_root_of(store_);
        load_collections();
        refresh_data();
    }

    Trial(const Trial&) = delete;
    Trial& operator=(const Trial&) = delete;
    Trial(Trial&&) = delete;

    const S& store() const noexcept { return store_; }
    const std::string& name() const noexcept { return name_; }
    std::string path() const { return store_.describe(""); }
    const TrialOptions& options() const noexcept { return options_; }

    // ---- tensors -------------------------------------------------------------------------------

    std::vector<std::string> tensor_names(const TensorNamesQuery& q = {}) {
        maybe_refresh();
        std::vector<std::string> candidates;
        if (!q.step) {
            if (q.mode == Mode::GLOBAL) {
                for (const auto& [n, t] : tensors_) candidates.push_back(n);
            } else {
                if (!mode_seen(q.mode)) return {};  // D5
                const auto& set = mode_to_tensors_[mode_index(q.mode)];
                candidates.assign(set.begin(), set.end());
            }
        } else {
            std::optional<std::int64_t> g = q.step;
            if (q.mode != Mode::GLOBAL) {
                const auto& m = mode_to_global_[mode_index(q.mode)];
                auto it = m.find(*q.step);
                if (it == m.end()) return {};  // D5
                g = it->second;
            }
            if (auto it = step_to_tensors_.find(*g); it != step_to_tensors_.end()) {
                for (const auto* t : it->second) candidates.push_back(t->name);
                std::sort(candidates.begin(), candidates.end());
                candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
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
            const auto& re = collection_regex(*c);
            std::erase_if(candidates, [&](const std::string& n) {
                return !tensors_.contains(n) || !(c->has_tensor_name(n) || re.search(n));
            });
        }
        return candidates;  // already sorted: sets and maps iterate in order
    }

    bool has_tensor(const std::string& name) {
        if (!tensors_.contains(name)) maybe_refresh();
        return tensors_.contains(name);
    }

    Tensor<S> tensor(const std::string& name) {
        if (!has_tensor(name)) throw TensorUnavailable(name);
        return Tensor<S>(*this, *tensors_.find(name)->second);
    }

    // ---- steps and modes -------------------------------------------------------------------------

    std::vector<std::int64_t> steps(Mode mode = Mode::GLOBAL, bool show_incomplete_steps = false) {
        maybe_refresh();
        return steps_no_refresh(mode, show_incomplete_steps);
    }

    // Modes with data, in the order they were first seen (never GLOBAL).
    std::vector<Mode> modes() const { return modes_seen_; }

    std::optional<std::pair<Mode, std::int64_t>> mode_modestep(std::int64_t global_step) {
        auto it = global_to_mode_.find(global_step);
        if (it == global_to_mode_.end()) {
            maybe_refresh();
            it = global_to_mode_.find(global_step);
            if (it == global_to_mode_.end()) return std::nullopt;
        }
        return it->second;
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
        if (auto g = lookup_global(mode, mode_step)) return g;
        maybe_refresh();
        return lookup_global(mode, mode_step);
    }

    // SEMANTICS.md §6.5 (D6 after the end): refreshes, then decides from the loaded steps with
    // binary searches (no list of all steps is built, so the cost does not grow with the trial).
    StepState has_passed_step(std::int64_t step, Mode mode = Mode::GLOBAL) {
        maybe_refresh();
        return step_state(step, mode);
    }

    // Blocks until every step is available (SEMANTICS.md §6.8), checking in the given order.
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
        const auto deadline = deadline_after(timeout);
        for (std::int64_t step : required) {
            auto delay = initial_poll_delay();
            while (true) {
                const StepState s = has_passed_step(step, mode);
                if (s == StepState::AVAILABLE) break;
                if (s == StepState::UNAVAILABLE) {
                    if (!loaded_all_steps_) throw StepUnavailable(step, mode);
                    const std::int64_t last = last_step_no_refresh(mode).value_or(-1);
                    if (step < last) throw StepUnavailable(step, mode);
                    throw NoMoreData(step, mode, last);
                }
                // The change watch exists before the check that precedes each wait (a change
                // landing in between still wakes the wait); it is created on the first wait.
                if (!watch_prepared()) {
                    prepare_store_watch(store_, watch_);
                    continue;
                }
                wait_with_deadline(delay, deadline, [&] {
                    return "timed out waiting for step " + std::to_string(step) + " of mode " +
                           std::string(mode_name(mode)) + " in " + path();
                });
                delay = std::min(delay * 2, options_.poll_interval);
            }
        }
    }

    // Waits up to `timeout` for the writer to publish something under the trial (on local trials
    // through inotify; elsewhere, or without inotify, it just sleeps). True when woken by a
    // change. Does not refresh: callers refresh (any refreshing query) afterwards.
    bool wait_for_change(std::chrono::milliseconds timeout) { return wait_for_store_change(store_, watch_, timeout); }

    // ---- workers and collections -------------------------------------------------------------

    std::vector<std::string> workers() {
        maybe_refresh();
        return {worker_set_.begin(), worker_set_.end()};
    }
    int num_workers() const noexcept { return num_workers_; }

    // Collections from the collections file, by name (queries never add any: D8).
    const std::map<std::string, Collection>& collections() const noexcept { return collections_; }
    const Collection& collection(const std::string& name) const {
        const auto* c = find_collection(name);
        if (!c) throw CollectionNotFound("collection " + name + " not found in " + path());
        return *c;
    }

    // ---- refresh state -------------------------------------------------------------------------

    std::int64_t last_complete_step() const noexcept { return lcs_; }
    // The listing position: index keys after it are listed on the next refresh. It is a key
    // prefix ("index/000000000/000000000003": every file of step 3 and later), or the last key
    // listed, or nothing before anything was loaded. It only moves forward. (The reference keeps
    // the lcs step's key; this one may stay lower, for D11.)
    const std::optional<std::string>& last_index_token() const noexcept { return token_; }
    bool loaded_all_steps() const noexcept { return loaded_all_steps_; }
    bool dynamic_refresh() const noexcept { return dynamic_refresh_; }
    void set_dynamic_refresh(bool on) noexcept { dynamic_refresh_ = on; }
    bool training_ended() const { return store_.exists(paths::end_marker); }
    std::int64_t incomplete_step_wait_window() const noexcept { return window_; }
    std::chrono::milliseconds training_end_delay_refresh() const noexcept { return end_delay_; }
    const RefreshStats& refresh_stats() const noexcept { return stats_; }

    // Reads the index files written since the last refresh (SEMANTICS.md §4.1, D11, D12).
    void refresh_data() {
        if (!options_.index_mode) return;
        const auto keys = list_index(token_.value_or(std::string()));
        ++stats_.refreshes;
        stats_.index_files_listed += keys.size();
        for (const auto& key : keys) {
            const auto name = paths::basename(key);
            // Only index files count, for reading and for the listing position: a writer's
            // "*.json.tmp" sorts after its final name, so remembering it would skip that file.
            if (!(name.ends_with(".json") || name.ends_with(".csv"))) continue;
            if (!last_listed_ || key > *last_listed_) last_listed_ = key;
            if (read_keys_.contains(key)) continue;
            const auto sf = paths::parse_step_file(key);
            if (!sf) throw IndexReaderException("Invalid File Found: " + store_.describe(key));
            if (in_range(sf->step)) {
                ByteBuffer text;
                try {
                    text = store_.read(key);
                } catch (const ObjectNotFound&) {
                    continue;  // removed between listing and reading
                }
                ingest(sf->step, sf->worker, index_file::parse(text.text(), store_.describe(key)));
                ++stats_.index_files_read;
            }
            read_keys_.insert(key);
        }
        apply_wait_window();
        update_token();
    }

    // One refresh as the queries do it (SEMANTICS.md §4.4), including end-of-training handling:
    // once the end marker is seen, two refreshes D apart, then every loaded step is complete and
    // the trial never refreshes again.
    void maybe_refresh() {
        if (loaded_all_steps_ || !dynamic_refresh_) return;
        if (!training_ended()) {
            refresh_data();
            return;
        }
        refresh_data();
        std::this_thread::sleep_for(end_delay_);
        refresh_data();
        loaded_all_steps_ = true;
        if (!global_to_mode_.empty()) set_lcs(std::max(lcs_, global_to_mode_.rbegin()->first));
    }

private:
    friend class Tensor<S>;

    // The index keys after `start_after`.
    std::vector<std::string> list_index(const std::string& start_after) const {
        return store_.list(paths::index_prefix, start_after);
    }

    // ---- waiting ---------------------------------------------------------------------------------

    // Whether waits can rely on the change watch having seen every change since the last check:
    // a watch exists, or the store has its own hook, or there is nothing to watch (plain sleep).
    bool watch_prepared() const {
        if constexpr (ChangeNotifyingStore<S>) return true;
        else return watch_ != nullptr || !local_root_;
    }

    std::chrono::milliseconds initial_poll_delay() const {
        return std::max(std::chrono::milliseconds(1), std::min(std::chrono::milliseconds(50), options_.poll_interval));
    }

    // No timeout: time_point::max().
    static std::chrono::steady_clock::time_point deadline_after(std::optional<std::chrono::milliseconds> timeout) {
        return timeout ? std::chrono::steady_clock::now() + *timeout : std::chrono::steady_clock::time_point::max();
    }

    // Waits for a change for at most `delay` (cut to the deadline); TimeoutError once it passed.
    template <class Message>
    void wait_with_deadline(std::chrono::milliseconds delay, std::chrono::steady_clock::time_point deadline,
                            Message&& message) {
        if (deadline != std::chrono::steady_clock::time_point::max()) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= deadline) throw TimeoutError(message());
            delay = std::min(delay, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                                        std::chrono::milliseconds(1));
        }
        wait_for_change(delay);
    }

    // ---- construction ----------------------------------------------------------------------------

    // Whether anything exists at the trial path (D16). Local: the folder exists. Elsewhere: a
    // collections file, the end marker, or any key under the root.
    bool root_exists() const {
        if constexpr (requires { { store_.root_exists() } -> std::convertible_to<bool>; }) {
            return store_.root_exists();
        } else {
            if (const auto root = local_root_of(store_)) {
                std::error_code ec;
                return std::filesystem::is_directory(*root, ec);
            }
            return !store_.list(paths::collections_prefix, "").empty() || store_.exists(paths::end_marker) ||
                   !store_.list("", "").empty();
        }
    }

    void load_collections() {
        const auto deadline = deadline_after(options_.wait_timeout);
        if (!options_.wait_for_trial && !root_exists())
            throw ObjectNotFound("trial not found: " + path() + " does not exist (pass wait_for_trial to wait for a job that has not started writing)");
        auto list = [&] {
            std::vector<std::string> files;
            for (auto& k : store_.list(paths::collections_prefix, ""))
                if (paths::parse_collections_file(k)) files.push_back(std::move(k));
            return files;
        };
        auto files = list();
        std::size_t needed = 1;
        auto delay = initial_poll_delay();
        while (true) {
            if (files.size() >= needed) {
                if (needed == 1) {
                    const auto& first = files.front();
                    auto parsed = collections_file::parse(store_.read(first).text(), store_.describe(first));
                    num_workers_ = parsed.num_workers;
                    for (auto& c : parsed.collections) collections_.emplace(c.name, std::move(c));
                    needed = static_cast<std::size_t>(std::max(num_workers_, 1));
                    if (files.size() >= needed) break;
                    continue;
                }
                break;
            }
            if (training_ended() && (files = list()).size() < needed) throw MissingCollectionFiles(
                "Training job has ended. All the collection files could not be loaded (" + path() + ")");
            if (files.size() >= needed) continue;
            if (!watch_prepared()) {  // see wait_for_steps
                prepare_store_watch(store_, watch_);
                files = list();
                continue;
            }
            wait_with_deadline(delay, deadline, [&] {
                return "timed out waiting for the collection files of " + path() + " (" +
                       std::to_string(files.size()) + " of " + std::to_string(needed) + " present)";
            });
            delay = std::min(delay * 2, options_.poll_interval);
            files = list();
        }
        for (const auto& f : files) worker_set_.insert(*paths::parse_collections_file(f));
    }

    // ---- ingestion -----------------------------------------------------------------------------

    bool in_range(std::int64_t g) const {
        return (!options_.range_begin || g >= *options_.range_begin) && (!options_.range_end || g < *options_.range_end);
    }

    void ingest(std::int64_t g, const std::string& worker, const index_file::IndexFile& f) {
        const Mode m = f.mode;
        const std::int64_t ms = f.mode_step;
        if (ms < 0) throw SMDebugValueError("mode step number " + std::to_string(ms) + " can not be less than 0");
        if (f.tensors.empty() && f.shapes.empty()) return;  // registers nothing, as the reference
        auto& tensors_of_step = step_to_tensors_[g];
        auto* mode_names = m != Mode::GLOBAL ? &mode_to_tensors_[mode_index(m)] : nullptr;
        auto note_tensor = [&](const detail::TensorData& t) {
            if (mode_names && !mode_names->contains(t.name)) mode_names->insert(t.name);
            if (tensors_of_step.empty() || tensors_of_step.back() != &t) tensors_of_step.push_back(&t);
        };
        const std::uint32_t event_file = f.tensors.empty() ? 0 : intern_event_file(*f.event_file_name);
        for (const auto& e : f.tensors) {
            detail::Location loc{event_file, e.start, e.length};
            if (auto red = split_reduction(e.name)) {
                auto& t = tensor_data(red->base);
                auto& sd = t.at(m, ms, worker);
                bool replaced = false;
                for (auto& [key, l] : sd.reductions)
                    if (key.first == red->reduction && key.second == red->abs) { l = loc; replaced = true; }
                if (!replaced) sd.reductions.push_back({{red->reduction, red->abs}, loc});
                note_tensor(t);
            } else {
                auto& t = tensor_data(e.name);
                t.at(m, ms, worker).location = loc;
                note_tensor(t);
            }
        }
        for (const auto& e : f.shapes) {
            auto& t = tensor_data(e.name);
            Shape shape(e.shape.begin(), e.shape.end());
            t.at(m, ms, worker).shape = std::move(shape);
            t.original_name = e.original_name;
            note_tensor(t);
        }
        // The step-level maps (SEMANTICS.md §3 step 5–6): every entry of one file shares them.
        if (global_to_mode_.try_emplace(g, m, ms).second) note_new_step(g);
        if (m != Mode::GLOBAL) {
            mode_to_global_[mode_index(m)].try_emplace(ms, g);
            if (!mode_seen(m)) modes_seen_.push_back(m);
        }
        auto& ws = workers_for_step_[g];
        if (std::find(ws.begin(), ws.end(), worker) == ws.end()) ws.push_back(worker);
        const auto count = static_cast<int>(ws.size());
        if (count < num_workers_) short_steps_.insert(g);
        else short_steps_.erase(g);
        if (count == num_workers_ && g > lcs_) set_lcs(g);
    }

    struct ReductionName {
        std::string base, reduction;
        bool abs;
    };
    static std::optional<ReductionName> split_reduction(const std::string& name) {
        static constexpr std::string_view marker = "smdebug/reductions/";
        const auto pos = name.find(marker);
        if (pos == std::string::npos) return std::nullopt;
        const std::string rest = name.substr(pos + marker.size());
        const auto slash = rest.find('/');
        if (slash == std::string::npos) return std::nullopt;
        std::string red = rest.substr(0, slash);
        bool abs = false;
        if (auto a = red.find("abs_"); a != std::string::npos) {
            abs = true;
            red = red.substr(a + 4);
        }
        return ReductionName{rest.substr(slash + 1), red, abs};
    }

    std::uint32_t intern_event_file(const std::string& key) {
        auto [it, inserted] = event_file_ids_.try_emplace(key, static_cast<std::uint32_t>(event_files_.size()));
        if (inserted) event_files_.push_back(key);
        return it->second;
    }
    const std::string& event_key(const detail::Location& loc) const { return event_files_[loc.event_file]; }

    detail::TensorData& tensor_data(const std::string& name) {
        auto& p = tensors_[name];
        if (!p) {
            p = std::make_unique<detail::TensorData>();
            p->name = name;
        }
        return *p;
    }

    // ---- completeness, window and token ----------------------------------------------------------

    // How many of the newest loaded steps the reader keeps looking back at for late files (D11).
    std::size_t lookback() const noexcept { return static_cast<std::size_t>(std::max<std::int64_t>(window_, 1)); }

    // Book-keeping for a step seen for the first time: the count of steps above lcs, and the
    // oldest of the newest lookback() steps (an iterator that only moves forward).
    void note_new_step(std::int64_t g) {
        if (g > lcs_) ++above_lcs_;
        if (global_to_mode_.size() <= lookback()) lookback_begin_ = global_to_mode_.begin();
        else if (g > lookback_begin_->first) ++lookback_begin_;
    }

    // lcs only moves forward; keeps the count of loaded steps above it.
    void set_lcs(std::int64_t v) {
        if (v <= lcs_) return;
        for (auto it = global_to_mode_.upper_bound(lcs_); it != global_to_mode_.end() && it->first <= v; ++it) --above_lcs_;
        lcs_ = v;
    }

    // D12: when more than W loaded steps are incomplete (every step above lcs is), the older
    // half of them, ⌈count/2⌉ oldest first, are given up on: lcs moves to the newest of those.
    void apply_wait_window() {
        if (window_ <= 0 || above_lcs_ <= window_) return;
        const auto give_up = (above_lcs_ + 1) / 2;
        auto it = global_to_mode_.upper_bound(lcs_);
        std::advance(it, give_up - 1);
        set_lcs(it->first);
    }

    // The listing position (D11): just before the oldest step that may still get files — the
    // step after lcs, or an older step among the newest lookback() loaded steps that not every
    // worker has written — and never inside the part of the step range that range_steps
    // excludes. Never moves backwards.
    void update_token() {
        std::optional<std::int64_t> from;
        if (lcs_ >= 0 || !global_to_mode_.empty()) from = lcs_ + 1;
        if (lookback_begin_ != global_to_mode_.end()) {
            const std::int64_t cutoff = lookback_begin_->first;
            short_steps_.erase(short_steps_.begin(), short_steps_.lower_bound(cutoff));  // out of sight for good
            if (!short_steps_.empty() && (!from || *short_steps_.begin() < *from)) from = *short_steps_.begin();
        }
        if (from && options_.range_begin && *from < *options_.range_begin) from = *options_.range_begin;
        if (!from && options_.range_begin && last_listed_) from = *options_.range_begin;
        std::optional<std::string> token;
        if (from && options_.range_end && *from >= *options_.range_end) token = last_listed_;  // nothing left to load
        else if (from) token = step_listing_prefix(*from);
        else token = last_listed_;
        if (token && (!token_ || *token > *token_)) {
            token_ = std::move(token);
            read_keys_.erase(read_keys_.begin(), read_keys_.upper_bound(*token_));
        }
    }

    // "index/<bucket>/<step, 12 digits>": sorts before every index file of that step and after
    // every file of earlier steps.
    static std::string step_listing_prefix(std::int64_t step) {
        std::string k = paths::index_key(step, "");
        k.resize(k.size() - std::string_view("_.json").size());
        return k;
    }

    // ---- helpers -------------------------------------------------------------------------------

    bool mode_seen(Mode m) const { return std::find(modes_seen_.begin(), modes_seen_.end(), m) != modes_seen_.end(); }

    int worker_count(std::int64_t g) const {
        auto it = workers_for_step_.find(g);
        return it == workers_for_step_.end() ? 0 : static_cast<int>(it->second.size());
    }

    bool is_complete(std::int64_t g) const { return worker_count(g) == num_workers_ || loaded_all_steps_ || lcs_ >= g; }

    // SEMANTICS.md §6.5's decision list over the loaded steps (no refresh).
    StepState step_state(std::int64_t step, Mode mode) const {
        auto decide = [&](std::int64_t found, std::int64_t g) {
            if (found > step) return lcs_ >= g ? StepState::UNAVAILABLE : StepState::NOT_YET_AVAILABLE;
            if (worker_count(g) == num_workers_ || loaded_all_steps_ || g <= lcs_) return StepState::AVAILABLE;
            return StepState::NOT_YET_AVAILABLE;
        };
        if (mode == Mode::GLOBAL) {
            if (auto it = global_to_mode_.lower_bound(step); it != global_to_mode_.end()) return decide(it->first, it->first);
        } else {
            const auto& m = mode_to_global_[mode_index(mode)];
            if (auto it = m.lower_bound(step); it != m.end()) return decide(it->first, it->second);
        }
        return loaded_all_steps_ ? StepState::UNAVAILABLE : StepState::NOT_YET_AVAILABLE;
    }

    // The last of steps(mode, show_incomplete_steps=true), without building the list.
    std::optional<std::int64_t> last_step_no_refresh(Mode mode) const {
        if (mode == Mode::GLOBAL) return global_to_mode_.empty() ? std::nullopt : std::optional(global_to_mode_.rbegin()->first);
        const auto& m = mode_to_global_[mode_index(mode)];
        return m.empty() ? std::nullopt : std::optional(m.rbegin()->first);
    }

    std::optional<std::int64_t> lookup_global(Mode mode, std::int64_t ms) const {
        const auto& m = mode_to_global_[mode_index(mode)];
        auto it = m.find(ms);
        return it == m.end() ? std::nullopt : std::optional(it->second);
    }
    std::optional<std::int64_t> global_of(Mode mode, std::int64_t step) const {
        return mode == Mode::GLOBAL ? std::optional(step) : lookup_global(mode, step);
    }

    std::vector<std::int64_t> steps_no_refresh(Mode mode, bool show_incomplete) const {
        std::vector<std::int64_t> out;
        if (mode == Mode::GLOBAL) {
            out.reserve(global_to_mode_.size());
            for (const auto& [g, mm] : global_to_mode_)
                if (show_incomplete || is_complete(g)) out.push_back(g);
        } else {
            for (const auto& [ms, g] : mode_to_global_[mode_index(mode)])
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

    // ---- values ----------------------------------------------------------------------------------

    // SEMANTICS.md §8's "skipped" test for a missing event file: the first event file of the same
    // worker that sorts at or after it belongs to another step.
    bool event_file_skipped(const std::string& key) const {
        const auto missing = paths::parse_step_file(key);
        if (!missing) return false;
        std::string after = std::string(paths::events_prefix) + paths::step_digits(missing->step, 12);
        for (const auto& k : store_.list(paths::events_prefix, after)) {
            if (k < key) continue;
            const auto sf = paths::parse_step_file(k);
            if (sf && sf->worker == missing->worker) return sf->step != missing->step;
        }
        return false;
    }

    // Reads several records at once: one read_ranges call (parallel ranged GETs, neighbours
    // coalesced, on S3), each decoded in place. A record that cannot be fetched or decoded that
    // way — or every record, when the batch read itself fails — is read again through
    // read_value(), so the missing-file and not-yet-written rules apply exactly as for one value.
    // Results are in request order; an error is stored for the records that still fail.
    struct ReadRequest {
        const detail::Location* location;
        std::int64_t step;
        Mode mode;
    };
    struct ReadResult {
        std::shared_ptr<const TensorValue> value;
        std::exception_ptr error;
    };
    std::vector<ReadResult> read_values(std::span<const ReadRequest> requests, const std::string& tensor) {
        std::vector<ReadResult> out(requests.size());
        std::vector<RangeRequest> ranges;
        ranges.reserve(requests.size());
        for (const auto& r : requests) ranges.push_back({event_key(*r.location), r.location->start, r.location->length});
        std::vector<ByteBuffer> buffers;
        try {
            buffers = smdebug::read_ranges(store_, ranges);
        } catch (const SMDebugError&) {
            buffers.clear();  // fall back to one read per record below
        }
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (i < buffers.size()) {
                try {
                    const std::string where = store_.describe(ranges[i].key) + " at offset " + std::to_string(ranges[i].offset);
                    auto buf = std::make_shared<ByteBuffer>(std::move(buffers[i]));
                    const auto record = tfrecord::parse(buf->bytes(), where);
                    out[i].value = std::make_shared<const TensorValue>(event::decode(buf, record.payload, where).value);
                    continue;
                } catch (const FormatError&) {
                    // not complete yet, or corrupt: decided by read_value
                }
            }
            try {
                out[i].value = read_value(*requests[i].location, tensor, requests[i].step, requests[i].mode);
            } catch (...) {
                out[i].error = std::current_exception();
            }
        }
        return out;
    }

    // Reads and decodes the record at `loc` (SEMANTICS.md §8).
    //  - A missing event file runs the reference's retry loop: TensorUnavailableForStep when the
    //    file was skipped, when training has ended, or after the retry limit (waits of
    //    poll_interval in between).
    //  - A short file or a record that does not decode (length or payload CRC not yet valid) is a
    //    file the writer has not finished: StepNotYetAvailable while training runs. After the end
    //    the record is read once more (it may have been completed just before the marker) and a
    //    FormatError naming the file and offset escapes if it still does not decode.
    std::shared_ptr<const TensorValue> read_value(const detail::Location& loc, const std::string& tensor,
                                                  std::int64_t step, Mode mode) {
        const std::string& key = event_key(loc);
        const std::string where = store_.describe(key) + " at offset " + std::to_string(loc.start);
        bool reread_after_end = false;
        while (true) {
            try {
                auto buf = std::make_shared<ByteBuffer>(store_.read_range(key, loc.start, loc.length));
                const auto record = tfrecord::parse(buf->bytes(), where);
                auto ev = event::decode(buf, record.payload, where);
                return std::make_shared<const TensorValue>(std::move(ev.value));
            } catch (const ObjectNotFound&) {
                int retry = 0;
                bool present = false;
                while (!present && retry < missing_event_retry_limit_) {
                    if (event_file_skipped(key) || training_ended()) throw TensorUnavailableForStep(tensor, step, mode);
                    present = store_.exists(key);
                    ++retry;
                    if (!present) std::this_thread::sleep_for(options_.poll_interval);
                }
                if (retry >= missing_event_retry_limit_) throw TensorUnavailableForStep(tensor, step, mode);
            } catch (const FormatError&) {
                if (!training_ended()) throw StepNotYetAvailable(step, mode);
                if (reread_after_end) throw;
                reread_after_end = true;
            }
        }
    }

    S store_;
    TrialOptions options_;
    std::string name_;
    std::int64_t window_ = 1000;
    std::chrono::milliseconds end_delay_{1000};
    int missing_event_retry_limit_ = 100;
    std::unique_ptr<ChangeWatch> watch_;  // created when the trial first waits (local stores)
    std::optional<std::filesystem::path> local_root_;  // the folder, for a local store
    RefreshStats stats_;

    std::map<std::string, std::unique_ptr<detail::TensorData>> tensors_;
    std::map<std::int64_t, std::pair<Mode, std::int64_t>> global_to_mode_;
    std::array<std::map<std::int64_t, std::int64_t>, 4> mode_to_global_;
    std::vector<Mode> modes_seen_;
    std::unordered_map<std::int64_t, std::vector<const detail::TensorData*>> step_to_tensors_;  // may repeat
    std::vector<std::string> event_files_;
    std::unordered_map<std::string, std::uint32_t> event_file_ids_;
    std::array<std::set<std::string>, 4> mode_to_tensors_;
    std::unordered_map<std::int64_t, std::vector<std::string>> workers_for_step_;
    std::set<std::string> worker_set_;
    int num_workers_ = 1;
    std::map<std::string, Collection> collections_;
    std::map<std::string, detail::CompiledRegex> collection_regex_;

    std::int64_t lcs_ = -1;
    std::int64_t above_lcs_ = 0;  // loaded steps above lcs (all incomplete)
    std::set<std::int64_t> short_steps_;  // loaded steps (not older than the lookback) missing a worker
    std::map<std::int64_t, std::pair<Mode, std::int64_t>>::const_iterator lookback_begin_;
    std::optional<std::string> token_;
    std::optional<std::string> last_listed_;
    std::set<std::string> read_keys_;  // keys after the token already read (or range-filtered)
    bool loaded_all_steps_ = false;
    bool dynamic_refresh_ = true;
};

// ---- refresh scopes (D20) ------------------------------------------------------------------------

// Anything with the dynamic-refresh switch of a Trial.
template <class T>
concept RefreshableTrial = requires(T& t, bool on) {
    { t.dynamic_refresh() } -> std::convertible_to<bool>;
    t.set_dynamic_refresh(on);
};

namespace detail {
// The trial behind an element of a list of trials: a trial, a (smart) pointer to one, or a
// reference_wrapper.
template <class E>
auto* trial_address(E&& e) {
    using T = std::remove_cvref_t<E>;
    if constexpr (RefreshableTrial<T>) return &e;
    else if constexpr (requires { e.get(); } && !requires { *e; }) return trial_address(e.get());
    else return trial_address(*e);
}
template <class R>
using trial_of_range = std::remove_pointer_t<decltype(trial_address(std::declval<std::ranges::range_reference_t<R>>()))>;
}  // namespace detail

// A list or span of trials (or pointers, smart pointers, reference_wrappers to trials).
template <class R>
concept TrialRange = std::ranges::input_range<R> && !RefreshableTrial<std::remove_cvref_t<R>> &&
                     requires { typename detail::trial_of_range<R>; } && RefreshableTrial<detail::trial_of_range<R>>;

// RAII refresh scope for a fixed set of trials: switches automatic refreshing on or off and
// restores each trial's previous setting on exit, exceptions included. Scopes nest.
template <class... Trials>
class RefreshScope {
public:
    RefreshScope(bool on, Trials&... trials) : saved_{{&trials, trials.dynamic_refresh()}...} {
        (trials.set_dynamic_refresh(on), ...);
    }
    ~RefreshScope() { restore(std::index_sequence_for<Trials...>{}); }
    RefreshScope(const RefreshScope&) = delete;
    RefreshScope& operator=(const RefreshScope&) = delete;

private:
    template <std::size_t... I>
    void restore(std::index_sequence<I...>) noexcept {
        // Last in, first restored: a trial named twice ends with its original setting.
        constexpr std::size_t n = sizeof...(I);
        ((std::get<n - 1 - I>(saved_).first->set_dynamic_refresh(std::get<n - 1 - I>(saved_).second)), ...);
    }
    std::tuple<std::pair<Trials*, bool>...> saved_;
};

// The same for a list of trials known at run time.
template <class T>
class RefreshScopeList {
public:
    template <class R>
    RefreshScopeList(bool on, R&& trials) {
        for (auto&& e : trials) {
            T* t = detail::trial_address(e);
            saved_.emplace_back(t, t->dynamic_refresh());
        }
        for (auto& [t, prev] : saved_) t->set_dynamic_refresh(on);
    }
    ~RefreshScopeList() {
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) it->first->set_dynamic_refresh(it->second);
    }
    RefreshScopeList(const RefreshScopeList&) = delete;
    RefreshScopeList& operator=(const RefreshScopeList&) = delete;
    std::size_t size() const noexcept { return saved_.size(); }

private:
    std::vector<std::pair<T*, bool>> saved_;
};

// `auto scope = no_refresh(a, b);` — no automatic refresh for a and b until the scope ends.
template <RefreshableTrial... Trials>
    requires(sizeof...(Trials) > 0)
[[nodiscard]] RefreshScope<Trials...> no_refresh(Trials&... trials) { return RefreshScope<Trials...>(false, trials...); }
template <RefreshableTrial... Trials>
    requires(sizeof...(Trials) > 0)
[[nodiscard]] RefreshScope<Trials...> refresh(Trials&... trials) { return RefreshScope<Trials...>(true, trials...); }

// `auto scope = no_refresh(trials);` for a vector / span / list of trials or pointers to trials.
template <TrialRange R>
[[nodiscard]] RefreshScopeList<detail::trial_of_range<R>> no_refresh(R&& trials) {
    return RefreshScopeList<detail::trial_of_range<R>>(false, trials);
}
template <TrialRange R>
[[nodiscard]] RefreshScopeList<detail::trial_of_range<R>> refresh(R&& trials) {
    return RefreshScopeList<detail::trial_of_range<R>>(true, trials);
}
// `auto scope = no_refresh({&a, &b});`
template <RefreshableTrial T>
[[nodiscard]] RefreshScopeList<T> no_refresh(std::initializer_list<T*> trials) { return RefreshScopeList<T>(false, trials); }
template <RefreshableTrial T>
[[nodiscard]] RefreshScopeList<T> refresh(std::initializer_list<T*> trials) { return RefreshScopeList<T>(true, trials); }

}  // namespace smdebug

#include <smdebug/query/tensor.hpp>
