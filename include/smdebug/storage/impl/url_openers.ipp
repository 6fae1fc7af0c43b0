#pragma once
// The registry of URL openers (storage/url_openers.hpp).
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include <smdebug/core/errors.hpp>
#include <smdebug/storage/url_openers.hpp>

namespace smdebug {

namespace detail {

struct UrlOpeners {
    std::mutex mutex;
    std::map<std::string, UrlStoreOpener, std::less<>> by_scheme;  // a null opener: none registered
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
    const auto it = openers.with_options.find(scheme);
    return it == openers.with_options.end() ? nullptr : it->second;
}

SMDEBUG_INLINE UrlStoreOpener url_opener(std::string_view scheme) {
    auto& openers = detail::url_openers();
    const std::lock_guard lock(openers.mutex);
    const auto it = openers.by_scheme.find(scheme);
    return it == openers.by_scheme.end() ? nullptr : it->second;
}

SMDEBUG_INLINE UrlStoreOpener& s3_url_opener() {
    auto& openers = detail::url_openers();
    const std::lock_guard lock(openers.mutex);
    return openers.by_scheme["s3"];  // a map's elements keep their address
}

}  // namespace smdebug
