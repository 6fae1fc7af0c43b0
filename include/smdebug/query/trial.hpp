#pragma once
// Trial<Store>: the analysis view of one training job's saved data, with the exact query,
// refresh and completeness semantics of smdebug's Trial (SEMANTICS.md §2–§6), and the deliberate
// differences of DEVIATIONS.md. A Trial is not thread-safe; use one per thread.
#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/collections_file.hpp>
#include <smdebug/format/event.hpp>
#include <smdebug/format/index_file.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/tfrecord.hpp>
#include <smdebug/query/options.hpp>
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

struct CompiledRegex {
    std::vector<std::regex> patterns;
    bool search(const std::string& s) const {
        for (const auto& r : patterns)
            if (std::regex_search(s, r)) return true;
        return false;
    }
};

inline std::regex compile_regex(const std::string& pattern) {
    try {
        return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
        throw SMDebugValueError("invalid regular expression '" + pattern + "': " + e.what());
    }
}

}  // namespace detail

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
        load_collections();
        refresh_data();
    }

    Trial(const Trial&) = delete;
    Trial& operator=(const Trial&) = delete;
    Trial(Trial&&) = delete;

    const S& store() const noexcept { return store_; }
    const std::string& name() const noexcept { return name_; }
    std::string path() const { return store_.describe(""); }

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

    StepState has_passed_step(std::int64_t step, Mode mode = Mode::GLOBAL) {
        const auto all = steps(mode, true);
        auto it = std::lower_bound(all.begin(), all.end(), step);
        if (it != all.end()) {
            const std::int64_t g = *global_of(mode, *it);
            if (*it > step) return lcs_ >= g ? StepState::UNAVAILABLE : StepState::NOT_YET_AVAILABLE;
            if (worker_count(g) == num_workers_ || loaded_all_steps_ || g <= lcs_) return StepState::AVAILABLE;
            return StepState::NOT_YET_AVAILABLE;
        }
        return loaded_all_steps_ ? StepState::UNAVAILABLE : StepState::NOT_YET_AVAILABLE;
    }

    // Blocks until every step is available (SEMANTICS.md §6.8), polling with backoff. Throws
    // StepUnavailable / NoMoreData as the reference does, and TimeoutError once `timeout` passes.
    // The refresh setting is restored afterwards (D10).
    void wait_for_steps(const std::vector<std::int64_t>& required, Mode mode = Mode::GLOBAL,
                        std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
        struct Restore {
            Trial& t;
            bool prev;
            ~Restore() { t.dynamic_refresh_ = prev; }
        } restore{*this, dynamic_refresh_};
        dynamic_refresh_ = true;
        const auto deadline = timeout ? std::optional(std::chrono::steady_clock::now() + *timeout) : std::nullopt;
        for (std::int64_t step : required) {
            auto delay = std::chrono::milliseconds(50);
            while (true) {
                const StepState s = has_passed_step(step, mode);
                if (s == StepState::AVAILABLE) break;
                if (s == StepState::UNAVAILABLE) {
                    if (!loaded_all_steps_) throw StepUnavailable(step, mode);
                    const auto all = steps_no_refresh(mode, true);
                    const std::int64_t last = all.empty() ? -1 : all.back();
                    if (step < last) throw StepUnavailable(step, mode);
                    throw NoMoreData(step, mode, last);
                }
                sleep_with_deadline(delay, deadline, [&] {
                    return "timed out waiting for step " + std::to_string(step) + " of mode " +
                           std::string(mode_name(mode)) + " in " + path();
                });
                delay = std::min(delay * 2, options_.poll_interval);
            }
        }
    }

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
    const std::optional<std::string>& last_index_token() const noexcept { return token_; }
    bool loaded_all_steps() const noexcept { return loaded_all_steps_; }
    bool dynamic_refresh() const noexcept { return dynamic_refresh_; }
    void set_dynamic_refresh(bool on) noexcept { dynamic_refresh_ = on; }
    bool training_ended() const { return store_.exists(paths::end_marker); }

    // Reads index files written since the last refresh (SEMANTICS.md §4.1).
    void refresh_data() {
        if (!options_.index_mode) return;
        const auto keys = store_.list(paths::index_prefix, token_.value_or(std::string()));
        for (const auto& key : keys) {
            if (read_keys_.contains(key)) continue;
            const auto name = paths::basename(key);
            if (!(name.ends_with(".json") || name.ends_with(".csv"))) continue;  // e.g. "*.json.tmp"
            const auto sf = paths::parse_step_file(key);
            if (!sf) throw IndexReaderException("Invalid File Found: " + store_.describe(key));
            if ((!options_.range_begin || sf->step >= *options_.range_begin) &&
                (!options_.range_end || sf->step < *options_.range_end)) {
                ByteBuffer text;
                try {
                    text = store_.read(key);
                } catch (const ObjectNotFound&) {
                    continue;  // removed between listing and reading
                }
                ingest(sf->step, sf->worker, index_file::parse(text.text(), store_.describe(key)));
            }
            read_keys_.insert(key);
        }
        if (!keys.empty() && (!last_listed_ || keys.back() > *last_listed_)) last_listed_ = keys.back();
        apply_wait_window();
        update_token();
    }

    // One refresh as the queries do it (SEMANTICS.md §4.4), including end-of-training handling.
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
        if (!global_to_mode_.empty()) lcs_ = std::max(lcs_, global_to_mode_.rbegin()->first);
    }

