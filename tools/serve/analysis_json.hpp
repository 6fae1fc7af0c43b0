#pragma once
// `smdebug diagnose --json` and `smdebug diff --json` of open trials, as text (docs/diagnose.md).
// Defined in tools/cli/diagnose.hpp and tools/cli/diff.hpp, compiled in main.cpp's translation
// unit, which instantiates the analysis (and every built-in rule) for Trial<AnyStore> already: the
// server's translation unit does not instantiate them a second time.
#include <string>

#include <smdebug/query/trial.hpp>
#include <smdebug/storage/any_store.hpp>

namespace cli {

std::string diagnose_json(smdebug::Trial<smdebug::AnyStore>& trial);
std::string diff_json(smdebug::Trial<smdebug::AnyStore>& a, smdebug::Trial<smdebug::AnyStore>& b, double rtol, double atol);

}  // namespace cli
