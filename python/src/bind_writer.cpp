// smdebug_cpp._core's writing and store access: StepFileWriter (smdebug_cpp.core.writer.FileWriter),
// objects written, read, listed and removed through the library's stores (a folder or an s3://
// URL), the trial's key names, and planned_steps (what smdebug_cpp.dask plans from).
#include "binding.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <smdebug/format/paths.hpp>
#include <smdebug/query/create_trial.hpp>
#include <smdebug/smdebug.hpp>
#include <smdebug/storage/open_store.hpp>
#include <smdebug/writer/step_writer.hpp>

namespace smdebug_python {
namespace {

using namespace smdebug;

template <class T>
TensorValue copy_elements(const py::array& a, Shape shape) {
    auto c = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
    return TensorValue::from<T>(std::span<const T>(c.data(), static_cast<std::size_t>(c.size())), std::move(shape));
}

// A copy of the array's elements (in native byte order) as a TensorValue.
TensorValue tensor_from_numpy(const py::array& a) {
    Shape shape(a.shape(), a.shape() + a.ndim());
    const char kind = a.dtype().kind();
    if (kind == 'U' || kind == 'S' || kind == 'O') {
        std::vector<std::string> strings;
        for (auto item : a.attr("reshape")(-1)) {
            if (py::isinstance<py::bytes>(item)) strings.push_back(item.cast<std::string>());
            else strings.push_back(py::str(item).cast<std::string>());
        }
        return TensorValue(std::move(shape), std::move(strings));
    }
    const auto dtype = numeric_dtype(a.dtype());
    if (!dtype) throw SMDebugTypeError("cannot save a tensor of numpy dtype " + py::str(a.dtype().attr("name")).cast<std::string>());
    return visit_dtype(*dtype, [&](auto zero) { return copy_elements<decltype(zero)>(a, std::move(shape)); });
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

void bind_writer(py::module_& m) {
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
    // The object at `key` of the store at `url` (a folder or s3:// URL) as bytes: ObjectNotFound
    // when there is none, StorageError when it cannot be read.
    m.def("read_object", [](const std::string& url, const std::string& key) {
        std::string text;
        {
            py::gil_scoped_release release;
            text = std::string(open_store(url).read(key).text());
        }
        return py::bytes(text);
    }, py::arg("url"), py::arg("key"));
    // The complete global steps of the trial at `url` and its workers, as the library answers them
    // (Trial::steps(): docs/semantics.md's completeness rule, end of training included) — what a
    // Dask graph is planned from, so that it holds exactly the steps the single-process package
    // returns. `mode` (not GLOBAL) keeps the steps of that mode (Trial::mode), `steps` keeps the
    // listed global steps. ([steps], [workers]), sorted. Reads the trial's index (as opening it does).
    m.def("planned_steps", [](const std::string& url, const std::optional<std::string>& mode,
                              std::optional<std::vector<std::int64_t>> steps) {
        const std::optional<Mode> only_mode = mode ? std::optional<Mode>(to_mode(*mode)) : std::nullopt;
        std::vector<std::int64_t> complete;
        std::vector<std::string> workers;
        {
            py::gil_scoped_release release;
            auto trial = create_trial(url);
            complete = trial.steps();
            if (only_mode && *only_mode != Mode::GLOBAL)
                std::erase_if(complete, [&](std::int64_t g) { return trial.mode(g) != only_mode; });
            if (steps) {
                std::sort(steps->begin(), steps->end());
                std::erase_if(complete, [&](std::int64_t g) { return !std::binary_search(steps->begin(), steps->end(), g); });
            }
            workers = trial.workers();
        }
        std::sort(workers.begin(), workers.end());
        return py::make_tuple(complete, workers);
    }, py::arg("url"), py::arg("mode") = py::none(), py::arg("steps") = py::none());
    m.def("remove_object", [](const std::string& url, const std::string& key) {
        py::gil_scoped_release release;
        open_store(url).remove(key);
    });
    m.def("index_key", [](std::int64_t step, const std::string& worker) { return paths::index_key(step, worker); });
    m.def("event_key", [](std::int64_t step, const std::string& worker) { return paths::event_key(step, worker); });
}

}  // namespace smdebug_python
