#pragma once
// A scripted S3 endpoint on 127.0.0.1 for fault injection (test_faults.cpp, test_concurrency.cpp).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <smdebug/net/detail/url.hpp>

namespace test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Open file descriptors of this process (sockets included): leaks show as a growing count.
inline std::size_t open_fds() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
}

enum class Fault {
    none,
    status_500,       // 500 InternalError
    slow_down,        // 503 SlowDown
    reset_mid_body,   // headers and half the body, then RST
    short_body,       // fewer bytes than Content-Length, then a clean close
    stall,            // headers, then nothing until the client gives up
    malformed_xml,    // 200 with a broken ListBucketResult
    redirect,         // 301 PermanentRedirect to another region's endpoint
    empty_page,       // 200 with a truncated ListBucketResult holding no key, and a new continuation token
    trickle_head,     // the status line and headers one byte every trickle_every, never finished
    trickle_body,     // headers, then the body one byte every trickle_every
};

struct Request {
    std::string method, target, authorization, security_token;
};

// A scripted S3 endpoint: `fault_for(n)` decides how request n (1-based) is answered; requests
// without a fault are served from `objects` (GET, ranged GET, PUT, ListObjectsV2 with pages of
// `page_size` keys). Counts requests, accepted connections and connections still open.
class FaultServer {
public:
    std::function<Fault(int n, const Request&)> fault_for = [](int, const Request&) { return Fault::none; };
    std::map<std::string, std::string> objects;  // key (without bucket) -> bytes
    // When an object was PUT (HEAD answers Last-Modified); objects placed in `objects` directly
    // count as written long ago.
    std::map<std::string, std::chrono::system_clock::time_point> modified;

    // Stores every file below `folder` as an object under `prefix` (prefix + relative path).
    void put_folder(const std::string& prefix, const std::filesystem::path& folder) {
        for (const auto& e : std::filesystem::recursive_directory_iterator(folder)) {
            if (!e.is_regular_file()) continue;
            std::ifstream in(e.path(), std::ios::binary);
            std::stringstream ss;
            ss << in.rdbuf();
            objects[prefix + std::filesystem::relative(e.path(), folder).string()] = ss.str();
        }
    }
    int page_size = 1000;
    // A real object store's first byte comes after tens of milliseconds, however small the object:
    // every answer waits `latency` plus up to `jitter` (uniform) before it is sent.
    std::chrono::milliseconds latency{0};
    std::chrono::milliseconds jitter{0};
    // A new connection's first answer waits this much more: the round trips of a TCP and TLS
    // handshake with a remote store, which loopback does not have (0: none).
    std::chrono::milliseconds connect_latency{0};
    // When > 0: a request that arrives while this many are already being answered gets 503 SlowDown
    // (as S3 does past a partition's request rate).
    int throttle_above = 0;
    std::chrono::milliseconds stall_for{1500};
    std::chrono::milliseconds trickle_every{100};

    FaultServer() {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_, 64) != 0)
            throw std::runtime_error("FaultServer: cannot listen");
        socklen_t len = sizeof a;
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    ~FaultServer() {
        stopping_ = true;
        ::shutdown(listener_, SHUT_RDWR);
        ::close(listener_);
        acceptor_.join();
        std::vector<std::thread> ts;
        {
            std::lock_guard lock(mu_);
            for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
            ts.swap(threads_);
        }
        for (auto& t : ts) t.join();
    }

    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
    int requests() const { return requests_; }
    // Requests being answered now, the most at once so far, and the answers that were throttled.
    int in_flight() const { return in_flight_; }
    int peak_in_flight() const { return peak_in_flight_; }
    int throttled() const { return throttled_; }
    void reset_peak() { peak_in_flight_ = in_flight_.load(); }
    int connections() const { return connections_; }
    int open_connections() {
        std::lock_guard lock(mu_);
        return static_cast<int>(open_.size());
    }
    std::vector<Clock::time_point> request_times() {
        std::lock_guard lock(mu_);
        return times_;
    }
    std::vector<Request> log() {
        std::lock_guard lock(mu_);
        return log_;
    }

