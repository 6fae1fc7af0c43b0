#pragma once
// Event / Summary / TensorProto (docs/format.md §3): decoding the tensor of one event record
// (event_decode.hpp, with the TensorProto in tensor_proto.hpp) and encoding an event the reference
// reader accepts (event_encode.hpp).
#include <smdebug/format/detail/event_decode.hpp>
#include <smdebug/format/detail/event_encode.hpp>
