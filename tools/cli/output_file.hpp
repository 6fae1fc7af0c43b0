#pragma once
// Where the CLI's results go: standard output and whole files. A failure (a full disk, a
// read-only folder, a closed descriptor) is one clear line and exit 2, never a silent success,
// and a file is never left half-written (docs/reliability.md "Nothing aborts").
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>

#include <unistd.h>

#include "errors.hpp"
#include "escape.hpp"
#include "format.hpp"

namespace cli {

// Whether check_stdout has reported a failure (then it stays quiet).
inline bool& stdout_failure_reported() {
    static bool reported = false;
    return reported;
}

// Flushes standard output; throws usage_error("cannot write standard output: <why>") when this
// or an earlier write failed. Reported once: later checks pass.
inline void check_stdout() {
    if (stdout_failure_reported()) return;
    errno = 0;
    std::cout.flush();
    const bool flushed = std::fflush(stdout) == 0;  // what stays buffered fails again, saying why
    const int err = errno;
    if (flushed && !std::cout.fail() && !std::ferror(stdout)) return;
    stdout_failure_reported() = true;
    throw usage_error(std::string("cannot write standard output") + (err ? std::string(": ") + std::strerror(err) : std::string()));
}

// Writes `text` to `path` whole: into a temporary file beside it, flushed, then renamed over
// `path`. On failure the temporary is removed (an existing `path` stays as it was) and
// usage_error("cannot write <path>: <why>") is thrown. A `path` that exists and is not a regular
// file (/dev/stdout, a FIFO) is written directly.
inline void write_file(const std::string& path, std::string_view text) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    const bool direct = !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st);
    const std::string tmp = direct ? path : path + ".tmp-" + std::to_string(::getpid());
    const auto fail = [&](int err) {
        if (!direct) std::remove(tmp.c_str());
        return usage_error("cannot write " + path + ": " + std::strerror(err));
    };
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) {
        const int err = errno;
        throw usage_error("cannot write " + path + ": " + std::strerror(err));
    }
    errno = 0;
    bool good = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    int err = errno;
    if (good && std::fflush(f) != 0) good = false, err = errno;
    if (good && !direct && ::fsync(::fileno(f)) != 0) good = false, err = errno;
    if (std::fclose(f) != 0 && good) good = false, err = errno;
    if (!good) throw fail(err ? err : EIO);
    if (!direct && std::rename(tmp.c_str(), path.c_str()) != 0) throw fail(errno);
}

// The size of what a command wrote at `path` (a file, or every file under a folder), for a human.
inline std::string written_size(const std::string& path) {
    std::error_code ec;
    std::uintmax_t total = 0;
    if (std::filesystem::is_directory(path, ec)) {
        for (auto it = std::filesystem::recursive_directory_iterator(path, ec); !ec && it != std::filesystem::recursive_directory_iterator();
             it.increment(ec))
            if (it->is_regular_file(ec)) total += it->file_size(ec);
    } else {
        total = std::filesystem::file_size(path, ec);
        if (ec) return "size unknown";
    }
    return human_bytes(static_cast<double>(total));
}

// The one line a command that wrote a file ends with, on stderr: `wrote PATH (SIZE): what`.
inline void print_written(const std::string& path, const std::string& what) {
    std::cerr << "wrote " << printable(path) << " (" << written_size(path) << ")" << (what.empty() ? "" : ": " + printable(what)) << "\n";
}

}  // namespace cli
