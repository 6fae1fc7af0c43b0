// smdebug_cpp._core: the C++ engine behind the Python package.
//
// This layer is deliberately thin: what things mean (completeness, planning, reductions, collection
// membership, the parsing of reduction configs, collections and action strings, save schedules) is
// the library's and is asked by the bind_*.cpp files, one per concept (binding.hpp); argument
// checking, defaults and the smdebug-shaped objects live in the Python modules (smdebug_cpp/trials,
// core/, rules/). library.cpp compiles the library's definitions once for the module.
#include "binding.hpp"

#ifndef SMDEBUG_CPP_VERSION
#define SMDEBUG_CPP_VERSION "0.0.0"
#endif

PYBIND11_MODULE(_core, m) {
    namespace sp = smdebug_python;
    m.doc() = "The C++ engine of smdebug_cpp (use the smdebug_cpp.trials / rules modules)";
    m.attr("__version__") = SMDEBUG_CPP_VERSION;
    sp::bind_values(m);    // numpy conversion (and numpy imported with the package)
    sp::bind_errors(m);    // SMDebugError -> smdebug_cpp.exceptions
    sp::bind_trial(m);     // Trial, TensorBase
    sp::bind_rules(m);     // BuiltinRule, builtin_rules, validate_rule_params, actions
    sp::bind_writer(m);    // StepFileWriter, objects in stores, planned_steps
    sp::bind_config(m);    // reduction names and configs, save schedules, collection JSON
    sp::bind_analysis(m);  // diagnose, diff
    sp::bind_hook(m);      // _Hook: the writer of smdebug_cpp.pytorch / smdebug_cpp.Hook
}
