#pragma once
// The registry of URL openers (storage/url_openers.hpp).
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include <smdebug/core/errors.hpp>
#include <smdebug/storage/detail/builtin_openers.hpp>
#include <smdebug/storage/url_openers.hpp>
#if !SMDEBUG_HEADER_ONLY && !defined(SMDEBUG_SOURCE)
#error "this file defines functions compiled once by <smdebug/src.hpp>: in separate mode include it only there"
#endif

namespace smdebug {

namespace detail {

struct UrlOpeners {
    std::mutex mutex;
    std::map<std::string, UrlStoreOpener, std::less<>> by_scheme;
    std::map<std::string, UrlStoreOpenerWithOptions, std::less<>> with_options;
};

SMDEBUG_INLINE UrlOpeners& url_openers() {
    static UrlOpeners openers;
    return openers;
}

// Sets `scheme`'s entry of one of the registry's tables, after checking the scheme's spelling.
template <class Opener>
bool register_opener(std::map<std::string, Opener, std::less<>> UrlOpeners::*table, std::string_view scheme, Opener opener) {
    if (url_scheme(std::string(scheme) + "://") != scheme)
        throw UsageError("register_url_opener: '" + std::string(scheme) + "' is not a URL scheme (a letter, then letters, digits, +, - or .)");
    auto& openers = url_openers();
    const std::lock_guard lock(openers.mutex);
    (openers.*table).insert_or_assign(std::string(scheme), opener);
    return true;
}

// The built-in "s3://" openers: null unless S3 support is linked in (detail/builtin_openers.hpp).
// Read through a variable: a weak function's address can be null.
SMDEBUG_INLINE UrlStoreOpener builtin_s3_opener() noexcept {
    const UrlStoreOpener open = &open_builtin_s3_url;
    return open;
}
SMDEBUG_INLINE UrlStoreOpenerWithOptions builtin_s3_opener_with_options() noexcept {
    const UrlStoreOpenerWithOptions open = &open_builtin_s3_url_with;
    return open;
}

}  // namespace detail

SMDEBUG_INLINE bool register_url_opener(std::string_view scheme, UrlStoreOpener opener) {
    return detail::register_opener(&detail::UrlOpeners::by_scheme, scheme, opener);
}

SMDEBUG_INLINE bool register_url_opener(std::string_view scheme, UrlStoreOpenerWithOptions opener) {
    return detail::register_opener(&detail::UrlOpeners::with_options, scheme, opener);
}

SMDEBUG_INLINE UrlStoreOpenerWithOptions url_opener_with_options(std::string_view scheme) {
    auto& openers = detail::url_openers();
    const std::lock_guard lock(openers.mutex);
    if (const auto it = openers.with_options.find(scheme); it != openers.with_options.end()) return it->second;
    if (scheme == "s3" && !openers.by_scheme.contains(scheme)) return detail::builtin_s3_opener_with_options();
    return nullptr;
}

SMDEBUG_INLINE UrlStoreOpener url_opener(std::string_view scheme) {
    auto& openers = detail::url_openers();
    const std::lock_guard lock(openers.mutex);
    if (const auto it = openers.by_scheme.find(scheme); it != openers.by_scheme.end()) return it->second;
    if (scheme == "s3" && !openers.with_options.contains(scheme)) return detail::builtin_s3_opener();
    return nullptr;
}

SMDEBUG_INLINE UrlStoreOpener s3_url_opener() { return url_opener("s3"); }

}  // namespace smdebug
