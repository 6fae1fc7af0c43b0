#pragma once
// The step/tensor index of a trial: what the index files read so far say was saved — per tensor,
// mode, mode step and worker, where each record lives — and the step-level maps the queries use
// (global step <-> mode step, tensors per step and per mode, workers per step). Ingesting an
// index file only adds to it (docs/semantics.md §2.3); completeness is decided by the RefreshCursor.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/tensor_value.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/manifest.hpp>
#include <smdebug/format/reduction_names.hpp>
#include <smdebug/query/detail/event_files.hpp>
#include <smdebug/query/detail/index_types.hpp>
#include <smdebug/query/detail/step_data_arena.hpp>

namespace smdebug::detail {

// An index entry's name resolved (StepIndex::resolve): its tensor (for a stored reduction, the
// reduced tensor) and its record tag hash.
struct ResolvedIndexName {
    std::string name;
    TensorData* tensor = nullptr;  // null: not resolved yet
    std::uint32_t tag_hash = 0;
    bool is_reduction = false;
    bool abs = false;
    std::string reduction;
};

// What ingesting one index file changed at the step level.
struct IngestedStep {
    bool registered = false;  // the file registered anything (an empty one does not)
    bool new_step = false;    // its global step was seen for the first time
    int workers = 0;          // workers with a file for the step so far
};

class StepIndex {
public:
    StepIndex() = default;
    // Its containers point at its memory resource: it stays where it was made.
    StepIndex(const StepIndex&) = delete;
    StepIndex& operator=(const StepIndex&) = delete;

    using StepModes = std::pmr::map<std::int64_t, std::pair<Mode, std::int64_t>>;  // global -> (mode, mode step)
    using ModeStepMap = std::pmr::map<std::int64_t, std::int64_t>;                  // mode step -> global

    // ---- reading -----------------------------------------------------------------------------

    const std::map<std::string, std::unique_ptr<TensorData>>& tensors() const noexcept { return tensors_; }
    const TensorData* find_tensor(const std::string& name) const {
        auto it = tensors_.find(name);
        return it == tensors_.end() ? nullptr : it->second.get();
    }
    bool has_tensor(const std::string& name) const { return tensors_.contains(name); }

    const StepModes& steps() const noexcept { return global_to_mode_; }
    const ModeStepMap& mode_steps(Mode m) const { return mode_to_global_[mode_index(m)]; }
    // Modes with data, in the order they were first seen (never GLOBAL).
    const std::vector<Mode>& modes() const noexcept { return modes_seen_; }
    bool mode_seen(Mode m) const { return std::find(modes_seen_.begin(), modes_seen_.end(), m) != modes_seen_.end(); }
    const std::set<std::string>& tensor_names_of_mode(Mode m) const { return mode_to_tensors_[mode_index(m)]; }
    // The tensors with a record at a global step (may repeat), or null.
    const std::pmr::vector<const TensorData*>* tensors_of_step(std::int64_t g) const {
        auto it = step_to_tensors_.find(g);
        return it == step_to_tensors_.end() ? nullptr : &it->second;
    }

    std::optional<std::pair<Mode, std::int64_t>> mode_modestep(std::int64_t g) const {
        auto it = global_to_mode_.find(g);
        return it == global_to_mode_.end() ? std::nullopt : std::optional(it->second);
    }
    std::optional<std::int64_t> lookup_global(Mode mode, std::int64_t ms) const {
        const auto& m = mode_to_global_[mode_index(mode)];
        auto it = m.find(ms);
        return it == m.end() ? std::nullopt : std::optional(it->second);
    }
    std::optional<std::int64_t> global_of(Mode mode, std::int64_t step) const {
        return mode == Mode::GLOBAL ? std::optional(step) : lookup_global(mode, step);
    }
    // The last loaded step of a mode (GLOBAL: global steps), complete or not.
    std::optional<std::int64_t> last_step(Mode mode) const {
        if (mode == Mode::GLOBAL) return global_to_mode_.empty() ? std::nullopt : std::optional(global_to_mode_.rbegin()->first);
        const auto& m = mode_to_global_[mode_index(mode)];
        return m.empty() ? std::nullopt : std::optional(m.rbegin()->first);
    }

