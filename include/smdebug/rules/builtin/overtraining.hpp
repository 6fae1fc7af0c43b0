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
    static constexpr std::string_view rule_name = "Overtraining";
    static constexpr std::string_view fires_when = "a training (validation) loss has not improved by delta for patience_train (patience_validation) steps";

    std::vector<std::string> tensor_regex = rule_param_default(&OvertrainingParams::tensor_regex);
    std::int64_t patience_train = rule_param_default(&OvertrainingParams::patience_train);
    std::int64_t patience_validation = rule_param_default(&OvertrainingParams::patience_validation);
    double delta = rule_param_default(&OvertrainingParams::delta);

    static constexpr auto parameters() {
        return std::tuple{
            rule_param(&OvertrainingParams::tensor_regex, "tensor_regex", "", "loss tensors (default: collection losses)"),
            rule_param(&OvertrainingParams::patience_train, "patience_train", "5", "TRAIN steps without improvement", 1),
            rule_param(&OvertrainingParams::patience_validation, "patience_validation", "10", "EVAL steps without improvement", 1),
            rule_param(&OvertrainingParams::delta, "delta", "0.01", "smallest improvement")};
    }
    static OvertrainingParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<OvertrainingParams>(rule, p); }
};

template <Store S>
class Overtraining : public RuntimeRule<S> {
public:
    using Params = OvertrainingParams;
    explicit Overtraining(Trial<S>& base, Params p = {}) : RuntimeRule<S>(base, "Overtraining"), p_(std::move(p)) {}

    void set_required_tensors(std::int64_t step) override {
        names_ = losses_.at_step(this->base_trial(), step);
        for (const auto& n : names_) this->require(n, step);
    }
    bool invoke_at_step(std::int64_t step) override {
        const auto mode = this->base_trial().mode(step).value_or(Mode::GLOBAL);
        if (mode != Mode::TRAIN && mode != Mode::EVAL) return false;
        const std::int64_t patience = mode == Mode::TRAIN ? p_.patience_train : p_.patience_validation;
        bool fire = false;
        for (const auto& n : names_) {
            const auto* fetched = this->fetched_value(n, step);
            if (!fetched) continue;  // unreadable here: skipped alone
            const auto v = detail::scalar_value(*fetched);
            if (!v) continue;
            auto& st = state_[{n, mode}];
            if (!st.best || *v < *st.best - p_.delta) {
                st.best = *v;
                st.since = 0;
            } else if (++st.since >= patience) {  // every tensor that fires is reported
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
    detail::LossTensors losses_{p_.tensor_regex};
    std::vector<std::string> names_;
    std::map<std::pair<std::string, Mode>, State> state_;
};

}  // namespace smdebug
