#pragma once
// Shared pieces of the `smdebug` command-line tool: exit codes, argument handling, trial opening,
// number formatting and the progress bar of long scans.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <smdebug/core/regex.hpp>
#include <smdebug/core/tensor_view.hpp>
#include <smdebug/format/manifest.hpp>
#include <smdebug/format/paths.hpp>
#include <smdebug/query/detail/record_reader.hpp>
#include <smdebug/query/detail/step_index.hpp>
#include <smdebug/query/step_listing.hpp>
#include <smdebug/smdebug.hpp>
#include <smdebug/writer/manifest_writer.hpp>

#include "suggest.hpp"

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

// The command being run (main sets it): every line on stderr starts `smdebug <command>: `.
inline std::string& current_command() {
    static std::string name;
    return name;
}

// Old spellings still accepted, each as the option it now is (docs/cli.md, "One spelling per concept").
inline const std::vector<std::pair<std::string, std::string>>& option_aliases() {
    static const std::vector<std::pair<std::string, std::string>> aliases = {{"--reduce", "--reduction"}};
    return aliases;
}
inline std::string canonical_option(const std::string& s) {
    for (const auto& [alias, name] : option_aliases())
        if (s == alias) return name;
    return s;
}

// The options main takes out of the arguments before a command sees them.
inline const std::vector<std::string>& options_of_every_command() {
    static const std::vector<std::string> names = {"--steps", "--requests", "--cache", "--cache-max-bytes", "--connect-timeout",
                                                   "--read-timeout", "--max-concurrency", "--help"};
    return names;
}

// `--wait [SECONDS]` (rule, watch, monitor): wait for a trial that has not started writing.
inline constexpr std::string_view wait_option = "--wait";
inline bool is_seconds(std::string_view text) {
    return !text.empty() && text.find_first_not_of("0123456789.") == std::string_view::npos && text != ".";
}

struct Args {
    std::vector<std::string> positional;
    std::vector<std::pair<std::string, std::optional<std::string>>> options;

    // Parses "--name value" (or "--name=value") for names in `with_value`, "--flag" otherwise.
    // Throws CliError(usage) on an unknown option or a missing value.
    static Args parse(int argc, char** argv, int first, const std::vector<std::string>& with_value,
                      const std::vector<std::string>& flags) {
        Args a;
        auto known = [](const std::vector<std::string>& v, const std::string& s) {
            return std::find(v.begin(), v.end(), s) != v.end();
        };
        for (int i = first; i < argc; ++i) {
            std::string s = argv[i];
            if (s.starts_with("--") && s.size() > 2) {
                std::optional<std::string> inline_value;
                if (const auto eq = s.find('='); eq != std::string::npos) {
                    inline_value = s.substr(eq + 1);
                    s.resize(eq);
                }
                s = canonical_option(s);
                if (known(with_value, s)) {
                    if (inline_value) a.options.emplace_back(s, inline_value);
                    else if (i + 1 >= argc) throw usage_error(s + " needs a value");
                    else a.options.emplace_back(s, argv[++i]);
                } else if (known(flags, s) && (!inline_value || s == wait_option)) {
                    // --wait takes an optional number of seconds: `--wait`, `--wait 30`, `--wait=30`
                    if (s == wait_option && !inline_value && i + 1 < argc && is_seconds(argv[i + 1])) inline_value = argv[++i];
                    a.options.emplace_back(s, inline_value);
                } else {
                    std::vector<std::string> all = with_value;
                    all.insert(all.end(), flags.begin(), flags.end());
                    all.insert(all.end(), options_of_every_command().begin(), options_of_every_command().end());
                    throw usage_error("unknown option " + s + did_you_mean(s, all));
                }
            } else {
                a.positional.push_back(std::move(s));
            }
        }
        return a;
    }
    bool has(const std::string& name) const {
        for (const auto& [n, v] : options) if (n == name) return true;
        return false;
    }
    std::optional<std::string> value(const std::string& name) const {
        std::optional<std::string> out;  // the last one wins
        for (const auto& [n, v] : options) if (n == name) out = v;
        return out;
    }
};

inline std::string shape_text(const smdebug::Shape& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    if (s.size() == 1) out += ",";
    return out + ")";
}

using smdebug::text::format_double;  // the shortest decimal that reads back as the same double

inline std::int64_t parse_int(const std::string& text, const std::string& what) {
    std::int64_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) throw usage_error(what + " must be an integer, not '" + text + "'");
    return v;
}

