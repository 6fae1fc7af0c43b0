#pragma once
// The reference's AWS rule actions (docs/rules.md "Actions"), over smdebug-cpp's own SigV4 signer and
// HTTP client (net/aws_service_client.hpp): SNS messages ("sms", "email") and SageMaker StopTrainingJob
// ("stoptraining").
//
//  - message_action(config, rule, protocol, endpoint): at construction, CreateTopic "SMDebugRules"
//    (which returns the existing topic), then ListSubscriptions (following NextToken) and, when
//    no subscription has this protocol, topic and endpoint, Subscribe the endpoint with the filter
//    policy {"phone_num":[endpoint]} (sms) or {"email":[endpoint]}. On every firing: Publish
//    "SMDebugRule:<rule> fired. <finding>" with subject "SMDebugRule:<rule> fired" and the
//    message attribute phone_num / email = endpoint.
//  - stop_training_action(config, rule, prefix): at construction, ListTrainingJobs (NameContains
//    prefix, StatusEquals InProgress, newest first), keeping names that start with the prefix; up
//    to 50 pages, stopping after the first page with a match, giving up after more than 5 errors.
//    On every firing: StopTrainingJob on the job when exactly one was found, else nothing.
// Every AWS error is logged (config.log) and swallowed, as in the reference; nothing is thrown
// after construction of the configuration. Secrets never reach a log line.
//
// Endpoints: https://sns.<region>.amazonaws.com and https://api.sagemaker.<region>.amazonaws.com,
// or AWS_ENDPOINT_URL_SNS / AWS_ENDPOINT_URL_SAGEMAKER / AWS_ENDPOINT_URL (or the config's fields).
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include <smdebug/net/aws_config.hpp>
#include <smdebug/net/aws_credentials.hpp>
#include <smdebug/net/aws_service_client.hpp>
#include <smdebug/net/detail/url.hpp>
#include <smdebug/rules/actions/actions.hpp>

namespace smdebug {

struct AwsActionConfig {
    std::string region = "us-east-1";
    std::optional<net::Url> sns_endpoint;
    std::optional<net::Url> sagemaker_endpoint;
    std::shared_ptr<net::CredentialsProvider> credentials;
    net::HttpClientOptions http;
    RuleLogger log;

