#pragma once
// Opening a trial from its manifests (format/manifest.hpp, docs/format.md §12): which
// manifests cover the index, whether they are current, and the index files they stand for.
//
// A manifest covers the index keys of its scope in a key range: [index_step_prefix(first),
// index_step_prefix(last + 1)), from the start of index/ when first is 0. Manifests of one scope
// chain when each begins at the step after the previous one's last; the chain from step 0 covers
// every index key before index_step_prefix(C + 1), C its last step. The scopes are "every worker"
// (smdebug compact) and one chain per worker (the Hook's write_manifest; usable when every worker
// of the collections files has one, up to the smallest of their ends).
//
// A manifest is used only when it decodes (magic, version, CRC-32C, entries) and is current:
//  - on a store that lists cheaply (a local folder), the index keys the manifests stand for must
//    be exactly the index files listed in that key range (one listing, no file read);
//  - on a latency-bound store (S3), the last index object each manifest covers must still be
//    there with the size and ETag the manifest recorded (one listing of one key per manifest).
// Anything else is ignored with a warning (TrialOptions::on_warning), never trusted and never an
// error; the reader then lists and reads the index files as it would without a manifest. Keys
// past the chain are always read from the index files, so a job that is still writing is read
// as before.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <smdebug/format/manifest.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/query/step_listing.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

struct LoadedManifests {
    // An index file a manifest stands for: files[file] of manifests[manifest].
    struct FileRef {
        std::uint32_t manifest = 0, file = 0;
    };
    std::vector<manifest::CompactManifest> manifests;  // those used
    std::vector<FileRef> files;                         // in key order: those after the listing start
    const manifest::CompactManifest::File& file(const FileRef& r) const { return manifests[r.manifest].files[r.file]; }
    std::string resume_after;                  // the first listing starts after it; empty: none used
    std::size_t manifests_read = 0;            // manifests read and used
};

struct ManifestScopeChain {
    std::vector<std::pair<std::string, manifest::ManifestName>> links;  // (key, name), from step 0
    std::int64_t end() const { return links.empty() ? -1 : links.back().second.last_step; }
};

// The chain of `names` from step 0: at each step the manifest reaching furthest.
inline ManifestScopeChain manifest_chain(std::vector<std::pair<std::string, manifest::ManifestName>> names) {
    std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
        return a.second.first_step != b.second.first_step ? a.second.first_step < b.second.first_step
                                                          : a.second.last_step > b.second.last_step;
    });
    ManifestScopeChain chain;
    std::int64_t next = 0;
    for (const auto& n : names) {
        if (n.second.first_step != next) {
            if (n.second.first_step > next) break;
            continue;
        }
        chain.links.push_back(n);
        next = n.second.last_step + 1;
    }
    return chain;
}

inline bool is_index_file_key(std::string_view key) {
    const auto name = paths::basename(key);
    return name.ends_with(".json") || name.ends_with(".csv");
}

