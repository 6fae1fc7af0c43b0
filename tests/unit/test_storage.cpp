// Storage layer: the request-counting and disk-cache wrappers; LocalStore's descriptor cache and batch reads (coalesced, parallel, zero-copy
// slices), files that change under the reader, last-modified times, HTTP dates; and the
// vectorised reductions of core/reductions.hpp against a plain double loop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include <boost/json.hpp>

#include <smdebug/core/reductions.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/storage/any_store.hpp>
#include <smdebug/storage/counting_store.hpp>
#include <smdebug/storage/disk_cache_store.hpp>
#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/s3_store.hpp>
#include <smdebug/query/create_trial.hpp>

#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_storage {

using namespace smdebug;

namespace {

// A file of `n` bytes where byte i is (i * 7 + seed) mod 256.
std::string pattern(std::size_t n, int seed) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + static_cast<std::size_t>(seed)) & 0xff);
    return s;
}

// prefix + decimal i (GCC 12 warns falsely about `"literal" + std::to_string(i)` under -O3).
std::string numbered(const char* prefix, int i) {
    std::string s(prefix);
    s += std::to_string(i);
    return s;
}

std::string text_of(const ByteBuffer& b) { return std::string(b.text()); }

std::size_t open_descriptors() {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        (void)e;
        ++n;
    }
    return n;
}

}  // namespace

TEST_CASE("ByteBuffer slices share their block", "[storage]") {
    auto b = ByteBuffer::copy_of(std::string_view("hello world"));
    auto s = b.slice(6, 5);
    CHECK(s.text() == "world");
    CHECK(s.data() == b.data() + 6);
    CHECK(b.slice(6, 100).text() == "world");  // clamped
    CHECK(b.slice(11, 1).empty());
    b = ByteBuffer();  // the slice keeps the block alive
    CHECK(s.text() == "world");
    ByteBuffer moved = std::move(s);
    CHECK(moved.text() == "world");
    CHECK(s.empty());
}

TEST_CASE("LocalStore::read_ranges reads each range as asked and matches read_range", "[storage]") {
    test::TempDir dir("ranges");
    const auto a = pattern(100000, 1), b = pattern(5000, 2), c = pattern(300, 3);
    dir.write("events/a", a);
    dir.write("events/b", b);
    dir.write("events/c", c);
    LocalReadOptions ro;
    ro.threads = 2;
    ro.parallel_min_bytes = 0;  // exercise the threads on a small batch
    LocalStore store(dir.path, LocalStore::Durability::none, ro);
    std::vector<RangeRequest> reqs = {
        {"events/b", 10, 20},    {"events/a", 0, 12},     {"events/a", 12, 100},   // adjacent
        {"events/a", 50, 100},   {"events/a", 300, 5},    // overlapping; 150 bytes apart
        {"events/a", 90000, 10000},                       // far away
        {"events/c", 0, 300},    {"events/b", 0, 0},      {"events/b", 4990, 10},
    };
    const auto got = store.read_ranges(reqs);
    REQUIRE(got.size() == reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        const auto& src = reqs[i].key == "events/a" ? a : reqs[i].key == "events/b" ? b : c;
        INFO("request " << i);
        CHECK(text_of(got[i]) == src.substr(reqs[i].offset, reqs[i].length));
        CHECK(text_of(got[i]) == text_of(store.read_range(reqs[i].key, reqs[i].offset, reqs[i].length)));
    }
    // Three files, each opened once — a and b, read in several places each, twice at most when both
    // threads miss them at the same moment — and never again however many reads follow.
    const auto opens = store.open_file_stats().opens;
    CHECK(opens >= 3);
    CHECK(opens <= 5);
    (void)store.read_ranges(reqs);
    CHECK(store.open_file_stats().opens == opens);
    CHECK(store.open_file_stats().hits >= 3);
}

TEST_CASE("LocalStore::read_ranges reports missing files and short files with typed errors", "[storage]") {
    test::TempDir dir("ranges-errors");
    dir.write("f", pattern(1000, 4));
    LocalStore store(dir.path, LocalStore::Durability::none);
    const std::vector<RangeRequest> missing = {{"f", 0, 10}, {"nope", 0, 10}};
    CHECK_THROWS_AS(store.read_ranges(missing), ObjectNotFound);
    const std::vector<RangeRequest> beyond = {{"f", 0, 10}, {"f", 990, 20}};
    try {
        (void)store.read_ranges(beyond);
        FAIL("expected TruncatedData");
    } catch (const TruncatedData& e) {
        CHECK_THAT(e.what(), Catch::Contains((dir.path / "f").string()));
    }
}

TEST_CASE("LocalStore's cached descriptors follow files that change under the reader", "[storage]") {
    test::TempDir dir("replace");
    dir.write("f", "first version");
    LocalStore store(dir.path, LocalStore::Durability::none);
    CHECK(text_of(store.read_range("f", 0, 5)) == "first");

    SECTION("replaced by rename: the new file is read") {
        dir.write("g", "other content");
        std::filesystem::rename(dir.path / "g", dir.path / "f");
        CHECK(text_of(store.read_range("f", 0, 5)) == "other");
        const std::vector<RangeRequest> r = {{"f", 6, 7}};
        CHECK(text_of(store.read_ranges(r)[0]) == "content");
    }
    SECTION("removed: ObjectNotFound, not the old bytes") {
        std::filesystem::remove(dir.path / "f");
        CHECK_THROWS_AS(store.read_range("f", 0, 5), ObjectNotFound);
        const std::vector<RangeRequest> r = {{"f", 0, 5}};
        CHECK_THROWS_AS(store.read_ranges(r), ObjectNotFound);
    }
    SECTION("shrunk in place: TruncatedData") {
        std::filesystem::resize_file(dir.path / "f", 3);
        CHECK_THROWS_AS(store.read_range("f", 0, 5), TruncatedData);
        CHECK(text_of(store.read_range("f", 0, 3)) == "fir");
    }
    SECTION("grown in place: the new bytes are read") {
        std::ofstream(dir.path / "f", std::ios::app) << " and more";
        CHECK(text_of(store.read_range("f", 14, 8)) == "and more");
    }
}

TEST_CASE("LocalStore keeps at most open_files descriptors open", "[storage]") {
    test::TempDir dir("bounded");
    for (int i = 0; i < 20; ++i) dir.write(numbered("f", i), pattern(64, i));
    LocalReadOptions ro;
    ro.open_files = 4;
    LocalStore store(dir.path, LocalStore::Durability::none, ro);
    CHECK(store.open_file_capacity() == 4);
    const auto before = open_descriptors();
    std::vector<RangeRequest> reqs;
    for (int i = 0; i < 20; ++i) reqs.push_back({numbered("f", i), 1, 8});
    const auto got = store.read_ranges(reqs);
    for (int i = 0; i < 20; ++i) CHECK(text_of(got[static_cast<std::size_t>(i)]) == pattern(64, i).substr(1, 8));
    CHECK(open_descriptors() <= before + 4 + 1);  // and the root's, which files are opened beneath
    CHECK(store.open_file_stats().opens == 20);
    CHECK(detail::OpenFileCache::default_capacity() >= 4);
}

TEST_CASE("LocalStore with open_files = 0 keeps no descriptor and reads the same bytes", "[storage]") {
    test::TempDir dir("no-fd-cache");
    for (int i = 0; i < 6; ++i) dir.write(numbered("f", i), pattern(4096, i));
    std::vector<RangeRequest> reqs;
    for (int i = 0; i < 6; ++i) reqs.push_back({numbered("f", i), static_cast<std::uint64_t>(100 * (i + 1)), 50});
    LocalReadOptions off;
    off.open_files = 0;
    LocalStore cached(dir.path, LocalStore::Durability::none), uncached(dir.path, LocalStore::Durability::none, off);
    CHECK(cached.open_file_capacity() == detail::OpenFileCache::default_capacity());
    CHECK(uncached.open_file_capacity() == 0);
    const auto before = open_descriptors();
    for (int pass = 0; pass < 2; ++pass) {
        const auto a = cached.read_ranges(reqs), b = uncached.read_ranges(reqs);
        for (std::size_t k = 0; k < reqs.size(); ++k) {
            const auto want = pattern(4096, static_cast<int>(k)).substr(reqs[k].offset, 50);
            CHECK(text_of(a[k]) == want);
            CHECK(text_of(b[k]) == want);
        }
        CHECK(text_of(uncached.read_range(numbered("f", 3), 7, 9)) == pattern(4096, 3).substr(7, 9));
    }
    CHECK(cached.open_file_stats().opens == 6);     // each file once
    CHECK(uncached.open_file_stats().opens == 14);  // each range and each read_range opens its file anew: 2 × (6 + 1)
    CHECK(uncached.open_file_stats().hits == 0);
    CHECK(open_descriptors() <= before + 6 + 2);  // the cached store's six and each store's root (files are opened beneath it); the uncached store keeps no file open
}

