#pragma once
// Reading S3's answers (net/s3_client.hpp): which statuses are retried or throttled, an error
// document as S3Error, a ListObjectsV2 page, a ranged GET's Content-Range and the asked bytes of
// its body.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <smdebug/core/byte_buffer.hpp>
#include <smdebug/core/errors.hpp>
#include <smdebug/net/detail/url.hpp>
#include <smdebug/net/detail/xml.hpp>
#include <smdebug/net/http_types.hpp>
#include <smdebug/net/s3_types.hpp>
#include <smdebug/net/transport_errors.hpp>

namespace smdebug::net::detail {

inline std::optional<std::uint64_t> parse_u64(std::string_view s) {
    if (s.empty() || s.size() > 19) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return v;
}

inline std::string header_or_empty(const HttpResponse& r, std::string_view name) {
    const std::string* h = r.header(name);
    return h ? *h : std::string();
}

// "bytes first-last/total" (total may be "*").
struct ContentRange {
    std::uint64_t first = 0, last = 0;
    std::optional<std::uint64_t> total;
};
inline std::optional<ContentRange> parse_content_range(const std::string* h) {
    if (!h) return std::nullopt;
    std::string_view s = *h;
    if (!s.starts_with("bytes ")) return std::nullopt;
    s.remove_prefix(6);
    auto dash = s.find('-'), slash = s.find('/');
    if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
    auto a = parse_u64(s.substr(0, dash)), b = parse_u64(s.substr(dash + 1, slash - dash - 1));
    if (!a || !b || *a > *b) return std::nullopt;
    ContentRange r{*a, *b, std::nullopt};
    std::string_view t = s.substr(slash + 1);
    if (t != "*") {
        r.total = parse_u64(t);
        if (!r.total || *r.total <= *b) return std::nullopt;
    }
    return r;
}

// The bytes [offset, offset+length) of an object, from a body holding [first, end).
inline ByteBuffer slice(ByteBuffer& body, std::uint64_t first, std::uint64_t end, std::uint64_t offset, std::uint64_t length) {
    if (offset >= end) return ByteBuffer();
    const std::uint64_t stop = std::min(end, offset + length);
    if (offset == first && stop == end) return std::move(body);
    return ByteBuffer::copy_of(body.bytes().subspan(static_cast<std::size_t>(offset - first), static_cast<std::size_t>(stop - offset)));
}

inline bool retryable_status(const HttpResponse& r) {
    if (r.status == 429 || r.status == 500 || r.status == 502 || r.status == 503 || r.status == 504) return true;
    if (r.status == 400 || r.status == 403) {
        // Throttling and transient codes that S3 sends with other statuses.
        std::string_view body = r.body.text();
        for (std::string_view code : {"<Code>SlowDown</Code>", "<Code>RequestTimeout</Code>", "<Code>Throttling</Code>",
                                      "<Code>ThrottlingException</Code>", "<Code>RequestLimitExceeded</Code>"})
            if (body.find(code) != std::string_view::npos) return true;
    }
    return false;
}

// Throttling answers: the window shrinks for them.
inline bool throttling_status(const HttpResponse& r) {
    if (r.status == 429) return true;
    if (r.status != 503 && r.status != 400 && r.status != 403) return false;
    std::string_view body = r.body.text();
    for (std::string_view code : {"<Code>SlowDown</Code>", "<Code>Throttling</Code>", "<Code>ThrottlingException</Code>",
                                  "<Code>RequestLimitExceeded</Code>", "<Code>TooManyRequestsException</Code>"})
        if (body.find(code) != std::string_view::npos) return true;
    return r.status == 503 && body.empty();
}

// The request an error answer was for, as its message names it.
struct S3Operation {
    std::string_view name;    // "GetObject"
    std::string_view method;  // "GET"
    std::string_view bucket;
    std::string_view key;
};

// The S3Error of an answer that is not a success: its status, S3's code and message (when the body
// is an S3 error document), the request id, and the bucket's region when it differs from the
// client's (`client_region`).
inline S3Error s3_error(const S3Operation& op, const HttpResponse& resp, std::string_view client_region) {
    std::string code, message, request_id;
    if (const auto* h = resp.header("x-amz-request-id")) request_id = *h;
    if (!resp.body.empty()) {
        try {
            XmlElement e = parse_xml(resp.body.text());
            if (e.name == "Error") {
                code = e.child_text("Code");
                message = e.child_text("Message");
                if (request_id.empty()) request_id = e.child_text("RequestId");
            }
        } catch (const XmlError&) {
            // Not an S3 error document (a proxy's page, s3rver's plain-text 404): status only.
        }
    }
    if (code.empty() && op.method == "HEAD") {
        switch (resp.status) {
            case 404: code = "NotFound"; break;
            case 403: code = "Forbidden"; break;
            case 400: code = "BadRequest"; break;
            default: break;
        }
    }
    std::string m = std::string(op.name) + " " + s3_url(op.bucket, op.key) + " failed: HTTP " + std::to_string(resp.status);
    if (!code.empty()) m += " " + code;
    if (!message.empty()) m += ": " + message.substr(0, 300);
    else if (!resp.reason.empty()) m += " (" + resp.reason.substr(0, 100) + ")";
    if (const auto* region = resp.header("x-amz-bucket-region"); region && *region != client_region)
        m += " [the bucket is in region " + *region + ", the client uses " + std::string(client_region) + "]";
    if (!request_id.empty()) m += " (request id " + request_id + ")";
    return S3Error(std::move(m), resp.status, std::move(code), std::move(request_id), std::string(op.bucket), std::string(op.key));
}

// One ListObjectsV2 page; `url` names the listing in errors. Keys are percent-decoded only when the
// answer says EncodingType url.
inline ListObjectsPage parse_list_page(const std::string& url, const HttpResponse& resp) {
    ListObjectsPage page;
    try {
        XmlElement root = parse_xml(resp.body.text());
        if (root.name != "ListBucketResult")
            throw HttpProtocolError("ListObjectsV2 " + url + ": expected <ListBucketResult>, got <" + root.name + ">");
        const bool url_encoded = root.child_text("EncodingType") == "url";
        auto decode = [&](std::string_view s) { return url_encoded ? percent_decode(s, true) : std::string(s); };
        root.for_each("Contents", [&](const XmlElement& c) {
            S3ObjectInfo o;
            const XmlElement* k = c.child("Key");
            if (!k) throw HttpProtocolError("ListObjectsV2 " + url + ": <Contents> without <Key>");
            o.key = decode(k->text);
            o.size = parse_u64(c.child_text("Size", "0")).value_or(0);
            o.etag = c.child_text("ETag");
            o.last_modified = c.child_text("LastModified");
            page.objects.push_back(std::move(o));
        });
        root.for_each("CommonPrefixes", [&](const XmlElement& c) { page.common_prefixes.push_back(decode(c.child_text("Prefix"))); });
        page.truncated = root.child_text("IsTruncated") == "true";
        page.next_continuation_token = std::string(root.child_text("NextContinuationToken"));
    } catch (const XmlError& e) {
        throw HttpProtocolError("ListObjectsV2 " + url + ": malformed XML response: " + e.what());
    } catch (const FormatError& e) {
        throw HttpProtocolError("ListObjectsV2 " + url + ": " + e.what());
    }
    return page;
}

}  // namespace smdebug::net::detail
