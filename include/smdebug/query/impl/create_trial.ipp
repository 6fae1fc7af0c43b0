#pragma once
// create_trial's definitions (query/create_trial.hpp).
#include <smdebug/core/environment.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/query/create_trial.hpp>
#if !SMDEBUG_HEADER_ONLY && !defined(SMDEBUG_SOURCE)
#error "this file defines functions compiled once by <smdebug/src.hpp>: in separate mode include it only there"
#endif
#include <smdebug/query/impl/trial.ipp>
#include <smdebug/storage/disk_cache_store.hpp>
#include <smdebug/storage/open_store.hpp>

namespace smdebug {

SMDEBUG_INLINE std::string default_trial_name(std::string_view path) {
    path = text::trim(path);
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

SMDEBUG_INLINE bool immutable_trial_file(std::string_view key) {
    return key.starts_with(paths::index_prefix) || key.starts_with(paths::events_prefix) || key.starts_with(paths::collections_prefix);
}

SMDEBUG_INLINE AnyStore open_trial_store(std::string_view path, const TrialOptions& options) {
    AnyStore store = open_store(path, StoreOpenOptions{options.max_concurrency, options.connect_timeout, options.read_timeout});
    const std::string dir = options.cache_dir ? *options.cache_dir : environment::cache_dir().value_or("");
    if (dir.empty() || !store.latency_bound()) return store;
    DiskCacheOptions cache;
    cache.dir = expand_home(dir);
    if (const auto max_bytes = options.cache_max_bytes ? options.cache_max_bytes : environment::cache_max_bytes()) cache.max_bytes = *max_bytes;
    cache.cacheable = immutable_trial_file;
    return AnyStore(DiskCacheStore<AnyStore>(std::move(store), std::move(cache)));
}

SMDEBUG_INLINE Trial<AnyStore> create_trial(std::string_view path, TrialOptions options) {
    if (!options.name) options.name = default_trial_name(path);
    AnyStore store = open_trial_store(path, options);
    return Trial<AnyStore>(std::move(store), std::move(options));
}

}  // namespace smdebug
