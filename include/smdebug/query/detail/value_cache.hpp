#pragma once
// ValueCache: the values a trial keeps once read (TrialOptions::cache), by the record they were
// read from. The RecordReader owns it; the StepIndex only says where records are.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include <smdebug/core/tensor_value.hpp>
#include <smdebug/query/detail/step_index.hpp>

namespace smdebug::detail {

class ValueCache {
public:
    explicit ValueCache(bool enabled = false) : enabled_(enabled) {}

    // Whether values are kept at all (TrialOptions::cache).
    bool enabled() const noexcept { return enabled_; }

    // The value read from the record at `loc`, or null.
    std::shared_ptr<const TensorValue> find(const Location& loc) const {
        if (values_.empty()) return nullptr;
        const auto it = values_.find(loc);
        return it == values_.end() ? nullptr : it->second;
    }
    // Keeps the value read from the record at `loc` (nothing when the cache is off).
    void insert(const Location& loc, std::shared_ptr<const TensorValue> value) {
        if (enabled_ && value) values_.insert_or_assign(loc, std::move(value));
    }
    std::size_t size() const noexcept { return values_.size(); }

private:
    // A record is its bytes and what its index entry says it holds (D24): an entry naming another
    // tensor or step at the same bytes is another key, read (and checked) on its own.
    struct Hash {
        std::size_t operator()(const Location& l) const noexcept {
            std::uint64_t h = l.start * 0x9E3779B97F4A7C15ull;
            h ^= (std::uint64_t{l.event_file} << 32 | l.tag_hash) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
            h ^= static_cast<std::uint64_t>(l.step) + l.length * 0x94D049BB133111EBull + (h << 6) + (h >> 2);
            return static_cast<std::size_t>(h);
        }
    };
    struct Same {
        bool operator()(const Location& a, const Location& b) const noexcept {
            return a.same_range(b) && a.same_identity(b);
        }
    };
    std::unordered_map<Location, std::shared_ptr<const TensorValue>, Hash, Same> values_;
    bool enabled_;
};

}  // namespace smdebug::detail
