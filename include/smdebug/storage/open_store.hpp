#pragma once
// open_store(path): the store behind a trial path — LocalStore (with "~" expanded) for a folder,
// the store registered for a URL's scheme (S3Store for "s3://bucket/prefix") — as one type, AnyStore.
//
// S3 is opt-in: this header does not pull in the S3 client (Asio, OpenSSL). Including
// <smdebug/storage/s3_store.hpp> (or <smdebug/s3.hpp>, <smdebug/smdebug.hpp>) anywhere in the
// program lets "s3://" paths open an S3Store; without it they fail with a UsageError saying so.
#include <string>
#include <string_view>

#include <smdebug/core/config.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/url_openers.hpp>

namespace smdebug {

// A local folder path with a leading "~" replaced by $HOME.
std::string expand_home(std::string_view path);

bool is_s3_path(std::string_view path);

// The store behind a trial path: for "<scheme>://..." the store registered for the scheme
// (storage/url_openers.hpp: S3Store for "s3://" once s3_store.hpp is included), else LocalStore
// (with "~" expanded). A URL of a scheme nobody registered is a UsageError, never a local folder.
AnyStore open_store(std::string_view path, const StoreOpenOptions& options = {});

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/storage/impl/open_store.ipp>
#endif
