// Transport layer and S3Store: XML reader, HTTP client, AWS configuration and credentials, S3
// client retries, S3Store. Every server here is in-process on 127.0.0.1; the [s3rver] cases run
// against s3rver when SMDEBUG_S3RVER_ENDPOINT is set (tests/s3rver/run-with-s3rver.sh).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/aws_credentials.hpp>
#include <smdebug/net/aws_service_client.hpp>
#include <smdebug/net/detail/http_client.hpp>
#include <smdebug/net/s3_client.hpp>
#include <smdebug/net/detail/xml.hpp>
#include <smdebug/storage/s3_store.hpp>

#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_net_s3 {

using namespace smdebug;
using namespace smdebug::net;
using Catch::Matchers::Contains;

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// Helpers: temporary folders, environments, a fake HTTP(S) server on 127.0.0.1
// ---------------------------------------------------------------------------------------------

using test::TempDir;

Environment env_of(std::map<std::string, std::string> vars) {
    auto m = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
    return [m](std::string_view name) -> std::optional<std::string> {
        auto it = m->find(std::string(name));
        if (it == m->end()) return std::nullopt;
        return it->second;
    };
}

std::span<const std::byte> as_bytes(std::string_view s) {
    return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

struct FakeRequest {
    std::string method, target, body;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string header(std::string_view name) const {
        for (const auto& [n, v] : headers)
            if (iequals(n, name)) return v;
        return {};
    }
    bool has_header(std::string_view name) const {
        for (const auto& [n, v] : headers)
            if (iequals(n, name)) return true;
        return false;
    }
    std::string path() const { return target.substr(0, target.find('?')); }
    std::string query_param(std::string_view name) const {
        auto q = target.find('?');
        if (q == std::string::npos) return {};
        std::string_view rest = std::string_view(target).substr(q + 1);
        while (!rest.empty()) {
            auto amp = rest.find('&');
            std::string_view kv = rest.substr(0, amp);
            auto eq = kv.find('=');
            if (kv.substr(0, eq) == name) return eq == std::string_view::npos ? "" : percent_decode(kv.substr(eq + 1));
            if (amp == std::string_view::npos) break;
            rest.remove_prefix(amp + 1);
        }
        return {};
    }
};

class FakeConn {
public:
    FakeConn(tcp::socket s, asio::ssl::context* tls) {
        if (tls) tls_.emplace(std::move(s), *tls);
        else plain_.emplace(std::move(s));
    }
    tcp::socket& sock() { return tls_ ? tls_->next_layer() : *plain_; }
    bool handshake() {
        boost::system::error_code ec;
        if (tls_) tls_->handshake(asio::ssl::stream_base::server, ec);
        return !ec;
    }
    std::size_t read_some(char* p, std::size_t n) {
        boost::system::error_code ec;
        std::size_t k = tls_ ? tls_->read_some(asio::buffer(p, n), ec) : plain_->read_some(asio::buffer(p, n), ec);
        return ec ? 0 : k;
    }
    void write(std::string_view data) {
        boost::system::error_code ec;
        if (tls_) asio::write(*tls_, asio::buffer(data.data(), data.size()), ec);
        else asio::write(*plain_, asio::buffer(data.data(), data.size()), ec);
    }
    // Reads one request (Content-Length bodies only); nullopt at end of stream.
    std::optional<FakeRequest> read_request() {
        while (buf_.find("\r\n\r\n") == std::string::npos) {
            if (!fill()) return std::nullopt;
        }
        auto end = buf_.find("\r\n\r\n");
        std::string head = buf_.substr(0, end);
        buf_.erase(0, end + 4);
        FakeRequest r;
        std::size_t line_end = head.find("\r\n");
        std::string line = head.substr(0, line_end);
        auto sp1 = line.find(' '), sp2 = line.rfind(' ');
        r.method = line.substr(0, sp1);
        r.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
        std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
        while (pos < head.size()) {
            auto e = head.find("\r\n", pos);
            if (e == std::string::npos) e = head.size();
            std::string h = head.substr(pos, e - pos);
            auto colon = h.find(':');
            std::string v = h.substr(colon + 1);
            while (!v.empty() && v.front() == ' ') v.erase(0, 1);
            r.headers.emplace_back(h.substr(0, colon), v);
            pos = e + 2;
        }
        std::size_t len = r.has_header("Content-Length") ? std::stoul(r.header("Content-Length")) : 0;
        while (buf_.size() < len)
            if (!fill()) return std::nullopt;
        r.body = buf_.substr(0, len);
        buf_.erase(0, len);
        return r;
    }
    // Abortive close: the peer sees a connection reset.
    void reset() {
        std::lock_guard lock(mu_);
        if (closed_) return;
        boost::system::error_code ec;
        sock().set_option(asio::socket_base::linger(true, 0), ec);
        sock().close(ec);
        closed_ = true;
    }
    void close() {
        std::lock_guard lock(mu_);
        if (closed_) return;
        boost::system::error_code ec;
        sock().shutdown(tcp::socket::shutdown_both, ec);
        sock().close(ec);
        closed_ = true;
    }
    bool closed() {
        std::lock_guard lock(mu_);
        return closed_;
    }
    // From another thread: unblocks a pending read.
    void interrupt() {
        std::lock_guard lock(mu_);
        if (!closed_) ::shutdown(sock().native_handle(), SHUT_RDWR);
    }

private:
    bool fill() {
        char tmp[8192];
        std::size_t k = read_some(tmp, sizeof tmp);
        if (k == 0) return false;
        buf_.append(tmp, k);
        return true;
    }
    std::optional<tcp::socket> plain_;
    std::optional<asio::ssl::stream<tcp::socket>> tls_;
    std::string buf_;
    std::mutex mu_;
    bool closed_ = false;
};

class FakeServer {
public:
    using Handler = std::function<void(FakeConn&)>;
    explicit FakeServer(Handler h, asio::ssl::context* tls = nullptr)
        : handler_(std::move(h)), tls_(tls), acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
        port_ = acceptor_.local_endpoint().port();
        thread_ = std::thread([this] { accept_loop(); });
    }
    ~FakeServer() {
        stop_ = true;
        {
            boost::system::error_code ec;
            tcp::socket wake(ioc_);
            wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
        }
        thread_.join();
        std::vector<std::thread> threads;
        {
            std::lock_guard lock(mu_);
            for (auto& c : conns_) c->interrupt();
            threads.swap(threads_);
        }
        for (auto& t : threads) t.join();
    }
    std::uint16_t port() const { return port_; }
    std::string url(std::string_view target = "/") const {
        return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + std::string(target);
    }
    std::atomic<int> connections{0};

private:
    void accept_loop() {
        while (!stop_) {
            tcp::socket s(ioc_);
            boost::system::error_code ec;
            acceptor_.accept(s, ec);
            if (stop_) return;
            if (ec) continue;
            ++connections;
            auto c = std::make_shared<FakeConn>(std::move(s), tls_);
            std::lock_guard lock(mu_);
            conns_.push_back(c);
            threads_.emplace_back([this, c] {
                try {
                    if (c->handshake()) handler_(*c);
                } catch (...) {
                }
                c->close();
            });
        }
    }
    Handler handler_;
    asio::ssl::context* tls_;
    asio::io_context ioc_;
    tcp::acceptor acceptor_;
    std::uint16_t port_ = 0;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::vector<std::shared_ptr<FakeConn>> conns_;
    std::vector<std::thread> threads_;
};

std::string response(int status, std::string_view body, std::vector<std::pair<std::string, std::string>> headers = {},
                     std::string_view reason = "X") {
    std::string r = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
    for (auto& [n, v] : headers) r += n + ": " + v + "\r\n";
    r += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    r += body;
    return r;
}

// Serves every request on a connection with `respond`.
FakeServer::Handler each_request(std::function<std::string(const FakeRequest&)> respond) {
    return [respond](FakeConn& c) {
        while (auto r = c.read_request()) c.write(respond(*r));
    };
}

HttpResponse get(HttpClient& c, const std::string& url, std::string method = "GET") {
    HttpRequest r;
    r.method = std::move(method);
    r.url = Url::parse(url);
    return c.send(r);
}

// A self-signed certificate (usable as its own trust anchor) and its key, as PEM files.
struct TestCert {
    std::string cert_file, key_file;
};
TestCert make_cert(const TempDir& dir, const std::string& name, const std::string& san) {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    REQUIRE(key);
    X509* x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), static_cast<long>(std::random_device{}() & 0x7fffffff));
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, key);
    X509_NAME* subject = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("smdebug test"), -1, -1, 0);
    X509_set_issuer_name(x, subject);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
    for (auto [nid, value] : {std::pair<int, std::string>{NID_subject_alt_name, san}, {NID_basic_constraints, "critical,CA:TRUE"}}) {
        X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
        REQUIRE(ext);
        X509_add_ext(x, ext, -1);
        X509_EXTENSION_free(ext);
    }
    REQUIRE(X509_sign(x, key, EVP_sha256()) > 0);
    TestCert out{(dir.path / (name + "-cert.pem")).string(), (dir.path / (name + "-key.pem")).string()};
    FILE* f = std::fopen(out.cert_file.c_str(), "w");
    PEM_write_X509(f, x);
    std::fclose(f);
    f = std::fopen(out.key_file.c_str(), "w");
    PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(f);
    X509_free(x);
    EVP_PKEY_free(key);
    return out;
}

std::unique_ptr<asio::ssl::context> server_tls(const TestCert& c) {
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    ctx->use_certificate_chain_file(c.cert_file);
    ctx->use_private_key_file(c.key_file, asio::ssl::context::pem);
    return ctx;
}

// ---------------------------------------------------------------------------------------------
// A fake S3 (path-style, bucket "b"), with a hook to inject faults.
// ---------------------------------------------------------------------------------------------

std::string encode_listing_key(std::string_view s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') out += static_cast<char>(c);
        else if (c == ' ') out += '+';
        else { out += '%'; out += hex[c >> 4]; out += hex[c & 15]; }
    }
    return out;
}

std::string xml_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else out += c;
    }
    return out;
}

