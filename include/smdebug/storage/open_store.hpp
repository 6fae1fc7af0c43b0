#pragma once
// open_store(path): the store behind a trial path — LocalStore (with "~" expanded) for a folder,
// the store registered for a URL's scheme (S3Store for "s3://bucket/prefix") — as one type, AnyStore.
//
// S3 is opt-in: this header does not pull in the S3 client (Asio, OpenSSL). Including
// <smdebug/storage/s3_store.hpp> (or <smdebug/s3.hpp>, <smdebug/smdebug.hpp>) anywhere in the
// program lets "s3://" paths open an S3Store; without it they fail with a UsageError saying so.
#include <cstdlib>
#include <string>
#include <string_view>

#include <smdebug/core/environment.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/url_openers.hpp>

namespace smdebug {

// A local folder path with a leading "~" replaced by $HOME.
inline std::string expand_home(std::string_view path) {
    std::string p(path);
    if (p.starts_with("~")) {
        if (const auto home = environment::home()) p = *home + p.substr(1);
    }
    return p;
}

inline bool is_s3_path(std::string_view path) { return text::trim(path).starts_with("s3://"); }

// The store behind a trial path: for "<scheme>://..." the store registered for the scheme
// (storage/url_openers.hpp: S3Store for "s3://" once s3_store.hpp is included), else LocalStore
// (with "~" expanded). A URL of a scheme nobody registered is a UsageError, never a local folder.
inline AnyStore open_store(std::string_view path, const StoreOpenOptions& options = {}) {
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
