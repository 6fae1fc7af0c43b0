#pragma once
// The definitions of smdebug-cpp, compiled once: include this header in exactly one translation
// unit of a program whose translation units define SMDEBUG_SEPARATE_COMPILATION (the CMake
// target smdebug::compiled is that translation unit, built as a static library). docs/compile.md.
#ifndef SMDEBUG_SEPARATE_COMPILATION
#error "<smdebug/src.hpp> is for separate compilation: define SMDEBUG_SEPARATE_COMPILATION for every translation unit of the program (or link smdebug::compiled)"
#endif
#include <smdebug/core/config.hpp>

// ---- core --------------------------------------------------------------------------------------

// ---- storage and net ---------------------------------------------------------------------------
#include <smdebug/net/impl/aws_config.ipp>
#include <smdebug/storage/impl/local_store.ipp>
#include <smdebug/storage/impl/open_store.ipp>
#include <smdebug/storage/impl/s3_store.ipp>
#include <smdebug/storage/impl/url_openers.ipp>

// ---- query -------------------------------------------------------------------------------------

// ---- writer ------------------------------------------------------------------------------------

// ---- rules -------------------------------------------------------------------------------------

namespace smdebug::detail {
// What the headers of every separately compiled translation unit refer to (core/config.hpp).
extern const int SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_src_hpp_in_one_translation_unit;
const int SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_src_hpp_in_one_translation_unit = 1;
}  // namespace smdebug::detail
