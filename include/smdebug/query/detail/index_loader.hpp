#pragma once
// The Trial's index loader: what a refresh reads (docs/semantics.md §2.3, D11, D12) — the index
// files listed after the listing position, read together (in parallel where the store can) and
// parsed on a few threads when there are many, then ingested in listing order into the StepIndex
// and the RefreshCursor, as one by one; and, at open, the manifests (compacted index) that stand
// for the index files they list. Also the end-of-training timing a refresh needs (D21).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/manifest.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/query/detail/manifest_loader.hpp>
#include <smdebug/query/detail/refresh_cursor.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/detail/trial_settings.hpp>
#include <smdebug/query/options.hpp>
#include <smdebug/query/refresh_stats.hpp>
#include <smdebug/query/step_listing.hpp>
#include <smdebug/storage/detail/parallel.hpp>
#include <smdebug/storage/store.hpp>

namespace smdebug::detail {

template <Store S>
class IndexLoader {
public:
    // Every argument must outlive the loader (they are the Trial's members).
    IndexLoader(const S& store, HelperPool& helpers, const TrialOptions& options, const TrialSettings& settings, StepIndex& index,
                RefreshCursor& cursor)
        : store_(store), helpers_(helpers), options_(options), settings_(settings), index_(index), cursor_(cursor) {}

    // Finds the manifests the first refresh opens from (once the workers are known).
    void open_manifests() {
        manifests_ = load_manifests(store_, listing_start(), settings_.range.begin, settings_.range.end, index_.workers(), index_.num_workers(),
                                    [this](const std::string& line) { warn(options_, line); });
        stats_.manifests_read = manifests_.manifests_read;
    }

    // Reads the index files written since the last refresh. A listing is not a snapshot: a file
    // renamed into place while it ran can be missing from it while a later one is there. When it
    // brought new files, a second listing, begun after it ended, reads what it missed; everything
    // up to its newest key is then loaded. A job whose end marker had settled before the listing
    // began writes nothing any more: its listing is a snapshot and confirms itself.
    void refresh() {
        ++stats_.refreshes;
        const auto listing_began = std::chrono::system_clock::now();
        const auto first = list_and_read(false);
        if (first.brought_new_files && !ended_before(listing_began)) list_and_read(true);
        cursor_.confirm_through(first.newest_key);
        cursor_.finish_refresh();
    }

    const RefreshStats& stats() const noexcept { return stats_; }

    // D21: the end-of-training settle lasts what remains of D after the end marker's
    // last-modified time — all of D when the store cannot tell or the time lies ahead (clock
    // skew), nothing once D has passed.
    std::chrono::milliseconds end_settle_remaining() const {
        const auto delay = settings_.training_end_delay_refresh;
        const auto modified = last_modified(store_, paths::end_marker);
        if (!modified) return delay;
        const auto age = std::chrono::system_clock::now() - *modified;
        if (age < std::chrono::system_clock::duration::zero()) return delay;
        if (age >= delay) return std::chrono::milliseconds(0);
        return std::chrono::ceil<std::chrono::milliseconds>(delay - age);
    }

private:
    // Whether the end marker existed, settled (D and at least a second old), at time `t`.
    bool ended_before(std::chrono::system_clock::time_point t) const {
        const auto modified = last_modified(store_, paths::end_marker);
        const auto settle = std::max<std::chrono::milliseconds>(settings_.training_end_delay_refresh, std::chrono::seconds(1));
        return modified && *modified + settle <= t;
    }

    // Where a first listing starts: with range_steps, at the range's first step (the keys before
    // it name steps the trial never loads).
    std::string listing_start() const {
        return settings_.range.begin && *settings_.range.begin > 0 ? paths::index_step_prefix(*settings_.range.begin) : std::string();
    }

    struct ListingOutcome {
        std::optional<std::string> newest_key;  // the newest index file listed
        bool brought_new_files = false;         // an index file not read before was listed
    };
    // One listing from the token, and the index files it lists that were not read yet.
    ListingOutcome list_and_read(bool confirming) {
        // Until the listing position is set, listings start after what the manifests stand for.
        const auto start = cursor_.token().value_or(manifests_.resume_after.empty() ? listing_start() : manifests_.resume_after);
        const auto keys = list_index_keys(store_, start, settings_.range.end);
        if (confirming) {
            ++stats_.confirming_listings;
            stats_.confirming_keys_listed += keys.size();
        } else {
            stats_.index_files_listed += keys.size();
        }
        ListingOutcome outcome;
        if (!manifests_.manifests.empty()) ingest_manifest_files(outcome);
        // Only index files count, for reading and for the listing position: a writer's
        // "*.json.tmp" sorts after its final name, so remembering it would skip that file.
        auto is_index_file = [](const std::string& key) {
            const auto name = paths::basename(key);
            return name.ends_with(".json") || name.ends_with(".csv");
        };
        // The files this refresh reads (up to the first invalid name, which throws below).
        std::vector<std::string> to_read;
        for (const auto& key : keys) {
            if (!is_index_file(key) || cursor_.was_read(key)) continue;
            const auto sf = paths::parse_step_file(key);
            if (!sf) break;
            if (settings_.range.contains(sf->step)) to_read.push_back(key);
        }
        // Bounds the memory of a first open; small enough that the buffers of one batch are
        // reused by the next (fresh pages cost a fault each). A batch is read and parsed, then
        // ingested here in key order (reading the next batch meanwhile on a helper thread did not
        // pay: docs/performance.md).
        constexpr std::size_t files_per_batch = 128;
        auto batch_at = [&](std::size_t begin) {
            return std::span<const std::string>(to_read).subspan(begin, std::min(files_per_batch, to_read.size() - begin));
        };
        std::vector<ParsedIndexFile> parsed;
        std::size_t parsed_begin = 0, next = 0;
        for (const auto& key : keys) {
            if (!is_index_file(key)) continue;
            outcome.newest_key = key;  // keys come sorted
            if (!cursor_.note_listed(key)) continue;
            outcome.brought_new_files = true;
            const auto sf = paths::parse_step_file(key);
            if (!sf) throw IndexReaderException("Invalid File Found: " + smdebug::describe(store_, key));
            if (settings_.range.contains(sf->step)) {
                if (next >= to_read.size() || to_read[next] != key)
                    throw SMDebugRuntimeError("internal error: index listing changed during a refresh of " + smdebug::describe(store_, ""));
                if (next >= parsed_begin + parsed.size()) {
                    read_index_files(batch_at(next), parsed);
                    parsed_begin = next;
                }
                const auto& file = parsed[next++ - parsed_begin];
                if (file.error) std::rethrow_exception(file.error);
                if (file.gone) continue;  // removed between listing and reading
                IngestedStep ingested;
                try {
                    ingested = index_.ingest(sf->step, sf->worker, file.index);
                } catch (const InvalidIndexValue& e) {
                    throw InvalidIndexValue(smdebug::describe(store_, key) + ": " + e.what());
                }
                cursor_.note_ingested(sf->step, ingested);
                ++stats_.index_files_read;
            }
            cursor_.mark_read(key);
        }
        return outcome;
    }

