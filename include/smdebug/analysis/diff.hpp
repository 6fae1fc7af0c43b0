#pragma once
// diff(a, b): where two runs part (docs/diagnose.md "diff"). Steps are aligned by mode and mode
// step; at each step both runs saved, every tensor both saved (per worker both have) is compared
// (core/value_compare.hpp: bitwise by default, or within a Tolerance). The first difference is
// the first aligned step (in run A's global order) holding one, and of its differing tensors the
// first in compute order (record order in run A's event file: analysis/record_order.hpp). Also:
// how many values and tensors differ from that step on, and the tensors and steps one run has
// and the other lacks. Only complete steps are compared (a job still writing: the steps complete
// so far; DiffResult::partial says so). Reads go in step order, in batches of whole steps of about
// 4 MB per run (counted from the index's record lengths): both runs' records of a batch are read
// at once as the index locates them (Trial::read of RecordReads: no lookup by name, step or worker
// per value), compared, and released before the next batch, into request buffers reused from one
// batch to the next.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <smdebug/analysis/record_order.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/value_compare.hpp>
#include <smdebug/query/detail/index_types.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug::analysis {

using smdebug::compare_values;  // core/value_compare.hpp
using smdebug::Tolerance;
using smdebug::ValueComparison;

struct TensorDifference {
    std::int64_t step = 0;    // run A's global step
    std::int64_t step_b = 0;  // run B's global step of the same mode step
    Mode mode = Mode::GLOBAL;
    std::int64_t mode_step = 0;
    std::string tensor;
    std::string worker;
    double max_abs = 0;
    double max_rel = 0;
    std::string reason;  // dtype or shape mismatch, unreadable record; empty for differing values
};

struct StepRef {
    Mode mode = Mode::GLOBAL;
    std::int64_t mode_step = 0;
};

struct RunOnly {
    std::vector<std::string> tensors;  // saved by this run only
    std::vector<StepRef> steps;        // (mode, mode step) saved by this run only, in the modes both have
};

struct DiffResult {
    std::optional<TensorDifference> first_difference;
    std::vector<TensorDifference> first_step_differences;  // every difference at that step, compute order
    std::size_t differing_values = 0;   // (tensor, step, worker) values differing, from that step on
    std::size_t differing_tensors = 0;  // distinct tensors differing from that step on
    std::size_t differing_steps = 0;    // aligned steps holding a difference
    std::size_t compared_values = 0;
    std::size_t compared_steps = 0;
    RunOnly only_in_a, only_in_b;
    bool partial = false;  // a run is still being written: complete steps only
    // Set when the runs share no mode, no step or no tensor: nothing could be compared.
    std::string nothing_shared;
    Tolerance tolerance;

    bool differ() const noexcept { return first_difference.has_value(); }
};

namespace detail {

// The record of (tensor, mode, mode step) that `worker` saved in this run, or null.
inline const smdebug::detail::StepData* record_of(const smdebug::detail::TensorData& t, Mode mode, std::int64_t ms, const std::string& worker) {
    for (const auto& e : t.steps[mode_index(mode)].find(ms))
        if (*e.worker == worker) return &e.data();
    return nullptr;
}

inline std::string mode_list(const std::vector<Mode>& modes) {
    std::string out;
    for (const auto m : modes) out += (out.empty() ? "" : ", ") + std::string(mode_name(m));
    return out.empty() ? "none" : out;
}

}  // namespace detail