// --mode M (TRAIN, EVAL, PREDICT, GLOBAL; case-insensitive); GLOBAL when absent.
inline smdebug::Mode mode_option(const Args& a) {
    const auto m = a.value("--mode");
    if (!m) return smdebug::Mode::GLOBAL;
    const auto mode = smdebug::parse_mode(smdebug::text::to_upper(*m));
    if (!mode) throw usage_error("unknown mode '" + *m + "' (TRAIN, EVAL, PREDICT or GLOBAL)");
    return *mode;
}

inline smdebug::Reduction reduction_option(const Args& a, const std::string& option, const std::string& fallback) {
    const auto name = a.value(option).value_or(fallback);
    const auto r = smdebug::parse_reduction(name);
    if (!r) throw usage_error("unknown reduction '" + name + "' (min, max, mean, std, variance, sum, prod, l1, l2)");
    return *r;
}

// The global steps every trial of this run loads, [begin, end) (range_steps): `--steps A:B`,
// `A:` or `:B` on any command, taken out of the arguments by main.
struct StepRangeOption {
    std::optional<std::int64_t> begin, end;
};
inline StepRangeOption& step_range_option() {
    static StepRangeOption range;
    return range;
}
inline StepRangeOption parse_step_range(const std::string& text) {
    const auto colon = text.find(':');
    if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
        throw usage_error("--steps must be A:B, A: or :B (global steps, B excluded), not '" + text + "'");
    StepRangeOption r;
    if (colon > 0) r.begin = parse_int(text.substr(0, colon), "--steps' first step");
    if (colon + 1 < text.size()) r.end = parse_int(text.substr(colon + 1), "--steps' end");
    if ((r.begin && *r.begin < 0) || (r.end && *r.end < 0) || (r.begin && r.end && *r.begin >= *r.end) || (!r.begin && !r.end))
        throw usage_error("--steps must name a non-empty range of non-negative steps, not '" + text + "'");
    return r;
}

// The options every command opens its trials with: no waiting, and --steps.
inline smdebug::TrialOptions cli_trial_options() {
    smdebug::TrialOptions options;
    options.wait_timeout = std::chrono::milliseconds(0);
    options.range_begin = step_range_option().begin;
    options.range_end = step_range_option().end;
    return options;
}

// --requests (any command; main.cpp takes it out of argv): every store the command opens is
// wrapped in a CountingStore, and their counts are summed and printed on stderr at the end.
struct RequestCounting {
    bool enabled = false;
    std::mutex mutex;
    std::vector<smdebug::CountingStore<smdebug::AnyStore>> stores;
};
inline RequestCounting& request_counting() {
    static RequestCounting r;
    return r;
}

// The store behind a trial path (behind the disk cache of --cache), counted when --requests is on.
inline smdebug::AnyStore open_cli_store(const std::string& path) {
    smdebug::AnyStore store = smdebug::open_trial_store(path);
    auto& rc = request_counting();
    if (!rc.enabled) return store;
    smdebug::CountingStore<smdebug::AnyStore> counted(std::move(store));
    std::lock_guard lock(rc.mutex);
    rc.stores.push_back(counted);
    return smdebug::AnyStore(std::move(counted));
}

// A command's trial lives until the process exits and is never destroyed: the command is its last
// user, and the kernel takes back its memory and descriptors at exit faster than its destructors
// would give them back one by one (closing up to 1,000 cached event files and freeing the index:
// 1-3 ms of a 15-100 ms command here). Held from a never-destroyed list, so that LeakSanitizer
// sees it reachable.
// The trial a command opened last: main's error messages look in it for the names and steps
// that do exist ("did you mean", "the last step is").
inline smdebug::Trial<smdebug::AnyStore>*& last_opened_trial() {
    static smdebug::Trial<smdebug::AnyStore>* trial = nullptr;
    return trial;
}
inline smdebug::Trial<smdebug::AnyStore>& kept_until_exit(smdebug::AnyStore store, smdebug::TrialOptions options) {
    static auto* const kept = new std::vector<std::unique_ptr<smdebug::Trial<smdebug::AnyStore>>>();
    kept->push_back(std::make_unique<smdebug::Trial<smdebug::AnyStore>>(std::move(store), std::move(options)));
    last_opened_trial() = kept->back().get();
    return *kept->back();
}

