#pragma once
// create_trial(path): picks the store from the path (a folder, or s3://bucket/prefix) and returns
// one type whatever the path. Code that knows its store names Trial<LocalStore> directly.
#include <cstdlib>
#include <string>
#include <string_view>

#include <smdebug/query/trial.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/local_store.hpp>
#if __has_include(<smdebug/storage/s3_store.hpp>)
#include <smdebug/storage/s3_store.hpp>
#define SMDEBUG_HAS_S3 1
#endif

namespace smdebug {

namespace detail {
inline std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}
}  // namespace detail

// The store behind a trial path: S3Store for "s3://...", LocalStore (with "~" expanded) otherwise.
inline AnyStore open_store(std::string_view path) {
    path = detail::trim(path);
    if (path.starts_with("s3://")) {
#ifdef SMDEBUG_HAS_S3
        return AnyStore(S3Store(std::string(path)));
#else
        throw UsageError("S3 support is not available in this build: " + std::string(path));
#endif
    }
    std::string p(path);
    if (p.starts_with("~")) {
        if (const char* home = std::getenv("HOME")) p = std::string(home) + p.substr(1);
    }
    return AnyStore(LocalStore(p));
}

// The trial's default name: the text after the last '/' ("" for a trailing slash), as smdebug.
inline std::string default_trial_name(std::string_view path) {
    path = detail::trim(path);
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

inline Trial<AnyStore> create_trial(std::string_view path, TrialOptions options = {}) {
    if (!options.name) options.name = default_trial_name(path);
    return Trial<AnyStore>(open_store(path), std::move(options));
}

}  // namespace smdebug
