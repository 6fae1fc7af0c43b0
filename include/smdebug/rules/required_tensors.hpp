#pragma once
// RequiredTensors: the tensors (and steps) a rule needs at one invocation, per trial, fetched
// together before invoke_at_step runs (docs/rules.md "The rule contract"), and the values it then reads.
//
// Differences from the reference, all deliberate:
//  - fetched values are kept for the invocation (the rule reads them from here, no second read);
//  - the step list of a tensor is the rule's own copy (the reference extends the caller's list);
//  - a tensor saved at a step with only stored reductions is not an error at fetch time:
//    reduction() then answers from the stored reduction, value() raises TensorUnavailableForStep;
//  - with skip_unavailable (the built-in rules), no tensor unavailable at a step is an error at
//    fetch time: readable() tells which were read, and a rule looping over tensors skips the others
//    alone instead of losing the whole step (a shape-only tensor must not hide a NaN beside it).
// Trials of any Store type can be mixed; each is fetched through its own Trial<S>.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/reductions.hpp>
#include <smdebug/query/detail/fwd.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/query/trial.hpp>

namespace smdebug {

class RequiredTensors {
public:
    // Whether a tensor unavailable at a required step is kept as that tensor's error (readable()
    // false, value() rethrows it) instead of failing the fetch, which makes invoke skip the step
    // as the reference does. The built-in rules set it.
    void skip_unavailable(bool on) noexcept { skip_unavailable_ = on; }

    // Values read before fetch() by whoever runs the rule, by (tensor, step): several rules run at
    // one step share one read (rules/rule_set.hpp). fetch() takes a pair of `trial` found here
    // from here (without waiting for its step again) and reads the others. The map must outlive
    // the fetch; null (the default) reads everything.
    using PrefetchedValues = std::map<std::pair<std::string, std::int64_t>, ValueResult>;
    template <Store S>
    void use_prefetched(Trial<S>& trial, const PrefetchedValues* values) {
        entry_for(trial).prefetched = values;
    }

    // One required tensor of one trial: its steps, then (after fetch) a value or error per step,
    // each list sorted by step.
    struct Item {
        std::string name;
        std::vector<std::int64_t> steps;
        std::vector<std::pair<std::int64_t, std::shared_ptr<const TensorValue>>> values;
        std::vector<std::pair<std::int64_t, std::exception_ptr>> errors;
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
        add_named(trial, entry, name, steps);
    }
    template <Store S>
    void add(Trial<S>& trial, const std::string& name, std::int64_t step) {
        add_named(trial, entry_for(trial), name, std::span<const std::int64_t>(&step, 1));
    }

    // Forgets every requirement and value. (The items stay allocated for the next step, which
    // usually requires the same tensors again: invoke_rule clears and refills once per step.)
    void clear() noexcept {
        for (auto& e : entries_) {
            for (auto i : e.active) {
                auto& it = e.items[i];
                it.steps.clear();
                it.values.clear();
                it.errors.clear();
                e.required[i] = false;
            }
            e.active.clear();
        }
    }
    bool empty() const noexcept {
        return std::all_of(entries_.begin(), entries_.end(), [](const Entry& e) { return e.active.empty(); });
    }

    // For each trial: waits for the union of its steps (GLOBAL mode), then reads every
    // (tensor, step) in one batch. The first error (in insertion order) propagates, except a
    // value that exists only as stored reductions (see the top of the file).
    void fetch() {
        for (auto& e : entries_)
            if (!e.active.empty()) e.fetch(e, skip_unavailable_);
    }

    // The names required from `trial`, in insertion order.
    template <Store S>
    std::vector<std::string> names(const Trial<S>& trial) const {
        std::vector<std::string> out;
        if (const auto* e = find(trial))
            for (auto i : e->active) out.push_back(e->items[i].name);
        return out;
    }
    template <Store S>
    const std::vector<std::int64_t>& steps(const Trial<S>& trial, const std::string& name) const { return item(trial, name).steps; }

