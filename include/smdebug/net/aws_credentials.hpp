#pragma once
// AWS credentials and the default provider chain, in the SDKs' order:
//   1. AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN);
//   2. the selected profile of the shared credentials file, then of the config file;
//   3. container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (against 169.254.170.2) or
//      AWS_CONTAINER_CREDENTIALS_FULL_URI, with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or
//      AWS_CONTAINER_AUTHORIZATION_TOKEN as the Authorization header;
//   4. EC2 instance metadata, IMDSv2 only (token PUT, role GET, credentials GET), at
//      AWS_EC2_METADATA_SERVICE_ENDPOINT (default http://169.254.169.254); disabled by
//      AWS_EC2_METADATA_DISABLED=true.
// Temporary credentials are cached and fetched again shortly before they expire; if a refresh
// fails while the old credentials are still valid, the old ones are used.
// The container and instance-metadata providers send their requests on the thread that asks them
// (CallingThreadHttp, net/detail/http_client.hpp): they own no I/O thread, and the S3 client asks them off its I/O
// thread (net/detail/credentials_cache.hpp), remembering a failure for a while.
// Secrets never appear in messages: errors name the source, URL or file only.
#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <smdebug/net/detail/aws_profile.hpp>
#include <smdebug/net/credentials.hpp>
#include <smdebug/net/detail/http_client.hpp>
#include <smdebug/net/transport_errors.hpp>
#include <smdebug/net/detail/url.hpp>

namespace smdebug::net {

class StaticCredentialsProvider final : public CredentialsProvider {
public:
    explicit StaticCredentialsProvider(AwsCredentials c) : c_(std::move(c)) {}
    AwsCredentials get() override { return c_; }

private:
    AwsCredentials c_;
};

namespace detail {

// "2024-05-01T12:34:56Z", optional fraction, "Z" or "+hh:mm"/"-hh:mm".
inline std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view s) {
    auto num = [&](std::size_t at, std::size_t n) -> int {
        if (at + n > s.size()) return -1;
        int v = 0;
        for (std::size_t i = at; i < at + n; ++i) {
            if (s[i] < '0' || s[i] > '9') return -1;
            v = v * 10 + (s[i] - '0');
        }
        return v;
    };
    if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
        return std::nullopt;
    int y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
    // system_clock counts nanoseconds in 64 bits (1678..2262): years outside 1970..2200 would
    // overflow it and are no credential expiry anyway.
    if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 60)
        return std::nullopt;
    std::size_t p = 19;
    if (p < s.size() && s[p] == '.') {
        ++p;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9') ++p;
    }
    int offset_min = 0;
    if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
        ++p;
    } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
        int oh = num(p + 1, 2), om = num(p + 4, 2);
        if (oh < 0 || om < 0 || p + 3 >= s.size() || s[p + 3] != ':') return std::nullopt;
        offset_min = (oh * 60 + om) * (s[p] == '-' ? -1 : 1);
        p += 6;
    } else {
        return std::nullopt;
    }
    if (p != s.size()) return std::nullopt;
    using namespace std::chrono;
    year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
    if (!ymd.ok()) return std::nullopt;
    return sys_days(ymd) + hours(h) + minutes(mi) + seconds(se) - minutes(offset_min);
}

// Parses the JSON document of the container and IMDS credential endpoints. The body is never
// quoted in messages (it holds the secret).
inline AwsCredentials parse_credentials_json(std::string_view body, const std::string& source, const std::string& url) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(body, ec);
    if (ec || !v.is_object())
        throw CredentialsError("credentials from " + url + " (" + source + ") are not a JSON object");
    const auto& o = v.as_object();
    auto str = [&](const char* k) -> std::string {
        auto it = o.find(k);
        if (it == o.end() || !it->value().is_string()) return {};
        return std::string(it->value().as_string());
    };
    if (auto code = str("Code"); !code.empty() && code != "Success")
        throw CredentialsError("credentials from " + url + " (" + source + ") have Code " + code);
    AwsCredentials c;
    c.access_key_id = str("AccessKeyId");
    c.secret_access_key = str("SecretAccessKey");
    c.session_token = str("Token");
    c.source = source;
    if (c.access_key_id.empty() || c.secret_access_key.empty())
        throw CredentialsError("credentials from " + url + " (" + source + ") lack AccessKeyId or SecretAccessKey");
    if (auto e = str("Expiration"); !e.empty()) {
        c.expiration = parse_iso8601(e);
        if (!c.expiration) throw CredentialsError("credentials from " + url + " (" + source + ") have an invalid Expiration '" + e + "'");
    }
    return c;
}