TEST_CASE("LocalStore::read_ranges over many files on several threads", "[storage]") {
    test::TempDir dir("parallel");
    std::vector<std::string> contents;
    for (int i = 0; i < 40; ++i) {
        contents.push_back(pattern(40000 + static_cast<std::size_t>(i), i));
        dir.write(numbered("e/", i), contents.back());
    }
    LocalReadOptions ro;
    ro.threads = 3;
    ro.parallel_min_bytes = 0;
    LocalStore store(dir.path, LocalStore::Durability::none, ro);
    std::vector<RangeRequest> reqs;
    for (int i = 0; i < 40; ++i)
        for (std::uint64_t off = 0; off < 40000; off += 4000) reqs.push_back({numbered("e/", i), off, 4000});
    std::shuffle(reqs.begin(), reqs.end(), std::mt19937(5));
    const auto got = store.read_ranges(reqs);
    bool all_equal = true;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        const auto& src = contents[static_cast<std::size_t>(std::stoi(reqs[i].key.substr(2)))];
        all_equal = all_equal && text_of(got[i]) == src.substr(reqs[i].offset, reqs[i].length);
    }
    CHECK(all_equal);
    // Not one open per read (400): the cache keeps one descriptor per file. Threads that start on
    // parts of the same file at the same moment may each open it once, so up to `threads` per file.
    const auto opens = store.open_file_stats().opens;
    CHECK(opens >= 40);
    CHECK(opens <= 40 * ro.threads);
}

TEST_CASE("LocalStore::last_modified is the file's mtime", "[storage]") {
    test::TempDir dir("mtime");
    dir.write("training_job_end.ts", "");
    LocalStore store(dir.path);
    const auto now = std::chrono::system_clock::now();
    const auto t = store.last_modified("training_job_end.ts");
    REQUIRE(t);
    CHECK(std::chrono::abs(*t - now) < std::chrono::seconds(5));
    const timespec times[2] = {{1000000000, 0}, {1000000000, 500000000}};
    REQUIRE(::utimensat(AT_FDCWD, (dir.path / "training_job_end.ts").c_str(), times, 0) == 0);
    const auto old = store.last_modified("training_job_end.ts");
    REQUIRE(old);
    CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(old->time_since_epoch()).count() == 1000000000500LL);
    CHECK_FALSE(store.last_modified("missing"));
    CHECK_FALSE(last_modified(AnyStore(store), "missing"));
    CHECK(last_modified(AnyStore(store), "training_job_end.ts") == old);
}