    // The fetched value; TensorUnavailableForStep when it was not saved (or not required).
    template <Store S>
    const TensorValue& value(const Trial<S>& trial, const std::string& name, std::int64_t step) const {
        const auto& it = item(trial, name);
        if (const auto* v = at_step(it.values, step)) return **v;
        if (const auto* e = at_step(it.errors, step)) std::rethrow_exception(*e);
        throw TensorUnavailableForStep(name, step);
    }
    template <Store S>
    bool has_value(const Trial<S>& trial, const std::string& name, std::int64_t step) const {
        return fetched_value(trial, name, step) != nullptr;
    }
    // The fetched value, or null where has_value() is false: both in one lookup.
    template <Store S>
    const TensorValue* fetched_value(const Trial<S>& trial, const std::string& name, std::int64_t step) const {
        const auto* e = find(trial);
        if (!e) return nullptr;
        const auto at = e->index.find(name);
        if (at == e->index.end() || !e->required[at->second]) return nullptr;
        const auto* v = at_step(e->items[at->second].values, step);
        return v ? v->get() : nullptr;
    }

    // Whether value() (fetched) or reduction() (fetched or stored) answers for `name` at `step`.
    template <Store S>
    bool readable(const Trial<S>& trial, const std::string& name, std::int64_t step) const {
        const auto* e = find(trial);
        if (!e) return false;
        const auto at = e->index.find(name);
        if (at == e->index.end() || !e->required[at->second]) return false;
        const auto& it = e->items[at->second];
        if (at_step(it.values, step)) return true;
        const auto* error = at_step(it.errors, step);
        if (!error) return false;
        try {
            std::rethrow_exception(*error);
        } catch (const TensorUnavailableForStep& ex) {
            return ex.has_reductions;
        } catch (...) {
            return false;
        }
    }

    // A reduction of the fetched value, or the stored reduction when only that was saved.
    template <Store S>
    double reduction(Trial<S>& trial, const std::string& name, std::int64_t step, Reduction r, bool abs = false) const {
        const auto& it = item(trial, name);
        if (const auto* v = at_step(it.values, step)) return compute_reduction(**v, r, abs);
        return trial.tensor(name).reduction_value(step, reduction_name(r), StepQuery{}, abs);
    }

private:
    struct Entry {
        const void* trial = nullptr;
        const void* store_type = nullptr;  // the trial's Store type (the fetch function is typed)
        std::vector<Item> items;           // every tensor required since the entry was made
        std::vector<bool> required;        // ... whether it is required now
        // ... the tensor of the trial it is, once looked up (a trial never loses a tensor, so the
        // name is looked up in the trial once, not at every step); its Store type is store_type's
        std::vector<const detail::TensorData*> data;
        std::vector<std::size_t> active;   // the ones required now, in insertion order
        // name -> position in items: a rule over every tensor looks each one up several times per
        // step, and scanning the names made that quadratic (50 tensors: ~4,000 compares a step).
        std::unordered_map<std::string, std::size_t> index;
        std::function<void(Entry&, bool skip_unavailable)> fetch;
        const PrefetchedValues* prefetched = nullptr;  // use_prefetched
    };

    template <class T>
    static const T* at_step(const std::vector<std::pair<std::int64_t, T>>& list, std::int64_t step) noexcept {
        const auto it = std::lower_bound(list.begin(), list.end(), step, [](const auto& p, std::int64_t s) { return p.first < s; });
        return it != list.end() && it->first == step ? &it->second : nullptr;
    }

    template <Store S>
    static const void* store_type_tag() noexcept {
        static const char tag = 0;
        return &tag;
    }

    template <Store S>
    Entry& entry_for(Trial<S>& trial) {
        for (auto& e : entries_)
            if (e.trial == &trial && e.store_type == store_type_tag<S>()) return e;
        Entry e;
        e.trial = &trial;
        e.store_type = store_type_tag<S>();
        e.fetch = [t = &trial, scratch = FetchScratch<S>{}](Entry& self, bool skip) mutable { fetch_entry(*t, self, scratch, skip); };
        return entries_.emplace_back(std::move(e));
    }

    static void add_item(Entry& e, const std::string& name, std::span<const std::int64_t> steps) {
        auto at = e.index.find(name);
        if (at == e.index.end()) {
            e.items.push_back(Item{name, {}, {}, {}});
            try {
                e.required.push_back(false);
                e.data.push_back(nullptr);
                at = e.index.emplace(name, e.items.size() - 1).first;
            } catch (...) {
                e.items.pop_back();
                e.required.resize(e.items.size());
                e.data.resize(e.items.size());
                throw;
            }
        }
        activate(e, at->second, steps);
    }
    static void activate(Entry& e, std::size_t i, std::span<const std::int64_t> steps) {
        if (!e.required[i]) {
            e.active.reserve(e.active.size() + 1);  // (cannot throw after the flag is set)
            e.required[i] = true;
            e.active.push_back(i);
        }
        auto& it = e.items[i];
        it.steps.insert(it.steps.end(), steps.begin(), steps.end());
    }
    // A tensor named without a regex: one the trial does not have raises TensorUnavailable.
    template <Store S>
    static void add_named(Trial<S>& trial, Entry& e, const std::string& name, std::span<const std::int64_t> steps) {
        if (const auto at = e.index.find(name); at != e.index.end() && e.data[at->second]) {
            activate(e, at->second, steps);  // found in the trial before
            return;
        }
        if (!trial.has_tensor(name)) throw TensorUnavailable(name);
        add_item(e, name, steps);
    }

