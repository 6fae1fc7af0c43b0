#pragma once
// The built-in rules over AnyStore, compiled once: in separate mode (docs/compile.md), a program that
// makes built-in rules by name (`make_rule`, rules/registry.hpp) includes this header in exactly one
// translation unit, beside <smdebug/src.hpp>. The CMake target smdebug::compiled compiles it (as a
// translation unit of its own, so that neither needs the memory of both).
#ifndef SMDEBUG_SEPARATE_COMPILATION
#error "<smdebug/rules/src.hpp> is for separate compilation: define SMDEBUG_SEPARATE_COMPILATION for every translation unit of the program (or link smdebug::compiled)"
#endif
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <smdebug/rules/registry.hpp>

namespace smdebug {
template std::unique_ptr<RuntimeRule<AnyStore>> make_rule<AnyStore>(std::string_view, Trial<AnyStore>&, RuleParams,
                                                                     const std::vector<Trial<AnyStore>*>&);
template void invoke<RuntimeRule<AnyStore>>(RuntimeRule<AnyStore>&, std::int64_t);
template InvokeResult invoke_rule<RuntimeRule<AnyStore>>(RuntimeRule<AnyStore>&, const InvokeOptions&);
template InvokeResult invoke_rule<RuntimeRule<AnyStore>>(RuntimeRule<AnyStore>&, std::int64_t, std::optional<std::int64_t>, bool);
}  // namespace smdebug

namespace smdebug::detail {
const int SMDEBUG_SEPARATE_COMPILATION_needs_smdebug_rules_src_hpp_in_one_translation_unit = 1;
}  // namespace smdebug::detail
