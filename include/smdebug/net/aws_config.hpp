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
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <smdebug/net/aws_credentials.hpp>
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
    // nullptr sends unsigned (anonymous) requests.
    std::shared_ptr<CredentialsProvider> credentials;

    static AwsConfig from_environment(const Environment& env = process_environment()) {
        AwsConfig c;
        AwsProfiles profiles = AwsProfiles::load(env);
        if (auto r = env_value(env, "AWS_REGION")) c.region = *r;
        else if (auto d = env_value(env, "AWS_DEFAULT_REGION")) c.region = *d;
        else if (auto p = profiles.get("region")) c.region = *p;
        validate_region(c.region);

        if (!env_true(env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) {
            std::optional<std::string> ep = env_value(env, "AWS_ENDPOINT_URL_S3");
            std::string origin = "AWS_ENDPOINT_URL_S3";
            if (!ep) { ep = env_value(env, "AWS_ENDPOINT_URL"); origin = "AWS_ENDPOINT_URL"; }
            if (!ep) { ep = profiles.get("s3.endpoint_url"); origin = "profile setting s3.endpoint_url"; }
            if (!ep) { ep = profiles.get("endpoint_url"); origin = "profile setting endpoint_url"; }
            if (ep) {
                try {
                    c.endpoint = Url::parse(*ep);
                } catch (const AwsConfigError& e) {
                    throw AwsConfigError(origin + ": " + e.what());
                }
            }
        }
        if (auto style = profiles.get("s3.addressing_style")) {
            if (*style == "path") c.addressing = AddressingStyle::path;
            else if (*style == "virtual") c.addressing = AddressingStyle::virtual_hosted;
            else if (*style != "auto")
                throw AwsConfigError("s3.addressing_style of AWS profile '" + profiles.profile + "' must be auto, path or virtual, not '" +
                                     *style + "'");
        }
        if (auto ca = env_value(env, "AWS_CA_BUNDLE")) c.extra_ca_file = *ca;
        else if (auto pca = profiles.get("ca_bundle")) c.extra_ca_file = *pca;
        c.credentials = std::make_shared<DefaultCredentialsChain>(env);
        return c;
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
