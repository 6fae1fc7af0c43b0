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
    if constexpr (RootCheckingStore<S>) {
        return store.root_exists();
    } else {
        if (const auto root = local_root_of(store)) {
            std::error_code ec;
            return std::filesystem::is_directory(*root, ec);
        }
        return !store.list(paths::collections_prefix, "").empty() || store.exists(paths::end_marker) ||
               !store.list("", "").empty();
    }
}

struct TrialCollections {
    int num_workers = 1;
    std::map<std::string, Collection> collections;  // from the first collections file
    std::vector<std::string> file_order;            // their names in that file's order
    std::set<std::string> workers;                  // one per collections file
};

template <Store S>
TrialCollections load_trial_collections(const S& store, Waiter<S>& waiter, const TrialOptions& options) {
    const std::string path = store.describe("");
    const auto deadline = deadline_after(options.wait_timeout);
    if (!options.wait_for_trial && !trial_root_exists(store))
        throw ObjectNotFound("trial not found: " + path + " does not exist (pass wait_for_trial to wait for a job that has not started writing)");
    auto list = [&] {
        std::vector<std::string> files;
        for (auto& k : store.list(paths::collections_prefix, ""))
            if (paths::parse_collections_file(k)) files.push_back(std::move(k));
        return files;
    };
    TrialCollections out;
    auto files = list();
    std::size_t needed = 1;
    auto delay = waiter.initial_delay();
    while (true) {
        if (files.size() >= needed) {
            if (needed == 1) {
                const auto& first = files.front();
                auto parsed = collections_file::parse(store.read(first).text(), store.describe(first));
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
