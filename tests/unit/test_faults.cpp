// Hardening: S3 fault injection (a scripted server on 127.0.0.1 answering 500, 503 SlowDown,
// connection resets mid-body, short bodies, stalls past the read timeout, malformed XML, redirects),
// resource limits of the parsers and listings, and secrets never showing in messages or logs.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <smdebug/core/tensor_view.hpp>
#include <smdebug/format/detail/collections_file.hpp>
#include <smdebug/format/detail/index_file.hpp>
#include <smdebug/format/detail/tfrecord.hpp>
#include <smdebug/net/s3_client.hpp>
#include <smdebug/query/create_trial.hpp>
#include <smdebug/storage/local_listing.hpp>
#include <smdebug/storage/local_store.hpp>
#include <smdebug/storage/s3_store.hpp>
#include <smdebug/writer/hook.hpp>

#include "fault_server.hpp"
#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_faults {

using namespace smdebug;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

using test::Clock;
using test::Fault;
using test::FaultServer;
using test::Request;
using test::open_fds;

constexpr const char* secret_key = "SECRETKEY-wJalrXUtnFEMI-never-shown";
constexpr const char* session_token = "SESSIONTOKEN-FwoGZXIvYXdz-never-shown";

net::AwsConfig config_for(const FaultServer& s) {
    net::AwsConfig c;
    c.region = "us-east-1";
    c.endpoint = net::Url::parse(s.endpoint());
    c.addressing = net::AddressingStyle::path;
    c.credentials = std::make_shared<net::StaticCredentialsProvider>(
        net::AwsCredentials{"AKIDFAULTTEST", secret_key, session_token, std::nullopt, "test"});
    return c;
}

net::S3ClientOptions options(int attempts = 5, std::chrono::milliseconds base = 20ms, std::chrono::milliseconds cap = 200ms) {
    net::S3ClientOptions o;
    o.retry.max_attempts = attempts;
    o.throttle_attempts = attempts;  // throttled answers get as many attempts as other faults here
    o.retry.base_delay = base;
    o.retry.max_delay = cap;
    o.http.io_timeout = 300ms;
    o.http.connect_timeout = 1000ms;
    return o;
}

// A store on the fault server with options(), whose requests may wait up to 5 s for an answer (the
// window tests add latency).
S3StoreOptions store_options_for(const FaultServer& s) {
    S3StoreOptions so;
    so.aws = config_for(s);
    so.client = options();
    so.client.http.io_timeout = 5s;
    return so;
}

// The AWS configuration a process with exactly these environment variables reads (no credentials
// file; the config file at `config_file`).
using EnvVars = std::map<std::string, std::string>;
net::AwsConfig config_from(EnvVars vars, const std::string& config_file) {
    vars.emplace("AWS_CONFIG_FILE", config_file);
    vars.emplace("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials");
    return net::AwsConfig::from_environment(net::Environment([vars](std::string_view k) -> std::optional<std::string> {
        auto it = vars.find(std::string(k));
        if (it == vars.end()) return std::nullopt;
        return it->second;
    }));
}

// Descriptors are compared once the server has closed its side of every connection (its sockets
// are in this process too): a client that leaked a socket keeps the server's side open as well.
std::size_t fds_after_settling(FaultServer& server) {
    const auto deadline = Clock::now() + 3s;
    while (server.open_connections() > 0 && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    return open_fds();
}

// Every secret the server saw (the secret key, the session token and each request's signature)
// must be absent from `text`.
void require_no_secret(const std::string& text, FaultServer& server) {
    CHECK_THAT(text, !Contains(secret_key));
    CHECK_THAT(text, !Contains(session_token));
    for (const auto& r : server.log()) {
        auto sig = r.authorization.find("Signature=");
        REQUIRE(sig != std::string::npos);
        CHECK_THAT(text, !Contains(r.authorization.substr(sig + 10)));
        CHECK(r.security_token == session_token);  // the token was sent, so it was there to leak
    }
}

// Runs `f`, which must throw E; returns the message after checking it for secrets.
template <class E, class F>
std::string expect_error(FaultServer& server, F&& f) {
    try {
        f();
    } catch (const E& e) {
        const std::string m = e.what();
        require_no_secret(m, server);
        return m;
    } catch (const std::exception& e) {
        FAIL("unexpected exception type: " << e.what());
    }
    FAIL("no exception thrown");
    return {};
}

}  // namespace

// =============================================================================================
// S3 fault injection
// =============================================================================================