struct FakeS3 {
    std::mutex mu;
    std::map<std::string, std::string> objects;  // key (without bucket) -> content
    std::vector<FakeRequest> log;
    bool url_encode_listing = true;  // honour encoding-type=url
    // Called first for every request with its 1-based number; returns true when it answered.
    std::function<bool(const FakeRequest&, FakeConn&, int)> fault;
    FakeServer server{[this](FakeConn& c) { serve(c); }};

    std::string endpoint() const { return server.url(""); }
    int count(std::string_view method) {
        std::lock_guard lock(mu);
        int n = 0;
        for (auto& r : log) n += r.method == method;
        return n;
    }
    int total() {
        std::lock_guard lock(mu);
        return static_cast<int>(log.size());
    }

    void serve(FakeConn& c) {
        while (auto r = c.read_request()) {
            int n;
            {
                std::lock_guard lock(mu);
                log.push_back(*r);
                n = static_cast<int>(log.size());
            }
            if (fault && fault(*r, c, n)) {
                if (c.closed()) return;
                continue;
            }
            c.write(answer(*r));
        }
    }

    static std::string error(int status, std::string code, std::string key) {
        return response(status, "<?xml version=\"1.0\"?><Error><Code>" + code + "</Code><Message>m</Message><Key>" + key +
                                    "</Key><RequestId>REQ123</RequestId></Error>",
                        {{"Content-Type", "application/xml"}});
    }

    std::string answer(const FakeRequest& r) {
        std::string path = percent_decode(r.path());
        if (!path.starts_with("/b")) return error(404, "NoSuchBucket", "");
        std::lock_guard lock(mu);
        if (path == "/b" && r.method == "GET") return list(r);
        std::string key = path.substr(3);
        auto it = objects.find(key);
        if (r.method == "PUT") {
            objects[key] = r.body;
            return response(200, "", {{"ETag", "\"etag\""}});
        }
        if (r.method == "DELETE") {
            objects.erase(key);
            return response(204, "");
        }
        if (r.method == "HEAD") {
            if (it == objects.end()) return "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
            return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(it->second.size()) + "\r\nETag: \"e\"\r\n\r\n";
        }
        if (it == objects.end()) return error(404, "NoSuchKey", key);
        const std::string& data = it->second;
        std::string range = r.header("Range");
        if (range.empty()) return response(200, data);
        std::uint64_t a = std::stoull(range.substr(6)), b = std::stoull(range.substr(range.find('-') + 1));
        if (a >= data.size()) return error(416, "InvalidRange", key);
        b = std::min<std::uint64_t>(b, data.size() - 1);
        return response(206, data.substr(a, b - a + 1),
                        {{"Content-Range", "bytes " + std::to_string(a) + "-" + std::to_string(b) + "/" + std::to_string(data.size())}});
    }

    std::string list(const FakeRequest& r) {
        std::string prefix = r.query_param("prefix"), start_after = r.query_param("start-after"),
                    token = r.query_param("continuation-token");
        int max_keys = r.query_param("max-keys").empty() ? 1000 : std::stoi(r.query_param("max-keys"));
        bool encode = url_encode_listing && r.query_param("encoding-type") == "url";
        std::string after = token.empty() ? start_after : token;
        std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
        if (encode) body += "<EncodingType>url</EncodingType>";
        int n = 0;
        std::string last;
        bool truncated = false;
        for (auto& [k, v] : objects) {
            if (!k.starts_with(prefix) || (!after.empty() && k <= after)) continue;
            if (n == max_keys) { truncated = true; break; }
            body += "<Contents><Key>" + (encode ? encode_listing_key(k) : xml_escape(k)) + "</Key><Size>" + std::to_string(v.size()) +
                    "</Size><ETag>&quot;x&quot;</ETag></Contents>";
            last = k;
            ++n;
        }
        body += std::string("<IsTruncated>") + (truncated ? "true" : "false") + "</IsTruncated>";
        if (truncated) body += "<NextContinuationToken>" + xml_escape(last) + "</NextContinuationToken>";
        body += "</ListBucketResult>";
        return response(200, body);
    }
};

AwsConfig fake_config(const std::string& endpoint, std::string session_token = {}) {
    AwsConfig c;
    c.region = "us-east-1";
    c.endpoint = Url::parse(endpoint);
    c.credentials = std::make_shared<StaticCredentialsProvider>(
        AwsCredentials{"AKIDTEST", "SECRET-never-shown", std::move(session_token), std::nullopt, "test"});
    return c;
}

S3ClientOptions fast_retries(int attempts = 4) {
    S3ClientOptions o;
    o.retry.max_attempts = attempts;
    o.retry.base_delay = 1ms;
    o.retry.max_delay = 5ms;
    o.http.io_timeout = 2000ms;
    return o;
}

}  // namespace

// =============================================================================================
// XML
// =============================================================================================

TEST_CASE("xml: ListObjectsV2 result with namespaces, entities and CDATA", "[net][xml]") {
    const std::string doc =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c -->"
        "<ListBucketResult xmlns=\"http://doc.s3.amazonaws.com/2006-03-01/\">"
        "<Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount>"
        "<Contents><Key>p/a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;</Key><Size>12</Size></Contents>"
        "<Contents><Key>p/&#233;&#x20AC;&#x1F600;</Key><Size>0</Size></Contents>"
        "<s3:Extra xmlns:s3='x' a=\"1\" b='2'><![CDATA[<raw & text>]]></s3:Extra>"
        "<Empty/><Spaces>  two  </Spaces>"
        "<IsTruncated>false</IsTruncated></ListBucketResult>\n";
    XmlElement root = parse_xml(doc);
    CHECK(root.name == "ListBucketResult");
    std::vector<std::string> keys;
    root.for_each("Contents", [&](const XmlElement& c) { keys.emplace_back(c.child_text("Key")); });
    REQUIRE(keys.size() == 2);
    CHECK(keys[0] == "p/a & b <c> \"d\" 'e'");
    CHECK(keys[1] == "p/\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    CHECK(root.child_text("Extra") == "<raw & text>");
    CHECK(root.child("Empty") != nullptr);
    CHECK(root.child_text("Empty", "x").empty());
    CHECK(root.child_text("Spaces") == "  two  ");
    CHECK(root.child_text("Missing", "fallback") == "fallback");
}

TEST_CASE("xml: hostile and malformed input gives XmlError", "[net][xml]") {
    const std::vector<std::string> bad = {
        "",
        "   ",
        "just text",
        "<a>",
        "<a></b>",
        "<a><b></a></b>",
        "<a>&unknown;</a>",
        "<a>&#0;</a>",
        "<a>&#xD800;</a>",
        "<a>&#x110000;</a>",
        "<a>&#99999999999;</a>",
        "<a>&#x;</a>",
        "<a>&amp</a>",
        "<a x='1' x='2'/>",
        "<a x=1/>",
        "<a x='<'/>",
        "<a/><b/>",
        "<a/>trailing",
        "<!DOCTYPE a [<!ENTITY e \"x\">]><a>&e;</a>",
        "<?xml version='1.0'?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;\">]><a>&lol2;</a>",
        "<a><!ENTITY x 'y'></a>",
        "<a><![CDATA[never closed</a>",
        "<a><!-- never closed</a>",
        "<a attr='never closed></a>",
        "<1a/>",
        "< a/>",
        "<a",
    };
    for (const auto& doc : bad) {
        INFO("document: " << doc);
        CHECK_THROWS_AS(parse_xml(doc), XmlError);
    }
    // Every truncation of a valid document is an error, never a crash.
    const std::string good = "<?xml version=\"1.0\"?><R><C><K>a&amp;b</K><S>1</S></C><T>x&#65;y</T></R>";
    REQUIRE_NOTHROW(parse_xml(good));
    for (std::size_t n = 0; n + 1 < good.size(); ++n) {
        INFO("prefix length " << n);
        CHECK_THROWS_AS(parse_xml(good.substr(0, n)), XmlError);
    }
    // Depth and size limits.
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += "<a>";
    CHECK_THROWS_WITH(parse_xml(deep), Contains("deeper"));
    XmlLimits small;
    small.max_input_bytes = 10;
    CHECK_THROWS_WITH(parse_xml("<a>0123456789</a>", small), Contains("exceeds the limit"));
    small = XmlLimits{};
    small.max_elements = 3;
    CHECK_THROWS_WITH(parse_xml("<a><b/><b/><b/><b/></a>", small), Contains("more than 3 elements"));
    std::string long_name = "<" + std::string(1000, 'n') + "/>";
    CHECK_THROWS_AS(parse_xml(long_name), XmlError);
    // Random mutations: parse or XmlError, nothing else.
    std::mt19937 rng(12345);
    for (int i = 0; i < 3000; ++i) {
        std::string m = good;
        for (int k = 0; k < 3; ++k) m[rng() % m.size()] = static_cast<char>("<>&;/!?[]#x'\"= a\0"[rng() % 17]);
        try {
            parse_xml(m);
        } catch (const XmlError&) {
        }
    }
}

// =============================================================================================
// URL and configuration
// =============================================================================================

TEST_CASE("xml: the SNS answers the AWS rule actions read", "[net][xml]") {
    CHECK(parse_sns_topic_arn(R"(<?xml version="1.0"?><CreateTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">)"
                              "<CreateTopicResult><TopicArn>arn:aws:sns:us-east-1:1:a&amp;b</TopicArn></CreateTopicResult>"
                              "<ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></CreateTopicResponse>") ==
          "arn:aws:sns:us-east-1:1:a&b");
    CHECK_THROWS_AS(parse_sns_topic_arn("<CreateTopicResponse><CreateTopicResult/></CreateTopicResponse>"), XmlError);
    CHECK_THROWS_AS(parse_sns_topic_arn("<CreateTopicResponse><TopicArn>x</Topic"), XmlError);
    CHECK_THROWS_AS(parse_sns_topic_arn("not xml"), XmlError);

    // Members are read from Subscriptions only; one lacking an Endpoint is left out; a TopicArn
    // outside a member (in a comment, in another element) is not a subscription.
    const auto page = parse_sns_subscriptions(
        "<ListSubscriptionsResponse><ListSubscriptionsResult><Subscriptions>"
        "<member><TopicArn>t1</TopicArn><Protocol>email</Protocol><Endpoint>a@b.c</Endpoint><Owner>1</Owner></member>"
        "<member><TopicArn>t2</TopicArn><Protocol>sms</Protocol></member>"
        "<!-- <member><TopicArn>t3</TopicArn><Protocol>sms</Protocol><Endpoint>+1</Endpoint></member> -->"
        "<member><Protocol>sms</Protocol><Endpoint>+1&lt;2</Endpoint><TopicArn>t4</TopicArn></member>"
        "</Subscriptions><NextToken>next/page+1</NextToken></ListSubscriptionsResult></ListSubscriptionsResponse>");
    REQUIRE(page.subscriptions.size() == 2);
    CHECK(page.subscriptions[0].topic_arn == "t1");
    CHECK(page.subscriptions[0].protocol == "email");
    CHECK(page.subscriptions[0].endpoint == "a@b.c");
    CHECK(page.subscriptions[1].topic_arn == "t4");
    CHECK(page.subscriptions[1].endpoint == "+1<2");
    CHECK(page.next_token == "next/page+1");
    const auto last = parse_sns_subscriptions("<ListSubscriptionsResponse><ListSubscriptionsResult><Subscriptions/></ListSubscriptionsResult></ListSubscriptionsResponse>");
    CHECK(last.subscriptions.empty());
    CHECK(last.next_token.empty());
    CHECK_THROWS_AS(parse_sns_subscriptions("<ListSubscriptionsResponse><Subscriptions><member>"), XmlError);
    CHECK_THROWS_AS(parse_sns_subscriptions("<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>"), XmlError);

    CHECK(form_encode({{"Action", "Publish"}, {"Message", "a b&c=d/é"}}) == "Action=Publish&Message=a%20b%26c%3Dd%2F%C3%A9");
}

