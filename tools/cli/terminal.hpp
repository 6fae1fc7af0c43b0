#pragma once
// What the CLI shows only on a terminal: the progress bar of long scans, and colour.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace cli {

// A one-line progress bar on stderr while a long scan runs, only when stderr is a terminal.
class Progress {
public:
    Progress(std::string label, std::size_t total) : label_(std::move(label)), total_(total), tty_(::isatty(2) == 1) {}
    ~Progress() { finish(); }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    void advance(std::size_t n = 1) {
        done_ += n;
        if (!tty_ || total_ == 0) return;
        const int pct = static_cast<int>(100.0 * static_cast<double>(std::min(done_, total_)) / static_cast<double>(total_));
        if (pct == last_pct_) return;
        last_pct_ = pct;
        constexpr int width = 30;
        const int filled = pct * width / 100;
        std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% (%zu/%zu)", label_.c_str(), filled, "==============================",
                     width - filled, "", pct, std::min(done_, total_), total_);
        std::fflush(stderr);
        shown_ = true;
    }
    void finish() {
        if (shown_) std::fprintf(stderr, "\r\033[K");
        shown_ = false;
    }
    bool on_terminal() const noexcept { return tty_; }

private:
    std::string label_;
    std::size_t total_, done_ = 0;
    bool tty_;
    bool shown_ = false;
    int last_pct_ = -1;
};

// Colour only on a terminal, and never when NO_COLOR is set to anything but "" (no-color.org).
inline bool colour_on(int fd) {
    const char* no_colour = std::getenv("NO_COLOR");
    return ::isatty(fd) == 1 && (no_colour == nullptr || *no_colour == '\0');
}
enum class Colour { red = 31, yellow = 33, green = 32 };
// `text` in colour when `fd` takes colour (colour_on), else as it is.
inline std::string paint(std::string text, Colour c, int fd = 1) {
    if (!colour_on(fd)) return text;
    return "\033[" + std::to_string(static_cast<int>(c)) + "m" + std::move(text) + "\033[0m";
}

}  // namespace cli
