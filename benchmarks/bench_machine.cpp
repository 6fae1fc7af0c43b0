// The machine's floor for the read path: what the kernel charges for the operations every read
// is made of, measured here rather than assumed (benchmarks/RESULTS.md "Speed, measured" and
// "After the fixes above (openat2, the index scanner, packed relocations)"). Under virtualisation
// these differ by an order of magnitude from bare metal, and they decide which design is fastest:
// a system call per record, a page fault per mapped page, or a fault per fresh page of heap.
//
//   BM_SystemCall               getppid(): the cost of entering and leaving the kernel
//   BM_Fstat                    fstat() of an open descriptor (OpenFileCache's liveness check)
//   BM_Pread/4096, /262144      pread() of page-cached bytes into a warm buffer (GB/s)
//   BM_MappedFirstTouch         the first read of each 4 KiB page of a fresh mapping of a
//                               page-cached file (with and without MAP_POPULATE)
//   BM_MappedWarm               reading the same mapping again (memory bandwidth)
//   BM_FreshHeapPage            the first write to each 4 KiB page of fresh anonymous memory
//   BM_FreshHugePage            the same with MADV_HUGEPAGE (per 4 KiB, to compare)
//
// And the floors of the issue 24/25 targets on trial (a) (1 worker x 1,000 steps x 50 float32
// tensors of 1,024 elements), from files of its sizes — nothing parsed, nothing decoded:
//   BM_TrialIndexFiles/T        open + read + close 1,000 files of 4.2 KiB (its index files) on T
//                               threads: what opening the trial as written costs before parsing
//   BM_TrialEventFiles/T        pread of 1,000 files of 205 KiB whole (its event files, 210 MB)
//                               into one reused buffer per thread, on T threads: what `verify` and
//                               a rule over every value cost before decoding
//   BM_ProcessStart             posix_spawn + wait of /bin/true: what any command costs first
#include <benchmark/benchmark.h>

#include <spawn.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

constexpr std::size_t page = 4096;
constexpr std::size_t file_bytes = std::size_t{64} << 20;

// A 64 MiB file in the temporary folder, written once (so it is in the page cache).
const std::string& cached_file() {
    static const std::string path = [] {
        const auto p = (std::filesystem::temp_directory_path() / ("smdebug-bench-machine-" + std::to_string(::getpid()))).string();
        const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) throw std::runtime_error("cannot create " + p);
        std::vector<char> block(std::size_t{1} << 20, 'x');
        for (std::size_t done = 0; done < file_bytes; done += block.size())
            if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) throw std::runtime_error("cannot write " + p);
        ::close(fd);
        std::atexit([] { std::filesystem::remove(cached_file()); });
        return p;
    }();
    return path;
}

struct Descriptor {
    Descriptor() : fd(::open(cached_file().c_str(), O_RDONLY | O_CLOEXEC)) {
        if (fd < 0) throw std::runtime_error("cannot open " + cached_file());
    }
    ~Descriptor() { ::close(fd); }
    int fd;
};