    // The index files the manifests stand for, as if listed and read (before the keys listed
    // after them: key order, as one listing).
    void ingest_manifest_files(ListingOutcome& outcome) {
        std::vector<StepIndex::ManifestNames> names;  // names resolved once per manifest
        names.reserve(manifests_.manifests.size());
        for (const auto& m : manifests_.manifests) names.emplace_back(m);
        {
            StepIndex::RecordCounts counts;  // each tensor's records, to size its arrays once
            for (const auto& ref : manifests_.files) {
                const auto& f = manifests_.file(ref);
                if (!cursor_.was_read(f.key) && settings_.range.contains(paths::parse_step_file(f.key)->step))
                    index_.count_records(counts, names[ref.manifest], f);
            }
            index_.reserve_records(counts);
        }
        for (const auto& ref : manifests_.files) {
            const auto& f = manifests_.file(ref);
            outcome.newest_key = f.key;
            if (!cursor_.note_listed(f.key)) continue;
            outcome.brought_new_files = true;
            const auto sf = paths::parse_step_file(f.key);  // checked when the manifest was decoded
            if (settings_.range.contains(sf->step)) {
                IngestedStep ingested;
                try {
                    ingested = index_.ingest(sf->step, sf->worker, names[ref.manifest], f);
                } catch (const InvalidIndexValue& e) {
                    throw InvalidIndexValue(smdebug::describe(store_, f.key) + ": " + e.what());
                }
                cursor_.note_ingested(sf->step, ingested);
                ++stats_.index_files_from_manifests;
            }
            cursor_.mark_read(f.key);
        }
        manifests_.files = {};
        manifests_.manifests = std::vector<manifest::CompactManifest>();
    }

    struct ParsedIndexFile {
        index_file::IndexFile index;
        bool gone = true;          // the file is gone (removed between listing and reading)
        std::exception_ptr error;  // it does not parse
    };
    // Reads and parses index files into `out` (in parallel when there are many), reusing the
    // memory of what `out` held (the previous batch): fresh memory costs a fault per page. On a
    // store that is not latency-bound (a local folder) each thread parses a file as soon as it
    // has read it, so the texts of a batch are never held at once.
    void read_index_files(std::span<const std::string> keys, std::vector<ParsedIndexFile>& out) const {
        out.resize(keys.size());
        for (auto& p : out) {
            p.error = nullptr;
            p.gone = true;
        }
        if (keys.empty()) return;
        const std::size_t n = keys.size();
        // Chunks of 16 files, taken by whichever thread is free: one that was busy elsewhere (the
        // caller ingesting the batch before this one) joins the rest when it is done.
        const std::size_t threads = n >= 64 ? std::min(default_read_threads(), n) : 1;
        const std::size_t chunks = threads == 1 ? 1 : (n + 15) / 16;
        const index_file::Limits limits{options_.max_index_file_bytes, options_.max_tensor_name_bytes};
        auto parse = [&](std::size_t i, const ByteBuffer& text) {
            try {
                index_file::parse_into(text.text(), smdebug::describe(store_, keys[i]), limits, out[i].index);
                out[i].gone = false;
            } catch (...) {
                out[i].error = std::current_exception();
            }
        };
        if (!latency_bound(store_)) {
            parallel_for(helpers_, chunks, threads, [&](std::size_t c) {
                for (std::size_t i = c * n / chunks; i < (c + 1) * n / chunks; ++i) {
                    std::optional<ByteBuffer> text;
                    try {
                        text.emplace(store_.read(keys[i]));
                    } catch (const ObjectNotFound&) {
                        continue;  // removed between listing and reading
                    }
                    parse(i, *text);
                }
            });
            return;
        }
        auto texts = read_objects(store_, keys);
        parallel_for(helpers_, chunks, threads, [&](std::size_t c) {
            for (std::size_t i = c * n / chunks; i < (c + 1) * n / chunks; ++i)
                if (texts[i]) parse(i, *texts[i]);
        });
    }

    const S& store_;
    HelperPool& helpers_;
    const TrialOptions& options_;
    const TrialSettings& settings_;
    StepIndex& index_;
    RefreshCursor& cursor_;
    RefreshStats stats_;
    LoadedManifests manifests_;  // its files are dropped once ingested
};

}  // namespace smdebug::detail