inline HttpClientOptions metadata_http_options(std::chrono::milliseconds timeout) {
    HttpClientOptions o;
    o.connect_timeout = timeout;
    o.io_timeout = timeout;
    o.max_body_bytes = 1 << 20;
    o.max_idle_per_endpoint = 2;
    return o;
}

inline std::string body_text(const HttpResponse& r) { return std::string(r.body.text()); }

}  // namespace detail

// Caches what `fetch()` returns and fetches again when the credentials are within
// `refresh_window` of their expiration.
class RefreshingCredentialsProvider : public CredentialsProvider {
public:
    explicit RefreshingCredentialsProvider(std::chrono::seconds refresh_window = std::chrono::minutes(5))
        : window_(refresh_window) {}
    AwsCredentials get() final {
        std::lock_guard lock(mu_);
        const auto now = std::chrono::system_clock::now();
        if (cached_ && (!cached_->expiration || now + window_ < *cached_->expiration)) return *cached_;
        try {
            cached_ = fetch();
        } catch (const SMDebugError&) {
            if (cached_ && cached_->expiration && now < *cached_->expiration) return *cached_;  // still valid
            throw;
        }
        return *cached_;
    }
    std::size_t fetch_count() const noexcept { return fetches_; }

protected:
    virtual AwsCredentials fetch_fresh() = 0;

private:
    AwsCredentials fetch() {
        ++fetches_;
        return fetch_fresh();
    }
    std::mutex mu_;
    std::optional<AwsCredentials> cached_;
    std::chrono::seconds window_;
    std::size_t fetches_ = 0;
};

// ECS/EKS container credentials.
class ContainerCredentialsProvider final : public RefreshingCredentialsProvider {
public:
    static constexpr std::string_view ecs_host = "http://169.254.170.2";