    // The first loaded step of a mode after `step` (GLOBAL: global steps), complete or not.
    std::optional<std::int64_t> next_step(Mode mode, std::int64_t step) const {
        if (mode == Mode::GLOBAL) {
            const auto it = global_to_mode_.upper_bound(step);
            return it == global_to_mode_.end() ? std::nullopt : std::optional(it->first);
        }
        const auto& m = mode_to_global_[mode_index(mode)];
        const auto it = m.upper_bound(step);
        return it == m.end() ? std::nullopt : std::optional(it->first);
    }

    // The index's own copy of a worker's name (its records point at it), or null when no record
    // has that worker: records of a worker are then found by address.
    const std::string* find_worker(const std::string& worker) const {
        const auto it = worker_names_.find(worker);
        return it == worker_names_.end() ? nullptr : &*it;
    }

    int worker_count(std::int64_t g) const {
        auto it = workers_for_step_.find(g);
        return it == workers_for_step_.end() ? 0 : static_cast<int>(it->second.size());
    }
    // The global steps each worker wrote an index file for (one that registered anything),
    // ascending, by worker.
    std::map<std::string, std::vector<std::int64_t>> steps_by_worker() const {
        std::map<std::string, std::vector<std::int64_t>> out;
        for (const auto& [g, ws] : workers_for_step_)
            for (const auto* w : ws) out[*w].push_back(g);
        for (auto& [w, steps] : out) std::sort(steps.begin(), steps.end());
        return out;
    }
    // Workers known from the collections files.
    const std::set<std::string>& workers() const noexcept { return worker_set_; }
    void add_worker(std::string worker) { worker_set_.insert(std::move(worker)); }
    // The number of workers the collections file announced; a step is complete when they all wrote.
    int num_workers() const noexcept { return num_workers_; }
    void set_num_workers(int n) noexcept { num_workers_ = n; }

    const EventFiles& event_files() const noexcept { return event_files_; }

    // ---- ingestion (docs/semantics.md §2.3) ------------------------------------------------------

    // Adds the index file of worker `worker` for global step g.
    IngestedStep ingest(std::int64_t g, const std::string& worker, const index_file::IndexFile& f) {
        // Index files of a trial list the same names in the same order, so the entries of the
        // previous file, by position, resolve most names without a lookup or a parse.
        return ingest_entries(
            g, worker, f.mode, f.mode_step, f.event_file_name ? &*f.event_file_name : nullptr, f.tensors.size(), f.shapes.size(),
            [&](std::size_t i) {
                const auto& e = f.tensors[i];
                return std::tuple<const ResolvedIndexName&, std::uint64_t, std::uint64_t, std::optional<std::uint32_t>>(
                    resolve(tensor_memo_, i, e.name, true), e.start, e.length, e.payload_crc32c);
            },
            [&](std::size_t i) {
                const auto& e = f.shapes[i];
                return std::tuple<const ResolvedIndexName&, const std::string&, std::span<const std::int64_t>>(
                    resolve(shape_memo_, i, e.name, false), e.original_name, e.shape);
            });
    }

    // How many records files of manifests will add per tensor and mode (count_records), so that
    // reserve_records can size each tensor's array once instead of doubling it as they arrive.
    class RecordCounts {
    public:
        struct Count {
            std::array<std::uint32_t, 4> records{};  // per mode
            std::size_t last_file = SIZE_MAX;         // a tensor counts once per file
        };

    private:
        friend class StepIndex;
        std::unordered_map<TensorData*, Count> counts_;  // node-based: a Count stays where it is
        std::unordered_map<const void*, std::vector<Count*>> by_name_;  // per ManifestNames, by name number
        std::size_t files_ = 0;
    };

