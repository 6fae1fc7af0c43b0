// smdebug_cpp._core._Hook: the C++ writer Hook<AnyStore> for the Python hooks.
//
// Python (smdebug_cpp/pytorch/hook.py, smdebug_cpp/hook.py) registers the framework's hooks and
// hands tensors over as numpy arrays (a CPU torch tensor's .numpy() is a view of its buffer, not a
// copy); everything else is the C++ Hook's: which collections save at a step, the reductions,
// encoding, CRCs, the index and collection files, the background writer and its back-pressure,
// S3 uploads. The array's buffer is read once, into the step's buffer, with the GIL released.
//
// Per step the Python side calls next_step(), which returns whether any included collection saves
// at the new step: on other steps nothing else is called (the step counter is the whole cost).
//
// Thread safety: calls are serialised by a mutex (gradient hooks may run on autograd threads).
// The GIL is never taken while the mutex is held: it is released first, then the mutex locked.
#include "binding.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <smdebug/core/regex.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/open_store.hpp>
#include <smdebug/writer/collection_manager.hpp>
#include <smdebug/writer/hook.hpp>
#include <smdebug/writer/save_config.hpp>

namespace py = pybind11;
using namespace smdebug;

namespace smdebug_python {
namespace {

using CppHook = Hook<AnyStore>;

Mode mode_from(const std::string& name) {
    if (auto m = parse_mode(name)) return *m;
    throw SMDebugValueError("Invalid mode " + name + ". Valid modes are TRAIN,EVAL,PREDICT,GLOBAL.");
}

// ---- options from the Python side's plain dicts (smdebug_cpp/_hook_options.py builds them) --------

std::vector<std::string> strings(py::handle h) { return h.cast<std::vector<std::string>>(); }

SaveConfigMode save_config_mode_from(const py::dict& d) {
    SaveConfigMode m;
    m.save_interval = d["save_interval"].cast<std::int64_t>();
    m.start_step = d["start_step"].cast<std::int64_t>();
    if (!d["end_step"].is_none()) m.end_step = d["end_step"].cast<std::int64_t>();
    m.save_steps = d["save_steps"].cast<std::vector<std::int64_t>>();
    if (m.save_interval <= 0)
        throw SMDebugValueError("save_interval=" + std::to_string(m.save_interval) + " must be a positive integer");
    return m;
}

// {"TRAIN": {...} or None, ...}: a mode left out or None is not configured.
SaveConfig save_config_from(const py::dict& d) {
    SaveConfig c;
    for (auto item : d) {
        const Mode m = mode_from(item.first.cast<std::string>());
        if (!item.second.is_none()) c[m] = save_config_mode_from(item.second.cast<py::dict>());
    }
    return c;
}

ReductionConfig reduction_config_from(const py::dict& d) {
    ReductionConfig listed;
    listed.reductions = strings(d["reductions"]);
    listed.abs_reductions = strings(d["abs_reductions"]);
    listed.norms = strings(d["norms"]);
    listed.abs_norms = strings(d["abs_norms"]);
    ReductionConfig r;  // through the string form: an unknown name raises SMDebugValueError naming it
    r.add_reductions_string(listed.reductions_string());
    r.save_raw_tensor = d["save_raw_tensor"].cast<bool>();
    r.save_shape = d["save_shape"].cast<bool>();
    return r;
}

void check_patterns(const std::vector<std::string>& patterns) {
    for (const auto& p : patterns) detail::check_regex(p);  // SMDebugValueError on a bad one
}

// Keys the Python side may leave out take HookOptions' defaults.
void apply_options(HookOptions& o, const py::dict& d) {
    if (d.contains("save_config") && !d["save_config"].is_none()) o.save_config = save_config_from(d["save_config"].cast<py::dict>());
    if (d.contains("reduction_config") && !d["reduction_config"].is_none())
        o.reduction_config = reduction_config_from(d["reduction_config"].cast<py::dict>());
    if (d.contains("include_regex") && !d["include_regex"].is_none()) {
        o.include_regex = strings(d["include_regex"]);
        check_patterns(*o.include_regex);
    }
    if (d.contains("include_collections") && !d["include_collections"].is_none()) o.include_collections = strings(d["include_collections"]);
    if (d.contains("save_all")) o.save_all = o.save_all || d["save_all"].cast<bool>();
    if (d.contains("include_workers")) {
        const auto w = d["include_workers"].cast<std::string>();
        if (w != "one" && w != "all") throw SMDebugValueError("include_workers=" + w + " must be \"one\" or \"all\"");
        o.include_workers = w == "all" ? IncludeWorkers::all : IncludeWorkers::one;
    }
    if (d.contains("rank")) o.rank = d["rank"].cast<int>();
    if (d.contains("world_size")) o.world_size = d["world_size"].cast<int>();
    if (d.contains("worker_name")) o.worker_name = d["worker_name"].cast<std::string>();
    if (d.contains("export_tensorboard")) o.export_tensorboard = o.export_tensorboard || d["export_tensorboard"].cast<bool>();
    if (d.contains("tensorboard_dir") && !d["tensorboard_dir"].is_none()) o.tensorboard_dir = d["tensorboard_dir"].cast<std::string>();
    if (d.contains("enabled") && !d["enabled"].is_none()) o.enabled = d["enabled"].cast<bool>();
    if (d.contains("background_writer")) o.background_writer = d["background_writer"].cast<bool>();
    if (d.contains("write_end_marker") && !d["write_end_marker"].is_none()) o.write_end_marker = d["write_end_marker"].cast<bool>();
    if (d.contains("anomaly_window")) {
        const auto k = d["anomaly_window"].cast<std::int64_t>();
        if (k < 0) throw SMDebugValueError("anomaly_window=" + std::to_string(k) + " must be 0 (off) or a number of steps");
        o.anomaly_window = static_cast<std::size_t>(k);
    }
    if (d.contains("anomaly_window_bytes")) o.anomaly_window_bytes = d["anomaly_window_bytes"].cast<std::size_t>();
}

// ---- arrays --------------------------------------------------------------------------------------

DType dtype_of(const py::array& a, const std::string& name) {
    const py::dtype dt = a.dtype();
    const char order = dt.attr("byteorder").cast<std::string>().front();
    if (order == '>') throw SMDebugTypeError("tensor " + name + ": big-endian arrays are not stored (convert it to native order)");
    if (const auto d = numeric_dtype(dt)) return *d;
    throw SMDebugTypeError("tensor " + name + ": dtype " + py::str(static_cast<py::handle>(dt)).cast<std::string>() +
                           " cannot be stored by smdebug (float16/32/64, int8-64, uint8-64, bool, complex64/128)");
}

// A C-contiguous array over `obj` (numpy arrays as they are; others through numpy.asarray).
py::array contiguous(py::handle obj) {
    auto a = py::reinterpret_borrow<py::object>(obj);
    if (!py::isinstance<py::array>(a)) a = py::module_::import("numpy").attr("asarray")(a);
    py::array arr = a.cast<py::array>();
    if (!(arr.flags() & py::array::c_style)) arr = py::array::ensure(arr, py::array::c_style);
    return arr;
}

struct ArrayView {
    const void* data;
    Shape shape;
    DType dtype;
};

ArrayView view_of(const py::array& a, const std::string& name) {
    ArrayView v{a.data(), {}, dtype_of(a, name)};
    for (py::ssize_t i = 0; i < a.ndim(); ++i) v.shape.push_back(static_cast<std::size_t>(a.shape(i)));
    return v;
}

// ---- the hook --------------------------------------------------------------------------------------

class PyHook {
public:
    explicit PyHook(std::unique_ptr<CppHook> hook) : h_(std::move(hook)) {}

