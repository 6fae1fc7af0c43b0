#pragma once
// create_trial(path): picks the store from the path (a folder, or s3://bucket/prefix) and returns
// one type whatever the path. Code that knows its store names Trial<LocalStore> directly.
// Declared here; defined in query/impl/create_trial.ipp.
#include <string>
#include <string_view>

#include <smdebug/core/config.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/storage/any_store.hpp>

namespace smdebug {

// The trial's default name: the text after the last '/' ("" for a trailing slash), as smdebug.
std::string default_trial_name(std::string_view path);

// The trial files a disk cache keeps: written once, never rewritten in place (format.md). A
// collections file rewritten at close() has a new ETag, so a new cache entry.
bool immutable_trial_file(std::string_view key);

// The store a trial at `path` reads: open_store(path), behind a disk cache when the store is
// remote (latency-bound) and options.cache_dir (default: SMDEBUG_CACHE_DIR, core/environment.hpp)
// names a folder.
AnyStore open_trial_store(std::string_view path, const TrialOptions& options = {});

Trial<AnyStore> create_trial(std::string_view path, TrialOptions options = {});

#if !SMDEBUG_HEADER_ONLY
extern template class Trial<AnyStore>;
extern template class Tensor<AnyStore>;
#endif

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/query/impl/create_trial.ipp>
#endif