// Applies --wait [SECONDS] to `options`: without it, a path that holds no trial fails at once.
inline void apply_wait_option(const Args& a, smdebug::TrialOptions& options) {
    options.wait_hint = "--wait [SECONDS]";
    if (!a.has(std::string(wait_option))) return;
    options.wait_for_trial = true;
    if (const auto v = a.value(std::string(wait_option))) {
        double seconds = -1;
        const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), seconds);
        if (ec != std::errc() || end != v->data() + v->size() || !(seconds >= 0) || seconds > 1e9)
            throw usage_error("--wait takes a number of seconds, not '" + *v + "'");
        options.wait_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
    }
}

// A trial the command reads through open_cli_store (create_trial's defaults otherwise).
inline smdebug::Trial<smdebug::AnyStore>& open_cli_trial(const std::string& path, smdebug::TrialOptions options) {
    if (!options.name) options.name = smdebug::default_trial_name(path);
    return kept_until_exit(open_cli_store(path), std::move(options));
}

// With --requests: "requests: LIST n, GET n, HEAD n; bytes n" on stderr, summed over the stores
// the command opened (smdebug::format_request_counts); then lets the stores go.
inline void print_request_counts() {
    auto& rc = request_counting();
    if (!rc.enabled) return;
    smdebug::RequestCounts sum;
    {
        std::lock_guard lock(rc.mutex);
        for (const auto& s : rc.stores) {
            const auto c = s.counts();
            sum.list += c.list;
            sum.get += c.get;
            sum.head += c.head;
            sum.bytes += c.bytes;
        }
        rc.stores.clear();
    }
    std::cerr << smdebug::format_request_counts(sum) << "\n";
}

// The store of the trial at `path` (a folder or s3://bucket/prefix; through open_cli_store),
// failing with one clear line when the path does not exist or holds no trial (no index files and
// no collection files). The check lists one key of each folder, not the index.
inline smdebug::AnyStore checked_trial_store(const std::string& path) {
    if (!path.starts_with("s3://")) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) throw usage_error("no such trial folder: " + path);
        if (!std::filesystem::is_directory(path, ec)) throw usage_error("not a trial folder (a file): " + path);
    }
    auto store = open_cli_store(path);
    if (smdebug::list_first(store, "collections/", "", 1).empty() && smdebug::list_first(store, smdebug::paths::index_prefix, "", 1).empty())
        throw usage_error("not a trial (no index/ or collections/ files): " + path);
    return store;
}

// Opens the trial in `store` (from checked_trial_store), or at `path`, with cli_trial_options()
// (kept until the process exits, as kept_until_exit says).
inline smdebug::Trial<smdebug::AnyStore>& open_trial(smdebug::AnyStore store) { return kept_until_exit(std::move(store), cli_trial_options()); }
inline smdebug::Trial<smdebug::AnyStore>& open_trial(const std::string& path) { return open_trial(checked_trial_store(path)); }

// The --other trials of a rule command, each opened with `options` and named by its path.
struct OtherTrials {
    std::vector<std::unique_ptr<smdebug::Trial<smdebug::AnyStore>>> owned;
    std::vector<smdebug::Trial<smdebug::AnyStore>*> pointers;  // what make_rule takes
};
inline OtherTrials open_other_trials(const std::vector<std::string>& paths, const smdebug::TrialOptions& options) {
    OtherTrials out;
    for (const auto& p : paths) {
        smdebug::TrialOptions o = options;
        o.name = smdebug::default_trial_name(p);
        out.owned.push_back(std::make_unique<smdebug::Trial<smdebug::AnyStore>>(open_cli_store(p), o));
        out.pointers.push_back(out.owned.back().get());
    }
    return out;
}

inline std::string the_path(const Args& a, const char* usage_line, std::size_t positional = 1) {
    if (a.positional.size() != positional) throw usage_error(std::string("expected ") + std::to_string(positional) +
                                                             " argument(s)\n" + usage_line);
    return a.positional[0];
}

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

