#pragma once
// Event / Summary / TensorProto (docs/format.md §3): decoding the tensor of one event record and
// encoding an event the reference reader accepts.
#include <charconv>
#include <cstdint>
#include <cstring>
#include <atomic>
#include <concepts>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/event_fields.hpp>
#include <smdebug/format/detail/protobuf.hpp>

namespace smdebug::event {

struct DecodedEvent {
    std::string tag;
    TensorValue value;
    double wall_time = 0;
    std::int64_t step = 0;                  // Event.step (global step)
    std::optional<Mode> mode;               // from plugin data, when present
    std::optional<std::int64_t> mode_step;  // from plugin data, when present
};

namespace detail {

struct RawTensor {
    bool has_dtype = false;
    int dtype = 0;
    Shape shape;
    std::span<const std::byte> content;
    std::vector<std::span<const std::byte>> strings;
    // Typed repeated fields (field number -> list of raw fields), used only without tensor_content.
    std::vector<proto::Field> typed;

    void reset() noexcept {
        has_dtype = false;
        dtype = 0;
        shape.clear();
        content = {};
        strings.clear();
        typed.clear();
    }
};

// The parse_* functions below fill their result in place (a record's structures are parsed once
// per value read: moving them up through every level cost more than the parsing).
inline void parse_shape(std::span<const std::byte> bytes, const proto::Reader& parent, Shape& shape) {
    shape.clear();
    proto::Reader r(bytes, parent.context());
    proto::Field f;
    while (r.next(f)) {
        if (f.number == tf_proto::TensorShapeProto::dim && f.type == proto::WireType::len) {
            proto::Reader dr(f.bytes, parent.context());
            proto::Field d;
            std::int64_t size = 0;
            while (dr.next(d))
                if (d.number == tf_proto::TensorShapeDim::size) {
                    proto::expect(dr, d, proto::WireType::varint, "TensorShapeProto.Dim.size");
                    size = static_cast<std::int64_t>(d.varint);
                }
            if (size < 0) r.fail("tensor dimension of unknown size " + std::to_string(size));
            shape.push_back(static_cast<std::size_t>(size));
        } else if (f.number == tf_proto::TensorShapeProto::unknown_rank && f.varint != 0) {
            r.fail("tensor shape of unknown rank");
        }
    }
}

// Resets `t`, then parses the TensorProto into it.
inline void parse_tensor(std::span<const std::byte> bytes, const proto::Reader& parent, RawTensor& t) {
    t.reset();
    proto::Reader r(bytes, parent.context());
    proto::Field f;
    while (r.next(f)) {
        using F = tf_proto::TensorProto;
        switch (f.number) {
            case F::dtype: proto::expect(r, f, proto::WireType::varint, "TensorProto.dtype"); t.has_dtype = true; t.dtype = static_cast<int>(f.varint); break;
            case F::tensor_shape: proto::expect(r, f, proto::WireType::len, "TensorProto.tensor_shape"); parse_shape(f.bytes, r, t.shape); break;
            case F::tensor_content: proto::expect(r, f, proto::WireType::len, "TensorProto.tensor_content"); t.content = f.bytes; break;
            case F::string_val: proto::expect(r, f, proto::WireType::len, "TensorProto.string_val"); t.strings.push_back(f.bytes); break;
            case F::float_val: case F::double_val: case F::int_val: case F::int64_val: case F::bool_val: case F::half_val:
                t.typed.push_back(f);
                break;
            default: break;
        }
    }
}

// Most elements one typed value may be broadcast to by default (a record of a few bytes could
// otherwise claim terabytes). Tensors written element by element are bounded by the record size
// instead. smdebug's writers never broadcast (they write tensor_content); TensorFlow's splat does.
inline constexpr std::size_t max_broadcast_elements = std::size_t{1} << 20;

// The expansion budget of one decoded record: how many elements one typed value may fill. Process
// wide; SMDEBUG_MAX_EXPANDED_ELEMENTS sets it at first use, set_expansion_budget() at any time.
inline std::atomic<std::size_t>& expansion_budget_cell() {
    static std::atomic<std::size_t> cell = [] {
        if (const char* v = std::getenv("SMDEBUG_MAX_EXPANDED_ELEMENTS"); v && *v) {
            char* end = nullptr;
            const unsigned long long n = std::strtoull(v, &end, 10);
            if (end && *end == '\0' && n > 0) return static_cast<std::size_t>(n);
        }
        return max_broadcast_elements;
    }();
    return cell;
}
inline std::size_t expansion_budget() noexcept { return expansion_budget_cell().load(std::memory_order_relaxed); }

inline std::string shape_string(const Shape& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

inline std::size_t checked_count(const Shape& shape, const proto::Reader& r) {
    std::size_t n = 1;
    for (auto d : shape) {
        if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d) r.fail("tensor shape overflows");
        n *= d;
    }
    return n;
}

// Reads packed or unpacked repeated scalar fields of one field number into doubles/ints of T.
template <class T>
std::vector<T> typed_values(const std::vector<proto::Field>& fields, std::uint32_t number, const proto::Reader& parent) {
    std::vector<T> out;
    auto push = [&](std::uint64_t raw, proto::WireType wt) {
        if constexpr (std::is_same_v<T, float>) {
            if (wt != proto::WireType::fixed32) parent.fail("float_val has the wrong wire type");
            out.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(raw)));
        } else if constexpr (std::is_same_v<T, double>) {
            if (wt != proto::WireType::fixed64) parent.fail("double_val has the wrong wire type");
            out.push_back(std::bit_cast<double>(raw));
        } else {
            if (wt != proto::WireType::varint) parent.fail("integer repeated field has the wrong wire type");
            out.push_back(static_cast<T>(raw));
        }
    };
    for (const auto& f : fields) {
        if (f.number != number) continue;
        if (f.type == proto::WireType::len) {  // packed
            std::span<const std::byte> rest = f.bytes;
            if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
                if (rest.size() % sizeof(T)) parent.fail("packed floating-point field has a partial element");
                for (std::size_t i = 0; i < rest.size(); i += sizeof(T)) {
                    T v;
                    std::memcpy(&v, rest.data() + i, sizeof(T));
                    out.push_back(v);
                }
            } else {
                proto::Reader vr(rest, parent.context());
                while (!vr.at_end()) out.push_back(static_cast<T>(vr.read_varint()));
            }
        } else {
            push(f.varint, f.type);
        }
    }
    return out;
}

