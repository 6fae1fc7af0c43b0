#pragma once
// Opening a trial: whether it exists (D16), and loading its collections files — waiting for the
// first one, then for one per worker it announces (docs/semantics.md §1), with the trial's backoff and
// timeout.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/detail/record_reader.hpp>
#include <smdebug/query/detail/waiting.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

// Whether anything exists at the trial path (D16). Local: the folder exists. Elsewhere: a
// collections file, the end marker, or any key under the root.
template <Store S>
bool trial_root_exists(const S& store) {
    if (const auto root = local_root_of(store)) {
        std::error_code ec;
        return std::filesystem::is_directory(*root, ec);
    }
    return !list_first(store, paths::collections_prefix, "", 1).empty() || exists(store, paths::end_marker) ||
           !list_first(store, "", "", 1).empty();
}

// Whether the trial holds what a job writes before its collections file: index or event files
// (smdebug's hooks write the collections file after the first saved step).
template <Store S>
bool has_step_files(const S& store) {
    return !list_first(store, paths::index_prefix, "", 1).empty() || !list_first(store, paths::events_prefix, "", 1).empty();
}

// For the error on a local folder that holds no trial: " (it holds trials: a, b)" naming up to
// three subfolders that do (it is a trial's parent), else "".
template <Store S>
std::string trials_below(const S& store) {
    const auto root = local_root_of(store);
    if (!root) return {};
    std::vector<std::string> names;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(*root, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (it->is_directory(e2) && (std::filesystem::is_directory(it->path() / paths::collections_bucket_folder, e2) ||
                                     std::filesystem::is_directory(it->path() / paths::index_folder, e2)))
            names.push_back(it->path().filename().string());
    }
    if (names.empty()) return {};
    std::sort(names.begin(), names.end());
    std::string out = " (it holds trials: ";
    for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
    return out + (names.size() > 3 ? ", ...)" : ")");
}

inline std::string wait_limit_text(const TrialOptions& options) {
    if (!options.wait_timeout) return " (no time limit)";
    const auto ms = options.wait_timeout->count();
    return " for up to " + (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms");
}

struct TrialCollections {
    int num_workers = 1;
    std::map<std::string, Collection> collections;  // from the first collections file
    std::vector<std::string> file_order;            // their names in that file's order
    std::set<std::string> workers;                  // one per collections file
};

template <Store S>
TrialCollections load_trial_collections(const S& store, Waiter<S>& waiter, const TrialOptions& options) {
    const std::string path = smdebug::describe(store, "");
    const auto deadline = deadline_after(options.wait_timeout);
    const auto no_trial = [&](const std::string& what) {
        return ObjectNotFound(what + " (" + options.wait_hint + " waits for a job that has not started writing)");
    };
    if (!options.wait_for_trial && !trial_root_exists(store)) throw no_trial("trial not found: " + path + " does not exist");
    auto list = [&] {
        std::vector<std::string> files;
        for (auto& k : store.list(paths::collections_prefix, ""))
            if (paths::parse_collections_file(k)) files.push_back(std::move(k));
        return files;
    };
    TrialCollections out;
    auto files = list();
    if (files.empty() && !options.wait_for_trial && !training_ended(store) && !has_step_files(store))
        throw no_trial("not a trial: " + path + " holds no collections/, index/ or events/ files" + trials_below(store));
    std::size_t needed = 1;
    bool announced = false;
    auto delay = waiter.initial_delay();
    while (true) {
        if (files.size() >= needed) {
            if (needed == 1) {
                const auto& first = files.front();
                auto parsed = collections_file::parse(store.read(first).text(), smdebug::describe(store, first));
                out.num_workers = parsed.num_workers;
                for (auto& c : parsed.collections) {
                    std::string name = c.name;
                    if (out.collections.emplace(name, std::move(c)).second) out.file_order.push_back(std::move(name));
                }
                needed = static_cast<std::size_t>(std::max(out.num_workers, 1));
                if (files.size() >= needed) break;
                continue;
            }
            break;
        }
        if (training_ended(store) && (files = list()).size() < needed) throw MissingCollectionFiles(
            "Training job has ended. All the collection files could not be loaded (" + path + ")");
        if (files.size() >= needed) continue;
        if (!waiter.prepared()) {  // see Waiter::prepared
            waiter.prepare();
            files = list();
            continue;
        }
        if (!announced) {
            announced = true;
            announce_wait(options, (files.empty() ? "waiting for the trial at " + path + " to be written (no collections file yet)"
                                                  : "waiting for the collection files of " + path + " (" + std::to_string(files.size()) +
                                                        " of " + std::to_string(needed) + " present)") +
                                       wait_limit_text(options));
        }
        waiter.wait_with_deadline(delay, deadline, [&] {
            return "timed out waiting for the collection files of " + path + " (" +
                   std::to_string(files.size()) + " of " + std::to_string(needed) + " present)";
        });
        delay = waiter.next_delay(delay);
        files = list();
    }
    for (const auto& f : files) out.workers.insert(*paths::parse_collections_file(f));
    return out;
}

}  // namespace smdebug::detail
