#pragma once
// Index files (docs/format.md §4): one JSON file per (global step, worker) listing where each tensor's
// record lies in the step's event file, and the shapes that were recorded.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/modes.hpp>
#include <smdebug/format/detail/index_file_scanner.hpp>
#include <smdebug/format/detail/index_file_types.hpp>
#include <smdebug/format/detail/json.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/detail/tfrecord.hpp>

namespace smdebug::index_file {

namespace detail {
[[noreturn]] inline void bad(std::string_view context, const std::string& what) {
    throw IndexReaderException(std::string(context) + ": " + what);
}
inline std::int64_t get_int(const json::bj::value& v, std::string_view context, const char* key) {
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(v.get_uint64());
    bad(context, std::string("'") + key + "' must be an integer");
}
inline std::uint64_t get_uint(const json::bj::value& v, std::string_view context, const char* key) {
    if (v.is_uint64()) return v.get_uint64();
    if (v.is_int64() && v.get_int64() >= 0) return static_cast<std::uint64_t>(v.get_int64());
    bad(context, std::string("'") + key + "' must be a non-negative integer");
}
inline const std::string get_string(const json::bj::value& v, std::string_view context, const char* key) {
    if (!v.is_string()) bad(context, std::string("'") + key + "' must be a string");
    return std::string(v.get_string());
}
}  // namespace detail

namespace detail {
inline void check_file_size(std::string_view text, std::string_view context, const Limits& limits) {
    if (text.size() > limits.max_file_bytes)
        throw FormatError(std::string(context) + ": index file of " + std::to_string(text.size()) +
                          " bytes is over the limit of " + std::to_string(limits.max_file_bytes) +
                          " bytes (TrialOptions::max_index_file_bytes)");
}
}  // namespace detail

// The DOM parser's arena: index files are parsed once and dropped, and a monotonic arena avoids one
// allocation per node (opening a trial whose index files the scanner declines: 21 % less time,
// docs/performance.md). Its switch: 0 parses with the default allocator, through the same code.
inline constexpr std::size_t dom_arena_bytes = 65536;

// The general parser (a Boost.JSON DOM): every document, every error. index_file::parse calls it
// for what the scanner declines. Validation order and messages follow the reference
// (docs/format.md §4); `context` names the file. ArenaBytes: see dom_arena_bytes.
template <std::size_t ArenaBytes = dom_arena_bytes>
IndexFile parse_dom(std::string_view text, std::string_view context, const Limits& limits = {}) {
    using detail::bad;
    detail::check_file_size(text, context, limits);
    const auto check_name = [&](std::string_view name) {
        if (name.size() > limits.max_name_bytes)
            throw FormatError(std::string(context) + ": a tensor name of " + std::to_string(name.size()) +
                              " bytes is over the limit of " + std::to_string(limits.max_name_bytes) +
                              " bytes (TrialOptions::max_tensor_name_bytes)");
    };
    unsigned char arena[ArenaBytes > 0 ? ArenaBytes : 1];
    json::bj::monotonic_resource mr(arena, sizeof arena);
    const auto root = json::parse<IndexReaderException>(text, context, "Empty/Corrupt Index File",
                                                        ArenaBytes > 0 ? json::bj::storage_ptr(&mr) : json::bj::storage_ptr());
    if (!root.is_object()) bad(context, "Empty/Corrupt Index File (not a JSON object)");
    const auto& obj = root.get_object();
    const auto* meta = obj.if_contains("meta");
    if (!meta) bad(context, "meta section is not present");
    if (!meta->is_object() || meta->get_object().empty()) bad(context, "meta section is empty");
    const auto* tensor_payload = obj.if_contains("tensor_payload");
    const auto* shape_payload = obj.if_contains("shape_payload");
    if (!tensor_payload && !shape_payload) bad(context, "neither tensor_payload nor shape_payload sections are present");

    IndexFile f;
    const auto& m = meta->get_object();
    const auto* mode = m.if_contains("mode");
    if (!mode || !mode->is_string()) bad(context, "meta.mode is missing or not a string");
    const auto parsed = parse_mode(mode->get_string());
    if (!parsed) bad(context, "meta.mode '" + std::string(mode->get_string()) + "' is not a mode name");
    f.mode = *parsed;
    const auto* mode_step = m.if_contains("mode_step");
    if (!mode_step) bad(context, "meta.mode_step is missing");
    f.mode_step = detail::get_int(*mode_step, context, "meta.mode_step");
    if (const auto* ef = m.if_contains("event_file_name"); ef && !ef->is_null())
        f.event_file_name = detail::get_string(*ef, context, "meta.event_file_name");

    if (tensor_payload && !tensor_payload->is_null()) {
        if (!tensor_payload->is_array()) bad(context, "tensor_payload must be a list");
        f.tensors.reserve(tensor_payload->get_array().size());
        for (const auto& e : tensor_payload->get_array()) {
            if (!e.is_object()) bad(context, "tensor_payload entries must be objects");
            const auto& o = e.get_object();
            const auto* n = o.if_contains("tensorname");
            const auto* s = o.if_contains("start_idx");
            const auto* l = o.if_contains("length");
            if (!n || !s || !l) bad(context, "tensor_payload entry lacks tensorname, start_idx or length");
            if (n && n->is_string()) check_name(n->get_string());
            TensorEntry t{detail::get_string(*n, context, "tensorname"), detail::get_uint(*s, context, "start_idx"),
                          detail::get_uint(*l, context, "length"), std::nullopt};
            if (const auto* c = o.if_contains(payload_crc_key)) {
                const auto crc = detail::get_uint(*c, context, "payload_crc32c");
                if (crc > UINT32_MAX) bad(context, "payload_crc32c " + std::to_string(crc) + " of " + t.name + " is not a 32-bit CRC");
                t.payload_crc32c = static_cast<std::uint32_t>(crc);
            }
            // Checked here, before any reader allocates a buffer of that length.
            if (t.length > tfrecord::max_record_bytes)
                bad(context, "length " + std::to_string(t.length) + " of " + t.name + " exceeds the record limit of " +
                                 std::to_string(tfrecord::max_record_bytes) + " bytes (tfrecord::max_record_bytes)");
            if (t.start > static_cast<std::uint64_t>(INT64_MAX) - t.length)
                bad(context, "start_idx " + std::to_string(t.start) + " of " + t.name + " is past any file size");
            f.tensors.push_back(std::move(t));
        }
        if (!f.tensors.empty() && !f.event_file_name) bad(context, "tensor_payload present but meta.event_file_name is missing");
    }
    if (shape_payload && !shape_payload->is_null()) {
        if (!shape_payload->is_array()) bad(context, "shape_payload must be a list");
        f.shapes.reserve(shape_payload->get_array().size());
        for (const auto& e : shape_payload->get_array()) {
            if (!e.is_object()) bad(context, "shape_payload entries must be objects");
            const auto& o = e.get_object();
            const auto* n = o.if_contains("tensorname");
            const auto* s = o.if_contains("shape");
            if (!n || !s || !s->is_array()) bad(context, "shape_payload entry lacks tensorname or shape");
            ShapeEntry se;
            se.name = detail::get_string(*n, context, "tensorname");
            check_name(se.name);
            const auto* orig = o.if_contains("originalname");
            se.original_name = orig && orig->is_string() ? std::string(orig->get_string()) : se.name;
            for (const auto& d : s->get_array()) {
                const auto v = detail::get_int(d, context, "shape");
                if (v < 0) bad(context, "negative dimension in shape of " + se.name);
                se.shape.push_back(v);
            }
            f.shapes.push_back(std::move(se));
        }
    }
    // D22, after the reference's own checks (their order and messages are kept): the event file
    // must lie inside the trial, checked before anything is opened. An empty name points nowhere
    // (smdebug's own tests write such index files to lay out steps): the steps and names of the
    // file stay readable and reading one of its records is a FileRefused (RecordReader::event_key).
    if (f.event_file_name && !f.event_file_name->empty())
        if (const auto problem = paths::event_file_name_problem(*f.event_file_name); !problem.empty())
            throw FormatError(std::string(context) + ": meta.event_file_name '" + *f.event_file_name +
                              "' is refused: " + std::string(problem) +
                              " (an event file must be a relative path under the trial's events/ folder)");
    return f;
}

// Parses an index file (`context` names it in errors): the scanner reads what smdebug writers
// produce; anything else (escapes, non-ASCII names, unknown or repeated keys, any error) goes to
// parse_dom, which gives the same result or the error.
inline IndexFile parse(std::string_view text, std::string_view context, const Limits& limits = {}) {
    detail::check_file_size(text, context, limits);
    if (auto f = scanner::scan(text, limits)) return std::move(*f);
    return parse_dom(text, context, limits);
}
// As parse, into `f` (reusing its vectors' memory when the scanner reads it).
inline void parse_into(std::string_view text, std::string_view context, const Limits& limits, IndexFile& f) {
    detail::check_file_size(text, context, limits);
    if (!scanner::scan_into(text, limits, f)) f = parse_dom(text, context, limits);
}

// Serialises exactly as the reference writer does (key order, Python separators), plus
// payload_crc_key in entries that carry one.
inline std::string serialize(const IndexFile& f) {
    json::bj::object meta;
    meta["mode"] = std::string(mode_name(f.mode));
    meta["mode_step"] = f.mode_step;
    if (f.event_file_name) meta["event_file_name"] = *f.event_file_name;
    json::bj::array tensors;
    for (const auto& t : f.tensors) {
        json::bj::object o;
        o["tensorname"] = t.name;
        o["start_idx"] = t.start;
        o["length"] = t.length;
        if (t.payload_crc32c) o[payload_crc_key] = *t.payload_crc32c;
        tensors.push_back(std::move(o));
    }
    json::bj::array shapes;
    for (const auto& s : f.shapes) {
        json::bj::object o;
        o["tensorname"] = s.name;
        o["originalname"] = s.original_name;
        json::bj::array dims;
        for (auto d : s.shape) dims.push_back(d);
        o["shape"] = std::move(dims);
        shapes.push_back(std::move(o));
    }
    json::bj::object root;
    root["meta"] = std::move(meta);
    root["tensor_payload"] = std::move(tensors);
    root["shape_payload"] = std::move(shapes);
    return json::dumps(root);
}

}  // namespace smdebug::index_file

