#pragma once
// The runs `smdebug serve` shows, and the thread that keeps them current.
//
// Each run is one Trial, opened and refreshed by the registry's own thread: every half second it
// opens the runs not open yet (a job that has not started writing is retried), refreshes the open
// ones (new index files only) and publishes a status snapshot; when a run gains steps or ends it
// calls `on_change` with the run's status (the server's event stream). The API reads the snapshots
// without waiting for a refresh, and reads a Trial under the run's mutex (a Trial is used by one
// thread at a time) with automatic refresh off: a request never lists the store, only the
// registry's thread does. A run busy with a long request is refreshed on the next round.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <smdebug/query/trial.hpp>
#include <smdebug/storage/any_store.hpp>

#include "json_text.hpp"

namespace serve {

using TrialT = smdebug::Trial<smdebug::AnyStore>;

struct RunStatus {
    std::string run, path;
    std::vector<std::string> workers;
    std::size_t steps = 0;  // complete steps
    std::optional<std::int64_t> last_step;  // the last complete step
    bool ended = false;
    bool loading = true;  // not opened yet
    std::string error;    // why it is not open yet (no trial at the path yet, unreadable)
    bool operator==(const RunStatus&) const = default;
};

inline std::string status_json(const RunStatus& s) {
    std::string out = "{\"run\":";
    append_string(out, s.run);
    out += ",\"path\":";
    append_string(out, s.path);
    out += ",\"workers\":[";
    for (std::size_t i = 0; i < s.workers.size(); ++i) {
        if (i) out += ',';
        append_string(out, s.workers[i]);
    }
    out += "],\"steps\":" + std::to_string(s.steps) + ",\"last_step\":" + (s.last_step ? std::to_string(*s.last_step) : "null");
    out += std::string(",\"ended\":") + (s.ended ? "true" : "false") + ",\"loading\":" + (s.loading ? "true" : "false") + ",\"error\":";
    if (s.error.empty()) out += "null";
    else append_string(out, s.error);
    return out + "}";
}

struct Run {
    std::string name, path;
    std::mutex mutex;                    // held while the trial is used
    std::unique_ptr<TrialT> trial;       // null until opened
    std::uint64_t generation = 0;        // counts the changes of the run's status (steps, end)
    // What the API keeps between requests (api.hpp), under `mutex`: values of complete steps never
    // change; whole answers (rules) are kept while `generation` stays the same.
    std::map<std::string, std::map<std::pair<std::string, std::int64_t>, double>> points;  // series key → (worker, step) → value
    std::size_t point_count = 0;
    std::map<std::string, std::pair<std::string, std::string>> tensor_info;  // name → (shape JSON, dtype)
    std::map<std::string, std::pair<std::uint64_t, std::string>> answers;     // request → (generation, JSON)

    std::mutex status_mutex;
    RunStatus status;
    RunStatus snapshot() {
        std::lock_guard lock(status_mutex);
        return status;
    }
};

class RunRegistry {
public:
    using OnChange = std::function<void(const RunStatus&)>;
    // Opens the trial of run `name` at `path` (cli::Session::open_trial's stores and options); called
    // on the registry's thread.
    using Open = std::function<std::unique_ptr<TrialT>(const std::string& name, const std::string& path)>;

    RunRegistry(std::vector<std::pair<std::string, std::string>> name_path, std::chrono::milliseconds interval, Open open,
                OnChange on_change)
        : interval_(interval), open_(std::move(open)), on_change_(std::move(on_change)) {
        for (auto& [name, path] : name_path) {
            auto r = std::make_unique<Run>();
            r->name = name;
            r->path = path;
            r->status.run = name;
            r->status.path = path;
            runs_.push_back(std::move(r));
        }
        thread_ = std::thread([this] { loop(); });
    }
    ~RunRegistry() { stop(); }
    RunRegistry(const RunRegistry&) = delete;
    RunRegistry& operator=(const RunRegistry&) = delete;

    void stop() {
        {
            std::lock_guard lock(stop_mutex_);
            stopping_ = true;
        }
        stop_cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

    Run* find(std::string_view name) {
        for (auto& r : runs_)
            if (r->name == name) return r.get();
        return nullptr;
    }
    const std::vector<std::unique_ptr<Run>>& runs() const noexcept { return runs_; }
    // Whether every run has been opened once (or failed to): the first round is done.
    bool first_round_done() const noexcept { return first_round_.load(); }

private:
    void loop() {
        while (true) {
            for (auto& r : runs_) {
                if (stopped()) return;
                update(*r);
            }
            first_round_ = true;
            std::unique_lock lock(stop_mutex_);
            if (stop_cv_.wait_for(lock, interval_, [this] { return stopping_; })) return;
        }
    }
    bool stopped() {
        std::lock_guard lock(stop_mutex_);
        return stopping_;
    }

    void update(Run& r) {
        std::unique_lock lock(r.mutex, std::try_to_lock);
        if (!lock.owns_lock()) return;  // a long request reads it: next round
        RunStatus s = r.snapshot();
        try {
            if (!r.trial) r.trial = open_(r.name, r.path);
            // One refresh as the queries do it: new index files, and the end of training (after
            // which every step is complete and the trial never refreshes again).
            r.trial->set_dynamic_refresh(true);
            r.trial->maybe_refresh();
            r.trial->set_dynamic_refresh(false);
            auto& t = *r.trial;
            s.loading = false;
            s.error.clear();
            s.workers = t.workers();
            const auto complete = t.steps();
            s.steps = complete.size();
            s.last_step = complete.empty() ? std::nullopt : std::optional<std::int64_t>(complete.back());
            s.ended = t.loaded_all_steps();
        } catch (const std::exception& e) {
            if (r.trial) r.trial->set_dynamic_refresh(false);
            s.error = e.what();
        }
        bool changed = false;
        {
            std::lock_guard slock(r.status_mutex);
            changed = !(r.status == s);
            r.status = s;
        }
        if (changed) ++r.generation;
        if (changed && on_change_) on_change_(s);
    }

    std::vector<std::unique_ptr<Run>> runs_;
    std::chrono::milliseconds interval_;
    Open open_;
    OnChange on_change_;
    std::mutex stop_mutex_;
    std::condition_variable stop_cv_;
    bool stopping_ = false;
    std::atomic<bool> first_round_{false};
    std::thread thread_;
};

}  // namespace serve
