#pragma once
// JSON helpers over Boost.JSON: parsing with errors that name the file, typed field access, and
// serialisation byte-identical to Python's json.dumps defaults (", " / ": ", ASCII-only).
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include <smdebug/core/errors.hpp>

namespace smdebug::json {

namespace bj = boost::json;

// Resource limits of every JSON document the library reads (index, collections and hook
// configuration files). smdebug's documents nest 4 deep; the parser is iterative, but the value
// tree and its serialiser recurse, so depth is bounded well below any stack limit.
inline constexpr std::size_t max_depth = 64;
inline constexpr std::size_t max_document_bytes = std::size_t{1} << 30;

template <class Error = FormatError>
bj::value parse(std::string_view text, std::string_view context, std::string_view what = "invalid JSON",
                bj::storage_ptr storage = {}) {
    if (text.size() > max_document_bytes)
        throw Error(std::string(context) + ": " + std::string(what) + " (document of " + std::to_string(text.size()) +
                    " bytes exceeds json::max_document_bytes = " + std::to_string(max_document_bytes) + ")");
    bj::parse_options opts;
    opts.max_depth = max_depth;
    boost::system::error_code ec;
    bj::value v = bj::parse(text, ec, std::move(storage), opts);
    if (ec == bj::error::too_deep)
        throw Error(std::string(context) + ": " + std::string(what) + " (nested deeper than json::max_depth = " +
                    std::to_string(max_depth) + ")");
    if (ec) throw Error(std::string(context) + ": " + std::string(what) + " (" + ec.message() + ")");
    return v;
}

namespace detail {
inline void dump_string(std::string& out, std::string_view s) {
    out.push_back('"');
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        auto put_u = [&](unsigned u) { char b[16]; std::snprintf(b, sizeof b, "\\u%04x", u); out += b; };
        if (c == '"') { out += "\\\""; ++i; }
        else if (c == '\\') { out += "\\\\"; ++i; }
        else if (c == '\n') { out += "\\n"; ++i; }
        else if (c == '\r') { out += "\\r"; ++i; }
        else if (c == '\t') { out += "\\t"; ++i; }
        else if (c == '\b') { out += "\\b"; ++i; }
        else if (c == '\f') { out += "\\f"; ++i; }
        else if (c < 0x20) { put_u(c); ++i; }
        else if (c < 0x80) { out.push_back(static_cast<char>(c)); ++i; }
        else {  // UTF-8 -> \uXXXX (surrogate pairs above the BMP), as ensure_ascii does
            unsigned cp = 0;
            int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
            if (len == 1 || i + len > s.size()) { put_u(0xFFFD); ++i; continue; }
            cp = c & (0x7F >> len);
            for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
            if (cp >= 0x10000) {
                cp -= 0x10000;
                put_u(0xD800 + (cp >> 10));
                put_u(0xDC00 + (cp & 0x3FF));
            } else {
                put_u(cp);
            }
            i += len;
        }
    }
    out.push_back('"');
}
}  // namespace detail

inline void dump(std::string& out, const bj::value& v) {
    switch (v.kind()) {
        case bj::kind::null: out += "null"; break;
        case bj::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
        case bj::kind::int64: out += std::to_string(v.get_int64()); break;
        case bj::kind::uint64: out += std::to_string(v.get_uint64()); break;
        case bj::kind::double_: out += bj::serialize(v); break;
        case bj::kind::string: detail::dump_string(out, v.get_string()); break;
        case bj::kind::array: {
            out.push_back('[');
            bool first = true;
            for (const auto& e : v.get_array()) {
                if (!first) out += ", ";
                first = false;
                dump(out, e);
            }
            out.push_back(']');
            break;
        }
        case bj::kind::object: {
            out.push_back('{');
            bool first = true;
            for (const auto& kv : v.get_object()) {
                if (!first) out += ", ";
                first = false;
                detail::dump_string(out, kv.key());
                out += ": ";
                dump(out, kv.value());
            }
            out.push_back('}');
            break;
        }
    }
}
inline std::string dumps(const bj::value& v) {
    std::string out;
    dump(out, v);
    return out;
}

}  // namespace smdebug::json