private:
    void accept_loop() {
        while (!stopping_) {
            int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) {
                if (stopping_) return;
                continue;
            }
            ++connections_;
            std::lock_guard lock(mu_);
            open_.push_back(fd);
            threads_.emplace_back([this, fd] { serve(fd); });
        }
    }

    static bool send_all(int fd, std::string_view s) {
        while (!s.empty()) {
            ssize_t k = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
            if (k <= 0) return false;
            s.remove_prefix(static_cast<std::size_t>(k));
        }
        return true;
    }
    static std::string response(int status, const char* reason, std::string_view body, const std::string& extra = {}) {
        return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Length: " + std::to_string(body.size()) +
               "\r\nx-amz-request-id: REQ" + std::to_string(status) + "\r\n" + extra + "\r\n" + std::string(body);
    }
    static std::string error_xml(const char* code, const char* message) {
        return std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>") + code + "</Code><Message>" + message +
               "</Message><RequestId>RID</RequestId></Error>";
    }

    void wait_latency() {
        if (latency.count() == 0 && jitter.count() == 0) return;
        auto d = latency;
        if (jitter.count() > 0) {
            std::lock_guard lock(mu_);
            d += std::chrono::milliseconds(rng_() % static_cast<std::uint64_t>(jitter.count() + 1));
        }
        const auto until = Clock::now() + d;
        while (!stopping_ && Clock::now() < until) std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), 5ms));
    }

    void close_conn(int fd, bool reset) {
        if (reset) {
            linger l{1, 0};  // close with RST
            ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        }
        std::lock_guard lock(mu_);
        std::erase(open_, fd);
        ::close(fd);
    }

    void serve(int fd) {
        std::string buf;
        char tmp[16384];
        if (connect_latency.count() > 0) std::this_thread::sleep_for(connect_latency);
        while (true) {
            std::size_t head_end;
            while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
                ssize_t k = ::recv(fd, tmp, sizeof tmp, 0);
                if (k <= 0) return close_conn(fd, false);
                buf.append(tmp, static_cast<std::size_t>(k));
            }
            Request req;
            std::string head = buf.substr(0, head_end);
            buf.erase(0, head_end + 4);
            std::istringstream lines(head);
            std::string line;
            std::getline(lines, line);
            std::istringstream first(line);
            first >> req.method >> req.target;
            std::size_t content_length = 0;
            std::string range;
            while (std::getline(lines, line)) {
                if (!line.empty() && line.back() == '\r') line.pop_back();
                auto colon = line.find(':');
                if (colon == std::string::npos) continue;
                std::string name = line.substr(0, colon), value = line.substr(colon + 1);
                while (!value.empty() && value.front() == ' ') value.erase(0, 1);
                for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                if (name == "content-length") content_length = std::stoul(value);
                if (name == "range") range = value;
                if (name == "authorization") req.authorization = value;
                if (name == "x-amz-security-token") req.security_token = value;
            }
            while (buf.size() < content_length) {
                ssize_t k = ::recv(fd, tmp, sizeof tmp, 0);
                if (k <= 0) return close_conn(fd, false);
                buf.append(tmp, static_cast<std::size_t>(k));
            }
            std::string body = buf.substr(0, content_length);
            buf.erase(0, content_length);
            int n;
            bool throttle = false;
            {
                std::lock_guard lock(mu_);
                n = ++requests_;
                times_.push_back(Clock::now());
                log_.push_back(req);
                throttle = throttle_above > 0 && in_flight_ >= throttle_above;
                if (throttle) ++throttled_;
                else peak_in_flight_ = std::max(peak_in_flight_.load(), ++in_flight_);
            }
            struct Answered {  // counts the request out when its answer has been sent
                FaultServer& s;
                bool counted;
                ~Answered() {
                    if (counted) --s.in_flight_;
                }
            } answered{*this, !throttle};
            wait_latency();
            if (throttle) {
                if (!send_all(fd, response(503, "Slow Down", error_xml("SlowDown", "Please reduce your request rate.")))) return close_conn(fd, false);
                continue;
            }
            const Fault fault = fault_for(n, req);
            switch (fault) {
                case Fault::none: break;
                case Fault::status_500:
                    if (!send_all(fd, response(500, "Internal Server Error", error_xml("InternalError", "We encountered an internal error.")))) return close_conn(fd, false);
                    continue;
                case Fault::slow_down:
                    if (!send_all(fd, response(503, "Slow Down", error_xml("SlowDown", "Please reduce your request rate.")))) return close_conn(fd, false);
                    continue;
                case Fault::reset_mid_body:
                    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + std::string(500, 'x'));
                    std::this_thread::sleep_for(20ms);
                    return close_conn(fd, true);
                case Fault::short_body:
                    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + std::string(999, 'x'));
                    return close_conn(fd, false);
                case Fault::stall: {
                    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
                    const auto until = Clock::now() + stall_for;
                    while (!stopping_ && Clock::now() < until) std::this_thread::sleep_for(10ms);
                    return close_conn(fd, false);
                }
                case Fault::trickle_head:
                case Fault::trickle_body: {
                    // A head that never ends (a header line growing a byte at a time), or a body that does.
                    const std::string head = fault == Fault::trickle_head ? "HTTP/1.1 200 OK\r\nx-trickle: "
                                                                          : "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n";
                    std::size_t sent = 0;
                    if (fault == Fault::trickle_body && !send_all(fd, head)) return close_conn(fd, false);
                    while (!stopping_) {
                        const std::string one = fault == Fault::trickle_head && sent < head.size() ? std::string(1, head[sent++]) : "a";
                        if (!send_all(fd, one)) break;
                        const auto until = Clock::now() + trickle_every;
                        while (!stopping_ && Clock::now() < until) std::this_thread::sleep_for(5ms);
                    }
                    return close_conn(fd, false);
                }
                case Fault::malformed_xml:
                    if (!send_all(fd, response(200, "OK", "<ListBucketResult><Contents><Key>a</Key></Contents"))) return close_conn(fd, false);
                    continue;
                case Fault::empty_page:
                    if (!send_all(fd, response(200, "OK", "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t" +
                                                              std::to_string(n) + "</NextContinuationToken></ListBucketResult>")))
                        return close_conn(fd, false);
                    continue;
                case Fault::redirect:
                    if (!send_all(fd, response(301, "Moved Permanently", error_xml("PermanentRedirect", "The bucket you are attempting to access must be addressed using the specified endpoint."),
                                               "Location: http://bucket.s3.eu-west-1.amazonaws.com/\r\nx-amz-bucket-region: eu-west-1\r\n")))
                        return close_conn(fd, false);
                    continue;
            }
            if (!send_all(fd, serve_s3(req, body, range))) return close_conn(fd, false);
        }
    }

    // Path-style S3: /bucket/key. Objects are stored under the key without the bucket.
    std::string serve_s3(const Request& req, const std::string& body, const std::string& range) {
        std::string path = req.target.substr(0, req.target.find('?'));
        std::string query = req.target.find('?') == std::string::npos ? "" : req.target.substr(req.target.find('?') + 1);
        auto slash = path.find('/', 1);
        std::string key = slash == std::string::npos ? "" : smdebug::net::percent_decode(path.substr(slash + 1));
        std::lock_guard lock(mu_);
        if (req.method == "PUT") {
            objects[key] = body;
            modified[key] = std::chrono::system_clock::now();
            return response(200, "OK", "", "ETag: \"e\"\r\n");
        }
        if (req.method == "GET" && query.find("list-type=2") != std::string::npos) return list(query);
        auto it = objects.find(key);
        if (it == objects.end()) return response(404, "Not Found", error_xml("NoSuchKey", "The specified key does not exist."));
        if (req.method == "HEAD") return response(200, "OK", "", "Last-Modified: " + http_date(key) + "\r\n");
        if (!range.empty()) {  // bytes=a-b
            std::uint64_t a = std::stoull(range.substr(6)), b = std::stoull(range.substr(range.find('-') + 1));
            if (a >= it->second.size()) return response(416, "Range Not Satisfiable", error_xml("InvalidRange", "bad range"));
            b = std::min<std::uint64_t>(b, it->second.size() - 1);
            return "HTTP/1.1 206 Partial Content\r\nContent-Length: " + std::to_string(b - a + 1) + "\r\nContent-Range: bytes " +
                   std::to_string(a) + "-" + std::to_string(b) + "/" + std::to_string(it->second.size()) + "\r\n\r\n" +
                   it->second.substr(a, b - a + 1);
        }
        return response(200, "OK", it->second);
    }

    std::string http_date(const std::string& key) const {
        const auto it = modified.find(key);
        const std::time_t t = it == modified.end() ? std::time_t{86400} : std::chrono::system_clock::to_time_t(it->second);
        std::tm tm{};
        ::gmtime_r(&t, &tm);
        char buf[64];
        std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        return buf;
    }

    std::string list(const std::string& query) {
        auto param = [&](const std::string& name) {
            auto p = query.find(name + "=");
            if (p == std::string::npos) return std::string();
            auto e = query.find('&', p);
            return smdebug::net::percent_decode(query.substr(p + name.size() + 1, e == std::string::npos ? std::string::npos : e - p - name.size() - 1));
        };
        const std::string prefix = param("prefix"), token = param("continuation-token"), start_after = param("start-after"),
                          delimiter = param("delimiter");
        std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult>";
        int count = 0;
        std::string last;
        bool more = false;
        for (const auto& [k, v] : objects) {
            if (!k.starts_with(prefix) || (!token.empty() && k <= token) || (!start_after.empty() && k <= start_after)) continue;
            // With a delimiter, keys below a further delimiter roll up into one common prefix.
            if (!delimiter.empty() && !token.empty() && token.ends_with(delimiter) && k.starts_with(token)) continue;
            std::string rolled;
            if (!delimiter.empty()) {
                const auto d = k.find(delimiter, prefix.size());
                if (d != std::string::npos) rolled = k.substr(0, d + delimiter.size());
            }
            if (!rolled.empty() && rolled == last) continue;
            if (count == page_size) { more = true; break; }
            if (rolled.empty()) {
                xml += "<Contents><Key>" + k + "</Key><Size>" + std::to_string(v.size()) + "</Size></Contents>";
                last = k;
            } else {
                xml += "<CommonPrefixes><Prefix>" + rolled + "</Prefix></CommonPrefixes>";
                last = rolled;
            }
            ++count;
        }
        xml += std::string("<IsTruncated>") + (more ? "true" : "false") + "</IsTruncated>";
        if (more) xml += "<NextContinuationToken>" + last + "</NextContinuationToken>";
        xml += "</ListBucketResult>";
        return response(200, "OK", xml);
    }

    int listener_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<int> connections_{0};
    int requests_ = 0;
    std::atomic<int> in_flight_{0}, peak_in_flight_{0}, throttled_{0};
    std::minstd_rand rng_{12345};
    std::thread acceptor_;
    std::mutex mu_;
    std::vector<int> open_;
    std::vector<std::thread> threads_;
    std::vector<Clock::time_point> times_;
    std::vector<Request> log_;
};


}  // namespace test
