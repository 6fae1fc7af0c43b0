// smdebug_cpp._core's rules and actions: BuiltinRule (a built-in rule over trials, run by the
// library with the GIL released), builtin_rules, validate_rule_params, the action string parser
// and the AWS and spec actions (smdebug_cpp/rules).
#include "binding.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <smdebug/rules/actions/action_spec.hpp>
#include <smdebug/rules/actions/aws_actions.hpp>
#include <smdebug/rules/invoke.hpp>
#include <smdebug/rules/params.hpp>
#include <smdebug/rules/registry.hpp>
#include <smdebug/smdebug.hpp>

namespace smdebug_python {
namespace {

using namespace smdebug;

std::string param_text(const py::handle& v) {
    if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        std::string s;
        for (auto item : v) s += (s.empty() ? "" : ",") + param_text(item);
        return s;
    }
    return py::str(v).cast<std::string>();
}

RuleParams rule_params(const py::dict& params) {
    RuleParams p;
    for (auto [k, v] : params) {
        if (!py::isinstance<py::str>(k)) throw py::type_error("rule parameter names must be strings");
        if (v.is_none()) continue;
        p.set(k.cast<std::string>(), param_text(v));
    }
    return p;
}

ActionSettings action_settings(const std::string& ca_file, double timeout_seconds, int max_attempts) {
    if (!(timeout_seconds > 0) || timeout_seconds > 86400) throw UsageError("action timeout must be in (0, 86400] seconds");
    ActionSettings s;
    s.ca_file = ca_file;
    s.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_seconds * 1000));
    s.max_attempts = max_attempts;
    return s;
}

// An AWS action (aws_actions.hpp) with the lines it logs kept for Python's logging (the calls run
// without the GIL, so they cannot log through Python themselves).
template <class Action>
struct AwsActionHandle {
    std::shared_ptr<std::vector<std::string>> log = std::make_shared<std::vector<std::string>>();
    std::optional<Action> action;

    AwsActionConfig config() const {
        auto c = AwsActionConfig::from_environment();
        c.log = [lines = log](std::string_view, std::string_view text) { lines->emplace_back(text); };
        return c;
    }
    std::vector<std::string> take_log() { return std::exchange(*log, {}); }
};

// A built-in rule over trials kept alive by this object. The rule references its Trials, so the
// boxes are held here; every call locks the trials it reads.
class BuiltinRule {
public:
    BuiltinRule(const std::string& name, TrialPtr base, const py::dict& params, std::vector<TrialPtr> others,
                const std::string& action_str, const std::vector<std::string>& action_specs, const ActionSettings& settings)
        : base_(std::move(base)), others_(std::move(others)) {
        auto p = rule_params(params);
        py::gil_scoped_release release;
        auto locks = lock_all();
        std::vector<CppTrial*> other_trials;
        for (auto& o : others_) other_trials.push_back(&locks.trial(*o));
        rule_ = make_rule(name, locks.trial(*base_), std::move(p), other_trials);
        if (!action_str.empty()) {
            auto config = AwsActionConfig::from_environment();
            rule_->actions() = Actions::parse(action_str, std::string(rule_->name()), aws_action_factories(std::move(config)));
        }
        // Spec actions (webhook:URL, signal:PID, ...): a failure is one line on stderr, never raised.
        rule_->actions().append(make_actions(action_specs, settings));
    }

    std::string name() const { return std::string(rule_->name()); }

    using Finding = std::tuple<std::int64_t, std::string, std::string>;  // step, tensor, finding

    // invoke_rule: (step, tensor, finding) for every finding of every firing step (only the first
    // firing step's with first_only). With raise_eval_cond, the firing step's are kept for
    // take_fired() when RuleEvaluationConditionMet is raised.
    std::vector<Finding> run(std::int64_t start, std::optional<std::int64_t> end, bool raise_eval_cond, bool first_only) {
        struct FirstFound {};
        std::vector<Finding> fired;
        InvokeOptions o;
        o.start_step = start;
        o.end_step = end;
        o.raise_eval_cond = raise_eval_cond;
        o.on_fire = [&](const RuleFiring& f) {
            for (const auto& x : f.findings) fired.emplace_back(f.step, x.tensor, x.text);
            if (raise_eval_cond) raised_ = fired;
            if (first_only) throw FirstFound{};
        };
        py::gil_scoped_release release;
        auto locks = lock_all();
        try {
            invoke_rule(*rule_, o);
        } catch (const FirstFound&) {
        }
        return fired;
    }

