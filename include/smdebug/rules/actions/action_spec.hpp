#pragma once
// Rule actions from one-line specs, as `smdebug rule --action SPEC` and `smdebug monitor` take
// them (docs/rules.md, "Actions"). Opt-in: this header brings the webhook's HTTP client (Asio,
// OpenSSL), which rules/rules.hpp and local.hpp never include.
//
//   webhook:URL           POST the finding as JSON to an http(s) URL (webhook_action.hpp)
//   webhook-slack:URL     POST {"text": "..."} (Slack, Mattermost, Teams-compatible hooks)
//   signal:PID[:SIG]      kill(PID, SIG); SIG by name (TERM, SIGKILL, usr1) or number; default TERM
//   exec:COMMAND          run COMMAND (split into argv, no shell) with the finding in SMDEBUG_*
//                         environment variables, waited for up to the timeout (local_actions.hpp)
//   stop-file:PATH        write the finding's JSON to PATH (the file's existence is the signal)
//
// make_action(spec, settings) builds one; a spec it cannot use throws InvalidActionSpec naming
// describe_action(spec). The action throws ActionFailed when it fails. make_actions(specs,
// settings) builds an Actions list whose entries never throw: a failure is one line to
// settings.log("error", ...) (or to std::cerr when no logger is set) and the next action runs.
// Messages name describe_action(spec): a webhook's URL without user info, path or query, an
// exec's program without its arguments (either may hold a token).
#include <chrono>
#include <csignal>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/rules/actions/actions.hpp>
#include <smdebug/rules/actions/local_actions.hpp>
#include <smdebug/rules/actions/webhook_action.hpp>

namespace smdebug {

struct ActionSettings {
    std::string ca_file;                        // extra trusted CAs (PEM) for https webhooks
    std::chrono::milliseconds timeout{10000};   // a webhook's delivery (all attempts), an exec's run
    int max_attempts = 3;                       // webhook attempts
    RuleLogger log;                             // retries ("warning") and, for make_actions, failures ("error")
};

// The kinds make_action knows, for usage texts.
inline constexpr std::string_view action_spec_kinds = "webhook:URL, webhook-slack:URL, signal:PID[:SIG], exec:COMMAND, stop-file:PATH";

// How messages name an action: secrets (URL user info, path and query; exec arguments) left out.
inline std::string describe_action(std::string_view spec) {
    const auto colon = spec.find(':');
    const std::string_view kind = spec.substr(0, colon);
    const std::string_view rest = colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1);
    if (kind == "webhook" || kind == "webhook-slack") return std::string(kind) + ":" + redact_url(rest);
    if (kind == "exec") {
        try {
            const auto argv = split_command(rest);
            return argv.empty() ? "exec:" : "exec:" + argv.front() + (argv.size() > 1 ? " …" : "");
        } catch (const InvalidActionSpec&) {
            return "exec:(unparsable command)";
        }
    }
    if (kind == "signal" || kind == "stop-file") return std::string(spec);
    return std::string(kind.substr(0, 40)) + (colon == std::string_view::npos ? "" : ":…");
}

inline Actions::Action make_action(std::string_view spec, const ActionSettings& settings = {}) {
    const auto colon = spec.find(':');
    const std::string shown = describe_action(spec);
    if (colon == std::string_view::npos || colon == 0)
        throw InvalidActionSpec("action '" + shown + "': expected KIND:ARGUMENT, one of " + std::string(action_spec_kinds));
    const std::string_view kind = spec.substr(0, colon);
    const std::string_view arg = spec.substr(colon + 1);
    if (arg.empty()) throw InvalidActionSpec("action '" + shown + "': the " + std::string(kind) + " action needs an argument after ':'");
    if (kind == "webhook" || kind == "webhook-slack") {
        WebhookOptions o;
        o.slack = kind == "webhook-slack";
        o.ca_file = settings.ca_file;
        o.timeout = settings.timeout;
        o.max_attempts = settings.max_attempts;
        o.log = settings.log;
        return webhook_action(arg, std::move(o));
    }
    if (kind == "signal") {
        const auto sep = arg.find(':');
        const std::string_view pid_text = arg.substr(0, sep);
        int sig = SIGTERM;
        if (sep != std::string_view::npos) {
            const auto n = signal_number(arg.substr(sep + 1));
            if (!n) throw InvalidActionSpec("action '" + shown + "': unknown signal '" + std::string(arg.substr(sep + 1)) + "' (a name like TERM or a number)");
            sig = *n;
        }
        if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string_view::npos || std::stol(std::string(pid_text)) <= 0)
            throw InvalidActionSpec("action '" + shown + "': the process id must be a positive number");
        return signal_action(static_cast<pid_t>(std::stol(std::string(pid_text))), sig);
    }
    if (kind == "exec") {
        auto argv = split_command(arg);
        if (argv.empty()) throw InvalidActionSpec("action '" + shown + "': the command is empty");
        return exec_action(std::move(argv), settings.timeout);
    }
    if (kind == "stop-file") return stop_file_action(std::filesystem::path(std::string(arg)));
    throw InvalidActionSpec("action '" + shown + "': unknown kind '" + std::string(kind.substr(0, 40)) + "' (one of " + std::string(action_spec_kinds) + ")");
}

// `action` with its failures reported instead of thrown.
inline Actions::Action reporting_action(std::string description, Actions::Action action, RuleLogger log) {
    return [description = std::move(description), action = std::move(action), log = std::move(log)](const RuleFiring& f) {
        std::string line;
        try {
            action(f);
            return;
        } catch (const ActionFailed& e) {
            line = std::string("action failed: ") + e.what();
        } catch (const std::exception& e) {
            line = "action " + description + " failed: " + e.what();
        }
        if (log) log("error", line);
        else std::cerr << "smdebug: " << line << '\n' << std::flush;
    };
}

inline Actions make_actions(const std::vector<std::string>& specs, const ActionSettings& settings = {}) {
    Actions out;
    for (const auto& spec : specs) {
        const std::string shown = describe_action(spec);
        out.add(shown, reporting_action(shown, make_action(spec, settings), settings.log));
    }
    return out;
}

}  // namespace smdebug