TEST_CASE("HTTP and ISO 8601 dates", "[storage]") {
    using std::chrono::system_clock;
    const auto t = net::detail::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT");
    REQUIRE(t);
    CHECK(system_clock::to_time_t(*t) == 784111777);
    const auto iso = net::detail::parse_http_date("1994-11-06T08:49:37.000Z");
    REQUIRE(iso);
    CHECK(*iso == *t);
    CHECK_FALSE(net::detail::parse_http_date(""));
    CHECK_FALSE(net::detail::parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"));
    CHECK_FALSE(net::detail::parse_http_date("yesterday"));
}

// ---- reductions (core/reductions.hpp): the SIMD-lane fast path against a sequential double loop

namespace {

template <class T>
double sequential(const std::vector<T>& v, Reduction r, bool abs) {
    std::vector<double> x;
    for (const T& e : v) {
        double d;
        if constexpr (std::is_same_v<T, float16>) d = static_cast<double>(static_cast<float>(e));
        else d = static_cast<double>(e);
        x.push_back(abs ? std::fabs(d) : d);
    }
    const double n = static_cast<double>(x.size());
    double s = 0, p = 1, mn = x[0], mx = x[0], l1 = 0, l2 = 0;
    bool nan = false;
    for (double d : x) {
        s += d; p *= d; l1 += std::fabs(d); l2 += d * d;
        nan |= std::isnan(d);
        mn = std::min(mn, d); mx = std::max(mx, d);
    }
    double ss = 0;
    for (double d : x) ss += (d - s / n) * (d - s / n);
    switch (r) {
        case Reduction::min: return nan ? NAN : mn;
        case Reduction::max: return nan ? NAN : mx;
        case Reduction::mean: return s / n;
        case Reduction::sum: return s;
        case Reduction::prod: return p;
        case Reduction::variance: return ss / n;
        case Reduction::std: return std::sqrt(ss / n);
        case Reduction::l1: return l1;
        case Reduction::l2: return std::sqrt(l2);
    }
    return NAN;
}

template <class T>
void check_all_reductions(const std::vector<T>& v) {
    const auto value = TensorValue::from<T>(std::span<const T>(v.data(), v.size()), {v.size()});
    for (int ri = 0; ri <= static_cast<int>(Reduction::l2); ++ri)
        for (bool abs : {false, true}) {
            const auto r = static_cast<Reduction>(ri);
            const double want = sequential(v, r, abs);
            const double got = compute_reduction(value, r, abs);
            INFO(dtype_name(value.dtype()) << " n=" << v.size() << " " << reduction_name(r) << (abs ? " abs" : ""));
            if (std::isnan(want)) {
                CHECK(std::isnan(got));
            } else if (r == Reduction::min || r == Reduction::max || r == Reduction::prod) {
                CHECK(got == want);  // exact: no summation involved (prod keeps the sequential order)
            } else {
                CHECK(got == Approx(want).epsilon(1e-12).margin(1e-12));
            }
        }
}

}  // namespace

TEST_CASE("Vectorised reductions agree with a sequential double loop", "[reductions]") {
    std::mt19937 rng(11);
    std::normal_distribution<float> dist(0.5f, 3.0f);
    for (std::size_t n : {1u, 3u, 7u, 8u, 9u, 17u, 1000u, 4099u}) {
        std::vector<float> f(n);
        for (auto& x : f) x = dist(rng);
        check_all_reductions(f);
        std::vector<double> d(f.begin(), f.end());
        check_all_reductions(d);
        std::vector<float16> h;
        for (float x : f) h.push_back(float16(x));
        check_all_reductions(h);
        std::vector<std::int32_t> i32;
        for (float x : f) i32.push_back(static_cast<std::int32_t>(x * 1000));
        check_all_reductions(i32);
        std::vector<std::int64_t> i64(i32.begin(), i32.end());
        check_all_reductions(i64);
        std::vector<std::uint8_t> u8;
        for (float x : f) u8.push_back(static_cast<std::uint8_t>(static_cast<int>(std::fabs(x) * 40) & 0xff));
        check_all_reductions(u8);
    }
    const std::vector<bool> bits = {true, false, true, true, false, true, true, true, false, true};
    bool raw[10];
    for (std::size_t i = 0; i < 10; ++i) raw[i] = bits[i];
    const auto bv = TensorValue::from<bool>(std::span<const bool>(raw, 10), {10});
    CHECK(compute_reduction(bv, Reduction::sum) == 7.0);
    CHECK(compute_reduction(bv, Reduction::mean) == 0.7);
    CHECK(compute_reduction(bv, Reduction::min) == 0.0);
}

TEST_CASE("Vectorised reductions propagate NaN from any lane and keep infinities", "[reductions]") {
    for (std::size_t pos : {0u, 5u, 8u, 12u}) {
        std::vector<float> v(13, 1.5f);
        v[pos] = std::numeric_limits<float>::quiet_NaN();
        const auto t = TensorValue::from<float>(v, {13});
        INFO("NaN at " << pos);
        for (auto r : {Reduction::min, Reduction::max, Reduction::sum, Reduction::mean, Reduction::std, Reduction::l2})
            CHECK(std::isnan(compute_reduction(t, r)));
    }
    std::vector<float> inf(9, -2.0f);
    inf[6] = -std::numeric_limits<float>::infinity();
    const auto t = TensorValue::from<float>(inf, {3, 3});
    CHECK(compute_reduction(t, Reduction::min) == -std::numeric_limits<double>::infinity());
    CHECK(compute_reduction(t, Reduction::max) == -2.0);
    CHECK(compute_reduction(t, Reduction::max, true) == std::numeric_limits<double>::infinity());
    // float16 -0 and subnormals widen exactly; abs clears the sign bit only.
    const std::vector<float16> h = {float16::from_bits(0x8000), float16::from_bits(0x0001), float16::from_bits(0xBC00)};
    const auto hv = TensorValue::from<float16>(h, {3});
    CHECK(compute_reduction(hv, Reduction::min) == -1.0);
    CHECK(compute_reduction(hv, Reduction::max) == std::ldexp(1.0, -24));
    CHECK(compute_reduction(hv, Reduction::sum, true) == 1.0 + std::ldexp(1.0, -24));
}

TEST_CASE("read_objects: whole files on several threads, nullopt for missing ones", "[storage]") {
    test::TempDir dir("objects");
    std::vector<std::string> keys;
    for (int i = 0; i < 100; ++i) {
        keys.push_back(numbered("index/", i) + ".json");
        if (i % 10 != 3) dir.write(keys.back(), pattern(static_cast<std::size_t>(i * 13), i));
    }
    LocalStore store(dir.path);
    const auto got = store.read_objects(keys);
    REQUIRE(got.size() == 100);
    for (int i = 0; i < 100; ++i) {
        INFO(keys[static_cast<std::size_t>(i)]);
        const auto& g = got[static_cast<std::size_t>(i)];
        if (i % 10 == 3) CHECK_FALSE(g);
        else REQUIRE((g && text_of(*g) == pattern(static_cast<std::size_t>(i * 13), i)));
    }
    const auto erased = read_objects(AnyStore(store), std::span<const std::string>(keys).first(5));
    CHECK(erased.size() == 5);
    CHECK_FALSE(erased[3]);
    CHECK(text_of(*erased[4]) == pattern(52, 4));
}

// ---------------------------------------------------------------------------------------------
// A trial's files are regular files inside the trial (issue 27, docs/deviations.md D22): a FIFO,
// socket, device or folder where a file should be, and a link out of the trial, are refused at
// once with a FileRefused (a FormatError) naming the path and what it is; nothing blocks.

namespace {

const std::filesystem::path conformance_trial =
    std::filesystem::path(SMDEBUG_TEST_DATA_DIR) / "conformance" / "cases" / "pt_train_eval" / "trial";
const std::string step0_events = "events/000000000000/000000000000_worker_0.tfevents";
const std::string step0_index = "index/000000000/000000000000_worker_0.json";

// A copy of a finished reference-written trial (with or without its end-of-training marker).
void copy_trial(const std::filesystem::path& to, bool ended = true) {
    std::filesystem::copy(conformance_trial, to, std::filesystem::copy_options::recursive);
    if (!ended) std::filesystem::remove(to / "training_job_end.ts");
}

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Makes step 0's index file of a copied trial name `name` as its event file.
void set_step0_event_file_name(const test::TempDir& dir, const std::string& name) {
    std::string text = read_file(dir.path / step0_index);
    const auto at = text.find(step0_events);
    REQUIRE(at != std::string::npos);
    text.replace(at, step0_events.size(), name);
    dir.write(step0_index, text);
}

void make_fifo(const std::filesystem::path& p) {
    std::filesystem::remove(p);
    REQUIRE(::mkfifo(p.c_str(), 0644) == 0);
}

// A listening-less Unix socket bound at `p` (the descriptor is closed; the file stays).
void make_socket(const std::filesystem::path& p) {
    std::filesystem::remove(p);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(p.string().size() < sizeof addr.sun_path);
    std::strcpy(addr.sun_path, p.c_str());
    const int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    ::close(fd);
    REQUIRE(rc == 0);
}

// Runs `f`, which must throw FileRefused whose message contains every string of `needles`.
template <class F>
void require_refused(F&& f, std::initializer_list<std::string> needles) {
    try {
        f();
        FAIL("no FileRefused thrown");
    } catch (const FileRefused& e) {
        for (const auto& n : needles) CHECK_THAT(e.what(), Catch::Matchers::Contains(n));
    }
}

}  // namespace

TEST_CASE("storage: a FIFO, socket, folder or device where a file should be is refused at once", "[storage][special]") {
    test::TempDir dir("special");
    std::filesystem::create_directories(dir.path / "k");
    make_fifo(dir.path / "k/fifo");
    make_socket(dir.path / "k/sock");
    std::filesystem::create_directories(dir.path / "k/folder");
    std::filesystem::create_symlink("/dev/zero", dir.path / "k/zero");
    dir.write("k/plain", "abcdef");
    LocalStore store(dir.path);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"k/fifo", "a FIFO"}, {"k/sock", "a socket"}, {"k/folder", "a folder"}, {"k/zero", "a character device"}};
    for (const auto& [key, kind] : cases) {
        INFO(key);
        const std::string path = (dir.path / key).string();
        require_refused([&] { store.read(key); }, {path, kind});
        require_refused([&] { store.read_range(key, 0, 4); }, {path, kind});
        const std::vector<RangeRequest> batch{{"k/plain", 0, 3}, {key, 0, 4}};
        require_refused([&] { store.read_ranges(batch); }, {path, kind});
        CHECK_THROWS_AS(store.read_objects(std::vector<std::string>{key}), FileRefused);
    }
    CHECK(text_of(store.read("k/plain")) == "abcdef");  // the store is still usable
    // A FIFO planted at a writer's temporary name fails the write at once instead of waiting.
    make_fifo(dir.path / "k/out.tmp");
    CHECK_THROWS_AS(store.write("k/out", std::as_bytes(std::span(std::string_view("x")))), StorageError);
}

TEST_CASE("storage: a file whose links leave the store's root is refused; links inside it are followed", "[storage][special]") {
    test::TempDir outside("outside"), dir("contained");
    const auto secret = outside.write("secret", "not the trial's");
    dir.write("real/data", "inside");
    std::filesystem::create_directories(dir.path / "k");
    std::filesystem::create_symlink(secret, dir.path / "k/out");
    std::filesystem::create_symlink(dir.path / "real/data", dir.path / "k/in_absolute");
    std::filesystem::create_symlink("../real/data", dir.path / "k/in_relative");
    std::filesystem::create_symlink(outside.path, dir.path / "linked_folder");
    LocalStore store(dir.path);
    require_refused([&] { store.read("k/out"); }, {"k/out", "outside the trial root", secret});
    require_refused([&] { store.read_range("k/out", 0, 3); }, {"outside the trial root"});
    require_refused([&] { store.read("linked_folder/secret"); }, {"outside the trial root"});
    CHECK(text_of(store.read("k/in_absolute")) == "inside");
    CHECK(text_of(store.read_range("k/in_relative", 1, 3)) == "nsi");
    // Relative links that climb out of the root, however they get there, are refused too.
    std::filesystem::create_symlink("../../" + outside.path.filename().string() + "/secret", dir.path / "k/out_relative");
    require_refused([&] { store.read("k/out_relative"); }, {"outside the trial root"});
    require_refused([&] { store.read_range("k/out_relative", 0, 3); }, {"outside the trial root"});
    // Plain files and links that stay below the root are opened by the kernel's RESOLVE_BENEATH
    // (openat2, no check after the open); the absolute link above took the checked path.
    const auto beneath = store.beneath_opens();
    CHECK(beneath >= 1);
    CHECK(text_of(store.read("real/data")) == "inside");
    CHECK(store.beneath_opens() == beneath + 1);
    // A root folder removed and made again is opened again.
    std::filesystem::rename(dir.path / "real", outside.path / "real_moved");
    std::filesystem::rename(dir.path, outside.path / "old_root");
    std::filesystem::create_directories(dir.path / "real");
    dir.write("real/data", "renewed");
    CHECK(text_of(store.read("real/data")) == "renewed");
    CHECK(text_of(store.read("real/data")) == "renewed");
    CHECK(store.beneath_opens() == beneath + 2);
    std::filesystem::remove_all(dir.path);
    std::filesystem::rename(outside.path / "old_root", dir.path);
    std::filesystem::rename(outside.path / "real_moved", dir.path / "real");
    // A trial root reached through a link is its resolved folder.
    std::filesystem::create_symlink(dir.path, outside.path / "alias");
    CHECK(text_of(LocalStore(outside.path / "alias").read("k/in_relative")) == "inside");
    // Opt-out for trials whose folders are links to other disks.
    LocalStore permissive(dir.path, LocalStore::Durability::fsync, LocalReadOptions{.allow_links_out_of_root = true});
    CHECK(text_of(permissive.read("k/out")) == "not the trial's");
    CHECK(text_of(permissive.read_range("linked_folder/secret", 4, 3)) == "the");
}