// The length of the valid UTF-8 sequence at s[i] (1-4), or 0 when the byte there does not start one
// (overlong forms, surrogates and code points past U+10FFFF are invalid).
inline std::size_t utf8_sequence(std::string_view s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    std::uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

// Text a trial supplied (names of tensors, workers, collections, paths; messages that quote them),
// made safe for a terminal: valid UTF-8 passes, except control characters (C0, DEL, C1), and every
// byte that is not valid UTF-8, which appear as \xNN; a backslash appears as \\. Nothing a trial
// holds can move the cursor, forge a line or change the terminal.
inline std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    auto hex = [&](unsigned char c) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
    };
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0 || c < 0x20 || c == 0x7F) {
            hex(c);
            ++i;
        } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {  // C1 controls U+0080-U+009F
            hex(c);
            hex(static_cast<unsigned char>(s[i + 1]));
            i += 2;
        } else if (c == '\\') {
            out += "\\\\";
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

// JSON string literal; always valid UTF-8. A byte of `s` that is not part of valid UTF-8 becomes the
// four characters \xNN (in JSON: "\\xNN"), the one escape JSON has no form for.
inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\\\x%02x", c);
            out += buf;
            ++i;
            continue;
        }
        if (n > 1) {
            out.append(s.substr(i, n));
            i += n;
            continue;
        }
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7F) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
        ++i;
    }
    return out + "\"";
}
// JSON number; null for nan and infinities (strict JSON has no literal for them).
inline std::string json_number(double v) { return std::isfinite(v) ? format_double(v) : "null"; }

// One line on stderr in the form every command uses: `smdebug <command>: <message>`.
inline void print_error(std::string_view message) {
    std::cerr << "smdebug" << (current_command().empty() ? "" : " " + current_command()) << ": " << printable(message) << "\n" << std::flush;
}

// "an unknown tensor 'x' in PATH; did you mean ...?" for a name the trial does not hold.
template <class TrialT>
std::string unknown_tensor_message(TrialT& trial, const std::string& name) {
    return "unknown tensor '" + name + "' in " + trial.path() + did_you_mean(name, trial.tensor_names()) +
           " (`smdebug tensors PATH` lists them)";
}
template <class TrialT>
void require_tensor(TrialT& trial, const std::string& name) {
    if (!trial.has_tensor(name)) throw usage_error(unknown_tensor_message(trial, name));
}

// A short list of steps: all of them up to 8, else the first 3, "...", the last 3, and the count.
inline std::string steps_text(const std::vector<std::int64_t>& steps) {
    std::string out;
    const auto add = [&](std::size_t i) {
        if (!out.empty()) out += ", ";
        out += std::to_string(steps[i]);
    };
    if (steps.size() <= 8) {
        for (std::size_t i = 0; i < steps.size(); ++i) add(i);
        return out;
    }
    for (std::size_t i = 0; i < 3; ++i) add(i);
    out += ", ...";
    for (std::size_t i = steps.size() - 3; i < steps.size(); ++i) add(i);
    return out + " (" + std::to_string(steps.size()) + " steps)";
}

// Bytes for a human: "812 B", "19.3 KB", "204.8 MB", "1.20 GB" (powers of 1000, as rates are given).
inline std::string human_bytes(double bytes) {
    static constexpr const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    std::size_t u = 0;
    while (bytes >= 999.95 && u + 1 < std::size(units)) bytes /= 1000, ++u;
    char buf[32];
    if (u == 0) std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[u]);
    else std::snprintf(buf, sizeof buf, bytes < 10 ? "%.2f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

// Natural order of names: runs of digits compare by their number, so `layer2` comes before
// `layer10`; otherwise byte order (and the shorter run of equal numbers, e.g. `01` after `1`).
inline bool natural_less(std::string_view a, std::string_view b) {
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t i0 = i, j0 = j;
            while (i0 < a.size() && a[i0] == '0') ++i0;
            while (j0 < b.size() && b[j0] == '0') ++j0;
            std::size_t i1 = i0, j1 = j0;
            while (i1 < a.size() && digit(a[i1])) ++i1;
            while (j1 < b.size() && digit(b[j1])) ++j1;
            if (i1 - i0 != j1 - j0) return i1 - i0 < j1 - j0;
            if (const auto c = a.substr(i0, i1 - i0).compare(b.substr(j0, j1 - j0)); c != 0) return c < 0;
            if (i1 - i != j1 - j) return i1 - i < j1 - j;
            i = i1, j = j1;
            continue;
        }
        if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
        ++i, ++j;
    }
    return a.size() - i < b.size() - j;
}
inline std::vector<std::string> naturally_sorted(std::vector<std::string> names) {
    std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    return names;
}

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

// "1 step", "2 steps".
inline std::string plural(std::size_t n, std::string_view one, std::string_view many = {}) {
    if (n == 1) return "1 " + std::string(one);
    return std::to_string(n) + " " + (many.empty() ? std::string(one) + "s" : std::string(many));
}

}  // namespace cli
