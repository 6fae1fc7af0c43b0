#pragma once
// The index listed by step. Index keys sort by step (zero-padded, in buckets of 1000 steps:
// "index/<step / 1000, 9 digits>/<step, 12 digits>_<worker>.json"), so a listing can start at a
// step, a bucket is one prefix, and "the first index key at or after step s" is one listing of
// one key (a ListObjectsV2 page of max-keys n on S3, a few folders locally: FirstKeysStore).
//  - list_index_keys(store, start_after, range_end): what a refresh lists; with a range end, only
//    the buckets up to it (each bucket that holds keys: one listing of one key, then its own
//    listing), so a range costs what it holds, not the trial's length;
//  - find_last_step(store): the newest step any worker has written an index file for, by a
//    galloping and then a binary search over steps: O(log last_step) probes — about 40 for a
//    million steps — whatever the number of workers.
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

namespace detail {

// Steps are written with 12 digits: no index file names a step past this.
inline constexpr std::int64_t max_index_step = 999'999'999'999;

// How many keys that are not index files one probe passes over before it gives up: a writer
// leaves at most one "*.json.tmp" per worker, so only a broken or hostile store comes near it.
inline constexpr std::size_t max_skipped_index_keys = 100'000;

// The first step at or after `step` that has an index file. Keys that are not index files (a
// writer's "*.json.tmp", stray names) are passed over a few at a time, up to
// max_skipped_index_keys (then a FormatError naming the store's index).
template <Store S>
std::optional<std::int64_t> next_indexed_step(const S& store, std::int64_t step) {
    constexpr std::size_t page = 8;
    std::string after = paths::index_step_prefix(step);
    for (std::size_t skipped = 0;; skipped += page) {
        if (skipped >= max_skipped_index_keys)
            throw FormatError(smdebug::describe(store, paths::index_prefix) + " holds more than " + std::to_string(max_skipped_index_keys) +
                              " keys after " + paths::index_step_prefix(step) + " that are not index files");
        const auto keys = list_first(store, paths::index_prefix, after, page);
        for (const auto& key : keys) {
            const auto name = paths::basename(key);
            if (!name.ends_with(".json") && !name.ends_with(".csv")) continue;
            if (const auto file = paths::parse_step_file(key); file && file->step >= step) return file->step;
        }
        if (keys.size() < page) return std::nullopt;
        after = keys.back();
    }
}

}  // namespace detail

// The index keys after `start_after` (see the top of this file). Without a range end: one listing.
template <Store S>
std::vector<std::string> list_index_keys(const S& store, const std::string& start_after, std::optional<std::int64_t> range_end) {
    if (!range_end) return store.list(paths::index_prefix, start_after);
    const std::int64_t last_bucket = (*range_end - 1) / 1000;
    std::vector<std::string> keys;
    std::string after = start_after;
    while (true) {
        const auto next = list_first(store, paths::index_prefix, after, 1);
        if (next.empty()) break;
        const auto bucket = paths::index_bucket_of(next.front());
        if (!bucket) {  // a key outside the buckets: listed as a plain listing would (the reader reports it)
            auto rest = store.list(paths::index_prefix, after);
            keys.insert(keys.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
            break;
        }
        if (*bucket > last_bucket) break;
        auto part = store.list(paths::index_bucket_prefix(*bucket), after);
        keys.insert(keys.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
        after = paths::index_bucket_end(*bucket);
    }
    return keys;
}

// The newest step any worker has written an index file for (see the top of this file); nullopt
// when the trial has none.
template <Store S>
std::optional<std::int64_t> find_last_step(const S& store) {
    const auto first = detail::next_indexed_step(store, 0);
    if (!first) return std::nullopt;
    // Invariant: `last` has an index file and no step at or after `end` has one.
    std::int64_t last = *first;
    std::int64_t end = detail::max_index_step + 1;
    for (std::int64_t gap = 1;; gap *= 2) {  // gallop: a short trial costs few probes
        if (gap > end - 1 - last) break;
        const auto next = detail::next_indexed_step(store, last + gap);
        if (!next) {
            end = last + gap;
            break;
        }
        last = *next;
    }
    while (end - last > 1) {
        const std::int64_t mid = last + (end - last) / 2;
        if (const auto next = detail::next_indexed_step(store, mid)) last = *next;
        else end = mid;
    }
    return last;
}

}  // namespace smdebug