// One Summary.Value that holds a tensor, with smdebug's plugin data.
struct TensorSummary {
    std::string_view tag;  // into the payload parsed
    RawTensor tensor;
    std::optional<Mode> mode;
    std::optional<std::int64_t> mode_step;

    void reset() noexcept {
        tag = {};
        tensor.reset();
        mode.reset();
        mode_step.reset();
    }
};

// A plugin data number as std::stoll / std::stoi read it (leading blanks, a sign, digits, anything
// after them ignored; std::invalid_argument or std::out_of_range otherwise). A text that is just
// the number, what smdebug writes, is converted by std::from_chars: no string copy, no
// locale-aware strtoll. Anything else (and an overflow) goes to stoll / stoi for their answer.
template <class Int>
Int plugin_number(std::string_view text) {
    Int v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc{} && end == text.data() + text.size()) return v;
    if constexpr (std::is_same_v<Int, int>) return std::stoi(std::string(text));
    else return std::stoll(std::string(text));
}

// smdebug's SummaryMetadata: plugin_data entries ("mode_step", "3") and ("mode", "1").
inline void parse_plugin_data(std::span<const std::byte> bytes, const proto::Reader& parent, TensorSummary& out) {
    proto::Reader mr(bytes, parent.context());
    proto::Field pd;
    while (mr.next(pd)) {
        if (pd.number != tf_proto::SummaryMetadata::plugin_data || pd.type != proto::WireType::len) continue;
        proto::Reader pr(pd.bytes, parent.context());
        proto::Field pf;
        std::string_view name, content;
        while (pr.next(pf)) {
            if (pf.type != proto::WireType::len) continue;
            const std::string_view s(reinterpret_cast<const char*>(pf.bytes.data()), pf.bytes.size());
            if (pf.number == tf_proto::PluginData::plugin_name) name = s;
            else if (pf.number == tf_proto::PluginData::content) content = s;
        }
        try {
            if (name == "mode_step") out.mode_step = plugin_number<long long>(content);
            else if (name == "mode") {
                const int m = plugin_number<int>(content);
                if (m >= 1 && m <= 4) out.mode = static_cast<Mode>(m);
            }
        } catch (const std::exception&) {
            parent.fail("plugin data '" + std::string(name) + "' is not a number: '" + std::string(content) + "'");
        }
    }
}

