#pragma once
// Plans a batch read: the requests of one object are sorted by offset and overlapping or nearby
// ranges merged into one fetch (one pread run locally, one ranged GET on S3), then sliced.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

// One read covering [begin, end) of one object for the requests `members` (indices).
struct Fetch {
    std::uint64_t begin = 0, end = 0;
    std::vector<std::size_t> members;
};

struct CoalescePolicy {
    std::uint64_t gap = 0;                     // ranges at most this far apart share a fetch
    std::uint64_t max_bytes = 64u << 20;       // but a shared fetch spans at most this much
};

// The fetches for the non-empty requests, grouped by key (in key order) and by offset.
inline std::vector<Fetch> plan_fetches(std::span<const RangeRequest> requests, CoalescePolicy policy) {
    std::vector<std::size_t> order;
    order.reserve(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i)
        if (requests[i].length > 0) {
            if (requests[i].offset > UINT64_MAX - requests[i].length)
                throw UsageError("read_ranges: range at offset " + std::to_string(requests[i].offset) + " overflows for " + requests[i].key);
            order.push_back(i);
        }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto &x = requests[a], &y = requests[b];
        if (const int c = x.key.compare(y.key); c != 0) return c < 0;
        return x.offset < y.offset;
    });
    std::vector<Fetch> fetches;
    for (std::size_t i : order) {
        const RangeRequest& q = requests[i];
        const std::uint64_t end = q.offset + q.length;
        if (!fetches.empty()) {
            Fetch& f = fetches.back();
            const RangeRequest& head = requests[f.members.front()];
            const bool near = q.offset <= f.end || q.offset - f.end <= policy.gap;
            if (near && head.key == q.key && std::max(f.end, end) - f.begin <= policy.max_bytes) {
                f.end = std::max(f.end, end);
                f.members.push_back(i);
                continue;
            }
        }
        fetches.push_back(Fetch{q.offset, end, {i}});
    }
    return fetches;
}

}  // namespace smdebug::detail
