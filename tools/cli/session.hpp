#pragma once
// One run of one command: its name (for its error lines), the options main took out of the
// arguments for every command, and the stores and trials the command opens. The session owns
// the trials: main destroys it when the command has ended (and its error message has been
// completed from them), which closes their files and joins their threads. What that costs is
// bounded: a trial waits for the read-ahead it has in flight (on S3 only: at most 3 batches of
// 32 MiB in all, each request within the S3 timeouts), an S3 client stops its I/O thread without
// waiting for the server, and a local store closes its cached descriptors.
#include <charconv>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/format/paths.hpp>
#include <smdebug/query/create_trial.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/counting_store.hpp>

#include "args.hpp"
#include "common_options.hpp"
#include "errors.hpp"

namespace cli {

using CliTrial = smdebug::Trial<smdebug::AnyStore>;

class Session {
public:
    Session(std::string command, CommonOptions options) : command_(std::move(command)), options_(std::move(options)) {}
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const std::string& command() const noexcept { return command_; }
    // `smdebug <command>: <message>` on stderr.
    void print_error(std::string_view message) const { cli::print_error(command_, message); }

    // --steps, as main took it; a command may narrow it (summary --latest) before it opens a trial.
    const StepRange& steps() const noexcept { return options_.steps; }
    void set_steps(StepRange range) noexcept { options_.steps = range; }

    // The options of a trial that is read as it is: the common options, and no waiting.
    smdebug::TrialOptions trial_options() const {
        smdebug::TrialOptions o;
        options_.apply(o);
        o.wait_timeout = std::chrono::milliseconds(0);
        return o;
    }
    // The options of a trial a command follows while its job writes (rule, watch, monitor): the
    // common options and --wait [SECONDS]. Without --wait, a path that holds no trial fails at once.
    smdebug::TrialOptions following_options(const Args& a) const {
        smdebug::TrialOptions o;
        options_.apply(o);
        o.wait_hint = "--wait [SECONDS]";
        if (!a.has(std::string(wait_option))) return o;
        o.wait_for_trial = true;
        if (const auto v = a.value(std::string(wait_option))) {
            double seconds = -1;
            const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), seconds);
            if (ec != std::errc() || end != v->data() + v->size() || !(seconds >= 0) || seconds > 1e9)
                throw usage_error("--wait takes a number of seconds, not '" + *v + "'");
            o.wait_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
        }
        return o;
    }

    // The store behind a trial path (behind the disk cache of --cache), counted with --requests.
    // Safe from several threads (serve opens its runs on its own).
    smdebug::AnyStore open_store(const std::string& path) {
        smdebug::AnyStore store = smdebug::open_trial_store(path, trial_options());
        if (!options_.count_requests) return store;
        smdebug::CountingStore<smdebug::AnyStore> counted(std::move(store));
        std::lock_guard lock(mutex_);
        counted_.push_back(counted);
        return smdebug::AnyStore(std::move(counted));
    }

    // The store of the trial at `path` (a folder or s3://bucket/prefix; through open_store),
    // failing with one clear line when the path does not exist or holds no trial (no index files
    // and no collection files). The check lists one key of each folder, not the index.
    smdebug::AnyStore checked_store(const std::string& path) {
        if (!path.starts_with("s3://")) {
            std::error_code ec;
            if (!std::filesystem::exists(path, ec)) throw usage_error("no such trial folder: " + path);
            if (!std::filesystem::is_directory(path, ec)) throw usage_error("not a trial folder (a file): " + path);
        }
        auto store = open_store(path);
        if (smdebug::list_first(store, "collections/", "", 1).empty() && smdebug::list_first(store, smdebug::paths::index_prefix, "", 1).empty())
            throw usage_error("not a trial (no index/ or collections/ files): " + path);
        return store;
    }

    // A trial the session keeps until it ends. The last one opened is where main's error messages
    // look for the names and steps that do exist ("did you mean", "the last step is").
    CliTrial& open_trial(smdebug::AnyStore store, smdebug::TrialOptions options) {
        std::lock_guard lock(mutex_);
        trials_.push_back(std::make_unique<CliTrial>(std::move(store), std::move(options)));
        return *trials_.back();
    }
    // The trial at `path` (checked_store), read as it is (trial_options).
    CliTrial& open_trial(const std::string& path) { return open_trial(checked_store(path), trial_options()); }
    CliTrial& open_trial(smdebug::AnyStore store) { return open_trial(std::move(store), trial_options()); }
    // The trial at `path` with `options`, named by the path: not checked first, as the options may
    // wait for the job to start writing.
    CliTrial& open_trial(const std::string& path, smdebug::TrialOptions options) {
        if (!options.name) options.name = smdebug::default_trial_name(path);
        return open_trial(open_store(path), std::move(options));
    }
    // The --other trials of a rule command, each opened with `options` and named by its path.
    std::vector<CliTrial*> open_other_trials(const std::vector<std::string>& paths, const smdebug::TrialOptions& options) {
        std::vector<CliTrial*> out;
        for (const auto& p : paths) {
            smdebug::TrialOptions o = options;
            o.name = smdebug::default_trial_name(p);
            out.push_back(&open_trial(open_store(p), std::move(o)));
        }
        return out;
    }
    CliTrial* last_trial() {
        std::lock_guard lock(mutex_);
        return trials_.empty() ? nullptr : trials_.back().get();
    }

    // With --requests: "requests: LIST n, GET n, HEAD n; bytes n" on stderr, summed over the
    // stores the command opened (smdebug::format_request_counts).
    void print_request_counts() {
        if (!options_.count_requests) return;
        smdebug::RequestCounts sum;
        {
            std::lock_guard lock(mutex_);
            for (const auto& s : counted_) {
                const auto c = s.counts();
                sum.list += c.list;
                sum.get += c.get;
                sum.head += c.head;
                sum.bytes += c.bytes;
            }
        }
        std::cerr << smdebug::format_request_counts(sum) << "\n";
    }

private:
    std::string command_;
    CommonOptions options_;
    std::mutex mutex_;
    std::vector<smdebug::CountingStore<smdebug::AnyStore>> counted_;
    std::vector<std::unique_ptr<CliTrial>> trials_;  // the last member: destroyed first
};

}  // namespace cli