    CppHook& hook() { return *h_; }

    // Closes the current step and begins the next; returns whether the new step saves anything.
    bool next_step() {
        py::gil_scoped_release release;  // a full upload window makes next_step wait (back-pressure)
        std::scoped_lock lock(mu_);
        h_->next_step();
        return refresh_locked();
    }

    // Re-reads the step's active collections (after the collections changed).
    bool refresh() {
        std::scoped_lock lock(mu_);
        return refresh_locked();
    }

    bool saving() const noexcept { return saving_; }

    void set_mode(const std::string& mode) {
        std::scoped_lock lock(mu_);
        h_->set_mode(mode_from(mode));
    }

    // Whether `name` belongs to a collection that saves at this step: the rule of the tensors the
    // hook records itself (module inputs/outputs, parameters, gradients; they never join `default`).
    bool wants(const std::string& name) {
        if (!saving_) return false;
        std::scoped_lock lock(mu_);
        return wants_locked(name);
    }

    // A tensor the hook records itself: saved when wants(name).
    bool save_recorded(const std::string& name, py::handle value) {
        if (!saving_) return false;
        {
            std::scoped_lock lock(mu_);
            if (!wants_locked(name)) return false;
        }
        const py::array a = contiguous(value);
        const ArrayView v = view_of(a, name);
        py::gil_scoped_release release;
        std::scoped_lock lock(mu_);
        return h_->save_tensor(name, v.data, v.shape, v.dtype);
    }