TEST_CASE("faults: transient faults on idempotent requests are retried and succeed", "[faults][s3]") {
    const Fault kind = GENERATE(Fault::status_500, Fault::slow_down, Fault::reset_mid_body, Fault::short_body, Fault::stall,
                                Fault::malformed_xml);
    CAPTURE(static_cast<int>(kind));
    FaultServer server;
    for (int i = 0; i < 5; ++i) server.objects["trial/index/k" + std::to_string(i)] = std::string(1000, static_cast<char>('a' + i));
    server.fault_for = [&](int n, const Request&) { return n <= 2 ? kind : Fault::none; };
    const auto fds_before = open_fds();
    {
        net::S3Client client(config_for(server), options());
        if (kind == Fault::malformed_xml) {
            // A malformed listing is a protocol error; it is not retried blindly, but the next call works.
            expect_error<HttpProtocolError>(server, [&] { (void)client.list_objects({"b", "trial/"}); });
            server.fault_for = [](int, const Request&) { return Fault::none; };
            CHECK(client.list_objects({"b", "trial/"}).objects.size() == 5);
        } else {
            const auto r = client.get_object("b", "trial/index/k3");
            CHECK(r.data.text() == std::string(1000, 'd'));
            CHECK(server.requests() == 3);
            // Backoff: retries do not follow each other immediately... (full jitter can pick ~0,
            // so only the sum is bounded from above: base 20 ms * (2 + 4) at most plus timeouts)
            const auto t = server.request_times();
            REQUIRE(t.size() == 3);
            CHECK(t[2] - t[0] < 2s);
        }
    }
    CHECK(fds_after_settling(server) == fds_before);
}

TEST_CASE("faults: retry delays grow exponentially, capped, with jitter", "[faults][s3]") {
    // Persistent 503s with base 40 ms and cap 320 ms over 7 attempts: delay caps are 80, 160, 320,
    // 320, 320, 320 ms (full jitter below them). The sum of the gaps stays below the sum of the
    // caps, and the gaps are not all equal (jitter).
    FaultServer server;
    server.fault_for = [](int, const Request&) { return Fault::slow_down; };
    net::S3Client client(config_for(server), options(7, 40ms, 320ms));
    const auto start = Clock::now();
    const auto m = expect_error<S3Error>(server, [&] { (void)client.get_object("b", "k"); });
    const auto took = Clock::now() - start;
    CHECK_THAT(m, Contains("503") && Contains("SlowDown"));
    CHECK(server.requests() == 7);
    const auto t = server.request_times();
    REQUIRE(t.size() == 7);
    std::vector<double> gaps_ms;
    for (std::size_t i = 1; i < t.size(); ++i) gaps_ms.push_back(std::chrono::duration<double, std::milli>(t[i] - t[i - 1]).count());
    const double caps[] = {80, 160, 320, 320, 320, 320};
    double sum = 0, cap_sum = 0;
    for (std::size_t i = 0; i < gaps_ms.size(); ++i) {
        CHECK(gaps_ms[i] <= caps[i] + 60);  // + scheduling slack
        sum += gaps_ms[i];
        cap_sum += caps[i];
    }
    CHECK(sum <= cap_sum + 200);
    CHECK(took < 3s);
    CHECK(*std::max_element(gaps_ms.begin(), gaps_ms.end()) - *std::min_element(gaps_ms.begin(), gaps_ms.end()) > 1.0);
}

TEST_CASE("faults: persistent faults end in a typed error within a bounded time", "[faults][s3]") {
    const Fault kind = GENERATE(Fault::status_500, Fault::slow_down, Fault::reset_mid_body, Fault::short_body, Fault::stall,
                                Fault::redirect);
    CAPTURE(static_cast<int>(kind));
    FaultServer server;
    server.objects["k"] = std::string(1000, 'k');
    server.fault_for = [&](int, const Request&) { return kind; };
    const auto fds_before = open_fds();
    {
        net::S3Client client(config_for(server), options(4, 10ms, 40ms));
        const auto start = Clock::now();
        std::string m;
        switch (kind) {
            case Fault::status_500:
            case Fault::slow_down:
            case Fault::redirect:
                m = expect_error<S3Error>(server, [&] { (void)client.get_object("b", "k"); });
                break;
            case Fault::stall:
                m = expect_error<NetworkTimeout>(server, [&] { (void)client.get_object("b", "k"); });
                break;
            case Fault::reset_mid_body:
                m = expect_error<ConnectionError>(server, [&] { (void)client.get_object("b", "k"); });
                break;
            default:
                m = expect_error<TruncatedData>(server, [&] { (void)client.get_object("b", "k"); });
                CHECK_THAT(m, Contains("999 of 1000"));
                break;
        }
        const auto took = Clock::now() - start;
        // 4 attempts: 3 backoffs of at most 40 ms, and for the stall 4 read timeouts of 300 ms.
        CHECK(took < (kind == Fault::stall ? 2500ms : 1000ms));
        CHECK(server.requests() == (kind == Fault::redirect ? 1 : 4));  // a redirect is not retried
        CHECK_THAT(m, Contains("b") && Contains("k"));
        if (kind == Fault::redirect) CHECK_THAT(m, Contains("301") && Contains("PermanentRedirect") && Contains("eu-west-1"));
        else if (kind != Fault::status_500 && kind != Fault::slow_down) CHECK_THAT(m, Contains("4 attempts"));
        else CHECK_THAT(m, Contains("HTTP 5"));
    }
    CHECK(fds_after_settling(server) == fds_before);
}

