#pragma once
// Event / Summary / TensorProto (FORMAT.md §3): decoding the tensor of one event record and
// encoding an event the reference reader accepts.
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/protobuf.hpp>

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
};

inline Shape parse_shape(std::span<const std::byte> bytes, const proto::Reader& parent) {
    Shape shape;
    proto::Reader r(bytes, parent.context());
    proto::Field f;
    while (r.next(f)) {
        if (f.number == 2 && f.type == proto::WireType::len) {
            proto::Reader dr(f.bytes, parent.context());
            proto::Field d;
            std::int64_t size = 0;
            while (dr.next(d))
                if (d.number == 1) {
                    proto::expect(dr, d, proto::WireType::varint, "TensorShapeProto.Dim.size");
                    size = static_cast<std::int64_t>(d.varint);
                }
            if (size < 0) r.fail("tensor dimension of unknown size " + std::to_string(size));
            shape.push_back(static_cast<std::size_t>(size));
        } else if (f.number == 3 && f.varint != 0) {
            r.fail("tensor shape of unknown rank");
        }
    }
    return shape;
}

inline RawTensor parse_tensor(std::span<const std::byte> bytes, const proto::Reader& parent) {
    RawTensor t;
    proto::Reader r(bytes, parent.context());
    proto::Field f;
    while (r.next(f)) {
        switch (f.number) {
            case 1: proto::expect(r, f, proto::WireType::varint, "TensorProto.dtype"); t.has_dtype = true; t.dtype = static_cast<int>(f.varint); break;
            case 2: proto::expect(r, f, proto::WireType::len, "TensorProto.tensor_shape"); t.shape = parse_shape(f.bytes, r); break;
            case 4: proto::expect(r, f, proto::WireType::len, "TensorProto.tensor_content"); t.content = f.bytes; break;
            case 8: proto::expect(r, f, proto::WireType::len, "TensorProto.string_val"); t.strings.push_back(f.bytes); break;
            case 5: case 6: case 7: case 10: case 11: case 13: t.typed.push_back(f); break;
            default: break;
        }
    }
    return t;
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

}  // namespace detail

