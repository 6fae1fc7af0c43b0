#pragma once
// The definitions of smdebug-cpp, compiled once: include this header in exactly one translation
// unit of a program whose translation units define SMDEBUG_SEPARATE_COMPILATION (the CMake
// target smdebug::compiled is that translation unit, built as a static library). docs/compile.md.
#ifndef SMDEBUG_SEPARATE_COMPILATION
#error "<smdebug/src.hpp> is for separate compilation: define SMDEBUG_SEPARATE_COMPILATION for every translation unit of the program (or link smdebug::compiled)"
#endif
#include <smdebug/core/config.hpp>
// The impl/*.ipp files that define non-template functions refuse to be included anywhere else.
#define SMDEBUG_SOURCE 1

// ---- core --------------------------------------------------------------------------------------
#include <smdebug/core/impl/regex.ipp>
#include <smdebug/core/tensor_view.hpp>

// ---- storage and net ---------------------------------------------------------------------------
#include <smdebug/net/impl/aws_config.ipp>
#include <smdebug/storage/impl/local_store.ipp>
#include <smdebug/storage/impl/open_store.ipp>
#include <smdebug/storage/impl/s3_store.ipp>
#include <smdebug/storage/impl/url_openers.ipp>

// ---- query -------------------------------------------------------------------------------------
#include <smdebug/query/impl/batch_reads.ipp>
#include <smdebug/query/impl/create_trial.ipp>
#include <smdebug/query/impl/tensor.ipp>
#include <smdebug/query/impl/trial.ipp>
#include <smdebug/rules/impl/actions.ipp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/s3_store.hpp>

namespace smdebug {
template class Trial<AnyStore>;
template class Tensor<AnyStore>;
template class Trial<LocalStore>;
template class Tensor<LocalStore>;
template class Trial<S3Store>;
template class Tensor<S3Store>;
template std::size_t read_all_records_through(Trial<AnyStore>&, const RecordBatchVisitor&, const ReadOptions&);
}  // namespace smdebug

// ---- writer ------------------------------------------------------------------------------------
#include <smdebug/writer/impl/hook.ipp>
#include <smdebug/writer/impl/hook_config.ipp>

namespace smdebug {
template class Hook<AnyStore>;
template class Hook<LocalStore>;
template class Hook<S3Store>;
}  // namespace smdebug

// ---- rules -------------------------------------------------------------------------------------
// The built-in rules by name have their own translation unit: <smdebug/rules/src.hpp>.

namespace smdebug::detail {
// What the headers of every separately compiled translation unit refer to (core/config.hpp).
extern const int SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_src_hpp_in_one_translation_unit;
const int SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_src_hpp_in_one_translation_unit = 1;
}  // namespace smdebug::detail
