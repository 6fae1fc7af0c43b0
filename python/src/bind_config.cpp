// smdebug_cpp._core's configurations: the reduction names and the stored reductions' tensor names,
// ReductionConfig and SaveConfig parsed, checked and written by the library, a collection's JSON
// parsed by the collections-file parser, and their Python dict forms (binding.hpp).
#include "binding.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include <smdebug/core/reductions.hpp>
#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/format/reduction_names.hpp>
#include <smdebug/writer/save_config.hpp>

namespace smdebug_python {

using namespace smdebug;

py::dict collection_dict(const Collection& c) {
    py::dict d;
    d["name"] = c.name;
    d["include_regex"] = c.include_regex;
    d["tensor_names"] = c.tensor_names;
    d["save_histogram"] = c.save_histogram;
    d["reduction_config"] = c.reduction_config ? py::object(reduction_config_dict(*c.reduction_config)) : py::object(py::none());
    d["save_config"] = c.save_config ? py::object(save_config_dict(*c.save_config)) : py::object(py::none());
    return d;
}

py::dict save_config_dict(const SaveConfig& sc) {
    py::dict out;
    for (Mode m : all_modes) {
        const auto& e = sc[m];
        if (!e) {
            out[py::str(std::string(mode_name(m)))] = py::none();
            continue;
        }
        py::dict md;
        md["save_interval"] = e->save_interval;
        md["save_steps"] = e->save_steps;
        md["start_step"] = e->start_step;
        md["end_step"] = e->end_step ? py::object(py::int_(*e->end_step)) : py::object(py::none());
        out[py::str(std::string(mode_name(m)))] = md;
    }
    return out;
}

py::dict reduction_config_dict(const ReductionConfig& r) {
    py::dict d;
    d["reductions"] = r.reductions;
    d["abs_reductions"] = r.abs_reductions;
    d["norms"] = r.norms;
    d["abs_norms"] = r.abs_norms;
    d["save_raw_tensor"] = r.save_raw_tensor;
    d["save_shape"] = r.save_shape;
    return d;
}

namespace {

// `json_text` as a JSON object (FormatError naming `context` otherwise).
boost::json::object json_object(const std::string& json_text, const std::string& context) {
    boost::system::error_code ec;
    auto v = boost::json::parse(json_text, ec);
    if (ec || !v.is_object()) throw FormatError(context + ": not a JSON object: " + json_text.substr(0, 200));
    return std::move(v.get_object());
}

// One collection's JSON object, read as the only entry of a collections file.
Collection parse_collection_entry(const std::string& json_text, const std::string& context) {
    boost::json::object collections;
    collections["c"] = json_object(json_text, context);
    boost::json::object file;
    file["collections"] = std::move(collections);
    file["_meta"] = boost::json::object{{"num_workers", 1}};
    auto parsed = collections_file::parse(boost::json::serialize(file), context);
    return std::move(parsed.collections.at(0));
}

}  // namespace

void bind_config(py::module_& m) {
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
        return reduction_config_dict(r);
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
    m.def("reductions_prefix", [] { return std::string(reductions_prefix); });
    m.def("reduction_tensor_name", [](const std::string& tensor, const std::string& reduction, bool abs) {
        return reduction_tensor_name(tensor, reduction, abs);
    }, py::arg("tensor"), py::arg("reduction"), py::arg("abs"));
    m.def("parse_reduction_tensor_name", [](const std::string& name) -> py::object {
        const auto parsed = parse_reduction_tensor_name(name);
        if (!parsed) return py::none();
        return py::make_tuple(parsed->tensor, parsed->reduction, parsed->abs);
    }, py::arg("name"));
    // A collection's JSON (an entry of a collections file: {"name", "include_regex", "tensor_names",
    // "reduction_config", "save_config", "save_histogram"}) parsed by the collections-file parser
    // that reads trials (format/detail/collections_file.hpp), as collection_dict's form. A save
    // config's JSON ({"TRAIN": {...} or null, ...}) is parsed as the save_config of such an entry.
    // A malformed one raises FormatError naming what is wrong.
    m.def("parse_collection", [](const std::string& json_text, const std::string& context) {
        return collection_dict(parse_collection_entry(json_text, context));
    }, py::arg("json_text"), py::arg("context"));
    m.def("parse_save_config", [](const std::string& json_text, const std::string& context) -> py::object {
        auto modes = json_object(json_text, context);
        for (const auto& kv : modes)  // the collections-file parser reads the four modes and no other key
            if (!parse_mode(kv.key()))
                throw FormatError(context + ": '" + std::string(kv.key()) + "' is not a mode (TRAIN, EVAL, PREDICT or GLOBAL)");
        boost::json::object entry;
        entry["save_config"] = std::move(modes);
        const auto c = parse_collection_entry(boost::json::serialize(entry), context);
        return c.save_config ? py::object(save_config_dict(*c.save_config)) : py::object(py::none());
    }, py::arg("json_text"), py::arg("context"));
}

}  // namespace smdebug_python