TEST_CASE("storage: an event_file_name outside the trial's events/ folder is refused before any file is opened", "[storage][special]") {
    const std::vector<std::pair<std::string, std::string>> names = {
        {"/etc/passwd", "absolute path"},
        {"events/../../../../etc/passwd", "'..'"},
        {"events/000000000000/../../index/000000000/000000000000_worker_0.json", "'..'"},
        {"other/000000000000_worker_0.tfevents", "not under the trial's events/"},
        {"events//000000000000_worker_0.tfevents", "empty path component"},
        {"events/./000000000000/000000000000_worker_0.tfevents", "'.'"}};
    for (const auto& [name, why] : names) {
        INFO(name);
        test::TempDir dir("containment");
        copy_trial(dir.path);
        const auto index_path = dir.path / step0_index;
        set_step0_event_file_name(dir, name);
        try {
            create_trial(dir.path.string());
            FAIL("the trial opened");
        } catch (const FormatError& e) {
            CHECK_THAT(e.what(), Catch::Matchers::Contains(index_path.string()));
            CHECK_THAT(e.what(), Catch::Matchers::Contains(why));
            if (!name.empty()) CHECK_THAT(e.what(), Catch::Matchers::Contains(name));
        }
    }
}

TEST_CASE("storage: an index entry pointing at another tensor's record is a RecordMismatch, not its values (D24)", "[storage][special]") {
    test::TempDir dir("record-identity");
    copy_trial(dir.path);
    const auto index_path = dir.path / step0_index;
    std::string text = read_file(index_path);
    auto doc = boost::json::parse(text);
    auto& payload = doc.at("tensor_payload").as_array();
    REQUIRE(payload.size() >= 2);
    auto& a = payload[0].as_object();
    auto& b = payload[1].as_object();
    const std::string name_a(a.at("tensorname").as_string()), name_b(b.at("tensorname").as_string());
    {
        auto good = create_trial(dir.path.string());
        CHECK(good.tensor(name_a).value(0).size() > 0);  // as written, it reads
    }
    std::swap(a["start_idx"], b["start_idx"]);
    std::swap(a["length"], b["length"]);
    dir.write(step0_index, boost::json::serialize(doc));
    auto trial = create_trial(dir.path.string());
    for (const auto& [asked, held] : {std::pair{name_a, name_b}, std::pair{name_b, name_a}}) {
        INFO(asked);
        try {
            trial.tensor(asked).value(0);
            FAIL("another tensor's record was returned under the asked name");
        } catch (const RecordMismatch& e) {
            CHECK_THAT(e.what(), Catch::Matchers::Contains("'" + held + "'"));
            CHECK_THAT(e.what(), Catch::Matchers::Contains("asked for tensor '" + asked + "' of step 0"));  // what the user asked
            CHECK_THAT(e.what(), Catch::Matchers::Contains(step0_events));
        }
    }
    // Batched reads (values(), a step of many tensors) refuse it too; the other steps read.
    CHECK_THROWS_AS(trial.values_at(0, std::vector<std::string>{name_a, name_b}), RecordMismatch);
    // A batch's error is the record's own, carried with its request: it names what was asked, where.
    const auto results = trial.read(std::vector<ValueRequest>{{name_a, 0}, {name_b, 0}});
    for (const auto& [k, asked, held] : {std::tuple{0, name_a, name_b}, std::tuple{1, name_b, name_a}}) {
        INFO(asked);
        CHECK_THROWS_AS(results[k].get(), RecordMismatch);
        CHECK_THROWS_WITH(results[k].get(), Catch::Matchers::Contains("asked for tensor '" + asked + "' of step 0") &&
                                                Catch::Matchers::Contains("holds tensor '" + held + "'") &&
                                                Catch::Matchers::Contains(step0_events));
    }
    const auto steps = trial.tensor(name_a).steps();
    REQUIRE(steps.size() > 1);
    CHECK(trial.tensor(name_a).value(steps[1]).size() > 0);
#ifdef SMDEBUG_BIN_DIR
    const auto r = test::run_cli("verify " + test::shell_quote(dir.path.string()));
    CHECK(r.status == 1);
    CHECK_THAT(r.out + r.err, Catch::Matchers::Contains("'" + name_b + "'"));
    CHECK_THAT(r.err, Catch::Matchers::Contains("asked for tensor '" + name_a + "' of step 0"));
    // `smdebug value PATH NAME 0` names the tensor and step asked for, the file, and what it found
    const auto v = test::run_cli("value " + test::shell_quote(dir.path.string()) + " " + test::shell_quote(name_a) + " 0");
    CHECK(v.status != 0);
    CHECK_THAT(v.err, Catch::Matchers::Contains("asked for tensor '" + name_a + "' of step 0"));
    CHECK_THAT(v.err, Catch::Matchers::Contains("holds tensor '" + name_b + "'"));
    CHECK_THAT(v.err, Catch::Matchers::Contains(step0_events));
#endif
}

TEST_CASE("storage: an index entry claiming a huge record is checked by its 12-byte header, not read", "[storage][special]") {
    using namespace std::chrono_literals;
    test::TempDir dir("huge-entry");
    copy_trial(dir.path);
    // A sparse 1 GiB event file (no disk used) and an index entry claiming a 1 GiB record in it.
    const std::string sparse = "events/000000000000/000000000000_worker_9.tfevents";
    std::filesystem::create_directories((dir.path / sparse).parent_path());
    { std::ofstream(dir.path / sparse, std::ios::binary); }
    std::filesystem::resize_file(dir.path / sparse, std::uint64_t{1} << 30);
    const std::uint64_t claimed = (std::uint64_t{1} << 30) - 64;
    dir.write("index/000000000/000000000000_worker_9.json",
              R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": ")" + sparse +
                  R"("}, "tensor_payload": [{"tensorname": "huge", "start_idx": 0, "length": )" + std::to_string(claimed) +
                  R"(}], "shape_payload": []})");
    // the trial names one worker in its collection files; the extra index file still loads
    auto trial = create_trial(dir.path.string());
    REQUIRE(trial.has_tensor("huge"));
    const auto start = std::chrono::steady_clock::now();
    try {
        trial.tensor("huge").value(0, StepQuery{Mode::GLOBAL, "worker_9"});
        FAIL("a record was decoded from a sparse file of zeros");
    } catch (const RecordCorrupted& e) {
        CHECK_THAT(e.what(), Catch::Matchers::Contains(sparse));
        CHECK_THAT(e.what(), Catch::Matchers::Contains("CRC"));  // zeros: the header's own CRC fails
    }
    // Batched: the header batch refuses it before any payload is planned.
    std::vector<Tensor<AnyStore>> tensors{trial.tensor("huge")};
    CHECK_THROWS_AS(Tensor<AnyStore>::values_at(tensors, 0, StepQuery{Mode::GLOBAL, "worker_9"}), RecordCorrupted);
    CHECK(std::chrono::steady_clock::now() - start < 5s);  // reading 1 GiB of zeros twice takes longer here
}