TEST_CASE("url: parsing and percent-decoding", "[net][url]") {
    Url u = Url::parse("HTTPS://Example.COM/a/b?x=1");
    CHECK(u.scheme == "https");
    CHECK(u.host == "example.com");
    CHECK(u.port == 443);
    CHECK(u.target == "/a/b?x=1");
    CHECK(u.authority() == "example.com");
    Url v = Url::parse("http://[::1]:8080");
    CHECK(v.host == "::1");
    CHECK(v.port == 8080);
    CHECK(v.target == "/");
    CHECK(v.authority() == "[::1]:8080");
    CHECK(Url::parse("http://127.0.0.1:9000").authority() == "127.0.0.1:9000");
    for (const char* bad : {"ftp://x", "http://", "http://host:0", "http://host:70000", "http://host:12a", "http://u:p@host/",
                            "http://host/a b", "host:80", "http://[::1"})
        CHECK_THROWS_AS(Url::parse(bad), AwsConfigError);
    CHECK(percent_decode("a%20b%2Bc+d") == "a b+c+d");
    CHECK(percent_decode("a%20b%2Bc+d", true) == "a b+c d");
    CHECK_THROWS_AS(percent_decode("%4"), FormatError);
    CHECK_THROWS_AS(percent_decode("%zz"), FormatError);
    CHECK(is_ip_literal("127.0.0.1"));
    CHECK(is_ip_literal("::1"));
    CHECK_FALSE(is_ip_literal("256.0.0.1"));
    CHECK_FALSE(is_ip_literal("s3.amazonaws.com"));
    CHECK_FALSE(is_ip_literal("1.2.3"));
}

