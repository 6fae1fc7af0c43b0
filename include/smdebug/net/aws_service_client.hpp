#pragma once
// A SigV4-signed client for AWS service APIs other than S3 (SNS, SageMaker: the AWS rule actions,
// rules/actions/aws_actions.hpp), and the parsing of the SNS answers those actions read, on the
// bounds-checked XML reader net/detail/xml.hpp (fuzz target `aws_query_xml`).
//
//  - AwsServiceClient(service, endpoint, region, credentials, http).post(body, headers): one
//    POST to the endpoint's "/", signed for `service` in `region`; the HTTP response is returned
//    whatever its status. Transport errors throw (NetworkError and its kinds).
//  - form_encode: the AWS Query protocol's body (application/x-www-form-urlencoded).
//  - parse_sns_topic_arn (CreateTopic) and parse_sns_subscriptions (ListSubscriptions): XmlError
//    when the answer is malformed or lacks what is read.
// Including this header brings the HTTP client (Boost.Asio, OpenSSL).
#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/net/aws_credentials.hpp>
#include <smdebug/net/detail/crypto.hpp>
#include <smdebug/net/detail/http_client.hpp>
#include <smdebug/net/detail/sigv4.hpp>
#include <smdebug/net/detail/url.hpp>
#include <smdebug/net/detail/xml.hpp>
#include <smdebug/net/http_types.hpp>
#include <smdebug/net/transport_errors.hpp>

namespace smdebug::net {

// Header or form fields, in order.
using AwsFields = std::vector<std::pair<std::string, std::string>>;

class AwsServiceClient {
public:
    AwsServiceClient(std::string service, Url endpoint, std::string region, std::shared_ptr<CredentialsProvider> credentials,
                     const HttpClientOptions& http = {})
        : service_(std::move(service)), endpoint_(std::move(endpoint)), region_(std::move(region)), credentials_(std::move(credentials)),
          http_(std::make_shared<HttpClient>(http)) {}

    // POST `body` with `headers` (plus the signature's) to the endpoint's "/".
    HttpResponse post(const std::string& body, const AwsFields& headers) const {
        if (!credentials_) throw UsageError("AWS " + service_ + " request to " + endpoint_.origin() + ": no credentials provider configured");
        AwsCredentials creds = credentials_->get();
        SigningRequest sr;
        sr.method = "POST";
        sr.scheme = endpoint_.scheme;
        sr.host = endpoint_.authority();
        sr.path_as_sent = "/";
        for (const auto& [n, v] : headers) sr.headers.emplace_back(n, v);
        sr.payload_hash = sha256_hex(std::string_view(body));
        const auto opts = SigningOptions::service_rules(region_, service_, format_amz_date(std::chrono::system_clock::now()));
        SignedRequest signed_req = sign_request(sr, creds, opts);
        secure_clear(creds.secret_access_key);
        HttpRequest req;
        req.method = "POST";
        req.url = endpoint_;
        req.url.target = "/";
        for (auto& [n, v] : signed_req.headers_to_send) req.headers.push_back({std::move(n), std::move(v)});
        req.body = std::as_bytes(std::span<const char>(body.data(), body.size()));
        return http_->send(req);
    }
    const Url& endpoint() const noexcept { return endpoint_; }
    const std::string& service() const noexcept { return service_; }

private:
    std::string service_;
    Url endpoint_;
    std::string region_;
    std::shared_ptr<CredentialsProvider> credentials_;
    std::shared_ptr<HttpClient> http_;
};

// "k1=v1&k2=v2", each name and value percent-encoded.
inline std::string form_encode(const AwsFields& fields) {
    std::string out;
    for (const auto& [k, v] : fields) out += (out.empty() ? "" : "&") + uri_encode(k) + "=" + uri_encode(v);
    return out;
}

// The first element named `name` in document order at or below `root` (the root included), or
// null. Walks with an explicit stack: the document's depth is bounded by XmlLimits anyway.
inline const XmlElement* find_xml_element(const XmlElement& root, std::string_view name) {
    std::vector<const XmlElement*> stack{&root};
    while (!stack.empty()) {
        const XmlElement* e = stack.back();
        stack.pop_back();
        if (e->name == name) return e;
        for (auto it = e->children.rbegin(); it != e->children.rend(); ++it) stack.push_back(&*it);
    }
    return nullptr;
}

struct SnsSubscription {
    std::string protocol, topic_arn, endpoint;
};
// One page of ListSubscriptions; next_token is empty on the last page.
struct SnsSubscriptionsPage {
    std::vector<SnsSubscription> subscriptions;
    std::string next_token;
};

// CreateTopic's answer: the TopicArn (non-empty).
inline std::string parse_sns_topic_arn(std::string_view body) {
    const XmlElement root = parse_xml(body);
    const XmlElement* arn = find_xml_element(root, "TopicArn");
    if (!arn || arn->text.empty()) throw XmlError("SNS CreateTopic answer <" + root.name + "> has no TopicArn");
    return arn->text;
}

// ListSubscriptions' answer: each Subscriptions/member's Protocol, TopicArn and Endpoint (a
// member lacking one of them is left out), and the NextToken.
inline SnsSubscriptionsPage parse_sns_subscriptions(std::string_view body) {
    const XmlElement root = parse_xml(body);
    SnsSubscriptionsPage page;
    if (const XmlElement* subs = find_xml_element(root, "Subscriptions"))
        subs->for_each("member", [&](const XmlElement& m) {
            const XmlElement *protocol = m.child("Protocol"), *topic = m.child("TopicArn"), *endpoint = m.child("Endpoint");
            if (protocol && topic && endpoint) page.subscriptions.push_back({protocol->text, topic->text, endpoint->text});
        });
    if (const XmlElement* next = find_xml_element(root, "NextToken")) page.next_token = next->text;
    return page;
}

}  // namespace smdebug::net
