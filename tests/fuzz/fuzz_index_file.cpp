// libFuzzer target: arbitrary text as an index file and as a collections file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/format/detail/index_file.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const auto f = smdebug::index_file::parse(text, "fuzz.json");
        (void)smdebug::index_file::serialize(f);
    } catch (const smdebug::SMDebugError&) {
    }
    try {
        const auto c = smdebug::collections_file::parse(text, "fuzz_collections.json");
        (void)smdebug::collections_file::serialize(c);
    } catch (const smdebug::SMDebugError&) {
    }
    return 0;
}
