#pragma once
// EventFileCache: event files fetched whole from a latency-bound store (S3), kept for the records
// nobody has asked for yet. Reading one tensor's steps (Tensor::values, a plot) asks for one small
// record per event file; fetching the file's whole run of records costs about the same round trip,
// and the next tensor's read of those steps then needs no request at all.
//
// Each record is handed out once (the reader decodes a copy of it, so that a value does not keep
// its whole file alive); asked for again, the reader asks the store. A block is dropped once every
// record in it was handed out.
// Bounded by bytes, and nothing is evicted to make room: a block that does not fit is not fetched
// (the read asks for its own records only), so a walk over more data than the cache holds never
// re-fetches what it pushed out — it just stops widening its reads.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/query/detail/step_index.hpp>

namespace smdebug::detail {

class EventFileCache {
public:
    explicit EventFileCache(std::uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

    std::uint64_t capacity() const noexcept { return capacity_; }
    std::uint64_t bytes() const noexcept { return bytes_; }
    std::size_t blocks() const noexcept { return blocks_.size(); }
    std::uint64_t hits() const noexcept { return hits_; }
    bool holds(std::uint32_t event_file) const { return blocks_.contains(event_file); }
    // Whether `more` bytes fit next to what is cached and `planned` bytes about to be.
    bool fits(std::uint64_t more, std::uint64_t planned = 0) const noexcept {
        return more <= capacity_ && planned <= capacity_ - more && bytes_ <= capacity_ - more - planned;
    }

    // Keeps `block`, the bytes [begin, begin + block.size()) of `event_file`, which holds
    // `records` indexed records; the ones starting at `handed_out` were read with it already.
    void insert(std::uint32_t event_file, std::uint64_t begin, ByteBuffer block, std::uint32_t records,
                std::span<const std::uint64_t> handed_out) {
        if (block.empty() || !fits(block.size()) || blocks_.contains(event_file)) return;
        Block b{begin, std::move(block), {handed_out.begin(), handed_out.end()}, records};
        std::sort(b.handed_out.begin(), b.handed_out.end());
        b.handed_out.erase(std::unique(b.handed_out.begin(), b.handed_out.end()), b.handed_out.end());
        if (b.handed_out.size() >= b.records) return;  // nothing left for later
        bytes_ += b.bytes.size();
        blocks_.emplace(event_file, std::move(b));
    }

    // The bytes of the record at `loc` (a slice of its block, no copy) when a block holds them and
    // they were not handed out before.
    std::optional<ByteBuffer> take(const Location& loc) {
        const auto it = blocks_.find(loc.event_file);
        if (it == blocks_.end()) return std::nullopt;
        Block& b = it->second;
        if (loc.start < b.begin || loc.length > b.bytes.size() || loc.start - b.begin > b.bytes.size() - loc.length)
            return std::nullopt;
        const auto pos = std::lower_bound(b.handed_out.begin(), b.handed_out.end(), loc.start);
        if (pos != b.handed_out.end() && *pos == loc.start) return std::nullopt;
        auto out = b.bytes.slice(static_cast<std::size_t>(loc.start - b.begin), static_cast<std::size_t>(loc.length));
        ++hits_;
        if (b.handed_out.size() + 1 >= b.records) {
            bytes_ -= b.bytes.size();
            blocks_.erase(it);
        } else {
            b.handed_out.insert(pos, loc.start);
        }
        return out;
    }

private:
    struct Block {
        std::uint64_t begin = 0;
        ByteBuffer bytes;
        std::vector<std::uint64_t> handed_out;  // record starts, sorted
        std::uint32_t records = 0;
    };

    std::uint64_t capacity_;
    std::uint64_t bytes_ = 0;
    std::uint64_t hits_ = 0;
    std::unordered_map<std::uint32_t, Block> blocks_;
};

}  // namespace smdebug::detail
