#pragma once
// `smdebug value PATH NAME STEP [--mode M] [--worker W] [--format text|json|npy] [--out FILE]`.
#include <complex>
#include <fstream>
#include <iostream>

#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "errors.hpp"
#include "escape.hpp"
#include "format.hpp"
#include "npy.hpp"
#include "output_file.hpp"
#include "session.hpp"

namespace cli {

inline constexpr const char* value_usage =
    "usage: smdebug value PATH NAME STEP [--mode M] [--worker W] [--format text|json|npy] [--out FILE] [--full]\n"
    "  The value of tensor NAME at STEP (a global step, or a step of --mode M), saved by worker W\n"
    "  (default: the first by name). text: numpy-like nested lists; json: an object with name, step,\n"
    "  mode, dtype, shape and values (nan/inf as null, complex as [re, im]); npy: a .npy file for\n"
    "  numpy.load, written to --out or to stdout (never to a terminal). The text of a tensor of more\n"
    "  than 1000 elements is summarised as numpy does (the first and last 3 of each dimension around\n"
    "  `...`); --full prints every element.\n";

namespace value_detail {

template <class T>
std::string element_text(const T& x, bool json) {
    if constexpr (std::is_same_v<T, bool>) return json ? (x ? "true" : "false") : (x ? "True" : "False");
    else if constexpr (std::is_same_v<T, float>) {
        if (json && !std::isfinite(x)) return "null";
        if (!std::isfinite(x)) return format_double(x);
        char buf[32];
        const auto r = std::to_chars(buf, buf + sizeof buf, x);
        return std::string(buf, r.ptr);
    } else if constexpr (std::is_same_v<T, double>) return json ? json_number(x) : format_double(x);
    else if constexpr (std::is_same_v<T, smdebug::float16>) return element_text(static_cast<float>(x), json);
    else if constexpr (requires { x.real(); }) {
        if (json) return "[" + element_text(x.real(), true) + "," + element_text(x.imag(), true) + "]";
        return "(" + element_text(x.real(), false) + (x.imag() < 0 || std::signbit(x.imag()) ? "" : "+") +
               element_text(x.imag(), false) + "j)";
    } else return std::to_string(x);
}

// Element texts of a value, row-major.
inline std::vector<std::string> element_texts(const smdebug::TensorValue& v, bool json) {
    std::vector<std::string> out;
    out.reserve(v.size());
    if (v.is_string()) {
        for (const auto& s : v.strings()) out.push_back(json ? json_string(s) : "'" + s + "'");
        return out;
    }
    smdebug::visit_dtype(v.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (const auto& x : v.elements<T>()) out.push_back(element_text(x, json));
    });
    return out;
}

// Nested lists over the shape: [[1, 2], [3, 4]]. `flat` holds every element (row-major) and
// `stride[d]` is the number of elements under one index of dimension d. With `edge` > 0, a
// dimension longer than 2 * edge shows its first and last `edge` entries around "..." (numpy's
// summary).
inline void nest(std::string& out, const std::vector<std::string>& flat, const smdebug::Shape& shape, const std::vector<std::size_t>& stride,
                 std::size_t dim, std::size_t at, const char* sep, std::size_t edge) {
    if (dim == shape.size()) {
        out += flat[at];
        return;
    }
    out += "[";
    const bool cut = edge > 0 && shape[dim] > 2 * edge;
    for (std::size_t i = 0; i < shape[dim]; ++i) {
        if (cut && i == edge) {
            out += sep;
            out += "...";
            i = shape[dim] - edge;
        }
        if (i && !(cut && i == edge)) out += sep;
        nest(out, flat, shape, stride, dim + 1, at + i * stride[dim], sep, edge);
    }
    out += "]";
}

}  // namespace value_detail

// Above this many elements the text form is summarised (numpy's threshold), unless --full.
inline constexpr std::size_t summary_threshold = 1000;
inline constexpr std::size_t summary_edge = 3;

inline std::string value_text(const smdebug::TensorValue& v, bool json, bool summarise = false) {
    const auto flat = value_detail::element_texts(v, json);
    const auto& shape = v.shape();
    std::vector<std::size_t> stride(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
    std::string out;
    const bool cut = summarise && flat.size() > summary_threshold;
    value_detail::nest(out, flat, shape, stride, 0, 0, json ? "," : ", ", cut ? summary_edge : 0);
    if (cut) out += "\n(" + std::to_string(flat.size()) + " elements, shape " + shape_text(shape) + "; --full prints them all)";
    return out;
}

// The value of `name` at `step`. A global step without --steps opens only that step (its index
// files, one listing of its bucket), so the cost does not grow with the trial; any answer but a
// value (no such tensor, a step not written yet or skipped) comes from the whole trial, whose
// refresh and end-of-training rules decide which error the reference raises.
inline smdebug::TensorValue read_one_value(Session& session, const smdebug::AnyStore& store, const std::string& name, std::int64_t step,
                                           const smdebug::StepQuery& q) {
    using namespace smdebug;
    const auto& range = session.steps();
    if (q.mode == Mode::GLOBAL && !range.begin && !range.end && step >= 0) {
        TrialOptions one_step = session.trial_options();
        one_step.range_begin = step;
        one_step.range_end = step + 1;
        try {
            auto& trial = session.open_trial(store, std::move(one_step));
            return trial.tensor(name).value(step, q);
        } catch (const SMDebugError&) {
        }
    }
    auto& trial = session.open_trial(store);
    return trial.tensor(name).value(step, q);
}

inline int run_value(Session& session, const Args& args) {
    using namespace smdebug;
    if (args.positional.size() != 3) throw usage_error(std::string("expected PATH, NAME and STEP\n") + value_usage);
    const auto step = parse_int(args.positional[2], "STEP");
    const auto format = args.value("--format").value_or("text");
    if (format != "text" && format != "json" && format != "npy") throw usage_error("unknown --format '" + format + "' (text, json or npy)");
    const StepQuery q{mode_option(args), args.value("--worker")};
    const auto name = args.positional[1];
    if (format == "npy" && !args.value("--out") && ::isatty(1) == 1)
        throw usage_error("--format npy writes binary: give --out FILE or redirect standard output, not a terminal");
    auto store = session.checked_store(args.positional[0]);
    const auto v = read_one_value(session, store, name, step, q);
    std::string out;
    if (format == "npy") {
        out = to_npy(v);
    } else if (format == "json") {
        out = "{\"name\":" + json_string(name) + ",\"step\":" + std::to_string(step) + ",\"mode\":" + json_string(mode_name(q.mode)) +
              ",\"dtype\":" + json_string(dtype_name(v.dtype())) + ",\"shape\":[";
        for (std::size_t i = 0; i < v.shape().size(); ++i) out += (i ? "," : "") + std::to_string(v.shape()[i]);
        out += "],\"values\":" + value_text(v, true) + "}\n";
    } else {
        out = value_text(v, false, !args.has("--full")) + "\n";
    }
    if (const auto file = args.value("--out")) {
        write_file(*file, out);
        print_written(*file, format + " of " + name + " at step " + std::to_string(step) + ", " + (v.is_string() ? std::string("str") : std::string(dtype_name(v.dtype()))) +
                                 " " + shape_text(v.shape()));
        return ok;
    }
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
    std::cout.flush();
    return ok;
}

}  // namespace cli
