#pragma once
// smdebug_cpp._core._Hook: the C++ writer Hook (include/smdebug/writer/hook.hpp) for the Python
// hooks (smdebug_cpp.pytorch.Hook, smdebug_cpp.Hook). Registered by module.cpp with one call.
#include <pybind11/pybind11.h>

namespace smdebug_python {

void bind_hook(pybind11::module_& m);

}  // namespace smdebug_python