TEST_CASE("faults: a partial body is never returned as data (whole and ranged reads, S3Store)", "[faults][s3]") {
    const Fault kind = GENERATE(Fault::reset_mid_body, Fault::short_body, Fault::stall);
    CAPTURE(static_cast<int>(kind));
    FaultServer server;
    server.objects["trial/events/e"] = std::string(1000, 'e');
    server.fault_for = [&](int, const Request&) { return kind; };
    S3StoreOptions so;
    so.aws = config_for(server);
    so.client = options(3, 5ms, 20ms);
    S3Store store("s3://b/trial", so);
    // Typed errors (TruncatedData for short bodies, NetworkError for resets and timeouts), never bytes.
    expect_error<SMDebugError>(server, [&] { (void)store.read("events/e"); });
    expect_error<SMDebugError>(server, [&] { (void)store.read_range("events/e", 10, 900); });
    const RangeRequest reqs[] = {{"events/e", 0, 100}, {"events/e", 500, 100}};
    expect_error<SMDebugError>(server, [&] { (void)store.read_ranges(reqs); });
    // Once the fault clears, the same store returns the exact bytes.
    server.fault_for = [](int, const Request&) { return Fault::none; };
    CHECK(store.read("events/e").text() == std::string(1000, 'e'));
    CHECK(store.read_range("events/e", 10, 900).text() == std::string(900, 'e'));
}

TEST_CASE("faults: no connection or descriptor leaks over many failing and succeeding requests", "[faults][s3]") {
    FaultServer server;
    server.objects["k"] = "value";
    std::atomic<int> phase{1};
    server.fault_for = [&](int n, const Request&) {
        static const Fault cycle[] = {Fault::none, Fault::status_500, Fault::reset_mid_body, Fault::short_body, Fault::none, Fault::slow_down};
        return phase == 0 ? cycle[n % 6] : Fault::none;
    };
    auto settle_to = [&](int open) {
        const auto deadline = Clock::now() + 3s;
        while (server.open_connections() > open && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    };
    const auto fds_before = open_fds();
    {
        net::S3Client client(config_for(server), options(6, 1ms, 2ms));
        CHECK(client.get_object("b", "k").data.text() == "value");
        settle_to(1);
        const auto with_one_idle = open_fds();  // one pooled connection (socket, its io_context) + the server's side
        phase = 0;
        for (int i = 0; i < 200; ++i) CHECK(client.get_object("b", "k").data.text() == "value");
        phase = 1;
        // The pool keeps one idle connection for sequential requests, whatever the number of failures.
        CHECK(client.http().idle_connections() <= 1);
        settle_to(1);
        CHECK(open_fds() == with_one_idle);
    }
    // The client is gone: every socket it had is closed (the server sees the closes).
    settle_to(0);
    CHECK(server.open_connections() == 0);
    CHECK(fds_after_settling(server) == fds_before);
    CHECK(server.connections() > 20);  // failures did cost connections (the test exercised them)
}

TEST_CASE("faults: a Trial over a faulty bucket retries, then reads the same data", "[faults][s3]") {
    // A trial written locally, uploaded to the fault server; every third request fails.
    test::TempDir dir("faults-trial");
    {
        HookOptions o;
        o.save_config = SaveConfig(save_config_mode(1));
        o.save_all = true;
        Hook<LocalStore> hook(LocalStore(dir.path, LocalStore::Durability::none), o);
        for (int s = 0; s < 5; ++s) {
            hook.next_step();
            hook.save_scalar("loss", 1.0 / (s + 1));
            std::vector<float> w(100, static_cast<float>(s));
            hook.save_tensor("w", w, "weights");
        }
        hook.close();
    }
    FaultServer server;
    server.put_folder("t/", dir.path);
    // Each object's requests in turn: a throttle, a connection reset mid-body, then an answer. So
    // every request meets a success within its 5 retries, however the trial's threads interleave
    // (one cycle over all requests let one request draw only faults while another thread's
    // requests took the answers: seen failing after 6 attempts under ASan and under load).
    const Fault cycle[] = {Fault::slow_down, Fault::reset_mid_body, Fault::none};
    std::mutex attempts_mu;
    std::map<std::string, int> attempts;  // per request target
    server.fault_for = [&](int, const Request& r) {
        std::lock_guard lock(attempts_mu);
        return cycle[attempts[r.method + " " + r.target]++ % 3];
    };
    S3StoreOptions so;
    so.aws = config_for(server);
    so.client = options(5, 1ms, 5ms);
    // One request in flight at a time: ranged GETs of one event file share its cycle.
    so.max_concurrency = 1;
    auto faulty = Trial<S3Store>(S3Store("s3://b/t", so));
    auto local = Trial<LocalStore>(LocalStore(dir.path));
    CHECK(local.steps() == std::vector<std::int64_t>{0, 1, 2, 3, 4});
    CHECK(faulty.steps() == local.steps());
    CHECK(faulty.tensor_names() == local.tensor_names());
    for (auto s : local.steps()) {
        const auto a = faulty.tensor("w").value(s), b = local.tensor("w").value(s);
        CHECK(std::vector<float>(a.elements<float>().begin(), a.elements<float>().end()) ==
              std::vector<float>(b.elements<float>().begin(), b.elements<float>().end()));
    }
    CHECK(server.requests() > 10);
}

// =============================================================================================
// Resource limits
// =============================================================================================

TEST_CASE("limits: a record claiming terabytes is rejected before allocating it", "[faults][limits]") {
    std::string rec;
    tfrecord::append(rec, "payload");
    const std::uint64_t huge = std::uint64_t{3} << 40;  // 3 TiB
    std::memcpy(rec.data(), &huge, 8);
    const std::uint32_t crc = masked_crc32c(std::as_bytes(std::span<const char>(rec.data(), 8)));
    std::memcpy(rec.data() + 8, &crc, 4);
    try {
        (void)tfrecord::parse(std::as_bytes(std::span<const char>(rec)), "huge.tfevents");
        FAIL("accepted");
    } catch (const TruncatedData& e) {  // parse() allocates nothing: the claim exceeds the data
        CHECK_THAT(e.what(), Contains("huge.tfevents") && Contains("3298534883328"));
    }
    // An index entry claiming terabytes is rejected when the index is parsed ...
    const std::string index = R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "events/e.tfevents"},
        "tensor_payload": [{"tensorname": "w", "start_idx": 0, "length": 3298534883328}], "shape_payload": []})";
    CHECK_THROWS_WITH(index_file::parse(index, "index/x.json"), Contains("index/x.json") && Contains("max_record_bytes"));
    // ... and a local range past the end of a file fails before a buffer of its length exists.
    test::TempDir dir("limits");
    dir.write("f", "0123456789");
    LocalStore store(dir.path);
    CHECK_THROWS_AS(store.read_range("f", 0, std::uint64_t{1} << 42), TruncatedData);
    CHECK_THROWS_AS(store.read_range("f", 11, 1), TruncatedData);
    CHECK(store.read_range("f", 2, 3).text() == "234");
    // The writer refuses a payload above the limit instead of writing a record no reader takes.
    CHECK_THROWS_AS(tfrecord::check_payload_size(tfrecord::max_payload_bytes + 1), UsageError);
}

