#pragma once
// RuleSet: several rules over one base trial, run together step by step with one read of each
// step (what `smdebug monitor` drives).
//
// run_at_step(step, extra) is invoke() (rules/invoke.hpp) for every rule at once, at a step the
// caller has waited for (base_trial().wait_for_steps({step}), which raises StepUnavailable /
// NoMoreData as invoke does; the caller decides then which extra values it wants):
//   1. with automatic refresh off on the base trial: every rule declares its required tensors
//      (set_required_tensors); the (tensor, step) pairs of all rules on the base trial at `step`
//      or before, and the caller's `extra` reads (any worker), are read together — one pass over
//      each event file — and each rule's fetch takes its values from that read (pairs of other
//      trials, or of later steps, are read by the rule's own fetch);
//   2. each rule's invoke_at_step runs; a firing rule runs its own actions (as invoke does) and is
//      reported in the result (RuleFiring as invoke_rule reports it: finding, tensor, mode, trial).
// A rule that cannot run at the step (TensorUnavailable, TensorUnavailableForStep or
// StepUnavailable from declaring, fetching or evaluating) is skipped for that step alone, as
// invoke_rule skips it; every other error propagates.
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/query/tensor.hpp>
#include <smdebug/query/trial.hpp>
#include <smdebug/rules/builtin/common.hpp>
#include <smdebug/rules/invoke.hpp>

namespace smdebug {

template <Store S>
class RuleSet {
public:
    explicit RuleSet(Trial<S>& base) : base_(&base) {}

    // Adds a rule whose base trial is this set's trial (UsageError otherwise).
    void add(std::unique_ptr<RuntimeRule<S>> rule) {
        if (!rule) throw UsageError("RuleSet::add: no rule");
        if (&rule->base_trial() != base_) throw UsageError("RuleSet::add: rule " + rule->name() + " reads another trial than the set's");
        rules_.push_back(std::move(rule));
    }
    std::size_t size() const noexcept { return rules_.size(); }
    RuntimeRule<S>& operator[](std::size_t i) { return *rules_.at(i); }
    Trial<S>& base_trial() noexcept { return *base_; }

    // A value read with the rules' tensors: `tensor` at the step, under `query` (mode is ignored:
    // the step is global).
    struct ExtraRead {
        std::string tensor;
        std::optional<std::string> worker;  // default: the first worker by name
    };
    struct StepResult {
        std::vector<std::optional<RuleFiring>> fired;  // per rule, in the order added: set when it fired
        std::vector<ValueResult> extra;                // per extra read: the value or value()'s error
    };

    StepResult run_at_step(std::int64_t step, std::span<const ExtraRead> extra = {}) {
        auto scope = no_refresh(*base_);
        StepResult out;
        out.fired.resize(rules_.size());
        std::vector<bool> ready(rules_.size(), false);
        for (std::size_t i = 0; i < rules_.size(); ++i) {
            auto& req = rules_[i]->required_tensors();
            req.clear();
            req.use_prefetched(*base_, nullptr);
            ready[i] = skipping([&] { rules_[i]->set_required_tensors(step); });
        }

        // The one read: every rule's pairs on the base trial up to `step`, then the extra reads.
        std::vector<ValueRequest> requests;
        std::map<std::pair<std::string, std::int64_t>, std::size_t> rule_items;  // (tensor, step) -> request
        for (std::size_t i = 0; i < rules_.size(); ++i) {
            if (!ready[i]) continue;
            const auto& req = rules_[i]->required_tensors();
            for (const auto& name : req.names(*base_))
                for (const auto s : req.steps(*base_, name)) {
                    if (s > step) continue;
                    if (rule_items.emplace(std::pair<std::string, std::int64_t>(name, s), requests.size()).second)
                        requests.push_back({name, s});
                }
        }
        const std::size_t first_extra = requests.size();
        for (const auto& e : extra) requests.push_back({e.tensor, step, StepQuery{Mode::GLOBAL, e.worker}});
        auto results = base_->read(requests);
        typename RequiredTensors::PrefetchedValues prefetched;
        for (const auto& [key, k] : rule_items) prefetched.emplace(key, std::move(results[k]));
        out.extra.assign(std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(first_extra)),
                         std::make_move_iterator(results.end()));

        for (std::size_t i = 0; i < rules_.size(); ++i) {
            if (!ready[i]) continue;
            auto& rule = *rules_[i];
            auto& req = rule.required_tensors();
            req.use_prefetched(*base_, &prefetched);
            bool fired = false;
            skipping([&] {
                auto others = no_refresh(rule.other_trials());
                req.fetch();
                rule.clear_findings();
                fired = rule.invoke_at_step(step);
            });
            req.use_prefetched(*base_, nullptr);
            if (!fired) continue;
            RuleFiring firing = detail::firing_of(rule, rule.name(), step);
            rule.actions().invoke(firing);
            out.fired[i] = std::move(firing);
        }
        return out;
    }

private:
    // Runs f; false when it raised what makes invoke_rule skip a step.
    template <class F>
    static bool skipping(F&& f) {
        try {
            f();
            return true;
        } catch (const TensorUnavailableForStep&) {
        } catch (const StepUnavailable&) {
        } catch (const TensorUnavailable&) {
        }
        return false;
    }

    Trial<S>* base_;
    std::vector<std::unique_ptr<RuntimeRule<S>>> rules_;
};

}  // namespace smdebug
