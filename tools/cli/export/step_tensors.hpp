#pragma once
// `smdebug export --format npz|safetensors --step S`: every tensor of one step, named as in the
// trial, each saved by the worker --worker W (default: the first by name that saved it), one tensor
// read at a time. npz: a zip of .npy files, stored (numpy.load); strings as fixed-width byte
// strings. safetensors: an 8-byte little-endian header length, the JSON header (dtype, shape,
// data_offsets; __metadata__ with trial, step, mode, mode_step), then the data; it has no string
// or complex types, so those tensors are skipped with a note on stderr. Tensors saved only as
// reductions at the step have no value and are not exported.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "../npy.hpp"
#include "output.hpp"
#include "records.hpp"
#include "zip.hpp"

namespace cli::exporting {

struct StepTensor {
    std::string name;
    smdebug::StepQuery query;  // the mode and the worker to read
};

// The selected tensors saved at `step` (a global step, or a step of --mode), by name.
inline std::vector<StepTensor> step_tensors(smdebug::Trial<smdebug::AnyStore>& trial, const Selection& sel, std::int64_t step) {
    using namespace smdebug;
    const Mode mode = sel.mode.value_or(Mode::GLOBAL);
    const auto steps = trial.steps(mode, /*show_incomplete_steps=*/true);
    if (std::find(steps.begin(), steps.end(), step) == steps.end()) throw StepUnavailable(step, mode);
    std::vector<StepTensor> out;
    for (const auto& name : trial.tensor_names()) {
        if (!sel.wants_tensor(name)) continue;
        std::vector<std::string> workers;
        try {
            workers = trial.tensor(name).workers(step, mode);
        } catch (const TensorUnavailableForStep&) {
            continue;
        }
        if (sel.worker && std::find(workers.begin(), workers.end(), *sel.worker) == workers.end()) continue;
        out.push_back({name, StepQuery{mode, sel.worker ? *sel.worker : *std::min_element(workers.begin(), workers.end())}});
    }
    std::sort(out.begin(), out.end(), [](const StepTensor& a, const StepTensor& b) { return a.name < b.name; });
    return out;
}

// Removes a half-written output when an export stops with an error.
class RemoveUnlessDone {
public:
    explicit RemoveUnlessDone(std::string path) : path_(std::move(path)) {}
    ~RemoveUnlessDone() {
        std::error_code ec;
        if (!done_ && path_ != "-") std::filesystem::remove(path_, ec);
    }
    RemoveUnlessDone(const RemoveUnlessDone&) = delete;
    RemoveUnlessDone& operator=(const RemoveUnlessDone&) = delete;
    void done() noexcept { done_ = true; }

private:
    std::string path_;
    bool done_ = false;
};

// The value of `t` at a step, or nothing when only reductions were saved there.
inline std::optional<smdebug::TensorValue> step_value(smdebug::Tensor<smdebug::AnyStore> t, std::int64_t step, const smdebug::StepQuery& q) {
    try {
        return t.value(step, q);
    } catch (const smdebug::TensorUnavailableForStep&) {
        return std::nullopt;
    }
}

inline void export_npz(smdebug::Trial<smdebug::AnyStore>& trial, const Selection& sel, std::int64_t step, const std::string& out_path,
                       bool force_zip64 = false) {
    using namespace smdebug;
    const auto tensors = step_tensors(trial, sel, step);
    ZipWriter zip(out_path, force_zip64);
    RemoveUnlessDone cleanup(out_path);  // once opened: never removes a file it could not open
    Progress progress("exporting tensors", tensors.size());
    for (const auto& st : tensors) {
        progress.advance();
        const auto v = step_value(trial.tensor(st.name), step, st.query);
        if (!v) continue;
        const std::string header = npy_header(*v);
        const std::string strings = v->is_string() ? npy_strings(*v) : std::string();
        const auto bytes = v->bytes();
        const std::string_view data = v->is_string() ? std::string_view(strings)
                                                     : std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        zip.begin_entry(st.name + ".npy", header.size() + data.size(), crc32_update(crc32_update(0, header), data));
        zip.write(header);
        zip.write(data);
    }
    zip.close();
    cleanup.done();
}

inline std::optional<std::string_view> safetensors_dtype(smdebug::DType d) {
    using smdebug::DType;
    switch (d) {
        case DType::float16: return "F16";
        case DType::float32: return "F32";
        case DType::float64: return "F64";
        case DType::int8: return "I8";
        case DType::int16: return "I16";
        case DType::int32: return "I32";
        case DType::int64: return "I64";
        case DType::uint8: return "U8";
        case DType::uint16: return "U16";
        case DType::uint32: return "U32";
        case DType::uint64: return "U64";
        case DType::boolean: return "BOOL";
        default: return std::nullopt;
    }
}

inline void export_safetensors(smdebug::Trial<smdebug::AnyStore>& trial, const Selection& sel, std::int64_t step,
                               const std::string& out_path) {
    using namespace smdebug;
    const auto tensors = step_tensors(trial, sel, step);
    struct Entry {
        const StepTensor* tensor;
        DType dtype;
        std::uint64_t size;
    };
    std::vector<Entry> entries;
    // The header first: dtypes and shapes from the records, without decoding the values.
    std::string meta = "\"trial\":" + json_string(trial.path());
    const Mode mode = sel.mode.value_or(Mode::GLOBAL);
    if (mode == Mode::GLOBAL) {
        meta += ",\"step\":\"" + std::to_string(step) + "\"";
        if (const auto mm = trial.mode_modestep(step))
            meta += ",\"mode\":" + json_string(mode_name(mm->first)) + ",\"mode_step\":\"" + std::to_string(mm->second) + "\"";
    } else {
        if (const auto g = trial.global_step(mode, step)) meta += ",\"step\":\"" + std::to_string(*g) + "\"";
        meta += ",\"mode\":" + json_string(mode_name(mode)) + ",\"mode_step\":\"" + std::to_string(step) + "\"";
    }
    if (sel.worker) meta += ",\"worker\":" + json_string(*sel.worker);
    std::string header = "{\"__metadata__\":{" + meta + "}";
    std::uint64_t offset = 0;
    for (const auto& st : tensors) {
        Tensor<AnyStore>::ValueInfo info;
        try {
            info = trial.tensor(st.name).info(step, st.query);
        } catch (const TensorUnavailableForStep&) {
            continue;  // only reductions saved at this step
        }
        const auto code = safetensors_dtype(info.dtype);
        if (!code) {
            sel.note("skipping " + st.name + ": safetensors has no " + std::string(dtype_name(info.dtype)) + " type");
            continue;
        }
        if (st.name == "__metadata__") {
            sel.note("skipping the tensor named __metadata__: safetensors reserves that name");
            continue;
        }
        std::uint64_t count = 1;
        std::string shape;
        for (const auto d : info.shape) {
            count *= d;
            if (!shape.empty()) shape += ',';
            shape += std::to_string(d);
        }
        const std::uint64_t size = count * dtype_size(info.dtype);
        header += "," + json_string(st.name) + ":{\"dtype\":\"" + std::string(*code) + "\",\"shape\":[" + shape + "],\"data_offsets\":[" +
                  std::to_string(offset) + "," + std::to_string(offset + size) + "]}";
        offset += size;
        entries.push_back({&st, info.dtype, size});
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' ');  // data starts 8-byte aligned
    OutFile out(out_path);
    RemoveUnlessDone cleanup(out_path);
    std::string length(8, '\0');
    for (int i = 0; i < 8; ++i) length[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
    out.write(length);
    out.write(header);
    Progress progress("exporting tensors", entries.size());
    for (const auto& e : entries) {
        progress.advance();
        const auto v = trial.tensor(e.tensor->name).value(step, e.tensor->query);
        if (v.dtype() != e.dtype || v.bytes().size() != e.size)
            throw CliError(bad_data, "bad data: tensor " + e.tensor->name + " at step " + std::to_string(step) + ": its value (" +
                                         std::string(dtype_name(v.dtype())) + ", " + std::to_string(v.bytes().size()) +
                                         " bytes) differs from its record header (" + std::string(dtype_name(e.dtype)) + ", " +
                                         std::to_string(e.size) + " bytes)");
        out.write(v.bytes().data(), v.bytes().size());
    }
    out.close();
    cleanup.done();
}

}  // namespace cli::exporting
