#pragma once
// The output of `smdebug export`: a local file written sequentially, every failure (cannot create,
// disk full) one clear line and exit 2, and a file it created ("wb") removed again rather than
// left half-written; names in the written text made valid UTF-8.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "../errors.hpp"
#include "../escape.hpp"
#include "../output_file.hpp"

namespace cli::exporting {

class OutFile {
public:
    // mode "wb" (create or truncate) or "ab" (append); path "-" is stdout.
    OutFile(std::string path, const char* mode = "wb") : path_(std::move(path)), created_(path_ != "-" && std::string_view(mode) == "wb") {
        f_ = path_ == "-" ? stdout : std::fopen(path_.c_str(), mode);
        if (!f_) {
            created_ = false;
            fail();
        }
    }
    ~OutFile() {
        if (f_ && f_ != stdout) std::fclose(f_);
    }
    OutFile(const OutFile&) = delete;
    OutFile& operator=(const OutFile&) = delete;

    void write(std::string_view bytes) {
        if (bytes.empty()) return;
        if (std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size()) fail();
        offset_ += bytes.size();
    }
    void write(const void* data, std::size_t n) { write(std::string_view(static_cast<const char*>(data), n)); }
    std::uint64_t offset() const noexcept { return offset_; }
    // Flushes and closes; a failure here (e.g. a full disk noticed late) is an error too.
    void close() {
        if (!f_) return;
        const bool flushed = std::fflush(f_) == 0;
        const int err = errno;
        const bool closed = f_ == stdout || std::fclose(f_) == 0;
        f_ = nullptr;
        if (!flushed || !closed) {
            errno = flushed ? errno : err;
            fail();
        }
    }

private:
    // (main() makes the message printable.)
    [[noreturn]] void fail() {
        const int err = errno;
        if (created_) {
            if (f_) std::fclose(f_);
            f_ = nullptr;
            std::remove(path_.c_str());
        }
        if (path_ == "-") stdout_failure_reported() = true;  // this line says it; main need not again
        throw usage_error("cannot write " + path_ + ": " + std::strerror(err));
    }

    std::string path_;
    bool created_ = false;
    std::FILE* f_ = nullptr;
    std::uint64_t offset_ = 0;
};

// `s` with every byte that is not part of valid UTF-8 written as the four characters \xNN (as
// json_string does), so that CSV, TensorBoard tags and JSON all carry the same text.
inline std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        if (const std::size_t n = utf8_sequence(s, i)) {
            out.append(s.substr(i, n));
            i += n;
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i]));
            out += buf;
            ++i;
        }
    }
    return out;
}

}  // namespace cli::exporting
