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
// after construction of the configuration. Secrets never reach a log line. SnsMessageAction and
// StopTrainingJobAction do the work and keep each call's answer; message_action and
// stop_training_action wrap them as an Actions::Action.
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

// SNS "sms" / "email" for one rule and endpoint (see the top of this file). Construction creates
// the topic and the subscription; each publish() sends one message. What each call answered is
// kept, for callers that report it (the Python package's MessageAction).
class SnsMessageAction {
public:
    SnsMessageAction(AwsActionConfig config, std::string rule, std::string protocol, std::string endpoint)
        : config_(std::move(config)),
          url_(config_.sns_endpoint.value_or(net::Url::parse("https://sns." + config_.region + ".amazonaws.com"))),
          client_(detail::aws_service_client("sns", url_, config_)),
          rule_(std::move(rule)),
          protocol_(std::move(protocol)),
          endpoint_(std::move(endpoint)),
          attribute_(protocol_ == "sms" ? "phone_num" : "email") {
        if (auto body = call({{"Action", "CreateTopic"}, {"Name", "SMDebugRules"}, {"Version", "2010-03-31"}}, "CreateTopic")) {
            try {
                topic_arn_ = net::parse_sns_topic_arn(*body);
            } catch (const SMDebugError& e) {
                detail::log_line(config_, std::string("SNS CreateTopic at ") + url_.origin() + ": " + e.what());
            }
        }
        if (topic_arn_.empty()) return;
        if (subscribed()) {
            subscription_existed_ = true;
            return;
        }
        boost::json::object policy;
        policy[attribute_] = boost::json::array{boost::json::string(endpoint_)};
        subscription_response_ = call({{"Action", "Subscribe"}, {"TopicArn", topic_arn_}, {"Protocol", protocol_}, {"Endpoint", endpoint_},
                                       {"Attributes.entry.1.key", "FilterPolicy"}, {"Attributes.entry.1.value", boost::json::serialize(policy)},
                                       {"ReturnSubscriptionArn", "false"}, {"Version", "2010-03-31"}},
                                      "Subscribe");
    }

    // Empty when CreateTopic failed (logged): publish() then does nothing.
    const std::string& topic_arn() const noexcept { return topic_arn_; }
    // Whether ListSubscriptions showed this protocol, topic and endpoint subscribed already.
    bool subscription_existed() const noexcept { return subscription_existed_; }
    // Subscribe's answer (its XML body); nullopt when it was not sent or failed (logged).
    const std::optional<std::string>& subscription_response() const noexcept { return subscription_response_; }

    // Publishes "SMDebugRule:<rule> fired. <finding>"; Publish's answer, or nullopt (failure logged).
    std::optional<std::string> publish(const std::string& finding) const {
        if (topic_arn_.empty()) return std::nullopt;  // the topic could not be created: logged at construction
        return call({{"Action", "Publish"}, {"TopicArn", topic_arn_}, {"Message", "SMDebugRule:" + rule_ + " fired. " + finding},
                     {"Subject", "SMDebugRule:" + rule_ + " fired"}, {"MessageAttributes.entry.1.Name", attribute_},
                     {"MessageAttributes.entry.1.Value.DataType", "String"},
                     {"MessageAttributes.entry.1.Value.StringValue", endpoint_}, {"Version", "2010-03-31"}},
                    "Publish");
    }

private:
    using Fields = std::vector<std::pair<std::string, std::string>>;
    // One SNS call: the body of a 200 answer, else nullopt with the failure logged.
    std::optional<std::string> call(const Fields& fields, const char* what) const {
        static const Fields form{{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}};
        try {
            auto r = client_->post(net::form_encode(fields), form);
            if (r.status != 200) {
                detail::log_line(config_, std::string("SNS ") + what + " at " + url_.origin() + ": " + detail::describe_status(r));
                return std::nullopt;
            }
            return std::string(r.body.text());
        } catch (const SMDebugError& e) {
            detail::log_line(config_, std::string("SNS ") + what + " failed: " + e.what());
            return std::nullopt;
        }
    }
    bool subscribed() const {
        std::string next;
        for (int page = 0; page < 100; ++page) {
            Fields f{{"Action", "ListSubscriptions"}, {"Version", "2010-03-31"}};
            if (!next.empty()) f.emplace_back("NextToken", next);
            auto body = call(f, "ListSubscriptions");
            if (!body) return false;
            net::SnsSubscriptionsPage listed;
            try {
                listed = net::parse_sns_subscriptions(*body);
            } catch (const SMDebugError& e) {
                detail::log_line(config_, std::string("SNS ListSubscriptions at ") + url_.origin() + ": " + e.what());
                return false;
            }
            for (const auto& sub : listed.subscriptions)
                if (sub.protocol == protocol_ && sub.topic_arn == topic_arn_ && sub.endpoint == endpoint_) return true;
            next = std::move(listed.next_token);
            if (next.empty()) return false;
        }
        return false;
    }

