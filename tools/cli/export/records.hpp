#pragma once
// What `smdebug export` reads for its tables and TensorBoard runs: the selected records of the trial
// (only those are read), step by step (read_all_records: batches of about 4 MiB of records, so
// memory stays bounded whatever the trial's size), grouped per (tensor, mode, step, worker), with the chosen
// reductions of each group: a stored reduction when the writer saved one, else computed from the
// value (as Tensor::reduction_value does).
#include <complex>
#include <functional>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <smdebug/core/reductions.hpp>
#include <smdebug/core/regex.hpp>
#include <smdebug/query/batch_reads.hpp>

#include "../errors.hpp"
#include "../terminal.hpp"

namespace cli::exporting {

// Which records and reductions an export takes.
struct Selection {
    std::optional<smdebug::detail::CompiledRegex> tensor;  // --tensor REGEX (search semantics)
    std::optional<smdebug::Mode> mode;                     // --mode M
    std::optional<std::string> worker;                     // --worker W
    std::optional<std::int64_t> first_step, end_step;      // --steps A:B, global steps A <= step < B
    std::vector<smdebug::Reduction> reductions;
    bool abs = false;
    // One line on stderr (what the reader skips): `smdebug export` hands its Session::print_error.
    std::function<void(std::string_view)> note = [](std::string_view text) { print_error("export", text); };

    bool wants_tensor(std::string_view name) const {
        if (!tensor) return true;
        if (const auto it = matches_.find(name); it != matches_.end()) return it->second;
        std::string key(name);
        const bool match = tensor->search(key);
        matches_.emplace(std::move(key), match);
        return match;
    }
    bool wants_step(std::optional<std::int64_t> global) const {
        if (!first_step && !end_step) return true;
        return global && (!first_step || *global >= *first_step) && (!end_step || *global < *end_step);
    }

private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    mutable std::unordered_map<std::string, bool, Hash, std::equal_to<>> matches_;
};

inline smdebug::detail::CompiledRegex tensor_regex(const std::string& pattern) {
    smdebug::detail::CompiledRegex re;
    re.add(pattern);
    return re;
}

// One tensor's records at one step of one worker, with the selected reductions.
struct Group {
    std::string_view tensor, worker;
    smdebug::Mode mode = smdebug::Mode::GLOBAL;
    std::int64_t mode_step = 0;
    std::optional<std::int64_t> step;        // the global step, when the trial knows it
    const smdebug::TensorValue* value = nullptr;  // the raw value, when saved
    std::vector<std::pair<smdebug::Reduction, double>> reductions;
};

// The number held by a stored-reduction record.
inline std::optional<double> stored_number(const smdebug::TensorValue& v) {
    using namespace smdebug;
    if (v.is_string() || v.empty()) return std::nullopt;
    return visit_dtype(v.dtype(), [&](auto tag) -> std::optional<double> {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) return std::nullopt;
        else return smdebug::detail::to_double(v.template elements<T>()[0]);
    });
}

// Calls on_group(const Group&) for every selected group, in global-step order; returns the number
// of bad records (each reported on stderr; records still being written are skipped silently).
template <class OnGroup>
std::size_t for_each_group(smdebug::Trial<smdebug::AnyStore>& trial, const Selection& sel, OnGroup&& on_group) {
    using namespace smdebug;
    std::size_t bad = 0;
    Progress progress("exporting steps", trial.steps(Mode::GLOBAL, /*show_incomplete_steps=*/true).size());
    std::optional<std::pair<Mode, std::int64_t>> last_step;
    std::optional<std::int64_t> last_global;
    const auto report = [&](const RecordRead& r, const std::string& what) {
        ++bad;
        sel.note("bad data: tensor " + std::string(r.tensor) + " " + std::string(mode_name(r.mode)) + " step " + std::to_string(r.mode_step) + " worker " +
                    std::string(r.worker) + (r.reduction.empty() ? "" : " reduction ") + std::string(r.reduction) + ": " + what);
    };
    Group g;
    read_all_records(trial, [&](std::span<const RecordRead> batch) {
        for (std::size_t i = 0; i < batch.size();) {
            const auto& first = batch[i];
            std::size_t end = i + 1;
            while (end < batch.size() && batch[end].tensor == first.tensor && batch[end].mode == first.mode &&
                   batch[end].mode_step == first.mode_step && batch[end].worker == first.worker)
                ++end;
            const auto group = batch.subspan(i, end - i);
            i = end;
            if (last_step != std::pair(first.mode, first.mode_step)) {
                last_step = std::pair(first.mode, first.mode_step);
                last_global = trial.global_step(first.mode, first.mode_step);
                progress.advance();
            }
            g.tensor = first.tensor;
            g.worker = first.worker;
            g.mode = first.mode;
            g.mode_step = first.mode_step;
            g.step = last_global;
            g.value = nullptr;
            g.reductions.clear();
            bool usable = false;
            for (const auto& r : group) {
                if (r.error) {
                    try {
                        std::rethrow_exception(r.error);
                    } catch (const StepNotYetAvailable&) {
                    } catch (const SMDebugError& e) {
                        report(r, e.what());
                    }
                    continue;
                }
                usable = true;
                if (r.reduction.empty()) g.value = r.value.get();
            }
            if (!usable) continue;
            for (const Reduction want : sel.reductions) {
                const auto name = reduction_name(want);
                const RecordRead* stored = nullptr;
                for (const auto& r : group)
                    if (!r.error && r.reduction == name && r.abs == sel.abs) stored = &r;
                if (stored) {
                    if (const auto v = stored->value ? stored_number(*stored->value) : std::nullopt) g.reductions.emplace_back(want, *v);
                    else report(*stored, "a stored reduction that is not a real number");
                } else if (g.value && reducible(*g.value)) {
                    g.reductions.emplace_back(want, compute_reduction(*g.value, want, sel.abs));
                }
            }
            on_group(std::as_const(g));
        }
    }, ReadOptions{.select = [&](std::string_view tensor, Mode mode, std::int64_t, std::optional<std::int64_t> global, std::string_view worker) {
        return (!sel.mode || *sel.mode == mode) && (!sel.worker || *sel.worker == worker) && sel.wants_step(global) && sel.wants_tensor(tensor);
    }});
    progress.finish();
    return bad;
}

}  // namespace cli::exporting
