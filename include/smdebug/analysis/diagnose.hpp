#pragma once
// diagnose(trial): where training went wrong (docs/diagnose.md "diagnose").
//  1. the first step holding a non-finite value, per worker (analysis/nonfinite_scan.hpp), with its
//     mode and mode step;
//  2. the first tensor of that step in compute order (record order in the worker's event file:
//     analysis/record_order.hpp) and its verdict (analysis/tensor_roles.hpp): a module output whose
//     inputs were finite, a weight already non-finite (with the last step it was finite and that
//     step's gradient), a gradient (the first non-finite in backward order), the loss, an input;
//  3. the earliest finding of each built-in rule that runs without parameters
//     (analysis/first_findings.hpp).
// A trial still being written is answered for its complete steps (Diagnosis::partial says so).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <smdebug/analysis/first_findings.hpp>
#include <smdebug/analysis/nonfinite_scan.hpp>
#include <smdebug/analysis/record_order.hpp>
#include <smdebug/analysis/tensor_roles.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug::analysis {

// A weight that was already non-finite when its step began: the last earlier step it was saved
// finite at, and its gradient there.
struct WeightHistory {
    std::optional<std::int64_t> last_finite_step;  // global
    std::string gradient;                          // the gradient's name, empty when none was saved
    std::optional<double> gradient_max_abs;        // max |gradient| at last_finite_step
};

struct FirstNonFinite {
    std::int64_t step = 0;  // global
    Mode mode = Mode::GLOBAL;
    std::int64_t mode_step = 0;
    std::string worker;
    std::string tensor;                                 // first non-finite in compute order
    TensorRole role = TensorRole::other;
    std::string module;                                 // module inputs and outputs: the module
    std::string value;                                  // "nan", "inf" or "-inf": its first non-finite element
    std::int64_t element = -1;                          // ... at this index
    std::vector<std::pair<std::string, bool>> inputs;   // module outputs and losses: each input, finite?
    bool inputs_inferred = false;                       // no input was saved: `inputs` is the module output written just before
    std::vector<std::string> nonfinite_tensors;         // every tensor non-finite at the step, compute order
    std::optional<WeightHistory> weight;                // role weight
    std::string verdict;                                // one sentence
};

struct Diagnosis {
    std::optional<FirstNonFinite> first_nonfinite;  // the earliest step over all workers
    std::vector<FirstNonFinite> workers;            // per worker with a non-finite value, by worker
    std::vector<RuleFirstFinding> findings;
    std::vector<std::string> rules_checked;
    std::vector<std::pair<std::string, std::string>> rules_skipped;
    std::vector<std::pair<std::string, std::string>> rule_notes;  // rule, note (RuntimeRule::notes)
    std::size_t records_checked = 0;
    std::size_t steps_checked = 0;
    std::size_t bad_records = 0;
    std::vector<std::string> bad_record_errors;
    bool partial = false;  // still being written: complete steps only
    std::int64_t last_complete_step = -1;

    bool wrong() const noexcept { return first_nonfinite.has_value() || !findings.empty() || bad_records > 0; }
};