TEST_CASE("storage: an index file's size and tensor names are bounded by documented, raisable limits", "[storage][special]") {
    const std::string big_name(20000, 'n');
    const std::string text = R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "events/000000000000/000000000000_worker_0.tfevents"}, "tensor_payload": [{"tensorname": ")" +
                             big_name + R"(", "start_idx": 0, "length": 100}], "shape_payload": []})";
    try {
        (void)index_file::parse(text, "idx.json");
        FAIL("a 20,000-byte tensor name passed the default limit");
    } catch (const FormatError& e) {
        CHECK_THAT(e.what(), Catch::Matchers::Contains("idx.json"));
        CHECK_THAT(e.what(), Catch::Matchers::Contains("max_tensor_name_bytes"));
    }
    CHECK(index_file::parse(text, "idx.json", {std::size_t{64} << 20, 32768}).tensors.at(0).name == big_name);
    try {
        (void)index_file::parse(text, "idx.json", {1000, 32768});
        FAIL("a file over max_file_bytes parsed");
    } catch (const FormatError& e) {
        CHECK_THAT(e.what(), Catch::Matchers::Contains("max_index_file_bytes"));
    }
    // Through a Trial: the limit is TrialOptions'.
    TrialOptions small;
    small.max_index_file_bytes = 64;
    try {
        create_trial(conformance_trial.string(), small).steps();
        FAIL("index files over 64 bytes were read");
    } catch (const FormatError& e) {
        CHECK_THAT(e.what(), Catch::Matchers::Contains("index/"));
        CHECK_THAT(e.what(), Catch::Matchers::Contains("max_index_file_bytes"));
    }
    CHECK(!create_trial(conformance_trial.string()).steps().empty());
}

TEST_CASE("storage: an empty event_file_name lays out steps; reading one of its records is refused", "[storage][special]") {
    test::TempDir dir("containment-empty");
    copy_trial(dir.path);
    set_step0_event_file_name(dir, "");
    auto trial = create_trial(dir.path.string());
    const auto steps = trial.steps();
    REQUIRE(steps.size() > 1);
    CHECK(steps.front() == 0);
    CHECK(!trial.tensor_names({.step = 0}).empty());
    try {
        trial.tensor("MLP_fc1.weight").value(0);
        FAIL("a record of an index file without an event file was read");
    } catch (const FileRefused& e) {
        CHECK_THAT(e.what(), Catch::Matchers::Contains("names no event file"));
    }
    const auto tensor_steps = trial.tensor("MLP_fc1.weight").steps();
    REQUIRE(tensor_steps.size() > 1);
    CHECK(trial.tensor("MLP_fc1.weight").value(tensor_steps[1]).size() > 0);
}

TEST_CASE("storage: special files and links out of a trial, through a Trial, finished and live", "[storage][special]") {
    using namespace std::chrono_literals;
    TrialOptions fast;
    fast.poll_interval = 20ms;
    fast.training_end_delay_refresh = 0ms;
    fast.missing_event_file_retry_limit = 3;
    for (const bool ended : {true, false}) {
        INFO("training ended: " << ended);
        SECTION("an event file that is a FIFO") {
            test::TempDir dir("special-trial");
            copy_trial(dir.path, ended);
            make_fifo(dir.path / step0_events);
            auto trial = create_trial(dir.path.string(), fast);
            require_refused([&] { trial.tensor("MLP_fc1.weight").value(0); }, {step0_events, "a FIFO"});
            const auto steps = trial.tensor("MLP_fc1.weight").steps();
            REQUIRE(steps.size() > 1);
            CHECK(trial.tensor("MLP_fc1.weight").value(steps[1]).size() > 0);  // other steps read as before
        }
        SECTION("an event file linked to a file outside the trial") {
            test::TempDir dir("special-trial"), outside("outside");
            copy_trial(dir.path, ended);
            std::filesystem::copy_file(dir.path / step0_events, outside.path / "copy.tfevents");
            std::filesystem::remove(dir.path / step0_events);
            std::filesystem::create_symlink(outside.path / "copy.tfevents", dir.path / step0_events);
            auto trial = create_trial(dir.path.string(), fast);
            require_refused([&] { trial.tensor("MLP_fc1.weight").value(0); }, {step0_events, "outside the trial root"});
        }
        SECTION("an index file that appears as a FIFO while the trial is followed") {
            test::TempDir dir("special-trial");
            copy_trial(dir.path, ended);
            const auto later = dir.path / "index/000000000/000000000099_worker_0.json";
            auto trial = create_trial(dir.path.string(), fast);
            CHECK(trial.steps().size() > 0);
            make_fifo(later);
            require_refused([&] { trial.refresh_data(); }, {later.string(), "a FIFO"});
        }
    }
}

#ifdef SMDEBUG_BIN_DIR
TEST_CASE("storage: value, verify and watch end at once with a clear error on a trial holding a FIFO", "[storage][special][cli]") {
    const std::string cli = test::shell_quote(std::string(SMDEBUG_BIN_DIR) + "/smdebug");
    test::TempDir dir("special-cli");
    copy_trial(dir.path);
    make_fifo(dir.path / step0_events);
    const std::string trial = test::shell_quote(dir.path.string());
    for (const std::string& command : {"value " + trial + " MLP_fc1.weight 0", "verify " + trial, "watch " + trial + " --tensor MLP_fc1.weight --reduce mean"}) {
        INFO(command);
        const auto start = std::chrono::steady_clock::now();
        const auto r = test::run_shell("timeout 20 " + cli + " " + command);
        const auto took = std::chrono::steady_clock::now() - start;
        CHECK(r.status != 0);
        CHECK(r.status != 124);  // not ended by timeout(1)
        CHECK(took < std::chrono::seconds(10));
        CHECK_THAT(r.err + r.out, Catch::Matchers::Contains("a FIFO"));
        CHECK_THAT(r.err + r.out, Catch::Matchers::Contains("000000000000_worker_0.tfevents"));
    }
}
#endif

TEST_CASE("storage: a folder that cannot be listed is a StorageError, never an empty trial", "[storage][special]") {
    // Tests run as root, where permissions deny nothing: a link loop (ELOOP) stands for every
    // error other than "not found" (EACCES, EIO, ...), which take the same path.
    SECTION("the index folder") {
        test::TempDir dir("unlistable");
        copy_trial(dir.path);
        std::filesystem::remove_all(dir.path / "index");
        std::filesystem::create_symlink("index", dir.path / "index");
        try {
            LocalStore(dir.path).list("index/");
            FAIL("listed");
        } catch (const StorageError& e) {
            CHECK_THAT(e.what(), Catch::Matchers::Contains((dir.path / "index").string()));
        }
        CHECK_THROWS_AS(create_trial(dir.path.string()), StorageError);
#ifdef SMDEBUG_BIN_DIR
        const auto r = test::run_shell(test::shell_quote(std::string(SMDEBUG_BIN_DIR) + "/smdebug") + " verify " +
                                       test::shell_quote(dir.path.string()));
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Catch::Matchers::Contains("index"));
#endif
    }
    SECTION("a bucket below it") {
        test::TempDir dir("unlistable");
        copy_trial(dir.path);
        std::filesystem::remove_all(dir.path / "index/000000000");
        std::filesystem::create_symlink("000000000", dir.path / "index/000000000");
        try {
            LocalStore(dir.path).list("index/");
            FAIL("listed");
        } catch (const StorageError& e) {
            CHECK_THAT(e.what(), Catch::Matchers::Contains("index/000000000"));
        }
    }
    SECTION("missing folders and dangling links are still no keys") {
        test::TempDir dir("unlistable");
        LocalStore store(dir.path);
        CHECK(store.list("index/").empty());
        std::filesystem::create_directories(dir.path / "index");
        std::filesystem::create_symlink("nowhere", dir.path / "index/dangling.json");
        CHECK(store.list("index/") == std::vector<std::string>{"index/dangling.json"});
        CHECK_THROWS_AS(store.read("index/dangling.json"), ObjectNotFound);
        CHECK(LocalStore(dir.path / "absent").list("").empty());
    }
}

// ---- request counting (storage/counting_store.hpp) -----------------------------------------------

static_assert(BatchReadStore<CountingStore<LocalStore>> && BatchObjectStore<CountingStore<LocalStore>>);
static_assert(LocalRootStore<CountingStore<LocalStore>> && TimestampedStore<CountingStore<LocalStore>>);
static_assert(WritableStore<CountingStore<LocalStore>> && !LatencyBoundStore<CountingStore<LocalStore>>);
static_assert(LatencyBoundStore<CountingStore<S3Store>> && BatchReadStore<CountingStore<S3Store>>);
static_assert(RequestCountingStore<CountingStore<LocalStore>> && LocalRootStore<CountingStore<AnyStore>>);
static_assert(!LocalRootStore<CountingStore<S3Store>> && !RequestCountingStore<LocalStore>);