    // The names of one manifest, resolved once each: make one per manifest for ingest below.
    class ManifestNames {
    public:
        explicit ManifestNames(const manifest::CompactManifest& m) : m_(&m), tensors_(m.names.size()), shapes_(m.names.size()) {}

    private:
        friend class StepIndex;
        const manifest::CompactManifest* m_;
        std::vector<ResolvedIndexName> tensors_, shapes_;  // by name number
    };

    // Counts the records index file `f` of a manifest (the one `names` was made for) will add.
    void count_records(RecordCounts& counts, ManifestNames& names, const manifest::CompactManifest::File& f) {
        const auto& m = *names.m_;
        auto& by_name = counts.by_name_[&names];
        if (by_name.empty()) by_name.resize(m.names.size());
        const std::size_t file = counts.files_++;
        const auto mode = mode_index(f.mode);
        auto count = [&](RecordCounts::Count& c) {
            if (c.last_file != file) {
                c.last_file = file;
                ++c.records[mode];
            }
        };
        auto tensors = m.tensors_of(f);
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const auto id = tensors.next().name;
            auto*& c = by_name[id];
            if (!c) c = &counts.counts_[tensor_name(names, id).tensor];
            count(*c);
        }
        for (const auto& s : m.shapes_of(f)) count(counts.counts_[shape_name(names, s.name).tensor]);
    }
    // Makes room for the records counted.
    void reserve_records(const RecordCounts& counts) {
        for (const auto& [t, c] : counts.counts_)
            for (std::size_t mode = 0; mode < 4; ++mode)
                if (c.records[mode]) t->steps[mode].reserve_more(c.records[mode]);
    }

    // Adds index file `f` of a manifest (the one `names` was made for), as ingest of that file.
    IngestedStep ingest(std::int64_t g, const std::string& worker, ManifestNames& names, const manifest::CompactManifest::File& f) {
        const auto& m = *names.m_;
        auto tensors = m.tensors_of(f);  // decoded in order: tensor(i) is asked for i = 0, 1, ...
        const auto shapes = m.shapes_of(f);
        return ingest_entries(
            g, worker, f.mode, f.mode_step, m.event_file_name(f), tensors.size(), shapes.size(),
            [&](std::size_t) {
                const auto e = tensors.next();
                return std::tuple<const ResolvedIndexName&, std::uint64_t, std::uint64_t, std::optional<std::uint32_t>>(
                    tensor_name(names, e.name), e.start, e.length, e.payload_crc32c);
            },
            [&](std::size_t i) {
                const auto& e = shapes[i];
                return std::tuple<const ResolvedIndexName&, const std::string&, std::span<const std::int64_t>>(
                    shape_name(names, e.name), m.names[e.original_name], m.dims_of(e));
            });
    }

    // Bytes the index holds for its records (StepEntry + StepData), for benchmarks.
    std::size_t record_bytes() const noexcept {
        std::size_t records = 0;
        for (const auto& [n, t] : tensors_)
            for (const auto& ms : t->steps) records += ms.record_count();
        return records * (sizeof(StepEntry) + sizeof(StepData));
    }

private:
    TensorData& tensor_data(const std::string& name) {
        if (auto it = tensor_lookup_.find(name); it != tensor_lookup_.end()) return *it->second;
        auto& p = tensors_[name];
        if (!p) {
            p = std::make_unique<TensorData>(memory_);
            p->name = name;
        }
        tensor_lookup_.emplace(p->name, p.get());
        return *p;
    }

    // Inserts x into the ascending v unless it is there; whether it was not. Index files arrive
    // mostly in step order: an append.
    static bool insert_sorted(std::pmr::vector<std::int64_t>& v, std::int64_t x) {
        if (v.empty() || v.back() < x) {
            v.push_back(x);
            return true;
        }
        const auto it = std::lower_bound(v.begin(), v.end(), x);
        if (*it == x) return false;
        v.insert(it, x);
        return true;
    }

    const std::string* intern_worker(const std::string& worker) {
        if (const auto* known = find_worker(worker)) return known;
        return &*worker_names_.insert(worker).first;
    }

