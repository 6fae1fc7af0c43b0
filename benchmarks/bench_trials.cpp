// Realistic trials (issue 10): the shapes of trial_fixture.hpp — (a) 1000 x 50 x 1024 float32,
// (b) 20 x 4 x 16 Mi float32, (c) 10,000 x 20 scalars — opened and read whole, each figure next
// to a raw read of the same files (open + read + close of every file, as `cat` does).
//
//   bench_trials [--shapes abc] [--dir DIR] [--repeat N] [--s3]   (shape s: (a) cut to 200 steps;
//   shapes m and x: open cost per index entry at 5M and 256k entries, values not read for m)
//
// For each shape: open (collections + every index file, end of training settled), every value
// tensor-major (Tensor::values() per tensor), every value step-major (all tensors of a step at
// once), every mean(abs) (tensor-major values, reduced). Hot page cache: each measurement is the
// best of --repeat runs after one warm-up. Also: heap bytes per index entry (glibc mallinfo2: in use while the
// trial is open, divided by its entries) and the peak RSS of the process.
// --s3: the same shapes uploaded to s3rver (needs SMDEBUG_S3RVER_ENDPOINT: run under
// tests/s3rver/run-with-s3rver.sh): open, every value tensor-major, step-major and value() by
// value() (as Python code reads), reporting ranged GETs and GB/s.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <smdebug/smdebug.hpp>
// Trial<CountingS3> is instantiated here (docs/compile.md "Your own store, rule or template argument").
#include <smdebug/query/impl/batch_reads.ipp>
#include <smdebug/query/impl/tensor.ipp>
#include <smdebug/query/impl/trial.ipp>
#include <smdebug/storage/detail/range_plan.hpp>

#include "trial_fixture.hpp"

namespace fs = std::filesystem;
using namespace smdebug;