    // AWS_REGION (default us-east-1, as the reference), endpoint overrides, the default
    // credentials chain.
    static AwsActionConfig from_environment(const net::Environment& env = net::process_environment()) {
        AwsActionConfig c;
        if (auto r = net::env_value(env, "AWS_REGION")) c.region = *r;
        net::AwsConfig::validate_region(c.region);
        auto endpoint = [&](const char* specific) -> std::optional<net::Url> {
            auto v = net::env_value(env, specific);
            if (!v) v = net::env_value(env, "AWS_ENDPOINT_URL");
            if (!v) return std::nullopt;
            return net::Url::parse(*v);
        };
        c.sns_endpoint = endpoint("AWS_ENDPOINT_URL_SNS");
        c.sagemaker_endpoint = endpoint("AWS_ENDPOINT_URL_SAGEMAKER");
        if (auto ca = net::env_value(env, "AWS_CA_BUNDLE")) c.http.extra_ca_file = *ca;
        c.credentials = std::make_shared<net::DefaultCredentialsChain>(env);
        return c;
    }
};

namespace detail {

inline std::shared_ptr<net::AwsServiceClient> aws_service_client(std::string service, net::Url endpoint, const AwsActionConfig& c) {
    return std::make_shared<net::AwsServiceClient>(std::move(service), std::move(endpoint), c.region, c.credentials, c.http);
}

inline void log_line(const AwsActionConfig& c, const std::string& text) {
    if (c.log) c.log("info", text);
}

inline std::string describe_status(const net::HttpResponse& r) { return "HTTP " + std::to_string(r.status) + " " + r.reason; }

}  // namespace detail

inline Actions::Action message_action(const AwsActionConfig& config, const std::string& rule, const std::string& protocol,
                                      const std::string& endpoint) {
    const net::Url url = config.sns_endpoint.value_or(net::Url::parse("https://sns." + config.region + ".amazonaws.com"));
    auto client = detail::aws_service_client("sns", url, config);
    const std::vector<std::pair<std::string, std::string>> form{{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}};
    const std::string attr = protocol == "sms" ? "phone_num" : "email";
    std::string topic_arn;
    auto call = [&](const std::vector<std::pair<std::string, std::string>>& fields, const char* what) -> std::optional<std::string> {
        try {
            auto r = client->post(net::form_encode(fields), form);
            if (r.status != 200) {
                detail::log_line(config, std::string("SNS ") + what + " at " + url.origin() + ": " + detail::describe_status(r));
                return std::nullopt;
            }
            return std::string(r.body.text());
        } catch (const SMDebugError& e) {
            detail::log_line(config, std::string("SNS ") + what + " failed: " + e.what());
            return std::nullopt;
        }
    };
    if (auto body = call({{"Action", "CreateTopic"}, {"Name", "SMDebugRules"}, {"Version", "2010-03-31"}}, "CreateTopic")) {
        try {
            topic_arn = net::parse_sns_topic_arn(*body);
        } catch (const SMDebugError& e) {
            detail::log_line(config, std::string("SNS CreateTopic at ") + url.origin() + ": " + e.what());
        }
    }
    if (!topic_arn.empty()) {
        bool subscribed = false;
        std::string next;
        for (int page = 0; page < 100 && !subscribed; ++page) {
            std::vector<std::pair<std::string, std::string>> f{{"Action", "ListSubscriptions"}, {"Version", "2010-03-31"}};
            if (!next.empty()) f.emplace_back("NextToken", next);
            auto body = call(f, "ListSubscriptions");
            if (!body) break;
            net::SnsSubscriptionsPage listed;
            try {
                listed = net::parse_sns_subscriptions(*body);
            } catch (const SMDebugError& e) {
                detail::log_line(config, std::string("SNS ListSubscriptions at ") + url.origin() + ": " + e.what());
                break;
            }
            for (const auto& sub : listed.subscriptions)
                if (sub.protocol == protocol && sub.topic_arn == topic_arn && sub.endpoint == endpoint) subscribed = true;
            next = std::move(listed.next_token);
            if (next.empty()) break;
        }
        if (!subscribed) {
            boost::json::object policy;
            policy[attr] = boost::json::array{boost::json::string(endpoint)};
            call({{"Action", "Subscribe"}, {"TopicArn", topic_arn}, {"Protocol", protocol}, {"Endpoint", endpoint},
                  {"Attributes.entry.1.key", "FilterPolicy"}, {"Attributes.entry.1.value", boost::json::serialize(policy)},
                  {"ReturnSubscriptionArn", "false"}, {"Version", "2010-03-31"}},
                 "Subscribe");
        }
    }
    return [client, config, url, rule, protocol, endpoint, attr, topic_arn, form](const RuleFiring& f) {
        if (topic_arn.empty()) return;  // the topic could not be created: logged at construction
        const std::vector<std::pair<std::string, std::string>> fields{
            {"Action", "Publish"}, {"TopicArn", topic_arn}, {"Message", "SMDebugRule:" + rule + " fired. " + f.finding},
            {"Subject", "SMDebugRule:" + rule + " fired"}, {"MessageAttributes.entry.1.Name", attr},
            {"MessageAttributes.entry.1.Value.DataType", "String"}, {"MessageAttributes.entry.1.Value.StringValue", endpoint},
            {"Version", "2010-03-31"}};
        try {
            auto r = client->post(net::form_encode(fields), form);
            if (r.status != 200) detail::log_line(config, "SNS Publish at " + url.origin() + ": " + detail::describe_status(r));
        } catch (const SMDebugError& e) {
            detail::log_line(config, std::string("SNS Publish failed: ") + e.what());
        }
    };
}

inline Actions::Action stop_training_action(const AwsActionConfig& config, const std::string& rule, const std::string& prefix) {
    const net::Url url = config.sagemaker_endpoint.value_or(net::Url::parse("https://api.sagemaker." + config.region + ".amazonaws.com"));
    auto client = detail::aws_service_client("sagemaker", url, config);
    auto headers = [](const char* target) {
        return std::vector<std::pair<std::string, std::string>>{{"Content-Type", "application/x-amz-json-1.1"},
                                                                {"X-Amz-Target", std::string("SageMaker.") + target}};
    };
    std::vector<std::string> found;
    std::string next;
    int errors = 0;
    for (int page = 0; page < 50;) {
        boost::json::object req{{"NameContains", prefix}, {"SortBy", "CreationTime"}, {"SortOrder", "Descending"}, {"StatusEquals", "InProgress"}};
        if (!next.empty()) req["NextToken"] = next;
        boost::json::value res;
        try {
            auto r = client->post(boost::json::serialize(req), headers("ListTrainingJobs"));
            if (r.status != 200) throw SMDebugRuntimeError("ListTrainingJobs at " + url.origin() + ": " + detail::describe_status(r));
            res = boost::json::parse(r.body.text());
        } catch (const std::exception& e) {
            detail::log_line(config, std::string("SageMaker ") + e.what());
            if (++errors > 5) break;
            continue;
        }
        const auto* obj = res.if_object();
        const auto* jobs = obj ? obj->if_contains("TrainingJobSummaries") : nullptr;
        if (!jobs || !jobs->is_array()) break;
        for (const auto& j : jobs->as_array()) {
            const auto* name = j.is_object() ? j.as_object().if_contains("TrainingJobName") : nullptr;
            if (name && name->is_string() && std::string_view(name->as_string()).starts_with(prefix)) {
                const std::string n(name->as_string());
                if (std::find(found.begin(), found.end(), n) == found.end()) found.push_back(n);
            }
        }
        const auto* token = obj->if_contains("NextToken");
        if (!token || !token->is_string()) break;
        next = std::string(token->as_string());
        ++page;
        if (!found.empty()) break;
    }
    if (found.size() != 1)
        detail::log_line(config, "stoptraining for rule " + rule + ": " + std::to_string(found.size()) + " in-progress jobs start with '" + prefix +
                                     "'; the action will do nothing");
    return [client, config, url, found, headers](const RuleFiring&) {
        if (found.size() != 1) return;
        boost::json::object req{{"TrainingJobName", found.front()}};
        try {
            auto r = client->post(boost::json::serialize(req), headers("StopTrainingJob"));
            if (r.status != 200) detail::log_line(config, "StopTrainingJob " + found.front() + " at " + url.origin() + ": " + detail::describe_status(r));
        } catch (const SMDebugError& e) {
            detail::log_line(config, "StopTrainingJob " + found.front() + " failed: " + e.what());
        }
    };
}

// Factories for Actions::parse that build the AWS actions above.
inline Actions::Factories aws_action_factories(AwsActionConfig config) {
    Actions::Factories f;
    f.log = config.log;
    f.message = [config](const std::string& rule, const std::string& protocol, const std::string& endpoint) {
        return message_action(config, rule, protocol, endpoint);
    };
    f.stop_training = [config](const std::string& rule, const std::string& prefix) { return stop_training_action(config, rule, prefix); };
    return f;
}

}  // namespace smdebug
