#pragma once
// diff(a, b): where two runs part (docs/diagnose.md "diff"). Steps are aligned by mode and mode
// step; at each step both runs saved, every tensor both saved (per worker both have) is compared
// (core/value_compare.hpp: bitwise by default, or within a Tolerance). The first difference is
// the first aligned step (in run A's global order) holding one, and of its differing tensors the
// first in compute order (record order in run A's event file: analysis/record_order.hpp). Also:
// how many values and tensors differ from that step on, and the tensors and steps one run has
// and the other lacks. Only complete steps are compared (a job still writing: the steps complete
// so far; DiffResult::partial says so). Reads go in batches of whole steps, both runs at once.
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

template <Store S>
std::vector<std::string> workers_of(const Trial<S>& t, const std::string& tensor, Mode mode, std::int64_t ms) {
    std::vector<std::string> out;
    if (const auto* d = t.index().find_tensor(tensor))
        for (const auto& e : d->steps[mode_index(mode)].find(ms)) out.push_back(*e.worker);
    return out;
}

template <Store S>
std::size_t elements_of(const Trial<S>& t, const std::string& tensor, Mode mode, std::int64_t ms) {
    if (const auto* d = t.index().find_tensor(tensor))
        for (const auto& e : d->steps[mode_index(mode)].find(ms))
            if (e.data().shape) return std::max<std::size_t>(1, element_count(*e.data().shape));
    return 1;
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

    // One comparison: (aligned step, tensor, worker).
    struct Item {
        std::size_t step;
        std::string tensor, worker;
    };
    // About 4 MB of float32 per run and batch: buffers of that size are reused by the allocator (larger
    // ones are fresh mappings, each page faulted in again: most of the time of a larger batch).
    constexpr std::size_t batch_elements = std::size_t{1} << 20;
    std::set<std::string> differing_tensors;
    std::optional<std::size_t> first_step;
    std::size_t last_differing_step = SIZE_MAX;
    auto compare_batch = [&](const std::vector<Item>& items) {
        std::vector<ValueRequest> ra, rb;
        for (const auto& it : items) {
            const auto& s = aligned[it.step];
            ra.push_back({it.tensor, s.ms, StepQuery{s.mode, it.worker}});
            rb.push_back({it.tensor, s.ms, StepQuery{s.mode, it.worker}});
        }
        ReadOptions ro;
        ro.use_cache = false;
        auto fb = std::async(std::launch::async, [&] { return b.read(std::span<const ValueRequest>(rb), ro); });
        std::vector<ValueResult> va;
        try {
            va = a.read(std::span<const ValueRequest>(ra), ro);
        } catch (...) {
            fb.wait();
            throw;
        }
        const auto vb = fb.get();
        for (std::size_t i = 0; i < items.size(); ++i) {
            const auto& it = items[i];
            const auto& s = aligned[it.step];
            TensorDifference d{s.ga, s.gb, s.mode, s.ms, it.tensor, it.worker, 0, 0, {}};
            if (va[i].error || vb[i].error) {
                const auto& err = va[i].error ? va[i].error : vb[i].error;
                try {
                    std::rethrow_exception(err);
                } catch (const StepNotYetAvailable&) {
                    out.partial = true;
                    continue;
                } catch (const SMDebugError& e) {
                    d.reason = std::string(va[i].error ? "run A" : "run B") + ": " + e.what();
                    d.max_abs = d.max_rel = std::numeric_limits<double>::infinity();
                }
            } else {
                ++out.compared_values;
                const auto c = compare_values(*va[i].value, *vb[i].value, tol);
                if (!c.differ) continue;
                d.max_abs = c.max_abs;
                d.max_rel = c.max_rel;
                d.reason = c.reason;
            }
            if (!first_step) first_step = it.step;
            ++out.differing_values;
            differing_tensors.insert(it.tensor);
            if (last_differing_step != it.step) ++out.differing_steps, last_differing_step = it.step;
            if (it.step == *first_step) out.first_step_differences.push_back(std::move(d));
        }
    };
    std::vector<Item> batch;
    std::size_t elements = 0;
    for (std::size_t i = 0; i < aligned.size(); ++i) {
        const auto& s = aligned[i];
        TensorNamesQuery qa, qb;
        qa.step = s.ga;
        qb.step = s.gb;
        const auto na = a.tensor_names(qa), nb = b.tensor_names(qb);
        std::vector<std::string> both;
        std::set_intersection(na.begin(), na.end(), nb.begin(), nb.end(), std::back_inserter(both));
        if (!both.empty()) ++out.compared_steps;
        for (const auto& t : both) {
            const auto wa = detail::workers_of(a, t, s.mode, s.ms), wb = detail::workers_of(b, t, s.mode, s.ms);
            for (const auto& w : wa) {
                if (std::find(wb.begin(), wb.end(), w) == wb.end()) continue;
                batch.push_back({i, t, w});
                elements += detail::elements_of(a, t, s.mode, s.ms);
            }
        }
        if (elements >= batch_elements || i + 1 == aligned.size()) {
            compare_batch(batch);
            batch.clear();
            elements = 0;
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