// Decodes the tensor of the first Summary.Value in the Event `payload`, which lies inside
// `*owner`. Numeric data is left in place (moved down to an aligned address when needed).
inline DecodedEvent decode(const std::shared_ptr<ByteBuffer>& owner, std::span<const std::byte> payload,
                           std::string_view context) {
    DecodedEvent ev;
    proto::Reader r(payload, context);
    proto::Field f;
    std::optional<detail::RawTensor> tensor;
    while (r.next(f)) {
        if (f.number == 1 && f.type == proto::WireType::fixed64) ev.wall_time = std::bit_cast<double>(f.varint);
        else if (f.number == 2 && f.type == proto::WireType::varint) ev.step = static_cast<std::int64_t>(f.varint);
        else if (f.number == 5) {
            proto::expect(r, f, proto::WireType::len, "Event.summary");
            proto::Reader sr(f.bytes, context);
            proto::Field sv;
            while (!tensor && sr.next(sv)) {
                if (sv.number != 1) continue;
                proto::expect(sr, sv, proto::WireType::len, "Summary.value");
                proto::Reader vr(sv.bytes, context);
                proto::Field vf;
                std::string tag;
                std::optional<detail::RawTensor> t;
                std::optional<Mode> mode;
                std::optional<std::int64_t> mode_step;
                while (vr.next(vf)) {
                    if (vf.number == 1) {
                        proto::expect(vr, vf, proto::WireType::len, "Summary.Value.tag");
                        tag.assign(reinterpret_cast<const char*>(vf.bytes.data()), vf.bytes.size());
                    } else if (vf.number == 8) {
                        proto::expect(vr, vf, proto::WireType::len, "Summary.Value.tensor");
                        t = detail::parse_tensor(vf.bytes, vr);
                    } else if (vf.number == 9 && vf.type == proto::WireType::len) {
                        proto::Reader mr(vf.bytes, context);
                        proto::Field pd;
                        while (mr.next(pd)) {
                            if (pd.number != 1 || pd.type != proto::WireType::len) continue;
                            proto::Reader pr(pd.bytes, context);
                            proto::Field pf;
                            std::string name, content;
                            while (pr.next(pf)) {
                                if (pf.type != proto::WireType::len) continue;
                                std::string s(reinterpret_cast<const char*>(pf.bytes.data()), pf.bytes.size());
                                if (pf.number == 1) name = std::move(s);
                                else if (pf.number == 2) content = std::move(s);
                            }
                            try {
                                if (name == "mode_step") mode_step = std::stoll(content);
                                else if (name == "mode") {
                                    const int m = std::stoi(content);
                                    if (m >= 1 && m <= 4) mode = static_cast<Mode>(m);
                                }
                            } catch (const std::exception&) {
                                r.fail("plugin data '" + name + "' is not a number: '" + content + "'");
                            }
                        }
                    }
                }
                if (t) {
                    tensor = std::move(t);
                    ev.tag = std::move(tag);
                    ev.mode = mode;
                    ev.mode_step = mode_step;
                }
            }
        }
    }
    if (!tensor) r.fail("the event holds no tensor summary");
    auto& t = *tensor;
    const std::size_t count = detail::checked_count(t.shape, r);

    if (!t.strings.empty() || ((!t.has_dtype || t.dtype == tf_dtype::string) && t.content.empty() && t.typed.empty())) {
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
        ev.value = TensorValue(t.shape, std::move(strings));
        return ev;
    }

    const auto dtype = dtype_from_tf(t.dtype);
    if (!dtype) r.fail("unsupported tensor dtype code " + std::to_string(t.dtype));
    const std::size_t esize = dtype_size(*dtype);
    if (!t.content.empty()) {
        if (count > t.content.size() / esize || count * esize != t.content.size())
            r.fail("tensor_content has " + std::to_string(t.content.size()) + " bytes, shape needs " +
                   std::to_string(count) + " elements of " + std::to_string(esize) + " bytes");
        auto* base = owner->data();
        auto* p = const_cast<std::byte*>(t.content.data());
        if (p < base || p + t.content.size() > base + owner->size())
            throw UsageError("event::decode: payload does not lie inside its owning buffer");
        const auto misalign = reinterpret_cast<std::uintptr_t>(p) % esize;
        if (misalign) {  // slide the elements down to an aligned address inside the same buffer
            std::memmove(p - misalign, p, t.content.size());
            p -= misalign;
        }
        ev.value = TensorValue(*dtype, t.shape, owner, p);
        return ev;
    }
    if (count == 0) {
        ev.value = TensorValue(*dtype, t.shape, nullptr, nullptr);
        return ev;
    }
    // Values in typed repeated fields (TensorFlow style); not written by smdebug.
    auto fill = [&](auto values) {
        using V = typename decltype(values)::value_type;
        if (values.size() != count && values.size() != 1)
            r.fail("typed tensor field holds " + std::to_string(values.size()) + " values, shape needs " + std::to_string(count));
        return visit_dtype(*dtype, [&](auto tag) -> TensorValue {
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
    switch (*dtype) {
        case DType::float32: ev.value = fill(detail::typed_values<float>(t.typed, 5, r)); break;
        case DType::float64: ev.value = fill(detail::typed_values<double>(t.typed, 6, r)); break;
        case DType::int8: case DType::int16: case DType::int32: case DType::uint8: case DType::uint16:
            ev.value = fill(detail::typed_values<std::int64_t>(t.typed, 7, r)); break;
        case DType::int64: ev.value = fill(detail::typed_values<std::int64_t>(t.typed, 10, r)); break;
        case DType::boolean: ev.value = fill(detail::typed_values<std::uint64_t>(t.typed, 11, r)); break;
        case DType::float16: ev.value = fill(detail::typed_values<std::uint64_t>(t.typed, 13, r)); break;
        default: r.fail("tensor of dtype " + std::string(dtype_name(*dtype)) + " has no tensor_content");
    }
    return ev;
}

// The Event payload holding `value` under `tag` (FORMAT.md §3.6, §3.9). The nested lengths are
// computed up front, so the payload's size() is known before it is written and append_to() copies
// the element bytes once, straight into the destination (e.g. a step's event buffer). It refers
// to `tag` and `value`, which must outlive it.
class Encoder {
public:
    Encoder(std::string_view tag, const TensorValue& value, std::int64_t global_step, double wall_time, Mode mode,
            std::int64_t mode_step)
        : tag_(tag), value_(value), step_(global_step), wall_time_(wall_time) {
        proto::Writer h(head_);  // TensorProto fields before the elements: dtype, tensor_shape
        if (!value.is_string()) h.field_varint(1, static_cast<std::uint64_t>(dtype_to_tf(value.dtype())));
        h.field_message(2, [&](proto::Writer& shape) {
            for (auto d : value.shape())
                shape.field_message(2, [&](proto::Writer& dim) {
                    if (d != 0) dim.field_varint(1, d);
                    dim.field_bytes(2, std::string(tag) + "_" + std::to_string(d));
                });
        });
        proto::Writer m(meta_);  // SummaryMetadata: plugin data mode_step, mode
        m.field_message(1, [&](proto::Writer& pd) {
            pd.field_bytes(1, "mode_step");
            pd.field_bytes(2, std::to_string(mode_step));
        });
        m.field_message(1, [&](proto::Writer& pd) {
            pd.field_bytes(1, "mode");
            pd.field_bytes(2, std::to_string(static_cast<int>(mode)));
        });
        std::size_t elements = 0;
        if (value.is_string()) {
            for (const auto& str : value.strings()) elements += field_size(str.size());
        } else if (!value.bytes().empty()) {
            elements = field_size(value.bytes().size());
        }
        tensor_size_ = head_.size() + elements;
        value_size_ = field_size(tag.size()) + field_size(tensor_size_) + field_size(meta_.size());
        summary_size_ = field_size(value_size_);
        size_ = 9 + (step_ != 0 ? 1 + varint_size(static_cast<std::uint64_t>(step_)) : 0) + field_size(summary_size_);
    }

    std::size_t size() const noexcept { return size_; }

    // Appends exactly size() bytes to `out`.
    void append_to(std::string& out) const {
        proto::Writer w(out);
        w.field_double(1, wall_time_);
        if (step_ != 0) w.field_varint(2, static_cast<std::uint64_t>(step_));
        w.tag(5, proto::WireType::len);  // Event.summary
        w.varint(summary_size_);
        w.tag(1, proto::WireType::len);  // Summary.value
        w.varint(value_size_);
        w.field_bytes(1, tag_);
        w.tag(8, proto::WireType::len);  // Value.tensor
        w.varint(tensor_size_);
        out += head_;
        if (value_.is_string()) {
            for (const auto& str : value_.strings()) w.field_bytes(8, str);
        } else if (!value_.bytes().empty()) {
            w.field_bytes(4, value_.bytes());
        }
        w.field_bytes(9, meta_);  // Value.metadata
    }

    std::string str() const {
        std::string out;
        out.reserve(size_);
        append_to(out);
        return out;
    }

private:
    static std::size_t varint_size(std::uint64_t v) noexcept {
        std::size_t n = 1;
        while (v >= 0x80) { v >>= 7; ++n; }
        return n;
    }
    static std::size_t field_size(std::size_t len) noexcept { return 1 + varint_size(len) + len; }  // field numbers < 16

    std::string_view tag_;
    const TensorValue& value_;
    std::int64_t step_;
    double wall_time_;
    std::string head_, meta_;
    std::size_t tensor_size_ = 0, value_size_ = 0, summary_size_ = 0, size_ = 0;
};

// Encodes an Event payload holding `value` under `tag` (FORMAT.md §3.6, §3.9).
inline std::string encode(std::string_view tag, const TensorValue& value, std::int64_t global_step, double wall_time,
                          Mode mode, std::int64_t mode_step) {
    return Encoder(tag, value, global_step, wall_time, mode, mode_step).str();
}

}  // namespace smdebug::event
