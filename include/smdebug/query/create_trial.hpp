#pragma once
// create_trial(path): picks the store from the path (a folder, or s3://bucket/prefix) and returns
// one type whatever the path. Code that knows its store names Trial<LocalStore> directly.
#include <string>
#include <string_view>

#include <smdebug/core/text.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/storage/open_store.hpp>

namespace smdebug {

// The trial's default name: the text after the last '/' ("" for a trailing slash), as smdebug.
inline std::string default_trial_name(std::string_view path) {
    path = text::trim(path);
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

inline Trial<AnyStore> create_trial(std::string_view path, TrialOptions options = {}) {
    if (!options.name) options.name = default_trial_name(path);
    return Trial<AnyStore>(open_store(path), std::move(options));
}

}  // namespace smdebug
