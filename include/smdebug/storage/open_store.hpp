#pragma once
// open_store(path): the store behind a trial path — LocalStore (with "~" expanded) for a folder,
// S3Store for "s3://bucket/prefix" — as one type, AnyStore.
//
// S3 is opt-in: this header does not pull in the S3 client (Asio, OpenSSL). Including
// <smdebug/storage/s3_store.hpp> (or <smdebug/s3.hpp>, <smdebug/smdebug.hpp>) anywhere in the
// program lets "s3://" paths open an S3Store; without it they fail with a UsageError saying so.
#include <cstdlib>
#include <string>
#include <string_view>

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
        if (const char* home = std::getenv("HOME")) p = std::string(home) + p.substr(1);
    }
    return p;
}

inline bool is_s3_path(std::string_view path) { return text::trim(path).starts_with("s3://"); }

// The store behind a trial path: S3Store for "s3://...", LocalStore (with "~" expanded) otherwise.
inline AnyStore open_store(std::string_view path) {
    path = text::trim(path);
    if (path.starts_with("s3://")) {
        if (const auto open = s3_url_opener()) return open(path);
        throw UsageError("cannot open " + std::string(path) +
                         ": this program was built without S3 support (include <smdebug/s3.hpp> or <smdebug/smdebug.hpp>)");
    }
    return AnyStore(LocalStore(expand_home(path)));
}

}  // namespace smdebug
