#pragma once
// TensorProto (docs/format.md §3.1): one tensor of an event record parsed (RawTensor), its value
// built from tensor_content, string_val or typed repeated fields, and its dtype and byte size
// checked without building it (outline_tensor). Event and Summary: format/detail/event_decode.hpp.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/event_fields.hpp>
#include <smdebug/format/detail/protobuf.hpp>

namespace smdebug::event::detail {

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

// The expansion budget: the most elements one typed value may be broadcast to (a record of a few
// bytes could otherwise claim terabytes). Tensors written element by element are bounded by the
// record size instead. smdebug's writers never broadcast (they write tensor_content); TensorFlow's
// splat does. The decoder takes the budget as a parameter, this by default; a Trial passes its
// TrialOptions::max_expanded_elements (whose default SMDEBUG_MAX_EXPANDED_ELEMENTS may set:
// core/environment.hpp).
inline constexpr std::size_t max_broadcast_elements = std::size_t{1} << 20;

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

// The elements of a typed repeated field (values of wire type V) as a tensor of T, one value
// splatted over the whole shape when the field holds one.
template <class T, class V>
TensorValue typed_fields_as(const RawTensor& t, const std::vector<V>& values, std::size_t count, const proto::Reader& r,
                            std::string_view tag, std::size_t expansion_budget) {
    if (values.size() != count && values.size() != 1)
        r.fail("typed tensor field holds " + std::to_string(values.size()) + " values, shape needs " + std::to_string(count));
    // One value fills the whole shape (TensorFlow's splat): a few bytes may claim any size.
    if (values.size() != count && count > expansion_budget)
        r.fail("tensor '" + std::string(tag) + "' of shape " + shape_string(t.shape) + ": its typed field holds one value for " +
               std::to_string(count) + " elements, more than the expansion budget of " + std::to_string(expansion_budget) +
               " elements (default max_broadcast_elements; raise it with TrialOptions::max_expanded_elements or "
               "SMDEBUG_MAX_EXPANDED_ELEMENTS)");
    std::unique_ptr<T[]> out(new T[count]);
    for (std::size_t i = 0; i < count; ++i) {
        const V v = values[values.size() == 1 ? 0 : i];
        if constexpr (std::is_same_v<T, float16>) out[i] = float16::from_bits(static_cast<std::uint16_t>(v));
        else out[i] = static_cast<T>(v);
    }
    return TensorValue::from<T>(std::span<const T>(out.get(), count), t.shape);
}

// A numeric tensor from typed repeated fields (TensorFlow style; smdebug does not write these).
// Each dtype names its element type and its field's wire type here, so that only those pairs
// are instantiated (not every element type for every field type).
inline TensorValue typed_fields_tensor(const RawTensor& t, DType dtype, std::size_t count, const proto::Reader& r,
                                       std::string_view tag = {}, std::size_t expansion_budget = max_broadcast_elements) {
    using F = tf_proto::TensorProto;
    const auto ints = [&] { return typed_values<std::int64_t>(t.typed, F::int_val, r); };
    switch (dtype) {
        case DType::float32: return typed_fields_as<float>(t, typed_values<float>(t.typed, F::float_val, r), count, r, tag, expansion_budget);
        case DType::float64: return typed_fields_as<double>(t, typed_values<double>(t.typed, F::double_val, r), count, r, tag, expansion_budget);
        case DType::int8: return typed_fields_as<std::int8_t>(t, ints(), count, r, tag, expansion_budget);
        case DType::int16: return typed_fields_as<std::int16_t>(t, ints(), count, r, tag, expansion_budget);
        case DType::int32: return typed_fields_as<std::int32_t>(t, ints(), count, r, tag, expansion_budget);
        case DType::uint8: return typed_fields_as<std::uint8_t>(t, ints(), count, r, tag, expansion_budget);
        case DType::uint16: return typed_fields_as<std::uint16_t>(t, ints(), count, r, tag, expansion_budget);
        case DType::int64:
            return typed_fields_as<std::int64_t>(t, typed_values<std::int64_t>(t.typed, F::int64_val, r), count, r, tag, expansion_budget);
        case DType::boolean:
            return typed_fields_as<bool>(t, typed_values<std::uint64_t>(t.typed, F::bool_val, r), count, r, tag, expansion_budget);
        case DType::float16:
            return typed_fields_as<float16>(t, typed_values<std::uint64_t>(t.typed, F::half_val, r), count, r, tag, expansion_budget);
        default: r.fail("tensor of dtype " + std::string(dtype_name(dtype)) + " has no tensor_content");
    }
}

// The value of a decoded TensorProto (docs/format.md §3.1).
inline TensorValue tensor_value(ByteBuffer& buffer, std::shared_ptr<const void> keepalive, RawTensor& t, const proto::Reader& r,
                                std::string_view tag = {}, std::size_t expansion_budget = max_broadcast_elements) {
    const std::size_t count = checked_count(t.shape, r);
    const bool no_numbers = (!t.has_dtype || t.dtype == tf_dtype::string) && t.content.empty() && t.typed.empty();
    if (!t.strings.empty() || no_numbers) return string_tensor(t, count, r);
    const auto dtype = dtype_from_tf(t.dtype);
    if (!dtype) r.fail("unsupported tensor dtype code " + std::to_string(t.dtype));
    if (!t.content.empty()) return content_tensor(buffer, std::move(keepalive), t, *dtype, count, r);
    if (count == 0) return TensorValue(*dtype, t.shape, nullptr, nullptr);
    return typed_fields_tensor(t, *dtype, count, r, tag, expansion_budget);
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

}  // namespace smdebug::event::detail
