#pragma once
// Plans a batch read: the requests of one object are sorted by offset and overlapping or nearby
// ranges merged into one fetch (one pread run locally, one ranged GET on S3), then sliced.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
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

// One range of one object, for coalesce_ranges: `object` is anything ordered that names the
// object (its key, or a trial's interned event-file id).
template <class Object>
struct ObjectRange {
    Object object;
    std::uint64_t offset = 0, length = 0;
};

// The fetches for the non-empty ranges range_of(0..n-1) (ObjectRanges whose ends do not
// overflow), grouped by object (in object order) and by offset.
template <class RangeOf>
std::vector<Fetch> coalesce_ranges(std::size_t n, RangeOf&& range_of, CoalescePolicy policy) {
    std::vector<std::size_t> order;
    order.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        if (range_of(i).length > 0) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto x = range_of(a), y = range_of(b);
        if (x.object != y.object) return x.object < y.object;
        return x.offset < y.offset;
    });
    std::vector<Fetch> fetches;
    for (std::size_t i : order) {
        const auto q = range_of(i);
        const std::uint64_t end = q.offset + q.length;
        if (!fetches.empty()) {
            Fetch& f = fetches.back();
            const bool near = q.offset <= f.end || q.offset - f.end <= policy.gap;
            if (near && range_of(f.members.front()).object == q.object && std::max(f.end, end) - f.begin <= policy.max_bytes) {
                f.end = std::max(f.end, end);
                f.members.push_back(i);
                continue;
            }
        }
        fetches.push_back(Fetch{q.offset, end, {i}});
    }
    return fetches;
}

// The fetches for the non-empty requests, grouped by key (in key order) and by offset.
inline std::vector<Fetch> plan_fetches(std::span<const RangeRequest> requests, CoalescePolicy policy) {
    for (const auto& q : requests)
        if (q.length > 0 && q.offset > UINT64_MAX - q.length)
            throw UsageError("read_ranges: range at offset " + std::to_string(q.offset) + " overflows for " + q.key);
    return coalesce_ranges(requests.size(), [&](std::size_t i) {
        return ObjectRange<std::string_view>{requests[i].key, requests[i].offset, requests[i].length};
    }, policy);
}

}  // namespace smdebug::detail
