#pragma once
// open_store(path): the store behind a trial path — S3Store for "s3://bucket/prefix", LocalStore
// (with "~" expanded) otherwise — as one type, AnyStore.
#include <cctype>
#include <cstdlib>
#include <string>
#include <string_view>

#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/s3_store.hpp>

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
        return AnyStore(S3Store(std::string(path)));
    }
    std::string p(path);
    if (p.starts_with("~")) {
        if (const char* home = std::getenv("HOME")) p = std::string(home) + p.substr(1);
    }
    return AnyStore(LocalStore(p));
}

}  // namespace smdebug