namespace {

// The requests of opening pt_train_eval (21 steps, one worker), reading one value and then every
// step of another tensor, through `store`; each phase's counts against `expected`.
template <class S>
void check_request_phases(const CountingStore<S>& store, const std::vector<RequestCounts>& expected, bool exact_bytes) {
    TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    RequestCounts last = store.counts();
    std::size_t phase = 0;
    const auto check_phase = [&](const char* what) {
        const RequestCounts now = store.counts();
        RequestCounts d = now - last;
        last = now;
        INFO(what << ": " << format_request_counts(d));
        RequestCounts want = expected.at(phase++);
        if (!exact_bytes) {
            CHECK(d.bytes >= want.bytes);  // HTTP bodies: the data plus the listings' XML
            d.bytes = want.bytes;
        }
        CHECK(d == want);
    };
    Trial<CountingStore<S>> t(store, o);
    check_phase("open");
    CHECK(t.tensor("MLP_fc1.bias").value(0).shape() == Shape{12});
    check_phase("one value");
    CHECK(t.tensor("MLP_fc2.bias").values().size() == 9);
    check_phase("values() of one tensor");
}

}  // namespace

TEST_CASE("CountingStore: exact requests of open, one value and values() over a local trial", "[storage][requests]") {
    CountingStore<LocalStore> store(LocalStore(conformance_trial.string()));
    const CountingStore<LocalStore> copy = store;  // copies share their counters
    // open: list collections/ and index/, read the collections file and the 21 index files, check
    // training_job_end.ts; one value: one record; values(): a refresh (2 lists, 2 checks of the
    // end marker) and the 9 records.
    check_request_phases(store, {{2, 22, 1, 60864}, {0, 1, 0, 149}, {2, 9, 2, 1205}}, true);
    CHECK(copy.counts() == RequestCounts{4, 32, 3, 62218});
    CHECK(copy.store_calls() == copy.counts());
    CHECK(format_request_counts(copy.counts()) == "requests: LIST 4, GET 32, HEAD 3; bytes 62218");
}

TEST_CASE("s3rver: CountingStore counts HTTP requests: listing pages, coalesced GETs", "[s3rver][requests]") {
    const char* endpoint = std::getenv("SMDEBUG_S3RVER_ENDPOINT");
    if (!endpoint || !*endpoint)
        FAIL("SMDEBUG_S3RVER_ENDPOINT is not set: run this case under tests/s3rver/run-with-s3rver.sh (CTest: s3rver.s3store)");
    test::ScopedEnv e1("AWS_ENDPOINT_URL", endpoint), e2("AWS_ACCESS_KEY_ID", "S3RVER"), e3("AWS_SECRET_ACCESS_KEY", "S3RVER"),
        e4("AWS_REGION", "us-east-1"), e5("AWS_PROFILE", nullptr), e6("AWS_SESSION_TOKEN", nullptr);
    const std::string url = "s3://smdebug-test/requests-" + std::to_string(::getpid()) + "-" +
                            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    const LocalStore local(conformance_trial.string());
    {
        const S3Store up(url);
        for (const auto& k : local.list("")) up.write(k, local.read(k).bytes());
    }
    // The end marker settles (it is a second old; s3rver's Last-Modified has whole seconds) before
    // the trial is opened, so no listing is confirmed by a second one: the counts do not depend on
    // how long the upload took.
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));
    S3StoreOptions so;
    so.client.list_page_size = 5;  // 21 index files: 5 ListObjectsV2 pages per listing of index/
    CountingStore<S3Store> store(S3Store(url, so));
    // open: 4 listing calls of 8 pages in all (one of manifest/, which is empty); the event-file
    // cache makes one GET of step 0's file serve the value, and values() costs 8 GETs for 9 steps
    // (step 0's record was kept).
    check_request_phases(store, {{8, 22, 1, 60864}, {0, 1, 0, 7818}, {2, 8, 2, 49722}}, false);
    CHECK(store.store_calls() == RequestCounts{6, 31, 3, 117750});  // what the Trial asked for

    // A batched read of neighbouring ranges is one GET; one listing call of 21 keys is 5 LISTs.
    const RequestCounts before = store.counts();
    const std::string key = "events/000000000000/000000000000_worker_0.tfevents";
    const std::vector<RangeRequest> reqs = {{key, 0, 10}, {key, 10, 20}, {key, 30, 5}};
    const auto got = store.read_ranges(reqs);
    CHECK(got[1].text() == local.read_range(key, 10, 20).text());
    CHECK(store.list("index/").size() == 21);
    const RequestCounts d = store.counts() - before;
    CHECK(d.list == 5);
    CHECK(d.get == 1);
    CHECK(d.head == 0);
    CHECK(store.inner().client().request_counts().put == 0);  // the upload used its own client
}

// ---- the disk cache (storage/disk_cache_store.hpp) --------------------------------------------------

namespace {

// An object store in memory that lists with sizes and ETags as S3 does, counting its requests.
class MemoryRemote {
public:
    std::shared_ptr<std::map<std::string, std::string>> objects = std::make_shared<std::map<std::string, std::string>>();
    std::shared_ptr<std::atomic<int>> gets = std::make_shared<std::atomic<int>>(0), lists = std::make_shared<std::atomic<int>>(0);

    std::optional<std::vector<ObjectInfo>> list_info(std::string_view prefix, std::string_view after, std::size_t max_keys) const {
        ++*lists;
        std::vector<ObjectInfo> out;
        for (const auto& [k, v] : *objects)
            if (k.starts_with(prefix) && (after.empty() || k > after) && (max_keys == 0 || out.size() < max_keys))
                out.push_back({k, v.size(), "\"" + std::to_string(crc32c(v)) + "\""});
        return out;
    }
    std::vector<std::string> list(std::string_view prefix, std::string_view after = {}) const {
        std::vector<std::string> keys;
        auto infos = list_info(prefix, after, 0);
        for (auto& i : *infos) keys.push_back(std::move(i.key));
        return keys;
    }
    ByteBuffer read(std::string_view key) const {
        ++*gets;
        const auto it = objects->find(std::string(key));
        if (it == objects->end()) throw ObjectNotFound("no such object: " + describe(key));
        return ByteBuffer::copy_of(std::string_view(it->second));
    }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        const ByteBuffer all = read(key);
        if (offset + length > all.size()) throw TruncatedData(describe(key) + ": short");
        return all.slice(offset, length);
    }
    bool exists(std::string_view key) const { return objects->contains(std::string(key)); }
    std::string describe(std::string_view key) const { return "mem://bucket/" + std::string(key); }
    static constexpr bool latency_bound() noexcept { return true; }
};
static_assert(ObjectInfoListingStore<MemoryRemote> && LatencyBoundStore<DiskCacheStore<MemoryRemote>>);
static_assert(BatchReadStore<DiskCacheStore<MemoryRemote>> && BatchObjectStore<DiskCacheStore<MemoryRemote>>);

DiskCacheOptions cache_in(const test::TempDir& dir, std::uint64_t max_bytes = default_cache_max_bytes) {
    DiskCacheOptions o;
    o.dir = dir.path;
    o.max_bytes = max_bytes;
    o.cacheable = [](std::string_view k) { return !k.starts_with("other/"); };
    return o;
}

std::vector<std::filesystem::path> cache_files(const test::TempDir& dir) {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path))
        if (e.is_regular_file()) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

std::uint64_t folder_bytes(const test::TempDir& dir) {
    std::uint64_t n = 0;
    for (const auto& f : cache_files(dir)) n += std::filesystem::file_size(f);
    return n;
}

}  // namespace

