#pragma once
// Openers of trial paths given as URLs ("s3://bucket/prefix"), by scheme. "s3://" is built in:
// open_store() opens it with S3Store whenever S3 support is linked into the program (a translation
// unit includes <smdebug/s3.hpp>, <smdebug/smdebug.hpp> or storage/s3_store.hpp, or the program
// links the separately compiled library), and fails with a UsageError saying so otherwise. A
// program adds a store for its own scheme by registering it, once, before it opens such paths
// (CONTRIBUTING.md "Adding a store"):
//
//   AnyStore open_my_url(std::string_view url) { return AnyStore(MyStore(url)); }
//   int main() { smdebug::register_url_opener("my", &open_my_url); ... }
//
// after which open_store("my://..."), create_trial("my://...") and Hook open MyStore. A registered
// opener of "s3" replaces the built-in one.
#include <cctype>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include <smdebug/core/config.hpp>
#include <smdebug/storage/any_store.hpp>

namespace smdebug {

using UrlStoreOpener = AnyStore (*)(std::string_view url);

// What a caller may ask of a store opened from a URL (open_store(path, options)); a store ignores
// what does not apply to it.
struct StoreOpenOptions {
    std::optional<std::size_t> max_concurrency;  // requests in flight at most (S3Store)
    // S3Store: the longest a connection may take to open, and a response to progress; set, they
    // win over SMDEBUG_S3_CONNECT_TIMEOUT / SMDEBUG_S3_READ_TIMEOUT (net::AwsConfig).
    std::optional<std::chrono::milliseconds> connect_timeout, read_timeout;
};
using UrlStoreOpenerWithOptions = AnyStore (*)(std::string_view url, const StoreOpenOptions& options);

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

// Makes open_store() open "<scheme>://..." paths with `opener` (replacing an earlier opener of the
// scheme). `scheme` is given without "://". Returns true.
bool register_url_opener(std::string_view scheme, UrlStoreOpener opener);

// The same for an opener that takes StoreOpenOptions (open_store(path, options)); it also serves
// open_store(path), with default options.
bool register_url_opener(std::string_view scheme, UrlStoreOpenerWithOptions opener);

// The options-taking opener registered for `scheme` (for "s3", else the built-in one), or null.
UrlStoreOpenerWithOptions url_opener_with_options(std::string_view scheme);

// The opener registered for `scheme` (for "s3", else the built-in one), or null.
UrlStoreOpener url_opener(std::string_view scheme);

// The opener of "s3://" paths (url_opener("s3")); null while no S3 support is linked into the program.
UrlStoreOpener s3_url_opener();

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/storage/impl/url_openers.ipp>
#endif