// One Summary.Value, parsed into `out` (reset first); false when it holds no tensor.
inline bool parse_summary_value(std::span<const std::byte> bytes, const proto::Reader& parent, TensorSummary& out) {
    using F = tf_proto::SummaryValue;
    proto::Reader vr(bytes, parent.context());
    proto::Field vf;
    out.reset();
    bool has_tensor = false;
    while (vr.next(vf)) {
        if (vf.number == F::tag) {
            proto::expect(vr, vf, proto::WireType::len, "Summary.Value.tag");
            out.tag = std::string_view(reinterpret_cast<const char*>(vf.bytes.data()), vf.bytes.size());
        } else if (vf.number == F::tensor) {
            proto::expect(vr, vf, proto::WireType::len, "Summary.Value.tensor");
            parse_tensor(vf.bytes, vr, out.tensor);
            has_tensor = true;
        } else if (vf.number == F::metadata && vf.type == proto::WireType::len) {
            parse_plugin_data(vf.bytes, parent, out);
        }
    }
    return has_tensor;
}

// The first Summary.Value of a Summary that holds a tensor, parsed into `out`; false when none does.
inline bool first_tensor_summary(std::span<const std::byte> bytes, const proto::Reader& parent, TensorSummary& out) {
    proto::Reader sr(bytes, parent.context());
    proto::Field sv;
    while (sr.next(sv)) {
        if (sv.number != tf_proto::Summary::value) continue;
        proto::expect(sr, sv, proto::WireType::len, "Summary.value");
        if (parse_summary_value(sv.bytes, parent, out)) return true;
    }
    return false;
}

// A tensor of strings (string_val), or one without dtype and without values.
inline TensorValue string_tensor(const RawTensor& t, std::size_t count, const proto::Reader& r) {
    if (t.has_dtype && t.dtype != tf_dtype::string && t.dtype != 0) r.fail("string values with a numeric dtype");
    if (!t.strings.empty() && t.shape.size() != 1)
        r.fail("string tensor must be 1-D, has " + std::to_string(t.shape.size()) + " dimensions");
    if (t.strings.empty() && count != 0) r.fail("tensor without dtype holds no values");
    const std::size_t n = t.shape.empty() ? 0 : t.shape[0];
    if (t.strings.size() < n) r.fail("string tensor of length " + std::to_string(n) + " holds only " + std::to_string(t.strings.size()) + " strings");
    std::vector<std::string> strings;
    strings.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        strings.emplace_back(reinterpret_cast<const char*>(t.strings[i].data()), t.strings[i].size());
    return TensorValue(t.shape, std::move(strings));
}

// A numeric tensor from tensor_content, left in place inside `buffer` (moved down to an aligned
// address when needed) and kept alive by `keepalive`. Takes t's shape.
inline TensorValue content_tensor(ByteBuffer& buffer, std::shared_ptr<const void> keepalive, RawTensor& t, DType dtype,
                                  std::size_t count, const proto::Reader& r) {
    const std::size_t esize = dtype_size(dtype);
    if (count > t.content.size() / esize || count * esize != t.content.size())
        r.fail("tensor_content has " + std::to_string(t.content.size()) + " bytes, shape needs " +
               std::to_string(count) + " elements of " + std::to_string(esize) + " bytes");
    auto* base = buffer.data();
    auto* p = const_cast<std::byte*>(t.content.data());
    if (p < base || p + t.content.size() > base + buffer.size())
        throw UsageError("event::decode: payload does not lie inside its owning buffer");
    const auto misalign = reinterpret_cast<std::uintptr_t>(p) % esize;
    if (misalign) {  // slide the elements down to an aligned address inside the same buffer
        std::memmove(p - misalign, p, t.content.size());
        p -= misalign;
    }
    return TensorValue(dtype, std::move(t.shape), std::move(keepalive), p);
}

