#pragma once
// The fast path of index_file::parse: a strict scanner for the index files smdebug writers produce
// (docs/format.md §4), filling an IndexFile straight from the text — no JSON tree, no allocation
// but the result's own vectors (and names longer than std::string's inline buffer).
//
// It reads a subset of JSON: the three known top-level keys and the known keys of meta and of the
// payload entries, in any order and with any JSON whitespace, each at most once; strings without
// escapes, control characters or bytes >= 0x80; integers of at most 18 digits (no fraction,
// exponent or "-0"); null where the general parser allows it. It also applies every check the
// general parser makes after reading (limits, record lengths, event file paths). Anything outside
// that subset or failing a check makes scan() return nullopt and index_file::parse hands the text
// to parse_dom, which gives the result or the error. So the scanner never accepts what parse_dom
// rejects, and what it accepts it reads as parse_dom does: the index_file fuzz target compares the
// two on every input the scanner accepts.
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include <smdebug/core/modes.hpp>
#include <smdebug/format/detail/index_file_types.hpp>
#include <smdebug/format/detail/json.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/format/paths.hpp>

namespace smdebug::index_file::scanner {

class Scanner {
public:
    explicit Scanner(std::string_view text) : p_(text.data()), e_(text.data() + text.size()) {}

    void ws() noexcept {
        while (p_ != e_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }
    // The next non-blank character is `c`: consumes it.
    bool eat(char c) noexcept {
        ws();
        if (p_ == e_ || *p_ != c) return false;
        ++p_;
        return true;
    }
    bool at_end() noexcept {
        ws();
        return p_ == e_;
    }
    // A string of printable ASCII without escapes (what else JSON allows goes to the DOM parser).
    bool string(std::string_view& out) noexcept {
        if (!eat('"')) return false;
        const char* const begin = p_;
        for (; p_ != e_; ++p_) {
            const auto c = static_cast<unsigned char>(*p_);
            if (c == '"') break;
            if (c == '\\' || c < 0x20 || c >= 0x80) return false;
        }
        if (p_ == e_) return false;
        out = std::string_view(begin, static_cast<std::size_t>(p_ - begin));
        ++p_;
        return true;
    }
    // An integer as JSON writes it, at most 18 digits: no leading zero, fraction, exponent or "-0".
    bool integer(std::int64_t& out) noexcept {
        ws();
        const bool negative = p_ != e_ && *p_ == '-';
        if (negative) ++p_;
        if (p_ == e_ || !digit(*p_)) return false;
        if (*p_ == '0' && p_ + 1 != e_ && digit(p_[1])) return false;
        const char* const begin = p_;
        std::int64_t v = 0;
        for (; p_ != e_ && digit(*p_); ++p_) {
            if (p_ - begin == 18) return false;
            v = v * 10 + (*p_ - '0');
        }
        if (p_ != e_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
        if (negative && v == 0) return false;
        out = negative ? -v : v;
        return true;
    }
    bool non_negative(std::uint64_t& out) noexcept {
        std::int64_t v = 0;
        if (!integer(v) || v < 0) return false;
        out = static_cast<std::uint64_t>(v);
        return true;
    }
    // The exact bytes `s` next (no blank skipped): consumes them.
    bool literal(std::string_view s) noexcept {
        if (static_cast<std::size_t>(e_ - p_) < s.size() || std::string_view(p_, s.size()) != s) return false;
        p_ += s.size();
        return true;
    }
    const char* mark() const noexcept { return p_; }
    void rewind(const char* mark) noexcept { p_ = mark; }
    // `null` next: consumes it.
    bool null() noexcept {
        ws();
        if (e_ - p_ < 4 || std::string_view(p_, 4) != "null") return false;
        p_ += 4;
        return true;
    }
    // An object's members: for each key, `member(key)` reads the value. False on any failure.
    template <class Member>
    bool object(Member&& member) {
        if (!eat('{')) return false;
        if (eat('}')) return true;
        do {
            std::string_view key;
            if (!string(key) || !eat(':') || !member(key)) return false;
        } while (eat(','));
        return eat('}');
    }
    // An array's elements: `element()` reads each.
    template <class Element>
    bool array(Element&& element) {
        if (!eat('[')) return false;
        if (eat(']')) return true;
        do {
            if (!element()) return false;
        } while (eat(','));
        return eat(']');
    }

private:
    static bool digit(char c) noexcept { return c >= '0' && c <= '9'; }
    const char* p_;
    const char* e_;
};

// A key seen once: false (decline) on a repeat, which the DOM parser resolves its own way.
inline bool first_time(bool& seen) noexcept { return !std::exchange(seen, true); }

// A "tensorname" value into `out`: a string of at most max_name_bytes, given once.
inline bool scan_name(Scanner& s, bool& seen, const Limits& limits, std::string& out) {
    std::string_view n;
    if (!first_time(seen) || !s.string(n) || n.size() > limits.max_name_bytes) return false;
    out.assign(n);
    return true;
}

inline bool scan_meta(Scanner& s, IndexFile& f) {
    bool mode = false, mode_step = false, event_file = false;
    const bool ok = s.object([&](std::string_view key) {
        if (key == "mode") {
            std::string_view name;
            if (!first_time(mode) || !s.string(name)) return false;
            const auto m = parse_mode(name);
            if (!m) return false;
            f.mode = *m;
            return true;
        }
        if (key == "mode_step") return first_time(mode_step) && s.integer(f.mode_step);
        if (key == "event_file_name") {
            if (!first_time(event_file)) return false;
            if (s.null()) return true;
            std::string_view name;
            if (!s.string(name)) return false;
            f.event_file_name.emplace(name);
            return true;
        }
        return false;
    });
    return ok && mode && mode_step;
}

inline bool tensor_checks(const TensorEntry& t) noexcept {
    return t.length <= tfrecord::max_record_bytes && t.start <= static_cast<std::uint64_t>(INT64_MAX) - t.length;
}

inline bool scan_tensor(Scanner& s, IndexFile& f, const Limits& limits) {
    TensorEntry t;
    // An entry as smdebug's writers (Python's json.dump) lay it out; anything else below.
    s.ws();
    const char* const mark = s.mark();
    std::string_view n;
    std::uint64_t crc = 0;
    if (s.literal(R"({"tensorname": )") && s.string(n) && n.size() <= limits.max_name_bytes && s.literal(R"(, "start_idx": )") &&
        s.non_negative(t.start) && s.literal(R"(, "length": )") && s.non_negative(t.length) &&
        (s.literal("}") || (s.literal(R"(, "payload_crc32c": )") && s.non_negative(crc) && crc <= UINT32_MAX && s.literal("}") &&
                            (t.payload_crc32c = static_cast<std::uint32_t>(crc), true)))) {
        if (!tensor_checks(t)) return false;
        t.name.assign(n);
        f.tensors.push_back(std::move(t));
        return true;
    }
    s.rewind(mark);
    t = {};
    bool name = false, start = false, length = false, checksum = false;
    const bool ok = s.object([&](std::string_view key) {
        if (key == "tensorname") return scan_name(s, name, limits, t.name);
        if (key == "start_idx") return first_time(start) && s.non_negative(t.start);
        if (key == "length") return first_time(length) && s.non_negative(t.length);
        if (key == payload_crc_key) {
            if (!first_time(checksum) || !s.non_negative(crc) || crc > UINT32_MAX) return false;
            t.payload_crc32c = static_cast<std::uint32_t>(crc);
            return true;
        }
        return false;
    });
    if (!ok || !name || !start || !length || !tensor_checks(t)) return false;
    f.tensors.push_back(std::move(t));
    return true;
}

inline bool scan_shape(Scanner& s, IndexFile& f, const Limits& limits) {
    ShapeEntry se;
    bool name = false, original = false, shape = false;
    const bool ok = s.object([&](std::string_view key) {
        if (key == "tensorname") return scan_name(s, name, limits, se.name);
        if (key == "originalname") {
            std::string_view n;
            if (!first_time(original) || !s.string(n)) return false;
            se.original_name.assign(n);
            return true;
        }
        if (key == "shape") {
            return first_time(shape) && s.array([&] {
                std::int64_t d = 0;
                if (!s.integer(d) || d < 0) return false;
                se.shape.push_back(d);
                return true;
            });
        }
        return false;
    });
    if (!ok || !name || !shape) return false;
    if (!original) se.original_name = se.name;
    f.shapes.push_back(std::move(se));
    return true;
}

// Fills `f` with the index file in `text` (reusing its vectors' memory); false: not in the
// scanner's subset, or not valid (parse_dom says why), and `f` holds anything.
inline bool scan_into(std::string_view text, const Limits& limits, IndexFile& f) {
    if (text.size() > json::max_document_bytes) return false;
    f.mode = Mode::GLOBAL;
    f.mode_step = 0;
    f.event_file_name.reset();
    f.tensors.clear();
    f.shapes.clear();
    Scanner s(text);
    bool meta = false, tensors = false, shapes = false;
    const bool ok = s.object([&](std::string_view key) {
        if (key == "meta") return first_time(meta) && scan_meta(s, f);
        if (key == "tensor_payload") {
            if (!first_time(tensors)) return false;
            if (s.null()) return true;
            f.tensors.reserve(text.size() / 64 + 1);  // an entry takes 70-90 bytes as smdebug writes it
            return s.array([&] { return scan_tensor(s, f, limits); });
        }
        if (key == "shape_payload") {
            if (!first_time(shapes)) return false;
            return s.null() || s.array([&] { return scan_shape(s, f, limits); });
        }
        return false;
    });
    if (!ok || !s.at_end() || !meta || (!tensors && !shapes)) return false;
    if (!f.tensors.empty() && !f.event_file_name) return false;
    if (f.event_file_name && !f.event_file_name->empty() && !paths::event_file_name_problem(*f.event_file_name).empty())
        return false;
    return true;
}

// The index file in `text`, or nullopt: not in the scanner's subset, or not valid (parse_dom says why).
inline std::optional<IndexFile> scan(std::string_view text, const Limits& limits) {
    std::optional<IndexFile> out(std::in_place);
    if (!scan_into(text, limits, *out)) return std::nullopt;
    return out;
}

}  // namespace smdebug::index_file::scanner