TEST_CASE("DiskCacheStore: a second cache object on the folder answers from disk; other keys pass through", "[storage][cache]") {
    test::TempDir dir("cache");
    MemoryRemote remote;
    (*remote.objects)["events/1/a"] = pattern(5000, 1);
    (*remote.objects)["events/2/b"] = pattern(3000, 2);
    (*remote.objects)["index/x.json"] = "{\"index\": 1}";
    (*remote.objects)["other/y"] = "never cached";
    {
        DiskCacheStore<MemoryRemote> c1(remote, cache_in(dir));
        CHECK(c1.list("index/") == std::vector<std::string>{"index/x.json"});
        CHECK(c1.read("index/x.json").text() == "{\"index\": 1}");                       // listed: cached
        CHECK(c1.read_range("events/1/a", 100, 50).text() == pattern(5000, 1).substr(100, 50));  // one listing page from the key
        CHECK(*remote.gets == 2);
        CHECK(*remote.lists == 2);  // index/, then events/ from events/1/a on (which showed events/2/b too)
        CHECK(c1.read_range("events/2/b", 0, 10).text() == pattern(3000, 2).substr(0, 10));
        CHECK(*remote.lists == 2);
        CHECK(c1.stats().stored == 3);
        CHECK(c1.read("other/y").text() == "never cached");
        CHECK(c1.read("other/y").text() == "never cached");
        CHECK(*remote.gets == 5);
        CHECK_THROWS_AS(c1.read("events/3/missing"), ObjectNotFound);
    }
    CHECK(cache_files(dir).size() == 3);
    const int gets = *remote.gets;
    DiskCacheStore<MemoryRemote> c2(remote, cache_in(dir));
    CHECK(c2.list("index/").size() == 1);
    CHECK(c2.read("index/x.json").text() == "{\"index\": 1}");
    CHECK(c2.read_range("events/1/a", 4990, 10).text() == pattern(5000, 1).substr(4990, 10));
    const std::vector<RangeRequest> reqs = {{"events/1/a", 0, 7}, {"events/2/b", 5, 5}, {"events/1/a", 7, 0}, {"events/1/a", 3, 100}, {"other/y", 1, 3}};
    const auto got = c2.read_ranges(reqs);
    CHECK(got[0].text() == pattern(5000, 1).substr(0, 7));
    CHECK(got[1].text() == pattern(3000, 2).substr(5, 5));
    CHECK(got[2].empty());
    CHECK(got[3].text() == pattern(5000, 1).substr(3, 100));
    CHECK(got[4].text() == "eve");
    const std::vector<std::string> keys = {"events/2/b", "index/x.json", "events/9/none"};
    const auto objects = c2.read_objects(keys);
    CHECK(objects[0]->text() == pattern(3000, 2));
    CHECK(objects[1]->text() == "{\"index\": 1}");
    CHECK_FALSE(objects[2].has_value());
    CHECK(*remote.gets == gets + 2);  // other/y and the missing key: nothing cached was fetched again
    CHECK(c2.stats().hits >= 5);
    CHECK_THROWS_AS(c2.read_range("events/1/a", 4990, 20), TruncatedData);

    // A rewritten object has another ETag: the new bytes, never the cached old ones.
    (*remote.objects)["index/x.json"] = "{\"index\": 2}";
    DiskCacheStore<MemoryRemote> c3(remote, cache_in(dir));
    CHECK(c3.list("index/").size() == 1);
    CHECK(c3.read("index/x.json").text() == "{\"index\": 2}");
    CHECK_THROWS_AS((DiskCacheStore<MemoryRemote>(remote, cache_in(dir)).read("index/nope")), ObjectNotFound);
    // a cache folder that cannot be made is an error naming it
    const auto file = dir.write("plain-file", "x");
    DiskCacheOptions bad = cache_in(dir);
    bad.dir = std::filesystem::path(file) / "sub";
    CHECK_THROWS_WITH((DiskCacheStore<MemoryRemote>(remote, bad)), Catch::Matchers::Contains(bad.dir.string()));
}

TEST_CASE("DiskCacheStore: a corrupt or truncated entry is removed and fetched again, never returned", "[storage][cache]") {
    test::TempDir dir("cache-corrupt");
    MemoryRemote remote;
    for (int i = 0; i < 4; ++i) (*remote.objects)[numbered("events/0/f", i)] = pattern(2000 + static_cast<std::size_t>(i), i);
    const auto read_all = [&](const DiskCacheStore<MemoryRemote>& c) {
        for (int i = 0; i < 4; ++i) {
            const std::string k = numbered("events/0/f", i);
            CHECK(c.read_range(k, 10, 1000).text() == (*remote.objects)[k].substr(10, 1000));
        }
    };
    read_all(DiskCacheStore<MemoryRemote>(remote, cache_in(dir)));
    auto files = cache_files(dir);
    REQUIRE(files.size() == 4);
    {  // one byte of content flipped (CRC), one truncated (length), one header garbled (magic); one left alone
        std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-5, std::ios::end);
        f.put('\xAA');
    }
    std::filesystem::resize_file(files[1], std::filesystem::file_size(files[1]) - 1);
    {
        std::fstream f(files[2], std::ios::in | std::ios::out | std::ios::binary);
        f.put('X');
    }
    const int gets = *remote.gets;
    DiskCacheStore<MemoryRemote> c(remote, cache_in(dir));
    read_all(c);
    CHECK(c.stats().corrupt == 3);
    CHECK(c.stats().hits == 1);
    CHECK(*remote.gets == gets + 3);
    DiskCacheStore<MemoryRemote> again(remote, cache_in(dir));
    read_all(again);
    CHECK(again.stats().corrupt == 0);
    CHECK(again.stats().hits == 4);
    CHECK(*remote.gets == gets + 3);
}

TEST_CASE("DiskCacheStore: least recently used entries are evicted past max_bytes", "[storage][cache]") {
    test::TempDir dir("cache-lru");
    MemoryRemote remote;
    for (int i = 0; i < 40; ++i) (*remote.objects)[numbered("events/0/o", 100 + i)] = pattern(4000, i);
    const auto cached = [&](int i) {  // whether object o<i> has an entry in the folder
        const std::string key = numbered("events/0/o", i);
        const std::string id = "mem://bucket/" + key + "\n\"" + std::to_string(crc32c((*remote.objects)[key])) + "\"\n4000";
        return std::filesystem::exists(dir.path / detail::cache_entry_name(id));
    };
    const std::uint64_t max_bytes = 64 * 1024;  // 16 entries of about 4,070 bytes
    // File times tick coarsely (a few ms): pauses keep the order of uses unambiguous.
    const auto tick = [] { std::this_thread::sleep_for(std::chrono::milliseconds(12)); };
    {
        DiskCacheStore<MemoryRemote> c(remote, cache_in(dir, max_bytes));
        for (int i = 0; i < 10; ++i) {
            CHECK(c.read(numbered("events/0/o", 100 + i)).size() == 4000);
            tick();
        }
    }
    REQUIRE(cached(100));
    DiskCacheStore<MemoryRemote> c(remote, cache_in(dir, max_bytes));
    CHECK(c.read("events/0/o100").text() == pattern(4000, 0));  // used again: now the most recent of the ten
    CHECK(c.stats().hits == 1);
    tick();
    for (int i = 10; i < 40; ++i) {
        CHECK(c.read(numbered("events/0/o", 100 + i)).text() == pattern(4000, i));
        if (i < 20) tick();
        CHECK(folder_bytes(dir) <= max_bytes);
        if (i == 19) {  // two evictions (at 17 entries, down to 90 %): the three oldest each time
            CHECK(c.stats().evicted == 6);
            CHECK(cached(100));
            for (int k = 101; k <= 106; ++k) CHECK_FALSE(cached(k));
            for (int k = 107; k <= 119; ++k) CHECK(cached(k));
        }
    }
    CHECK(cached(139));
    const int gets = *remote.gets;
    CHECK(c.read("events/0/o139").size() == 4000);
    CHECK(*remote.gets == gets);
    CHECK(c.read("events/0/o101").size() == 4000);  // evicted: fetched again
    CHECK(*remote.gets == gets + 1);
}

