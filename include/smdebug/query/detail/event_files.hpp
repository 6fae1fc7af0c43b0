#pragma once
// The event files a trial's index names, interned: a Location (query/detail/index_types.hpp) names
// its file by a small number.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <smdebug/query/detail/index_types.hpp>

namespace smdebug::detail {

// Event file keys, interned: a Location names its file by a small number. For each file also the
// span its indexed records cover and how many there are (what a whole-file read would fetch).
class EventFiles {
public:
    struct Extent {
        std::uint64_t begin = UINT64_MAX, end = 0;
        std::uint32_t records = 0;
        std::uint64_t size() const noexcept { return end > begin ? end - begin : 0; }
    };

    std::uint32_t intern(const std::string& key) {
        auto [it, inserted] = ids_.try_emplace(key, static_cast<std::uint32_t>(keys_.size()));
        if (inserted) {
            keys_.push_back(key);
            extents_.emplace_back();
        }
        return it->second;
    }
    const std::string& key(const Location& loc) const { return keys_[loc.event_file]; }

    // Notes an indexed record of an interned file.
    void note_record(const Location& loc) {
        auto& e = extents_[loc.event_file];
        e.begin = std::min(e.begin, loc.start);
        e.end = std::max(e.end, loc.start + loc.length);
        ++e.records;
    }
    const Extent& extent(std::uint32_t event_file) const { return extents_[event_file]; }

private:
    std::vector<std::string> keys_;
    std::vector<Extent> extents_;
    std::unordered_map<std::string, std::uint32_t> ids_;
};

}  // namespace smdebug::detail