    // save_tensor(name, value, collections): the reference's save_tensor: the tensor joins the
    // named collections, which are created and included; without them a tensor no collection
    // describes joins `default` (Hook::save_tensor). Saved when one of its collections saves now.
    bool save_tensor(const std::string& name, py::handle value, const std::vector<std::string>& collections) {
        const py::array a = contiguous(value);
        const ArrayView v = view_of(a, name);
        py::gil_scoped_release release;
        std::scoped_lock lock(mu_);
        for (const auto& c : collections) {  // the reference saves a tensor into the collections it names
            h_->collection(c).add_tensor_name(name);
            if (!h_->collections().included(c)) h_->include_collection(c);
        }
        const bool saved = h_->save_tensor(name, v.data, v.shape, v.dtype);
        refresh_locked();  // save_tensor may have included a collection
        return saved;
    }

    void save_scalar(const std::string& name, py::handle value, std::optional<double> timestamp) {
        py::array a = contiguous(value);
        if (a.dtype().kind() == 'f' && a.dtype().itemsize() == 2) a = a.attr("astype")("float32").cast<py::array>();
        if (a.size() != 1) throw SMDebugTypeError("scalar/" + name + " has non scalar value of " + std::to_string(a.size()) + " elements");
        const ArrayView v = view_of(a, name);
        py::gil_scoped_release release;
        std::scoped_lock lock(mu_);
        switch (v.dtype) {
            case DType::float32: h_->save_scalar(name, *static_cast<const float*>(v.data), timestamp); break;
            case DType::float64: h_->save_scalar(name, *static_cast<const double*>(v.data), timestamp); break;
            case DType::int8: h_->save_scalar(name, *static_cast<const std::int8_t*>(v.data), timestamp); break;
            case DType::int16: h_->save_scalar(name, *static_cast<const std::int16_t*>(v.data), timestamp); break;
            case DType::int32: h_->save_scalar(name, *static_cast<const std::int32_t*>(v.data), timestamp); break;
            case DType::int64: h_->save_scalar(name, *static_cast<const std::int64_t*>(v.data), timestamp); break;
            case DType::uint8: h_->save_scalar(name, *static_cast<const std::uint8_t*>(v.data), timestamp); break;
            case DType::uint16: h_->save_scalar(name, *static_cast<const std::uint16_t*>(v.data), timestamp); break;
            case DType::uint32: h_->save_scalar(name, *static_cast<const std::uint32_t*>(v.data), timestamp); break;
            case DType::uint64: h_->save_scalar(name, *static_cast<const std::uint64_t*>(v.data), timestamp); break;
            case DType::boolean: h_->save_scalar(name, *static_cast<const bool*>(v.data), timestamp); break;
            default: throw SMDebugTypeError("scalar/" + name + ": a " + std::string(dtype_name(v.dtype)) + " value is not a real scalar");
        }
    }

    void flush() {
        py::gil_scoped_release release;
        std::scoped_lock lock(mu_);
        h_->flush();
    }

    void close() {
        py::gil_scoped_release release;
        std::scoped_lock lock(mu_);
        h_->close();
        saving_ = false;
    }

    // ---- collections ----

    std::vector<std::string> collection_names() {
        std::scoped_lock lock(mu_);
        std::vector<std::string> out;
        for (const auto& c : h_->collections().snapshot(1).collections) out.push_back(c.name);
        return out;
    }

    py::dict collection(const std::string& name, bool create) {
        Collection c;
        {
            std::scoped_lock lock(mu_);
            const Collection* found = h_->collections().find(name);
            if (!found && !create) throw SMDebugValueError("collection " + name + " does not exist");
            c = found ? *found : h_->collection(name);
        }
        return collection_dict(c);
    }