// Counters: "per_op" — seconds per operation (shown as e.g. 1.8u = 1.8 microseconds); "GB/s".
void per_op(benchmark::State& state, std::size_t ops_per_iteration, std::size_t bytes_per_op = 0) {
    const double ops = static_cast<double>(state.iterations()) * static_cast<double>(ops_per_iteration);
    state.counters["per_op"] = benchmark::Counter(ops, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    if (bytes_per_op)
        state.counters["GB/s"] = benchmark::Counter(ops * static_cast<double>(bytes_per_op) / 1e9, benchmark::Counter::kIsRate);
}

void BM_SystemCall(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(::getppid());
    per_op(state, 1);
}
BENCHMARK(BM_SystemCall);

void BM_Fstat(benchmark::State& state) {
    Descriptor f;
    struct stat st {};
    for (auto _ : state) benchmark::DoNotOptimize(::fstat(f.fd, &st));
    per_op(state, 1);
}
BENCHMARK(BM_Fstat);

void BM_Pread(benchmark::State& state) {
    Descriptor f;
    const auto chunk = static_cast<std::size_t>(state.range(0));
    std::vector<char> buffer(chunk, 0);  // warm: written once before the loop
    std::size_t offset = 0;
    for (auto _ : state) {
        if (::pread(f.fd, buffer.data(), chunk, static_cast<off_t>(offset)) != static_cast<ssize_t>(chunk)) state.SkipWithError("short read");
        offset = (offset + chunk) % file_bytes;
    }
    per_op(state, 1, chunk);
}
BENCHMARK(BM_Pread)->Arg(4096)->Arg(262144);

// Maps the whole file, reads one byte of each page, unmaps: per page.
void BM_MappedFirstTouch(benchmark::State& state) {
    Descriptor f;
    const int flags = MAP_SHARED | (state.range(0) ? MAP_POPULATE : 0);
    std::uint64_t sum = 0;
    for (auto _ : state) {
        auto* p = static_cast<const unsigned char*>(::mmap(nullptr, file_bytes, PROT_READ, flags, f.fd, 0));
        if (p == MAP_FAILED) {
            state.SkipWithError("mmap failed");
            break;
        }
        for (std::size_t o = 0; o < file_bytes; o += page) sum += p[o];
        ::munmap(const_cast<unsigned char*>(p), file_bytes);
    }
    benchmark::DoNotOptimize(sum);
    per_op(state, file_bytes / page, page);
    state.SetLabel(state.range(0) ? "MAP_POPULATE" : "on demand");
}
BENCHMARK(BM_MappedFirstTouch)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_MappedWarm(benchmark::State& state) {
    Descriptor f;
    auto* p = static_cast<const char*>(::mmap(nullptr, file_bytes, PROT_READ, MAP_SHARED | MAP_POPULATE, f.fd, 0));
    std::vector<char> buffer(page);
    for (auto _ : state)
        for (std::size_t o = 0; o < file_bytes; o += page) {
            std::memcpy(buffer.data(), p + o, page);
            benchmark::DoNotOptimize(buffer.data());
        }
    ::munmap(const_cast<char*>(p), file_bytes);
    per_op(state, file_bytes / page, page);
}
BENCHMARK(BM_MappedWarm)->Unit(benchmark::kMillisecond);

// Fresh anonymous memory, one write per 4 KiB page (what a new heap block costs before use).
void BM_FreshHeapPage(benchmark::State& state) {
    constexpr std::size_t bytes = std::size_t{32} << 20;
    const bool huge = state.range(0) != 0;
    for (auto _ : state) {
        void* raw = ::mmap(nullptr, bytes + (std::size_t{2} << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) {
            state.SkipWithError("mmap failed");
            break;
        }
        auto* p = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + (std::uintptr_t{2} << 20) - 1) & ~((std::uintptr_t{2} << 20) - 1));
        ::madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
        for (std::size_t o = 0; o < bytes; o += page) p[o] = 1;
        benchmark::DoNotOptimize(p);
        ::munmap(raw, bytes + (std::size_t{2} << 20));
    }
    per_op(state, bytes / page, page);
    state.SetLabel(huge ? "MADV_HUGEPAGE" : "4 KiB pages");
}
BENCHMARK(BM_FreshHeapPage)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// `count` files of `bytes` each in a temporary folder, written once (so they are in the page
// cache), removed at exit; their open descriptors are not kept.
const std::vector<std::string>& trial_files(const char* name, std::size_t count, std::size_t bytes) {
    static std::vector<std::pair<std::string, std::vector<std::string>>> made;  // (name, files)
    for (const auto& [n, files] : made)
        if (n == name) return files;
    const auto dir = std::filesystem::temp_directory_path() / ("smdebug-bench-machine-" + std::string(name) + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::vector<std::string> files;
    const std::vector<char> content(bytes, 'x');
    for (std::size_t i = 0; i < count; ++i) {
        auto path = (dir / (std::to_string(i) + ".bin")).string();
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || ::write(fd, content.data(), bytes) != static_cast<ssize_t>(bytes)) throw std::runtime_error("cannot write " + path);
        ::close(fd);
        files.push_back(std::move(path));
    }
    static std::vector<std::filesystem::path> dirs;
    if (dirs.empty()) std::atexit([] { for (const auto& d : dirs) std::filesystem::remove_all(d); });
    dirs.push_back(dir);
    made.emplace_back(name, std::move(files));
    return made.back().second;
}

// Reads every file whole on `threads` threads (file i on thread i % threads), each into its own
// reused buffer; `reopen`: open and close each file around its read (else descriptors opened once).
void read_files_on_threads(benchmark::State& state, const std::vector<std::string>& files, std::size_t bytes, bool reopen) {
    const auto threads = static_cast<std::size_t>(state.range(0));
    std::vector<int> fds;
    if (!reopen)
        for (const auto& f : files) fds.push_back(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
    std::vector<std::vector<char>> buffers(threads, std::vector<char>(bytes, 0));
    for (auto _ : state) {
        std::vector<std::thread> workers;
        for (std::size_t t = 0; t < threads; ++t)
            workers.emplace_back([&, t] {
                for (std::size_t i = t; i < files.size(); i += threads) {
                    const int fd = reopen ? ::open(files[i].c_str(), O_RDONLY | O_CLOEXEC) : fds[i];
                    benchmark::DoNotOptimize(::pread(fd, buffers[t].data(), bytes, 0));
                    if (reopen) ::close(fd);
                }
            });
        for (auto& w : workers) w.join();
    }
    for (int fd : fds) ::close(fd);
    per_op(state, files.size(), bytes);
    state.counters["per_1000_files_ms"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(files.size()) / 1000.0 / 1e3,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_TrialIndexFiles(benchmark::State& state) {
    constexpr std::size_t bytes = 4300;
    read_files_on_threads(state, trial_files("index", 1000, bytes), bytes, true);
}
BENCHMARK(BM_TrialIndexFiles)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_TrialEventFiles(benchmark::State& state) {
    constexpr std::size_t bytes = 210'380;
    read_files_on_threads(state, trial_files("events", 1000, bytes), bytes, false);
}
BENCHMARK(BM_TrialEventFiles)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ProcessStart(benchmark::State& state) {
    char program[] = "/bin/true";
    char* argv[] = {program, nullptr};
    char* envp[] = {nullptr};
    for (auto _ : state) {
        pid_t pid = 0;
        if (::posix_spawn(&pid, program, nullptr, nullptr, argv, envp) != 0) {
            state.SkipWithError("posix_spawn failed");
            break;
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
    }
    per_op(state, 1);
}
BENCHMARK(BM_ProcessStart)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