    std::vector<Finding> take_fired() { return std::exchange(raised_, {}); }

    // Rule.invoke(step): RuleEvaluationConditionMet when it fires.
    void invoke_step(std::int64_t step) {
        py::gil_scoped_release release;
        auto locks = lock_all();
        invoke(*rule_, step);
    }

private:
    // The locks of every trial of the rule, taken in one global order (by address): no deadlock
    // between rules sharing trials.
    struct Locks {
        std::vector<SharedCppTrial*> boxes;
        std::vector<std::unique_lock<std::mutex>> held;
        CppTrial& trial(SharedCppTrial& b) {
            const auto i = std::find(boxes.begin(), boxes.end(), &b) - boxes.begin();
            return b.trial(held[static_cast<std::size_t>(i)]);
        }
    };
    Locks lock_all() {
        Locks l{{base_.get()}, {}};
        for (auto& o : others_)
            if (std::find(l.boxes.begin(), l.boxes.end(), o.get()) == l.boxes.end()) l.boxes.push_back(o.get());
        std::sort(l.boxes.begin(), l.boxes.end());
        for (auto* b : l.boxes) l.held.push_back(b->lock());
        return l;
    }

    TrialPtr base_;
    std::vector<TrialPtr> others_;
    std::unique_ptr<RuntimeRule<AnyStore>> rule_;
    std::vector<Finding> raised_;  // what the run that raised RuleEvaluationConditionMet found
};

}  // namespace