    const Shape* intern_shape(std::span<const std::int64_t> dims) {
        shape_scratch_.assign(dims.begin(), dims.end());
        if (auto it = shapes_.find(shape_scratch_); it != shapes_.end()) return &*it;
        return &*shapes_.insert(shape_scratch_).first;
    }

    // The body of both ingests: tensor(i) gives (name, start, length, payload CRC) of tensor entry i, shape(i)
    // (name, original name, dimensions) of shape entry i.
    template <class TensorAt, class ShapeAt>
    IngestedStep ingest_entries(std::int64_t g, const std::string& worker, Mode m, std::int64_t ms, const std::string* event_file_name,
                                std::size_t tensor_count, std::size_t shape_count, TensorAt&& tensor, ShapeAt&& shape) {
        if (ms < 0) throw InvalidIndexValue("mode step number " + std::to_string(ms) + " can not be less than 0");
        if (tensor_count == 0 && shape_count == 0) return {};  // registers nothing, as the reference
        const std::string* w = intern_worker(worker);
        auto& seen = steps_of_worker_.try_emplace(w, memory_).first->second;
        const bool first_at_mode_step = insert_sorted(seen.mode_steps[mode_index(m)], ms);
        const bool first_at_step = insert_sorted(seen.global_steps, g);
        auto& tensors_of_step = step_to_tensors_[g];
        auto note_tensor = [&](TensorData& t) {
            const auto bit = static_cast<std::uint8_t>(1u << mode_index(m));
            if (m != Mode::GLOBAL && !(t.modes_noted & bit)) {
                mode_to_tensors_[mode_index(m)].insert(t.name);
                t.modes_noted |= bit;
            }
            // Once per step while files come step by step (not once per worker's file).
            if (t.last_step_noted != g) {
                tensors_of_step.push_back(&t);
                t.last_step_noted = g;
            }
        };
        auto record = [&](TensorData& t) -> StepData& {
            return t.steps[mode_index(m)].at(ms, w, [this] { return new_step_data(); }, first_at_mode_step);
        };
        const std::uint32_t event_file = tensor_count == 0 ? 0 : event_files_.intern(*event_file_name);
        if (tensors_of_step.empty()) tensors_of_step.reserve(tensor_count + shape_count);
        for (std::size_t i = 0; i < tensor_count; ++i) {
            const auto [name, start, length, payload_crc] = tensor(i);
            Location loc;
            loc.event_file = event_file;
            loc.tag_hash = name.tag_hash;
            loc.start = start;
            loc.length = static_cast<std::uint32_t>(length);  // index_file::parse bounds it
            loc.has_payload_crc = payload_crc.has_value();
            loc.payload_crc = payload_crc.value_or(0);
            loc.step = g;
            event_files_.note_record(loc);
            auto& t = *name.tensor;
            if (name.is_reduction) {
                record(t).reductions.at(name.reduction, name.abs).location = loc;
            } else {
                record(t).location = loc;
            }
            note_tensor(t);
        }
        for (std::size_t i = 0; i < shape_count; ++i) {
            const auto [name, original_name, dims] = shape(i);
            auto& t = *name.tensor;
            record(t).shape = intern_shape(dims);
            if (!t.original_name || *t.original_name != original_name) t.original_name = original_name;
            note_tensor(t);
        }
        // The step-level maps (docs/semantics.md §2.1, §3): every entry of one file shares them.
        IngestedStep out;
        out.registered = true;
        out.new_step = global_to_mode_.try_emplace(g, m, ms).second;
        if (m != Mode::GLOBAL) {
            mode_to_global_[mode_index(m)].try_emplace(ms, g);
            if (!mode_seen(m)) modes_seen_.push_back(m);
        }
        auto& ws = workers_for_step_[g];
        if (first_at_step || std::find(ws.begin(), ws.end(), w) == ws.end()) ws.push_back(w);
        out.workers = static_cast<int>(ws.size());
        return out;
    }

