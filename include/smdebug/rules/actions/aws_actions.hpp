#pragma once
// The reference's AWS rule actions (docs/rules.md "Actions"), over smdebug-cpp's own SigV4 signer and
// HTTP client (net/): SNS messages ("sms", "email") and SageMaker StopTrainingJob ("stoptraining").
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
#include <smdebug/net/detail/crypto.hpp>
#include <smdebug/net/detail/http_client.hpp>
#include <smdebug/net/detail/sigv4.hpp>
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

// One SigV4-signed POST to an AWS service endpoint.
class AwsServiceClient {
public:
    AwsServiceClient(std::string service, net::Url endpoint, const AwsActionConfig& c)
        : service_(std::move(service)), endpoint_(std::move(endpoint)), region_(c.region), credentials_(c.credentials),
          http_(std::make_shared<net::HttpClient>(c.http)) {}

    net::HttpResponse post(const std::string& body, const std::vector<std::pair<std::string, std::string>>& headers) const {
        if (!credentials_) throw UsageError("AWS rule action: no credentials provider configured");
        net::AwsCredentials creds = credentials_->get();
        net::SigningRequest sr;
        sr.method = "POST";
        sr.scheme = endpoint_.scheme;
        sr.host = endpoint_.authority();
        sr.path_as_sent = "/";
        for (const auto& [n, v] : headers) sr.headers.emplace_back(n, v);
        sr.payload_hash = net::sha256_hex(std::string_view(body));
        const auto opts = net::SigningOptions::service_rules(region_, service_, net::format_amz_date(std::chrono::system_clock::now()));
        net::SignedRequest signed_req = net::sign_request(sr, creds, opts);
        net::secure_clear(creds.secret_access_key);
        net::HttpRequest req;
        req.method = "POST";
        req.url = endpoint_;
        req.url.target = "/";
        for (auto& [n, v] : signed_req.headers_to_send) req.headers.push_back({std::move(n), std::move(v)});
        req.body = std::as_bytes(std::span<const char>(body.data(), body.size()));
        return http_->send(req);
    }
    const net::Url& endpoint() const noexcept { return endpoint_; }

private:
    std::string service_;
    net::Url endpoint_;
    std::string region_;
    std::shared_ptr<net::CredentialsProvider> credentials_;
    std::shared_ptr<net::HttpClient> http_;
};

inline std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string out;
    for (const auto& [k, v] : fields) out += (out.empty() ? "" : "&") + net::uri_encode(k) + "=" + net::uri_encode(v);
    return out;
}

// The text of the first <tag>...</tag> at or after `from` (XML entities of AWS answers decoded).
inline std::optional<std::string> xml_text(std::string_view doc, std::string_view tag, std::size_t from = 0, std::size_t* end = nullptr) {
    const std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
    const auto a = doc.find(open, from);
    if (a == std::string_view::npos) return std::nullopt;
    const auto b = doc.find(close, a + open.size());
    if (b == std::string_view::npos) return std::nullopt;
    if (end) *end = b + close.size();
    std::string s(doc.substr(a + open.size(), b - a - open.size())), out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '&') { out += s[i]; continue; }
        static constexpr std::pair<std::string_view, char> ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        bool done = false;
        for (const auto& [e, ch] : ents)
            if (std::string_view(s).substr(i, e.size()) == e) { out += ch; i += e.size() - 1; done = true; break; }
        if (!done) out += s[i];
    }
    return out;
}

inline void log_line(const AwsActionConfig& c, const std::string& text) {
    if (c.log) c.log("info", text);
}

inline std::string describe_status(const net::HttpResponse& r) { return "HTTP " + std::to_string(r.status) + " " + r.reason; }

}  // namespace detail

inline Actions::Action message_action(const AwsActionConfig& config, const std::string& rule, const std::string& protocol,
                                      const std::string& endpoint) {
    const net::Url url = config.sns_endpoint.value_or(net::Url::parse("https://sns." + config.region + ".amazonaws.com"));
    auto client = std::make_shared<detail::AwsServiceClient>("sns", url, config);
    const std::vector<std::pair<std::string, std::string>> form{{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}};
    const std::string attr = protocol == "sms" ? "phone_num" : "email";
    std::string topic_arn;
    auto call = [&](const std::vector<std::pair<std::string, std::string>>& fields, const char* what) -> std::optional<std::string> {
        try {
            auto r = client->post(detail::form_encode(fields), form);
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
    if (auto body = call({{"Action", "CreateTopic"}, {"Name", "SMDebugRules"}, {"Version", "2010-03-31"}}, "CreateTopic"))
        topic_arn = detail::xml_text(*body, "TopicArn").value_or("");
    if (!topic_arn.empty()) {
        bool subscribed = false;
        std::string next;
        for (int page = 0; page < 100 && !subscribed; ++page) {
            std::vector<std::pair<std::string, std::string>> f{{"Action", "ListSubscriptions"}, {"Version", "2010-03-31"}};
            if (!next.empty()) f.emplace_back("NextToken", next);
            auto body = call(f, "ListSubscriptions");
            if (!body) break;
            std::size_t pos = 0, member_end = 0;
            while (auto member = detail::xml_text(*body, "member", pos, &member_end)) {
                pos = member_end;
                if (detail::xml_text(*member, "Protocol") == protocol && detail::xml_text(*member, "TopicArn") == topic_arn &&
                    detail::xml_text(*member, "Endpoint") == endpoint)
                    subscribed = true;
            }
            next = detail::xml_text(*body, "NextToken").value_or("");
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
            auto r = client->post(detail::form_encode(fields), form);
            if (r.status != 200) detail::log_line(config, "SNS Publish at " + url.origin() + ": " + detail::describe_status(r));
        } catch (const SMDebugError& e) {
            detail::log_line(config, std::string("SNS Publish failed: ") + e.what());
        }
    };
}

inline Actions::Action stop_training_action(const AwsActionConfig& config, const std::string& rule, const std::string& prefix) {
    const net::Url url = config.sagemaker_endpoint.value_or(net::Url::parse("https://api.sagemaker." + config.region + ".amazonaws.com"));
    auto client = std::make_shared<detail::AwsServiceClient>("sagemaker", url, config);
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
