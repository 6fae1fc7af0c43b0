#pragma once
// Decoding one event record (docs/format.md §3): the Event's wall time and step, its first
// Summary.Value holding a tensor with smdebug's plugin data (mode, mode step), and that tensor's
// value (decode, decode_value) or only its outline (describe, outline), which never expands a
// broadcast value. The TensorProto itself: format/detail/tensor_proto.hpp.
#include <bit>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/event_fields.hpp>
#include <smdebug/format/detail/protobuf.hpp>
#include <smdebug/format/detail/tensor_proto.hpp>

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
// `expansion_budget`: see decode().
template <class CheckIdentity>
    requires std::invocable<CheckIdentity&, std::string_view, std::int64_t>
TensorValue decode_value(ByteBuffer& buffer, std::shared_ptr<const void> keepalive, std::span<const std::byte> payload,
                         std::string_view context, CheckIdentity&& check,
                         std::size_t expansion_budget = detail::max_broadcast_elements) {
    proto::Reader r(payload, context);
    auto parsed = detail::parse_event(r);
    check(parsed.summary.tag, parsed.step);
    return detail::tensor_value(buffer, std::move(keepalive), parsed.summary.tensor, r, parsed.summary.tag, expansion_budget);
}

// Decodes the tensor of the first Summary.Value in the Event `payload`, which lies inside
// `buffer`. Numeric data is left in place (moved down to an aligned address when needed), and
// the value keeps `keepalive` (what owns the buffer's bytes: buffer.share()). One typed value
// fills at most `expansion_budget` elements (detail::max_broadcast_elements); over it, a
// FormatError names `context`, the tensor, its shape and the budget.
inline DecodedEvent decode(ByteBuffer& buffer, std::shared_ptr<const void> keepalive, std::span<const std::byte> payload,
                           std::string_view context, std::size_t expansion_budget = detail::max_broadcast_elements) {
    proto::Reader r(payload, context);
    auto parsed = detail::parse_event(r);
    DecodedEvent ev;
    ev.wall_time = parsed.wall_time;
    ev.step = parsed.step;
    ev.tag = std::string(parsed.summary.tag);
    ev.mode = parsed.summary.mode;
    ev.mode_step = parsed.summary.mode_step;
    ev.value = detail::tensor_value(buffer, std::move(keepalive), parsed.summary.tensor, r, ev.tag, expansion_budget);
    return ev;
}
inline DecodedEvent decode(const std::shared_ptr<ByteBuffer>& owner, std::span<const std::byte> payload, std::string_view context,
                           std::size_t expansion_budget = detail::max_broadcast_elements) {
    return decode(*owner, owner, payload, context, expansion_budget);
}
}  // namespace smdebug::event
