// smdebug_cpp._core: the C++ engine behind the Python package.
//
// This layer is deliberately thin: it owns one SharedTrial<AnyStore> per Python Trial, runs every
// call with the GIL released and the trial locked, and turns results into Python objects once the
// GIL is back. What things mean (completeness, planning, reductions, collection membership, the
// parsing of reduction configs and action strings, save schedules) is the library's and is asked
// here; argument checking, defaults and the smdebug-shaped objects live in the Python modules
// (smdebug_cpp/trials, core/, rules/).
//
// Thread-safety: a Trial refreshes itself from inside queries, so calls on one trial are
// serialised by its SharedTrial (other Python threads keep running: the GIL is released while a
// call waits or reads). Values are immutable once read and may be used from any thread.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <smdebug/query/create_trial.hpp>
#include <smdebug/query/shared_trial.hpp>
#include <smdebug/rules/actions/action_spec.hpp>
#include <smdebug/rules/actions/aws_actions.hpp>
#include <smdebug/rules/invoke.hpp>
#include <smdebug/rules/params.hpp>
#include <smdebug/rules/registry.hpp>
#include <smdebug/smdebug.hpp>
#include <smdebug/writer/save_config.hpp>
#include <smdebug/writer/step_writer.hpp>

#include "bind_hook.hpp"

#ifndef SMDEBUG_CPP_VERSION
#define SMDEBUG_CPP_VERSION "0.0.0"
#endif

namespace py = pybind11;
using namespace smdebug;

void bind_analysis(py::module_& m);  // bind_analysis.cpp

namespace {

using CppTrial = Trial<AnyStore>;
using SharedCppTrial = SharedTrial<AnyStore>;
using TrialPtr = std::shared_ptr<SharedCppTrial>;

// Runs f(trial) with the GIL released and the trial locked. f must not touch Python objects.
template <class F>
auto locked(SharedCppTrial& box, F&& f) {
    py::gil_scoped_release release;
    return box.with(std::forward<F>(f));
}

Mode to_mode(const std::string& name) {
    if (auto m = parse_mode(name)) return *m;
    throw UsageError("mode must be TRAIN, EVAL, PREDICT or GLOBAL, not '" + name + "'");
}

StepQuery step_query(const std::string& mode, const std::optional<std::string>& worker) {
    StepQuery q;
    q.mode = to_mode(mode);
    q.worker = worker;
    return q;
}

// ---- values as numpy arrays -------------------------------------------------------------------

// A read-only array over the value's own buffer: no copy. The capsule holds a TensorValue (which
// shares the buffer's ownership), so the array stays valid after the Trial is gone. String tensors
// become numpy unicode arrays, as the reference returns them (a copy: numpy has no view of them).
py::object to_numpy(const TensorValue& v) {
    std::vector<py::ssize_t> shape(v.shape().begin(), v.shape().end());
    if (v.is_string()) {
        py::list items;
        for (const auto& s : v.strings()) items.append(py::str(s));
        py::module_ np = py::module_::import("numpy");
        py::object arr = np.attr("array")(items, py::arg("dtype") = "str");
        return arr.attr("reshape")(py::tuple(py::cast(shape)));
    }
    // numpy dtypes by DType, looked up once (by name they cost a dictionary search per value).
    // Leaked on purpose: Python objects must not be released after the interpreter has finalised.
    static const auto* dtypes = [] {
        auto* d = new std::array<py::object, 16>();
        for (int i = 0; i <= static_cast<int>(DType::string); ++i)
            if (static_cast<DType>(i) != DType::string) (*d)[i] = py::dtype(std::string(dtype_name(static_cast<DType>(i))));  // numpy's names
        return d;
    }();
    const py::dtype dt = py::reinterpret_borrow<py::dtype>((*dtypes)[static_cast<int>(v.dtype())]);
    if (v.empty() || v.bytes().data() == nullptr) return py::array(dt, shape, std::vector<py::ssize_t>{}, nullptr);
    std::vector<py::ssize_t> strides(shape.size());
    py::ssize_t stride = static_cast<py::ssize_t>(dtype_size(v.dtype()));
    for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= shape[i];
    }
    auto* keep = new TensorValue(v);
    py::capsule owner(keep, [](void* p) { delete static_cast<TensorValue*>(p); });
    py::array arr(dt, shape, strides, static_cast<const void*>(keep->bytes().data()), owner);
    py::detail::array_proxy(arr.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return std::move(arr);
}

py::object float64(double d) {
    static const auto* np_float64 = new py::object(py::module_::import("numpy").attr("float64"));  // leaked: see to_numpy
    return (*np_float64)(d);
}

py::object optional_int(const std::optional<std::int64_t>& v) { return v ? py::object(py::int_(*v)) : py::object(py::none()); }

py::dict collection_dict(const Collection& c) {
    py::dict d;
    d["name"] = c.name;
    d["include_regex"] = c.include_regex;
    d["tensor_names"] = c.tensor_names;
    d["save_histogram"] = c.save_histogram;
    d["reduction_config"] = c.reduction_config ? py::object(smdebug_python::reduction_config_dict(*c.reduction_config)) : py::object(py::none());
    d["save_config"] = c.save_config ? py::object(smdebug_python::save_config_dict(*c.save_config)) : py::object(py::none());
    return d;
}

// ---- exceptions ------------------------------------------------------------------------------

// Builds smdebug_cpp.exceptions.<python_name()> with the C++ message and the reference's
// attributes (smdebug_cpp/exceptions.py: _from_cpp).
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

// ---- Tensor.value: the per-value hot path -----------------------------------------------------

// Python's Tensor (smdebug_cpp/core/tensor.py) derives from this, so value() and
// reduction_value() — called once per value in analysis loops — run no Python frame. The common
// arguments (an int step, ModeKeys.GLOBAL or None, no worker) are read here; anything else goes
// through the Python helpers, which give the reference's TypeError / ValueError.
struct TensorHandle {
    TensorHandle(TrialPtr b, std::string n) : box(std::move(b)), name(std::move(n)) {}
    TrialPtr box;
    std::string name;
};

struct ArgumentHelpers {
    py::object step, mode_name, worker, global_mode;
};
const ArgumentHelpers& argument_helpers() {
    // Leaked on purpose (see to_numpy): imported on first use, when the package is loaded.
    static const auto* h = [] {
        const auto tensor_module = py::module_::import("smdebug_cpp.core.tensor");
        const auto modes_module = py::module_::import("smdebug_cpp.core.modes");
        return new ArgumentHelpers{tensor_module.attr("_step"), modes_module.attr("_mode_name"), tensor_module.attr("_worker"),
                                   modes_module.attr("ModeKeys").attr("GLOBAL")};
    }();
    return *h;
}

std::int64_t step_argument(py::handle step) {
    const auto as_int64 = [](py::handle i) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
        if (overflow) throw py::value_error("step_num is out of range (a 64-bit integer): " + py::repr(i).cast<std::string>());
        return static_cast<std::int64_t>(v);
    };
    if (PyLong_CheckExact(step.ptr())) return as_int64(step);
    return as_int64(argument_helpers().step(step));  // __index__, or the TypeError naming step_num
}

