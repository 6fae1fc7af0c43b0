#pragma once
// Rule actions that need no network and no SageMaker (docs/rules.md, "Actions"):
//
//  - finding_json(f): the finding as a JSON object {rule, step, mode, mode_step, tensor, message,
//    trial, time}; mode, mode_step and tensor are null when unknown, time is RFC 3339 UTC.
//  - finding_text(f): the same as one line for people (the Slack-compatible webhook's "text").
//  - signal_action(pid, sig): kill(pid, sig) on every firing.
//  - exec_action(argv, timeout): runs argv (no shell; the program is searched in PATH) with the
//    finding in SMDEBUG_RULE, SMDEBUG_STEP, SMDEBUG_MODE, SMDEBUG_MODE_STEP, SMDEBUG_TENSOR,
//    SMDEBUG_MESSAGE, SMDEBUG_TRIAL, SMDEBUG_TIME, and waits for it; one still running after
//    `timeout` is killed. Not found, killed or a non-zero exit status: ActionFailed.
//  - stop_file_action(path): writes finding_json into `path` (atomically: a temporary file beside
//    it, then a rename), so a training loop polling for the file sees it whole.
//  - split_command(text): argv from a command line: blanks separate words; '...' and "..."
//    quote, a backslash escapes the next character. An unterminated quote: InvalidActionSpec.
//  - signal_number(name): "TERM", "SIGTERM", "term" or "15" -> 15; unknown: nullopt.
// Every failure is an ActionFailed naming the action and why; nothing here throws anything else.
#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/rules/actions/actions.hpp>

extern char** environ;

namespace smdebug {

// "2026-11-25T23:11:28.123Z".
inline std::string rfc3339_utc(std::chrono::system_clock::time_point t) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    const std::time_t secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    std::array<char, 40> buf{};
    const auto n = std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%S", &tm);
    std::array<char, 8> frac{};
    std::snprintf(frac.data(), frac.size(), ".%03dZ", static_cast<int>(((ms % 1000) + 1000) % 1000));
    return std::string(buf.data(), n) + frac.data();
}

inline boost::json::object finding_json(const RuleFiring& f, std::chrono::system_clock::time_point when = std::chrono::system_clock::now()) {
    boost::json::object o;
    o["rule"] = f.rule;
    o["step"] = f.step;
    if (f.mode.empty()) o["mode"] = nullptr;
    else o["mode"] = f.mode;
    if (f.mode_step < 0) o["mode_step"] = nullptr;
    else o["mode_step"] = f.mode_step;
    if (f.tensor.empty()) o["tensor"] = nullptr;
    else o["tensor"] = f.tensor;
    o["message"] = f.finding;
    o["trial"] = f.trial;
    o["time"] = rfc3339_utc(when);
    return o;
}

// "smdebug rule ExplodingTensor fired at step 7 (TRAIN step 3) of trial run1: tensor w: nan at element 0".
inline std::string finding_text(const RuleFiring& f) {
    std::string s = "smdebug rule " + f.rule + " fired at step " + std::to_string(f.step);
    if (!f.mode.empty() && f.mode_step >= 0) s += " (" + f.mode + " step " + std::to_string(f.mode_step) + ")";
    if (!f.trial.empty()) s += " of trial " + f.trial;
    if (!f.finding.empty()) s += ": " + f.finding;
    else if (!f.tensor.empty()) s += ": tensor " + f.tensor;
    return s;
}

// The SMDEBUG_* variables exec_action sets, as NAME=value strings.
inline std::vector<std::string> finding_environment(const RuleFiring& f, std::chrono::system_clock::time_point when = std::chrono::system_clock::now()) {
    return {"SMDEBUG_RULE=" + f.rule,
            "SMDEBUG_STEP=" + std::to_string(f.step),
            "SMDEBUG_MODE=" + f.mode,
            "SMDEBUG_MODE_STEP=" + (f.mode_step < 0 ? std::string() : std::to_string(f.mode_step)),
            "SMDEBUG_TENSOR=" + f.tensor,
            "SMDEBUG_MESSAGE=" + f.finding,
            "SMDEBUG_TRIAL=" + f.trial,
            "SMDEBUG_TIME=" + rfc3339_utc(when)};
}

inline std::vector<std::string> split_command(std::string_view text) {
    std::vector<std::string> out;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quote) {
            if (c == quote) quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) word += text[++i];
            else word += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == '\\') {
            if (i + 1 == text.size()) throw InvalidActionSpec("command '" + std::string(text) + "' ends with a lone backslash");
            word += text[++i];
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) out.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (quote) throw InvalidActionSpec("command '" + std::string(text) + "' has an unterminated " + (quote == '"' ? "double" : "single") + " quote");
    if (in_word) out.push_back(std::move(word));
    return out;
}

