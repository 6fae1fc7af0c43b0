#pragma once
// smdebug_cpp._core._Hook: the C++ writer Hook (include/smdebug/writer/hook.hpp) for the Python
// hooks (smdebug_cpp.pytorch.Hook, smdebug_cpp.Hook). Registered by module.cpp with one call.
#include <pybind11/pybind11.h>

#include <smdebug/core/collection.hpp>

namespace smdebug_python {

void bind_hook(pybind11::module_& m);

// A SaveConfig as {mode name: {save_interval, save_steps, start_step, end_step} or None}, and a
// ReductionConfig as {reductions, abs_reductions, norms, abs_norms, save_raw_tensor, save_shape}.
pybind11::dict save_config_dict(const smdebug::SaveConfig& config);
pybind11::dict reduction_config_dict(const smdebug::ReductionConfig& config);

}  // namespace smdebug_python
