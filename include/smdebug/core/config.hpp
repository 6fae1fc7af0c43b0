#pragma once
// How the library is compiled (docs/compile.md).
//
// Header-only (the default): every header brings its definitions (its impl/*.ipp files), so
// including a header is all a program needs.
//
// Separate compilation (SMDEBUG_SEPARATE_COMPILATION defined for every translation unit, as the
// CMake target smdebug::compiled does): the public headers declare, and one translation unit of
// the program includes <smdebug/src.hpp>, which holds the definitions and the instantiations of
// Trial, Tensor and Hook over AnyStore, LocalStore and S3Store. A template over a store or a rule
// of the user's own is instantiated where the user includes the matching impl/*.ipp header.
//
// A program built in separate mode without src.hpp fails to link with an undefined reference to
// smdebug::detail::SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_src_hpp_in_one_translation_unit.
// Mixing the modes in one program works: the header-only translation units hold inline copies of
// the same definitions, and the linker keeps one.
#ifdef SMDEBUG_SEPARATE_COMPILATION
#define SMDEBUG_HEADER_ONLY 0
// A non-template function defined in an impl/*.ipp file: inline in header-only mode, an ordinary
// (compiled once, in src.hpp) function in separate mode.
#define SMDEBUG_INLINE
namespace smdebug::detail {
extern const int SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_src_hpp_in_one_translation_unit;
// Referenced from every translation unit that includes a header: the link fails, naming the
// missing piece, when no translation unit includes <smdebug/src.hpp>.
[[gnu::used]] inline const int* const separate_compilation_link_check =
    &SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_src_hpp_in_one_translation_unit;
}  // namespace smdebug::detail
#else
#define SMDEBUG_HEADER_ONLY 1
#define SMDEBUG_INLINE inline
#endif
