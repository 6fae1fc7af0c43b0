#pragma once
// The first non-finite values of a trial, per worker: one pass over every record (read_all_records,
// query/batch_reads.hpp: the read `smdebug verify` makes), each value summed by the thread that
// decoded it (a sum is finite exactly when every element is, unless float64 values overflow it;
// such a candidate is read again and checked element by element). Once a worker's first step with
// a non-finite value is found, its later records are not read. Only complete steps are scanned (a
// job still writing: the steps complete so far).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/modes.hpp>
#include <smdebug/core/reductions.hpp>
#include <smdebug/query/batch_reads.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/rules/builtin/common.hpp>

namespace smdebug::analysis {

// The first non-finite element of a value: its index and the element (NaN, +inf, -inf); nullopt
// when every element is finite (strings, complex and integer values always are).
struct NonFiniteElement {
    std::int64_t index = 0;
    double value = 0;
};
inline std::optional<NonFiniteElement> first_nonfinite_element(const TensorValue& v) {
    std::optional<NonFiniteElement> out;
    smdebug::detail::with_elements(v, [&](auto e) {
        const auto at = smdebug::detail::first_nonfinite(e, false);
        if (at >= 0) out = NonFiniteElement{at, smdebug::detail::to_double(e[static_cast<std::size_t>(at)])};
    });
    return out;
}

// "nan", "inf" or "-inf".
inline std::string nonfinite_name(double v) {
    if (std::isnan(v)) return "nan";
    return v > 0 ? "inf" : "-inf";
}

// One worker's first step holding a non-finite value, and the tensors non-finite there.
struct WorkerNonFinite {
    std::string worker;
    std::int64_t step = 0;  // global
    Mode mode = Mode::GLOBAL;
    std::int64_t mode_step = 0;
    std::vector<std::string> tensors;  // non-finite at the step, by name
};

struct NonFiniteScan {
    std::vector<WorkerNonFinite> workers;  // by worker name; workers without a non-finite value absent
    std::size_t records = 0;               // values checked
    std::size_t steps = 0;                 // complete global steps scanned
    std::size_t bad_records = 0;           // records that did not decode
    std::vector<std::string> bad_record_errors;  // the first few, each naming its record
    bool partial = false;                  // the trial is still being written: complete steps only
    std::int64_t last_complete_step = -1;
};

template <Store S>
NonFiniteScan scan_nonfinite(Trial<S>& trial) {
    NonFiniteScan out;
    (void)trial.tensor_names();  // loads the index (settles the end of training) first
    out.partial = !trial.loaded_all_steps();
    out.last_complete_step = trial.last_complete_step();
    std::map<std::string, WorkerNonFinite, std::less<>> first;
    for (const auto g : trial.steps(Mode::GLOBAL)) (void)g, ++out.steps;
    ReadOptions options;
    options.reduce = Reduction::sum;
    options.keep_values = false;
    options.select = [&](std::string_view, Mode, std::int64_t, std::optional<std::int64_t> g, std::string_view worker) {
        if (!g || !trial.is_complete(*g)) return false;
        const auto it = first.find(worker);
        return it == first.end() || *g <= it->second.step;
    };
    const auto& index = trial.index();
    read_all_records(trial, [&](std::span<const RecordRead> batch) {
        for (const auto& r : batch) {
            if (!r.reduction.empty()) continue;  // stored reductions: their values are checked
            if (r.error) {
                try {
                    std::rethrow_exception(r.error);
                } catch (const StepNotYetAvailable&) {
                    out.partial = true;
                } catch (const SMDebugError& e) {
                    ++out.bad_records;
                    if (out.bad_record_errors.size() < 10)
                        out.bad_record_errors.push_back("tensor " + std::string(r.tensor) + " " + std::string(mode_name(r.mode)) + " step " +
                                                        std::to_string(r.mode_step) + " worker " + std::string(r.worker) + ": " + e.what());
                }
                continue;
            }
            ++out.records;
            if (!r.reduced || std::isfinite(*r.reduced)) continue;
            const auto g = r.mode == Mode::GLOBAL ? std::optional(r.mode_step) : index.lookup_global(r.mode, r.mode_step);
            if (!g) continue;
            auto it = first.find(r.worker);
            if (it != first.end() && *g > it->second.step) continue;
            if (it == first.end() || *g < it->second.step) {
                WorkerNonFinite w{std::string(r.worker), *g, r.mode, r.mode_step, {}};
                it = first.insert_or_assign(std::string(r.worker), std::move(w)).first;
            }
            it->second.tensors.emplace_back(r.tensor);
        }
    }, options);
    // A sum can overflow where no element is non-finite (float64 values near 1e308): the candidates
    // are read and checked element by element, and only confirmed ones are reported. (A worker
    // whose every candidate was such an overflow is reported clean: its later steps were not read.)
    for (auto& [worker, w] : first) {
        std::vector<ValueRequest> requests;
        for (const auto& t : w.tensors) requests.push_back({t, w.mode_step, StepQuery{w.mode, worker}});
        const auto values = trial.read(requests);
        std::vector<std::string> confirmed;
        for (std::size_t i = 0; i < values.size(); ++i)
            if (values[i].error || !values[i].value || first_nonfinite_element(*values[i].value)) confirmed.push_back(w.tensors[i]);
        std::sort(confirmed.begin(), confirmed.end());
        confirmed.erase(std::unique(confirmed.begin(), confirmed.end()), confirmed.end());
        w.tensors = std::move(confirmed);
        if (!w.tensors.empty()) out.workers.push_back(std::move(w));
    }
    return out;
}

}  // namespace smdebug::analysis