template <Store S1, Store S2>
DiffResult diff(Trial<S1>& a, Trial<S2>& b, const Tolerance& tol = {}) {
    DiffResult out;
    out.tolerance = tol;
    const auto names_a = a.tensor_names(), names_b = b.tensor_names();  // load both indexes first
    out.partial = !a.loaded_all_steps() || !b.loaded_all_steps();
    std::set_difference(names_a.begin(), names_a.end(), names_b.begin(), names_b.end(), std::back_inserter(out.only_in_a.tensors));
    std::set_difference(names_b.begin(), names_b.end(), names_a.begin(), names_a.end(), std::back_inserter(out.only_in_b.tensors));

    // The aligned steps: (A's global step, B's global step, mode, mode step), in A's order.
    struct Aligned {
        std::int64_t ga, gb;
        Mode mode;
        std::int64_t ms;
    };
    std::vector<Aligned> aligned;
    std::vector<Mode> modes_a = a.modes(), modes_b = b.modes();
    if (modes_a.empty()) modes_a.push_back(Mode::GLOBAL);
    if (modes_b.empty()) modes_b.push_back(Mode::GLOBAL);
    bool shared_mode = false;
    for (const Mode m : modes_a) {
        if (std::find(modes_b.begin(), modes_b.end(), m) == modes_b.end()) continue;
        shared_mode = true;
        const auto sa = a.steps(m), sb = b.steps(m);
        std::vector<std::int64_t> both;
        std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(both));
        for (const auto ms : sa)
            if (!std::binary_search(sb.begin(), sb.end(), ms)) out.only_in_a.steps.push_back({m, ms});
        for (const auto ms : sb)
            if (!std::binary_search(sa.begin(), sa.end(), ms)) out.only_in_b.steps.push_back({m, ms});
        for (const auto ms : both) {
            const auto ga = a.global_step(m, ms), gb = b.global_step(m, ms);
            if (ga && gb) aligned.push_back({*ga, *gb, m, ms});
        }
    }
    std::sort(aligned.begin(), aligned.end(), [](const Aligned& x, const Aligned& y) { return x.ga < y.ga; });
    if (!shared_mode) {
        out.nothing_shared = "the runs share no mode (A: " + detail::mode_list(a.modes()) + "; B: " + detail::mode_list(b.modes()) + ")";
        return out;
    }
    if (aligned.empty()) {
        out.nothing_shared = "the runs share no step (of the modes both have)";
        return out;
    }
    std::vector<std::string> shared;
    std::set_intersection(names_a.begin(), names_a.end(), names_b.begin(), names_b.end(), std::back_inserter(shared));
    if (shared.empty()) {
        out.nothing_shared = "the runs share no tensor";
        return out;
    }

    // One comparison: (aligned step, tensor, worker), with each run's record of it. Names point
    // into run A's index (stable for the diff: neither trial refreshes while it runs).
    struct Item {
        std::size_t step;
        const std::string* tensor;
        const std::string* worker;
        bool located;       // both records located: read as located (ra, rb), else by name (qa, qb)
        std::size_t index;  // its place there
    };
    constexpr std::uint64_t batch_bytes = std::uint64_t{4} << 20;  // per run, as read_all_records
    std::set<std::string> differing_tensors;
    std::optional<std::size_t> first_step;
    std::size_t last_differing_step = SIZE_MAX;
    auto note = [&](const Item& it, TensorDifference&& d) {
        if (!first_step) first_step = it.step;
        ++out.differing_values;
        differing_tensors.insert(*it.tensor);
        if (last_differing_step != it.step) ++out.differing_steps, last_differing_step = it.step;
        if (it.step == *first_step) out.first_step_differences.push_back(std::move(d));
    };
    auto difference = [&](const Item& it) {
        const auto& s = aligned[it.step];
        return TensorDifference{s.ga, s.gb, s.mode, s.ms, *it.tensor, *it.worker, 0, 0, {}};
    };
    // An error reading either record: StepNotYetAvailable (a record still being written) is left
    // out and marks the result partial; any other makes the pair a difference, with its reason.
    auto read_error = [&](const Item& it, const std::exception_ptr& ea, const std::exception_ptr& eb) {
        try {
            std::rethrow_exception(ea ? ea : eb);
        } catch (const StepNotYetAvailable&) {
            out.partial = true;
        } catch (const SMDebugError& e) {
            auto d = difference(it);
            d.reason = std::string(ea ? "run A" : "run B") + ": " + e.what();
            d.max_abs = d.max_rel = std::numeric_limits<double>::infinity();
            note(it, std::move(d));
        }
    };
    auto compared = [&](const Item& it, const TensorValue& va, const TensorValue& vb) {
        ++out.compared_values;
        const auto c = compare_values(va, vb, tol);
        if (!c.differ) return;
        auto d = difference(it);
        d.max_abs = c.max_abs;
        d.max_rel = c.max_rel;
        d.reason = c.reason;
        note(it, std::move(d));
    };

    // A batch: the pairs whose records both runs located, read as located, and the others (a
    // record that holds no value, e.g. reductions only), read by name as value() reads them, which
    // says why. The buffers are kept from batch to batch; the values are released after each.
    std::vector<Item> items;
    std::vector<RecordRead> ra, rb;
    std::vector<const smdebug::detail::Location*> la, lb;
    std::vector<ValueRequest> qa, qb;
    ReadOptions ro;
    ro.use_cache = false;
    auto flush = [&] {
        if (!ra.empty()) {
            auto fb = std::async(std::launch::async, [&] { b.read(std::span<RecordRead>(rb), lb, ro); });
            try {
                a.read(std::span<RecordRead>(ra), la, ro);
            } catch (...) {
                fb.wait();
                throw;
            }
            fb.get();
        }
        std::vector<ValueResult> va, vb;
        if (!qa.empty()) {
            va = a.read(std::span<const ValueRequest>(qa), ro);
            vb = b.read(std::span<const ValueRequest>(qb), ro);
        }
        for (const auto& it : items) {  // in step order: the first difference noted is at the first differing step
            const ValueResult& x = it.located ? static_cast<const ValueResult&>(ra[it.index]) : va[it.index];
            const ValueResult& y = it.located ? static_cast<const ValueResult&>(rb[it.index]) : vb[it.index];
            if (x.error || y.error) read_error(it, x.error, y.error);
            else compared(it, *x.value, *y.value);
        }
        items.clear(), ra.clear(), rb.clear(), la.clear(), lb.clear(), qa.clear(), qb.clear();  // the values released
    };
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < aligned.size(); ++i) {
        const auto& s = aligned[i];
        TensorNamesQuery query_a, query_b;
        query_a.step = s.ga;
        query_b.step = s.gb;
        const auto na = a.tensor_names(query_a), nb = b.tensor_names(query_b);
        std::vector<std::string> both;
        std::set_intersection(na.begin(), na.end(), nb.begin(), nb.end(), std::back_inserter(both));
        if (!both.empty()) ++out.compared_steps;
        for (const auto& name : both) {
            const auto* ta = a.find_tensor_data(name);
            const auto* tb = b.find_tensor_data(name);
            if (!ta || !tb) continue;
            for (const auto& ea : ta->steps[mode_index(s.mode)].find(s.ms)) {
                const auto* db = detail::record_of(*tb, s.mode, s.ms, *ea.worker);
                if (!db) continue;
                const auto& da = ea.data();
                if (da.location && db->location) {
                    items.push_back({i, &ta->name, ea.worker, true, ra.size()});
                    ra.push_back({{}, ta->name, s.mode, s.ms, *ea.worker, {}, false, da.location->has_payload_crc != 0});
                    rb.push_back({{}, tb->name, s.mode, s.ms, *ea.worker, {}, false, db->location->has_payload_crc != 0});
                    la.push_back(&*da.location);
                    lb.push_back(&*db->location);
                    bytes += std::max(da.location->length, db->location->length);
                } else {
                    items.push_back({i, &ta->name, ea.worker, false, qa.size()});
                    qa.push_back({name, s.ms, StepQuery{s.mode, *ea.worker}});
                    qb.push_back({name, s.ms, StepQuery{s.mode, *ea.worker}});
                    bytes += 4096;  // no located value: counted as a small one, so that batches stay bounded
                }
            }
        }
        if (bytes >= batch_bytes || i + 1 == aligned.size()) {  // batches end at step boundaries
            flush();
            bytes = 0;
        }
    }
    out.differing_tensors = differing_tensors.size();
    if (!out.first_step_differences.empty()) {
        auto& diffs = out.first_step_differences;
        auto pos = [&](const TensorDifference& d) {
            return record_position(a, d.tensor, d.mode, d.mode_step, d.worker).value_or(RecordPosition{UINT32_MAX, UINT64_MAX});
        };
        std::stable_sort(diffs.begin(), diffs.end(), [&](const TensorDifference& x, const TensorDifference& y) { return pos(x) < pos(y); });
        out.first_difference = diffs.front();
    }
    return out;
}

}  // namespace smdebug::analysis
