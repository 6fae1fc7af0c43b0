#pragma once
// create_trial(path): picks the store from the path (a folder, or s3://bucket/prefix) and returns
// one type whatever the path. Code that knows its store names Trial<LocalStore> directly.
#include <string>
#include <string_view>

#include <smdebug/core/text.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/core/environment.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/storage/disk_cache_store.hpp>
#include <smdebug/storage/open_store.hpp>

namespace smdebug {

// The trial's default name: the text after the last '/' ("" for a trailing slash), as smdebug.
inline std::string default_trial_name(std::string_view path) {
    path = text::trim(path);
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The trial files a disk cache keeps: written once, never rewritten in place (format.md). A
// collections file rewritten at close() has a new ETag, so a new cache entry.
inline bool immutable_trial_file(std::string_view key) {
    return key.starts_with(paths::index_prefix) || key.starts_with(paths::events_prefix) || key.starts_with(paths::collections_prefix);
}

// The store a trial at `path` reads: open_store(path), behind a disk cache when the store is
// remote (latency-bound) and options.cache_dir (default: SMDEBUG_CACHE_DIR, core/environment.hpp)
// names a folder.
inline AnyStore open_trial_store(std::string_view path, const TrialOptions& options = {}) {
    AnyStore store = open_store(path, StoreOpenOptions{options.max_concurrency});
    const std::string dir = options.cache_dir ? *options.cache_dir : environment::cache_dir().value_or("");
    if (dir.empty() || !store.latency_bound()) return store;
    DiskCacheOptions cache;
    cache.dir = expand_home(dir);
    if (const auto max_bytes = options.cache_max_bytes ? options.cache_max_bytes : environment::cache_max_bytes()) cache.max_bytes = *max_bytes;
    cache.cacheable = immutable_trial_file;
    return AnyStore(DiskCacheStore<AnyStore>(std::move(store), std::move(cache)));
}

inline Trial<AnyStore> create_trial(std::string_view path, TrialOptions options = {}) {
    if (!options.name) options.name = default_trial_name(path);
    AnyStore store = open_trial_store(path, options);
    return Trial<AnyStore>(std::move(store), std::move(options));
}

}  // namespace smdebug