// The manifests that stand for the index keys after `listing_start` (see the top of this file).
// `range_end`: range_steps' end (manifests wholly past it are not read); `workers` and
// `num_workers`: what the collections files say.
template <Store S>
LoadedManifests load_manifests(const S& store, const std::string& listing_start, std::optional<std::int64_t> range_begin,
                               std::optional<std::int64_t> range_end, const std::set<std::string>& workers, int num_workers,
                               const std::function<void(const std::string&)>& warn) {
    LoadedManifests out;
    // A local trial without the folder costs no store call (an S3 one: one listing).
    if (const auto root = local_root_of(store)) {
        std::error_code ec;
        if (!std::filesystem::is_directory(*root / paths::manifest_folder, ec)) return out;
    }
    std::vector<std::pair<std::string, manifest::ManifestName>> all;
    std::map<std::string, std::vector<std::pair<std::string, manifest::ManifestName>>> per_worker;
    for (auto& k : store.list(paths::manifest_prefix, "")) {
        const auto name = manifest::parse_key(k);
        if (!name) continue;
        if (name->worker) per_worker[*name->worker].emplace_back(std::move(k), *name);
        else all.emplace_back(std::move(k), *name);
    }
    if (all.empty() && per_worker.empty()) return out;

    // The chains to use: every worker's, or the one of all workers, whichever reaches further.
    std::vector<ManifestScopeChain> chains;
    if (auto c = manifest_chain(all); c.end() >= 0) chains.push_back(std::move(c));
    const bool per_worker_usable = !per_worker.empty() && per_worker.size() == workers.size() &&
                                   static_cast<int>(workers.size()) == num_workers &&
                                   std::all_of(workers.begin(), workers.end(), [&](const std::string& w) { return per_worker.contains(w); });
    if (per_worker_usable) {
        std::vector<ManifestScopeChain> worker_chains;
        std::int64_t end = INT64_MAX;
        for (auto& [w, names] : per_worker) {
            worker_chains.push_back(manifest_chain(std::move(names)));
            end = std::min(end, worker_chains.back().end());
        }
        if (end >= 0 && (chains.empty() || end > chains.front().end())) chains = std::move(worker_chains);
    }
    if (chains.empty()) return out;
    auto chains_end = [&] {
        std::int64_t end = INT64_MAX;
        for (const auto& c : chains) end = std::min(end, c.end());
        return end;
    };
    // Only the manifests the range needs: none wholly before its first step, none past its end.
    const std::int64_t begin = range_begin.value_or(0);
    std::int64_t cut = chains_end();
    if (range_end) cut = std::min(cut, *range_end - 1);
    for (auto& c : chains) {
        std::erase_if(c.links, [&](const auto& l) { return l.second.first_step > cut; });
    }
    std::int64_t covered = chains_end();
    if (covered < begin) return out;

    // Read and decode them (in parallel where the store can).
    std::vector<std::string> keys;
    for (const auto& c : chains)
        for (const auto& l : c.links)
            if (l.second.last_step >= begin) keys.push_back(l.first);
    auto bytes = read_objects(store, keys);
    std::map<std::string, manifest::CompactManifest> decoded;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const auto where = smdebug::describe(store, keys[i]);
        if (!bytes[i]) {
            warn("ignoring manifest " + where + ": it is gone");
            continue;
        }
        try {
            auto m = manifest::decode_compact(bytes[i]->bytes(), where);
            m.bytes = std::move(*bytes[i]);  // m.content views them (a move keeps their address)
            if (!(manifest::ManifestName{m.worker, m.first_step, m.last_step} == *manifest::parse_key(keys[i])))
                throw FormatError(where + ": its scope or steps are not those its name says");
            decoded.emplace(keys[i], std::move(m));
        } catch (const SMDebugError& e) {
            warn(std::string("ignoring manifest: ") + e.what());
        }
    }
    // On a latency-bound store: the last index object of each manifest is still as recorded.
    if (latency_bound(store)) {
        for (auto it = decoded.begin(); it != decoded.end();) {
            const auto& files = it->second.files;
            bool current = true;
            if (!files.empty()) {
                const auto& last = files.back();
                std::optional<std::vector<ObjectInfo>> infos;
                if constexpr (ObjectInfoListingStore<S>) infos = store.list_info(last.key, "", 1);
                if (infos) {
                    current = !infos->empty() && infos->front().key == last.key && infos->front().size == last.size &&
                              (last.etag.empty() || infos->front().etag == last.etag);
                } else {
                    const auto found = list_first(store, last.key, "", 1);
                    current = !found.empty() && found.front() == last.key;
                }
            }
            if (current) {
                ++it;
            } else {
                warn("ignoring manifest " + smdebug::describe(store, it->first) + ": it is stale (" + smdebug::describe(store, files.back().key) +
                     " is gone or was rewritten)");
                it = decoded.erase(it);
            }
        }
    }
    // A chain ends before its first manifest that is unusable.
    for (auto& c : chains) {
        auto bad = std::find_if(c.links.begin(), c.links.end(),
                                [&](const auto& l) { return l.second.last_step >= begin && !decoded.contains(l.first); });
        c.links.erase(bad, c.links.end());
    }
    covered = chains_end();
    if (covered < begin) return out;
    const std::string resume = paths::index_step_prefix(covered + 1);
    for (const auto& c : chains)
        for (const auto& l : c.links) {
            auto it = decoded.find(l.first);
            if (it == decoded.end()) continue;
            const auto m = static_cast<std::uint32_t>(out.manifests.size());
            out.manifests.push_back(std::move(it->second));
            decoded.erase(it);
            const auto& files = out.manifests.back().files;
            for (std::size_t f = 0; f < files.size(); ++f)
                if ((listing_start.empty() || files[f].key > listing_start) && files[f].key < resume)
                    out.files.push_back({m, static_cast<std::uint32_t>(f)});
        }
    out.manifests.shrink_to_fit();
    // Chains of one worker each interleave in key order (a chain of all workers is in order).
    std::sort(out.files.begin(), out.files.end(), [&](const auto& a, const auto& b) { return out.file(a).key < out.file(b).key; });
    // On a store that lists cheaply: the index files in that key range are exactly those.
    if (!latency_bound(store)) {
        std::vector<std::string> listed;
        for (auto& k : list_index_keys(store, listing_start, covered + 1))
            if (is_index_file_key(k) && k < resume) listed.push_back(std::move(k));
        bool same = listed.size() == out.files.size();
        for (std::size_t i = 0; same && i < listed.size(); ++i) same = listed[i] == out.file(out.files[i]).key;
        if (!same) {
            warn("ignoring the manifests of " + smdebug::describe(store, paths::manifest_prefix) + ": they are stale (they stand for " +
                 std::to_string(out.files.size()) + " index files up to step " + std::to_string(covered) + ", the index holds " +
                 std::to_string(listed.size()) + ")");
            return {};
        }
    }
    out.manifests_read = out.manifests.size();
    out.resume_after = resume;
    return out;
}

}  // namespace smdebug::detail
