#pragma once
// Manifests (docs/format.md §12): a compacted index. One manifest holds what the index
// files of a run of steps hold — for each index file its key, size and ETag, mode, mode step,
// event file and entries (tensor name, offset, length; shapes) — so that a reader gets the index
// of thousands of steps in one GET instead of one per index file.
//
// A manifest covers every index file of its scope (one worker, or every worker) whose key lies in
// [index_step_prefix(first_step), index_step_prefix(last_step + 1)) — from the start of index/
// when first_step is 0: for index files in their buckets, those of steps first_step..last_step. It lives under manifest/, a folder the Python smdebug never
// lists (it lists index/, collections/ and events/ and reads training_job_end.ts):
//
//     manifest/all/<first:12>_<last:12>.smdm                  every worker (smdebug compact)
//     manifest/worker/<worker>/<first:12>_<last:12>.smdm      one worker (the Hook's write_manifest)
//
// Binary, little-endian: "SMDMANIF", u32 version, u64 content length, u32 CRC-32C of the content,
// then the content (varints; see docs/format.md). decode() refuses anything truncated, corrupt
// (CRC), of another version, or whose entries break the index files' own rules (event files
// outside events/, record lengths past the record limit), with a FormatError naming the manifest.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <smdebug/core/crc32c.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/detail/manifest_codec.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/format/paths.hpp>

