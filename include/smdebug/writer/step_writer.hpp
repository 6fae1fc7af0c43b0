#pragma once
// StepWriter: writes the files of one (global step, worker) — the event file, then its index —
// through a WritableStore, in the order that keeps concurrent readers safe: the event object is
// complete and durable before the index that points into it appears (docs/format.md §10).
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/core/crc32c.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/format/detail/event_encode.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug {

inline double wall_time_now() {
    using namespace std::chrono;
    return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

class StepWriter {
public:
    StepWriter(std::int64_t global_step, std::string worker, Mode mode, std::int64_t mode_step)
        : step_(global_step), worker_(std::move(worker)) {
        index_.mode = mode;
        index_.mode_step = mode_step;
    }

    // Room for `event_bytes` of records and `records` index entries up front (a hook passes its
    // previous step's sizes: steps of one job are alike, and growing the buffer record by record
    // copied it several times on the training thread).
    void reserve(std::size_t event_bytes, std::size_t records) {
        events_.reserve(event_bytes);
        index_.tensors.reserve(records);
    }

    // Takes `buffer`'s memory for this step's records (its content is dropped): a hook hands back
    // the buffer of a step already written, so that steady steps neither allocate nor fault in
    // fresh pages (on a VM a first touch of a 4 KiB page costs ~12 us: 64 of them per MB).
    void reuse_buffer(std::string buffer) {
        if (buffer.capacity() <= events_.capacity()) return;
        buffer.clear();
        buffer.append(events_);
        events_ = std::move(buffer);
    }
    // Gives up the record buffer (after flush(): the step is written).
    std::string release_buffer() && { return std::move(events_); }

    std::int64_t step() const noexcept { return step_; }
    const std::string& worker() const noexcept { return worker_; }
    bool empty() const noexcept { return index_.tensors.empty() && index_.shapes.empty(); }

    // Appends one tensor record (raw value or a reduction "smdebug/reductions/<red>/<name>"). Its
    // index entry carries the payload's CRC-32C (index_file::payload_crc_key): smdebug's TFRecord
    // footer is a constant, so without it a changed byte of a value would go unnoticed.
    void add_tensor(std::string_view name, const TensorValue& value, double wall_time = wall_time_now()) {
        const event::Encoder payload(name, value, step_, wall_time, index_.mode, index_.mode_step);
        const auto start = events_.size();
        tfrecord::append_with(events_, payload.size(), [&](std::string& out) { payload.append_to(out); });
        const auto crc = crc32c(std::string_view(events_).substr(start + tfrecord::header_size, payload.size()));
        index_.tensors.push_back({std::string(name), start, events_.size() - start, crc});
    }

    void add_shape(std::string_view name, const Shape& shape, std::string_view original_name = {}) {
        index_file::ShapeEntry e;
        e.name = std::string(name);
        e.original_name = original_name.empty() ? e.name : std::string(original_name);
        e.shape.assign(shape.begin(), shape.end());
        index_.shapes.push_back(std::move(e));
    }

    // Writes the event file (if any tensor was added) and then the index file. Nothing is
    // written for an empty step (an index file is never written empty). Returns the index file's
    // size (0: nothing written).
    template <WritableStore S>
    std::size_t flush(const S& store) {
        for (const auto& w : planned_writes()) store.write(w.key, w.bytes);
        return index_text_.size();
    }

    // What flush() writes, in its order (the event file, then the index that points into it),
    // for a writer that keeps several steps in flight (write_sequences); valid while this
    // StepWriter lives. Empty for an empty step.
    std::vector<WriteRequest> planned_writes() {
        std::vector<WriteRequest> out;
        if (empty()) return out;
        if (!index_.tensors.empty()) {
            event_key_ = paths::event_key(step_, worker_);
            index_.event_file_name = event_key_;
            out.push_back({event_key_, std::as_bytes(std::span<const char>(events_.data(), events_.size()))});
        }
        index_text_ = index_file::serialize(index_);
        index_key_ = paths::index_key(step_, worker_);
        out.push_back({index_key_, as_bytes_of(index_text_)});
        return out;
    }
    // The index file's size once planned_writes() or flush() ran.
    std::size_t index_bytes() const noexcept { return index_text_.size(); }
    // What the index file says (after flush(): with its event file name).
    const index_file::IndexFile& index() const noexcept { return index_; }

    std::size_t event_bytes() const noexcept { return events_.size(); }
    std::size_t record_count() const noexcept { return index_.tensors.size(); }

private:
    static std::span<const std::byte> as_bytes_of(const std::string& s) {
        return std::as_bytes(std::span<const char>(s.data(), s.size()));
    }

    std::int64_t step_;
    std::string worker_;
    index_file::IndexFile index_;
    std::string events_;
    std::string event_key_, index_key_, index_text_;  // what planned_writes() hands out
};

template <WritableStore S>
void write_collections_file(const S& store, std::string_view worker, const collections_file::CollectionsFile& f) {
    const auto text = collections_file::serialize(f);
    store.write(paths::collections_key(worker), std::as_bytes(std::span<const char>(text.data(), text.size())));
}

template <WritableStore S>
void write_end_marker(const S& store) {
    store.write(paths::end_marker, {});
}

}  // namespace smdebug
