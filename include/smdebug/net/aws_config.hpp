#pragma once
// Client configuration the way AWS users expect, and where an S3 request for a bucket goes.
//  - region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, else us-east-1;
//  - endpoint override: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's `s3.endpoint_url` or
//    `endpoint_url` (all ignored when AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true);
//  - addressing: path-style whenever an endpoint override is set, or the host is an IP literal,
//    or the bucket name is not DNS-compatible; virtual-hosted otherwise (the profile's
//    `s3.addressing_style` = auto/path/virtual can force one);
//  - extra trusted CAs: AWS_CA_BUNDLE (added to the system store);
//  - credentials: the default chain (aws_credentials.hpp).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <smdebug/core/config.hpp>
#include <smdebug/net/credentials.hpp>
#include <smdebug/net/detail/aws_profile.hpp>
#include <smdebug/net/transport_errors.hpp>
#include <smdebug/net/detail/url.hpp>

namespace smdebug::net {

enum class AddressingStyle { automatic, path, virtual_hosted };

// Where requests for one bucket go: `origin` (scheme, host, port; target "/") and the path
// prefix of every object ("/bucket" for path-style, "" for virtual-hosted).
struct S3BucketEndpoint {
    Url origin;
    std::string path_prefix;
    bool path_style = true;
};

// Bucket names usable as a DNS label in virtual-hosted addressing: 3-63 of [a-z0-9.-], starting
// and ending with a letter or digit, no "..", not an IP address. With `https`, names with dots are
// excluded too, since the *.s3 wildcard certificate cannot match them.
inline bool dns_compatible_bucket(std::string_view b, bool https) noexcept {
    if (b.size() < 3 || b.size() > 63) return false;
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!alnum(b.front()) || !alnum(b.back())) return false;
    for (std::size_t i = 0; i < b.size(); ++i) {
        char c = b[i];
        if (alnum(c) || c == '-') continue;
        if (c == '.') {
            if (https) return false;
            if (b[i + 1] == '.' || b[i - 1] == '-' || b[i + 1] == '-') return false;
            continue;
        }
        return false;
    }
    return !is_ip_literal(b);
}

struct AwsConfig {
    std::string region = "us-east-1";
    std::optional<Url> endpoint;  // override; nullopt = AWS's regional S3 endpoint
    AddressingStyle addressing = AddressingStyle::automatic;
    std::string extra_ca_file;    // AWS_CA_BUNDLE
    // Attempts per request (the first try included): AWS_MAX_ATTEMPTS or the profile's
    // max_attempts; else from the retry mode (AWS_RETRY_MODE / retry_mode): legacy 5, standard and
    // adaptive 3; else 3. S3ClientOptions::retry.max_attempts, when set in code, wins.
    std::optional<int> max_attempts;
    std::string retry_mode = "standard";
    // SMDEBUG_S3_CONNECT_TIMEOUT / SMDEBUG_S3_READ_TIMEOUT (seconds): override
    // HttpClientOptions::connect_timeout and io_timeout. TrialOptions / StoreOpenOptions
    // connect_timeout and read_timeout (the CLI's --connect-timeout and --read-timeout) set these.
    std::optional<std::chrono::milliseconds> connect_timeout, read_timeout;
    // Requests an S3 client keeps in flight at most: the profile's `s3 = max_concurrent_requests`
    // (as the AWS CLI reads it) or SMDEBUG_S3_MAX_CONCURRENCY;
    // nullopt: 64. S3StoreOptions::max_concurrency, when set in code, wins.
    std::optional<std::size_t> max_concurrent_requests;
    static constexpr std::size_t default_max_concurrent_requests = 64;
    std::size_t concurrency() const noexcept { return max_concurrent_requests.value_or(default_max_concurrent_requests); }

    int attempts() const noexcept { return max_attempts ? *max_attempts : retry_mode == "legacy" ? 5 : 3; }
    // nullptr sends unsigned (anonymous) requests.
    std::shared_ptr<CredentialsProvider> credentials;

    // The configuration the environment and the AWS profile give, with the default credentials
    // chain (net/aws_credentials.hpp).
    static AwsConfig from_environment(const Environment& env = process_environment());

    // A decimal integer >= 1 (surrounding blanks allowed).
    static std::optional<std::int64_t> positive_number(std::string_view s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
        if (s.empty() || s.size() > 9) return std::nullopt;
        std::int64_t v = 0;
        for (char ch : s) {
            if (ch < '0' || ch > '9') return std::nullopt;
            v = v * 10 + (ch - '0');
        }
        if (v < 1) return std::nullopt;
        return v;
    }

    static void validate_region(std::string_view r) {
        if (r.empty() || r.size() > 64) throw AwsConfigError("invalid AWS region '" + std::string(r) + "'");
        for (char ch : r)
            if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'))
                throw AwsConfigError("invalid AWS region '" + std::string(r) + "'");
    }

    // The regional AWS endpoint, "https://s3.<region>.amazonaws.com" (".com.cn" in China).
    std::string aws_s3_host() const {
        std::string suffix = region.starts_with("cn-") ? "amazonaws.com.cn" : "amazonaws.com";
        return "s3." + region + "." + suffix;
    }

    S3BucketEndpoint bucket_endpoint(std::string_view bucket) const {
        S3BucketEndpoint e;
        Url base = endpoint ? *endpoint : Url::parse("https://" + aws_s3_host());
        bool path;
        switch (addressing) {
            case AddressingStyle::path: path = true; break;
            case AddressingStyle::virtual_hosted:
                path = false;
                if (!dns_compatible_bucket(bucket, false) || is_ip_literal(base.host))
                    throw AwsConfigError("bucket '" + std::string(bucket) + "' cannot be addressed virtual-hosted style at " + base.origin());
                break;
            default:
                path = endpoint.has_value() || is_ip_literal(base.host) || !dns_compatible_bucket(bucket, base.https());
        }
        // An override URL may carry a base path (a proxy mount point); keep it in front.
        std::string base_path = base.target;
        if (auto q = base_path.find('?'); q != std::string::npos) base_path.resize(q);
        while (!base_path.empty() && base_path.back() == '/') base_path.pop_back();
        e.origin = base;
        e.origin.target = "/";
        e.path_style = path;
        if (path) {
            e.path_prefix = base_path + "/" + std::string(bucket);
        } else {
            e.origin.host = std::string(bucket) + "." + base.host;
            e.path_prefix = base_path;
        }
        return e;
    }
};

}  // namespace smdebug::net

#if SMDEBUG_HEADER_ONLY
#include <smdebug/net/impl/aws_config.ipp>
#endif
