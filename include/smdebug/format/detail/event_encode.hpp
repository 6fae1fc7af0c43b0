#pragma once
// Encoding an Event payload that holds one tensor, as the reference reader accepts it
// (docs/format.md §3.1, §3.2): SummaryEnvelope (the framing) and Encoder (the TensorProto and
// smdebug's plugin data).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/event_fields.hpp>
#include <smdebug/format/detail/protobuf.hpp>

namespace smdebug::event {

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
