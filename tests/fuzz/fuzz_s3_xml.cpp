// libFuzzer target: arbitrary bytes as an S3 XML response body.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <smdebug/net/detail/xml.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        (void)smdebug::net::parse_xml(std::string_view(reinterpret_cast<const char*>(data), size));
    } catch (const smdebug::SMDebugError&) {
    }
    return 0;
}