// A numeric tensor from typed repeated fields (TensorFlow style; smdebug does not write these).
inline TensorValue typed_fields_tensor(const RawTensor& t, DType dtype, std::size_t count, const proto::Reader& r,
                                       std::string_view tag = {}) {
    auto fill = [&](auto values) {
        using V = typename decltype(values)::value_type;
        if (values.size() != count && values.size() != 1)
            r.fail("typed tensor field holds " + std::to_string(values.size()) + " values, shape needs " + std::to_string(count));
        // One value fills the whole shape (TensorFlow's splat): a few bytes may claim any size.
        if (values.size() != count && count > expansion_budget())
            r.fail("tensor '" + std::string(tag) + "' of shape " + shape_string(t.shape) + ": its typed field holds one value for " +
                   std::to_string(count) + " elements, more than the expansion budget of " +
                   std::to_string(expansion_budget()) + " elements (max_broadcast_elements; raise it with "
                   "smdebug::set_expansion_budget or SMDEBUG_MAX_EXPANDED_ELEMENTS)");
        return visit_dtype(dtype, [&](auto tag) -> TensorValue {
            using T = decltype(tag);
            std::unique_ptr<T[]> out(new T[count]);
            for (std::size_t i = 0; i < count; ++i) {
                const V v = values[values.size() == 1 ? 0 : i];
                if constexpr (std::is_same_v<T, float16>) out[i] = float16::from_bits(static_cast<std::uint16_t>(v));
                else if constexpr (requires { T(v); }) out[i] = T(v);
                else r.fail("typed tensor field does not fit the dtype");
            }
            return TensorValue::from<T>(std::span<const T>(out.get(), count), t.shape);
        });
    };
    using F = tf_proto::TensorProto;
    switch (dtype) {
        case DType::float32: return fill(typed_values<float>(t.typed, F::float_val, r));
        case DType::float64: return fill(typed_values<double>(t.typed, F::double_val, r));
        case DType::int8: case DType::int16: case DType::int32: case DType::uint8: case DType::uint16:
            return fill(typed_values<std::int64_t>(t.typed, F::int_val, r));
        case DType::int64: return fill(typed_values<std::int64_t>(t.typed, F::int64_val, r));
        case DType::boolean: return fill(typed_values<std::uint64_t>(t.typed, F::bool_val, r));
        case DType::float16: return fill(typed_values<std::uint64_t>(t.typed, F::half_val, r));
        default: r.fail("tensor of dtype " + std::string(dtype_name(dtype)) + " has no tensor_content");
    }
}

// The value of a decoded TensorProto (docs/format.md §3.1).
inline TensorValue tensor_value(ByteBuffer& buffer, std::shared_ptr<const void> keepalive, RawTensor& t, const proto::Reader& r,
                                std::string_view tag = {}) {
    const std::size_t count = checked_count(t.shape, r);
    const bool no_numbers = (!t.has_dtype || t.dtype == tf_dtype::string) && t.content.empty() && t.typed.empty();
    if (!t.strings.empty() || no_numbers) return string_tensor(t, count, r);
    const auto dtype = dtype_from_tf(t.dtype);
    if (!dtype) r.fail("unsupported tensor dtype code " + std::to_string(t.dtype));
    if (!t.content.empty()) return content_tensor(buffer, std::move(keepalive), t, *dtype, count, r);
    if (count == 0) return TensorValue(*dtype, t.shape, nullptr, nullptr);
    return typed_fields_tensor(t, *dtype, count, r, tag);
}