TEST_CASE("aws config: region, endpoint override and addressing style", "[net][config]") {
    TempDir home;
    auto base = std::map<std::string, std::string>{{"HOME", home.path.string()}, {"AWS_EC2_METADATA_DISABLED", "true"}};

    SECTION("defaults: us-east-1, AWS endpoint, virtual-hosted for DNS-compatible buckets") {
        AwsConfig c = AwsConfig::from_environment(env_of(base));
        CHECK(c.region == "us-east-1");
        CHECK_FALSE(c.endpoint.has_value());
        auto e = c.bucket_endpoint("my-bucket");
        CHECK_FALSE(e.path_style);
        CHECK(e.origin.host == "my-bucket.s3.us-east-1.amazonaws.com");
        CHECK(e.origin.https());
        CHECK(e.path_prefix.empty());
        // Dotted (wildcard certificate cannot match) and non-DNS names: path-style.
        auto d = c.bucket_endpoint("my.bucket");
        CHECK(d.path_style);
        CHECK(d.origin.host == "s3.us-east-1.amazonaws.com");
        CHECK(d.path_prefix == "/my.bucket");
        CHECK(c.bucket_endpoint("My_Bucket").path_style);
    }
    SECTION("AWS_REGION wins over AWS_DEFAULT_REGION, which wins over the profile") {
        home.write(".aws/config", "[default]\nregion = ap-south-1\n");
        auto env = base;
        CHECK(AwsConfig::from_environment(env_of(env)).region == "ap-south-1");
        env["AWS_DEFAULT_REGION"] = "eu-west-1";
        CHECK(AwsConfig::from_environment(env_of(env)).region == "eu-west-1");
        env["AWS_REGION"] = "us-west-2";
        AwsConfig c = AwsConfig::from_environment(env_of(env));
        CHECK(c.region == "us-west-2");
        CHECK(c.bucket_endpoint("bkt").origin.host == "bkt.s3.us-west-2.amazonaws.com");
        env["AWS_REGION"] = "cn-north-1";
        CHECK(AwsConfig::from_environment(env_of(env)).bucket_endpoint("bkt").origin.host == "bkt.s3.cn-north-1.amazonaws.com.cn");
        env["AWS_REGION"] = "bad region/";
        CHECK_THROWS_AS(AwsConfig::from_environment(env_of(env)), AwsConfigError);
    }
    SECTION("endpoint override: AWS_ENDPOINT_URL_S3 then AWS_ENDPOINT_URL; path-style") {
        auto env = base;
        env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000";
        AwsConfig c = AwsConfig::from_environment(env_of(env));
        REQUIRE(c.endpoint);
        CHECK(c.endpoint->port == 9000);
        auto e = c.bucket_endpoint("smdebug-test");
        CHECK(e.path_style);
        CHECK(e.origin.authority() == "127.0.0.1:9000");
        CHECK(e.path_prefix == "/smdebug-test");
        env["AWS_ENDPOINT_URL_S3"] = "https://minio.example:9443/base/";
        c = AwsConfig::from_environment(env_of(env));
        e = c.bucket_endpoint("smdebug-test");
        CHECK(e.origin.str() == "https://minio.example:9443/");
        CHECK(e.path_prefix == "/base/smdebug-test");
        env["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true";
        CHECK_FALSE(AwsConfig::from_environment(env_of(env)).endpoint.has_value());
        env.erase("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
        env["AWS_ENDPOINT_URL_S3"] = "not a url";
        CHECK_THROWS_WITH(AwsConfig::from_environment(env_of(env)), Contains("AWS_ENDPOINT_URL_S3"));
    }
    SECTION("addressing style from the profile, and an explicit virtual-hosted override") {
        home.write(".aws/config", "[profile dev]\nregion = eu-central-1\ns3 =\n  addressing_style = path\n  endpoint_url = http://10.0.0.1:1234\n");
        auto env = base;
        env["AWS_PROFILE"] = "dev";
        AwsConfig c = AwsConfig::from_environment(env_of(env));
        CHECK(c.addressing == AddressingStyle::path);
        CHECK(c.region == "eu-central-1");
        REQUIRE(c.endpoint);
        CHECK(c.endpoint->host == "10.0.0.1");
        AwsConfig v;
        v.addressing = AddressingStyle::virtual_hosted;
        CHECK(v.bucket_endpoint("abc").origin.host == "abc.s3.us-east-1.amazonaws.com");
        CHECK_THROWS_AS(v.bucket_endpoint("Bad_Name"), AwsConfigError);
    }
    SECTION("AWS_CA_BUNDLE") {
        auto env = base;
        env["AWS_CA_BUNDLE"] = "/etc/extra-ca.pem";
        CHECK(AwsConfig::from_environment(env_of(env)).extra_ca_file == "/etc/extra-ca.pem");
    }
}

TEST_CASE("aws profile files: sections, comments, nesting, malformed lines", "[net][config]") {
    auto cfg = ProfileFile::parse_text("# comment\n; other\n[default]\nregion=us-west-1\n[profile  x ]\nRegion = eu-west-3\n"
                                       "s3 =\n    addressing_style = virtual\n[sso-session s]\nsso_region = z\n[plain]\nregion = ignored\n",
                                       true);
    CHECK(cfg.get("default", "region") == std::optional<std::string>("us-west-1"));
    CHECK(cfg.get("x", "region") == std::optional<std::string>("eu-west-3"));
    CHECK(cfg.get("x", "s3.addressing_style") == std::optional<std::string>("virtual"));
    CHECK(cfg.profile("s") == nullptr);
    CHECK(cfg.profile("plain") == nullptr);
    auto creds = ProfileFile::parse_text("[plain]\naws_access_key_id = A\n", false);
    CHECK(creds.get("plain", "aws_access_key_id") == std::optional<std::string>("A"));
    CHECK_THROWS_WITH(ProfileFile::parse_text("[default]\nno equals sign\n", false, "/x/credentials"),
                      Contains("/x/credentials") && Contains("line 2"));
    CHECK_THROWS_AS(ProfileFile::parse_text("[unterminated\n", false), AwsConfigError);
}

TEST_CASE("credentials: environment and profile files", "[net][credentials]") {
    TempDir home;
    auto base = std::map<std::string, std::string>{{"HOME", home.path.string()}, {"AWS_EC2_METADATA_DISABLED", "true"}};

    SECTION("environment variables first") {
        auto env = base;
        env["AWS_ACCESS_KEY_ID"] = "AKENV";
        env["AWS_SECRET_ACCESS_KEY"] = "env-secret";
        env["AWS_SESSION_TOKEN"] = "tok";
        home.write(".aws/credentials", "[default]\naws_access_key_id = AKFILE\naws_secret_access_key = file-secret\n");
        auto c = DefaultCredentialsChain(env_of(env)).get();
        CHECK(c.access_key_id == "AKENV");
        CHECK(c.secret_access_key == "env-secret");
        CHECK(c.session_token == "tok");
        CHECK(c.source == "environment");
        env.erase("AWS_SECRET_ACCESS_KEY");
        CHECK_THROWS_AS(DefaultCredentialsChain(env_of(env)).get(), CredentialsError);
    }
    SECTION("default and named profiles; credentials file before config file") {
        home.write(".aws/credentials",
                   "[default]\naws_access_key_id = AKDEF\naws_secret_access_key = def-secret\n"
                   "[dev]\naws_access_key_id = AKDEV\naws_secret_access_key = dev-secret\naws_session_token = devtok\n");
        home.write(".aws/config", "[profile cfgonly]\naws_access_key_id = AKCFG\naws_secret_access_key = cfg-secret\n"
                                  "[profile dev]\naws_access_key_id = AKIGNORED\naws_secret_access_key = ignored\n");
        auto env = base;
        CHECK(DefaultCredentialsChain(env_of(env)).get().access_key_id == "AKDEF");
        env["AWS_PROFILE"] = "dev";
        auto c = DefaultCredentialsChain(env_of(env)).get();
        CHECK(c.access_key_id == "AKDEV");
        CHECK(c.session_token == "devtok");
        CHECK(c.source == "profile dev");
        env["AWS_PROFILE"] = "cfgonly";
        CHECK(DefaultCredentialsChain(env_of(env)).get().access_key_id == "AKCFG");
        env["AWS_PROFILE"] = "nope";
        CHECK_THROWS_WITH(DefaultCredentialsChain(env_of(env)).get(), Contains("'nope' not found"));
    }
    SECTION("AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE") {
        auto cred = home.write("elsewhere/creds", "[p]\naws_access_key_id = AKELSE\naws_secret_access_key = s\n");
        auto conf = home.write("elsewhere/conf", "[profile p]\nregion = sa-east-1\n");
        auto env = base;
        env["AWS_SHARED_CREDENTIALS_FILE"] = cred;
        env["AWS_CONFIG_FILE"] = conf;
        env["AWS_PROFILE"] = "p";
        CHECK(DefaultCredentialsChain(env_of(env)).get().access_key_id == "AKELSE");
        CHECK(AwsConfig::from_environment(env_of(env)).region == "sa-east-1");
    }
    SECTION("nothing configured: a clear error, no secret, no metadata request") {
        try {
            DefaultCredentialsChain(env_of(base)).get();
            FAIL("expected CredentialsError");
        } catch (const CredentialsError& e) {
            CHECK_THAT(e.what(), Contains("no AWS credentials found") && Contains("AWS_EC2_METADATA_DISABLED"));
        }
    }
}

TEST_CASE("credentials: ISO 8601 expirations", "[net][credentials]") {
    using namespace std::chrono;
    auto t = net::detail::parse_iso8601("2024-02-29T12:34:56Z");
    REQUIRE(t);
    CHECK(duration_cast<seconds>(t->time_since_epoch()).count() == 1709210096);
    CHECK(net::detail::parse_iso8601("2024-02-29T12:34:56.123Z") == t);
    CHECK(net::detail::parse_iso8601("2024-02-29T14:34:56+02:00") == t);
    CHECK_FALSE(net::detail::parse_iso8601("2023-02-29T00:00:00Z"));
    CHECK_FALSE(net::detail::parse_iso8601("2024-02-29T12:34:56"));
    CHECK_FALSE(net::detail::parse_iso8601("yesterday"));
}

namespace {
std::string iso(std::chrono::system_clock::time_point tp) {
    std::time_t t = std::chrono::system_clock::to_time_t(tp);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}
std::string creds_json(const std::string& id, std::chrono::system_clock::duration valid_for) {
    return "{\"Code\":\"Success\",\"AccessKeyId\":\"" + id + "\",\"SecretAccessKey\":\"container-secret\",\"Token\":\"ctok\","
           "\"Expiration\":\"" + iso(std::chrono::system_clock::now() + valid_for) + "\"}";
}
}  // namespace

TEST_CASE("credentials: container credentials endpoint (FULL_URI on 127.0.0.1)", "[net][credentials]") {
    TempDir home;
    std::mutex mu;
    std::vector<FakeRequest> seen;
    std::atomic<int> validity_minutes{60};
    std::atomic<int> status{200};
    FakeServer server(each_request([&](const FakeRequest& r) {
        std::lock_guard lock(mu);
        seen.push_back(r);
        if (status != 200) return response(status, "{\"SecretAccessKey\":\"leaked-secret\"}");
        return response(200, creds_json("AKCONT" + std::to_string(seen.size()), std::chrono::minutes(validity_minutes.load())));
    }));
    auto env = std::map<std::string, std::string>{{"HOME", home.path.string()},
                                                  {"AWS_EC2_METADATA_DISABLED", "true"},
                                                  {"AWS_CONTAINER_CREDENTIALS_FULL_URI", server.url("/v2/credentials/abc")},
                                                  {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer env-token"}};

    SECTION("token from the environment; cached until close to expiry") {
        DefaultCredentialsChain chain(env_of(env));
        auto c = chain.get();
        CHECK(c.access_key_id == "AKCONT1");
        CHECK(c.secret_access_key == "container-secret");
        CHECK(c.session_token == "ctok");
        CHECK(c.source == "container");
        REQUIRE(c.expiration);
        CHECK(chain.get().access_key_id == "AKCONT1");  // cached: valid for an hour
        {
            std::lock_guard lock(mu);
            REQUIRE(seen.size() == 1);
            CHECK(seen[0].target == "/v2/credentials/abc");
            CHECK(seen[0].header("Authorization") == "Bearer env-token");
        }
        // Credentials inside the refresh window are fetched again.
        auto p = ContainerCredentialsProvider::from_environment(env_of(env));
        validity_minutes = 2;
        CHECK(p->get().access_key_id == "AKCONT2");
        CHECK(p->get().access_key_id == "AKCONT3");
        CHECK(p->fetch_count() == 2);
        // A failed refresh while the old credentials are still valid keeps them.
        status = 500;
        CHECK(p->get().access_key_id == "AKCONT3");
    }
    SECTION("the token file wins over the token variable and is re-read") {
        auto file = home.write("token", "file-token\n");
        env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = file;
        auto p = ContainerCredentialsProvider::from_environment(env_of(env));
        p->get();
        std::lock_guard lock(mu);
        CHECK(seen.back().header("Authorization") == "file-token");
    }
    SECTION("HTTP errors: typed, naming the URL, never the body") {
        status = 403;
        auto p = ContainerCredentialsProvider::from_environment(env_of(env));
        try {
            p->get();
            FAIL("expected CredentialsError");
        } catch (const CredentialsError& e) {
            CHECK_THAT(e.what(), Contains("403") && Contains("/v2/credentials/abc"));
            CHECK_THAT(e.what(), !Contains("leaked-secret"));
        }
    }
    SECTION("RELATIVE_URI targets 169.254.170.2; plain http FULL_URI only to loopback") {
        auto rel = env_of({{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/xyz"}});
        CHECK(ContainerCredentialsProvider::from_environment(rel)->url().str() == "http://169.254.170.2/v2/credentials/xyz");
        CHECK_THROWS_AS(ContainerCredentialsProvider::from_environment(env_of({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://10.1.2.3/c"}})),
                        AwsConfigError);
        CHECK(ContainerCredentialsProvider::from_environment(env_of({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "https://creds.example/c"}})));
        CHECK(ContainerCredentialsProvider::from_environment(env_of({})) == nullptr);
    }
}

TEST_CASE("credentials: EC2 instance metadata, IMDSv2", "[net][credentials]") {
    TempDir home;
    std::mutex mu;
    std::vector<FakeRequest> seen;
    bool attach_role = true;
    FakeServer server(each_request([&](const FakeRequest& r) {
        std::lock_guard lock(mu);
        seen.push_back(r);
        if (r.method == "PUT" && r.target == "/latest/api/token") {
            if (r.header("X-aws-ec2-metadata-token-ttl-seconds").empty()) return response(400, "");
            return response(200, "TOKEN-123");
        }
        if (r.header("X-aws-ec2-metadata-token") != "TOKEN-123") return response(401, "");
        if (r.target == "/latest/meta-data/iam/security-credentials/")
            return attach_role ? response(200, "my-role\n") : response(404, "");
        if (r.target == "/latest/meta-data/iam/security-credentials/my-role")
            return response(200, creds_json("AKIMDS", std::chrono::hours(6)));
        return response(404, "");
    }));
    auto env = std::map<std::string, std::string>{{"HOME", home.path.string()},
                                                  {"AWS_EC2_METADATA_SERVICE_ENDPOINT", server.url("/")}};

    SECTION("the chain falls through to IMDS: token PUT, role GET, credentials GET") {
        DefaultCredentialsChain chain(env_of(env));
        auto c = chain.get();
        CHECK(c.access_key_id == "AKIMDS");
        CHECK(c.source == "imds");
        CHECK(chain.get().access_key_id == "AKIMDS");
        std::lock_guard lock(mu);
        REQUIRE(seen.size() == 3);  // cached afterwards
        CHECK(seen[0].method == "PUT");
        CHECK(seen[1].target == "/latest/meta-data/iam/security-credentials/");
        CHECK(seen[2].target == "/latest/meta-data/iam/security-credentials/my-role");
    }
    SECTION("no role attached: CredentialsError") {
        attach_role = false;
        auto p = ImdsCredentialsProvider::from_environment(env_of(env));
        CHECK_THROWS_WITH(p->get(), Contains("no IAM role"));
    }
    SECTION("AWS_EC2_METADATA_DISABLED=true") {
        env["AWS_EC2_METADATA_DISABLED"] = "TRUE";
        CHECK(ImdsCredentialsProvider::from_environment(env_of(env)) == nullptr);
        CHECK_THROWS_AS(DefaultCredentialsChain(env_of(env)).get(), CredentialsError);
        std::lock_guard lock(mu);
        CHECK(seen.empty());
    }
    SECTION("an unreachable endpoint fails fast with a typed error") {
        std::uint16_t dead_port;
        {
            asio::io_context io;
            tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
            dead_port = a.local_endpoint().port();
        }
        env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = "http://127.0.0.1:" + std::to_string(dead_port);
        CHECK_THROWS_AS(ImdsCredentialsProvider::from_environment(env_of(env))->get(), CredentialsError);
    }
}

// =============================================================================================
// HTTP client
// =============================================================================================

TEST_CASE("http: content-length and chunked bodies, keep-alive reuse", "[net][http]") {
    FakeServer server(each_request([](const FakeRequest& r) {
        if (r.target == "/chunked")
            return std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                               "5;ext=1\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n");
        if (r.target == "/echo") return response(200, r.method + ":" + r.body + ":" + r.header("Host"));
        if (r.target == "/continue") return "HTTP/1.1 100 Continue\r\n\r\n" + response(201, "after");
        if (r.method == "HEAD") return std::string("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n");
        return response(200, "body of " + r.target, {{"X-Test", "  padded  "}});
    }));
    HttpClient c;
    CHECK(get(c, "http://localhost:" + std::to_string(server.port()) + "/dns").body.text() == "body of /dns");  // resolved
    c.clear_pool();
    auto a = get(c, server.url("/one"));
    CHECK(a.status == 200);
    CHECK(a.body.text() == "body of /one");
    REQUIRE(a.header("x-test"));
    CHECK(*a.header("X-TEST") == "padded");
    CHECK(get(c, server.url("/chunked")).body.text() == "hello 0123456789");
    CHECK(get(c, server.url("/continue")).status == 201);
    HttpRequest put;
    put.method = "PUT";
    put.url = Url::parse(server.url("/echo"));
    put.body = as_bytes("payload");
    CHECK(c.send(put).body.text() == "PUT:payload:127.0.0.1:" + std::to_string(server.port()));
    auto h = get(c, server.url("/head"), "HEAD");  // Content-Length without a body
    CHECK(h.status == 200);
    CHECK(h.body.empty());
    CHECK(get(c, server.url("/again")).body.text() == "body of /again");
    CHECK(c.connections_opened() == 2);  // the "localhost" one, then one for all of 127.0.0.1
    CHECK(server.connections == 2);
}

TEST_CASE("http: malformed responses give typed errors", "[net][http]") {
    std::mutex reply_mu;
    std::string reply_text;
    FakeServer server([&](FakeConn& c) {
        if (!c.read_request()) return;
        std::string r;
        {
            std::lock_guard lock(reply_mu);
            r = reply_text;
        }
        c.write(r);
    });
    struct Reply {  // `reply = text` sets what the server sends next
        std::mutex& mu;
        std::string& text;
        Reply& operator=(std::string t) {
            std::lock_guard lock(mu);
            text = std::move(t);
            return *this;
        }
    } reply{reply_mu, reply_text};
    HttpClientOptions o;
    o.io_timeout = 2000ms;
    o.max_body_bytes = 1000;
    o.max_header_bytes = 512;
    HttpClient c(o);
    auto expect_protocol_error = [&](std::string r, const char* what) {
        reply = std::move(r);
        INFO(what);
        CHECK_THROWS_AS(get(c, server.url("/x")), HttpProtocolError);
    };
    expect_protocol_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", "bad chunk size");
    expect_protocol_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n", "empty chunk size");
    expect_protocol_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n", "chunk size overflow");
    expect_protocol_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY\r\n0\r\n\r\n", "chunk without CRLF");
    expect_protocol_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", "negative chunk size");
    expect_protocol_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(5000, '1') + "\r\n", "endless chunk line");
    expect_protocol_error("HTTP/1.1 2000 OK\r\n\r\n", "bad status code");
    expect_protocol_error("HTTP/2 200 OK\r\n\r\n", "bad version");
    expect_protocol_error("garbage\r\n\r\n", "no status line");
    expect_protocol_error("HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", "header without colon");
    expect_protocol_error("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "bad header name");
    expect_protocol_error("HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n", "folded header");
    expect_protocol_error("HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n", "bad content-length");
    expect_protocol_error("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", "conflicting content-length");
    reply = "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n";
    CHECK_THROWS_AS(get(c, server.url("/x")), ResponseTooLarge);
    reply = "HTTP/1.1 200 OK\r\nX-Big: " + std::string(600, 'x') + "\r\n\r\n";
    CHECK_THROWS_AS(get(c, server.url("/x")), ResponseTooLarge);
    reply = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + std::string(1024, 'a') + "\r\n400\r\n";
    CHECK_THROWS_AS(get(c, server.url("/x")), ResponseTooLarge);
    reply = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
    CHECK_THROWS_AS(get(c, server.url("/x")), TruncatedResponse);
    reply = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort";
    CHECK_THROWS_AS(get(c, server.url("/x")), TruncatedResponse);
    reply = "HTTP/1.1 200 OK\r\n";
    CHECK_THROWS_AS(get(c, server.url("/x")), TruncatedResponse);
    reply = "HTTP/1.0 200 OK\r\n\r\nread until close";
    CHECK(get(c, server.url("/x")).body.text() == "read until close");
    reply = "";
    CHECK_THROWS_AS(get(c, server.url("/x")), ConnectionError);
}

TEST_CASE("http: request head injection is refused", "[net][http]") {
    HttpClient c;
    HttpRequest r;
    r.url = Url::parse("http://127.0.0.1:1/");
    r.headers.push_back({"X-Evil", "a\r\nInjected: yes"});
    CHECK_THROWS_AS(c.send(r), UsageError);
    r.headers = {{"Bad Name", "v"}};
    CHECK_THROWS_AS(c.send(r), UsageError);
    r.headers.clear();
    r.method = "GET /x";
    CHECK_THROWS_AS(c.send(r), UsageError);
}

TEST_CASE("http: a pooled connection closed by the server is replaced", "[net][http]") {
    SECTION("closed after the response: detected before reuse") {
        FakeServer server([](FakeConn& c) {
            if (auto r = c.read_request()) c.write(response(200, "ok"));
            c.close();
        });
        HttpClient c;
        CHECK(get(c, server.url("/1")).body.text() == "ok");
        std::this_thread::sleep_for(50ms);
        CHECK(get(c, server.url("/2")).body.text() == "ok");
        CHECK(c.connections_opened() == 2);
    }
    SECTION("closed after reading the next request, without answering: sent again once") {
        std::atomic<int> requests{0};
        FakeServer server([&](FakeConn& c) {
            int served = 0;
            while (auto r = c.read_request()) {
                ++requests;
                if (served++ == 1) {  // the second request on a connection: drop it
                    c.close();
                    return;
                }
                c.write(response(200, "ok " + r->target));
            }
        });
        HttpClient c;
        CHECK(get(c, server.url("/1")).body.text() == "ok /1");
        CHECK(get(c, server.url("/2")).body.text() == "ok /2");
        CHECK(get(c, server.url("/3")).body.text() == "ok /3");
        // /2 and /3 each hit a connection's second request, dropped, and were sent again.
        CHECK(requests == 5);
        CHECK(c.connections_opened() == 3);
    }
    SECTION("a fresh connection is not retried") {
        std::atomic<int> requests{0};
        FakeServer server([&](FakeConn& c) {
            if (c.read_request()) ++requests;
            c.close();
        });
        HttpClient c;
        CHECK_THROWS_AS(get(c, server.url("/1")), ConnectionError);
        CHECK(requests == 1);
    }
}

TEST_CASE("http: timeouts and refused connections", "[net][http]") {
    SECTION("read timeout") {
        FakeServer server([](FakeConn& c) {
            c.read_request();
            c.read_request();  // never answers; unblocked when the client closes
        });
        HttpClientOptions o;
        o.io_timeout = 200ms;
        HttpClient c(o);
        auto t0 = std::chrono::steady_clock::now();
        CHECK_THROWS_AS(get(c, server.url("/slow")), NetworkTimeout);
        CHECK(std::chrono::steady_clock::now() - t0 < 5s);
    }
    SECTION("connection refused") {
        std::uint16_t port;
        {
            asio::io_context io;
            tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
            port = a.local_endpoint().port();
        }
        HttpClient c;
        CHECK_THROWS_WITH(get(c, "http://127.0.0.1:" + std::to_string(port) + "/"), Contains("cannot connect to http://127.0.0.1:"));
    }
}

TEST_CASE("http: TLS verification is on by default", "[net][http][tls]") {
    TempDir dir;
    TestCert good = make_cert(dir, "good", "IP:127.0.0.1,DNS:localhost");
    TestCert wrong_host = make_cert(dir, "wrong", "DNS:example.com");
    auto good_ctx = server_tls(good);
    auto wrong_ctx = server_tls(wrong_host);
    auto handler = each_request([](const FakeRequest& r) { return response(200, "secure " + r.target); });
    FakeServer server(handler, good_ctx.get());
    FakeServer wrong_server(handler, wrong_ctx.get());

    SECTION("an untrusted self-signed certificate is rejected") {
        HttpClient c;
        CHECK_THROWS_WITH(get(c, server.url("/x")), Contains("certificate verification failed") && Contains(server.url("")));
        CHECK_THROWS_AS(get(c, server.url("/x")), TlsError);
    }
    SECTION("trusted through the extra CA file: works, and by host name too") {
        HttpClientOptions o;
        o.extra_ca_file = good.cert_file;
        HttpClient c(o);
        CHECK(get(c, server.url("/x")).body.text() == "secure /x");
        CHECK(get(c, server.url("/y")).body.text() == "secure /y");
        CHECK(c.connections_opened() == 1);
        CHECK(get(c, "https://localhost:" + std::to_string(server.port()) + "/z").body.text() == "secure /z");
    }
    SECTION("a trusted certificate for another host is rejected") {
        HttpClientOptions o;
        o.extra_ca_file = wrong_host.cert_file;
        HttpClient c(o);
        CHECK_THROWS_AS(get(c, wrong_server.url("/x")), TlsError);
    }
    SECTION("a missing CA file is a clear error") {
        HttpClientOptions o;
        o.extra_ca_file = (dir.path / "missing.pem").string();
        HttpClient c(o);
        CHECK_THROWS_WITH(get(c, server.url("/x")), Contains("missing.pem"));
    }
}

// =============================================================================================
// S3 client against a fake S3
// =============================================================================================

TEST_CASE("s3 client: requests are SigV4-signed", "[net][s3]") {
    FakeS3 s3;
    S3Client client(fake_config(s3.endpoint(), "SESSION-TOKEN"), fast_retries());
    client.put_object("b", "dir/a b+c.bin", as_bytes("hello"));
    auto got = client.get_object("b", "dir/a b+c.bin");
    CHECK(got.data.text() == "hello");
    std::lock_guard lock(s3.mu);
    REQUIRE(s3.log.size() == 2);
    const FakeRequest& put = s3.log[0];
    CHECK(put.target == "/b/dir/a%20b%2Bc.bin");
    CHECK_THAT(put.header("Authorization"), Contains("AWS4-HMAC-SHA256 Credential=AKIDTEST/") && Contains("/us-east-1/s3/aws4_request") &&
                                                Contains("SignedHeaders=") && Contains("Signature="));
    CHECK(put.header("x-amz-content-sha256") == sha256_hex(std::string_view("hello")));
    CHECK(put.header("X-Amz-Security-Token") == "SESSION-TOKEN");
    CHECK(put.header("x-amz-date").size() == 16);
    CHECK(put.header("Host") == "127.0.0.1:" + std::to_string(s3.server.port()));
    CHECK_FALSE(s3.log[1].header("x-amz-content-sha256").empty());
    for (const auto& r : s3.log)
        for (const auto& [n, v] : r.headers) CHECK_THAT(v, !Contains("SECRET-never-shown"));
}

// A provider that fails after `delay`, counting its calls (issue 51: a failed resolution was not
// remembered, so each request in flight asked again, one after another, on the I/O thread).
class FailingProvider final : public CredentialsProvider {
public:
    explicit FailingProvider(std::chrono::milliseconds delay) : delay_(delay) {}
    AwsCredentials get() override {
        ++calls;
        std::this_thread::sleep_for(delay_);
        throw CredentialsError("no IAM role is attached (test provider)");
    }
    std::atomic<int> calls{0};

private:
    std::chrono::milliseconds delay_;
};

TEST_CASE("s3 client: a failed credentials resolution is remembered: 8 concurrent requests ask the provider once", "[net][s3][credentials]") {
    FakeS3 s3;
    s3.objects["k"] = "payload";
    AwsConfig config = fake_config(s3.endpoint());
    auto provider = std::make_shared<FailingProvider>(100ms);
    config.credentials = provider;
    S3ClientOptions o = fast_retries();
    o.credentials_retry_after = 400ms;
    S3Client client(config, o);
    std::atomic<int> failed{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&] {
            try {
                (void)client.get_object("b", "k");
            } catch (const CredentialsError& e) {
                if (std::string(e.what()).find("no IAM role is attached (test provider)") != std::string::npos) ++failed;
            }
        });
    for (auto& t : threads) t.join();
    CHECK(failed == 8);
    CHECK(provider->calls == 1);
    CHECK(client.credential_resolutions() == 1);
    CHECK(s3.total() == 0);  // nothing was sent unsigned
    // A batch fails the same way, without asking again.
    std::vector<GetRequest> gets{{"b", "k", std::nullopt}, {"b", "k", std::nullopt}};
    CHECK_THROWS_AS(client.get_many(gets, [](std::size_t, GetObjectResult&&, const std::exception_ptr& e) {
        if (e) std::rethrow_exception(e);
    }), CredentialsError);
    CHECK(provider->calls == 1);
    // Once the retry-after has passed, the provider is asked again.
    std::this_thread::sleep_for(450ms);
    CHECK_THROWS_AS(client.head_object("b", "k"), CredentialsError);
    CHECK(provider->calls == 2);
}

// Counts its calls; credentials that expire `validity` from now.
class CountingProvider final : public CredentialsProvider {
public:
    explicit CountingProvider(std::chrono::seconds validity) : validity_(validity) {}
    AwsCredentials get() override {
        ++calls;
        return AwsCredentials{"AKIDTEST", "SECRET-never-shown", "tok", std::chrono::system_clock::now() + validity_, "test"};
    }
    std::atomic<int> calls{0};

private:
    std::chrono::seconds validity_;
};

TEST_CASE("s3 client: credentials are asked again only when they near their expiry", "[net][s3][credentials]") {
    FakeS3 s3;
    s3.objects["k"] = "payload";
    SECTION("valid for an hour: asked once") {
        AwsConfig config = fake_config(s3.endpoint());
        auto provider = std::make_shared<CountingProvider>(std::chrono::hours(1));
        config.credentials = provider;
        S3Client client(config, fast_retries());
        for (int i = 0; i < 5; ++i) CHECK(client.get_object("b", "k").data.text() == "payload");
        CHECK(provider->calls == 1);
    }
    SECTION("within the refresh window (5 minutes): asked again after the retry-after") {
        AwsConfig config = fake_config(s3.endpoint());
        auto provider = std::make_shared<CountingProvider>(std::chrono::seconds(120));
        config.credentials = provider;
        S3ClientOptions o = fast_retries();
        o.credentials_retry_after = 50ms;
        S3Client client(config, o);
        CHECK(client.get_object("b", "k").data.text() == "payload");
        CHECK(client.get_object("b", "k").data.text() == "payload");
        CHECK(provider->calls == 1);
        std::this_thread::sleep_for(80ms);
        CHECK(client.get_object("b", "k").data.text() == "payload");
        CHECK(provider->calls == 2);
    }
}

// Blocks in get() until released (or 3 s), telling whether it is blocking now.
class BlockingProvider final : public CredentialsProvider {
public:
    AwsCredentials get() override {
        std::unique_lock lock(mu);
        busy = true;
        cv.notify_all();
        cv.wait_for(lock, 3s, [&] { return released; });
        busy = false;
        return AwsCredentials{"AKIDTEST", "SECRET-never-shown", "", std::nullopt, "test"};
    }
    void release() {
        std::lock_guard lock(mu);
        released = true;
        cv.notify_all();
    }
    std::mutex mu;
    std::condition_variable cv;
    bool busy = false, released = false;
};

TEST_CASE("s3 client: the I/O thread keeps running while a slow provider resolves credentials", "[net][s3][credentials]") {
    FakeS3 s3;
    s3.objects["k"] = "payload";
    AwsConfig config = fake_config(s3.endpoint());
    auto provider = std::make_shared<BlockingProvider>();
    config.credentials = provider;
    S3Client client(config, fast_retries());
    auto executor = client.http().executor();  // the I/O thread runs
    std::string got;
    std::thread reader([&] { got = std::string(client.get_object("b", "k").data.text()); });
    {
        std::unique_lock lock(provider->mu);
        REQUIRE(provider->cv.wait_for(lock, 2s, [&] { return provider->busy; }));
    }
    // A timer on the client's I/O thread fires while the provider still blocks.
    auto timer = asio::co_spawn(executor, []() -> asio::awaitable<bool> {
        asio::steady_timer t(co_await asio::this_coro::executor, 20ms);
        co_await t.async_wait(asio::use_awaitable);
        co_return true;
    }(), asio::use_future);
    const bool fired = timer.wait_for(1s) == std::future_status::ready;
    bool still_blocking;
    {
        std::lock_guard lock(provider->mu);
        still_blocking = provider->busy;
    }
    provider->release();
    reader.join();
    CHECK(fired);
    CHECK(still_blocking);
    CHECK(got == "payload");
    CHECK(client.http().io_threads_started() == 1);
}

TEST_CASE("s3 client: a PUT's body is hashed before its request enters the I/O thread", "[net][s3]") {
    FakeS3 s3;
    S3Client client(fake_config(s3.endpoint()), fast_retries());
    client.resolve_credentials();
    // The coroutine signs the hash it is given: it does not hash the body itself.
    const std::string given(64, 'a');
    const std::string body = "hello";
    auto put = asio::co_spawn(client.http().executor(),
                              client.async_put_object("b", "k", as_bytes(body), "application/octet-stream", given), asio::use_future);
    put.get();
    // The overload without a hash hashes where it is called (here: this thread).
    auto put2 = asio::co_spawn(client.http().executor(), client.async_put_object("b", "k2", as_bytes(body)), asio::use_future);
    put2.get();
    std::lock_guard lock(s3.mu);
    REQUIRE(s3.log.size() == 2);
    CHECK(s3.log[0].header("x-amz-content-sha256") == given);
    CHECK(s3.log[1].header("x-amz-content-sha256") == sha256_hex(std::string_view("hello")));
}

TEST_CASE("s3 client: a coroutine started before any credentials were resolved fails with CredentialsError", "[net][s3][credentials]") {
    FakeS3 s3;
    s3.objects["k"] = "payload";
    S3Client client(fake_config(s3.endpoint()), fast_retries());
    auto get = asio::co_spawn(client.http().executor(), client.async_get_object({"b", "k", std::nullopt}), asio::use_future);
    CHECK_THROWS_WITH(get.get(), Contains("resolve_credentials"));
    CHECK(s3.total() == 0);
    client.resolve_credentials();
    auto again = asio::co_spawn(client.http().executor(), client.async_get_object({"b", "k", std::nullopt}), asio::use_future);
    CHECK(again.get().data.text() == "payload");
}

TEST_CASE("s3 store: copies of a store share one client and one I/O thread", "[net][s3store]") {
    FakeS3 s3;
    S3StoreOptions so;
    so.aws = fake_config(s3.endpoint());
    so.client = fast_retries();
    S3Store a("s3://b/run", so);
    CHECK(a.client().http().io_threads_started() == 0);  // started by the first request
    S3Store b = a;
    AnyStore any(b);
    AnyStore any2 = any;
    a.write("x", as_bytes("1"));
    CHECK(b.read("x").text() == "1");
    CHECK(any2.read("x").text() == "1");
    CHECK(&a.client() == &b.client());
    CHECK(a.client().http().io_threads_started() == 1);
    // A second store made with its own options is a second client (the one the user made).
    S3Store c("s3://b/run", so);
    CHECK(c.read("x").text() == "1");
    CHECK(&c.client() != &a.client());
    CHECK(a.client().http().io_threads_started() == 1);
}

TEST_CASE("http: the TLS context is built once, on the calling thread", "[net][http][tls]") {
    SECTION("built once") {
        HttpClient c;
        c.prepare_tls();
        c.prepare_tls();
        CHECK(c.tls_contexts_built() == 1);
        CHECK(c.io_threads_started() == 0);
    }
    SECTION("a CA file that cannot be loaded fails on the calling thread, before the I/O thread starts") {
        HttpClientOptions o;
        o.extra_ca_file = "/nonexistent/ca.pem";
        HttpClient c(o);
        HttpRequest r;
        r.url = Url::parse("https://127.0.0.1:1/x");
        CHECK_THROWS_WITH(c.send(r), Contains("/nonexistent/ca.pem"));
        CHECK(c.tls_contexts_built() == 0);
        CHECK(c.io_threads_started() == 0);
    }
}

TEST_CASE("s3 client: 503 SlowDown then 200 is retried", "[net][s3]") {
    FakeS3 s3;
    s3.objects["k"] = "payload";
    s3.fault = [](const FakeRequest&, FakeConn& c, int n) {
        if (n > 2) return false;
        c.write(FakeS3::error(503, "SlowDown", "k"));
        return true;
    };
    S3Client client(fake_config(s3.endpoint()), fast_retries());
    CHECK(client.get_object("b", "k").data.text() == "payload");
    CHECK(s3.total() == 3);
}

TEST_CASE("s3 client: errors are typed S3Error with status, code, request id, bucket and key", "[net][s3]") {
    FakeS3 s3;
    S3Client client(fake_config(s3.endpoint()), fast_retries());
    try {
        client.get_object("b", "missing/key");
        FAIL("expected S3Error");
    } catch (const S3Error& e) {
        CHECK(e.http_status == 404);
        CHECK(e.code == "NoSuchKey");
        CHECK(e.request_id == "REQ123");
        CHECK(e.bucket == "b");
        CHECK(e.key == "missing/key");
        CHECK_THAT(e.what(), Contains("s3://b/missing/key") && Contains("NoSuchKey") && Contains("REQ123"));
        CHECK_THAT(e.what(), !Contains("SECRET"));
    }
    CHECK(s3.total() == 1);  // 404 is not retried
    s3.fault = [](const FakeRequest&, FakeConn& c, int) {
        c.write(response(403, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>", {{"x-amz-request-id", "HDRID"}}));
        return true;
    };
    try {
        client.get_object("b", "k");
        FAIL("expected S3Error");
    } catch (const S3Error& e) {
        CHECK(e.http_status == 403);
        CHECK(e.code == "AccessDenied");
        CHECK(e.request_id == "HDRID");
    }
    CHECK(s3.total() == 2);  // 403 is not retried
    s3.fault = [](const FakeRequest&, FakeConn& c, int) {
        c.write("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");  // HEAD: no error document
        return true;
    };
    try {
        client.head_object("b", "k");
        FAIL("expected S3Error");
    } catch (const S3Error& e) {
        CHECK(e.http_status == 403);
        CHECK(e.code == "Forbidden");
        CHECK_THAT(e.what(), Contains("HeadObject s3://b/k"));
    }
    CHECK(s3.total() == 3);
    s3.fault = [](const FakeRequest&, FakeConn& c, int) {
        c.write(response(500, "<Error><Code>InternalError</Code></Error>"));
        return true;
    };
    CHECK_THROWS_AS(client.get_object("b", "k"), S3Error);
    CHECK(s3.total() == 3 + 4);  // max_attempts
}

TEST_CASE("s3 client: connection reset mid-body is retried", "[net][s3]") {
    FakeS3 s3;
    s3.objects["k"] = std::string(100000, 'z');
    s3.fault = [](const FakeRequest&, FakeConn& c, int n) {
        if (n != 1) return false;
        c.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + std::string(1000, 'z'));
        std::this_thread::sleep_for(20ms);
        c.reset();
        return true;
    };
    S3Client client(fake_config(s3.endpoint()), fast_retries());
    auto r = client.get_object("b", "k");
    CHECK(r.data.size() == 100000);
    CHECK(s3.total() == 2);
}

TEST_CASE("s3 client: short bodies are detected, retried, and never returned", "[net][s3]") {
    FakeS3 s3;
    s3.objects["k"] = "0123456789abcdefghij";
    S3Client client(fake_config(s3.endpoint()), fast_retries(3));

    SECTION("fewer bytes than Content-Length, once") {
        s3.fault = [](const FakeRequest&, FakeConn& c, int n) {
            if (n != 1) return false;
            c.write("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 5-9/20\r\nContent-Length: 5\r\n\r\n56");
            c.close();
            return true;
        };
        CHECK(client.get_object("b", "k", ByteRange{5, 5}).data.text() == "56789");
        CHECK(s3.total() == 2);
    }
    SECTION("fewer bytes than Content-Length, always: TruncatedData after the retries") {
        s3.fault = [](const FakeRequest&, FakeConn& c, int) {
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n0123");
            c.close();
            return true;
        };
        CHECK_THROWS_AS(client.get_object("b", "k"), TruncatedData);
        CHECK_THROWS_WITH(client.get_object("b", "k"), Contains("s3://b/k") && Contains("after 3 attempts"));
        CHECK(s3.total() == 6);
    }
    SECTION("a 206 whose Content-Range does not match the asked range") {
        s3.fault = [](const FakeRequest&, FakeConn& c, int n) {
            if (n == 1) {
                c.write(response(206, "01234", {{"Content-Range", "bytes 0-4/20"}}));
                return true;
            }
            if (n == 2) {
                c.write(response(206, "567", {{"Content-Range", "bytes 5-9/20"}}));  // body disagrees
                return true;
            }
            return false;
        };
        CHECK(client.get_object("b", "k", ByteRange{5, 5}).data.text() == "56789");
        CHECK(s3.total() == 3);
    }
    SECTION("a range past the end: clipped data and the object size; 416 past the start") {
        auto r = client.get_object("b", "k", ByteRange{15, 10});
        CHECK(r.data.text() == "fghij");
        CHECK(r.object_size == 20);
        CHECK_THROWS_AS(client.get_object("b", "k", ByteRange{20, 1}), S3Error);
    }
    SECTION("bytes=0-0 is never sent (s3rver returns the whole object for it)") {
        CHECK(client.get_object("b", "k", ByteRange{0, 1}).data.text() == "0");
        std::lock_guard lock(s3.mu);
        CHECK(s3.log.back().header("Range") == "bytes=0-1");
    }
}

TEST_CASE("s3 client: malformed chunked encoding is a typed error, not retried", "[net][s3]") {
    FakeS3 s3;
    s3.fault = [](const FakeRequest&, FakeConn& c, int) {
        c.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nnot-hex\r\n");
        c.close();
        return true;
    };
    S3Client client(fake_config(s3.endpoint()), fast_retries());
    CHECK_THROWS_AS(client.get_object("b", "k"), HttpProtocolError);
    CHECK(s3.total() == 1);
}

TEST_CASE("s3 client: ListObjectsV2 pages and URL-encoded keys", "[net][s3]") {
    FakeS3 s3;
    for (std::string k : {"p/a b", "p/a+b", "p/c%d", "p/e&f", "p/z", "q/other", "p/\xC3\xA9"}) s3.objects[k] = "x";
    S3ClientOptions o = fast_retries();
    o.list_page_size = 2;
    S3Client client(fake_config(s3.endpoint()), o);
    ListObjectsRequest r;
    r.bucket = "b";
    r.prefix = "p/";
    std::vector<std::string> keys;
    for (auto& obj : client.list_objects(r).objects) keys.push_back(obj.key);
    std::vector<std::string> expected{"p/a b", "p/a+b", "p/c%d", "p/e&f", "p/z", "p/\xC3\xA9"};
    CHECK(keys == expected);
    CHECK(s3.count("GET") == 3);
    // Without <EncodingType>url</EncodingType> in the answer, keys are taken as they are.
    s3.url_encode_listing = false;
    keys.clear();
    for (auto& obj : client.list_objects(r).objects) keys.push_back(obj.key);
    CHECK(keys == expected);
    r.start_after = "p/c%d";
    keys.clear();
    for (auto& obj : client.list_objects(r).objects) keys.push_back(obj.key);
    CHECK(keys == std::vector<std::string>{"p/e&f", "p/z", "p/\xC3\xA9"});
}

// =============================================================================================
// S3Store against the fake S3
// =============================================================================================

TEST_CASE("s3 store: URL parsing and key mapping", "[net][s3store]") {
    CHECK(parse_s3_url("s3://bkt").prefix.empty());
    CHECK(parse_s3_url("s3://bkt/").prefix.empty());
    CHECK(parse_s3_url("s3://bkt/a//b").prefix == "a/b/");
    CHECK(parse_s3_url("s3://bkt/a/b/").prefix == "a/b/");
    CHECK(parse_s3_url("s3://bkt/a").bucket == "bkt");
    CHECK_THROWS_AS(parse_s3_url("s3:///x"), UsageError);
    CHECK_THROWS_AS(parse_s3_url("gs://b/x"), UsageError);
    CHECK_THROWS_AS(parse_s3_url("s3://b?x/y"), UsageError);
    S3StoreOptions o;
    o.aws = fake_config("http://127.0.0.1:1");
    S3Store s("s3://bkt/trial", o);
    CHECK(s.describe("index//000/x.json") == "s3://bkt/trial/index/000/x.json");
}

TEST_CASE("s3 store: read, read_range, read_ranges with coalescing, errors", "[net][s3store]") {
    FakeS3 s3;
    std::string big;
    for (int i = 0; i < 1000; ++i) big += static_cast<char>('a' + i % 26);
    s3.objects["t/events/e1"] = big;
    s3.objects["t/events/e2"] = "0123456789";
    S3StoreOptions o;
    o.aws = fake_config(s3.endpoint());
    o.client = fast_retries();
    o.max_concurrency = 4;
    S3Store store("s3://b/t", o);

    CHECK(store.read("events/e2").text() == "0123456789");
    CHECK(store.read_range("events/e1", 26, 3).text() == "abc");
    CHECK(store.read_range("events/e1", 5, 0).empty());
    CHECK(s3.total() == 2);  // the empty range made no request
    CHECK_THROWS_AS(store.read("events/missing"), ObjectNotFound);
    CHECK_THROWS_AS(store.read_range("events/missing", 0, 4), ObjectNotFound);
    CHECK_THROWS_WITH(store.read_range("events/e2", 8, 5), Contains("s3://b/t/events/e2") && Contains("object has 10 bytes"));
    CHECK_THROWS_AS(store.read_range("events/e2", 8, 5), TruncatedData);
    CHECK_THROWS_AS(store.read_range("events/e2", 10, 1), TruncatedData);
    CHECK(store.exists("events/e1"));
    CHECK_FALSE(store.exists("events/nope"));

    const int before = s3.total();
    std::vector<RangeRequest> reqs{
        {"events/e1", 100, 10},  // A
        {"events/e2", 2, 3},     // separate object
        {"events/e1", 0, 10},    // B, adjacent to C
        {"events/e1", 10, 10},   // C
        {"events/e1", 15, 10},   // D, overlaps C
        {"events/e1", 500, 0},   // empty: no request
        {"events/e1", 900, 100}, // far away: its own GET
    };
    auto out = store.read_ranges(reqs);
    REQUIRE(out.size() == reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        INFO("request " << i);
        CHECK(out[i].text() == (reqs[i].key == "events/e1" ? big : std::string("0123456789")).substr(reqs[i].offset, reqs[i].length));
    }
    // GETs: e1 [0,25), e1 [100,110), e1 [900,1000), e2 [2,5).
    CHECK(s3.total() - before == 4);
    std::vector<RangeRequest> bad{{"events/e1", 0, 5}, {"events/e2", 5, 10}};
    CHECK_THROWS_AS(store.read_ranges(bad), TruncatedData);
    std::vector<RangeRequest> missing{{"events/e1", 0, 5}, {"events/none", 0, 1}};
    CHECK_THROWS_AS(store.read_ranges(missing), ObjectNotFound);

    // Many ranges in parallel.
    std::vector<RangeRequest> many;
    for (int i = 0; i < 200; i += 2) many.push_back({"events/e1", static_cast<std::uint64_t>(i * 5), 5});
    auto got = store.read_ranges(many);
    for (std::size_t i = 0; i < many.size(); ++i) CHECK(got[i].text() == big.substr(many[i].offset, 5));
}

TEST_CASE("s3 store: write, list with start_after, remove", "[net][s3store]") {
    FakeS3 s3;
    S3StoreOptions o;
    o.aws = fake_config(s3.endpoint());
    o.client = fast_retries();
    o.client.list_page_size = 2;
    S3Store store("s3://b/root/", o);
    for (std::string k : {"index/000/2.json", "index/000/1.json", "index/001/3.json", "collections/c.json", "x"})
        store.write(k, as_bytes("data:" + k));
    s3.objects["rootless"] = "not under the root";
    CHECK(s3.objects.count("root/index/000/1.json") == 1);
    CHECK(store.read("index/000/1.json").text() == "data:index/000/1.json");
    CHECK(store.list("index/") == std::vector<std::string>{"index/000/1.json", "index/000/2.json", "index/001/3.json"});
    CHECK(store.list("index/", "index/000/1.json") == std::vector<std::string>{"index/000/2.json", "index/001/3.json"});
    CHECK(store.list("").size() == 5);
    CHECK(store.list("nothing").empty());
    store.remove("x");
    CHECK_FALSE(store.exists("x"));
    store.remove("x");  // missing: fine
}

// =============================================================================================
// s3rver (when SMDEBUG_S3RVER_ENDPOINT is set)
// =============================================================================================

namespace {

std::optional<std::string> getenv_str(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

std::string unique_prefix(const char* tag) {
    return std::string("it-") + tag + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "/";
}

// The round trip every s3rver test runs.
void s3rver_round_trip(const std::string& endpoint, const std::string& ca_file, const char* tag) {
    TempDir home;
    auto env = env_of({{"HOME", home.path.string()},
                       {"AWS_ENDPOINT_URL_S3", endpoint},
                       {"AWS_ACCESS_KEY_ID", "S3RVER"},
                       {"AWS_SECRET_ACCESS_KEY", "S3RVER"},
                       {"AWS_REGION", "us-east-1"},
                       {"AWS_EC2_METADATA_DISABLED", "true"},
                       {"AWS_CA_BUNDLE", ca_file}});
    S3StoreOptions o;
    o.aws = AwsConfig::from_environment(env);
    o.client.list_page_size = 3;
    o.client.retry.base_delay = 10ms;
    const std::string root = "s3://smdebug-test/" + unique_prefix(tag);
    S3Store store(root, o);

    // Keys avoid s3rver's ordering quirks (no sibling continuing with a character below '/').
    std::vector<std::string> keys;
    for (int step = 0; step < 7; ++step) {
        char name[64];
        std::snprintf(name, sizeof name, "index/000000000/%012d_worker_0.json", step);
        keys.emplace_back(name);
        std::snprintf(name, sizeof name, "events/%012d/%012d_worker_0.tfevents", step, step);
        keys.emplace_back(name);
    }
    keys.push_back("collections/000000000/worker_0_collections.json");
    keys.push_back("odd keys/sp ace+plus=eq&amp~t(i)l!d*e$,;:@\xC3\xA9\xF0\x9F\x98\x80.bin");
    for (const auto& k : keys) store.write(k, as_bytes("content of " + k));
    store.write("empty", {});

    auto sorted = keys;
    sorted.push_back("empty");
    std::sort(sorted.begin(), sorted.end());
    CHECK(store.list("") == sorted);
    auto index = store.list("index/");
    REQUIRE(index.size() == 7);
    CHECK(index.front() == "index/000000000/000000000000_worker_0.json");
    auto after = store.list("index/", index[2]);
    CHECK(after == std::vector<std::string>(index.begin() + 3, index.end()));
    CHECK(store.list("index/", index.back()).empty());
    CHECK(store.list("odd keys/") == std::vector<std::string>{keys[keys.size() - 1]});
    CHECK(store.list("no/such/prefix").empty());

    for (const auto& k : keys) CHECK(store.read(k).text() == "content of " + k);
    CHECK(store.read("empty").empty());
    const std::string& e0 = keys[1];
    const std::string c0 = "content of " + e0;
    CHECK(store.read_range(e0, 0, 1).text() == c0.substr(0, 1));  // s3rver: bytes=0-0 quirk
    CHECK(store.read_range(e0, 3, 7).text() == c0.substr(3, 7));
    CHECK(store.read_range(e0, 0, c0.size()).text() == c0);
    CHECK(store.read_range("empty", 0, 0).empty());
    CHECK_THROWS_AS(store.read_range(e0, c0.size() - 2, 5), TruncatedData);
    CHECK_THROWS_AS(store.read_range(e0, c0.size() + 10, 5), TruncatedData);
    CHECK_THROWS_AS(store.read("index/nope.json"), ObjectNotFound);
    CHECK_THROWS_AS(store.read_range("index/nope.json", 0, 3), ObjectNotFound);

    CHECK(store.client().http().connections_opened() == 1);  // keep-alive: all of the above on one connection

    std::vector<RangeRequest> reqs;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        reqs.push_back({keys[i], 2, 5});
        reqs.push_back({keys[i], 5, 4});  // overlaps the previous one: coalesced
        reqs.push_back({keys[i], 0, 0});
    }
    auto out = store.read_ranges(reqs);
    REQUIRE(out.size() == reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i)
        CHECK(out[i].text() == ("content of " + reqs[i].key).substr(reqs[i].offset, reqs[i].length));

    CHECK(store.exists(keys[0]));
    CHECK_FALSE(store.exists("index/nope.json"));
    for (const auto& k : keys) store.remove(k);
    store.remove("empty");
    CHECK_FALSE(store.exists(keys[0]));
    CHECK(store.list("").empty());
    CHECK(store.client().http().connections_opened() <= 1 + keys.size());  // one per parallel GET at most
}

}  // namespace

TEST_CASE("s3rver: S3Store round trip over HTTP", "[s3rver]") {
    auto endpoint = getenv_str("SMDEBUG_S3RVER_ENDPOINT");
    if (!endpoint) {
        FAIL("SMDEBUG_S3RVER_ENDPOINT is not set: run this case under tests/s3rver/run-with-s3rver.sh (CTest: s3rver.s3store)");
    }
    s3rver_round_trip(*endpoint, "", "http");
}

TEST_CASE("s3rver: a pooled connection that s3rver closed after 5 s idle", "[s3rver]") {
    auto endpoint = getenv_str("SMDEBUG_S3RVER_ENDPOINT");
    if (!endpoint) {
        FAIL("SMDEBUG_S3RVER_ENDPOINT is not set: run this case under tests/s3rver/run-with-s3rver.sh (CTest: s3rver.s3store)");
    }
    AwsConfig c = fake_config(*endpoint);
    c.credentials = std::make_shared<StaticCredentialsProvider>(AwsCredentials{"S3RVER", "S3RVER", "", std::nullopt, "test"});
    S3ClientOptions o;
    o.http.idle_timeout = 60s;  // keep the connection in the pool past s3rver's 5 s
    S3StoreOptions so;
    so.aws = c;
    so.client = o;
    S3Store store("s3://smdebug-test/" + unique_prefix("idle"), so);
    store.write("k", as_bytes("v"));
    CHECK(store.read("k").text() == "v");
    // s3rver (Node's keepAliveTimeout) closes idle connections 5 s after a response; the margin is
    // for a loaded machine, where Node's timers run late.
    std::this_thread::sleep_for(8500ms);
    CHECK(store.read("k").text() == "v");
    CHECK(store.client().http().connections_opened() == 2);
    store.remove("k");
}

TEST_CASE("s3rver: S3Store round trip over HTTPS with a self-signed CA", "[s3rver]") {
    auto endpoint = getenv_str("SMDEBUG_S3RVER_HTTPS_ENDPOINT");
    auto ca = getenv_str("SMDEBUG_S3RVER_CA");
    if (!endpoint || !ca) {
        FAIL("SMDEBUG_S3RVER_HTTPS_ENDPOINT / SMDEBUG_S3RVER_CA are not set: run this case under tests/s3rver/run-with-s3rver.sh");
    }
    s3rver_round_trip(*endpoint, *ca, "https");
    // Without trusting the CA, verification fails.
    AwsConfig c = fake_config(*endpoint);
    c.credentials = std::make_shared<StaticCredentialsProvider>(AwsCredentials{"S3RVER", "S3RVER", "", std::nullopt, "test"});
    S3StoreOptions so;
    so.aws = c;
    S3Store untrusted("s3://smdebug-test/x", so);
    CHECK_THROWS_AS(untrusted.read("k"), TlsError);
}

}  // namespace smdebug_test_net_s3