    const ResolvedIndexName& resolve(std::vector<ResolvedIndexName>& memo, std::size_t i, const std::string& name, bool reductions) {
        if (i < memo.size() && memo[i].name == name) return memo[i];
        if (i >= memo.size()) memo.resize(i + 1);
        resolve_into(memo[i], name, reductions);
        return memo[i];
    }
    // Name `id` of the manifest `names` was made for, as a tensor entry's or a shape entry's name,
    // resolved on first use.
    const ResolvedIndexName& tensor_name(ManifestNames& names, std::uint32_t id) { return manifest_name(names.tensors_, *names.m_, id, true); }
    const ResolvedIndexName& shape_name(ManifestNames& names, std::uint32_t id) { return manifest_name(names.shapes_, *names.m_, id, false); }
    const ResolvedIndexName& manifest_name(std::vector<ResolvedIndexName>& memo, const manifest::CompactManifest& m, std::uint32_t id,
                                           bool reductions) {
        auto& r = memo[id];
        if (!r.tensor) resolve_into(r, m.names[id], reductions);
        return r;
    }
    void resolve_into(ResolvedIndexName& r, const std::string& name, bool reductions) {
        r.name = name;
        r.tag_hash = record_tag_hash(name);
        auto red = reductions ? parse_reduction_tensor_name(name) : std::nullopt;
        r.is_reduction = red.has_value();
        r.abs = red && red->abs;
        r.reduction = red ? std::move(red->reduction) : std::string();
        r.tensor = red ? &tensor_data(red->tensor) : &tensor_data(name);
    }

    // StepData lives in fixed-size chunks: stable addresses, one allocation per chunk.
    StepData* new_step_data() { return step_data_.make(); }

    // Where the index's arrays, per-step lists and maps live: the heap. (They were in an arena of
    // huge pages of its own; measured, it did not pay: docs/performance.md.)
    std::pmr::memory_resource* const memory_ = std::pmr::new_delete_resource();
    std::map<std::string, std::unique_ptr<TensorData>> tensors_;
    std::unordered_map<std::string_view, TensorData*> tensor_lookup_;  // names owned by tensors_
    StepModes global_to_mode_{memory_};
    std::array<ModeStepMap, 4> mode_to_global_{ModeStepMap(memory_), ModeStepMap(memory_), ModeStepMap(memory_),
                                               ModeStepMap(memory_)};
    std::vector<Mode> modes_seen_;
    std::pmr::unordered_map<std::int64_t, std::pmr::vector<const TensorData*>> step_to_tensors_{memory_};  // may repeat
    std::array<std::set<std::string>, 4> mode_to_tensors_;
    std::pmr::unordered_map<std::int64_t, std::pmr::vector<const std::string*>> workers_for_step_{memory_};
    // The global steps and mode steps each worker's ingested files had (ascending): a file that is
    // its worker's first at its step adds records without searching the step's other workers.
    struct StepsOfWorker {
        explicit StepsOfWorker(std::pmr::memory_resource* memory)
            : global_steps(memory), mode_steps{std::pmr::vector<std::int64_t>(memory), std::pmr::vector<std::int64_t>(memory),
                                               std::pmr::vector<std::int64_t>(memory), std::pmr::vector<std::int64_t>(memory)} {}
        std::pmr::vector<std::int64_t> global_steps;
        std::array<std::pmr::vector<std::int64_t>, 4> mode_steps;
    };
    std::pmr::unordered_map<const std::string*, StepsOfWorker> steps_of_worker_{memory_};
    std::set<std::string> worker_set_;
    std::set<std::string> worker_names_;  // interned worker names of the records
    std::set<Shape> shapes_;              // interned shapes of the records
    Shape shape_scratch_;                 // intern_shape's key, reused
    std::vector<ResolvedIndexName> tensor_memo_, shape_memo_;  // the last file's entries (resolve)
    StepDataArena step_data_;
    int num_workers_ = 1;
    EventFiles event_files_;
};

}  // namespace smdebug::detail