TEST_CASE("limits: JSON nested 100,000 deep is a typed error, not a stack overflow", "[faults][limits]") {
    const std::string deep_array = std::string(100000, '[') + std::string(100000, ']');
    std::string deep_object;
    for (int i = 0; i < 100000; ++i) deep_object += "{\"a\":";
    deep_object += "1" + std::string(100000, '}');
    for (const std::string* doc : std::array<const std::string*, 2>{&deep_array, &deep_object}) {
        CHECK_THROWS_WITH(index_file::parse(*doc, "index/deep.json"), Contains("index/deep.json") && Contains("max_depth"));
        CHECK_THROWS_WITH(collections_file::parse(*doc, "c.json"), Contains("c.json") && Contains("max_depth"));
        CHECK_THROWS_AS(parse_hook_config(*doc, "hook.json"), SMDebugValueError);
    }
    // Depth just inside the limit still parses (no false positives for ordinary documents).
    const std::string ok = std::string(json::max_depth - 1, '[') + std::string(json::max_depth - 1, ']');
    CHECK_NOTHROW(json::parse(ok, "ok.json"));
}

TEST_CASE("limits: XML nesting and element counts are bounded", "[faults][limits]") {
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += "<a>";
    CHECK_THROWS_WITH(net::parse_xml(deep), Contains("nested deeper than"));
    std::string many = "<r>";
    for (int i = 0; i < 2'000'000; ++i) many += "<a/>";
    many += "</r>";
    CHECK_THROWS_WITH(net::parse_xml(many), Contains("more than"));
}

TEST_CASE("limits: a listing of millions of keys stops at the limit with a clear error", "[faults][limits]") {
    // A hostile endpoint that answers every ListObjectsV2 with a full, truncated page forever.
    FaultServer server;
    for (int i = 0; i < 3000; ++i) server.objects["t/index/" + std::to_string(100000 + i)] = "";
    server.page_size = 1000;
    net::S3ClientOptions o = options();
    o.max_list_keys = 2500;
    net::S3Client client(config_for(server), o);
    CHECK_THROWS_WITH(client.list_objects({"b", "t/"}), Contains("max_list_keys") && Contains("2500"));
    o.max_list_keys = 3000;
    net::S3Client enough(config_for(server), o);
    CHECK(enough.list_objects({"b", "t/"}).objects.size() == 3000);
    CHECK(net::S3ClientOptions{}.max_list_keys == net::max_listed_keys);
}

TEST_CASE("limits: endless truncated listing pages without keys stop with a clear error", "[faults][limits][reliability]") {
    // Each page is empty, truncated, and names a new continuation token: max_list_keys never trips.
    FaultServer server;
    server.fault_for = [](int, const Request&) { return Fault::empty_page; };
    net::S3ClientOptions o = options();
    o.max_empty_list_pages = 20;
    net::S3Client client(config_for(server), o);
    CHECK_THROWS_WITH(client.list_objects({"b", "t/"}), Contains("max_empty_list_pages") && Contains("21 truncated pages"));
    CHECK(server.requests() == 21);
    CHECK(net::S3ClientOptions{}.max_empty_list_pages == 100);
    // The disk cache's one-page listing (S3Store::list_info with max_keys) stops at the first empty page.
    S3StoreOptions so;
    so.aws = config_for(server);
    so.client = o;
    const S3Store store("s3://b/t", so);
    CHECK(store.list_info("events/", "", 1000)->empty());
    CHECK(server.requests() == 22);
}