StepQuery query_arguments(py::handle mode, py::handle worker) {
    StepQuery q;
    const auto& h = argument_helpers();
    q.mode = mode.is_none() || mode.is(h.global_mode) ? Mode::GLOBAL : to_mode(h.mode_name(mode).cast<std::string>());
    if (PyUnicode_Check(worker.ptr())) q.worker = worker.cast<std::string>();
    else if (!worker.is_none()) h.worker(worker);  // raises the TypeError
    return q;
}

// ---- rules -----------------------------------------------------------------------------------

std::string param_text(const py::handle& v) {
    if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        std::string s;
        for (auto item : v) s += (s.empty() ? "" : ",") + param_text(item);
        return s;
    }
    return py::str(v).cast<std::string>();
}

RuleParams rule_params(const py::dict& params) {
    RuleParams p;
    for (auto [k, v] : params) {
        if (!py::isinstance<py::str>(k)) throw py::type_error("rule parameter names must be strings");
        if (v.is_none()) continue;
        p.set(k.cast<std::string>(), param_text(v));
    }
    return p;
}

ActionSettings action_settings(const std::string& ca_file, double timeout_seconds, int max_attempts) {
    if (!(timeout_seconds > 0) || timeout_seconds > 86400) throw UsageError("action timeout must be in (0, 86400] seconds");
    ActionSettings s;
    s.ca_file = ca_file;
    s.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_seconds * 1000));
    s.max_attempts = max_attempts;
    return s;
}

// An AWS action (aws_actions.hpp) with the lines it logs kept for Python's logging (the calls run
// without the GIL, so they cannot log through Python themselves).
template <class Action>
struct AwsActionHandle {
    std::shared_ptr<std::vector<std::string>> log = std::make_shared<std::vector<std::string>>();
    std::optional<Action> action;

    AwsActionConfig config() const {
        auto c = AwsActionConfig::from_environment();
        c.log = [lines = log](std::string_view, std::string_view text) { lines->emplace_back(text); };
        return c;
    }
    std::vector<std::string> take_log() { return std::exchange(*log, {}); }
};

// A built-in rule over trials kept alive by this object. The rule references its Trials, so the
// boxes are held here; every call locks the trials it reads.
class BuiltinRule {
public:
    BuiltinRule(const std::string& name, TrialPtr base, const py::dict& params, std::vector<TrialPtr> others,
                const std::string& action_str, const std::vector<std::string>& action_specs, const ActionSettings& settings)
        : base_(std::move(base)), others_(std::move(others)) {
        auto p = rule_params(params);
        py::gil_scoped_release release;
        auto locks = lock_all();
        std::vector<CppTrial*> other_trials;
        for (auto& o : others_) other_trials.push_back(&locks.trial(*o));
        rule_ = make_rule(name, locks.trial(*base_), std::move(p), other_trials);
        if (!action_str.empty()) {
            auto config = AwsActionConfig::from_environment();
            rule_->actions() = Actions::parse(action_str, std::string(rule_->name()), aws_action_factories(std::move(config)));
        }
        // Spec actions (webhook:URL, signal:PID, ...): a failure is one line on stderr, never raised.
        rule_->actions().append(make_actions(action_specs, settings));
    }

    std::string name() const { return std::string(rule_->name()); }

    using Finding = std::tuple<std::int64_t, std::string, std::string>;  // step, tensor, finding

    // invoke_rule: (step, tensor, finding) for every finding of every firing step (only the first
    // firing step's with first_only). With raise_eval_cond, the firing step's are kept for
    // take_fired() when RuleEvaluationConditionMet is raised.
    std::vector<Finding> run(std::int64_t start, std::optional<std::int64_t> end, bool raise_eval_cond, bool first_only) {
        struct FirstFound {};
        std::vector<Finding> fired;
        InvokeOptions o;
        o.start_step = start;
        o.end_step = end;
        o.raise_eval_cond = raise_eval_cond;
        o.on_fire = [&](const RuleFiring& f) {
            for (const auto& x : f.findings) fired.emplace_back(f.step, x.tensor, x.text);
            if (raise_eval_cond) raised_ = fired;
            if (first_only) throw FirstFound{};
        };
        py::gil_scoped_release release;
        auto locks = lock_all();
        try {
            invoke_rule(*rule_, o);
        } catch (const FirstFound&) {
        }
        return fired;
    }

    std::vector<Finding> take_fired() { return std::exchange(raised_, {}); }