inline std::optional<int> signal_number(std::string_view name) {
    static constexpr std::pair<std::string_view, int> names[] = {
        {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT}, {"KILL", SIGKILL}, {"USR1", SIGUSR1},
        {"USR2", SIGUSR2}, {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}};
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string_view::npos) {
        if (name.size() > 3) return std::nullopt;
        const int n = std::stoi(std::string(name));
        if (n < 1 || n > SIGRTMAX) return std::nullopt;
        return n;
    }
    std::string upper = text::to_upper(name);
    if (upper.starts_with("SIG")) upper.erase(0, 3);
    for (const auto& [n, v] : names)
        if (n == upper) return v;
    return std::nullopt;
}

inline Actions::Action signal_action(pid_t pid, int sig = SIGTERM) {
    if (pid <= 0) throw InvalidActionSpec("signal: the process id must be a positive number, not " + std::to_string(pid));
    return [pid, sig](const RuleFiring&) {
        if (::kill(pid, sig) != 0) {
            const int err = errno;
            throw ActionFailed("signal:" + std::to_string(pid) + ":" + std::to_string(sig) + " failed: " + std::strerror(err));
        }
    };
}

namespace detail {

// environ with `extra` NAME=value entries replacing or adding to it.
inline std::vector<std::string> merged_environment(const std::vector<std::string>& extra) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        const auto name = entry.substr(0, entry.find('=') + 1);
        bool replaced = false;
        for (const auto& x : extra)
            if (std::string_view(x).substr(0, x.find('=') + 1) == name) replaced = true;
        if (!replaced) env.emplace_back(entry);
    }
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

inline std::vector<char*> c_strings(std::vector<std::string>& v) {
    std::vector<char*> out;
    for (auto& s : v) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

}  // namespace detail

inline Actions::Action exec_action(std::vector<std::string> argv, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    if (argv.empty() || argv.front().empty()) throw InvalidActionSpec("exec: the command is empty");
    return [argv = std::move(argv), timeout](const RuleFiring& f) {
        const std::string what = "exec:" + argv.front();
        auto args = argv;
        auto env = detail::merged_environment(finding_environment(f));
        auto c_args = detail::c_strings(args);
        auto c_env = detail::c_strings(env);
        pid_t pid = 0;
        const int rc = ::posix_spawnp(&pid, c_args.front(), nullptr, nullptr, c_args.data(), c_env.data());
        if (rc != 0) throw ActionFailed(what + " could not be started: " + std::strerror(rc));
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        auto pause = std::chrono::milliseconds(1);
        int status = 0;
        for (;;) {
            const pid_t w = ::waitpid(pid, &status, WNOHANG);
            if (w == pid) break;
            if (w < 0 && errno != EINTR) throw ActionFailed(what + ": waiting for it failed: " + std::strerror(errno));
            if (std::chrono::steady_clock::now() >= deadline) {
                ::kill(pid, SIGKILL);
                while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
                throw ActionFailed(what + " was still running after " + std::to_string(timeout.count()) + " ms and was killed");
            }
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::milliseconds(50));
        }
        if (WIFSIGNALED(status)) throw ActionFailed(what + " was killed by signal " + std::to_string(WTERMSIG(status)));
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
            const int code = WEXITSTATUS(status);
            // posix_spawnp reports a program it cannot run as exit status 127 from the child.
            throw ActionFailed(what + " exited with status " + std::to_string(code) + (code == 127 ? " (command not found?)" : ""));
        }
    };
}

inline Actions::Action stop_file_action(std::filesystem::path path) {
    if (path.empty()) throw InvalidActionSpec("stop-file: the path is empty");
    return [path = std::move(path)](const RuleFiring& f) {
        const std::string what = "stop-file:" + path.string();
        auto tmp = path;
        tmp += ".tmp" + std::to_string(::getpid());
        {
            std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
            if (!out) throw ActionFailed(what + ": cannot create " + tmp.string() + ": " + std::strerror(errno));
            out << boost::json::serialize(finding_json(f)) << '\n';
            out.flush();
            if (!out) {
                const int err = errno;
                out.close();
                std::error_code ignored;
                std::filesystem::remove(tmp, ignored);
                throw ActionFailed(what + ": cannot write " + tmp.string() + ": " + std::strerror(err));
            }
        }
        std::error_code ec;
        std::filesystem::rename(tmp, path, ec);
        if (ec) {
            std::error_code ignored;
            std::filesystem::remove(tmp, ignored);
            throw ActionFailed(what + ": cannot rename " + tmp.string() + " to it: " + ec.message());
        }
    };
}

}  // namespace smdebug