// What tensor_value would build from a decoded TensorProto — its dtype and byte_size() — checked
// as tensor_value checks it, without building the value (a broadcast value is not expanded).
struct TensorOutline {
    DType dtype;
    std::size_t byte_size;
};
inline TensorOutline outline_tensor(const RawTensor& t, const proto::Reader& r) {
    const std::size_t count = checked_count(t.shape, r);
    const bool no_numbers = (!t.has_dtype || t.dtype == tf_dtype::string) && t.content.empty() && t.typed.empty();
    if (!t.strings.empty() || no_numbers)  // bounded by the record's own bytes
        return {DType::string, string_tensor(t, count, r).byte_size()};
    const auto dtype = dtype_from_tf(t.dtype);
    if (!dtype) r.fail("unsupported tensor dtype code " + std::to_string(t.dtype));
    const std::size_t esize = dtype_size(*dtype);
    if (!t.content.empty()) {
        if (esize == 0 || count > t.content.size() / esize || count * esize != t.content.size())
            r.fail("tensor_content has " + std::to_string(t.content.size()) + " bytes, shape needs " + std::to_string(count) +
                   " elements of " + std::to_string(esize) + " bytes");
        return {*dtype, t.content.size()};
    }
    if (count == 0) return {*dtype, 0};
    using F = tf_proto::TensorProto;
    std::size_t n = 0;
    switch (*dtype) {
        case DType::float32: n = typed_values<float>(t.typed, F::float_val, r).size(); break;
        case DType::float64: n = typed_values<double>(t.typed, F::double_val, r).size(); break;
        case DType::int8: case DType::int16: case DType::int32: case DType::uint8: case DType::uint16:
            n = typed_values<std::int64_t>(t.typed, F::int_val, r).size(); break;
        case DType::int64: n = typed_values<std::int64_t>(t.typed, F::int64_val, r).size(); break;
        case DType::boolean: n = typed_values<std::uint64_t>(t.typed, F::bool_val, r).size(); break;
        case DType::float16: n = typed_values<std::uint64_t>(t.typed, F::half_val, r).size(); break;
        default: r.fail("tensor of dtype " + std::string(dtype_name(*dtype)) + " has no tensor_content");
    }
    if (n != count && n != 1) r.fail("typed tensor field holds " + std::to_string(n) + " values, shape needs " + std::to_string(count));
    if (count > std::numeric_limits<std::size_t>::max() / esize) r.fail("tensor shape overflows");
    return {*dtype, count * esize};
}

}  // namespace detail

// What a record holds, without its values: its tag, step, dtype and shape, checked as decode()
// checks them. Costs the record's bytes, never the expansion of a broadcast value.
struct EventDescription {
    std::string tag;
    std::int64_t step = 0;
    DType dtype = DType::float32;
    Shape shape;
    std::size_t byte_size = 0;  // the decoded value's byte_size()
};

namespace detail {

// An Event's wall time, step and first tensor summary (decode and describe read the same fields).
struct ParsedEvent {
    double wall_time = 0;
    std::int64_t step = 0;
    TensorSummary summary;
};
inline ParsedEvent parse_event(proto::Reader& r) {
    using F = tf_proto::Event;
    ParsedEvent ev;
    proto::Field f;
    bool has_summary = false;
    while (r.next(f)) {
        if (f.number == F::wall_time && f.type == proto::WireType::fixed64) ev.wall_time = std::bit_cast<double>(f.varint);
        else if (f.number == F::step && f.type == proto::WireType::varint) ev.step = static_cast<std::int64_t>(f.varint);
        else if (f.number == F::summary) {
            proto::expect(r, f, proto::WireType::len, "Event.summary");
            if (!has_summary) has_summary = first_tensor_summary(f.bytes, r, ev.summary);
        }
    }
    if (!has_summary) r.fail("the event holds no tensor summary");
    return ev;
}

}  // namespace detail

// describe()'s tag, step and byte size, the tag as a view into `payload` (no copy): what readers
// that only check a record need (RecordReader).
struct RecordOutline {
    std::string_view tag;
    std::int64_t step = 0;
    std::size_t byte_size = 0;
};
inline RecordOutline outline(std::span<const std::byte> payload, std::string_view context) {
    proto::Reader r(payload, context);
    const auto ev = detail::parse_event(r);
    return {ev.summary.tag, ev.step, detail::outline_tensor(ev.summary.tensor, r).byte_size};
}

inline EventDescription describe(std::span<const std::byte> payload, std::string_view context) {
    proto::Reader r(payload, context);
    auto ev = detail::parse_event(r);
    EventDescription d;
    d.tag = std::string(ev.summary.tag);
    d.step = ev.step;
    const auto outline = detail::outline_tensor(ev.summary.tensor, r);
    d.dtype = outline.dtype;
    d.byte_size = outline.byte_size;
    d.shape = std::move(ev.summary.tensor.shape);
    return d;
}