    // Rule.invoke(step): RuleEvaluationConditionMet when it fires.
    void invoke_step(std::int64_t step) {
        py::gil_scoped_release release;
        auto locks = lock_all();
        invoke(*rule_, step);
    }

private:
    // The locks of every trial of the rule, taken in one global order (by address): no deadlock
    // between rules sharing trials.
    struct Locks {
        std::vector<SharedCppTrial*> boxes;
        std::vector<std::unique_lock<std::mutex>> held;
        CppTrial& trial(SharedCppTrial& b) {
            const auto i = std::find(boxes.begin(), boxes.end(), &b) - boxes.begin();
            return b.trial(held[static_cast<std::size_t>(i)]);
        }
    };
    Locks lock_all() {
        Locks l{{base_.get()}, {}};
        for (auto& o : others_)
            if (std::find(l.boxes.begin(), l.boxes.end(), o.get()) == l.boxes.end()) l.boxes.push_back(o.get());
        std::sort(l.boxes.begin(), l.boxes.end());
        for (auto* b : l.boxes) l.held.push_back(b->lock());
        return l;
    }

    TrialPtr base_;
    std::vector<TrialPtr> others_;
    std::unique_ptr<RuntimeRule<AnyStore>> rule_;
    std::vector<Finding> raised_;  // what the run that raised RuleEvaluationConditionMet found
};

// ---- writing (smdebug_cpp.core.writer.FileWriter) -----------------------------------------------

template <class T>
TensorValue copy_elements(const py::array& a, Shape shape) {
    auto c = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
    return TensorValue::from<T>(std::span<const T>(c.data(), static_cast<std::size_t>(c.size())), std::move(shape));
}

TensorValue tensor_from_numpy(const py::array& a) {
    Shape shape(a.shape(), a.shape() + a.ndim());
    const std::string name = py::str(a.dtype().attr("name"));
    const char kind = a.dtype().kind();
    if (kind == 'U' || kind == 'S' || kind == 'O') {
        std::vector<std::string> strings;
        for (auto item : a.attr("reshape")(-1)) {
            if (py::isinstance<py::bytes>(item)) strings.push_back(item.cast<std::string>());
            else strings.push_back(py::str(item).cast<std::string>());
        }
        return TensorValue(std::move(shape), std::move(strings));
    }
    if (name == "float16") return copy_elements<float16>(a, shape);
    if (name == "float32") return copy_elements<float>(a, shape);
    if (name == "float64") return copy_elements<double>(a, shape);
    if (name == "int8") return copy_elements<std::int8_t>(a, shape);
    if (name == "int16") return copy_elements<std::int16_t>(a, shape);
    if (name == "int32") return copy_elements<std::int32_t>(a, shape);
    if (name == "int64") return copy_elements<std::int64_t>(a, shape);
    if (name == "uint8") return copy_elements<std::uint8_t>(a, shape);
    if (name == "uint16") return copy_elements<std::uint16_t>(a, shape);
    if (name == "uint32") return copy_elements<std::uint32_t>(a, shape);
    if (name == "uint64") return copy_elements<std::uint64_t>(a, shape);
    if (name == "bool") return copy_elements<bool>(a, shape);
    if (name == "complex64") return copy_elements<std::complex<float>>(a, shape);
    if (name == "complex128") return copy_elements<std::complex<double>>(a, shape);
    throw SMDebugTypeError("cannot save a tensor of numpy dtype " + name);
}

// The files of one (step, worker): records are kept in memory and written by close(), the event
// file before the index file that points into it.
class StepFileWriter {
public:
    StepFileWriter(const std::string& trial_dir, std::int64_t step, std::string worker)
        : store_(open_store(trial_dir)), step_(step), worker_(std::move(worker)) {}

    void write_tensor(const std::string& name, const py::array& value, const std::string& mode, std::int64_t mode_step,
                      std::optional<double> wall_time) {
        if (closed_) throw UsageError("write_tensor after close() of the writer of step " + std::to_string(step_));
        TensorValue v = tensor_from_numpy(value);
        if (!writer_) writer_.emplace(step_, worker_, to_mode(mode), mode_step);
        py::gil_scoped_release release;
        writer_->add_tensor(name, v, wall_time.value_or(wall_time_now()));
    }

    void close() {
        if (closed_) return;
        closed_ = true;
        if (!writer_) return;
        py::gil_scoped_release release;
        writer_->flush(store_);
    }

