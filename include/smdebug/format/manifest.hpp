#pragma once
// Manifests (docs/format.md §12): a compacted index. One manifest holds what the index
// files of a run of steps hold — for each index file its key, size and ETag, mode, mode step,
// event file and entries (tensor name, offset, length, payload CRC-32C; shapes) — so that a reader gets the index
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
// (CRC), of a version it does not know (it reads 1 and 2), or whose entries break the index files' own rules (event files
// outside events/, record lengths past the record limit), with a FormatError naming the manifest.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/crc32c.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/detail/manifest_codec.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/format/paths.hpp>

namespace smdebug::manifest {

inline constexpr std::string_view magic = "SMDMANIF";
// Version 2 adds each record's payload CRC-32C (index_file::payload_crc_key); version 1 is still read.
inline constexpr std::uint32_t version = 2;
inline constexpr std::uint32_t oldest_version = 1;
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
            files.varint(t.payload_crc32c ? std::uint64_t{*t.payload_crc32c} + 1 : 0);  // 0: none
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

// A manifest as decoded for opening a trial: no string per entry. Names are numbers into the
// manifest's name table; a file's tensor entries are decoded again from the manifest's bytes
// when they are used (decode_compact checked them all; they are most of a manifest, and a copy
// would cost its pages), its shapes lie in flat arrays. `content` views the bytes decoded: keep
// them alive (`bytes` may own them). decode() gives the same content as a Manifest.
struct CompactManifest {
    struct Tensor {
        std::uint32_t name = 0;    // into names
        std::uint64_t start = 0;   // as index_file::TensorEntry
        std::uint64_t length = 0;
        std::optional<std::uint32_t> payload_crc32c;
    };
    // The tensor entries of one file, decoded in order.
    class TensorEntries {
    public:
        TensorEntries(std::span<const std::byte> from, std::size_t count, bool with_crc)
            : in_(from, "manifest"), count_(count), with_crc_(with_crc) {}
        std::size_t size() const noexcept { return count_; }
        Tensor next() {
            Tensor t;
            t.name = static_cast<std::uint32_t>(in_.varint());
            t.start = in_.varint();
            t.length = in_.varint();
            if (with_crc_)
                if (const auto crc = in_.varint()) t.payload_crc32c = static_cast<std::uint32_t>(crc - 1);
            return t;
        }

    private:
        detail::Decoder in_;
        std::size_t count_;
        bool with_crc_;
    };
    struct Shape {
        std::uint32_t name = 0, original_name = 0;  // into names
        std::size_t dims_begin = 0, dims_end = 0;   // into dims
    };
    struct File {
        std::string key;
        std::uint64_t size = 0;
        std::string etag;
        Mode mode = Mode::GLOBAL;
        std::int64_t mode_step = 0;
        std::uint32_t event_file = 0;  // 1 + its number in names; 0: none (a shape-only file)
        std::size_t tensors_at = 0, tensor_count = 0;  // where its tensor entries begin in content; how many
        std::size_t shapes_begin = 0, shapes_end = 0;
    };

    std::uint32_t version = manifest::version;  // of the bytes decoded
    std::optional<std::string> worker;
    std::int64_t first_step = 0;
    std::int64_t last_step = 0;
    std::vector<std::string> names;
    std::vector<File> files;  // in key order
    std::vector<Shape> shapes;
    std::vector<std::int64_t> dims;
    std::span<const std::byte> content;  // the manifest's content (after its header)
    ByteBuffer bytes;                    // when set: the bytes content views

