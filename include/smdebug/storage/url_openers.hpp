#pragma once
// Openers of trial paths given as URLs ("s3://bucket/prefix"). The header of the store that
// serves a scheme registers its opener (storage/s3_store.hpp for "s3://"), so open_store() needs
// no transport code unless the program includes that store.
#include <string_view>

#include <smdebug/storage/any_store.hpp>

namespace smdebug {

using UrlStoreOpener = AnyStore (*)(std::string_view url);

// The opener of "s3://" paths; null while no S3 support is compiled into the program.
inline UrlStoreOpener& s3_url_opener() noexcept {
    static UrlStoreOpener opener = nullptr;
    return opener;
}

}  // namespace smdebug
