// S3Store benchmarks: ranged GETs (sequential on one keep-alive connection, parallel, coalesced),
// whole-object GETs, and listing. Against s3rver when SMDEBUG_S3RVER_ENDPOINT is set (bucket
// smdebug-test, see tests/s3rver/run-with-s3rver.sh); otherwise against a minimal in-process S3 on
// 127.0.0.1 that serves GET (with Range), HEAD, PUT and ListObjectsV2 from memory, so the figures
// measure the client (HTTP parsing, signing, pooling, coalescing) rather than a server.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <smdebug/net/aws_credentials.hpp>
#include <smdebug/storage/s3_store.hpp>

using namespace smdebug;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// The in-process server: one thread per connection, path-style "/bucket/key".
class MemoryS3 {
public:
    MemoryS3() : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
        port_ = acceptor_.local_endpoint().port();
        std::thread([this] {
            for (;;) {
                auto s = std::make_shared<tcp::socket>(ioc_);
                boost::system::error_code ec;
                acceptor_.accept(*s, ec);
                if (ec) return;
                s->set_option(tcp::no_delay(true), ec);  // else Nagle stalls each response's last segment
                std::thread([this, s] { serve(*s); }).detach();
            }
        }).detach();
    }
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

private:
    void serve(tcp::socket& s) {
        std::string buf;
        char tmp[65536];
        for (;;) {
            std::size_t end;
            while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
                boost::system::error_code ec;
                std::size_t n = s.read_some(asio::buffer(tmp), ec);
                if (ec) return;
                buf.append(tmp, n);
            }
            std::string head = buf.substr(0, end);
            buf.erase(0, end + 4);
            std::string method = head.substr(0, head.find(' '));
            std::string target = head.substr(method.size() + 1, head.find(' ', method.size() + 1) - method.size() - 1);
            auto header = [&](const char* name) -> std::string {
                std::string lower = head;
                for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                std::string key = std::string("\r\n") + name + ":";
                auto p = lower.find(key);
                if (p == std::string::npos) return {};
                auto b = head.find_first_not_of(' ', p + key.size());
                return head.substr(b, head.find("\r\n", b) - b);
            };
            std::size_t len = header("content-length").empty() ? 0 : std::stoul(header("content-length"));
            while (buf.size() < len) {
                boost::system::error_code ec;
                std::size_t n = s.read_some(asio::buffer(tmp), ec);
                if (ec) return;
                buf.append(tmp, n);
            }
            std::string body = buf.substr(0, len);
            buf.erase(0, len);
            std::string reply = answer(method, target, header("range"), std::move(body));
            boost::system::error_code ec;
            asio::write(s, asio::buffer(reply), ec);
            if (ec) return;
        }
    }

    static std::string response(int status, const std::string& body, const std::string& extra = {}) {
        return "HTTP/1.1 " + std::to_string(status) + " X\r\n" + extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    }

    std::string answer(const std::string& method, const std::string& target, const std::string& range, std::string body) {
        auto q = target.find('?');
        std::string path = net::percent_decode(target.substr(0, q));
        std::string key = path.size() > 1 ? path.substr(path.find('/', 1) + 1) : std::string();
        std::lock_guard lock(mu_);
        if (q != std::string::npos && path.find('/', 1) == std::string::npos) {  // ListObjectsV2 (prefix only)
            std::string prefix;
            if (auto p = target.find("prefix=", q); p != std::string::npos)
                prefix = net::percent_decode(target.substr(p + 7, target.find('&', p) - p - 7));
            std::string xml = "<ListBucketResult>";
            for (auto& [k, v] : objects_)
                if (k.starts_with(prefix)) xml += "<Contents><Key>" + k + "</Key><Size>" + std::to_string(v.size()) + "</Size></Contents>";
            return response(200, xml + "<IsTruncated>false</IsTruncated></ListBucketResult>");
        }
        if (method == "PUT") {
            objects_[key] = std::move(body);
            return response(200, "");
        }
        auto it = objects_.find(key);
        if (it == objects_.end()) return response(404, "<Error><Code>NoSuchKey</Code></Error>");
        const std::string& data = it->second;
        if (method == "HEAD") return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(data.size()) + "\r\n\r\n";
        if (range.empty()) return response(200, data);
        std::size_t a = std::stoull(range.substr(6)), b = std::stoull(range.substr(range.find('-') + 1));
        b = std::min(b, data.size() - 1);
        return response(206, data.substr(a, b - a + 1),
                        "Content-Range: bytes " + std::to_string(a) + "-" + std::to_string(b) + "/" + std::to_string(data.size()) + "\r\n");
    }

    asio::io_context ioc_;
    tcp::acceptor acceptor_;
    std::uint16_t port_ = 0;
    std::mutex mu_;
    std::map<std::string, std::string> objects_;
};

