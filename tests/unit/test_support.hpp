#pragma once
// Helpers shared by the test TUs (include after <catch2/catch.hpp>): temporary folders, scoped
// environment variables, running the built `smdebug` program.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace test {

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

#ifdef SMDEBUG_BIN_DIR
// What one run of the `smdebug` program printed on stdout, and its exit status.
struct CliRun {
    int status = -1;
    std::string out;
};

// Runs the built `smdebug` program with `args` (stderr discarded, no end-of-training delay). The
// test fails when the program was not built (build the smdebug_cli target).
inline CliRun run_cli(const std::string& args) {
    const auto program = std::filesystem::path(SMDEBUG_BIN_DIR) / "smdebug";
    INFO("the smdebug program is built by the smdebug_cli target: " << program.string());
    REQUIRE(std::filesystem::exists(program));
    const std::string cmd = "SMDEBUG_TRAINING_END_DELAY_REFRESH=0 " + program.string() + " " + args + " 2>/dev/null";
    CliRun r;
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}
#endif

}  // namespace test