TEST_CASE("deadlines: a server trickling its headers or body cannot hold a request", "[faults][limits][reliability]") {
    for (const Fault f : {Fault::trickle_head, Fault::trickle_body}) {
        INFO((f == Fault::trickle_head ? "headers" : "body"));
        FaultServer server;
        server.trickle_every = 50ms;  // every read makes progress: io_timeout never fires
        server.fault_for = [f](int, const Request&) { return f; };
        net::S3ClientOptions o = options(2);
        o.http.io_timeout = 2000ms;
        o.http.header_timeout = 600ms;
        o.http.low_speed_limit = 1000;  // bytes/s; the trickle gives 20
        o.http.low_speed_time = 600ms;
        net::S3Client client(config_for(server), o);
        const auto start = std::chrono::steady_clock::now();
        try {
            client.get_object("b", "k");
            FAIL("a trickle held the request");
        } catch (const NetworkTimeout& e) {
            CHECK_THAT(e.what(), Contains(f == Fault::trickle_head ? "header_timeout" : "low_speed_limit"));
            CHECK_THAT(e.what(), Contains("127.0.0.1"));
            CHECK_THAT(e.what(), Contains("2 attempts"));
        }
        const auto took = std::chrono::steady_clock::now() - start;
        CHECK(took < 4s);
        CHECK(took > 1s);  // two attempts of ~0.6 s each
        CHECK(server.requests() == 2);
    }
    // The defaults bound each case well under 2 minutes: 3 attempts of at most 20 + 20 s.
    const net::HttpClientOptions d;
    CHECK(d.header_timeout == 20s);
    CHECK(d.io_timeout == 20s);
    CHECK(d.low_speed_limit == 1024);
    CHECK(d.low_speed_time == 20s);
}

TEST_CASE("settings: AWS_MAX_ATTEMPTS, AWS_RETRY_MODE and the S3 timeouts, with clear errors", "[faults][reliability]") {
    auto config = [](EnvVars vars) { return config_from(std::move(vars), "/nonexistent/config"); };
    CHECK(config({}).attempts() == 3);
    CHECK(config({{"AWS_RETRY_MODE", "legacy"}}).attempts() == 5);
    CHECK(config({{"AWS_RETRY_MODE", "adaptive"}}).attempts() == 3);
    CHECK(config({{"AWS_MAX_ATTEMPTS", "7"}, {"AWS_RETRY_MODE", "legacy"}}).attempts() == 7);
    CHECK_THROWS_WITH(config({{"AWS_MAX_ATTEMPTS", "zero"}}), Contains("AWS_MAX_ATTEMPTS") && Contains("'zero'"));
    CHECK_THROWS_WITH(config({{"AWS_MAX_ATTEMPTS", "0"}}), Contains("AWS_MAX_ATTEMPTS"));
    CHECK_THROWS_WITH(config({{"AWS_RETRY_MODE", "eager"}}), Contains("AWS_RETRY_MODE") && Contains("'eager'"));
    const auto t = config({{"SMDEBUG_S3_CONNECT_TIMEOUT", "3"}, {"SMDEBUG_S3_READ_TIMEOUT", "4"}});
    CHECK(t.connect_timeout == std::chrono::milliseconds(3000));
    CHECK(t.read_timeout == std::chrono::milliseconds(4000));
    CHECK_THROWS_WITH(config({{"SMDEBUG_S3_READ_TIMEOUT", "-1"}}), Contains("SMDEBUG_S3_READ_TIMEOUT"));
    // The client takes its attempts from the configuration unless the code set them.
    FaultServer server;
    server.fault_for = [](int, const Request&) { return Fault::status_500; };
    net::S3ClientOptions o = options();
    o.retry.max_attempts = 0;
    auto c = config_for(server);
    c.max_attempts = 2;
    net::S3Client client(c, o);
    CHECK_THROWS_AS(client.get_object("b", "k"), S3Error);
    CHECK(server.requests() == 2);
}

TEST_CASE("limits: local listings stop at symlink loops and over-deep folders", "[faults][limits]") {
    test::TempDir dir("limits-list");
    dir.write("index/000000000/000000000000_worker_0.json", "{}");
    std::filesystem::create_directory_symlink(dir.path / "index", dir.path / "index" / "loop");
    CHECK_THROWS_WITH(list_local(dir.path, "index/"), Contains("max_listing_depth"));
    CHECK_THROWS_WITH(detail::list_local_portable(dir.path, "index/"), Contains("max_listing_depth"));
    // Open descriptors of the walk are closed on the error path.
    const auto fds = open_fds();
    for (int i = 0; i < 20; ++i) CHECK_THROWS(list_local(dir.path, "index/"));
    CHECK(open_fds() == fds);
    std::filesystem::remove(dir.path / "index" / "loop");
    CHECK(list_local(dir.path, "index/") == std::vector<std::string>{"index/000000000/000000000000_worker_0.json"});
}

