#pragma once
// open_store's definitions (storage/open_store.hpp).
#include <string>
#include <string_view>

#include <smdebug/core/environment.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/open_store.hpp>
#include <smdebug/storage/url_openers.hpp>
#if !SMDEBUG_HEADER_ONLY && !defined(SMDEBUG_SOURCE)
#error "this file defines functions compiled once by <smdebug/src.hpp>: in separate mode include it only there"
#endif

namespace smdebug {

SMDEBUG_INLINE std::string expand_home(std::string_view path) {
    std::string p(path);
    if (p.starts_with("~")) {
        if (const auto home = environment::home()) p = *home + p.substr(1);
    }
    return p;
}

SMDEBUG_INLINE bool is_s3_path(std::string_view path) { return text::trim(path).starts_with("s3://"); }

SMDEBUG_INLINE AnyStore open_store(std::string_view path, const StoreOpenOptions& options) {
    path = text::trim(path);
    if (const auto scheme = url_scheme(path); !scheme.empty()) {
        if (const auto open = url_opener_with_options(scheme)) return open(path, options);
        if (const auto open = url_opener(scheme)) return open(path);
        if (scheme == "s3")
            throw UsageError("cannot open " + std::string(path) +
                             ": this program was built without S3 support (include <smdebug/s3.hpp> or <smdebug/smdebug.hpp>)");
        throw UsageError("cannot open " + std::string(path) + ": no store is registered for " + std::string(scheme) +
                         ":// paths (storage/url_openers.hpp: register_url_opener)");
    }
    return AnyStore(LocalStore(expand_home(path)));
}

}  // namespace smdebug