    std::string event_key() const { return paths::event_key(step_, worker_); }
    std::string index_key() const { return paths::index_key(step_, worker_); }

private:
    AnyStore store_;
    std::int64_t step_;
    std::string worker_;
    std::optional<StepWriter> writer_;
    bool closed_ = false;
};

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "The C++ engine of smdebug_cpp (use the smdebug_cpp.trials / rules modules)";
    m.attr("__version__") = SMDEBUG_CPP_VERSION;
    // numpy is imported with the package, as smdebug does: the first value() of a program (a rule's
    // first step, a loop's first value) then pays for no import (~70 ms: numpy loads its submodules).
    (void)to_numpy(TensorValue::scalar<float>(0.0f));
    bind_analysis(m);

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

    py::class_<TensorHandle>(m, "TensorBase")
        .def(py::init<TrialPtr, std::string>(), py::arg("trial"), py::arg("name"))
        .def(
            "value",
            [](const TensorHandle& h, py::handle step_num, py::handle mode, py::handle worker) {
                const std::int64_t step = step_argument(step_num);
                const StepQuery q = query_arguments(mode, worker);
                return to_numpy(locked(*h.box, [&](CppTrial& t) { return t.tensor(h.name).value(step, q); }));
            },
            py::arg("step_num"), py::arg("mode") = py::none(), py::arg("worker") = py::none(),
            "The saved value: a read-only numpy array sharing memory with the library. mode: a ModeKeys member "
            "(None: GLOBAL); worker=None: the first worker by name that saved it.")
        .def(
            "reduction_value",
            [](const TensorHandle& h, py::handle step_num, py::handle reduction_name, py::handle mode, py::handle worker,
               py::handle abs) {
                const std::int64_t step = step_argument(step_num);
                if (!PyUnicode_Check(reduction_name.ptr()))
                    throw py::type_error("reduction_name must be a string, not " +
                                         std::string(Py_TYPE(reduction_name.ptr())->tp_name));
                const auto reduction = reduction_name.cast<std::string>();
                const StepQuery q = query_arguments(mode, worker);
                const int truth = PyObject_IsTrue(abs.ptr());
                if (truth < 0) throw py::error_already_set();
                const bool absolute = truth == 1;
                return float64(locked(*h.box, [&](CppTrial& t) { return t.tensor(h.name).reduction_value(step, reduction, q, absolute); }));
            },
            py::arg("step_num"), py::arg("reduction_name"), py::arg("mode") = py::none(), py::arg("worker") = py::none(),
            py::arg("abs") = false,
            "A reduction (min, max, mean, prod, std, variance, sum, l1, l2) as numpy float64: the stored one where "
            "the writer saved it, else computed from the value.");

    py::class_<SharedCppTrial, TrialPtr>(m, "Trial")
        .def(py::init([](const std::string& path, const std::string& name, std::optional<std::int64_t> range_begin,
                         std::optional<std::int64_t> range_end, bool cache, bool index_mode,
                         std::optional<double> wait_timeout, std::optional<double> poll_interval,
                         std::optional<std::size_t> max_concurrency, std::optional<std::size_t> max_expanded_elements) {
                 TrialOptions o;
                 o.max_expanded_elements = max_expanded_elements;
                 if (max_concurrency) {
                     if (*max_concurrency < 1 || *max_concurrency > 1024)
                         throw UsageError("max_concurrency must be from 1 to 1024, not " + std::to_string(*max_concurrency));
                     o.max_concurrency = max_concurrency;
                 }
                 o.name = name;
                 o.range_begin = range_begin;
                 o.range_end = range_end;
                 o.cache = cache;
                 o.index_mode = index_mode;
                 o.wait_hint = "create_trial(path, wait_timeout=SECONDS)";
                 if (wait_timeout) {
                     if (std::isnan(*wait_timeout) || *wait_timeout < 0)
                         throw py::value_error("wait_timeout must be None or a non-negative number of seconds");
                     o.wait_for_trial = true;
                     if (*wait_timeout < 1e9)  // math.inf (or beyond ~30 years): no limit
                         o.wait_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*wait_timeout * 1000));
                 }
                 o.on_wait = [](const std::string& line) {  // to the package's logger, once per open
                     py::gil_scoped_acquire gil;
                     py::module_::import("logging").attr("getLogger")("smdebug_cpp").attr("warning")(line);
                 };
                 if (poll_interval) o.poll_interval = std::chrono::milliseconds(static_cast<std::int64_t>(*poll_interval * 1000));
                 py::gil_scoped_release release;
                 return std::make_shared<SharedCppTrial>(std::in_place, [&] { return create_trial(path, std::move(o)); });
             }),
             py::arg("path"), py::arg("name"), py::arg("range_begin") = py::none(), py::arg("range_end") = py::none(),
             py::arg("cache") = false, py::arg("index_mode") = true, py::arg("wait_timeout") = py::none(),
             py::arg("poll_interval") = py::none(), py::arg("max_concurrency") = py::none(),
             py::arg("max_expanded_elements") = py::none())
        .def_property_readonly("name", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.name(); }); })
        .def_property_readonly("path", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.path(); }); })
        .def("tensor_names",
             [](SharedCppTrial& b, std::optional<std::int64_t> step, const std::string& mode, std::vector<std::string> regex,
                std::optional<std::string> collection) {
                 TensorNamesQuery q;
                 q.step = step;
                 q.mode = to_mode(mode);
                 q.regex = std::move(regex);
                 q.collection = std::move(collection);
                 return locked(b, [&](CppTrial& t) { return t.tensor_names(q); });
             })
        .def("steps", [](SharedCppTrial& b, const std::string& mode, bool show_incomplete) {
            const Mode md = to_mode(mode);
            return locked(b, [&](CppTrial& t) { return t.steps(md, show_incomplete); });
        })
        .def("modes", [](SharedCppTrial& b) {
            std::vector<std::string> out;
            for (Mode md : locked(b, [](CppTrial& t) { return t.modes(); })) out.emplace_back(mode_name(md));
            return out;
        })
        .def("mode_modestep", [](SharedCppTrial& b, std::int64_t g) -> py::object {
            auto mm = locked(b, [&](CppTrial& t) { return t.mode_modestep(g); });
            if (!mm) return py::none();
            return py::make_tuple(std::string(mode_name(mm->first)), mm->second);
        })
        .def("global_step", [](SharedCppTrial& b, const std::string& mode, std::int64_t ms) {
            const Mode md = to_mode(mode);
            return optional_int(locked(b, [&](CppTrial& t) { return t.global_step(md, ms); }));
        })
        .def("has_tensor", [](SharedCppTrial& b, const std::string& n) { return locked(b, [&](CppTrial& t) { return t.has_tensor(n); }); })
        .def("check_tensor", [](SharedCppTrial& b, const std::string& n) {
            locked(b, [&](CppTrial& t) { (void)t.tensor(n); });
        })
        .def("has_passed_step", [](SharedCppTrial& b, std::int64_t step, const std::string& mode) {
            const Mode md = to_mode(mode);
            return std::string(step_state_name(locked(b, [&](CppTrial& t) { return t.has_passed_step(step, md); })));
        })
        .def("wait_for_steps", [](SharedCppTrial& b, std::vector<std::int64_t> steps, const std::string& mode, std::optional<double> timeout) {
            const Mode md = to_mode(mode);
            std::optional<std::chrono::milliseconds> to;
            if (timeout) to = std::chrono::milliseconds(static_cast<std::int64_t>(*timeout * 1000));
            locked(b, [&](CppTrial& t) { t.wait_for_steps(steps, md, to); });
        })
        .def("workers", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.workers(); }); })
        .def("known_workers", [](SharedCppTrial& b) {  // no refresh
            return locked(b, [](CppTrial& t) { return std::vector<std::string>(t.index().workers().begin(), t.index().workers().end()); });
        })
        .def_property_readonly("num_workers", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.num_workers(); }); })
        .def("collections", [](SharedCppTrial& b) {
            // In the collections file's order, as smdebug's dict.
            auto [cs, order] = locked(b, [](CppTrial& t) { return std::pair(t.collections(), t.collection_names_in_file_order()); });
            py::dict out;
            for (const auto& n : order) out[py::str(n)] = collection_dict(cs.at(n));  // the order names each once
            return out;
        })
        .def("collection", [](SharedCppTrial& b, const std::string& n) {
            return collection_dict(locked(b, [&](CppTrial& t) { return t.collection(n); }));
        })
        // Tensor names (of a step, of a mode) in a collection that Python changed or made, by the
        // library's membership rule: a name listed in the collection, or matched by one of its
        // include_regex (re.search semantics, core/regex.hpp).
        .def("collection_tensor_names", [](SharedCppTrial& b, std::optional<std::int64_t> step, const std::string& mode,
                                           std::vector<std::string> tensor_names, std::vector<std::string> include_regex) {
            Collection c;
            for (auto& n : tensor_names) c.add_tensor_name(std::move(n));
            TensorNamesQuery q;
            q.step = step;
            q.mode = to_mode(mode);
            return locked(b, [&](CppTrial& t) {
                auto names = t.tensor_names(q);
                std::vector<std::string> matched;  // sorted, as tensor_names answers
                if (!include_regex.empty()) {
                    q.regex = std::move(include_regex);
                    matched = t.tensor_names(q);
                }
                std::erase_if(names, [&](const std::string& n) {
                    return !c.has_tensor_name(n) && !std::binary_search(matched.begin(), matched.end(), n);
                });
                return names;
            });
        })
        .def_property_readonly("last_complete_step", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.last_complete_step(); }); })
        .def_property_readonly("last_index_token", [](SharedCppTrial& b) -> py::object {
            auto tok = locked(b, [](CppTrial& t) { return t.last_index_token(); });
            return tok ? py::object(py::str(*tok)) : py::object(py::none());
        })
        .def_property_readonly("reference_token_step", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.reference_token_step(); }); })
        .def_property_readonly("loaded_all_steps", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.loaded_all_steps(); }); })
        .def_property("dynamic_refresh", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.dynamic_refresh(); }); },
                      [](SharedCppTrial& b, bool on) { locked(b, [&](CppTrial& t) { t.set_dynamic_refresh(on); }); })
        .def("training_ended", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.training_ended(); }); })
        .def("last_step", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.last_step(); }); })
        .def("refresh_data", [](SharedCppTrial& b) { locked(b, [](CppTrial& t) { t.refresh_data(); }); })
        .def("refresh_stats", [](SharedCppTrial& b) {
            auto s = locked(b, [](CppTrial& t) { return t.refresh_stats(); });
            py::dict d;
            d["refreshes"] = s.refreshes;
            d["index_files_listed"] = s.index_files_listed;
            d["index_files_read"] = s.index_files_read;
            d["confirming_listings"] = s.confirming_listings;
            d["confirming_keys_listed"] = s.confirming_keys_listed;
            return d;
        })
        // ---- tensors (by name) ----
        .def("tensor_steps", [](SharedCppTrial& b, const std::string& n, const std::string& mode, bool show_incomplete) {
            const Mode md = to_mode(mode);
            return locked(b, [&](CppTrial& t) { return t.tensor(n).steps(md, show_incomplete); });
        })
        .def("tensor_original_name", [](SharedCppTrial& b, const std::string& n) -> py::object {
            auto o = locked(b, [&](CppTrial& t) { return t.tensor(n).original_name(); });
            return o ? py::object(py::str(*o)) : py::object(py::none());
        })
        .def("tensor_workers", [](SharedCppTrial& b, const std::string& n, std::int64_t step, const std::string& mode) {
            const Mode md = to_mode(mode);
            return locked(b, [&](CppTrial& t) { return t.tensor(n).workers(step, md); });
        })
        .def("tensor_values", [](SharedCppTrial& b, const std::string& n, const std::string& mode, std::optional<std::string> worker) {
            const auto q = step_query(mode, worker);
            auto values = locked(b, [&](CppTrial& t) { return t.tensor(n).values(q); });
            py::dict out;
            for (const auto& [s, v] : values) out[py::int_(s)] = to_numpy(v);
            return out;
        })
        .def("tensor_shape", [](SharedCppTrial& b, const std::string& n, std::int64_t step, const std::string& mode,
                                std::optional<std::string> worker) {
            const auto q = step_query(mode, worker);
            auto shape = locked(b, [&](CppTrial& t) { return t.tensor(n).shape(step, q); });
            py::tuple out(shape.size());
            for (std::size_t i = 0; i < shape.size(); ++i) out[i] = py::int_(shape[i]);
            return out;
        })
        .def("tensor_reduction_values", [](SharedCppTrial& b, const std::string& n, std::int64_t step, const std::string& mode,
                                           std::optional<std::string> worker) {
            const auto q = step_query(mode, worker);
            auto rs = locked(b, [&](CppTrial& t) { return t.tensor(n).reduction_values(step, q); });
            py::dict out;
            for (const auto& r : rs) out[py::make_tuple(r.reduction, r.abs)] = float64(r.value);
            return out;
        })
        .def("tensor_prev_steps", [](SharedCppTrial& b, const std::string& n, std::int64_t step, std::optional<std::size_t> count,
                                     const std::string& mode) {
            const Mode md = to_mode(mode);
            return locked(b, [&](CppTrial& t) { return t.tensor(n).prev_steps(step, count, md); });
        })
        // Long-form rows of one reduction at many global steps, computed in one call: (workers,
        // modes, steps, mode_steps, tensors, values) as lists and a float64 array. `tensors` /
        // `workers` (None: all) select; a (tensor, step, worker) with neither the reduction nor
        // the value saved is left out.
        .def("reduction_rows", [](SharedCppTrial& b, std::vector<std::int64_t> steps, const std::string& reduction, bool abs,
                                  std::optional<std::vector<std::string>> tensors, std::optional<std::vector<std::string>> workers) {
            struct Rows {
                std::vector<std::string> worker, mode, tensor;
                std::vector<std::int64_t> step, mode_step;
                std::vector<double> value;
            } rows;
            std::set<std::string> only_tensors, only_workers;
            if (tensors) only_tensors.insert(tensors->begin(), tensors->end());
            if (workers) only_workers.insert(workers->begin(), workers->end());
            locked(b, [&](CppTrial& t) {
                // Requests of many steps go to one batched read (Trial::read: one pass over each
                // event file, files in parallel, each value reduced and released as it comes).
                constexpr std::size_t batch = 4096;
                std::vector<ValueRequest> requests;
                std::vector<std::pair<std::string, std::int64_t>> mode_of;  // (mode, mode step) per request
                auto flush = [&] {
                    const auto results = t.read(requests);
                    for (std::size_t i = 0; i < results.size(); ++i) {
                        if (results[i].error) {
                            try {
                                std::rethrow_exception(results[i].error);
                            } catch (const TensorUnavailableForStep&) {
                                continue;  // only some reductions were saved there: no row
                            }
                        }
                        rows.worker.push_back(*requests[i].query.worker);
                        rows.mode.push_back(mode_of[i].first);
                        rows.step.push_back(requests[i].step);
                        rows.mode_step.push_back(mode_of[i].second);
                        rows.tensor.push_back(std::move(requests[i].tensor));
                        rows.value.push_back(*results[i].reduced);
                    }
                    requests.clear();
                    mode_of.clear();
                };
                for (const auto g : steps) {
                    const auto mm = t.mode_modestep(g);
                    const std::string mode(mode_name(mm ? mm->first : Mode::GLOBAL));
                    const std::int64_t mode_step = mm ? mm->second : g;
                    TensorNamesQuery q;
                    q.step = g;
                    std::vector<std::pair<std::string, std::string>> pairs;  // (tensor, worker), rows in this order
                    for (const auto& name : t.tensor_names(q)) {
                        if (tensors && !only_tensors.contains(name)) continue;
                        for (const auto& w : t.tensor(name).workers(g))
                            if (!workers || only_workers.contains(w)) pairs.emplace_back(name, w);
                    }
                    std::sort(pairs.begin(), pairs.end());
                    for (auto& [name, w] : pairs) {
                        requests.push_back({std::move(name), g, StepQuery{Mode::GLOBAL, std::move(w)}, ReductionSpec{reduction, abs}});
                        mode_of.emplace_back(mode, mode_step);
                    }
                    if (requests.size() >= batch) flush();
                }
                flush();
            });
            py::array_t<double> values(static_cast<py::ssize_t>(rows.value.size()));
            std::copy(rows.value.begin(), rows.value.end(), values.mutable_data());
            py::array_t<std::int64_t> step_arr(static_cast<py::ssize_t>(rows.step.size())), ms_arr(static_cast<py::ssize_t>(rows.step.size()));
            std::copy(rows.step.begin(), rows.step.end(), step_arr.mutable_data());
            std::copy(rows.mode_step.begin(), rows.mode_step.end(), ms_arr.mutable_data());
            return py::make_tuple(rows.worker, rows.mode, step_arr, ms_arr, rows.tensor, values);
        }, py::arg("steps"), py::arg("reduction"), py::arg("abs"), py::arg("tensors") = py::none(), py::arg("workers") = py::none())
        // Many tensors at many steps in one planned read: {name: {step: array}}.
        .def("read_values", [](SharedCppTrial& b, std::vector<std::pair<std::string, std::vector<std::int64_t>>> wanted,
                               const std::string& mode, std::optional<std::string> worker) {
            const auto q = step_query(mode, worker);
            auto values = locked(b, [&](CppTrial& t) { return t.values(wanted, q); });
            py::dict out;
            for (const auto& [n, by_step] : values) {
                py::dict steps;
                for (const auto& [s, v] : by_step) steps[py::int_(s)] = to_numpy(v);
                out[py::str(n)] = steps;
            }
            return out;
        })
        // Many tensors at one step in one batched read: {name: array}.
        .def("values_at", [](SharedCppTrial& b, std::int64_t step, std::vector<std::string> names, const std::string& mode,
                             std::optional<std::string> worker) {
            const auto q = step_query(mode, worker);
            auto values = locked(b, [&](CppTrial& t) { return t.values_at(step, names, q); });
            py::dict out;
            for (const auto& [n, v] : values) out[py::str(n)] = to_numpy(v);
            return out;
        });

    py::class_<BuiltinRule>(m, "BuiltinRule")
        .def(py::init([](const std::string& name, TrialPtr base, const py::dict& params, std::vector<TrialPtr> others,
                         const std::string& action_str, const std::vector<std::string>& actions, const std::string& ca_file, double timeout) {
                 return std::make_unique<BuiltinRule>(name, std::move(base), params, std::move(others), action_str, actions,
                                                      action_settings(ca_file, timeout, 3));
             }),
             py::arg("name"), py::arg("base_trial"), py::arg("params"), py::arg("other_trials"), py::arg("action_str"),
             py::arg("actions") = std::vector<std::string>{}, py::arg("ca_file") = "", py::arg("timeout") = 10.0)
        .def_property_readonly("name", &BuiltinRule::name)
        .def("run", &BuiltinRule::run, py::arg("start_step"), py::arg("end_step"), py::arg("raise_eval_cond"),
             py::arg("first_only") = false)
        .def("take_fired", &BuiltinRule::take_fired)
        .def("invoke", &BuiltinRule::invoke_step, py::arg("step"));

    py::class_<StepFileWriter>(m, "StepFileWriter")
        .def(py::init<const std::string&, std::int64_t, std::string>(), py::arg("trial_dir"), py::arg("step"), py::arg("worker"))
        .def("write_tensor", &StepFileWriter::write_tensor, py::arg("name"), py::arg("value"), py::arg("mode"),
             py::arg("mode_step"), py::arg("wall_time") = py::none())
        .def("close", &StepFileWriter::close)
        .def_property_readonly("event_key", &StepFileWriter::event_key)
        .def_property_readonly("index_key", &StepFileWriter::index_key);

    // Writes `data` to `key` of the trial at `trial_dir` (a folder or s3:// URL), atomically.
    m.def("write_object", [](const std::string& trial_dir, const std::string& key, const py::bytes& data) {
        std::string bytes = data;
        py::gil_scoped_release release;
        open_store(trial_dir).write(key, std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
    });
    // Keys under `prefix` of the store at `url` (after `start_after`), and removing one.
    m.def("list_keys", [](const std::string& url, const std::string& prefix, const std::string& start_after) {
        py::gil_scoped_release release;
        return open_store(url).list(prefix, start_after);
    });
    // The complete global steps of the trial at `url` and its workers, as the library answers them
    // (Trial::steps(): docs/semantics.md's completeness rule, end of training included) — what a
    // Dask graph is planned from, so that it holds exactly the steps the single-process package
    // returns. ([steps], [workers]), sorted. Reads the trial's index (as opening it does).
    m.def("planned_steps", [](const std::string& url) {
        std::vector<std::int64_t> complete;
        std::vector<std::string> workers;
        {
            py::gil_scoped_release release;
            auto trial = create_trial(url);
            complete = trial.steps();
            workers = trial.workers();
        }
        std::sort(workers.begin(), workers.end());
        return py::make_tuple(complete, workers);
    });
    m.def("remove_object", [](const std::string& url, const std::string& key) {
        py::gil_scoped_release release;
        open_store(url).remove(key);
    });
    m.def("index_key", [](std::int64_t step, const std::string& worker) { return paths::index_key(step, worker); });
    // The reduction names (core/reductions.hpp): the basic ones, then the norms; and the stored
    // reductions' tensor names (format/reduction_names.hpp), so that Python does not spell them again.
    m.def("reduction_names", [] {
        std::vector<std::string> basic, norms;
        for (int i = 0; i <= static_cast<int>(Reduction::l2); ++i) {
            const auto r = static_cast<Reduction>(i);
            (r == Reduction::l1 || r == Reduction::l2 ? norms : basic).emplace_back(reduction_name(r));
        }
        return py::make_tuple(basic, norms);
    });
    // ReductionConfig (core/collection.hpp): the collection file's object {"reductions": "min,l2_norm,abs_mean",
    // "save_raw_tensor": ..., "save_shape": ...} as JSON text, parsed and checked by the library
    // (writer/save_config.hpp: parse_reduction_config); and the four lists back as that string.
    m.def("parse_reduction_config", [](const std::string& json_text) {
        boost::system::error_code ec;
        const auto v = boost::json::parse(json_text, ec);
        if (ec || !v.is_object()) throw SMDebugValueError("ReductionConfig: params=" + json_text + " must be dict");
        const auto r = parse_reduction_config(v.get_object(), "ReductionConfig");
        py::dict d;
        d["reductions"] = r.reductions;
        d["abs_reductions"] = r.abs_reductions;
        d["norms"] = r.norms;
        d["abs_norms"] = r.abs_norms;
        d["save_raw_tensor"] = r.save_raw_tensor;
        d["save_shape"] = r.save_shape;
        return d;
    }, py::arg("json_text"));
    m.def("reductions_string", [](std::vector<std::string> reductions, std::vector<std::string> abs_reductions,
                                  std::vector<std::string> norms, std::vector<std::string> abs_norms) {
        const auto check = [](const std::vector<std::string>& items, const auto& allowed, const char* what) {
            for (const auto& item : items)
                if (std::find(allowed.begin(), allowed.end(), item) == allowed.end()) {
                    std::string names;
                    for (const auto& a : allowed) names += (names.empty() ? "" : ",") + std::string(a);
                    throw SMDebugValueError(std::string(what) + " can only be one of " + names + ", not '" + item + "'");
                }
        };
        check(reductions, smdebug::reduction_names, "reductions");
        check(abs_reductions, smdebug::reduction_names, "abs_reductions");
        check(norms, norm_names, "norms");
        check(abs_norms, norm_names, "abs_norms");
        ReductionConfig r{std::move(reductions), std::move(abs_reductions), std::move(norms), std::move(abs_norms)};
        return r.reductions_string();
    }, py::arg("reductions"), py::arg("abs_reductions"), py::arg("norms"), py::arg("abs_norms"));
    // SaveConfigMode::should_save (docs/format.md §9.1): whether a mode step is saved.
    m.def("should_save_step", [](std::int64_t save_interval, std::vector<std::int64_t> save_steps, std::int64_t start_step,
                                 std::optional<std::int64_t> end_step, std::int64_t mode_step) {
        SaveConfigMode c{save_interval, std::move(save_steps), start_step, end_step};
        return c.should_save(mode_step);
    }, py::arg("save_interval"), py::arg("save_steps"), py::arg("start_step"), py::arg("end_step"), py::arg("mode_step"));
    // The reference's action string (rules/actions/actions.hpp: Actions::parse), lower-cased by
    // the caller as the reference does: ([(name, training_job_prefix or endpoint)], [log lines]).
    // Python builds the AWS actions from the entries; the log lines go to its logger.
    m.def("parse_actions", [](const std::string& action_str, const std::string& rule) {
        std::vector<std::pair<std::string, std::string>> entries;
        std::vector<std::string> log;
        Actions::Factories f;
        f.stop_training = [&](const std::string&, const std::string& prefix) {
            entries.emplace_back("stoptraining", prefix);
            return Actions::Action([](const RuleFiring&) {});
        };
        f.message = [&](const std::string&, const std::string& protocol, const std::string& endpoint) {
            entries.emplace_back(protocol, endpoint);
            return Actions::Action([](const RuleFiring&) {});
        };
        f.log = [&](std::string_view, std::string_view text) { log.emplace_back(text); };
        (void)Actions::parse(action_str, rule, f);
        return py::make_tuple(entries, log);
    }, py::arg("action_str"), py::arg("rule_name"));
    m.def("reductions_prefix", [] { return std::string(reductions_prefix); });
    m.def("reduction_tensor_name", [](const std::string& tensor, const std::string& reduction, bool abs) {
        return reduction_tensor_name(tensor, reduction, abs);
    }, py::arg("tensor"), py::arg("reduction"), py::arg("abs"));
    m.def("parse_reduction_tensor_name", [](const std::string& name) -> py::object {
        const auto parsed = parse_reduction_tensor_name(name);
        if (!parsed) return py::none();
        return py::make_tuple(parsed->tensor, parsed->reduction, parsed->abs);
    }, py::arg("name"));
    m.def("event_key", [](std::int64_t step, const std::string& worker) { return paths::event_key(step, worker); });

    m.def("builtin_rules", [] {
        py::list out;
        for (const auto& r : builtin_rules()) {
            py::list params;
            for (const auto& p : r.parameters)
                params.append(py::make_tuple(std::string(p.name), std::string(p.default_value), std::string(p.meaning)));
            out.append(py::make_tuple(std::string(r.name), std::string(r.fires_when), params, r.needs_other_trial,
                                      is_step_local_rule(r.name)));
        }
        return out;
    });
    // One AWS action of an action string (smdebug_cpp.rules.action.Actions.invoke).
    // The reference's MessageAction / StopTrainingAction (smdebug_cpp/rules/action/*.py): the AWS
    // calls happen here, with the GIL released; every failure is logged (take_log()) and swallowed.
    py::class_<AwsActionHandle<SnsMessageAction>>(m, "SnsMessageAction")
        .def(py::init([](const std::string& rule, const std::string& protocol, const std::string& endpoint) {
                 auto h = std::make_unique<AwsActionHandle<SnsMessageAction>>();
                 auto config = h->config();
                 py::gil_scoped_release release;
                 h->action.emplace(std::move(config), rule, protocol, endpoint);
                 return h;
             }),
             py::arg("rule"), py::arg("protocol"), py::arg("endpoint"))
        .def_property_readonly("topic_arn", [](const AwsActionHandle<SnsMessageAction>& h) -> py::object {
            const auto& arn = h.action->topic_arn();
            return arn.empty() ? py::object(py::none()) : py::object(py::str(arn));
        })
        .def_property_readonly("subscription_existed", [](const AwsActionHandle<SnsMessageAction>& h) { return h.action->subscription_existed(); })
        .def_property_readonly("subscription_response", [](const AwsActionHandle<SnsMessageAction>& h) { return h.action->subscription_response(); })
        .def("publish", [](const AwsActionHandle<SnsMessageAction>& h, const std::string& finding) {
            py::gil_scoped_release release;
            return h.action->publish(finding);
        })
        .def("take_log", &AwsActionHandle<SnsMessageAction>::take_log);
    py::class_<AwsActionHandle<StopTrainingJobAction>>(m, "StopTrainingJobAction")
        .def(py::init([](const std::string& rule, const std::string& prefix) {
                 auto h = std::make_unique<AwsActionHandle<StopTrainingJobAction>>();
                 auto config = h->config();
                 py::gil_scoped_release release;
                 h->action.emplace(std::move(config), rule, prefix);
                 return h;
             }),
             py::arg("rule"), py::arg("prefix"))
        .def_property_readonly("found_jobs", [](const AwsActionHandle<StopTrainingJobAction>& h) { return h.action->found_jobs(); })
        .def("stop", [](const AwsActionHandle<StopTrainingJobAction>& h) {
            py::gil_scoped_release release;
            return h.action->stop();
        })
        .def("take_log", &AwsActionHandle<StopTrainingJobAction>::take_log);
    // One action from a spec (smdebug_cpp.rules.action.Action): checked at once, run per firing.
    m.def("check_action_spec", [](const std::string& spec) { (void)make_action(spec); return describe_action(spec); });
    m.def("run_action_spec", [](const std::string& spec, const std::string& rule, std::int64_t step, const std::string& message,
                                const std::string& mode, std::int64_t mode_step, const std::string& tensor, const std::string& trial,
                                const std::string& ca_file, double timeout, int max_attempts) {
        const auto settings = action_settings(ca_file, timeout, max_attempts);
        RuleFiring f{rule, step, message};
        f.mode = mode;
        f.mode_step = mode_step;
        f.tensor = tensor;
        f.trial = trial;
        py::gil_scoped_release release;
        make_action(spec, settings)(f);
    });
    m.def("validate_rule_params", [](const std::string& name, const py::dict& params) {
        return validate_rule_params(name, rule_params(params));
    });

    smdebug_python::bind_hook(m);  // _Hook: the writer for smdebug_cpp.pytorch / smdebug_cpp.Hook (bind_hook.cpp)
}
