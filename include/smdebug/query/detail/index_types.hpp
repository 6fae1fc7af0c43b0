#pragma once
// The records of a trial's step index (query/detail/step_index.hpp): where one saved record lives
// (Location), what one worker saved for one tensor at one mode step (StepData, with its stored
// reductions), and one tensor's records per mode, sorted by mode step (ModeSteps, TensorData).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/tfrecord.hpp>

namespace smdebug::detail {

// Where one saved record lives.
struct Location {
    std::uint32_t event_file = 0;  // interned key of the event file, relative to the trial root
    // D24: what the record must hold — a hash of the index entry's tensor name (its summary tag)
    // and the global step of the index file (Event.step). step == no_identity: not checked.
    std::uint32_t tag_hash = 0;
    std::uint64_t start : 63 = 0;            // index files bound it by INT64_MAX
    std::uint64_t has_payload_crc : 1 = 0;   // the index entry carried payload_crc
    std::uint32_t length = 0;                // at most tfrecord::max_record_bytes (< 4 GiB)
    std::uint32_t payload_crc = 0;           // CRC-32C of the payload (index_file::payload_crc_key)
    std::int64_t step = no_identity;

    static constexpr std::int64_t no_identity = INT64_MIN;
    bool same_identity(const Location& o) const noexcept { return tag_hash == o.tag_hash && step == o.step; }
    // The same bytes of the same event file.
    bool same_range(const Location& o) const noexcept { return event_file == o.event_file && start == o.start && length == o.length; }
};

static_assert(sizeof(Location) == 32);
static_assert(tfrecord::max_record_bytes <= UINT32_MAX);

// The 32-bit FNV-1a hash of a record's tag, for Location::tag_hash.
inline std::uint32_t record_tag_hash(std::string_view tag) noexcept {
    std::uint32_t h = 2166136261u;
    for (const char c : tag) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    return h;
}

// A reduction the Hook saved for a tensor (its record named by reduction_tensor_name).
struct StoredReduction {
    std::string name;  // min, max, mean, ...
    bool abs = false;
    Location location;
};

// A Location or none, as std::optional<Location> but without its flag: "none" is an event file
// number no trial reaches (EventFiles interns fewer).
class OptionalLocation {
public:
    OptionalLocation() noexcept { loc_.event_file = none; }
    OptionalLocation& operator=(const Location& l) noexcept {
        loc_ = l;
        return *this;
    }
    bool has_value() const noexcept { return loc_.event_file != none; }
    explicit operator bool() const noexcept { return has_value(); }
    const Location& operator*() const noexcept { return loc_; }
    const Location* operator->() const noexcept { return &loc_; }
    const Location& value() const {
        if (!has_value()) throw std::bad_optional_access();
        return loc_;
    }
    void reset() noexcept { loc_.event_file = none; }

    static constexpr std::uint32_t none = UINT32_MAX;

private:
    Location loc_;
};

// The reductions the Hook saved for one record: rare, so out of line (one pointer when none).
class StoredReductions {
public:
    using const_iterator = std::vector<StoredReduction>::const_iterator;
    bool empty() const noexcept { return !list_ || list_->empty(); }
    std::size_t size() const noexcept { return list_ ? list_->size() : 0; }
    const_iterator begin() const noexcept { return list_ ? list_->cbegin() : const_iterator(); }
    const_iterator end() const noexcept { return list_ ? list_->cend() : const_iterator(); }
    // The stored reduction (name, abs), made when new.
    StoredReduction& at(const std::string& name, bool abs) {
        if (!list_) list_ = std::make_unique<std::vector<StoredReduction>>();
        for (auto& r : *list_)
            if (r.name == name && r.abs == abs) return r;
        return list_->emplace_back(StoredReduction{name, abs, {}});
    }

private:
    std::unique_ptr<std::vector<StoredReduction>> list_;
};

// What one worker saved for one tensor at one (mode, mode step): where its records are. Values
// read from them are kept (TrialOptions::cache) by the RecordReader's ValueCache, not here.
struct StepData {
    OptionalLocation location;
    const Shape* shape = nullptr;  // interned by the StepIndex; null when no shape was saved
    StoredReductions reductions;

    const Location* reduction(std::string_view name, bool abs) const {
        for (const auto& r : reductions)
            if (r.name == name && r.abs == abs) return &r.location;
        return nullptr;
    }
};
static_assert(sizeof(StepData) == 48);

class ModeSteps;

// One (mode step, worker) record of a tensor. `worker` and data() point into the StepIndex, which
// keeps them at fixed addresses for its lifetime (a refresh never moves them); readers see the
// data const, only ingestion (ModeSteps::at) changes it.
class StepEntry {
public:
    StepEntry(std::int64_t ms, const std::string* w, StepData* data) : mode_step(ms), worker(w), data_(data) {}
    std::int64_t mode_step;
    const std::string* worker;
    const StepData& data() const noexcept { return *data_; }

private:
    friend class ModeSteps;
    StepData* data_;
};

// The workers of one step, in the order their index files were read (as the reference's dict).
using WorkerSteps = std::span<const StepEntry>;

// One tensor's records in one mode, sorted by mode step (workers of a step in reading order).
// Iterating yields (mode step, WorkerSteps) once per step. Index files arrive mostly in step
// order, so adding a record is an append; a flat array keeps the index compact (no node per step).
class ModeSteps {
public:
    ModeSteps() = default;
    explicit ModeSteps(std::pmr::memory_resource* memory) : entries_(memory) {}