private:
    friend class Tensor<S>;

    // ---- construction ----------------------------------------------------------------------------

    bool root_exists() const {
        if constexpr (requires { store_.root_exists(); }) return store_.root_exists();
        else return !store_.list("", "").empty();
    }

    template <class Message>
    void sleep_with_deadline(std::chrono::milliseconds delay,
                             const std::optional<std::chrono::steady_clock::time_point>& deadline, Message&& message) {
        if (deadline) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= *deadline) throw TimeoutError(message());
            delay = std::min(delay, std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - now) +
                                        std::chrono::milliseconds(1));
        }
        std::this_thread::sleep_for(delay);
    }

    void load_collections() {
        const auto deadline = options_.wait_timeout
                                  ? std::optional(std::chrono::steady_clock::now() + *options_.wait_timeout)
                                  : std::nullopt;
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
        auto delay = std::chrono::milliseconds(50);
        while (true) {
            if (files.size() >= needed) {
                if (needed == 1) {
                    const auto& first = files.front();
                    auto parsed = collections_file::parse(store_.read(first).text(), store_.describe(first));
                    num_workers_ = parsed.num_workers;
                    for (auto& c : parsed.collections) collections_.emplace(c.name, std::move(c));
                    needed = static_cast<std::size_t>(num_workers_);
                    if (files.size() >= needed) break;
                    continue;
                }
                break;
            }
            if (training_ended() && (files = list()).size() < needed) throw MissingCollectionFiles(
                "Training job has ended. All the collection files could not be loaded (" + path() + ")");
            if (files.size() >= needed) continue;
            sleep_with_deadline(delay, deadline, [&] {
                return "timed out waiting for the collection files of " + path();
            });
            delay = std::min(delay * 2, options_.poll_interval);
            files = list();
        }
        for (const auto& f : files) worker_set_.insert(*paths::parse_collections_file(f));
    }

    // ---- ingestion -----------------------------------------------------------------------------

    void ingest(std::int64_t g, const std::string& worker, const index_file::IndexFile& f) {
        const Mode m = f.mode;
        const std::int64_t ms = f.mode_step;
        if (ms < 0) throw SMDebugValueError("mode step number " + std::to_string(ms) + " can not be less than 0");
        auto& tensors_of_step = step_to_tensors_[g];
        auto note_step = [&](const detail::TensorData& t) {
            global_to_mode_.try_emplace(g, m, ms);
            if (m != Mode::GLOBAL) {
                mode_to_global_[mode_index(m)].try_emplace(ms, g);
                if (!mode_seen(m)) modes_seen_.push_back(m);
                auto& names = mode_to_tensors_[mode_index(m)];
                if (!names.contains(t.name)) names.insert(t.name);
            }
            if (tensors_of_step.empty() || tensors_of_step.back() != &t) tensors_of_step.push_back(&t);
            auto& ws = workers_for_step_[g];
            if (std::find(ws.begin(), ws.end(), worker) == ws.end()) ws.push_back(worker);
            if (static_cast<int>(ws.size()) == num_workers_ && g > lcs_) lcs_ = g;
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
                note_step(t);
            } else {
                auto& t = tensor_data(e.name);
                t.at(m, ms, worker).location = loc;
                note_step(t);
            }
        }
        for (const auto& e : f.shapes) {
            auto& t = tensor_data(e.name);
            Shape shape(e.shape.begin(), e.shape.end());
            t.at(m, ms, worker).shape = std::move(shape);
            t.original_name = e.original_name;
            note_step(t);
        }
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

    // D12: when more than W loaded steps are incomplete, stop waiting for the older half.
    void apply_wait_window() {
        if (window_ <= 0) return;
        std::vector<std::int64_t> incomplete;
        for (auto it = global_to_mode_.upper_bound(lcs_); it != global_to_mode_.end(); ++it)
            incomplete.push_back(it->first);
        if (static_cast<std::int64_t>(incomplete.size()) > window_) {
            const std::size_t give_up = (incomplete.size() + 1) / 2;
            lcs_ = incomplete[give_up - 1];
        }
    }

    // The listing position: just before the oldest step, among the newest W loaded steps, that
    // not every worker has written yet (so late index files are still picked up: D11), or the
    // last key listed when every such step is complete.
    void update_token() {
        std::optional<std::int64_t> oldest_pending;
        std::int64_t seen = 0;
        for (auto it = global_to_mode_.rbegin(); it != global_to_mode_.rend() && seen < std::max<std::int64_t>(window_, 1); ++it, ++seen)
            if (worker_count(it->first) < num_workers_) oldest_pending = it->first;
        std::optional<std::string> token = last_listed_;
        if (oldest_pending) {
            std::string k = paths::index_key(*oldest_pending, "");
            k.resize(k.size() - std::string_view("_.json").size());  // "index/…/<step>" sorts before its files
            token = std::move(k);
        }
        if (token && (!token_ || *token != *token_)) {
            token_ = std::move(token);
            std::erase_if(read_keys_, [&](const std::string& k) { return k <= *token_; });
        }
    }

    // ---- helpers -------------------------------------------------------------------------------

    bool mode_seen(Mode m) const { return std::find(modes_seen_.begin(), modes_seen_.end(), m) != modes_seen_.end(); }

    int worker_count(std::int64_t g) const {
        auto it = workers_for_step_.find(g);
        return it == workers_for_step_.end() ? 0 : static_cast<int>(it->second.size());
    }

    bool is_complete(std::int64_t g) const { return worker_count(g) == num_workers_ || loaded_all_steps_ || lcs_ >= g; }

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

    // Reads and decodes the record at `loc`. While training is ongoing, a missing, short or
    // not-yet-valid record means the writer has not finished: StepNotYetAvailable. After the end
    // it is an error naming the file.
    std::shared_ptr<const TensorValue> read_value(const detail::Location& loc, const std::string& tensor,
                                                  std::int64_t step, Mode mode) {
        const std::string& key = event_key(loc);
        const std::string where = store_.describe(key) + " at offset " + std::to_string(loc.start);
        int retry = 0;
        while (true) {
            try {
                auto buf = std::make_shared<ByteBuffer>(store_.read_range(key, loc.start, loc.length));
                const auto record = tfrecord::parse(buf->bytes(), where);
                auto ev = event::decode(buf, record.payload, where);
                return std::make_shared<const TensorValue>(std::move(ev.value));
            } catch (const ObjectNotFound&) {
                // SEMANTICS.md §8: wait for a missing event file while the job runs.
                if (training_ended() || retry >= missing_event_retry_limit_)
                    throw TensorUnavailableForStep(tensor, step, mode);
                ++retry;
                std::this_thread::sleep_for(options_.poll_interval);
            } catch (const FormatError&) {
                if (!training_ended()) throw StepNotYetAvailable(step, mode);
                throw;
            }
        }
    }

    S store_;
    TrialOptions options_;
    std::string name_;
    std::int64_t window_ = 1000;
    std::chrono::milliseconds end_delay_{1000};
    int missing_event_retry_limit_ = 100;

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
    std::optional<std::string> token_;
    std::optional<std::string> last_listed_;
    std::set<std::string> read_keys_;
    bool loaded_all_steps_ = false;
    bool dynamic_refresh_ = true;
};

// RAII refresh scopes (D20): switch automatic refreshing on or off for one trial or several,
// and restore each trial's previous setting on exit, exceptions included.
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
        ((std::get<I>(saved_).first->set_dynamic_refresh(std::get<I>(saved_).second)), ...);
    }
    std::tuple<std::pair<Trials*, bool>...> saved_;
};

template <class... Trials>
[[nodiscard]] RefreshScope<Trials...> no_refresh(Trials&... trials) { return RefreshScope<Trials...>(false, trials...); }
template <class... Trials>
[[nodiscard]] RefreshScope<Trials...> refresh(Trials&... trials) { return RefreshScope<Trials...>(true, trials...); }

}  // namespace smdebug

#include <smdebug/query/tensor.hpp>
