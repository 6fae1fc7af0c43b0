#pragma once
// Rule actions (docs/rules.md "Actions", docs/deviations.md D18): what runs on every step at which a
// rule fires, in the order they were added.
//
//  - Actions::parse(json, rule_name): the reference's action string. Empty/blank: no actions. A
//    JSON object is one action, an array a list (elements that are not objects, or lack "name",
//    are skipped); any other JSON value disables actions. Invalid JSON raises InvalidRuleParameter.
//    Keys and the action names are case-insensitive; values (endpoints, job prefixes) are kept as
//    written (D18). Names: "stoptraining" (needs "training_job_prefix"), "sms" / "email" (need
//    "endpoint"); an action missing its key, or an unknown name, is skipped with a log line.
//  - Programmatic actions: log_action, callback_action, stop_signal_file_action (below), and the
//    AWS ones in rules/actions/aws_actions.hpp.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/config.hpp>
#include <smdebug/core/environment.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/rules/params.hpp>

namespace smdebug {

// What an action is told when its rule fires. invoke()/invoke_rule() fill every field; the
// fields after `finding` are empty (or -1) when unknown.
struct RuleFiring {
    // One thing the rule found at the step: "tensor w: nan at element 3", about tensor "w".
    struct Finding {
        std::string tensor;  // empty when the finding is not about one tensor
        std::string text;
        bool operator==(const Finding&) const = default;
    };
    std::string rule;      // the rule's name
    std::int64_t step = 0; // global step
    std::string finding;   // what the rule found (may be empty): the first of `findings`
    std::string mode;      // the step's mode ("TRAIN", "EVAL", ...; mode_name), empty when unknown
    std::int64_t mode_step = -1;  // the step within its mode, -1 when unknown
    std::string tensor;    // the tensor the finding is about, empty when none
    std::string trial;     // the base trial's name
    // Everything the rule found at the step, in its order (e.g. one per non-finite tensor); at
    // least one entry (`finding` and `tensor`) when filled by invoke()/invoke_rule().
    std::vector<Finding> findings;
};

// A spec of make_action (rules/actions/action_spec.hpp) that cannot be used; names the spec.
class InvalidActionSpec : public UsageError {
public:
    using UsageError::UsageError;
    const char* python_name() const noexcept override { return "InvalidActionSpec"; }
};

// An action that could not do its job (webhook unreachable, command not found, ...). The message
// names the action (URLs without user info, path or query: they may hold tokens) and why.
class ActionFailed : public SMDebugRuntimeError {
public:
    using SMDebugRuntimeError::SMDebugRuntimeError;
    const char* python_name() const noexcept override { return "ActionFailed"; }
};

// Log lines of actions and of invoke_rule: (level, text). Default: nothing.
using RuleLogger = std::function<void(std::string_view level, std::string_view text)>;

class Actions {
public:
    using Action = std::function<void(const RuleFiring&)>;

    Actions() = default;

    void add(std::string description, Action action) {
        descriptions_.push_back(std::move(description));
        actions_.push_back(std::move(action));
    }
    // Adds every action of `more`, after these.
    void append(const Actions& more) {
        descriptions_.insert(descriptions_.end(), more.descriptions_.begin(), more.descriptions_.end());
        actions_.insert(actions_.end(), more.actions_.begin(), more.actions_.end());
    }
    std::size_t size() const noexcept { return actions_.size(); }
    bool empty() const noexcept { return actions_.empty(); }
    const std::vector<std::string>& descriptions() const noexcept { return descriptions_; }

    void invoke(const RuleFiring& firing) const {
        for (const auto& a : actions_) a(firing);
    }

    // The reference's action string. `make_stop_training` / `make_message` build the AWS actions
    // (see aws_actions.hpp: aws_action_factory()); without them those entries are skipped with a
    // log line, so parsing never reaches the network by itself.
    struct Factories {
        std::function<Action(const std::string& rule, const std::string& training_job_prefix)> stop_training;
        std::function<Action(const std::string& rule, const std::string& protocol, const std::string& endpoint)> message;
        RuleLogger log;
    };
    static Actions parse(std::string_view action_str, const std::string& rule_name, const Factories& f = {});

private:
    std::vector<std::string> descriptions_;
    std::vector<Action> actions_;
};

// "SMDebugRule:<rule> fired. <finding> (step N)" to `out`.
inline Actions::Action log_action(std::ostream& out = std::clog) {
    return [&out](const RuleFiring& f) {
        out << "SMDebugRule:" << f.rule << " fired at step " << f.step << ". " << f.finding << '\n' << std::flush;
    };
}

// Calls `f` (for example, to ask the training loop to stop).
inline Actions::Action callback_action(std::function<void(const RuleFiring&)> f) { return f; }

// The stop-signal file: writes the current time (seconds since the epoch) into
// <trial folder>/<file>, where <file> is `file_name` or, when empty, the value of
// SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE (the reference's RULE_JOB_STOP_SIGNAL_FILENAME); the
// training side stops once the file's grace time has passed. Without a name the action does
// nothing. A write failure raises StorageError naming the file.
inline Actions::Action stop_signal_file_action(std::filesystem::path trial_dir, std::string file_name = {}) {
    return [dir = std::move(trial_dir), file_name](const RuleFiring&) {
        std::string name = file_name;
        if (name.empty())
            name = environment::rule_stop_signal_file().value_or("");
        if (name.empty()) return;
        const auto path = dir / name;
        const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
        std::ofstream out(path, std::ios::trunc);
        out << now;
        out.close();
        if (!out) throw StorageError("cannot write the rule stop-signal file " + path.string());
    };
}

}  // namespace smdebug

#if SMDEBUG_HEADER_ONLY
#include <smdebug/rules/impl/actions.ipp>
#endif
