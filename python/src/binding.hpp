#pragma once
// The internal interface of smdebug_cpp._core's translation units: the bind_* functions that
// module.cpp's PYBIND11_MODULE calls, one per concept, and the helpers more than one of them uses
// (each defined once, in the bind_*.cpp named beside it).
//
// Every call into a Trial runs with the GIL released and the trial locked (`locked`); results
// become Python objects once the GIL is back. Values are immutable once read and may be used
// from any thread.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/dtype.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/shared_trial.hpp>
#include <smdebug/storage/any_store.hpp>

namespace smdebug_python {

namespace py = pybind11;

using CppTrial = smdebug::Trial<smdebug::AnyStore>;
using SharedCppTrial = smdebug::SharedTrial<smdebug::AnyStore>;
using TrialPtr = std::shared_ptr<SharedCppTrial>;

// ---- the parts of the module (each in bind_<name>.cpp) -------------------------------------------

void bind_errors(py::module_& m);    // the exception translator (SMDebugError -> smdebug_cpp.exceptions)
void bind_values(py::module_& m);    // numpy is imported with the package
void bind_trial(py::module_& m);     // Trial, TensorBase
void bind_rules(py::module_& m);     // BuiltinRule, builtin_rules, validate_rule_params, actions
void bind_writer(py::module_& m);    // StepFileWriter, write_object, read_object, list_keys, remove_object, planned_steps
void bind_config(py::module_& m);    // reduction names and configs, save schedules, collection JSON
void bind_analysis(py::module_& m);  // diagnose, diff
void bind_hook(py::module_& m);      // _Hook

// ---- helpers ---------------------------------------------------------------------------------------

// Runs f(trial) with the GIL released and the trial locked. f must not touch Python objects.
template <class F>
auto locked(SharedCppTrial& box, F&& f) {
    py::gil_scoped_release release;
    return box.with(std::forward<F>(f));
}

// bind_trial.cpp: "TRAIN", "EVAL", "PREDICT" or "GLOBAL" (UsageError otherwise).
smdebug::Mode to_mode(const std::string& name);

// bind_values.cpp: a value as a read-only numpy array sharing the library's buffer (string
// tensors as numpy unicode arrays, a copy); a double as numpy.float64; the library's DType of a
// numpy dtype (native or not), nullopt for kinds the format does not store.
py::object to_numpy(const smdebug::TensorValue& v);
py::object float64(double d);
std::optional<smdebug::DType> numeric_dtype(const py::dtype& dt);

// bind_config.cpp: a Collection as {name, include_regex, tensor_names, save_histogram,
// reduction_config, save_config}; a SaveConfig as {mode name: {save_interval, save_steps,
// start_step, end_step} or None}; a ReductionConfig as {reductions, abs_reductions, norms,
// abs_norms, save_raw_tensor, save_shape}.
py::dict collection_dict(const smdebug::Collection& c);
py::dict save_config_dict(const smdebug::SaveConfig& config);
py::dict reduction_config_dict(const smdebug::ReductionConfig& config);

}  // namespace smdebug_python
