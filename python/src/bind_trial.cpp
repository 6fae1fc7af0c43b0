// smdebug_cpp._core.Trial and TensorBase: one SharedTrial<AnyStore> per Python Trial
// (smdebug_cpp/trials/trial.py), every call run with the GIL released and the trial locked.
//
// Thread-safety: a Trial refreshes itself from inside queries, so calls on one trial are
// serialised by its SharedTrial (other Python threads keep running: the GIL is released while a
// call waits or reads). What things mean (completeness, planning, reductions, collection
// membership) is the library's and is asked here; argument checking, defaults and the
// smdebug-shaped objects live in the Python modules.
#include "binding.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <smdebug/format/paths.hpp>
#include <smdebug/query/create_trial.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/smdebug.hpp>

namespace smdebug_python {

using namespace smdebug;

Mode to_mode(const std::string& name) {
    if (auto m = parse_mode(name)) return *m;
    throw UsageError("mode must be TRAIN, EVAL, PREDICT or GLOBAL, not '" + name + "'");
}

namespace {

StepQuery step_query(const std::string& mode, const std::optional<std::string>& worker) {
    StepQuery q;
    q.mode = to_mode(mode);
    q.worker = worker;
    return q;
}

py::object optional_int(const std::optional<std::int64_t>& v) { return v ? py::object(py::int_(*v)) : py::object(py::none()); }

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

}  // namespace

void bind_trial(py::module_& m) {
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
        // The key smdebug reports as last_index_token (docs/semantics.md §2.6): the index file of
        // reference_token_step() of the last worker by name, or None before a step is complete.
        .def_property_readonly("reference_index_key", [](SharedCppTrial& b) -> py::object {
            auto key = locked(b, [](CppTrial& t) -> std::optional<std::string> {
                const auto& workers = t.index().workers();
                if (t.reference_token_step() < 0 || workers.empty()) return std::nullopt;
                return paths::index_key(t.reference_token_step(), *std::max_element(workers.begin(), workers.end()));
            });
            return key ? py::object(py::str(*key)) : py::object(py::none());
        })
        .def_property_readonly("reference_token_step", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.reference_token_step(); }); })
        .def_property_readonly("loaded_all_steps", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.loaded_all_steps(); }); })
        .def_property("dynamic_refresh", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.dynamic_refresh(); }); },
                      [](SharedCppTrial& b, bool on) { locked(b, [&](CppTrial& t) { t.set_dynamic_refresh(on); }); })
        .def("training_ended", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.training_ended(); }); })
        .def("last_step", [](SharedCppTrial& b) { return locked(b, [](CppTrial& t) { return t.last_step(); }); })
        .def("refresh_data", [](SharedCppTrial& b) { locked(b, [](CppTrial& t) { t.refresh_data(); }); })
        // One refresh as the queries do it (Trial::maybe_refresh: the dynamic-refresh switch, the
        // end of training and its delay are the library's).
        .def("maybe_refresh", [](SharedCppTrial& b) { locked(b, [](CppTrial& t) { t.maybe_refresh(); }); })
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
        // `workers` (None: all), `mode` (None or GLOBAL: every step) and `collection` select; a
        // (tensor, step, worker) with neither the reduction nor the value saved is left out.
        .def("reduction_rows", [](SharedCppTrial& b, std::vector<std::int64_t> steps, const std::string& reduction, bool abs,
                                  std::optional<std::vector<std::string>> tensors, std::optional<std::vector<std::string>> workers,
                                  const std::optional<std::string>& mode, std::optional<std::string> collection) {
            const std::optional<Mode> only_mode = mode ? std::optional<Mode>(to_mode(*mode)) : std::nullopt;
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
                    if (only_mode && *only_mode != Mode::GLOBAL && (!mm || mm->first != *only_mode)) continue;
                    const std::string mode(mode_name(mm ? mm->first : Mode::GLOBAL));
                    const std::int64_t mode_step = mm ? mm->second : g;
                    TensorNamesQuery q;
                    q.step = g;
                    q.collection = collection;  // the library's membership rule (no tensor for a name the trial lacks)
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
        }, py::arg("steps"), py::arg("reduction"), py::arg("abs"), py::arg("tensors") = py::none(), py::arg("workers") = py::none(),
           py::arg("mode") = py::none(), py::arg("collection") = py::none())
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
}

}  // namespace smdebug_python