// decode()'s value, for readers that check the record's identity and keep only the value
// (RecordReader): check(tag, step) sees the tag as a view into `payload` (no copy) and runs
// before the value is decoded, as decoding may move the elements over the bytes before them.
template <class CheckIdentity>
    requires std::invocable<CheckIdentity&, std::string_view, std::int64_t>
TensorValue decode_value(ByteBuffer& buffer, std::shared_ptr<const void> keepalive, std::span<const std::byte> payload,
                         std::string_view context, CheckIdentity&& check) {
    proto::Reader r(payload, context);
    auto parsed = detail::parse_event(r);
    check(parsed.summary.tag, parsed.step);
    return detail::tensor_value(buffer, std::move(keepalive), parsed.summary.tensor, r, parsed.summary.tag);
}

// Decodes the tensor of the first Summary.Value in the Event `payload`, which lies inside
// `buffer`. Numeric data is left in place (moved down to an aligned address when needed), and
// the value keeps `keepalive` (what owns the buffer's bytes: buffer.share()).
inline DecodedEvent decode(ByteBuffer& buffer, std::shared_ptr<const void> keepalive, std::span<const std::byte> payload,
                           std::string_view context) {
    proto::Reader r(payload, context);
    auto parsed = detail::parse_event(r);
    DecodedEvent ev;
    ev.wall_time = parsed.wall_time;
    ev.step = parsed.step;
    ev.tag = std::string(parsed.summary.tag);
    ev.mode = parsed.summary.mode;
    ev.mode_step = parsed.summary.mode_step;
    ev.value = detail::tensor_value(buffer, std::move(keepalive), parsed.summary.tensor, r, ev.tag);
    return ev;
}
inline DecodedEvent decode(const std::shared_ptr<ByteBuffer>& owner, std::span<const std::byte> payload, std::string_view context) {
    return decode(*owner, owner, payload, context);
}

// The framing of an Event with one Summary.Value (docs/format.md §3.1): Event.wall_time,
// Event.step (omitted when 0, as proto3 does), then Event.summary > Summary.value > Value.tag.
// The value's other fields (value_fields_size bytes, written by the caller right after
// append_head()) complete the payload. Sizes are computed up front, so size() is known before
// anything is written.
class SummaryEnvelope {
public:
    SummaryEnvelope(double wall_time, std::int64_t step, std::string_view tag, std::size_t value_fields_size)
        : wall_time_(wall_time), step_(step), tag_(tag) {
        value_size_ = field_size(tag.size()) + value_fields_size;
        summary_size_ = field_size(value_size_);
        size_ = 9 + (step_ != 0 ? 1 + varint_size(static_cast<std::uint64_t>(step_)) : 0) + field_size(summary_size_);
    }

    // The whole Event payload, in bytes.
    std::size_t size() const noexcept { return size_; }

    void append_head(proto::Writer& w) const {
        w.field_double(tf_proto::Event::wall_time, wall_time_);
        if (step_ != 0) w.field_varint(tf_proto::Event::step, static_cast<std::uint64_t>(step_));
        w.tag(tf_proto::Event::summary, proto::WireType::len);
        w.varint(summary_size_);
        w.tag(tf_proto::Summary::value, proto::WireType::len);
        w.varint(value_size_);
        w.field_bytes(tf_proto::SummaryValue::tag, tag_);
    }

    static std::size_t varint_size(std::uint64_t v) noexcept {
        std::size_t n = 1;
        while (v >= 0x80) { v >>= 7; ++n; }
        return n;
    }
    // A length-delimited field of `len` bytes with a field number below 16 (one-byte key).
    static std::size_t field_size(std::size_t len) noexcept { return 1 + varint_size(len) + len; }

private:
    double wall_time_;
    std::int64_t step_;
    std::string_view tag_;
    std::size_t value_size_ = 0, summary_size_ = 0, size_ = 0;
};

