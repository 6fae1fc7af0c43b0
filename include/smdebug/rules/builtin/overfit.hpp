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
    std::vector<std::string> tensor_regex;
    std::int64_t start_step = 0;
    std::int64_t patience = 1;
    double ratio_threshold = 0.1;

    static OverfitParams parse(const std::string& rule, RuleParams& p) {
        OverfitParams v;
        v.tensor_regex = p.list(rule, "tensor_regex");
        v.start_step = p.integer(rule, "start_step", v.start_step, 0);
        v.patience = p.integer(rule, "patience", v.patience, 1);
        v.ratio_threshold = p.number(rule, "ratio_threshold", v.ratio_threshold);
        return v;
    }
};

template <Store S>
class Overfit : public RuntimeRule<S> {
public:
    using Params = OverfitParams;
    explicit Overfit(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "Overfit"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_.clear();
        if (step < p_.start_step) return;
        names_ = detail::loss_tensors_at_step(this->base_trial(), step, p_.tensor_regex);
        for (const auto& n : names_) this->req_.add(this->base_trial(), n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        const auto mode = this->base_trial().mode(step).value_or(Mode::GLOBAL);
        if (mode != Mode::TRAIN && mode != Mode::EVAL) return false;
        bool fire = false;
        for (const auto& n : names_) {
            if (!this->req_.has_value(this->base_trial(), n, step)) continue;  // unreadable here: skipped alone
            const auto v = detail::scalar_value(this->req_.value(this->base_trial(), n, step));
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
                    if (!fire && st.exceeded >= p_.patience)
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
    std::vector<std::string> names_;
    std::map<std::string, State> state_;
};

}  // namespace smdebug