    // nullptr when the environment configures no container credentials.
    static std::unique_ptr<ContainerCredentialsProvider> from_environment(const Environment& env,
                                                                          std::chrono::milliseconds timeout = std::chrono::seconds(2)) {
        std::string url;
        if (auto rel = env_value(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
            url = std::string(ecs_host) + (rel->starts_with("/") ? "" : "/") + *rel;
        } else if (auto full = env_value(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI")) {
            url = *full;
        } else {
            return nullptr;
        }
        Url u = Url::parse(url);
        if (!u.https() && !allowed_http_host(u.host))
            throw AwsConfigError("AWS_CONTAINER_CREDENTIALS_FULL_URI " + u.origin() +
                                 " uses plain http to a host that is neither loopback nor the ECS/EKS credentials address");
        std::optional<std::string> token_file = env_value(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
        std::optional<std::string> token = env_value(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
        return std::unique_ptr<ContainerCredentialsProvider>(
            new ContainerCredentialsProvider(std::move(u), std::move(token_file), std::move(token), timeout));
    }

    const Url& url() const noexcept { return url_; }

    static bool allowed_http_host(std::string_view host) {
        if (host == "localhost" || host == "::1" || host == "169.254.170.2" || host == "169.254.170.23" || host == "fd00:ec2::23")
            return true;
        return is_ip_literal(host) && host.starts_with("127.");
    }

protected:
    AwsCredentials fetch_fresh() override {
        HttpRequest req;
        req.method = "GET";
        req.url = url_;
        req.headers.push_back({"Accept", "application/json"});
        if (auto auth = authorization()) req.headers.push_back({"Authorization", std::move(*auth)});
        std::string last;
        for (int attempt = 0; attempt < 2; ++attempt) {
            try {
                HttpResponse r = http_.send(req);
                if (r.status != 200)
                    throw CredentialsError("container credentials endpoint " + url_.str() + " answered HTTP " + std::to_string(r.status));
                return detail::parse_credentials_json(r.body.text(), "container", url_.str());
            } catch (const NetworkError& e) {
                last = e.what();
            } catch (const TruncatedData& e) {
                last = e.what();
            }
        }
        throw CredentialsError("cannot get container credentials from " + url_.str() + ": " + last);
    }

private:
    ContainerCredentialsProvider(Url u, std::optional<std::string> token_file, std::optional<std::string> token,
                                 std::chrono::milliseconds timeout)
        : url_(std::move(u)), token_file_(std::move(token_file)), token_(std::move(token)),
          http_(detail::metadata_http_options(timeout)) {}

    // The token file is read on every fetch (it is rotated by the platform).
    std::optional<std::string> authorization() const {
        std::string t;
        if (token_file_) {
            std::ifstream in(*token_file_);
            if (!in) throw CredentialsError("cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE " + *token_file_);
            std::stringstream ss;
            ss << in.rdbuf();
            t = std::string(text::trim(ss.str(), text::line_blanks));
            while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
        } else if (token_) {
            t = *token_;
        } else {
            return std::nullopt;
        }
        for (char c : t)
            if (c == '\r' || c == '\n' || c == '\0')
                throw CredentialsError("the container authorization token contains a line break or NUL");
        return t;
    }

    Url url_;
    std::optional<std::string> token_file_;
    std::optional<std::string> token_;
    CallingThreadHttp http_;  // on the resolving thread: the provider owns no I/O thread
};

// EC2 instance metadata (IMDSv2).
class ImdsCredentialsProvider final : public RefreshingCredentialsProvider {
public:
    // nullptr when AWS_EC2_METADATA_DISABLED is true.
    static std::unique_ptr<ImdsCredentialsProvider> from_environment(const Environment& env,
                                                                     std::chrono::milliseconds timeout = std::chrono::seconds(1)) {
        if (env_true(env, "AWS_EC2_METADATA_DISABLED")) return nullptr;
        std::string endpoint = "http://169.254.169.254";
        if (auto e = env_value(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT")) {
            endpoint = *e;
        } else if (auto mode = env_value(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE")) {
            if (*mode == "IPv6" || *mode == "ipv6") endpoint = "http://[fd00:ec2::254]";
            else if (*mode != "IPv4" && *mode != "ipv4")
                throw AwsConfigError("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE must be IPv4 or IPv6, not '" + *mode + "'");
        }
        Url u = Url::parse(endpoint);
        u.target = "/";
        return std::unique_ptr<ImdsCredentialsProvider>(new ImdsCredentialsProvider(std::move(u), timeout));
    }

    const Url& endpoint() const noexcept { return base_; }

protected:
    AwsCredentials fetch_fresh() override {
        try {
            Url token_url = at("/latest/api/token");
            HttpRequest put;
            put.method = "PUT";
            put.url = token_url;
            put.headers.push_back({"X-aws-ec2-metadata-token-ttl-seconds", "21600"});
            HttpResponse tr = http_.send(put);
            if (tr.status != 200)
                throw CredentialsError("EC2 instance metadata token request to " + token_url.str() + " answered HTTP " +
                                       std::to_string(tr.status));
            std::string token = detail::body_text(tr);
            for (char c : token)
                if (c == '\r' || c == '\n' || c == '\0') throw CredentialsError("EC2 instance metadata token from " + token_url.str() + " is malformed");

            Url role_url = at("/latest/meta-data/iam/security-credentials/");
            HttpResponse rr = get_with_token(role_url, token);
            if (rr.status == 404) throw CredentialsError("no IAM role is attached to this EC2 instance (" + role_url.str() + " answered 404)");
            if (rr.status != 200)
                throw CredentialsError("EC2 instance metadata " + role_url.str() + " answered HTTP " + std::to_string(rr.status));
            std::string role(text::trim(rr.body.text().substr(0, rr.body.text().find('\n')), text::line_blanks));
            if (role.empty() || role.find_first_of("/?#% \t\r") != std::string::npos)
                throw CredentialsError("EC2 instance metadata " + role_url.str() + " returned no usable role name");

            Url cred_url = at("/latest/meta-data/iam/security-credentials/" + role);
            HttpResponse cr = get_with_token(cred_url, token);
            if (cr.status != 200)
                throw CredentialsError("EC2 instance metadata " + cred_url.str() + " answered HTTP " + std::to_string(cr.status));
            return detail::parse_credentials_json(cr.body.text(), "imds", cred_url.str());
        } catch (const CredentialsError&) {
            throw;
        } catch (const SMDebugError& e) {
            throw CredentialsError(std::string("cannot get EC2 instance metadata credentials: ") + e.what());
        }
    }

private:
    ImdsCredentialsProvider(Url base, std::chrono::milliseconds timeout)
        : base_(std::move(base)), http_(detail::metadata_http_options(timeout)) {}

    Url at(const std::string& path) const {
        Url u = base_;
        std::string prefix = u.target == "/" ? "" : u.target;
        while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
        u.target = prefix + path;
        return u;
    }
    HttpResponse get_with_token(const Url& u, const std::string& token) {
        HttpRequest r;
        r.url = u;
        r.headers.push_back({"X-aws-ec2-metadata-token", token});
        return http_.send(r);
    }

    Url base_;
    CallingThreadHttp http_;  // on the resolving thread: the provider owns no I/O thread
};

// The default chain. The first source that yields credentials is kept for the client's life
// (as the SDKs do); temporary credentials of that source are refreshed before they expire.
class DefaultCredentialsChain final : public CredentialsProvider {
public:
    explicit DefaultCredentialsChain(Environment env = process_environment()) : env_(std::move(env)) {}

    AwsCredentials get() override {
        std::shared_ptr<CredentialsProvider> p;
        {
            std::lock_guard lock(mu_);
            if (!chosen_) chosen_ = resolve();
            p = chosen_;
        }
        return p->get();
    }

private:
    std::shared_ptr<CredentialsProvider> resolve() {
        std::string tried;
        // 1. Environment.
        auto id = env_value(env_, "AWS_ACCESS_KEY_ID");
        auto secret = env_value(env_, "AWS_SECRET_ACCESS_KEY");
        if (id && secret) {
            AwsCredentials c{*id, *secret, env_value(env_, "AWS_SESSION_TOKEN").value_or(""), std::nullopt, "environment"};
            return std::make_shared<StaticCredentialsProvider>(std::move(c));
        }
        if (id || secret)
            throw CredentialsError("only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY is set");
        tried += "environment variables AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (unset)";

        // 2. Shared files.
        AwsProfiles profiles = AwsProfiles::load(env_);
        if (profiles.profile_explicit && !profiles.profile_exists())
            throw AwsConfigError("AWS profile '" + profiles.profile + "' not found (" + profiles.describe_files() + ")");
        auto pid = profiles.get("aws_access_key_id");
        auto psecret = profiles.get("aws_secret_access_key");
        if (pid && psecret) {
            AwsCredentials c{*pid, *psecret, profiles.get("aws_session_token").value_or(""), std::nullopt,
                             "profile " + profiles.profile};
            return std::make_shared<StaticCredentialsProvider>(std::move(c));
        }
        if (pid || psecret)
            throw CredentialsError("AWS profile '" + profiles.profile + "' has only one of aws_access_key_id and aws_secret_access_key (" +
                                   profiles.describe_files() + ")");
        tried += "; profile '" + profiles.profile + "' (" + profiles.describe_files() + ": no keys)";

        // 3. Container.
        if (auto c = ContainerCredentialsProvider::from_environment(env_)) return std::shared_ptr<CredentialsProvider>(std::move(c));
        tried += "; container credentials (not configured)";

        // 4. IMDSv2: chosen only if it answers now.
        if (auto imds = ImdsCredentialsProvider::from_environment(env_)) {
            std::shared_ptr<ImdsCredentialsProvider> p(std::move(imds));
            try {
                p->get();
                return p;
            } catch (const SMDebugError& e) {
                tried += std::string("; EC2 instance metadata (") + e.what() + ")";
            }
        } else {
            tried += "; EC2 instance metadata (disabled by AWS_EC2_METADATA_DISABLED)";
        }
        throw CredentialsError("no AWS credentials found; tried " + tried);
    }

    Environment env_;
    std::mutex mu_;
    std::shared_ptr<CredentialsProvider> chosen_;
};

}  // namespace smdebug::net