void bind_rules(py::module_& m) {
    py::class_<BuiltinRule>(m, "BuiltinRule")
        .def(py::init([](const std::string& name, TrialPtr base, const py::dict& params, std::vector<TrialPtr> others,
                         const std::string& action_str, const std::vector<std::string>& actions, const std::string& ca_file, double timeout) {
                 return std::make_unique<BuiltinRule>(name, std::move(base), params, std::move(others), action_str, actions,
                                                      action_settings(ca_file, timeout, 3));
             }),
             py::arg("name"), py::arg("base_trial"), py::arg("params"), py::arg("other_trials"), py::arg("action_str"),
             py::arg("actions") = std::vector<std::string>{}, py::arg("ca_file") = "", py::arg("timeout") = 10.0)
        .def_property_readonly("name", &BuiltinRule::name)
        .def("run", &BuiltinRule::run, py::arg("start_step"), py::arg("end_step"), py::arg("raise_eval_cond"),
             py::arg("first_only") = false)
        .def("take_fired", &BuiltinRule::take_fired)
        .def("invoke", &BuiltinRule::invoke_step, py::arg("step"));
    // The reference's action string (rules/actions/actions.hpp: Actions::parse), lower-cased by
    // the caller as the reference does: ([(name, training_job_prefix or endpoint)], [log lines]).
    // Python builds the AWS actions from the entries; the log lines go to its logger.
    m.def("parse_actions", [](const std::string& action_str, const std::string& rule) {
        std::vector<std::pair<std::string, std::string>> entries;
        std::vector<std::string> log;
        Actions::Factories f;
        f.stop_training = [&](const std::string&, const std::string& prefix) {
            entries.emplace_back("stoptraining", prefix);
            return Actions::Action([](const RuleFiring&) {});
        };
        f.message = [&](const std::string&, const std::string& protocol, const std::string& endpoint) {
            entries.emplace_back(protocol, endpoint);
            return Actions::Action([](const RuleFiring&) {});
        };
        f.log = [&](std::string_view, std::string_view text) { log.emplace_back(text); };
        (void)Actions::parse(action_str, rule, f);
        return py::make_tuple(entries, log);
    }, py::arg("action_str"), py::arg("rule_name"));
    m.def("builtin_rules", [] {
        py::list out;
        for (const auto& r : builtin_rules()) {
            py::list params;
            for (const auto& p : r.parameters)
                params.append(py::make_tuple(std::string(p.name), std::string(p.default_value), std::string(p.meaning)));
            out.append(py::make_tuple(std::string(r.name), std::string(r.fires_when), params, r.needs_other_trial,
                                      is_step_local_rule(r.name)));
        }
        return out;
    });
    // One AWS action of an action string (smdebug_cpp.rules.action.Actions.invoke).
    // The reference's MessageAction / StopTrainingAction (smdebug_cpp/rules/action/*.py): the AWS
    // calls happen here, with the GIL released; every failure is logged (take_log()) and swallowed.
    py::class_<AwsActionHandle<SnsMessageAction>>(m, "SnsMessageAction")
        .def(py::init([](const std::string& rule, const std::string& protocol, const std::string& endpoint) {
                 auto h = std::make_unique<AwsActionHandle<SnsMessageAction>>();
                 auto config = h->config();
                 py::gil_scoped_release release;
                 h->action.emplace(std::move(config), rule, protocol, endpoint);
                 return h;
             }),
             py::arg("rule"), py::arg("protocol"), py::arg("endpoint"))
        .def_property_readonly("topic_arn", [](const AwsActionHandle<SnsMessageAction>& h) -> py::object {
            const auto& arn = h.action->topic_arn();
            return arn.empty() ? py::object(py::none()) : py::object(py::str(arn));
        })
        .def_property_readonly("subscription_existed", [](const AwsActionHandle<SnsMessageAction>& h) { return h.action->subscription_existed(); })
        .def_property_readonly("subscription_response", [](const AwsActionHandle<SnsMessageAction>& h) { return h.action->subscription_response(); })
        .def("publish", [](const AwsActionHandle<SnsMessageAction>& h, const std::string& finding) {
            py::gil_scoped_release release;
            return h.action->publish(finding);
        })
        .def("take_log", &AwsActionHandle<SnsMessageAction>::take_log);
    py::class_<AwsActionHandle<StopTrainingJobAction>>(m, "StopTrainingJobAction")
        .def(py::init([](const std::string& rule, const std::string& prefix) {
                 auto h = std::make_unique<AwsActionHandle<StopTrainingJobAction>>();
                 auto config = h->config();
                 py::gil_scoped_release release;
                 h->action.emplace(std::move(config), rule, prefix);
                 return h;
             }),
             py::arg("rule"), py::arg("prefix"))
        .def_property_readonly("found_jobs", [](const AwsActionHandle<StopTrainingJobAction>& h) { return h.action->found_jobs(); })
        .def("stop", [](const AwsActionHandle<StopTrainingJobAction>& h) {
            py::gil_scoped_release release;
            return h.action->stop();
        })
        .def("take_log", &AwsActionHandle<StopTrainingJobAction>::take_log);
    // One action from a spec (smdebug_cpp.rules.action.Action): checked at once, run per firing.
    m.def("check_action_spec", [](const std::string& spec) { (void)make_action(spec); return describe_action(spec); });
    m.def("run_action_spec", [](const std::string& spec, const std::string& rule, std::int64_t step, const std::string& message,
                                const std::string& mode, std::int64_t mode_step, const std::string& tensor, const std::string& trial,
                                const std::string& ca_file, double timeout, int max_attempts) {
        const auto settings = action_settings(ca_file, timeout, max_attempts);
        RuleFiring f{rule, step, message};
        f.mode = mode;
        f.mode_step = mode_step;
        f.tensor = tensor;
        f.trial = trial;
        py::gil_scoped_release release;
        make_action(spec, settings)(f);
    });
    m.def("validate_rule_params", [](const std::string& name, const py::dict& params) {
        return validate_rule_params(name, rule_params(params));
    });
}

}  // namespace smdebug_python