    // Sets the keys `d` holds: include_regex, tensor_names (lists, replacing), save_histogram,
    // reduction_config, save_config (dicts or None).
    void set_collection(const std::string& name, const py::dict& d) {
        std::optional<std::vector<std::string>> regex, names;
        std::optional<std::optional<ReductionConfig>> rc;
        std::optional<std::optional<SaveConfig>> sc;
        std::optional<bool> hist;
        if (d.contains("include_regex")) {
            regex = strings(d["include_regex"]);
            check_patterns(*regex);
        }
        if (d.contains("tensor_names")) names = strings(d["tensor_names"]);
        if (d.contains("save_histogram")) hist = d["save_histogram"].cast<bool>();
        if (d.contains("reduction_config"))
            rc = d["reduction_config"].is_none() ? std::optional<ReductionConfig>() : reduction_config_from(d["reduction_config"].cast<py::dict>());
        if (d.contains("save_config")) {
            if (d["save_config"].is_none()) {
                sc = std::optional<SaveConfig>();
            } else {
                SaveConfig s = save_config_from(d["save_config"].cast<py::dict>());
                sc = s;
            }
        }
        std::scoped_lock lock(mu_);
        Collection& c = h_->collection(name);
        if (regex) c.include_regex = *regex;
        if (names) {
            c.tensor_names.clear();
            for (auto& n : *names) c.add_tensor_name(n);
        }
        if (hist) c.save_histogram = *hist;
        if (rc) c.reduction_config = *rc;
        if (sc) {
            c.save_config = *sc;
            // After the collections were prepared, a new schedule's missing modes come from the hook's.
            if (c.save_config && h_->global_step() >= 0) fill_missing_modes(*c.save_config, hook_save_config_);
        }
        refresh_locked();
    }

    void include_collection(const std::string& name) {
        std::scoped_lock lock(mu_);
        h_->include_collection(name);
        refresh_locked();
    }

    bool included(const std::string& name) {
        std::scoped_lock lock(mu_);
        return h_->collections().included(name);
    }

    void set_hook_save_config(SaveConfig sc) {
        fill_missing_modes(sc, SaveConfig(SaveConfigMode{}));
        hook_save_config_ = std::move(sc);
    }

private:
    bool refresh_locked() {
        bool saving = false;
        if (h_->writes() && !h_->closed() && h_->global_step() >= 0) {
            active_ = h_->step_collections();  // with an anomaly window: every step records
            saving = !active_.empty();
        }
        saving_ = saving;
        return saving;
    }

    bool wants_locked(const std::string& name) {
        const auto& colls = member_of(name);
        for (const auto* c : active_)
            for (const auto& m : colls)
                if (c->name == m) return true;
        return false;
    }

    // Names of the collections (included or not) that list `name` or whose pattern it matches,
    // cached per name until the Hook's collections change (torch/torch_hook.hpp's rule).
    const std::vector<std::string>& member_of(const std::string& name) {
        if (h_->collections().version() != members_version_) {
            members_.clear();
            members_version_ = h_->collections().version();
        }
        auto it = members_.find(name);
        if (it != members_.end()) return it->second;
        std::vector<std::string> names;
        for (const auto& c : h_->collections().snapshot(1).collections) {
            bool match = c.has_tensor_name(name);
            for (const auto& p : c.include_regex) {
                if (match) break;
                detail::CompiledRegex re;
                re.add(p);
                match = re.search(name);
            }
            if (match) names.push_back(c.name);
        }
        return members_.emplace(name, std::move(names)).first->second;
    }