    class iterator {
    public:
        using value_type = std::pair<std::int64_t, WorkerSteps>;
        using difference_type = std::ptrdiff_t;
        iterator() = default;
        iterator(const StepEntry* at, const StepEntry* end) : at_(at), end_(end) {}
        value_type operator*() const { return {at_->mode_step, WorkerSteps(at_, group_end())}; }
        iterator& operator++() {
            at_ = group_end();
            return *this;
        }
        iterator operator++(int) {
            auto old = *this;
            ++*this;
            return old;
        }
        bool operator==(const iterator& o) const noexcept { return at_ == o.at_; }

    private:
        const StepEntry* group_end() const {
            const StepEntry* e = at_;
            while (e != end_ && e->mode_step == at_->mode_step) ++e;
            return e;
        }
        const StepEntry* at_ = nullptr;
        const StepEntry* end_ = nullptr;
    };

    iterator begin() const noexcept { return {entries_.data(), entries_.data() + entries_.size()}; }
    iterator end() const noexcept { return {entries_.data() + entries_.size(), entries_.data() + entries_.size()}; }
    bool empty() const noexcept { return entries_.empty(); }
    // Records (one per worker), not steps.
    std::size_t record_count() const noexcept { return entries_.size(); }

    // The workers of mode step `ms`; empty when the tensor has none there.
    WorkerSteps find(std::int64_t ms) const {
        const auto [lo, hi] = equal_range(ms);
        return WorkerSteps(lo, hi);
    }
    bool contains(std::int64_t ms) const { return !find(ms).empty(); }
    // Room for `n` more records (the next n appended do not move the array).
    void reserve_more(std::size_t n) { entries_.reserve(entries_.size() + n); }

    // The record of (ms, worker); when new, added with the data new_data() gives. Workers are
    // compared by address (the StepIndex interns their names). `worker_new_at_step`: the caller
    // knows that no record of this worker at `ms` was added before the file being ingested (its
    // first file at that mode step), so that a step of W workers is not searched W times (W^2).
    template <class NewData>
    StepData& at(std::int64_t ms, const std::string* worker, NewData&& new_data, bool worker_new_at_step = false) {
        if (entries_.empty() || entries_.back().mode_step < ms) return *entries_.emplace_back(ms, worker, new_data()).data_;
        if (entries_.back().mode_step == ms) {
            // The file's entries for this tensor are all (ms, worker): after its first, that record
            // is the last one.
            if (entries_.back().worker == worker) return *entries_.back().data_;
            if (worker_new_at_step) return *entries_.emplace_back(ms, worker, new_data()).data_;
        }
        const auto [lo, hi] = index_range(ms);
        for (auto e = lo; e != hi; ++e)
            if (entries_[e].worker == worker) return *entries_[e].data_;
        return *entries_.emplace(entries_.begin() + static_cast<std::ptrdiff_t>(hi), ms, worker, new_data())->data_;
    }

private:
    std::pair<const StepEntry*, const StepEntry*> equal_range(std::int64_t ms) const {
        const auto [lo, hi] = index_range(ms);
        return {entries_.data() + lo, entries_.data() + hi};
    }
    // The entries of mode step `ms`: [first, second).
    std::pair<std::size_t, std::size_t> index_range(std::int64_t ms) const {
        const auto lo = std::lower_bound(entries_.begin(), entries_.end(), ms, [](const StepEntry& x, std::int64_t v) { return x.mode_step < v; });
        auto hi = lo;
        // A step's few workers are stepped over; many (hundreds of workers) are searched.
        for (int k = 0; k < 8 && hi != entries_.end() && hi->mode_step == ms; ++k) ++hi;
        if (hi != entries_.end() && hi->mode_step == ms)
            hi = std::upper_bound(hi, entries_.end(), ms, [](std::int64_t v, const StepEntry& x) { return v < x.mode_step; });
        return {static_cast<std::size_t>(lo - entries_.begin()), static_cast<std::size_t>(hi - entries_.begin())};
    }

    std::pmr::vector<StepEntry> entries_;
};

struct TensorData {
    TensorData() = default;
    // Its record arrays in `memory` (the StepIndex's memory resource).
    explicit TensorData(std::pmr::memory_resource* memory) : steps{ModeSteps(memory), ModeSteps(memory), ModeSteps(memory), ModeSteps(memory)} {}

    std::string name;
    std::optional<std::string> original_name;
    std::array<ModeSteps, 4> steps;  // per mode
    std::uint8_t modes_noted = 0;    // bit per mode: already in the StepIndex's per-mode name sets
    std::int64_t last_step_noted = INT64_MIN;  // the global step whose tensor list it joined last
};

}  // namespace smdebug::detail
