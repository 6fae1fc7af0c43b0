#pragma once
// Helpers shared by the test TUs (include after <catch2/catch.hpp>): temporary folders, scoped
// environment variables, running the built `smdebug` program, the trial options tests read with.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <smdebug/query/options.hpp>

// The tests look below the public API (the index, the record reader, the writer's queue) and
// instantiate the library's templates over stores of their own; with smdebug::compiled they
// include the definitions those need (docs/compile.md, "Your own store, rule or template argument").
#include <smdebug/core/tensor_view.hpp>
#include <smdebug/format/detail/event_decode.hpp>
#include <smdebug/query/detail/record_decoding.hpp>
#include <smdebug/query/detail/record_reader.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/impl/batch_reads.ipp>
#include <smdebug/query/impl/tensor.ipp>
#include <smdebug/query/impl/trial.ipp>
#include <smdebug/net/aws_credentials.hpp>
#include <smdebug/net/s3_client.hpp>
#include <smdebug/query/step_listing.hpp>
#include <smdebug/storage/detail/open_file_cache.hpp>
#include <smdebug/writer/detail/step_queue.hpp>
#include <smdebug/writer/impl/hook.ipp>
#include <smdebug/writer/manifest_writer.hpp>
#include <smdebug/writer/step_writer.hpp>
#include <smdebug/writer/tensorboard.hpp>

namespace test {

// Trial options for tests: no end-of-training settle, polls every `poll_interval`, and
// `missing_event_file_retries` retries of a missing event file (0: unavailable at once; tests of
// a job still writing give the writer a few polls).
inline smdebug::TrialOptions fast(int missing_event_file_retries = 0,
                                  std::chrono::milliseconds poll_interval = std::chrono::milliseconds(10)) {
    smdebug::TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    o.poll_interval = poll_interval;
    o.missing_event_file_retry_limit = missing_event_file_retries;
    return o;
}

// A fresh directory under $TMPDIR, removed with everything in it on destruction. With `absent`
// only its unique name is reserved: the folder itself does not exist yet (a job that has not
// started writing).
struct TempDir {
    enum State { present, absent };
    std::filesystem::path path;

    explicit TempDir(const std::string& name = "test", State state = present) {
        std::string tmpl = (std::filesystem::temp_directory_path() / ("smdebug-" + name + "-XXXXXX")).string();
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path = tmpl;
        if (state == absent) std::filesystem::remove(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    // Writes `text` to `rel` below the directory (creating folders); returns the full path.
    std::string write(const std::string& rel, const std::string& text) const {
        const auto p = path / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p.string();
    }
};

// Sets (or, with nullptr, unsets) an environment variable for the scope; restores it afterwards.
class ScopedEnv {
public:
    ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
        if (const char* old = std::getenv(name_.c_str())) old_ = old;
        if (value) ::setenv(name_.c_str(), value, 1);
        else ::unsetenv(name_.c_str());
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
        else ::unsetenv(name_.c_str());
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::string name_;
    std::optional<std::string> old_;
};

// `s` quoted for /bin/sh.
inline std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// What one command printed on stdout and stderr, and its exit status (-1: it did not exit).
struct CliRun {
    int status = -1;
    std::string out, err;
};

// Runs a /bin/sh command line (stdin from /dev/null, no end-of-training delay in smdebug
// programs), capturing stdout and stderr.
inline CliRun run_shell(const std::string& command) {
    TempDir io("cli-io");
    const auto out = io.path / "out", err = io.path / "err";
    const std::string full = "SMDEBUG_TRAINING_END_DELAY_REFRESH=0 " + command + " >" + shell_quote(out.string()) +
                             " 2>" + shell_quote(err.string()) + " </dev/null";
    const int status = std::system(full.c_str());
    const auto read = [](const std::filesystem::path& p) {
        std::ifstream f(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    };
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(out), read(err)};
}

#ifdef SMDEBUG_BIN_DIR
// Runs the built `smdebug` program with `args` (see run_shell). The test fails when the program
// was not built (build the smdebug_cli target).
inline CliRun run_cli(const std::string& args) {
    const auto program = std::filesystem::path(SMDEBUG_BIN_DIR) / "smdebug";
    INFO("the smdebug program is built by the smdebug_cli target: " << program.string());
    REQUIRE(std::filesystem::exists(program));
    return run_shell(shell_quote(program.string()) + " " + args);
}
#endif

}  // namespace test