namespace smdebug::manifest {

inline constexpr std::string_view magic = "SMDMANIF";
inline constexpr std::uint32_t version = 1;
inline constexpr std::size_t header_bytes = 8 + 4 + 8 + 4;
inline constexpr std::string_view suffix = ".smdm";

// One index file, as the manifest holds it.
struct CoveredFile {
    std::string key;   // "index/000000000/000000000010_worker_0.json"
    std::uint64_t size = 0;
    std::string etag;  // as the store's listing gave it; empty when the store gives none
    index_file::IndexFile index;
};

struct Manifest {
    std::optional<std::string> worker;  // the worker (as in index file names); nullopt: every worker
    std::int64_t first_step = 0;
    std::int64_t last_step = 0;
    std::vector<CoveredFile> files;  // in key order
};

// What a manifest's key says: its scope and steps.
struct ManifestName {
    std::optional<std::string> worker;
    std::int64_t first_step = 0;
    std::int64_t last_step = 0;
    friend bool operator==(const ManifestName&, const ManifestName&) = default;
};

inline std::string key(const std::optional<std::string>& worker, std::int64_t first_step, std::int64_t last_step) {
    std::string k(paths::manifest_prefix);
    k += worker ? "worker/" + paths::serialize_worker(*worker) + "/" : std::string("all/");
    return k + paths::step_digits(first_step, 12) + "_" + paths::step_digits(last_step, 12) + std::string(suffix);
}
inline std::string key(const Manifest& m) { return key(m.worker, m.first_step, m.last_step); }

// Parses a key under manifest/; nullopt for anything else (a writer's temporary file, stray names).
inline std::optional<ManifestName> parse_key(std::string_view k) {
    if (!k.starts_with(paths::manifest_prefix) || !k.ends_with(suffix)) return std::nullopt;
    std::string_view rest = k.substr(paths::manifest_prefix.size());
    rest.remove_suffix(suffix.size());
    ManifestName out;
    if (rest.starts_with("all/")) {
        rest.remove_prefix(4);
    } else if (rest.starts_with("worker/")) {
        rest.remove_prefix(7);
        const auto slash = rest.find('/');
        if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
        const auto w = rest.substr(0, slash);  // a serialised TF device begins with '_' (as index file names)
        out.worker = w.front() == '_' ? paths::deserialize_worker(w) : std::string(w);
        rest.remove_prefix(slash + 1);
    } else {
        return std::nullopt;
    }
    const auto us = rest.find('_');
    if (us == std::string_view::npos || rest.find('/') != std::string_view::npos) return std::nullopt;
    auto number = [](std::string_view s) -> std::optional<std::int64_t> {
        if (s.empty() || s.size() > 18) return std::nullopt;
        std::int64_t v = 0;
        for (char c : s) {
            if (c < '0' || c > '9') return std::nullopt;
            v = v * 10 + (c - '0');
        }
        return v;
    };
    const auto first = number(rest.substr(0, us));
    const auto last = number(rest.substr(us + 1));
    if (!first || !last || *first > *last) return std::nullopt;
    out.first_step = *first;
    out.last_step = *last;
    return out;
}

inline std::string encode(const Manifest& m) {
    // Names (tensor names, original names, event files) repeat across files: one table, by number.
    std::vector<std::string_view> table;
    std::unordered_map<std::string_view, std::uint64_t> ids;
    auto ref = [&](std::string_view s) {
        auto [it, inserted] = ids.try_emplace(s, table.size());
        if (inserted) table.push_back(s);
        return it->second;
    };
    detail::Encoder files;
    files.varint(m.files.size());
    for (const auto& f : m.files) {
        files.string(f.key);
        files.varint(f.size);
        files.string(f.etag);
        files.u8(static_cast<std::uint8_t>(f.index.mode));
        files.svarint(f.index.mode_step);
        files.varint(f.index.event_file_name ? ref(*f.index.event_file_name) + 1 : 0);
        files.varint(f.index.tensors.size());
        for (const auto& t : f.index.tensors) {
            files.varint(ref(t.name));
            files.varint(t.start);
            files.varint(t.length);
        }
        files.varint(f.index.shapes.size());
        for (const auto& s : f.index.shapes) {
            files.varint(ref(s.name));
            files.varint(ref(s.original_name));
            files.varint(s.shape.size());
            for (auto d : s.shape) files.svarint(d);
        }
    }
    detail::Encoder content;
    content.u8(m.worker ? 1 : 0);
    if (m.worker) content.string(*m.worker);
    content.svarint(m.first_step);
    content.svarint(m.last_step);
    content.varint(table.size());
    for (auto s : table) content.string(s);
    content.bytes() += files.bytes();

    detail::Encoder out;
    out.bytes() += magic;
    out.fixed32(version);
    out.fixed64(content.bytes().size());
    out.fixed32(crc32c(content.bytes()));
    out.bytes() += content.bytes();
    return std::move(out.bytes());
}

// Decodes a manifest; `context` names it in errors (its path or URL).
inline Manifest decode(std::span<const std::byte> bytes, std::string_view context) {
    detail::Decoder header(bytes, context);
    if (bytes.size() < magic.size()) header.truncated("the header");
    if (std::string_view(reinterpret_cast<const char*>(bytes.data()), magic.size()) != magic)
        header.fail("it does not begin with " + std::string(magic));
    for (std::size_t i = 0; i < magic.size(); ++i) header.u8();
    if (const auto v = header.fixed32(); v != version)
        header.fail("version " + std::to_string(v) + " (this reader knows version " + std::to_string(version) + ")");
    const auto length = header.fixed64();
    const auto crc = header.fixed32();
    if (length > header.remaining()) header.truncated("its content (" + std::to_string(length) + " bytes declared)");
    if (length < header.remaining()) header.fail(std::to_string(header.remaining() - length) + " bytes follow its content");
    const auto content = header.rest();
    if (crc32c(content) != crc) header.fail("the CRC-32C of its content does not match");

    detail::Decoder in(content, context);
    Manifest m;
    if (const auto scope = in.u8(); scope > 1) in.fail("scope " + std::to_string(scope));
    else if (scope == 1) m.worker = in.string("the worker name");
    m.first_step = in.svarint();
    m.last_step = in.svarint();
    if (m.first_step < 0 || m.last_step < m.first_step || m.last_step >= (std::int64_t{1} << 62)) in.fail("steps " + std::to_string(m.first_step) + ".." + std::to_string(m.last_step));
    std::vector<std::string> table(in.count("name table"));
    for (auto& s : table) s = in.string("the name table");
    auto name = [&](std::uint64_t i) -> const std::string& {
        if (i >= table.size()) in.fail("name " + std::to_string(i) + " is not in the table of " + std::to_string(table.size()));
        return table[static_cast<std::size_t>(i)];
    };
    const auto end_key = paths::index_step_prefix(m.last_step + 1);
    m.files.resize(in.count("file", 8));
    std::string_view previous;
    for (auto& f : m.files) {
        f.key = in.string("a key");
        const auto sf = paths::parse_step_file(f.key);
        if (!f.key.starts_with(paths::index_prefix) || !sf) in.fail("'" + f.key + "' is not an index file's key");
        if (f.key <= previous) in.fail("keys are not in order at '" + f.key + "'");
        previous = f.key;
        if ((m.first_step > 0 && f.key < paths::index_step_prefix(m.first_step)) || f.key >= end_key)
            in.fail("'" + f.key + "' lies outside its steps");
        if (m.worker && sf->worker != *m.worker) in.fail("'" + f.key + "' is not a file of worker " + *m.worker);
        f.size = in.varint();
        f.etag = in.string("an ETag");
        const auto mode = in.u8();
        if (mode < 1 || mode > 4) in.fail("mode " + std::to_string(mode) + " of '" + f.key + "'");
        f.index.mode = static_cast<Mode>(mode);
        f.index.mode_step = in.svarint();
        if (const auto ev = in.varint()) {
            f.index.event_file_name = name(ev - 1);
            const auto& e = *f.index.event_file_name;
            if (!e.empty())
                if (const auto problem = paths::event_file_name_problem(e); !problem.empty())
                    in.fail("the event file '" + e + "' of '" + f.key + "' is refused: " + std::string(problem));
        }
        f.index.tensors.resize(in.count("tensor", 3));
        for (auto& t : f.index.tensors) {
            t.name = name(in.varint());
            t.start = in.varint();
            t.length = in.varint();
            if (t.length > tfrecord::max_record_bytes || t.start > static_cast<std::uint64_t>(INT64_MAX) - t.length)
                in.fail("the record of " + t.name + " in '" + f.key + "' is past any file size");
        }
        if (!f.index.tensors.empty() && !f.index.event_file_name) in.fail("'" + f.key + "' has records but no event file");
        f.index.shapes.resize(in.count("shape", 3));
        for (auto& s : f.index.shapes) {
            s.name = name(in.varint());
            s.original_name = name(in.varint());
            s.shape.resize(in.count("dimension"));
            for (auto& d : s.shape)
                if ((d = in.svarint()) < 0) in.fail("negative dimension in the shape of " + s.name + " in '" + f.key + "'");
        }
    }
    if (!in.done()) in.fail(std::to_string(in.remaining()) + " bytes follow the last file");
    return m;
}

inline Manifest decode(std::string_view bytes, std::string_view context) {
    return decode(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), context);
}

}  // namespace smdebug::manifest
