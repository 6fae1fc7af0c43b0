#pragma once
// Helpers shared by the test TUs.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

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

}  // namespace test
