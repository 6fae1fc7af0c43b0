// smdebug_cpp._core's exception translation: a C++ SMDebugError becomes the
// smdebug_cpp.exceptions class of the same name (or the nearest one Python knows) with the C++
// message and the reference's attributes (smdebug_cpp/exceptions.py: _from_cpp).
#include "binding.hpp"

#include <exception>
#include <new>
#include <string>

#include <smdebug/core/errors.hpp>

namespace smdebug_python {
namespace {

using namespace smdebug;

void raise_python(const SMDebugError& e) {
    py::dict attrs;
    if (auto* x = dynamic_cast<const StepNotYetAvailable*>(&e)) {
        attrs["step"] = x->step;
        attrs["mode"] = std::string(mode_name(x->mode));
    } else if (auto* x = dynamic_cast<const StepUnavailable*>(&e)) {
        attrs["step"] = x->step;
        attrs["mode"] = std::string(mode_name(x->mode));
    } else if (auto* x = dynamic_cast<const TensorUnavailableForStep*>(&e)) {
        attrs["tname"] = x->tensor;
        attrs["step"] = x->step;
        attrs["mode"] = std::string(mode_name(x->mode));
        attrs["has_reductions"] = x->has_reductions;
        attrs["reduction"] = x->reduction;
    } else if (auto* x = dynamic_cast<const ShapeUnavailableForStep*>(&e)) {
        attrs["tname"] = x->tensor;
        attrs["step"] = x->step;
        attrs["mode"] = std::string(mode_name(x->mode));
    } else if (auto* x = dynamic_cast<const TensorUnavailable*>(&e)) {
        attrs["tname"] = x->tensor;
    } else if (auto* x = dynamic_cast<const InvalidWorker*>(&e)) {
        attrs["worker"] = x->worker;
    } else if (auto* x = dynamic_cast<const NoMoreData*>(&e)) {
        attrs["step"] = x->step;
        attrs["mode"] = std::string(mode_name(x->mode));
        attrs["last_step"] = x->last_step;
    } else if (auto* x = dynamic_cast<const RuleEvaluationConditionMet*>(&e)) {
        attrs["rule_name"] = x->rule_name;
        attrs["step"] = x->step;
        attrs["end_of_rule"] = x->end_of_rule;
    }
    // The nearest class Python knows, for C++ classes it does not name.
    const char* fallback = dynamic_cast<const SMDebugValueError*>(&e)     ? "SMDebugValueError"
                           : dynamic_cast<const SMDebugTypeError*>(&e)    ? "SMDebugTypeError"
                           : dynamic_cast<const SMDebugRuntimeError*>(&e) ? "SMDebugRuntimeError"
                           : dynamic_cast<const ObjectNotFound*>(&e)      ? "ObjectNotFound"
                           : dynamic_cast<const StorageError*>(&e)        ? "StorageError"
                           : dynamic_cast<const FormatError*>(&e)         ? "FormatError"
                                                                          : "SMDebugError";
    py::object make = py::module_::import("smdebug_cpp.exceptions").attr("_from_cpp");
    py::object exc = make(e.python_name(), py::str(e.what()), attrs, fallback);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

}  // namespace

void bind_errors(py::module_&) {
    py::register_exception_translator([](std::exception_ptr p) {
        if (!p) return;
        try {
            std::rethrow_exception(p);
        } catch (const SMDebugError& e) {
            raise_python(e);
        } catch (const std::bad_alloc&) {
            PyErr_SetString(PyExc_MemoryError, "out of memory");
        }
    });
}

}  // namespace smdebug_python