    const std::string* event_file_name(const File& f) const { return f.event_file ? &names[f.event_file - 1] : nullptr; }
    TensorEntries tensors_of(const File& f) const { return {content.subspan(f.tensors_at), f.tensor_count, version >= 2}; }
    std::span<const Shape> shapes_of(const File& f) const {
        return std::span<const Shape>(shapes).subspan(f.shapes_begin, f.shapes_end - f.shapes_begin);
    }
    std::span<const std::int64_t> dims_of(const Shape& s) const {
        return std::span<const std::int64_t>(dims).subspan(s.dims_begin, s.dims_end - s.dims_begin);
    }
};

// Decodes a manifest, without a string per entry; `context` names it in errors (its path or URL).
inline CompactManifest decode_compact(std::span<const std::byte> bytes, std::string_view context) {
    detail::Decoder header(bytes, context);
    if (bytes.size() < magic.size()) header.truncated("the header");
    if (std::string_view(reinterpret_cast<const char*>(bytes.data()), magic.size()) != magic)
        header.fail("it does not begin with " + std::string(magic));
    for (std::size_t i = 0; i < magic.size(); ++i) header.u8();
    const auto v = header.fixed32();
    if (v < oldest_version || v > version)
        header.fail("version " + std::to_string(v) + " (this reader knows versions " + std::to_string(oldest_version) + " to " +
                    std::to_string(version) + ")");
    const auto length = header.fixed64();
    const auto crc = header.fixed32();
    if (length > header.remaining()) header.truncated("its content (" + std::to_string(length) + " bytes declared)");
    if (length < header.remaining()) header.fail(std::to_string(header.remaining() - length) + " bytes follow its content");
    const auto content = header.rest();
    if (crc32c(content) != crc) header.fail("the CRC-32C of its content does not match");

    detail::Decoder in(content, context);
    CompactManifest m;
    m.version = v;
    if (const auto scope = in.u8(); scope > 1) in.fail("scope " + std::to_string(scope));
    else if (scope == 1) m.worker = in.string("the worker name");
    m.first_step = in.svarint();
    m.last_step = in.svarint();
    if (m.first_step < 0 || m.last_step < m.first_step || m.last_step >= (std::int64_t{1} << 62)) in.fail("steps " + std::to_string(m.first_step) + ".." + std::to_string(m.last_step));
    m.names.resize(in.count("name table"));
    if (m.names.size() > UINT32_MAX) in.fail("name table of " + std::to_string(m.names.size()) + " names");
    for (auto& s : m.names) s = in.string("the name table");
    auto name = [&](std::uint64_t i) -> std::uint32_t {
        if (i >= m.names.size()) in.fail("name " + std::to_string(i) + " is not in the table of " + std::to_string(m.names.size()));
        return static_cast<std::uint32_t>(i);
    };
    const auto end_key = paths::index_step_prefix(m.last_step + 1);
    const auto begin_key = m.first_step > 0 ? paths::index_step_prefix(m.first_step) : std::string();
    m.files.resize(in.count("file", 8));
    std::string_view previous;
    for (auto& f : m.files) {
        f.key = in.string("a key");
        const auto sf = paths::parse_step_file(f.key);
        if (!f.key.starts_with(paths::index_prefix) || !sf) in.fail("'" + f.key + "' is not an index file's key");
        if (f.key <= previous) in.fail("keys are not in order at '" + f.key + "'");
        previous = f.key;
        if ((m.first_step > 0 && f.key < begin_key) || f.key >= end_key) in.fail("'" + f.key + "' lies outside its steps");
        if (m.worker && sf->worker != *m.worker) in.fail("'" + f.key + "' is not a file of worker " + *m.worker);
        f.size = in.varint();
        f.etag = in.string("an ETag");
        const auto mode = in.u8();
        if (mode < 1 || mode > 4) in.fail("mode " + std::to_string(mode) + " of '" + f.key + "'");
        f.mode = static_cast<Mode>(mode);
        f.mode_step = in.svarint();
        if (const auto ev = in.varint()) {
            f.event_file = name(ev - 1) + 1;
            const auto& e = m.names[f.event_file - 1];
            if (!e.empty())
                if (const auto problem = paths::event_file_name_problem(e); !problem.empty())
                    in.fail("the event file '" + e + "' of '" + f.key + "' is refused: " + std::string(problem));
        }
        const auto tensors = in.count("tensor", 3);
        f.tensors_at = in.position();
        f.tensor_count = tensors;
        for (std::size_t i = 0; i < tensors; ++i) {
            const auto id = name(in.varint());
            const auto start = in.varint();
            const auto length = in.varint();
            if (length > tfrecord::max_record_bytes || start > static_cast<std::uint64_t>(INT64_MAX) - length)
                in.fail("the record of " + m.names[id] + " in '" + f.key + "' is past any file size");
            if (v >= 2 && in.varint() > std::uint64_t{UINT32_MAX} + 1)
                in.fail("the payload CRC-32C of " + m.names[id] + " in '" + f.key + "' is not a 32-bit CRC");
        }
        if (tensors > 0 && !f.event_file) in.fail("'" + f.key + "' has records but no event file");
        const auto shapes = in.count("shape", 3);
        f.shapes_begin = m.shapes.size();
        for (std::size_t i = 0; i < shapes; ++i) {
            auto& s = m.shapes.emplace_back();
            s.name = name(in.varint());
            s.original_name = name(in.varint());
            const auto dims = in.count("dimension");
            s.dims_begin = m.dims.size();
            for (std::size_t d = 0; d < dims; ++d)
                if (m.dims.emplace_back(in.svarint()) < 0)
                    in.fail("negative dimension in the shape of " + m.names[s.name] + " in '" + f.key + "'");
            s.dims_end = m.dims.size();
        }
        f.shapes_end = m.shapes.size();
    }
    if (!in.done()) in.fail(std::to_string(in.remaining()) + " bytes follow the last file");
    m.content = content;
    return m;
}

// The index file `f` of `m`, with a string per entry.
inline CoveredFile covered_file(const CompactManifest& m, const CompactManifest::File& f) {
    CoveredFile out{f.key, f.size, f.etag, {}};
    out.index.mode = f.mode;
    out.index.mode_step = f.mode_step;
    if (const auto* e = m.event_file_name(f)) out.index.event_file_name = *e;
    auto tensors = m.tensors_of(f);
    out.index.tensors.reserve(tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const auto t = tensors.next();
        out.index.tensors.push_back({m.names[t.name], t.start, t.length, t.payload_crc32c});
    }
    for (const auto& s : m.shapes_of(f)) {
        const auto dims = m.dims_of(s);
        out.index.shapes.push_back({m.names[s.name], m.names[s.original_name], std::vector<std::int64_t>(dims.begin(), dims.end())});
    }
    return out;
}

// Decodes a manifest; `context` names it in errors (its path or URL).
inline Manifest decode(std::span<const std::byte> bytes, std::string_view context) {
    const auto c = decode_compact(bytes, context);
    Manifest m{c.worker, c.first_step, c.last_step, {}};
    m.files.reserve(c.files.size());
    for (const auto& f : c.files) m.files.push_back(covered_file(c, f));
    return m;
}

inline CompactManifest decode_compact(std::string_view bytes, std::string_view context) {
    return decode_compact(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), context);
}

inline Manifest decode(std::string_view bytes, std::string_view context) {
    return decode(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), context);
}

}  // namespace smdebug::manifest
