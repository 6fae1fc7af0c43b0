#pragma once
// What an index file holds (docs/format.md §4), and the bounds on reading one: the types that
// index_file.hpp's parsers fill and the scanner (index_file_scanner.hpp) shares.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/modes.hpp>

namespace smdebug::index_file {

// The key smdebug-cpp adds to a tensor_payload entry: the CRC-32C (Castagnoli, unmasked) of the
// record's payload, which TFRecord's footer cannot carry in smdebug's files (docs/format.md §4).
// The reference reads entries by key and ignores it.
inline constexpr std::string_view payload_crc_key = "payload_crc32c";

struct TensorEntry {
    std::string name;
    std::uint64_t start = 0;   // offset of the record's length field
    std::uint64_t length = 0;  // whole record: payload + 16
    std::optional<std::uint32_t> payload_crc32c;  // payload_crc_key, when the writer stored it
};

struct ShapeEntry {
    std::string name;
    std::string original_name;
    std::vector<std::int64_t> shape;
};

struct IndexFile {
    Mode mode = Mode::GLOBAL;
    std::int64_t mode_step = 0;
    std::optional<std::string> event_file_name;  // relative to the trial root; absent in shape-only files
    std::vector<TensorEntry> tensors;
    std::vector<ShapeEntry> shapes;
};

// Bounds on what one index file may cost to read (TrialOptions::max_index_file_bytes and
// max_tensor_name_bytes): over either is a FormatError naming the file, before the work is done.
struct Limits {
    std::size_t max_file_bytes = std::size_t{64} << 20;  // reference-written files are ~100 bytes per entry
    std::size_t max_name_bytes = std::size_t{16} << 10;  // a tensor name
};

}  // namespace smdebug::index_file
