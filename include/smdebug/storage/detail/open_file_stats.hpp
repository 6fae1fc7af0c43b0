#pragma once
// The counters of a descriptor cache (open_file_cache.hpp), apart so that LocalStore's header can
// return them without the cache.
#include <cstdint>

namespace smdebug::detail {

struct OpenFileStats {
    std::uint64_t opens = 0;  // open() system calls
    std::uint64_t hits = 0;   // lookups served by a cached descriptor
};

}  // namespace smdebug::detail
