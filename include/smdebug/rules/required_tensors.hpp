#pragma once
// RequiredTensors: the tensors (and steps) a rule needs at one invocation, per trial, fetched
// together before invoke_at_step runs (SEMANTICS.md §10.2), and the values it then reads.
//
// Differences from the reference, all deliberate:
//  - fetched values are kept for the invocation (the rule reads them from here, no second read);
//  - the step list of a tensor is the rule's own copy (the reference extends the caller's list);
//  - a tensor saved at a step with only stored reductions is not an error at fetch time:
//    reduction() then answers from the stored reduction, value() raises TensorUnavailableForStep.
// Trials of any Store type can be mixed; each is fetched through its own Trial<S>.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/reductions.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/rules/step_reader.hpp>

namespace smdebug {

class RequiredTensors {
public:
    // One required tensor of one trial: its steps, then (after fetch) a value or error per step.
    struct Item {
        std::string name;
        std::vector<std::int64_t> steps;
        std::map<std::int64_t, TensorValue> values;
        std::map<std::int64_t, std::exception_ptr> errors;
    };

    // Requires tensor `name` at `steps` of `trial`. With `regex`, every tensor whose name matches
    // is required (none matching is not an error); without it, a tensor the trial does not have
    // raises TensorUnavailable (the step is then skipped by invoke_rule).
    template <Store S>
    void add(Trial<S>& trial, const std::string& name, const std::vector<std::int64_t>& steps, bool regex = false) {
        auto& entry = entry_for(trial);
        if (regex) {
            TensorNamesQuery q;
            q.regex = {name};
            for (const auto& n : trial.tensor_names(q)) add_item(entry, n, steps);
            return;
        }
        if (!trial.has_tensor(name)) throw TensorUnavailable(name);
        add_item(entry, name, steps);
    }
    template <Store S>
    void add(Trial<S>& trial, const std::string& name, std::int64_t step) { add(trial, name, std::vector<std::int64_t>{step}); }

    void clear() noexcept { entries_.clear(); }
    bool empty() const noexcept { return entries_.empty(); }

    // For each trial: waits for the union of its steps (GLOBAL mode), then reads every
    // (tensor, step) in one batch. The first error (in insertion order) propagates, except a
    // value that exists only as stored reductions (see the top of the file).
    void fetch() {
        for (auto& e : entries_) e.fetch(e);
    }

    // The names required from `trial`, in insertion order.
    template <Store S>
    std::vector<std::string> names(const Trial<S>& trial) const {
        std::vector<std::string> out;
        if (const auto* e = find(trial))
            for (const auto& it : e->items) out.push_back(it.name);
        return out;
    }
    template <Store S>
    const std::vector<std::int64_t>& steps(const Trial<S>& trial, const std::string& name) const { return item(trial, name).steps; }

    // The fetched value; TensorUnavailableForStep when it was not saved (or not required).
    template <Store S>
    const TensorValue& value(const Trial<S>& trial, const std::string& name, std::int64_t step) const {
        const auto& it = item(trial, name);
        if (auto v = it.values.find(step); v != it.values.end()) return v->second;
        if (auto e = it.errors.find(step); e != it.errors.end()) std::rethrow_exception(e->second);
        throw TensorUnavailableForStep(name, step);
    }
    template <Store S>
    bool has_value(const Trial<S>& trial, const std::string& name, std::int64_t step) const {
        const auto* e = find(trial);
        if (!e) return false;
        const auto at = e->index.find(name);
        return at != e->index.end() && e->items[at->second].values.contains(step);
    }

    // A reduction of the fetched value, or the stored reduction when only that was saved.
    template <Store S>
    double reduction(Trial<S>& trial, const std::string& name, std::int64_t step, Reduction r, bool abs = false) const {
        const auto& it = item(trial, name);
        if (auto v = it.values.find(step); v != it.values.end()) return compute_reduction(v->second, r, abs);
        return trial.tensor(name).reduction_value(step, reduction_name(r), StepQuery{}, abs);
    }

private:
    struct Entry {
        const void* trial = nullptr;
        std::vector<Item> items;
        // name -> position in items: a rule over every tensor looks each one up several times per
        // step, and scanning the names made that quadratic (50 tensors: ~4,000 compares a step).
        std::unordered_map<std::string, std::size_t> index;
        std::function<void(Entry&)> fetch;
    };

    template <Store S>
    Entry& entry_for(Trial<S>& trial) {
        for (auto& e : entries_)
            if (e.trial == &trial) return e;
        Entry e;
        e.trial = &trial;
        e.fetch = [t = &trial](Entry& self) { fetch_entry(*t, self.items); };
        return entries_.emplace_back(std::move(e));
    }

    static void add_item(Entry& e, const std::string& name, const std::vector<std::int64_t>& steps) {
        const auto [at, added] = e.index.try_emplace(name, e.items.size());
        if (!added) {
            auto& it = e.items[at->second];
            it.steps.insert(it.steps.end(), steps.begin(), steps.end());
            return;
        }
        try {
            e.items.push_back(Item{name, steps, {}, {}});
        } catch (...) {
            e.index.erase(at);
            throw;
        }
    }

    template <Store S>
    static void fetch_entry(Trial<S>& trial, std::vector<Item>& items) {
        std::vector<std::int64_t> all;
        std::vector<StepRead> reads;
        for (const auto& it : items)
            for (auto s : it.steps) {
                all.push_back(s);
                reads.push_back({it.name, s});
            }
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        trial.wait_for_steps(all);
        auto results = read_tensor_values(trial, reads);
        std::size_t k = 0;
        for (auto& it : items)
            for (auto s : it.steps) {
                auto& r = results[k++];
                if (r.value) {
                    it.values.insert_or_assign(s, std::move(*r.value));
                    continue;
                }
                try {
                    std::rethrow_exception(r.error);
                } catch (const TensorUnavailableForStep& e) {
                    if (!e.has_reductions) throw;
                    it.errors.insert_or_assign(s, r.error);  // stored reductions only
                }
            }
    }

    template <Store S>
    const Entry* find(const Trial<S>& trial) const {
        for (const auto& e : entries_)
            if (e.trial == &trial) return &e;
        return nullptr;
    }
    template <Store S>
    const Item& item(const Trial<S>& trial, const std::string& name) const {
        if (const auto* e = find(trial))
            if (const auto at = e->index.find(name); at != e->index.end()) return e->items[at->second];
        throw UsageError("tensor " + name + " was not declared in set_required_tensors for trial " + trial.name());
    }

    std::vector<Entry> entries_;
};

}  // namespace smdebug