// =============================================================================================
// Secrets
// =============================================================================================

TEST_CASE("secrets: no secret in exception messages on any fault path", "[faults][secrets]") {
    const Fault kind = GENERATE(Fault::status_500, Fault::slow_down, Fault::reset_mid_body, Fault::short_body, Fault::stall,
                                Fault::malformed_xml, Fault::redirect);
    CAPTURE(static_cast<int>(kind));
    FaultServer server;
    server.objects["t/k"] = "v";
    server.fault_for = [&](int, const Request&) { return kind; };
    net::S3Client client(config_for(server), options(2, 1ms, 2ms));
    auto check_any = [&](auto&& f) {
        try {
            f();
        } catch (const SMDebugError& e) {
            require_no_secret(e.what(), server);
            return;
        }
        if (kind != Fault::malformed_xml) FAIL("no error");
    };
    check_any([&] { (void)client.get_object("b", "t/k"); });
    check_any([&] { (void)client.get_object("b", "t/k", net::ByteRange{0, 1}); });
    check_any([&] { (void)client.list_objects({"b", "t/"}); });
    check_any([&] { client.put_object("b", "t/new", std::as_bytes(std::span<const char>("x", 1))); });
    check_any([&] { client.delete_object("b", "t/k"); });
    CHECK(server.requests() >= 5);
}

TEST_CASE("secrets: a Hook that cannot finish on S3 logs no secret", "[faults][secrets]") {
    FaultServer server;
    // Reads work (the Hook's start-up checks pass); every write fails.
    server.fault_for = [](int, const Request& r) { return r.method == "PUT" ? Fault::status_500 : Fault::none; };
    S3StoreOptions so;
    so.aws = config_for(server);
    so.client = options(2, 1ms, 2ms);
    std::ostringstream captured;
    auto* old = std::cerr.rdbuf(captured.rdbuf());
    std::string error;
    try {
        auto hook = std::make_unique<Hook<S3Store>>(S3Store("s3://b/run", so), HookOptions{});
        hook->next_step();
        hook->save_scalar("loss", 1.0);
        try {
            hook->next_step();
            hook->flush();  // the background writer's error surfaces here at the latest
        } catch (const SMDebugError& e) {
            error = e.what();
        }
        hook.reset();  // the destructor cannot finish either, and says so on stderr
    } catch (...) {
        std::cerr.rdbuf(old);
        throw;
    }
    std::cerr.rdbuf(old);
    INFO(captured.str());
    CHECK_THAT(error, Contains("500"));
    CHECK_THAT(captured.str(), Contains("could not finish"));
    require_no_secret(error, server);
    require_no_secret(captured.str(), server);
}

TEST_CASE("secrets: the CLI prints no secret on any fault path", "[faults][secrets][cli]") {
    const std::filesystem::path cli = std::filesystem::path(SMDEBUG_BIN_DIR) / "smdebug";
    REQUIRE(std::filesystem::exists(cli));  // built with the tests (SMDEBUG_BUILD_TOOLS)
    const Fault kind = GENERATE(Fault::none, Fault::status_500, Fault::slow_down, Fault::reset_mid_body, Fault::short_body,
                                Fault::stall, Fault::malformed_xml, Fault::redirect);
    CAPTURE(static_cast<int>(kind));
    FaultServer server;
    server.stall_for = 800ms;
    server.objects["t/collections/000000000/worker_0_collections.json"] = collections_file::serialize(collections_file::match_all());
    server.objects["t/index/000000000/000000000000_worker_0.json"] = "{not json";
    server.fault_for = [&](int, const Request&) { return kind; };
    test::TempDir out("faults-cli");
    const std::string cmd = "AWS_ACCESS_KEY_ID=AKIDFAULTTEST AWS_SECRET_ACCESS_KEY=" + std::string(secret_key) +
                            " AWS_SESSION_TOKEN=" + session_token + " AWS_REGION=us-east-1 AWS_ENDPOINT_URL_S3=" + server.endpoint() +
                            " AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_EC2_METADATA_DISABLED=true"
                            " SMDEBUG_TRAINING_END_DELAY_REFRESH=0 timeout 120 " +
                            cli.string() + " summary s3://b/t > " + (out.path / "o").string() + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream in(out.path / "o");
    std::stringstream ss;
    ss << in.rdbuf();
    INFO(ss.str());
    CHECK(rc != 0);  // a corrupt index (or the fault) is reported as an error
    CHECK_FALSE(ss.str().empty());
    REQUIRE(server.requests() >= 1);
    require_no_secret(ss.str(), server);
}

// ---- issue 45: a question's requests in flight together, over an endpoint with latency ----------

