#pragma once
// The webhook rule action (opt-in: this header brings the HTTP client, Asio and OpenSSL, which
// rules/rules.hpp and local.hpp never include).
//
// webhook_action(url, options) POSTs, on every firing, the finding as JSON (finding_json in
// rules/actions/local_actions.hpp; Content-Type application/json) or, with options.slack, a
// Slack-compatible {"text": finding_text} to an http:// or https:// URL. HTTPS verifies the
// server's certificate and host name against the system's trust store plus options.ca_file.
// A 2xx answer is success. A connection error, a time-out, a truncated answer, 408, 429 or a 5xx
// is tried again, up to max_attempts attempts in all, after 250 ms, 500 ms, 1 s, ... (a 429's or
// 503's Retry-After in seconds when shorter than what is left); every attempt and pause fits in
// options.timeout in all. Anything else (another status, a certificate failure) fails at once.
// A failure throws ActionFailed naming redact_url(url) and why; the URL's path and query, which
// often hold the hook's token, never appear in messages or log lines.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <boost/json.hpp>

#include <smdebug/core/errors.hpp>
#include <smdebug/net/detail/http_client.hpp>
#include <smdebug/net/detail/url.hpp>
#include <smdebug/rules/actions/actions.hpp>
#include <smdebug/rules/actions/local_actions.hpp>

namespace smdebug {

struct WebhookOptions {
    bool slack = false;                          // {"text": ...} instead of the finding's JSON
    std::string ca_file;                         // extra trusted CAs (PEM), like AWS_CA_BUNDLE
    std::chrono::milliseconds timeout{10'000};   // all attempts and pauses of one firing
    int max_attempts = 3;
    RuleLogger log;                              // ("warning", "... retrying ...") lines
};

// "https://hooks.example.com/…": scheme, host and port only; user info, path and query (which
// may hold tokens) are left out. Text that is not a URL becomes "(URL hidden)".
inline std::string redact_url(std::string_view text) {
    const auto sep = text.find("://");
    if (sep == std::string_view::npos) return "(URL hidden)";
    std::string_view rest = text.substr(sep + 3);
    const auto path_at = rest.find_first_of("/?#");
    std::string_view auth = rest.substr(0, path_at);
    if (const auto at = auth.rfind('@'); at != std::string_view::npos) auth = auth.substr(at + 1);
    std::string out = std::string(text.substr(0, sep)) + "://" + std::string(auth);
    if (path_at != std::string_view::npos && rest.substr(path_at) != "/") out += "/…";
    return out;
}

namespace detail {

// `message` with every occurrence of `secret` replaced by `by`.
inline std::string replace_all(std::string message, std::string_view secret, std::string_view by) {
    if (secret.empty()) return message;
    for (auto at = message.find(secret); at != std::string::npos; at = message.find(secret, at + by.size()))
        message.replace(at, secret.size(), by);
    return message;
}

inline bool retryable_status(int status) { return status == 408 || status == 429 || (status >= 500 && status <= 599); }

}  // namespace detail

inline Actions::Action webhook_action(std::string_view url_text, WebhookOptions options = {}) {
    const std::string shown = redact_url(url_text);
    net::Url url;
    try {
        url = net::Url::parse(url_text);
    } catch (const SMDebugError& e) {
        const std::string why = e.what();
        const auto reason_at = why.find("': ");
        throw InvalidActionSpec("webhook " + shown + ": invalid URL" + (reason_at == std::string::npos ? "" : " (" + why.substr(reason_at + 3) + ")"));
    }
    if (options.max_attempts < 1) throw InvalidActionSpec("webhook " + shown + ": max_attempts must be at least 1");
    if (options.timeout.count() <= 0) throw InvalidActionSpec("webhook " + shown + ": the timeout must be positive");
    return [url, shown, options](const RuleFiring& f) {
        const std::string body = options.slack ? boost::json::serialize(boost::json::object{{"text", finding_text(f)}})
                                               : boost::json::serialize(finding_json(f));
        const auto scrub = [&](std::string m) {
            m = detail::replace_all(std::move(m), url.str(), shown);
            return url.target == "/" ? m : detail::replace_all(std::move(m), url.target, "/…");
        };
        using clock = std::chrono::steady_clock;
        const auto deadline = clock::now() + options.timeout;
        auto pause = std::chrono::milliseconds(250);
        std::string last;
        int attempt = 0;
        for (; attempt < options.max_attempts; ++attempt) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
            if (left.count() <= 0) break;
            net::HttpClientOptions ho;
            ho.connect_timeout = ho.io_timeout = ho.header_timeout = left;
            ho.extra_ca_file = options.ca_file;
            std::optional<std::chrono::milliseconds> retry_after;
            try {
                net::HttpClient client(ho);  // one per attempt: its time-outs are what is left
                net::HttpRequest req;
                req.method = "POST";
                req.url = url;
                req.headers = {{"Content-Type", "application/json"}, {"Accept", "*/*"}};
                req.body = std::as_bytes(std::span<const char>(body.data(), body.size()));
                const auto r = client.send(req);
                if (r.status >= 200 && r.status <= 299) return;
                last = "HTTP " + std::to_string(r.status) + (r.reason.empty() ? "" : " " + r.reason);
                if (!detail::retryable_status(r.status)) throw ActionFailed("webhook " + shown + " answered " + last);
                if (const auto* ra = r.header("Retry-After"); ra && !ra->empty() && ra->size() <= 5 &&
                                                              ra->find_first_not_of("0123456789") == std::string::npos)
                    retry_after = std::chrono::seconds(std::stoi(*ra));
            } catch (const TlsError& e) {
                throw ActionFailed("webhook " + shown + ": " + scrub(e.what()));
            } catch (const NetworkError& e) {
                last = scrub(e.what());
            } catch (const TruncatedResponse& e) {
                last = scrub(e.what());
            }
            if (attempt + 1 >= options.max_attempts) {
                ++attempt;
                break;
            }
            auto wait = retry_after && *retry_after < pause ? *retry_after : pause;
            const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
            if (wait >= remaining) {
                ++attempt;
                break;
            }
            if (options.log) options.log("warning", "webhook " + shown + ": " + last + "; trying again in " + std::to_string(wait.count()) + " ms");
            std::this_thread::sleep_for(wait);
            pause *= 2;
        }
        throw ActionFailed("webhook " + shown + " failed after " + std::to_string(attempt) + (attempt == 1 ? " attempt" : " attempts") +
                           " in " + std::to_string(options.timeout.count()) + " ms at most: " + (last.empty() ? "no time left" : last));
    };
}

}  // namespace smdebug