// The Event payload holding `value` under `tag` (docs/format.md §3.1, §3.2). The nested lengths are
// computed up front, so the payload's size() is known before it is written and append_to() copies
// the element bytes once, straight into the destination (e.g. a step's event buffer). It refers
// to `tag` and `value`, which must outlive it.
class Encoder {
public:
    Encoder(std::string_view tag, const TensorValue& value, std::int64_t global_step, double wall_time, Mode mode,
            std::int64_t mode_step)
        : value_(value), envelope_(wall_time, global_step, tag, 0) {
        using T = tf_proto::TensorProto;
        proto::Writer h(head_);  // TensorProto fields before the elements: dtype, tensor_shape
        if (!value.is_string()) h.field_varint(T::dtype, static_cast<std::uint64_t>(dtype_to_tf(value.dtype())));
        h.field_message(T::tensor_shape, [&](proto::Writer& shape) {
            for (auto d : value.shape())
                shape.field_message(tf_proto::TensorShapeProto::dim, [&](proto::Writer& dim) {
                    if (d != 0) dim.field_varint(tf_proto::TensorShapeDim::size, d);
                    dim.field_bytes(tf_proto::TensorShapeDim::name, std::string(tag) + "_" + std::to_string(d));
                });
        });
        proto::Writer m(meta_);  // SummaryMetadata: plugin data mode_step, mode
        auto plugin_data = [&](std::string_view name, std::int64_t number) {
            m.field_message(tf_proto::SummaryMetadata::plugin_data, [&](proto::Writer& pd) {
                pd.field_bytes(tf_proto::PluginData::plugin_name, name);
                pd.field_bytes(tf_proto::PluginData::content, std::to_string(number));
            });
        };
        plugin_data("mode_step", mode_step);
        plugin_data("mode", static_cast<int>(mode));
        std::size_t elements = 0;
        if (value.is_string()) {
            for (const auto& str : value.strings()) elements += SummaryEnvelope::field_size(str.size());
        } else if (!value.bytes().empty()) {
            elements = SummaryEnvelope::field_size(value.bytes().size());
        }
        tensor_size_ = head_.size() + elements;
        envelope_ = SummaryEnvelope(wall_time, global_step, tag,
                                    SummaryEnvelope::field_size(tensor_size_) + SummaryEnvelope::field_size(meta_.size()));
    }

    std::size_t size() const noexcept { return envelope_.size(); }

    // Appends exactly size() bytes to `out`.
    void append_to(std::string& out) const {
        using T = tf_proto::TensorProto;
        proto::Writer w(out);
        envelope_.append_head(w);
        w.tag(tf_proto::SummaryValue::tensor, proto::WireType::len);
        w.varint(tensor_size_);
        out += head_;
        if (value_.is_string()) {
            for (const auto& str : value_.strings()) w.field_bytes(T::string_val, str);
        } else if (!value_.bytes().empty()) {
            w.field_bytes(T::tensor_content, value_.bytes());
        }
        w.field_bytes(tf_proto::SummaryValue::metadata, meta_);
    }

    std::string str() const {
        std::string out;
        out.reserve(size());
        append_to(out);
        return out;
    }

private:
    const TensorValue& value_;
    SummaryEnvelope envelope_;
    std::string head_, meta_;
    std::size_t tensor_size_ = 0;
};

// Encodes an Event payload holding `value` under `tag` (docs/format.md §3.1, §3.2).
inline std::string encode(std::string_view tag, const TensorValue& value, std::int64_t global_step, double wall_time,
                          Mode mode, std::int64_t mode_step) {
    return Encoder(tag, value, global_step, wall_time, mode, mode_step).str();
}

}  // namespace smdebug::event

namespace smdebug {

// How many elements one typed value of a record may be expanded to when it is decoded (process
// wide; default event::detail::max_broadcast_elements, or SMDEBUG_MAX_EXPANDED_ELEMENTS). Over it, reading
// the value is a FormatError naming the tensor, its shape and the budget.
inline void set_expansion_budget(std::size_t elements) noexcept {
    event::detail::expansion_budget_cell().store(elements ? elements : 1, std::memory_order_relaxed);
}
inline std::size_t expansion_budget() noexcept { return event::detail::expansion_budget(); }

}  // namespace smdebug