constexpr std::size_t kObjectSize = 16 << 20;

// One store per process, with a 16 MiB object "events/big" and 1000 small objects "index/...".
S3Store& store() {
    static S3Store s = [] {
        std::string endpoint;
        if (const char* e = std::getenv("SMDEBUG_S3RVER_ENDPOINT"); e && *e) {
            endpoint = e;
        } else {
            static MemoryS3* server = new MemoryS3;  // never destroyed: its threads run until exit
            endpoint = server->endpoint();
        }
        net::AwsConfig aws;
        aws.endpoint = net::Url::parse(endpoint);
        aws.credentials = std::make_shared<net::StaticCredentialsProvider>(
            net::AwsCredentials{"S3RVER", "S3RVER", "", std::nullopt, "benchmark"});
        S3StoreOptions o;
        o.aws = aws;
        S3Store st("s3://smdebug-test/bench-" + std::to_string(::getpid()), o);
        std::string big(kObjectSize, '\0');
        for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131);
        st.write("events/big", std::as_bytes(std::span<const char>(big.data(), big.size())));
        for (int i = 0; i < 1000; ++i) {
            char name[64];
            std::snprintf(name, sizeof name, "index/000000000/%012d_worker_0.json", i);
            st.write(name, std::as_bytes(std::span<const char>("{}", 2)));
        }
        return st;
    }();
    return s;
}

void BM_S3_ReadRange_Sequential(benchmark::State& state) {
    const auto len = static_cast<std::uint64_t>(state.range(0));
    std::uint64_t off = 0;
    for (auto _ : state) {
        auto b = store().read_range("events/big", off, len);
        benchmark::DoNotOptimize(b.data());
        off = (off + len) % (kObjectSize - len);
    }
    state.counters["requests/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_S3_ReadRange_Sequential)->Arg(4 << 10)->Arg(1 << 20)->Arg(4 << 20)->Unit(benchmark::kMicrosecond)->UseRealTime();

// 256 scattered 16 KiB ranges (no two adjacent): 256 GETs, `concurrency` at a time.
void BM_S3_ReadRanges_Parallel(benchmark::State& state) {
    std::vector<RangeRequest> reqs;
    for (std::uint64_t i = 0; i < 256; ++i) reqs.push_back({"events/big", i * 65536, 16384});
    for (auto _ : state) {
        auto out = store().read_ranges(reqs);
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["requests/s"] = benchmark::Counter(256.0 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_S3_ReadRanges_Parallel)->Unit(benchmark::kMillisecond)->UseRealTime();

// 256 adjacent 16 KiB ranges: coalesced into one 4 MiB GET.
void BM_S3_ReadRanges_Coalesced(benchmark::State& state) {
    std::vector<RangeRequest> reqs;
    for (std::uint64_t i = 0; i < 256; ++i) reqs.push_back({"events/big", i * 16384, 16384});
    for (auto _ : state) {
        auto out = store().read_ranges(reqs);
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["GB/s"] = benchmark::Counter(256.0 * 16384 * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_S3_ReadRanges_Coalesced)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_S3_ReadWhole_16MiB(benchmark::State& state) {
    for (auto _ : state) {
        auto b = store().read("events/big");
        benchmark::DoNotOptimize(b.data());
    }
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(kObjectSize) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_S3_ReadWhole_16MiB)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_S3_List_1000(benchmark::State& state) {
    for (auto _ : state) {
        auto keys = store().list("index/");
        if (keys.size() != 1000) state.SkipWithError("unexpected key count");
        benchmark::DoNotOptimize(keys.data());
    }
    state.counters["keys/s"] = benchmark::Counter(1000.0 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_S3_List_1000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    store();  // upload the objects before timing anything
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
