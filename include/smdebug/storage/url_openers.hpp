#pragma once
// Openers of trial paths given as URLs ("s3://bucket/prefix"), by scheme. The header of the store
// that serves a scheme registers its opener (storage/s3_store.hpp registers "s3"), so open_store()
// needs no transport code unless the program includes that store. A program adds a store for its
// own scheme the same way (CONTRIBUTING.md "Adding a store"):
//
//   AnyStore open_my_url(std::string_view url) { return AnyStore(MyStore(url)); }
//   [[maybe_unused]] static const bool my_urls = smdebug::register_url_opener("my", &open_my_url);
//
// after which open_store("my://..."), create_trial("my://...") and Hook open MyStore.
#include <cctype>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <smdebug/core/errors.hpp>
#include <smdebug/storage/any_store.hpp>

namespace smdebug {

using UrlStoreOpener = AnyStore (*)(std::string_view url);

// What a caller may ask of a store opened from a URL (open_store(path, options)); a store ignores
// what does not apply to it.
struct StoreOpenOptions {
    std::optional<std::size_t> max_concurrency;  // requests in flight at most (S3Store)
};
using UrlStoreOpenerWithOptions = AnyStore (*)(std::string_view url, const StoreOpenOptions& options);

namespace detail {
struct UrlOpeners {
    std::mutex mutex;
    std::map<std::string, UrlStoreOpener, std::less<>> by_scheme;  // a null opener: none registered
    std::map<std::string, UrlStoreOpenerWithOptions, std::less<>> with_options;
};
inline UrlOpeners& url_openers() {
    static UrlOpeners openers;
    return openers;
}
}  // namespace detail

// The scheme of a URL path ("s3" of "s3://bucket/x"): letters, then letters, digits, "+", "-" or
// "." (RFC 3986), before "://". Empty for anything else (a local path).
inline std::string_view url_scheme(std::string_view path) noexcept {
    const auto end = path.find("://");
    if (end == std::string_view::npos || end == 0 || !std::isalpha(static_cast<unsigned char>(path[0]))) return {};
    for (std::size_t i = 1; i < end; ++i) {
        const auto c = static_cast<unsigned char>(path[i]);
        if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return {};
    }
    return path.substr(0, end);
}

namespace detail {
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

// Makes open_store() open "<scheme>://..." paths with `opener` (replacing an earlier opener of the
// scheme). `scheme` is given without "://". Returns true, so that it can initialise a static.
inline bool register_url_opener(std::string_view scheme, UrlStoreOpener opener) {
    return detail::register_opener(&detail::UrlOpeners::by_scheme, scheme, opener);
}

// The same for an opener that takes StoreOpenOptions (open_store(path, options)); it also serves
// open_store(path), with default options.
inline bool register_url_opener(std::string_view scheme, UrlStoreOpenerWithOptions opener) {
    return detail::register_opener(&detail::UrlOpeners::with_options, scheme, opener);
}

// The options-taking opener registered for `scheme`, or null.
inline UrlStoreOpenerWithOptions url_opener_with_options(std::string_view scheme) {
    auto& openers = detail::url_openers();
    const std::lock_guard lock(openers.mutex);
    const auto it = openers.with_options.find(scheme);
    return it == openers.with_options.end() ? nullptr : it->second;
}

// The opener registered for `scheme`, or null.
inline UrlStoreOpener url_opener(std::string_view scheme) {
    auto& openers = detail::url_openers();
    const std::lock_guard lock(openers.mutex);
    const auto it = openers.by_scheme.find(scheme);
    return it == openers.by_scheme.end() ? nullptr : it->second;
}

// The opener of "s3://" paths; null while no S3 support is compiled into the program. (The "s3"
// entry of the registry; register_url_opener("s3", ...) sets it.)
inline UrlStoreOpener& s3_url_opener() {
    auto& openers = detail::url_openers();
    const std::lock_guard lock(openers.mutex);
    return openers.by_scheme["s3"];  // a map's elements keep their address
}

}  // namespace smdebug