namespace detail {

template <Store S>
std::optional<double> max_abs_at(Trial<S>& trial, const std::string& tensor, std::int64_t global_step, const std::string& worker) {
    ValueRequest r{tensor, global_step, StepQuery{Mode::GLOBAL, worker}, ReductionSpec{"max", true}};
    const auto results = trial.read(std::span<const ValueRequest>(&r, 1));
    if (results[0].error || !results[0].reduced) return std::nullopt;
    return results[0].reduced;
}

template <Store S>
WeightHistory weight_history(Trial<S>& trial, const std::string& weight, std::int64_t step, const std::string& worker) {
    WeightHistory h;
    const auto& index = trial.index();
    const auto* t = index.find_tensor(weight);
    if (!t) return h;
    for (Mode m : all_modes)
        for (const auto& [ms, entries] : t->steps[mode_index(m)]) {
            const auto g = m == Mode::GLOBAL ? std::optional(ms) : index.lookup_global(m, ms);
            if (!g || *g >= step) continue;
            for (const auto& e : entries)
                if (*e.worker == worker && (!h.last_finite_step || *g > *h.last_finite_step)) h.last_finite_step = g;
        }
    if (!h.last_finite_step) return h;
    for (const std::string& candidate :
         {"gradients/" + weight, "gradient/" + weight, "gradients/" + weight.substr(weight.find('_') + 1), "gradient/" + weight.substr(weight.find('_') + 1)}) {
        if (!index.has_tensor(candidate)) continue;
        h.gradient = candidate;
        h.gradient_max_abs = max_abs_at(trial, candidate, *h.last_finite_step, worker);
        break;
    }
    return h;
}

inline std::string describe_step(const FirstNonFinite& f) {
    return "step " + std::to_string(f.step) + " (" + std::string(mode_name(f.mode)) + " step " + std::to_string(f.mode_step) + ")";
}

inline std::string verdict_of(const FirstNonFinite& f) {
    const std::string what = f.value == "nan" ? "NaN" : f.value;
    switch (f.role) {
        case TensorRole::module_output:
        case TensorRole::loss: {
            const bool all_finite = !f.inputs.empty() && std::all_of(f.inputs.begin(), f.inputs.end(), [](const auto& i) { return i.second; });
            const std::string who = f.role == TensorRole::loss ? "the loss " + f.tensor : "module `" + f.module + "`";
            if (all_finite && f.inputs_inferred)
                return who + " turned a finite input into " + what + " (its inputs were not saved; the output written just before it, " +
                       f.inputs.front().first + ", was finite)";
            if (all_finite) return who + " turned finite inputs into " + what;
            if (f.inputs.empty()) return (f.role == TensorRole::loss ? "the loss " + f.tensor : "output " + f.tensor + " of module `" + f.module + "`") + " is " + what + " (its inputs were not saved)";
            return who + " has a non-finite input";
        }
        case TensorRole::weight: {
            std::string v = "weight " + f.tensor + " was already " + what + " when " + describe_step(f) + " began";
            if (f.weight && f.weight->last_finite_step) {
                v += "; it was finite at step " + std::to_string(*f.weight->last_finite_step);
                if (!f.weight->gradient.empty())
                    v += ", where its gradient " + f.weight->gradient +
                         (f.weight->gradient_max_abs ? " had max |g| = " + text::format_double(*f.weight->gradient_max_abs) : std::string(" was not read")) +
                         ": the update after that step made it non-finite";
            }
            return v;
        }
        case TensorRole::gradient: return "gradient " + f.tensor + " is the first non-finite gradient in backward order (" + what + "); every forward value was finite";
        case TensorRole::module_input: return "input " + f.tensor + " of module `" + f.module + "` was already " + what + " (the data fed to the model)";
        case TensorRole::other: break;
    }
    return "tensor " + f.tensor + " is the first non-finite value (" + what + ")";
}

template <Store S>
FirstNonFinite explain(Trial<S>& trial, const TensorRoles& roles, const WorkerNonFinite& w) {
    FirstNonFinite f;
    f.step = w.step;
    f.mode = w.mode;
    f.mode_step = w.mode_step;
    f.worker = w.worker;
    std::vector<std::pair<RecordPosition, std::string>> ordered;
    for (const auto& t : w.tensors) {
        const auto pos = record_position(trial, t, w.mode, w.mode_step, w.worker);
        ordered.emplace_back(pos.value_or(RecordPosition{UINT32_MAX, UINT64_MAX}), t);
    }
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [pos, t] : ordered) f.nonfinite_tensors.push_back(t);
    f.tensor = f.nonfinite_tensors.front();
    f.role = roles.role(f.tensor);
    {
        ValueRequest r{f.tensor, w.mode_step, StepQuery{w.mode, w.worker}};
        const auto v = trial.read(std::span<const ValueRequest>(&r, 1));
        if (!v[0].error && v[0].value)
            if (const auto e = first_nonfinite_element(*v[0].value)) {
                f.element = e->index;
                f.value = nonfinite_name(e->value);
            }
        if (f.value.empty()) f.value = "nan";
    }
    if (const auto m = parse_module_tensor_name(f.tensor)) f.module = m->module;
    if (f.role == TensorRole::module_output || f.role == TensorRole::loss) {
        for (int i = 0; i < 64; ++i) {
            const std::string input = f.module.empty() ? std::string() : f.module + "_input_" + std::to_string(i);
            if (input.empty() || !saved_by(trial, input, w.mode, w.mode_step, w.worker)) break;
            const bool nonfinite = std::find(w.tensors.begin(), w.tensors.end(), input) != w.tensors.end();
            f.inputs.emplace_back(input, !nonfinite);
        }
    }
    if ((f.role == TensorRole::module_output || f.role == TensorRole::loss) && f.inputs.empty()) {
        // No input saved (the hook's collections did not ask): in a sequential model the module's
        // input is the module output written just before it in compute order.
        TensorNamesQuery q;
        q.step = w.step;
        const auto own = record_position(trial, f.tensor, w.mode, w.mode_step, w.worker);
        std::optional<std::pair<RecordPosition, std::string>> before;
        if (own)
            for (const auto& n : trial.tensor_names(q)) {
                if (n == f.tensor || roles.role(n) != TensorRole::module_output) continue;
                const auto pos = record_position(trial, n, w.mode, w.mode_step, w.worker);
                if (pos && pos->event_file == own->event_file && *pos < *own && (!before || before->first < *pos)) before.emplace(*pos, n);
            }
        if (before) {
            const bool nonfinite = std::find(w.tensors.begin(), w.tensors.end(), before->second) != w.tensors.end();
            f.inputs.emplace_back(before->second, !nonfinite);
            f.inputs_inferred = true;
        }
    }
    if (f.role == TensorRole::weight) f.weight = weight_history(trial, f.tensor, w.step, w.worker);
    f.verdict = verdict_of(f);
    return f;
}

}  // namespace detail

template <Store S>
Diagnosis diagnose(Trial<S>& trial) {
    Diagnosis d;
    auto scan = scan_nonfinite(trial);
    d.records_checked = scan.records;
    d.steps_checked = scan.steps;
    d.bad_records = scan.bad_records;
    d.bad_record_errors = std::move(scan.bad_record_errors);
    d.partial = scan.partial;
    d.last_complete_step = scan.last_complete_step;
    if (!scan.workers.empty()) {
        const TensorRoles roles(trial);
        for (const auto& w : scan.workers) d.workers.push_back(detail::explain(trial, roles, w));
        d.first_nonfinite = *std::min_element(d.workers.begin(), d.workers.end(),
                                              [](const FirstNonFinite& a, const FirstNonFinite& b) { return a.step < b.step; });
    }
    auto rules = first_rule_findings(trial, d.first_nonfinite ? std::optional(d.first_nonfinite->step) : std::nullopt);
    d.findings = std::move(rules.findings);
    d.rules_checked = std::move(rules.checked);
    d.rules_skipped = std::move(rules.skipped);
    d.rule_notes = std::move(rules.notes);
    return d;
}

}  // namespace smdebug::analysis
