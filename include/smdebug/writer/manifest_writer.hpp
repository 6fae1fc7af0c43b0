#pragma once
// Writing manifests (format/manifest.hpp, docs/format.md §12):
//  - compact_trial(store): the manifests of every worker for a trial's index as it stands
//    (`smdebug compact PATH`). It reads every index file once and writes one manifest per bucket
//    of 1000 steps (split when a bucket holds more than max_files_per_manifest files), then
//    removes the manifests of every worker it did not write again (an earlier compaction's);
//  - ManifestRecorder: what the Hook writes with HookOptions::write_manifest — one worker's
//    manifest each time its steps enter a new bucket of 1000 steps, and one at close().
//
// What a compaction covers. A manifest stands for every index file in its key range, so it may
// only cover index files that will never change and never gain a neighbour:
//  - it stops before the first index file that does not parse or that a reader refuses (a bad
//    name, a negative mode step): the reader then meets it, and reports it, as without manifests;
//  - while the job runs (no end marker) it covers steps up to the smallest newest step of the
//    workers the collections file announces (each worker writes its steps in order), none when
//    one of them has written nothing yet; the index is listed twice and the second listing used,
//    so a file renamed into place during the first is not missed.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/manifest.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

struct CompactOptions {
    std::size_t max_files_per_manifest = 131072;
};

struct CompactResult {
    std::vector<std::string> written;  // manifest keys written
    std::vector<std::string> removed;  // earlier manifests removed
    std::size_t files_covered = 0;     // index files the manifests stand for
    std::size_t files_left = 0;        // index files not covered (newer steps, or after a bad file)
    std::int64_t last_step = -1;       // the manifests cover index keys before index_step_prefix(last_step + 1)
    std::uint64_t bytes = 0;           // bytes written
};