namespace {

// `n` objects "t/obj/NNNN" of 64 distinct bytes each.
void put_objects(FaultServer& server, int n) {
    for (int i = 0; i < n; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "t/obj/%04d", i);
        server.objects[name] = std::string(64, static_cast<char>('A' + i % 26)) + std::to_string(i);
    }
}
std::vector<std::string> object_keys(int n) {
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "obj/%04d", i);
        keys.emplace_back(name);
    }
    return keys;
}

}  // namespace

TEST_CASE("window: a batch of 256 GETs keeps 32 or more in flight, never more than the window", "[faults][s3][window]") {
    FaultServer server;
    server.latency = 30ms;
    server.jitter = 10ms;
    put_objects(server, 256);
    S3StoreOptions so = store_options_for(server);
    S3Store store("s3://b/t", so);
    CHECK(store.client().max_concurrency() == net::AwsConfig::default_max_concurrent_requests);
    const auto keys = object_keys(256);

    const auto t0 = Clock::now();
    const auto objects = store.read_objects(keys);
    const auto elapsed = Clock::now() - t0;
    REQUIRE(objects.size() == 256);
    for (int i = 0; i < 256; ++i) {
        REQUIRE(objects[i].has_value());
        CHECK(objects[i]->text() == server.objects["t/" + keys[i]]);
    }
    CHECK(server.peak_in_flight() >= 32);
    CHECK(server.peak_in_flight() <= 64);
    CHECK(store.client().window().peak_in_flight() <= 64);
    CHECK(server.requests() == 256);
    INFO("256 GETs at 30-40 ms each took " << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms");

    // Ranges of the same objects, through read_ranges: each reaches the sink once, with its bytes.
    std::vector<RangeRequest> ranges;
    for (const auto& k : keys) ranges.push_back({k, 2, 10});
    std::vector<int> seen(ranges.size(), 0);
    store.read_ranges(ranges, [&](std::size_t i, ByteBuffer&& b) {
        ++seen[i];
        CHECK(b.text() == server.objects["t/" + ranges[i].key].substr(2, 10));
    });
    CHECK(std::count(seen.begin(), seen.end(), 1) == 256);

    // A smaller window from the configuration (the profile's s3.max_concurrent_requests) holds.
    FaultServer server4;
    server4.latency = 20ms;
    put_objects(server4, 40);
    auto c4 = config_for(server4);
    c4.max_concurrent_requests = 4;
    S3StoreOptions so4 = so;
    so4.aws = c4;
    S3Store four("s3://b/t", so4);
    const auto got = four.read_objects(object_keys(40));
    CHECK(std::all_of(got.begin(), got.end(), [](const auto& o) { return o.has_value(); }));
    CHECK(server4.peak_in_flight() <= 4);
    CHECK(server4.peak_in_flight() >= 3);
}

TEST_CASE("window: a 503 storm shrinks the window and every value still arrives", "[faults][s3][window]") {
    FaultServer server;
    server.latency = 10ms;
    server.throttle_above = 8;  // 503 SlowDown to any request past 8 in flight
    put_objects(server, 200);
    S3StoreOptions so;
    so.aws = config_for(server);
    so.client = options(3, 5ms, 100ms);
    so.client.throttle_attempts = net::S3ClientOptions{}.throttle_attempts;  // the default: throttling is retried longer
    so.client.http.io_timeout = 5s;
    S3Store store("s3://b/t", so);
    const auto keys = object_keys(200);
    const auto objects = store.read_objects(keys);
    for (int i = 0; i < 200; ++i) {
        REQUIRE(objects[i].has_value());
        CHECK(objects[i]->text() == server.objects["t/" + keys[i]]);
    }
    CHECK(server.throttled() > 0);
    CHECK(store.client().window().throttled() > 0);
    CHECK(store.client().window().current_limit() < 64);   // it shrank ...
    CHECK(store.client().window().current_limit() >= 1);
    CHECK(server.peak_in_flight() <= 8);                     // and the server never served more
    // Every throttled answer was retried: 200 values from 200 + throttled requests.
    CHECK(server.requests() == 200 + server.throttled());

    // A store that throttles everything: each request gives up after throttle_attempts, with the error.
    FaultServer always;
    always.fault_for = [](int, const Request&) { return Fault::slow_down; };
    auto c = config_for(always);
    net::S3ClientOptions o = options(3, 1ms, 2ms);
    o.throttle_attempts = 4;
    net::S3Client client(c, o);
    CHECK_THROWS_WITH(client.get_object("b", "k"), Contains("SlowDown"));
    CHECK(always.requests() == 4);
}

TEST_CASE("window: the sub-folders of a listing are listed concurrently", "[faults][s3][window]") {
    FaultServer server;
    server.latency = 40ms;
    server.page_size = 10;
    std::vector<std::string> expected;
    for (int bucket = 0; bucket < 5; ++bucket)
        for (int k = 0; k < 25; ++k) {
            char name[64];
            std::snprintf(name, sizeof name, "index/%09d/%012d_worker_0.json", bucket, bucket * 1000 + k);
            server.objects[std::string("t/") + name] = "{}";
            expected.emplace_back(name);
        }
    server.objects["t/index/stray.json"] = "{}";
    expected.push_back("index/stray.json");
    std::sort(expected.begin(), expected.end());
    S3StoreOptions so = store_options_for(server);
    so.list_folders_concurrently = true;
    S3Store store("s3://b/t", so);
    CHECK(store.list("index/") == expected);
    // 5 folders of 3 pages each, after the delimiter listing: the chains ran side by side.
    CHECK(server.peak_in_flight() >= 4);
    CHECK(server.requests() == 1 + 5 * 3);

    // start_after inside a bucket: its later keys and the later buckets, nothing before.
    const std::string after = expected[37];
    std::vector<std::string> tail(expected.begin() + 38, expected.end());
    CHECK(store.list("index/", after) == tail);
    // A prefix without sub-folders costs one listing, as before.
    const int before = server.requests();
    CHECK(store.list("index/000000001/").size() == 25);
    CHECK(server.requests() - before == 3);
}

TEST_CASE("window: SMDEBUG_S3_MAX_CONCURRENCY and the profile's s3.max_concurrent_requests", "[faults][s3][window]") {
    test::TempDir dir;
    {
        std::ofstream f(dir.path / "config");
        f << "[default]\nregion = eu-west-1\ns3 =\n  max_concurrent_requests = 20\n";
    }
    auto config = [&](EnvVars vars) { return config_from(std::move(vars), (dir.path / "config").string()); };
    CHECK(config({}).concurrency() == 20);
    CHECK(config({{"SMDEBUG_S3_MAX_CONCURRENCY", "7"}}).concurrency() == 7);
    CHECK_THROWS_WITH(config({{"SMDEBUG_S3_MAX_CONCURRENCY", "many"}}), Contains("SMDEBUG_S3_MAX_CONCURRENCY") && Contains("'many'"));
    CHECK_THROWS_WITH(config({{"SMDEBUG_S3_MAX_CONCURRENCY", "0"}}), Contains("from 1 to 1024"));
    {
        std::ofstream f(dir.path / "config");
        f << "[default]\ns3 =\n  max_concurrent_requests = lots\n";
    }
    CHECK_THROWS_WITH(config({}), Contains("s3.max_concurrent_requests") && Contains("'lots'"));
}

TEST_CASE("window: the Hook keeps several steps' uploads in flight, each index after its event file", "[faults][s3][window]") {
    FaultServer server;
    server.latency = 30ms;
    S3StoreOptions so = store_options_for(server);
    // Every index PUT must come after its own event file's PUT has been answered.
    std::mutex mu;
    std::map<std::string, int> events_done;  // "<step>_<worker>" -> answered PUTs of its event file
    std::vector<std::string> out_of_order;
    server.fault_for = [&](int, const Request& r) {
        if (r.method != "PUT") return Fault::none;
        const auto name = r.target.substr(r.target.rfind('/') + 1);
        std::lock_guard lock(mu);
        if (r.target.find("/events/") != std::string::npos) {
            const auto stem = name.substr(0, name.find(".tfevents"));  // "<step>_<worker>"
            ++events_done[stem];
        } else if (r.target.find("/index/") != std::string::npos) {
            const auto stem = name.substr(0, name.find(".json"));
            if (!events_done.count(stem)) out_of_order.push_back(name);
        }
        return Fault::none;
    };
    constexpr int steps = 48;
    const std::array<std::string, 4> names{"t0", "t1", "t2", "t3"};
    {
        Hook<S3Store> hook(S3Store("s3://b/run", so), HookOptions{});
        for (int s = 0; s < steps; ++s) {
            hook.next_step();
            for (int t = 0; t < 4; ++t) hook.save_scalar(names[t], s * 10.0 + t);
        }
        hook.close();
    }
    INFO("first out-of-order index: " << (out_of_order.empty() ? std::string("none") : out_of_order.front()));
    CHECK(out_of_order.empty());
    CHECK(server.peak_in_flight() >= 4);  // several steps' PUTs at once (one at a time before)
    // A reader finds every step and every value.
    Trial<S3Store> trial(S3Store("s3://b/run", so));
    REQUIRE(trial.steps().size() == static_cast<std::size_t>(steps));
    for (int s = 0; s < steps; s += 7) CHECK(trial.tensor("scalar/t3").value(s).as<double>()(0) == Approx(s * 10.0 + 3));
}

TEST_CASE("window: HookOptions::writer_steps_in_flight = 1 writes one step at a time on S3", "[faults][s3][window]") {
    FaultServer server;
    server.latency = 20ms;
    S3StoreOptions so = store_options_for(server);
    constexpr int steps = 12;
    {
        HookOptions ho;
        ho.writer_steps_in_flight = 1;
        Hook<S3Store> hook(S3Store("s3://b/run", so), ho);
        for (int s = 0; s < steps; ++s) {
            hook.next_step();
            hook.save_scalar("t0", s * 1.0);
        }
        hook.close();
    }
    CHECK(server.peak_in_flight() == 1);  // a step's event file, then its index, then the next step
    Trial<S3Store> trial(S3Store("s3://b/run", so));
    CHECK(trial.steps().size() == static_cast<std::size_t>(steps));
}

}  // namespace smdebug_test_faults
