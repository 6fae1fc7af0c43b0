#pragma once
// Overtraining (definition from the AWS "Overtraining" rule: once training and validation loss no
// longer improve, further training only overfits; patience_train / patience_validation steps
// without an improvement of at least `delta` mean the model is overtrained).
// Losses: see rules/builtin/loss_tensors.hpp (`tensor_regex`). Per loss tensor and mode (TRAIN,
// EVAL), the rule keeps the best (lowest) loss so far; a value lower than best - delta is an
// improvement and becomes the best. It fires when a tensor has gone `patience_train` TRAIN steps,
// or `patience_validation` EVAL steps, of its own without an improvement.
#include <map>

#include <smdebug/rules/builtin/loss_tensors.hpp>

namespace smdebug {

struct OvertrainingParams {
    std::vector<std::string> tensor_regex;
    std::int64_t patience_train = 5;
    std::int64_t patience_validation = 10;
    double delta = 0.01;

    static OvertrainingParams parse(const std::string& rule, RuleParams& p) {
        OvertrainingParams v;
        v.tensor_regex = p.list(rule, "tensor_regex");
        v.patience_train = p.integer(rule, "patience_train", v.patience_train, 1);
        v.patience_validation = p.integer(rule, "patience_validation", v.patience_validation, 1);
        v.delta = p.number(rule, "delta", v.delta);
        return v;
    }
};

template <Store S>
class Overtraining : public RuntimeRule<S> {
public:
    using Params = OvertrainingParams;
    explicit Overtraining(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "Overtraining"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = detail::loss_tensors_at_step(this->base_trial(), step, p_.tensor_regex);
        for (const auto& n : names_) this->req_.add(this->base_trial(), n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        const auto mode = this->base_trial().mode(step).value_or(Mode::GLOBAL);
        if (mode != Mode::TRAIN && mode != Mode::EVAL) return false;
        const std::int64_t patience = mode == Mode::TRAIN ? p_.patience_train : p_.patience_validation;
        bool fire = false;
        for (const auto& n : names_) {
            if (!this->req_.has_value(this->base_trial(), n, step)) continue;  // unreadable here: skipped alone
            const auto v = detail::scalar_value(this->req_.value(this->base_trial(), n, step));
            if (!v) continue;
            auto& st = state_[{n, mode}];
            if (!st.best || *v < *st.best - p_.delta) {
                st.best = *v;
                st.since = 0;
            } else if (++st.since >= patience && !fire) {
                fire = this->fired("tensor " + n + ": no " + (mode == Mode::TRAIN ? "training" : "validation") + " improvement over " +
                                   std::to_string(st.since) + " steps (best " + text::format_double(*st.best) + ", delta " +
                                   text::format_double(p_.delta) + ")");
            }
        }
        return fire;
    }

private:
    struct State {
        std::optional<double> best;
        std::int64_t since = 0;
    };
    Params p_;
    std::vector<std::string> names_;
    std::map<std::pair<std::string, Mode>, State> state_;
};

}  // namespace smdebug