    std::unique_ptr<CppHook> h_;
    std::mutex mu_;
    bool saving_ = false;
    std::vector<const Collection*> active_;
    std::unordered_map<std::string, std::vector<std::string>> members_;
    std::uint64_t members_version_ = ~std::uint64_t{0};
    SaveConfig hook_save_config_ = SaveConfig(SaveConfigMode{});
};

// The store of an out_dir. A local folder is written without fsync unless options["fsync"]: each
// file still appears whole (written beside, then renamed) and survives the process, as the
// reference's files do, and a reader sees a step as soon as it is written (docs/deviations.md D25).
bool fsync_option(const py::dict& options) { return options.contains("fsync") && options["fsync"].cast<bool>(); }

AnyStore store_for(const std::string& out_dir, bool fsync) {
    const auto path = text::trim(out_dir);
    if (fsync || !url_scheme(path).empty()) return open_store(path);
    return AnyStore(LocalStore(expand_home(path), LocalStore::Durability::none));
}

std::unique_ptr<PyHook> make_hook(const std::string& out_dir, const py::dict& options) {
    HookOptions o;
    apply_options(o, options);
    const SaveConfig sc = o.save_config;
    const bool fsync = fsync_option(options);
    // Opening an s3:// out_dir and the Hook's look at what out_dir holds go to the network: other
    // Python threads run meanwhile.
    py::gil_scoped_release release;
    auto h = std::make_unique<PyHook>(std::make_unique<CppHook>(store_for(out_dir, fsync), std::move(o)));
    h->set_hook_save_config(sc);
    return h;
}

}  // namespace

void bind_hook(py::module_& m) {
    py::class_<PyHook>(m, "_Hook")
        .def(py::init(&make_hook), py::arg("out_dir"), py::arg("options"))
        .def_static("from_json_file", [](const std::string& path, const py::dict& overrides) {
            auto cfg = path.empty() ? load_hook_config() : load_hook_config(path);
            apply_options(cfg.options, overrides);
            const SaveConfig sc = cfg.options.save_config;
            const bool fsync = fsync_option(overrides);
            py::gil_scoped_release release;  // as make_hook
            auto h = std::make_unique<PyHook>(std::make_unique<CppHook>(store_for(cfg.out_dir, fsync), std::move(cfg.options)));
            h->set_hook_save_config(sc);
            return h;
        }, py::arg("path"), py::arg("overrides"))
        .def_static("parse_json_config", [](const std::string& path) {  // (out_dir, tensorboard_dir) of a config
            auto cfg = path.empty() ? load_hook_config() : load_hook_config(path);
            return py::make_tuple(cfg.out_dir, cfg.options.tensorboard_dir ? py::object(py::str(*cfg.options.tensorboard_dir)) : py::object(py::none()),
                                  cfg.options.export_tensorboard);
        }, py::arg("path"))
        .def("next_step", &PyHook::next_step)
        .def("refresh", &PyHook::refresh)
        .def_property_readonly("saving", &PyHook::saving)
        .def("set_mode", &PyHook::set_mode, py::arg("mode"))
        .def("wants", &PyHook::wants, py::arg("name"))
        .def("save_recorded", &PyHook::save_recorded, py::arg("name"), py::arg("value"))
        .def("save_tensor", &PyHook::save_tensor, py::arg("name"), py::arg("value"), py::arg("collections"))
        .def("save_scalar", &PyHook::save_scalar, py::arg("name"), py::arg("value"), py::arg("timestamp") = py::none())
        .def("flush", &PyHook::flush)
        .def("close", &PyHook::close)
        .def("collection_names", &PyHook::collection_names)
        .def("collection", &PyHook::collection, py::arg("name"), py::arg("create") = true)
        .def("set_collection", &PyHook::set_collection, py::arg("name"), py::arg("settings"))
        .def("include_collection", &PyHook::include_collection, py::arg("name"))
        .def("included", &PyHook::included, py::arg("name"))
        .def_property_readonly("global_step", [](PyHook& h) { return h.hook().global_step(); })
        .def_property_readonly("mode_step", [](PyHook& h) { return h.hook().mode_step(); })
        .def_property_readonly("step_mode", [](PyHook& h) { return std::string(mode_name(h.hook().step_mode())); })
        .def_property_readonly("writes", [](PyHook& h) { return h.hook().writes(); })
        .def_property_readonly("enabled", [](PyHook& h) { return h.hook().enabled(); })
        .def_property_readonly("closed", [](PyHook& h) { return h.hook().closed(); })
        .def_property_readonly("worker", [](PyHook& h) { return h.hook().worker(); })
        .def_property_readonly("num_workers", [](PyHook& h) { return h.hook().num_workers(); })
        .def_property_readonly("pending_steps", [](PyHook& h) { return h.hook().pending_steps(); });
}

}  // namespace smdebug_python
