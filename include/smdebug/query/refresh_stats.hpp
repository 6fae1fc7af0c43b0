#pragma once
// Counters of the work a Trial's refreshes did (Trial::refresh_stats()), for tests and benchmarks.
#include <cstdint>

namespace smdebug {

// Counters of the work refresh_data() did, for tests and benchmarks.
struct RefreshStats {
    std::uint64_t refreshes = 0;           // refresh_data() calls that listed the store
    std::uint64_t index_files_listed = 0;  // keys returned by those listings
    std::uint64_t index_files_read = 0;    // index files read and ingested
    // Second listings of refreshes whose first listing brought new index files, and the keys they
    // returned (counted here, not above): they confirm that the first missed nothing (D11).
    std::uint64_t confirming_listings = 0;
    std::uint64_t confirming_keys_listed = 0;
    // Manifests (compacted index) the trial opened from, and the index files they stood for
    // (ingested without being listed or read; not counted above).
    std::uint64_t manifests_read = 0;
    std::uint64_t index_files_from_manifests = 0;
};

}  // namespace smdebug