namespace detail {

template <WritableStore S>
void write_manifest(const S& store, const manifest::Manifest& m, CompactResult* result = nullptr) {
    const auto bytes = manifest::encode(m);
    store.write(manifest::key(m), std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
    if (result) {
        result->written.push_back(manifest::key(m));
        result->bytes += bytes.size();
    }
}

// The largest step s with index_step_prefix(s) <= key (-1 when there is none).
inline std::int64_t last_step_prefix_at_or_before(const std::string& key) {
    std::int64_t lo = -1, hi = 999'999'999'999;  // lo: holds (or -1); above hi: does not
    while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo + 1) / 2;
        if (paths::index_step_prefix(mid) <= key) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// The index keys with sizes and ETags where the store lists them.
template <Store S>
std::vector<ObjectInfo> list_index_infos(const S& store) {
    std::vector<ObjectInfo> out;
    if constexpr (ObjectInfoListingStore<S>) {
        if (auto infos = store.list_info(paths::index_prefix, "", 0)) {
            for (auto& i : *infos)
                if (i.key.ends_with(".json") || i.key.ends_with(".csv")) out.push_back(std::move(i));
            return out;
        }
    }
    for (auto& k : store.list(paths::index_prefix, ""))
        if (paths::basename(k).ends_with(".json") || paths::basename(k).ends_with(".csv")) out.push_back({std::move(k), 0, {}});
    return out;
}

}  // namespace detail

template <WritableStore S>
CompactResult compact_trial(const S& store, const CompactOptions& options = {}) {
    CompactResult result;
    const bool ended = smdebug::exists(store, paths::end_marker);
    auto infos = detail::list_index_infos(store);
    std::int64_t live_end = INT64_MAX;
    if (!ended) {
        int num_workers = 1;
        for (const auto& k : store.list(paths::collections_prefix, ""))
            if (paths::parse_collections_file(k)) {
                num_workers = collections_file::parse(store.read(k).text(), smdebug::describe(store, k)).num_workers;
                break;
            }
        std::map<std::string, std::int64_t> newest;
        for (const auto& i : infos)
            if (const auto sf = paths::parse_step_file(i.key)) newest[sf->worker] = std::max(newest[sf->worker], sf->step);
        if (static_cast<int>(newest.size()) < num_workers) live_end = -1;
        else
            for (const auto& [w, s] : newest) live_end = std::min(live_end, s);
        infos = detail::list_index_infos(store);  // began after the first ended: misses nothing up to live_end
    }
    std::vector<std::string> keys;
    for (const auto& i : infos) keys.push_back(i.key);
    const auto bytes = read_objects(store, keys);

    // The files before the first one a reader would refuse.
    std::vector<manifest::CoveredFile> files;
    std::int64_t end = live_end;
    for (std::size_t i = 0; i < infos.size(); ++i) {
        const auto sf = paths::parse_step_file(infos[i].key);
        std::optional<index_file::IndexFile> parsed;
        if (sf && bytes[i]) {
            try {
                parsed = index_file::parse(bytes[i]->text(), smdebug::describe(store, infos[i].key));
                if (parsed->mode_step < 0) parsed.reset();
            } catch (const SMDebugError&) {
            }
        }
        if (!parsed) {
            end = std::min(end, detail::last_step_prefix_at_or_before(infos[i].key) - 1);
            break;
        }
        files.push_back({infos[i].key, infos[i].size ? infos[i].size : bytes[i]->size(), infos[i].etag, std::move(*parsed)});
    }
    std::int64_t newest = -1;
    for (const auto& f : files) newest = std::max(newest, paths::parse_step_file(f.key)->step);
    end = std::min(end, newest);
    const std::string resume = paths::index_step_prefix(end + 1);
    std::erase_if(files, [&](const auto& f) { return end < 0 || f.key >= resume; });
    result.files_covered = files.size();
    result.files_left = infos.size() - files.size();
    result.last_step = end;

    // One manifest per bucket of 1000 steps (by key position), split when it grows too large.
    if (end >= 0) {
        manifest::Manifest m;
        m.first_step = 0;
        std::int64_t boundary = std::min<std::int64_t>(1000, end + 1);
        auto emit = [&](std::int64_t last) {
            m.last_step = last;
            detail::write_manifest(store, m, &result);
            m.files.clear();
            m.first_step = last + 1;
        };
        for (auto& f : files) {
            while (f.key >= paths::index_step_prefix(boundary)) {
                if (!m.files.empty()) emit(boundary - 1);
                const auto bucket = paths::index_bucket_of(f.key);
                boundary = std::min(end + 1, std::max(boundary + 1000, bucket ? (*bucket + 1) * 1000 : boundary + 1000));
            }
            const auto step = paths::parse_step_file(f.key)->step;
            if (m.files.size() >= options.max_files_per_manifest && step > m.first_step &&
                paths::index_step_prefix(step) <= f.key && paths::index_step_prefix(step) > m.files.back().key)
                emit(step - 1);
            m.files.push_back(std::move(f));
        }
        if (m.first_step <= end) emit(end);
    }
    // Earlier manifests of every worker that this compaction did not write again.
    const std::set<std::string> written(result.written.begin(), result.written.end());
    for (const auto& k : store.list(paths::manifest_prefix, ""))
        if (const auto name = manifest::parse_key(k); name && !name->worker && !written.contains(k)) {
            store.remove(k);
            result.removed.push_back(k);
        }
    return result;
}

// One worker's manifests, written as its index files are (HookOptions::write_manifest): when the
// worker's steps enter a new bucket of 1000 steps, the manifest of the steps before it; at
// finish(), the manifest of the rest. Index files must be noted in step order, once written.
class ManifestRecorder {
public:
    explicit ManifestRecorder(std::string worker) { current_.worker = std::move(worker); }

    // After the index file of `step` was written with `index` (and `size` bytes).
    template <WritableStore S>
    void note(const S& store, std::int64_t step, const index_file::IndexFile& index, std::size_t size) {
        auto key = paths::index_key(step, *current_.worker);
        if (!current_.files.empty() && key <= current_.files.back().key) return;  // a retried write
        if (!current_.files.empty() && step / 1000 > last_step_ / 1000) {
            const std::int64_t boundary = step / 1000 * 1000;
            current_.last_step = boundary - 1;
            detail::write_manifest(store, current_);
            current_.files.clear();
            current_.first_step = boundary;
        }
        current_.files.push_back({std::move(key), size, {}, index});
        last_step_ = step;
    }

    // Writes the manifest of the index files noted since the last one.
    template <WritableStore S>
    void finish(const S& store) {
        if (current_.files.empty()) return;
        current_.last_step = last_step_;
        detail::write_manifest(store, current_);
        current_.files.clear();
        current_.first_step = last_step_ + 1;
    }

private:
    manifest::Manifest current_;
    std::int64_t last_step_ = -1;
};

}  // namespace smdebug
