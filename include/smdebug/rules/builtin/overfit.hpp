#pragma once
// Overfit (definition from the AWS "Overfit" rule: compares validation and training losses; when
// the ratio of (mean validation loss - mean training loss) to the mean training loss exceeds
// ratio_threshold for `patience` steps, the model is overfitting).
// Losses: see rules/builtin/loss_tensors.hpp (`tensor_regex`). From global step `start_step` on, the
// rule follows the run's phases per loss tensor: consecutive TRAIN steps form a training phase,
// consecutive EVAL steps an evaluation phase. At each EVAL step it compares the mean of the current
// evaluation phase's losses with the mean of the training phase before it:
// ratio = (mean_eval - mean_train) / mean_train. It fires when the ratio has exceeded
// `ratio_threshold` at `patience` consecutive EVAL steps.
#include <map>

#include <smdebug/rules/builtin/loss_tensors.hpp>

namespace smdebug {

struct OverfitParams {
    static constexpr std::string_view rule_name = "Overfit";
    static constexpr std::string_view fires_when = "(mean validation loss - mean training loss) / mean training loss > ratio_threshold at patience EVAL steps in a row";

    std::vector<std::string> tensor_regex = rule_param_default(&OverfitParams::tensor_regex);
    std::int64_t start_step = rule_param_default(&OverfitParams::start_step);
    std::int64_t patience = rule_param_default(&OverfitParams::patience);
    double ratio_threshold = rule_param_default(&OverfitParams::ratio_threshold);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&OverfitParams::tensor_regex, "tensor_regex", "", "loss tensors (default: collection losses)"),
            rule_param(&OverfitParams::start_step, "start_step", "0", "first global step compared"),
            rule_param(&OverfitParams::patience, "patience", "1", "EVAL steps in a row above the threshold", 1),
            rule_param(&OverfitParams::ratio_threshold, "ratio_threshold", "0.1", "largest allowed relative gap")};
    }
    static OverfitParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<OverfitParams>(rule, p); }
};

template <Store S>
class Overfit : public RuntimeRule<S> {
public:
    using Params = OverfitParams;
    explicit Overfit(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "Overfit"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_.clear();
        if (step < p_.start_step) return;
        names_ = losses_.at_step(this->base_trial(), step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        const auto mode = this->base_trial().mode(step).value_or(Mode::GLOBAL);
        if (mode != Mode::TRAIN && mode != Mode::EVAL) return false;
        bool fire = false;
        for (const auto& n : names_) {
            const auto* fetched = this->fetched_value(n, step);
            if (!fetched) continue;  // unreadable here: skipped alone
            const auto v = detail::scalar_value(*fetched);
            if (!v) continue;
            auto& st = state_[n];
            if (mode == Mode::TRAIN) {
                if (st.last == Mode::EVAL) st.train.clear();
                st.train.push_back(*v);
            } else {
                if (st.last == Mode::TRAIN) st.eval.clear();
                st.eval.push_back(*v);
                if (!st.train.empty()) {
                    const double mt = mean(st.train), me = mean(st.eval);
                    const double ratio = (me - mt) / mt;
                    st.exceeded = ratio > p_.ratio_threshold ? st.exceeded + 1 : 0;
                    if (st.exceeded >= p_.patience)  // every tensor that fires is reported
                        fire = this->fired("tensor " + n + ": mean validation loss " + text::format_double(me) + " vs training " +
                                           text::format_double(mt) + ", ratio " + text::format_double(ratio) + " > " +
                                           text::format_double(p_.ratio_threshold));
                }
            }
            st.last = mode;
        }
        return fire;
    }

private:
    struct State {
        std::vector<double> train, eval;
        Mode last = Mode::GLOBAL;
        std::int64_t exceeded = 0;
    };
    static double mean(const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return s / static_cast<double>(v.size());
    }
    Params p_;
    detail::LossTensors losses_{p_.tensor_regex};
    std::vector<std::string> names_;
    std::map<std::string, State> state_;
};

}  // namespace smdebug
