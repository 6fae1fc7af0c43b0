#pragma once
// LossNotDecreasing (docs/rules.md "Built-in rules"; AWS "LossNotDecreasing" rule). The check
// below is the reading of the documentation that satisfies both reference tests (an inference,
// not reference code; docs/rules.md "Built-in rules" explains it):
//  - loss tensors: collection `losses` when `use_losses_collection` and the trial has it, plus
//    `collection_names` and `tensor_regex`; when all of that selects nothing, every tensor whose
//    name contains "loss" (any case) — also an inference, matching the reference tests' data;
//  - mode: `mode` when given, else the first of EVAL, TRAIN, GLOBAL in which the tensor has steps;
//  - a loss is checked at a saved step s (mode step m) when a saved step p exists with mode step
//    <= m - num_steps, and (after the first check) m >= the last checked mode step + num_steps;
//    p is the newest such step;
//  - it fires when loss(s) >= loss(p) * (1 + diff_percent / 100): the loss did not decrease by
//    more than diff_percent percent (a larger diff_percent makes the rule less sensitive).
// The rule keeps the last checked step per tensor across invocations (re-running it over later
// steps continues from there).
// Departures from the reference (docs/deviations.md D27): a loss tensor that is NaN or +-inf at a
// step it is saved at (any mode) fires there ("loss is nan"); the comparison above would be false
// and the rule silent. notes() says when a loss's mode has too few saved steps (num_steps + 1 or
// fewer) for any comparison, so that "did not fire" is not read as "the loss decreased".
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <smdebug/rules/builtin/common.hpp>

namespace smdebug {

struct LossNotDecreasingParams {
    static constexpr std::string_view rule_name = "LossNotDecreasing";
    static constexpr std::string_view fires_when = "a loss did not decrease by more than diff_percent over num_steps";

    std::vector<std::string> collection_names = rule_param_default(&LossNotDecreasingParams::collection_names);
    std::vector<std::string> tensor_regex = rule_param_default(&LossNotDecreasingParams::tensor_regex);
    bool use_losses_collection = rule_param_default(&LossNotDecreasingParams::use_losses_collection);
    std::int64_t num_steps = rule_param_default(&LossNotDecreasingParams::num_steps);
    double diff_percent = rule_param_default(&LossNotDecreasingParams::diff_percent);
    std::optional<Mode> mode = rule_param_default(&LossNotDecreasingParams::mode);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&LossNotDecreasingParams::collection_names, "collection_names", "", "collections of loss tensors"),
            rule_param(&LossNotDecreasingParams::tensor_regex, "tensor_regex", "", "patterns of loss tensors"),
            rule_param(&LossNotDecreasingParams::use_losses_collection, "use_losses_collection", "true", "also use collection `losses`"),
            rule_param(&LossNotDecreasingParams::num_steps, "num_steps", "10", "mode steps between checks", 1),
            rule_param(&LossNotDecreasingParams::diff_percent, "diff_percent", "0", "required decrease in percent (0-100)"),
            rule_param(&LossNotDecreasingParams::mode, "mode", "", "TRAIN, EVAL, PREDICT or GLOBAL (default: EVAL, then TRAIN, then GLOBAL)")};
    }
    static LossNotDecreasingParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<LossNotDecreasingParams>(rule, p); }
};

template <Store S>
class LossNotDecreasing : public RuntimeRule<S> {
public:
    using Params = LossNotDecreasingParams;
    explicit LossNotDecreasing(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "LossNotDecreasing"), p_(std::move(p)) {
        if (p_.diff_percent < 0 || p_.diff_percent > 100)
            throw InvalidRuleParameter("LossNotDecreasing", "diff_percent", text::format_double(p_.diff_percent), "must be in [0, 100]");
    }

