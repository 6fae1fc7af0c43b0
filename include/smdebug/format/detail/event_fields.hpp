#pragma once
// Field numbers of the protobuf messages of an event file (TensorFlow's event.proto, summary.proto,
// tensor.proto, tensor_shape.proto; docs/format.md §3), written once for the event codec and the
// TensorBoard writer.
#include <cstdint>

namespace smdebug::tf_proto {

using FieldNumber = std::uint32_t;

struct Event {
    static constexpr FieldNumber wall_time = 1;  // double
    static constexpr FieldNumber step = 2;       // int64
    static constexpr FieldNumber file_version = 3;  // string (oneof what)
    static constexpr FieldNumber summary = 5;    // Summary
};
struct Summary {
    static constexpr FieldNumber value = 1;  // repeated Summary.Value
};
struct SummaryValue {
    static constexpr FieldNumber tag = 1;
    static constexpr FieldNumber simple_value = 2;  // float
    static constexpr FieldNumber histo = 5;         // HistogramProto
    static constexpr FieldNumber tensor = 8;        // TensorProto
    static constexpr FieldNumber metadata = 9;      // SummaryMetadata
};
struct SummaryMetadata {
    static constexpr FieldNumber plugin_data = 1;  // smdebug: one per (name, content) pair
};
struct PluginData {
    static constexpr FieldNumber plugin_name = 1;  // smdebug: "mode" or "mode_step"
    static constexpr FieldNumber content = 2;      // smdebug: the number, as text
};
struct TensorProto {
    static constexpr FieldNumber dtype = 1;
    static constexpr FieldNumber tensor_shape = 2;
    static constexpr FieldNumber tensor_content = 4;
    static constexpr FieldNumber float_val = 5;
    static constexpr FieldNumber double_val = 6;
    static constexpr FieldNumber int_val = 7;
    static constexpr FieldNumber string_val = 8;
    static constexpr FieldNumber int64_val = 10;
    static constexpr FieldNumber bool_val = 11;
    static constexpr FieldNumber half_val = 13;
};
struct TensorShapeProto {
    static constexpr FieldNumber dim = 2;
    static constexpr FieldNumber unknown_rank = 3;
};
struct TensorShapeDim {
    static constexpr FieldNumber size = 1;
    static constexpr FieldNumber name = 2;
};
struct HistogramProto {
    static constexpr FieldNumber min = 1;
    static constexpr FieldNumber max = 2;
    static constexpr FieldNumber num = 3;
    static constexpr FieldNumber sum = 4;
    static constexpr FieldNumber sum_squares = 5;
    static constexpr FieldNumber bucket_limit = 6;
    static constexpr FieldNumber bucket = 7;
};

}  // namespace smdebug::tf_proto