namespace {

using Clock = std::chrono::steady_clock;

double best_of(int repeat, const std::function<void()>& run) {
    run();  // warm-up (page cache, allocator)
    double best = 1e300;
    for (int i = 0; i < repeat; ++i) {
        const auto t0 = Clock::now();
        run();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return best;
}

// Every regular file under `dir` whose relative path starts with `prefix`.
std::vector<fs::path> files_under(const fs::path& dir, const std::string& prefix = "") {
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && fs::relative(e.path(), dir).string().starts_with(prefix)) out.push_back(e.path());
    return out;
}

// cat: open, read in 128 KiB chunks, close; returns the bytes read.
std::uint64_t raw_read(const std::vector<fs::path>& files) {
    static std::vector<char> buf(128 << 10);
    std::uint64_t total = 0;
    for (const auto& p : files) {
        const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n;
        while ((n = ::read(fd, buf.data(), buf.size())) > 0) total += static_cast<std::uint64_t>(n);
        ::close(fd);
    }
    return total;
}

long peak_rss_kb() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

void line(const char* shape, const char* what, double secs, double bytes, double raw_gbps, const char* extra = "") {
    const double gbps = bytes / secs / 1e9;
    std::printf("%-6s %-28s %9.2f ms %8.3f GB/s  %6.2fx raw read%s\n", shape, what, secs * 1e3, gbps, gbps / raw_gbps, extra);
    std::fflush(stdout);
}

// Every value of the trial, tensor by tensor; returns the payload bytes.
template <Store S>
std::uint64_t read_tensor_major(Trial<S>& trial, bool reduce, double* checksum) {
    std::uint64_t bytes = 0;
    for (const auto& name : trial.tensor_names()) {
        for (const auto& [step, v] : trial.tensor(name).values()) {
            bytes += v.byte_size();
            if (reduce) *checksum += compute_reduction(v, Reduction::mean, true);
        }
    }
    return bytes;
}

// Every value of the trial, step by step (Trial::values_at: all tensors of one step together).
template <Store S>
std::uint64_t read_step_major(Trial<S>& trial) {
    std::uint64_t bytes = 0;
    const auto names = trial.tensor_names();
    for (auto step : trial.steps())
        for (const auto& [name, v] : trial.values_at(step, names)) bytes += v.byte_size();
    return bytes;
}

// Every value of the trial, value(step) by value(step), tensor by tensor (as Python code reads).
template <Store S>
std::uint64_t read_one_by_one(Trial<S>& trial) {
    std::uint64_t bytes = 0;
    for (const auto& name : trial.tensor_names()) {
        const auto tensor = trial.tensor(name);
        for (auto step : tensor.steps()) bytes += tensor.value(step).byte_size();
    }
    return bytes;
}

std::size_t index_entries(const fs::path& dir) {
    std::size_t n = 0;
    LocalStore store(dir);
    for (const auto& k : store.list("index/", ""))
        n += index_file::parse(store.read(k).text(), k).tensors.size();
    return n;
}

// Heap bytes in use (glibc's count of allocated blocks) held by an open trial, per index entry.
void report_index_memory(const char* s, const fs::path& dir, std::size_t entries) {
    const auto before = ::mallinfo2().uordblks;
    Trial<LocalStore> trial{LocalStore(dir)};
    (void)trial.steps();
    const auto after = ::mallinfo2().uordblks;
    const double heap = static_cast<double>(after - before);
    std::printf("%-6s index: %zu entries, %.0f heap bytes per entry while open\n", s, entries,
                entries ? heap / static_cast<double>(entries) : 0.0);
}

void run_local(const bench::TrialShape& shape, const fs::path& root, int repeat) {
    const fs::path dir = root / (std::string("shape-") + shape.name);
    if (!fs::exists(dir / "training_job_end.ts")) {
        std::printf("writing shape %s into %s ...\n", shape.name, dir.c_str());
        bench::write_trial(dir, shape);
    }
    const auto all_files = files_under(dir);
    const auto index_files = files_under(dir, "index/");
    const auto event_files = files_under(dir, "events/");
    std::uint64_t all_bytes = 0, index_bytes = 0, event_bytes = 0;
    const double t_all = best_of(repeat, [&] { all_bytes = raw_read(all_files); });
    const double t_index = best_of(repeat, [&] { index_bytes = raw_read(index_files); });
    const double t_events = best_of(repeat, [&] { event_bytes = raw_read(event_files); });
    const double payload = static_cast<double>(shape.steps) * shape.tensors * static_cast<double>(shape.elements) * 4;
    const char* s = shape.name;
    std::printf("\nshape %s: %d steps x %d tensors x %zu float32: %zu files, %.1f MB (values %.1f MB)\n", s, shape.steps,
                shape.tensors, shape.elements, all_files.size(), static_cast<double>(all_bytes) / 1e6, payload / 1e6);
    line(s, "raw read, all files", t_all, static_cast<double>(all_bytes), static_cast<double>(all_bytes) / t_all / 1e9);
    const double raw_events = static_cast<double>(event_bytes) / t_events / 1e9;
    const double raw_index = static_cast<double>(index_bytes) / t_index / 1e9;

    const double t_open = best_of(repeat, [&] {
        Trial<LocalStore> trial{LocalStore(dir)};
        (void)trial.steps();
    });
    const std::size_t entries = index_entries(dir);
    char per_entry[96];
    std::snprintf(per_entry, sizeof per_entry, "  [vs raw read of index/; %.3f us per index entry]",
                  entries ? t_open * 1e6 / static_cast<double>(entries) : 0.0);
    line(s, "open (index files)", t_open, static_cast<double>(index_bytes), raw_index, per_entry);
    report_index_memory(s, dir, entries);
    // The index-scale shapes (millions of entries) measure opening; their values are scalars.
    if (entries > 1'000'000) return;

    const double t_tm = best_of(repeat, [&] {
        Trial<LocalStore> trial{LocalStore(dir)};
        (void)read_tensor_major(trial, false, nullptr);
    });
    line(s, "every value, tensor-major", t_tm, payload, raw_events, "  [vs raw read of events/]");

    const double t_sm = best_of(repeat, [&] {
        Trial<LocalStore> trial{LocalStore(dir)};
        (void)read_step_major(trial);
    });
    line(s, "every value, step-major", t_sm, payload, raw_events);

    double checksum = 0;
    const double t_red = best_of(repeat, [&] {
        Trial<LocalStore> trial{LocalStore(dir)};
        (void)read_tensor_major(trial, true, &checksum);
    });
    line(s, "every mean(abs)", t_red, payload, raw_events);

    std::printf("%-6s peak RSS so far %ld MB\n", s, peak_rss_kb() / 1024);
}

// ---- S3 (s3rver) --------------------------------------------------------------------------------

// Counts the ranged GETs an S3Store's read_ranges makes (the same plan it uses).
class CountingS3 {
public:
    CountingS3(S3Store s, std::shared_ptr<std::uint64_t> gets) : s_(std::move(s)), gets_(std::move(gets)) {}
    std::vector<std::string> list(std::string_view p, std::string_view a = {}) const { return s_.list(p, a); }
    ByteBuffer read(std::string_view k) const { return s_.read(k); }
    ByteBuffer read_range(std::string_view k, std::uint64_t o, std::uint64_t n) const {
        ++*gets_;
        return s_.read_range(k, o, n);
    }
    void read_ranges(std::span<const RangeRequest> r, const RangeSink& sink) const {
        *gets_ += detail::plan_fetches(r, {0, 64u << 20}).size();
        s_.read_ranges(r, sink);
    }
    bool exists(std::string_view k) const { return s_.exists(k); }
    std::string describe(std::string_view k) const { return s_.describe(k); }
    static constexpr bool latency_bound() noexcept { return S3Store::latency_bound(); }
    std::optional<std::chrono::system_clock::time_point> last_modified(std::string_view k) const { return s_.last_modified(k); }

private:
    S3Store s_;
    std::shared_ptr<std::uint64_t> gets_;
};

void run_s3(const bench::TrialShape& shape, const fs::path& root, int repeat) {
    const char* endpoint = std::getenv("SMDEBUG_S3RVER_ENDPOINT");
    if (!endpoint) {
        std::fprintf(stderr, "bench_trials --s3: SMDEBUG_S3RVER_ENDPOINT is not set (run under tests/s3rver/run-with-s3rver.sh)\n");
        std::exit(2);
    }
    ::setenv("AWS_ENDPOINT_URL", endpoint, 1);
    ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
    ::setenv("AWS_REGION", "us-east-1", 1);
    const fs::path dir = root / (std::string("shape-") + shape.name);
    if (!fs::exists(dir / "training_job_end.ts")) bench::write_trial(dir, shape);
    const std::string url = std::string("s3://smdebug-test/bench-trials/") + shape.name;
    S3Store s3(url);
    LocalStore local(dir);
    const auto keys = local.list("", "");
    for (const auto& k : keys) s3.write(k, local.read(k).bytes());
    const double payload = static_cast<double>(shape.steps) * shape.tensors * static_cast<double>(shape.elements) * 4;
    std::uint64_t all_bytes = 0;
    const double t_raw = best_of(repeat, [&] {
        all_bytes = 0;
        for (const auto& k : keys) all_bytes += s3.read(k).size();
    });
    const char* s = shape.name;
    std::printf("\nS3 shape %s: %zu objects, %.1f MB\n", s, keys.size(), static_cast<double>(all_bytes) / 1e6);
    const double raw = static_cast<double>(all_bytes) / t_raw / 1e9;
    char extra[96];
    std::snprintf(extra, sizeof extra, "  %.0f GETs/s (one GET per object, sequential)", static_cast<double>(keys.size()) / t_raw);
    line(s, "S3 raw read, all objects", t_raw, static_cast<double>(all_bytes), raw, extra);
    auto gets = std::make_shared<std::uint64_t>(0);
    auto open = [&] {
        TrialOptions o;
        return std::make_unique<Trial<CountingS3>>(CountingS3(S3Store(url), gets), o);
    };
    const double t_open = best_of(repeat, [&] { (void)open()->steps(); });
    std::uint64_t index_bytes = 0;
    for (const auto& p : files_under(dir, "index/")) index_bytes += fs::file_size(p);
    line(s, "S3 open (index objects)", t_open, static_cast<double>(index_bytes), raw);
    static constexpr const char* variants[] = {"S3 every value, tensor-major", "S3 every value, step-major",
                                               "S3 every value(), one by one"};
    for (int variant = 0; variant < 3; ++variant) {
        std::uint64_t gets_per_run = 0;
        const double t = best_of(repeat, [&] {
            auto trial = open();
            *gets = 0;
            if (variant == 0) (void)read_tensor_major(*trial, false, nullptr);
            else if (variant == 1) (void)read_step_major(*trial);
            else (void)read_one_by_one(*trial);
            gets_per_run = *gets;
        });
        std::snprintf(extra, sizeof extra, "  %llu ranged GETs, %.0f/s", static_cast<unsigned long long>(gets_per_run),
                      static_cast<double>(gets_per_run) / t);
        line(s, variants[variant], t, payload, raw, extra);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string shapes = "abc";
    fs::path root = fs::temp_directory_path() / "smdebug-bench-trials";
    int repeat = 3;
    bool s3 = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--shapes" && i + 1 < argc) shapes = argv[++i];
        else if (a == "--dir" && i + 1 < argc) root = argv[++i];
        else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
        else if (a == "--s3") s3 = true;
        else {
            std::fprintf(stderr, "usage: bench_trials [--shapes abc] [--dir DIR] [--repeat N] [--s3]\n");
            return 2;
        }
    }
    for (char c : shapes) {
        const auto* shape = bench::find_shape(std::string(1, c));
        if (!shape) {
            std::fprintf(stderr, "bench_trials: unknown shape '%c'\n", c);
            return 2;
        }
        if (s3) run_s3(*shape, root, repeat);
        else run_local(*shape, root, repeat);
    }
    std::printf("\npeak RSS %ld MB\n", peak_rss_kb() / 1024);
    return 0;
}
