#pragma once
// The CLI's exit codes, its error type, and the one-line form of every error on stderr.
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "escape.hpp"

namespace cli {

// Exit codes (docs/cli.md): 0 success; 1 bad data found (corrupt record, truncated file);
// 2 usage error, unreadable or missing path, not a trial, unknown tensor/step/collection.
enum Exit : int { ok = 0, bad_data = 1, usage = 2 };

// An error the CLI reports as one line on stderr and exits with `code`.
struct CliError : std::runtime_error {
    int code;
    CliError(int c, const std::string& message) : std::runtime_error(message), code(c) {}
};
inline CliError usage_error(const std::string& m) { return CliError(usage, m); }

// One line on stderr in the form every command uses: `smdebug <command>: <message>` (`smdebug:
// <message>` before a command is known).
inline void print_error(std::string_view command, std::string_view message) {
    std::cerr << "smdebug" << (command.empty() ? "" : " " + std::string(command)) << ": " << printable(message) << "\n" << std::flush;
}

}  // namespace cli