    AwsActionConfig config_;
    net::Url url_;
    std::shared_ptr<net::AwsServiceClient> client_;
    std::string rule_, protocol_, endpoint_, attribute_;
    std::string topic_arn_;
    bool subscription_existed_ = false;
    std::optional<std::string> subscription_response_;
};

// SageMaker "stoptraining" for one rule (see the top of this file). Construction finds the
// in-progress jobs whose names start with the prefix; stop() stops the job when exactly one was found.
class StopTrainingJobAction {
public:
    StopTrainingJobAction(AwsActionConfig config, std::string rule, std::string prefix)
        : config_(std::move(config)),
          url_(config_.sagemaker_endpoint.value_or(net::Url::parse("https://api.sagemaker." + config_.region + ".amazonaws.com"))),
          client_(detail::aws_service_client("sagemaker", url_, config_)),
          prefix_(std::move(prefix)) {
        find_jobs();
        if (found_.size() != 1)
            detail::log_line(config_, "stoptraining for rule " + rule + ": " + std::to_string(found_.size()) +
                                          " in-progress jobs start with '" + prefix_ + "'; the action will do nothing");
    }

    const std::vector<std::string>& found_jobs() const noexcept { return found_; }

    // StopTrainingJob's answer (its JSON body); nullopt when not exactly one job was found, or on
    // failure (logged).
    std::optional<std::string> stop() const {
        if (found_.size() != 1) return std::nullopt;
        boost::json::object req{{"TrainingJobName", found_.front()}};
        try {
            auto r = client_->post(boost::json::serialize(req), headers("StopTrainingJob"));
            if (r.status == 200) return std::string(r.body.text());
            detail::log_line(config_, "StopTrainingJob " + found_.front() + " at " + url_.origin() + ": " + detail::describe_status(r));
        } catch (const SMDebugError& e) {
            detail::log_line(config_, "StopTrainingJob " + found_.front() + " failed: " + e.what());
        }
        return std::nullopt;
    }

private:
    static std::vector<std::pair<std::string, std::string>> headers(const char* target) {
        return {{"Content-Type", "application/x-amz-json-1.1"}, {"X-Amz-Target", std::string("SageMaker.") + target}};
    }
    void find_jobs() {
        std::string next;
        int errors = 0;
        for (int page = 0; page < 50;) {
            boost::json::object req{{"NameContains", prefix_}, {"SortBy", "CreationTime"}, {"SortOrder", "Descending"}, {"StatusEquals", "InProgress"}};
            if (!next.empty()) req["NextToken"] = next;
            boost::json::value res;
            try {
                auto r = client_->post(boost::json::serialize(req), headers("ListTrainingJobs"));
                if (r.status != 200) throw SMDebugRuntimeError("ListTrainingJobs at " + url_.origin() + ": " + detail::describe_status(r));
                res = boost::json::parse(r.body.text());
            } catch (const std::exception& e) {
                detail::log_line(config_, std::string("SageMaker ") + e.what());
                if (++errors > 5) break;
                continue;
            }
            const auto* obj = res.if_object();
            const auto* jobs = obj ? obj->if_contains("TrainingJobSummaries") : nullptr;
            if (!jobs || !jobs->is_array()) break;
            for (const auto& j : jobs->as_array()) {
                const auto* name = j.is_object() ? j.as_object().if_contains("TrainingJobName") : nullptr;
                if (name && name->is_string() && std::string_view(name->as_string()).starts_with(prefix_)) {
                    const std::string n(name->as_string());
                    if (std::find(found_.begin(), found_.end(), n) == found_.end()) found_.push_back(n);
                }
            }
            const auto* token = obj->if_contains("NextToken");
            if (!token || !token->is_string()) break;
            next = std::string(token->as_string());
            ++page;
            if (!found_.empty()) break;
        }
    }

    AwsActionConfig config_;
    net::Url url_;
    std::shared_ptr<net::AwsServiceClient> client_;
    std::string prefix_;
    std::vector<std::string> found_;
};

inline Actions::Action message_action(const AwsActionConfig& config, const std::string& rule, const std::string& protocol,
                                      const std::string& endpoint) {
    auto action = std::make_shared<const SnsMessageAction>(config, rule, protocol, endpoint);
    return [action](const RuleFiring& f) { (void)action->publish(f.finding); };
}

inline Actions::Action stop_training_action(const AwsActionConfig& config, const std::string& rule, const std::string& prefix) {
    auto action = std::make_shared<const StopTrainingJobAction>(config, rule, prefix);
    return [action](const RuleFiring&) { (void)action->stop(); };
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
