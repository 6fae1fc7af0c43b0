#pragma once
// The built-in opener of "s3://" paths, found when the program is linked: storage/impl/s3_store.ipp
// defines these functions (in every translation unit that includes storage/s3_store.hpp in
// header-only mode; in the one that includes src.hpp in separate mode). They are declared weak
// here, so a program without S3 support links too, and their addresses are then null. Nothing
// registers anything when the program starts.
#include <string_view>

#include <smdebug/storage/any_store.hpp>

namespace smdebug {

struct StoreOpenOptions;

namespace detail {

[[gnu::weak]] AnyStore open_builtin_s3_url(std::string_view url);
[[gnu::weak]] AnyStore open_builtin_s3_url_with(std::string_view url, const StoreOpenOptions& options);

}  // namespace detail
}  // namespace smdebug
