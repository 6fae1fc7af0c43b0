// libFuzzer target: arbitrary bytes as one event-file record — TFRecord framing, then the Event /
// Summary / TensorProto decoder. Anything but a typed smdebug error is a bug.
#include <cstddef>
#include <cstdint>
#include <memory>

#include <smdebug/format/detail/event.hpp>
#include <smdebug/format/detail/tfrecord.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto buf = std::make_shared<smdebug::ByteBuffer>(
        smdebug::ByteBuffer::copy_of(std::span(reinterpret_cast<const std::byte*>(data), size)));
    try {
        const auto record = smdebug::tfrecord::parse(buf->bytes(), "fuzz.tfevents");
        const auto ev = smdebug::event::decode(buf, record.payload, "fuzz.tfevents");
        (void)ev.value.byte_size();
    } catch (const smdebug::SMDebugError&) {
    }
    // The payload decoder alone, without the CRC gate in front of it.
    try {
        (void)smdebug::event::decode(buf, buf->bytes(), "fuzz.payload");
    } catch (const smdebug::SMDebugError&) {
    }
    return 0;
}
