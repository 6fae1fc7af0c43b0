#pragma once
// AwsConfig::from_environment (net/aws_config.hpp): the part that needs the credential providers.
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/aws_credentials.hpp>
#if !SMDEBUG_HEADER_ONLY && !defined(SMDEBUG_SOURCE)
#error "this file defines functions compiled once by <smdebug/src.hpp>: in separate mode include it only there"
#endif

namespace smdebug::net {

SMDEBUG_INLINE AwsConfig AwsConfig::from_environment(const Environment& env) {
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
    std::optional<std::string> attempts = env_value(env, "AWS_MAX_ATTEMPTS");
    std::string attempts_origin = "AWS_MAX_ATTEMPTS";
    if (!attempts) { attempts = profiles.get("max_attempts"); attempts_origin = "max_attempts of AWS profile '" + profiles.profile + "'"; }
    if (attempts) {
        const auto n = positive_number(*attempts);
        if (!n || *n > 100) throw AwsConfigError(attempts_origin + " must be an integer from 1 to 100, not '" + *attempts + "'");
        c.max_attempts = static_cast<int>(*n);
    }
    std::optional<std::string> mode = env_value(env, "AWS_RETRY_MODE");
    std::string mode_origin = "AWS_RETRY_MODE";
    if (!mode) { mode = profiles.get("retry_mode"); mode_origin = "retry_mode of AWS profile '" + profiles.profile + "'"; }
    if (mode) {
        if (*mode != "legacy" && *mode != "standard" && *mode != "adaptive")
            throw AwsConfigError(mode_origin + " must be legacy, standard or adaptive, not '" + *mode + "'");
        c.retry_mode = *mode;
    }
    std::optional<std::string> window = env_value(env, "SMDEBUG_S3_MAX_CONCURRENCY");
    std::string window_origin = "SMDEBUG_S3_MAX_CONCURRENCY";
    if (!window) {
        window = profiles.get("s3.max_concurrent_requests");
        window_origin = "s3.max_concurrent_requests of AWS profile '" + profiles.profile + "'";
    }
    if (window) {
        const auto n = positive_number(*window);
        if (!n || *n > 1024) throw AwsConfigError(window_origin + " must be an integer from 1 to 1024, not '" + *window + "'");
        c.max_concurrent_requests = static_cast<std::size_t>(*n);
    }
    for (const auto& [name, target] : {std::pair{"SMDEBUG_S3_CONNECT_TIMEOUT", &c.connect_timeout},
                                        std::pair{"SMDEBUG_S3_READ_TIMEOUT", &c.read_timeout}}) {
        if (auto v = env_value(env, name)) {
            const auto n = positive_number(*v);
            if (!n || *n > 86400) throw AwsConfigError(std::string(name) + " must be a number of seconds from 1 to 86400, not '" + *v + "'");
            *target = std::chrono::milliseconds(*n * 1000);
        }
    }
    c.credentials = std::make_shared<DefaultCredentialsChain>(env);
    return c;
}

}  // namespace smdebug::net