    // fetch_entry's lists, kept from one step to the next (a rule fetches at every step).
    template <Store S>
    struct FetchScratch {
        std::vector<std::int64_t> all;
        std::vector<Tensor<S>> tensors;   // of the items read
        std::vector<ValueRequest> reads;  // (without names: tensor_of says whose)
        std::vector<std::size_t> tensor_of;
        std::vector<ValueResult> results;
        std::vector<std::size_t> unread;  // positions in `results` still to read
        void clear() noexcept {
            all.clear();
            tensors.clear();
            reads.clear();
            tensor_of.clear();
            results.clear();
            unread.clear();
        }
    };

    template <Store S>
    static void fetch_entry(Trial<S>& trial, Entry& e, FetchScratch<S>& scratch, bool skip_unavailable) {
        scratch.clear();
        auto& [all, tensors, reads, tensor_of, results, unread] = scratch;
        for (auto i : e.active) {
            auto& it = e.items[i];
            it.values.clear();
            it.errors.clear();
            std::size_t tensor = tensors.size();  // its position in `tensors`, once it has a read
            for (auto s : it.steps) {
                const PrefetchedValues::const_iterator found =
                    e.prefetched ? e.prefetched->find(std::pair<std::string, std::int64_t>(it.name, s)) : PrefetchedValues::const_iterator{};
                if (e.prefetched && found != e.prefetched->end()) {
                    results.push_back(found->second);
                    continue;
                }
                if (tensor == tensors.size()) {
                    if (!e.data[i]) e.data[i] = trial.find_tensor_data(it.name);
                    if (!e.data[i]) throw TensorUnavailable(it.name);
                    tensors.emplace_back(trial, *e.data[i]);
                }
                all.push_back(s);
                reads.push_back({{}, s});
                tensor_of.push_back(tensor);
                unread.push_back(results.size());
                results.emplace_back();
            }
        }
        if (!reads.empty()) {
            std::sort(all.begin(), all.end());
            all.erase(std::unique(all.begin(), all.end()), all.end());
            trial.wait_for_steps(all);
            // One read of every pair (Trial::read: errors per pair); a walk reads the next steps ahead.
            auto read = trial.read(std::span<const Tensor<S>>(tensors), reads, tensor_of, ReadOptions{.read_ahead = true});
            for (std::size_t k = 0; k < read.size(); ++k) results[unread[k]] = std::move(read[k]);
        }
        std::size_t k = 0;
        for (auto i : e.active) {
            auto& it = e.items[i];
            for (auto s : it.steps) {
                auto& r = results[k++];
                if (r.value) {
                    it.values.emplace_back(s, std::move(r.value));
                    continue;
                }
                try {
                    std::rethrow_exception(r.error);
                } catch (const TensorUnavailableForStep& ex) {
                    if (!ex.has_reductions && !skip_unavailable) throw;
                    it.errors.emplace_back(s, r.error);  // stored reductions only, or skipped alone
                }
            }
            sort_by_step(it.values);
            sort_by_step(it.errors);
        }
    }
    template <class T>
    static void sort_by_step(std::vector<std::pair<std::int64_t, T>>& list) {
        if (list.size() < 2) return;
        std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        list.erase(std::unique(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), list.end());
    }

    template <Store S>
    const Entry* find(const Trial<S>& trial) const {
        for (const auto& e : entries_)
            if (e.trial == &trial && e.store_type == store_type_tag<S>()) return &e;
        return nullptr;
    }
    template <Store S>
    const Item& item(const Trial<S>& trial, const std::string& name) const {
        if (const auto* e = find(trial))
            if (const auto at = e->index.find(name); at != e->index.end() && e->required[at->second]) return e->items[at->second];
        throw UsageError("tensor " + name + " was not declared in set_required_tensors for trial " + trial.name());
    }

    std::vector<Entry> entries_;
    bool skip_unavailable_ = false;
};

}  // namespace smdebug