    void set_required_tensors(std::int64_t step) override {
        auto& t = this->base_trial();
        checks_.clear();
        finite_checks_.clear();
        const auto mm = t.mode_modestep(step);
        if (!mm) return;
        for (const auto& n : loss_tensors(t, step)) {
            auto tensor = t.tensor(n);
            const Mode m = mode_for(n, tensor);
            std::vector<std::int64_t> steps{step};  // every saved loss is checked for NaN and +-inf (D27)
            finite_checks_.push_back(n);
            const std::int64_t ms = m == Mode::GLOBAL ? step : (mm->first == m ? mm->second : -1);
            auto& state = state_[n];
            if (ms >= 0 && !(state.last_checked && ms < *state.last_checked + p_.num_steps)) {
                const auto saved = tensor.steps(m);
                auto it = std::upper_bound(saved.begin(), saved.end(), ms - p_.num_steps);
                if (it != saved.begin()) {
                    const std::int64_t prev_ms = *std::prev(it);
                    const auto prev_g = m == Mode::GLOBAL ? std::optional(prev_ms) : t.global_step(m, prev_ms);
                    if (prev_g) {
                        steps.insert(steps.begin(), *prev_g);
                        checks_.push_back({n, *prev_g, ms});
                    }
                }
            }
            this->require(n, steps);
        }
    }
    std::vector<std::string> notes() const override {
        std::vector<std::string> out;
        for (const auto& [n, st] : state_) {
            if (st.last_checked || !st.mode || static_cast<std::int64_t>(st.saved_in_mode) > p_.num_steps) continue;
            out.push_back("tensor " + n + ": mode " + std::string(mode_name(*st.mode)) + " has " + std::to_string(st.saved_in_mode) +
                          " saved step" + (st.saved_in_mode == 1 ? "" : "s") + ", too few to compare losses num_steps = " +
                          std::to_string(p_.num_steps) + " apart: never compared (mode=TRAIN, or a smaller num_steps, compares others)");
        }
        return out;
    }
    bool invoke_at_step(std::int64_t step) override {
        bool fire = false;
        for (const auto& n : finite_checks_) {
            const auto* v = this->fetched_value(n, step);
            if (!v) continue;
            const auto d = detail::as_doubles(*v);
            if (d.size() != 1 || std::isfinite(d[0])) continue;
            const auto mm = this->base_trial().mode_modestep(step);
            fire = this->fired("tensor " + n + ": loss is " + text::format_double(d[0]) + " at step " + std::to_string(step) +
                               (mm ? " (" + std::string(mode_name(mm->first)) + " step " + std::to_string(mm->second) + ")" : std::string()));
        }
        for (const auto& c : checks_) {
            const double now = scalar(this->value(c.tensor, step));
            const double before = scalar(this->value(c.tensor, c.prev_step));
            state_[c.tensor].last_checked = c.mode_step;
            if (now >= before * (1.0 + p_.diff_percent / 100.0)) {  // every tensor that fires is reported
                fire = this->fired("tensor " + c.tensor + ": loss " + text::format_double(now) + " at step " + std::to_string(step) +
                                   " vs " + text::format_double(before) + " at step " + std::to_string(c.prev_step));
            }
        }
        return fire;
    }

private:
    struct Check {
        std::string tensor;
        std::int64_t prev_step;
        std::int64_t mode_step;
    };
    struct State {
        std::optional<std::int64_t> last_checked;
        std::optional<Mode> mode;
        std::size_t saved_in_mode = 0;  // saved steps of its mode, as of the last step asked (notes())
    };

    std::vector<std::string> loss_tensors(Trial<S>& t, std::int64_t step) {
        if (!selection_) {  // the trial's collections are known once it is open
            std::vector<std::string> cols = p_.collection_names;
            if (p_.use_losses_collection && t.collections().contains("losses")) cols.push_back("losses");
            selection_.emplace(std::move(cols), p_.tensor_regex);
        }
        auto names = selection_->at_step(t, step);
        if (names.empty() && p_.collection_names.empty() && p_.tensor_regex.empty())
            for (auto& n : detail::all_tensors_at_step(t, step))
                if (text::to_lower(n).find("loss") != std::string::npos) names.push_back(std::move(n));
        return names;
    }
    Mode mode_for(const std::string& n, const Tensor<S>& tensor) {
        auto& st = state_[n];
        const Mode m = chosen_mode(st, tensor);
        if (!st.mode) st.mode = m;
        if (!st.last_checked) st.saved_in_mode = tensor.steps(m).size();  // few until the first comparison
        if (!p_.mode && m == Mode::GLOBAL) st.mode.reset();  // not remembered: EVAL or TRAIN steps may still come
        return m;
    }
    Mode chosen_mode(State& st, const Tensor<S>& tensor) {
        if (p_.mode) return *p_.mode;
        if (st.mode) return *st.mode;
        for (Mode m : {Mode::EVAL, Mode::TRAIN})
            if (!tensor.steps(m).empty()) return *(st.mode = m);
        return Mode::GLOBAL;
    }
    static double scalar(const TensorValue& v) {
        const auto d = detail::as_doubles(v);
        if (d.size() != 1) throw SMDebugValueError("LossNotDecreasing inspects scalar tensors only; got " + std::to_string(d.size()) + " elements");
        return d[0];
    }

    Params p_;
    std::optional<detail::TensorSelection> selection_;
    std::vector<Check> checks_;
    std::vector<std::string> finite_checks_;  // loss tensors saved at the step, checked for NaN and +-inf
    std::map<std::string, State> state_;
};

}  // namespace smdebug