TEST_CASE("DiskCacheStore: threads with their own cache objects fill one folder at once", "[storage][cache]") {
    test::TempDir dir("cache-threads");
    MemoryRemote remote;
    const int n = 40;
    for (int i = 0; i < n; ++i) (*remote.objects)[numbered("events/0/k", 1000 + i)] = pattern(3000 + static_cast<std::size_t>(i) * 10, i);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            DiskCacheStore<MemoryRemote> c(remote, cache_in(dir));
            std::mt19937 rng(static_cast<unsigned>(t));
            for (int round = 0; round < 3; ++round) {
                std::vector<int> order(n);
                for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
                std::shuffle(order.begin(), order.end(), rng);
                for (int i : order) {
                    const std::string k = numbered("events/0/k", 1000 + i);
                    const std::string& want = remote.objects->at(k);
                    if (c.read_range(k, static_cast<std::uint64_t>(i), 500).text() != want.substr(static_cast<std::size_t>(i), 500)) ++wrong;
                    if (c.read(k).text() != want) ++wrong;
                }
            }
        });
    for (auto& t : threads) t.join();
    CHECK(wrong == 0);
    CHECK(cache_files(dir).size() == static_cast<std::size_t>(n));  // no temporary file left, one entry per object
    const int gets = *remote.gets;
    DiskCacheStore<MemoryRemote> check(remote, cache_in(dir));
    for (int i = 0; i < n; ++i) {
        const std::string k = numbered("events/0/k", 1000 + i);
        CHECK(check.read(k).text() == (*remote.objects)[k]);
    }
    CHECK(check.stats().corrupt == 0);
    CHECK(*remote.gets == gets);
}

TEST_CASE("s3rver: through the disk cache, a second read of every value of a trial sends no GET", "[s3rver][cache]") {
    const char* endpoint = std::getenv("SMDEBUG_S3RVER_ENDPOINT");
    if (!endpoint || !*endpoint)
        FAIL("SMDEBUG_S3RVER_ENDPOINT is not set: run this case under tests/s3rver/run-with-s3rver.sh (CTest: s3rver.s3store)");
    test::ScopedEnv e1("AWS_ENDPOINT_URL", endpoint), e2("AWS_ACCESS_KEY_ID", "S3RVER"), e3("AWS_SECRET_ACCESS_KEY", "S3RVER"),
        e4("AWS_REGION", "us-east-1"), e5("AWS_PROFILE", nullptr), e6("AWS_SESSION_TOKEN", nullptr), e7("SMDEBUG_CACHE_DIR", nullptr);
    const std::string url = "s3://smdebug-test/cache-" + std::to_string(::getpid()) + "-" +
                            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    const LocalStore local(conformance_trial.string());
    {
        const S3Store up(url);
        for (const auto& k : local.list("")) up.write(k, local.read(k).bytes());
    }
    // A refresh confirms its listing with a second one unless the end marker had settled (a
    // second old, by a Last-Modified of whole seconds) before it began: let it settle, so the cold
    // and warm reads list alike.
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));
    test::TempDir cache("cache-s3");
    TrialOptions o;
    o.training_end_delay_refresh = std::chrono::milliseconds(0);
    o.cache_dir = cache.path.string();
    // Every value of every tensor, as bytes, and the requests that cost.
    const auto read_every_value = [&](RequestCounts& counts) {
        CountingStore<AnyStore> store(open_trial_store(url, o));
        Trial<CountingStore<AnyStore>> t(store, o);
        std::map<std::pair<std::string, std::int64_t>, std::string> values;
        for (const auto& name : t.tensor_names())
            for (auto step : t.tensor(name).steps()) {
                std::optional<TensorValue> v;
                try {
                    v = t.tensor(name).value(step);
                } catch (const TensorUnavailableForStep&) {  // only reductions saved at this step
                    continue;
                }
                values[{name, step}] = std::string(reinterpret_cast<const char*>(v->bytes().data()), v->bytes().size());
            }
        counts = store.counts();
        return values;
    };
    std::map<std::pair<std::string, std::int64_t>, std::string> expected;
    {
        Trial<LocalStore> t(local, o);
        for (const auto& name : t.tensor_names())
            for (auto step : t.tensor(name).steps()) {
                std::optional<TensorValue> v;
                try {
                    v = t.tensor(name).value(step);
                } catch (const TensorUnavailableForStep&) {
                    continue;
                }
                expected[{name, step}] = std::string(reinterpret_cast<const char*>(v->bytes().data()), v->bytes().size());
            }
    }
    REQUIRE(expected.size() > 100);
    RequestCounts cold, warm, repaired;
    CHECK(read_every_value(cold) == expected);
    CHECK(cold.get >= 43);  // 21 index files, the collections file, 21 event files
    CHECK(read_every_value(warm) == expected);
    INFO("cold: " << format_request_counts(cold) << "; warm: " << format_request_counts(warm));
    CHECK(warm.get == 0);
    CHECK(warm.head == cold.head);  // the end marker's existence is asked each time, never cached
    CHECK(warm.list == cold.list);
    // the same through create_trial with SMDEBUG_CACHE_DIR
    {
        test::ScopedEnv env("SMDEBUG_CACHE_DIR", cache.path.c_str());
        TrialOptions plain;
        plain.training_end_delay_refresh = std::chrono::milliseconds(0);
        auto t = create_trial(url, plain);
        CHECK(t.tensor("MLP_fc1.bias").value(0).bytes().size() == 48);
    }
    // Every entry corrupted: each is fetched again, the values stay exact.
    auto files = cache_files(cache);
    REQUIRE(files.size() == 43);
    for (const auto& f : files) {
        std::fstream s(f, std::ios::in | std::ios::out | std::ios::binary);
        s.seekp(-1, std::ios::end);
        s.put('\x5A');
    }
    CHECK(read_every_value(repaired) == expected);
    CHECK(repaired.get == 43);
    // the CLI: --cache DIR, --requests
    const std::string program = test::shell_quote((std::filesystem::path(SMDEBUG_BIN_DIR) / "smdebug").string());
    const std::string cmd = program + " verify " + url + " --cache " + test::shell_quote(cache.path.string()) + " --requests";
    const auto first = test::run_shell(cmd), second = test::run_shell(cmd);
    CHECK(first.status == 0);
    CHECK(second.status == 0);
    CHECK_THAT(second.err, Catch::Matchers::Contains(", GET 0, "));
}

// ---- stores of other schemes (CONTRIBUTING.md "Adding a store") -------------------------------

namespace {
// A store with a scheme of its own, "toy://<folder>": a local folder that names itself by toy URLs.
struct ToyStore {
    LocalStore local;
    std::vector<std::string> list(std::string_view prefix, std::string_view start_after = {}) const { return local.list(prefix, start_after); }
    ByteBuffer read(std::string_view key) const { return local.read(key); }
    ByteBuffer read_range(std::string_view key, std::uint64_t offset, std::uint64_t length) const {
        return local.read_range(key, offset, length);
    }
    bool exists(std::string_view key) const { return local.exists(key); }
    std::string describe(std::string_view key) const { return "toy://" + std::string(key); }
};
static_assert(Store<ToyStore>);
AnyStore open_toy_url(std::string_view url) { return AnyStore(ToyStore{LocalStore(std::string(url.substr(6)))}); }
}  // namespace

TEST_CASE("open_store: a store registered for its own scheme opens trials at its URLs", "[storage][schemes]") {
    CHECK(url_scheme("s3://bucket/x") == "s3");
    CHECK(url_scheme("toy+v1.x-y://p") == "toy+v1.x-y");
    CHECK(url_scheme("/tmp/a://b").empty());  // a local path
    CHECK(url_scheme("3d://p").empty());
    CHECK(url_scheme("://p").empty());
    CHECK(url_opener("s3") != nullptr);  // this test program includes s3_store.hpp
    CHECK(url_opener("toy") == nullptr);
    const std::string url = "toy://" + conformance_trial.string();
    CHECK_THROWS_WITH(open_store(url), Catch::Contains("no store is registered for toy:// paths"));
    CHECK_THROWS_AS(register_url_opener("not a scheme", &open_toy_url), UsageError);
    REQUIRE(register_url_opener("toy", &open_toy_url));
    CHECK(url_opener("toy") == &open_toy_url);
    CHECK(open_store(url).describe("index/") == "toy://index/");
    auto trial = create_trial(url);
    CHECK(trial.path() == "toy://");
    CHECK(trial.tensor("MLP_fc2.bias").values().size() == 9);
    CHECK(trial.worker_steps().at("worker_0").size() == trial.steps(Mode::GLOBAL, true).size());
}

}  // namespace smdebug_test_storage
