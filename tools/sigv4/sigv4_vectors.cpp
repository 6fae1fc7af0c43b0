// sigv4_vectors FILE.json [FILE.json...]
//
// Runs SigV4 test vectors ("format": "sigv4-test-vectors", see shared/sigv4/README.md) against
// smdebug::net's signer. For each vector the request is built from `request.*`, signed in the
// vector's mode (header/query, add_auth/components, S3 or generic rules, signed/unsigned/streaming
// payload), and every `expected.*` field present is compared. One line per failing vector; the
// last line on stdout is "N passed, M failed". Exit status: 0 all passed, 1 some failed, 2 usage
// error or an unreadable/invalid file.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include <smdebug/core/text.hpp>
#include <smdebug/net/detail/crypto.hpp>
#include <smdebug/net/detail/sigv4.hpp>

namespace json = boost::json;
namespace net = smdebug::net;

namespace {

// A vector that cannot be run as described (missing or malformed field, unknown mode, ...).
struct VectorError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ---- JSON access ------------------------------------------------------------------------------

const json::value* find(const json::object& o, std::string_view key) {
    auto it = o.find(key);
    return it == o.end() ? nullptr : &it->value();
}

const json::object& get_object(const json::object& o, std::string_view key, std::string_view where) {
    const json::value* v = find(o, key);
    if (!v || !v->is_object()) throw VectorError(std::string(where) + "." + std::string(key) + " missing or not an object");
    return v->get_object();
}

std::string get_string(const json::object& o, std::string_view key, std::string_view where) {
    const json::value* v = find(o, key);
    if (!v || !v->is_string()) throw VectorError(std::string(where) + "." + std::string(key) + " missing or not a string");
    return std::string(v->get_string());
}

std::optional<std::string> get_optional_string(const json::object& o, std::string_view key, std::string_view where) {
    const json::value* v = find(o, key);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_string()) throw VectorError(std::string(where) + "." + std::string(key) + " is not a string");
    return std::string(v->get_string());
}

std::int64_t get_int(const json::object& o, std::string_view key, std::string_view where) {
    const json::value* v = find(o, key);
    if (v) {
        if (v->is_int64()) return v->get_int64();
        if (v->is_uint64() && v->get_uint64() <= std::uint64_t(INT64_MAX)) return std::int64_t(v->get_uint64());
    }
    throw VectorError(std::string(where) + "." + std::string(key) + " missing or not an integer");
}

bool get_bool(const json::object& o, std::string_view key, std::string_view where) {
    const json::value* v = find(o, key);
    if (!v || !v->is_bool()) throw VectorError(std::string(where) + "." + std::string(key) + " missing or not a boolean");
    return v->get_bool();
}

// [[name, value], ...]
std::vector<std::pair<std::string, std::string>> get_pairs(const json::value& v, std::string_view where) {
    if (!v.is_array()) throw VectorError(std::string(where) + " is not an array of pairs");
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& e : v.get_array()) {
        if (!e.is_array() || e.get_array().size() != 2 || !e.get_array()[0].is_string() || !e.get_array()[1].is_string())
            throw VectorError(std::string(where) + " has an element that is not a [string, string] pair");
        out.emplace_back(std::string(e.get_array()[0].get_string()), std::string(e.get_array()[1].get_string()));
    }
    return out;
}

// ---- helpers ----------------------------------------------------------------------------------

std::string base64_decode(std::string_view in) {
    auto val = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+' || c == '-') return 62;
        if (c == '/' || c == '_') return 63;
        return -1;
    };
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    bool padding = false;
    for (char c : in) {
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        if (c == '=') {
            padding = true;
            continue;
        }
        int v = val(c);
        if (v < 0 || padding) throw VectorError("request.body_base64 is not valid base64");
        acc = (acc << 6) | std::uint32_t(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(char((acc >> bits) & 0xff));
        }
    }
    if (bits >= 6) throw VectorError("request.body_base64 is not valid base64 (truncated)");
    return out;
}

constexpr auto hex_value = smdebug::text::hex_digit_value;

std::string percent_decode(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
            out.push_back(char(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2])));
            i += 2;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

// IRI -> URI (RFC 3987 section 3.1): percent-encode every non-ASCII byte. The vectors spell URLs
// as sent by botocore, whose suite requests may carry raw UTF-8; the signer always encodes.
std::string iri_to_uri(std::string_view s) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (c >= 0x80) {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
        } else {
            out.push_back(char(c));
        }
    }
    return out;
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs parse_query(std::string_view q) {
    Pairs out;
    if (q.empty()) return out;
    std::size_t start = 0;
    while (true) {
        std::size_t end = q.find('&', start);
        std::string_view part = q.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        std::size_t eq = part.find('=');
        if (eq == std::string_view::npos)
            out.emplace_back(percent_decode(part), "");
        else
            out.emplace_back(percent_decode(part.substr(0, eq)), percent_decode(part.substr(eq + 1)));
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    return out;
}

std::string escape(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    static constexpr char hex[] = "0123456789abcdef";
                    out += "\\x";
                    out.push_back(hex[c >> 4]);
                    out.push_back(hex[c & 15]);
                } else {
                    out.push_back(char(c));
                }
        }
    }
    return out;
}

// An abbreviated view of both strings around their first difference.
std::string abbreviated_diff(std::string_view expected, std::string_view got) {
    constexpr std::size_t before = 24, width = 72;
    std::size_t i = 0;
    while (i < expected.size() && i < got.size() && expected[i] == got[i]) ++i;
    std::size_t from = i > before ? i - before : 0;
    // Do not cut a UTF-8 sequence in half.
    while (from > 0 && from < expected.size() && (static_cast<unsigned char>(expected[from]) & 0xC0) == 0x80) --from;
    auto window = [&](std::string_view s) {
        std::string w;
        if (from > 0) w += "...";
        std::string_view part = from < s.size() ? s.substr(from, width) : std::string_view();
        w += escape(part);
        if (from + width < s.size()) w += "...";
        return "\"" + w + "\"";
    };
    return "at offset " + std::to_string(i) + ": expected " + window(expected) + " got " + window(got);
}

std::string pairs_to_string(const Pairs& p) {
    std::string s = "[";
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (i) s += ", ";
        s += p[i].first + ": " + p[i].second;
    }
    return s + "]";
}

// ---- running one vector -------------------------------------------------------------------------

struct Mismatch {
    std::string field;
    std::string detail;
};

class Checker {
public:
    explicit Checker(const json::object& expected) : expected_(expected) {}

    // The expected string of a field this vector has (claiming it), or null when the vector lacks
    // the field or its value is not a string (which is recorded as a failure).
    const json::string* expected_string(std::string_view field) {
        if (!claim(field)) return nullptr;
        const json::value& v = expected_.at(field);
        if (!v.is_string()) {
            fail(field, "expected value is not a string");
            return nullptr;
        }
        return &v.get_string();
    }

    void string_field(std::string_view field, const std::string& got) {
        const auto* v = expected_string(field);
        if (!v) return;
        std::string_view exp = *v;
        if (exp != got) fail(field, abbreviated_diff(exp, got));
    }
    void url_field(std::string_view field, const std::string& got) {
        const auto* v = expected_string(field);
        if (!v) return;
        std::string exp = iri_to_uri(*v);
        std::string g = iri_to_uri(got);
        if (exp != g) fail(field, abbreviated_diff(exp, g));
    }
    // Ordered list of pairs.
    void ordered_pairs(std::string_view field, const Pairs& got) {
        if (!claim(field)) return;
        Pairs exp = get_pairs(expected_.at(field), "expected." + std::string(field));
        if (exp == got) return;
        std::size_t i = 0;
        while (i < exp.size() && i < got.size() && exp[i] == got[i]) ++i;
        auto entry = [](const Pairs& p, std::size_t k) {
            if (k >= p.size()) return std::string("(none)");
            std::string s = escape(p[k].first + ": " + p[k].second);
            return s.size() > 100 ? s.substr(0, 100) + "..." : s;
        };
        fail(field, std::to_string(exp.size()) + " expected vs " + std::to_string(got.size()) + " produced; first difference at #" +
                        std::to_string(i) + ": expected \"" + entry(exp, i) + "\" got \"" + entry(got, i) + "\"");
    }
    // Pairs compared as a multiset.
    void unordered_pairs(std::string_view field, Pairs got) {
        if (!claim(field)) return;
        Pairs exp = get_pairs(expected_.at(field), "expected." + std::string(field));
        compare_sets(field, std::move(exp), std::move(got));
    }
    // A URL whose query parameters are compared as a set (decoded); the part before '?' exactly.
    void url_with_param_set(std::string_view field, const std::string& got) {
        const auto* v = expected_string(field);
        if (!v) return;
        std::string exp = iri_to_uri(*v);
        std::string g = iri_to_uri(got);
        auto split = [](const std::string& u) {
            auto q = u.find('?');
            return q == std::string::npos ? std::pair{u, std::string()} : std::pair{u.substr(0, q), u.substr(q + 1)};
        };
        auto [eb, eq] = split(exp);
        auto [gb, gq] = split(g);
        if (eb != gb) {
            fail(field, "(before '?') " + abbreviated_diff(eb, gb));
            return;
        }
        compare_sets(field, parse_query(eq), parse_query(gq));
    }

    // Marks an expected field as handled; false when the vector does not have it.
    bool claim(std::string_view field) {
        if (!expected_.contains(field)) return false;
        handled_.emplace_back(field);
        return true;
    }
    void fail(std::string_view field, std::string detail) { mismatches_.push_back({std::string(field), std::move(detail)}); }

    // Expected fields this runner did not compare count as failures: nothing is passed unchecked.
    void check_all_handled() {
        for (const auto& kv : expected_) {
            std::string k(kv.key());
            if (std::find(handled_.begin(), handled_.end(), k) == handled_.end())
                fail(k, "expected field not checked by this runner (unsupported in this mode)");
        }
    }

    const std::vector<Mismatch>& mismatches() const { return mismatches_; }

private:
    void compare_sets(std::string_view field, Pairs exp, Pairs got) {
        std::sort(exp.begin(), exp.end());
        std::sort(got.begin(), got.end());
        if (exp == got) return;
        Pairs missing, extra;
        std::set_difference(exp.begin(), exp.end(), got.begin(), got.end(), std::back_inserter(missing));
        std::set_difference(got.begin(), got.end(), exp.begin(), exp.end(), std::back_inserter(extra));
        fail(field, "parameters differ: missing " + escape(pairs_to_string(missing)).substr(0, 300) + ", unexpected " +
                        escape(pairs_to_string(extra)).substr(0, 300));
    }

    const json::object& expected_;
    std::vector<std::string> handled_;
    std::vector<Mismatch> mismatches_;
};

std::vector<Mismatch> run_vector(const json::object& vec) {
    const json::object& creds_j = get_object(vec, "credentials", "vector");
    const json::object& req_j = get_object(vec, "request", "vector");
    const json::object& sig_j = get_object(vec, "signing", "vector");
    const json::object& exp_j = get_object(vec, "expected", "vector");

    net::Credentials creds{get_string(creds_j, "access_key_id", "credentials"),
                           get_string(creds_j, "secret_access_key", "credentials"),
                           get_optional_string(creds_j, "session_token", "credentials")};

    net::SigningOptions opts;
    opts.region = get_string(vec, "region", "vector");
    opts.service = get_string(vec, "service", "vector");
    opts.timestamp = get_string(vec, "timestamp", "vector");
    opts.s3_rules = get_bool(sig_j, "s3_rules", "signing");

    const std::string mode = get_string(sig_j, "mode", "signing");
    const std::string via = get_string(sig_j, "via", "signing");
    if (via == "add_auth")
        opts.header_signing = net::HeaderSigning::add_auth;
    else if (via == "components")
        opts.header_signing = net::HeaderSigning::components;
    else
        throw VectorError("unsupported signing.via '" + via + "'");
    if (mode == "query" && via != "add_auth") throw VectorError("unsupported: query mode with via '" + via + "'");

    // The request.
    net::SigningRequest req;
    req.method = get_string(req_j, "method", "request");
    req.scheme = get_string(req_j, "scheme", "request");
    req.host = get_optional_string(req_j, "authority", "request").value_or(get_string(req_j, "host", "request"));
    req.path_as_sent = get_string(req_j, "path_as_sent", "request");
    if (const json::value* q = find(req_j, "query"); q && !q->is_null()) req.query = get_pairs(*q, "request.query");
    if (const json::value* h = find(req_j, "headers"); h && !h->is_null()) req.headers = get_pairs(*h, "request.headers");

    // The body (or only its hash).
    std::optional<std::string> body_hash;
    int bodies = 0;
    if (auto b = get_optional_string(req_j, "body_utf8", "request")) {
        ++bodies;
        body_hash = net::sha256_hex(*b);
    }
    if (auto b = get_optional_string(req_j, "body_base64", "request")) {
        ++bodies;
        body_hash = net::sha256_hex(base64_decode(*b));
    }
    if (const json::value* r = find(req_j, "body_repeat"); r && !r->is_null()) {
        ++bodies;
        if (!r->is_object()) throw VectorError("request.body_repeat is not an object");
        const std::string unit = get_string(r->get_object(), "unit_utf8", "request.body_repeat");
        const std::int64_t count = get_int(r->get_object(), "count", "request.body_repeat");
        if (count < 0) throw VectorError("request.body_repeat.count is negative");
        net::Sha256 h;
        for (std::int64_t i = 0; i < count; ++i) h.update(unit);
        body_hash = h.finish_hex();
    }
    if (bodies > 1) throw VectorError("request has more than one of body_utf8/body_base64/body_repeat");
    const std::optional<std::string> declared = get_optional_string(req_j, "payload_sha256", "request");

    std::vector<Mismatch> pre;
    if (body_hash && declared && *body_hash != *declared)
        pre.push_back({"request.payload_sha256", "body hashes to " + *body_hash + " but the vector declares " + *declared});
    const std::optional<std::string> payload_sha = body_hash ? body_hash : declared;

    std::string payload_signing = "signed";
    if (auto ps = get_optional_string(sig_j, "payload_signing", "signing")) payload_signing = *ps;
    if (payload_signing == "unsigned") {
        req.payload_hash = std::string(net::unsigned_payload);
    } else if (payload_signing == "streaming") {
        req.payload_hash = std::string(net::streaming_payload);
    } else if (payload_signing == "signed") {
        if (payload_sha) {
            req.payload_hash = *payload_sha;
        } else if (mode == "query" && opts.s3_rules) {
            req.payload_hash = std::string(net::unsigned_payload);  // not used: S3 presign is always unsigned
        } else {
            auto it = std::find_if(req.headers.begin(), req.headers.end(),
                                   [](const auto& h) { return smdebug::text::iequals(h.first, "x-amz-content-sha256"); });
            if (it == req.headers.end()) throw VectorError("no body, no payload_sha256 and no x-amz-content-sha256 header");
            req.payload_hash = it->second;
        }
    } else {
        throw VectorError("unsupported signing.payload_signing '" + payload_signing + "'");
    }

    Checker check(exp_j);

    // Signing key (computed separately: the signer's results never expose it).
    const std::string date = opts.timestamp.substr(0, 8);
    const net::SigningKey key = net::derive_signing_key(creds.secret_access_key, date, opts.region, opts.service);
    check.string_field("signing_key_hex", net::to_hex(key.key));

    auto common = [&](const net::SigningDetails& d) {
        check.string_field("canonical_request", d.canonical_request);
        check.string_field("canonical_request_sha256", d.canonical_request_sha256);
        check.string_field("string_to_sign", d.string_to_sign);
        check.string_field("signature", d.signature);
        check.string_field("signed_headers", d.signed_headers);
        check.string_field("payload_hash", d.payload_hash);
    };

    if (mode == "header") {
        const net::SignedRequest s = net::sign_request(req, creds, opts, key);
        common(s);
        check.string_field("authorization", s.authorization);
        check.ordered_pairs("headers_to_send", s.headers_to_send);
        check.url_field("url", s.url);

        if (check.claim("chunk_signatures")) {
            const json::value& cs = exp_j.at("chunk_signatures");
            if (!cs.is_array()) throw VectorError("expected.chunk_signatures is not an array");
            net::ChunkSigner signer(key, opts.timestamp, s.credential_scope, s.signature);
            std::size_t n = 0;
            for (const auto& c : cs.get_array()) {
                const std::string where = "expected.chunk_signatures[" + std::to_string(n) + "]";
                if (!c.is_object()) throw VectorError(where + " is not an object");
                const json::object& co = c.get_object();
                std::string chunk_hash;
                if (auto data = get_optional_string(co, "chunk_utf8", where)) {
                    chunk_hash = net::sha256_hex(*data);
                } else {
                    const std::int64_t size = get_int(co, "chunk_size", where);
                    const std::string unit = get_string(co, "chunk_byte_utf8", where);
                    if (size < 0) throw VectorError(where + ".chunk_size is negative");
                    net::Sha256 h;
                    for (std::int64_t i = 0; i < size; ++i) h.update(unit);
                    chunk_hash = h.finish_hex();
                }
                const net::ChunkSigner::Chunk got = signer.next_hash(chunk_hash);
                const std::string sts = get_string(co, "string_to_sign", where);
                const std::string sig = get_string(co, "signature", where);
                if (sts != got.string_to_sign)
                    check.fail("chunk_signatures[" + std::to_string(n) + "].string_to_sign",
                               abbreviated_diff(sts, got.string_to_sign));
                if (sig != got.signature)
                    check.fail("chunk_signatures[" + std::to_string(n) + "].signature", abbreviated_diff(sig, got.signature));
                ++n;
            }
        }
    } else if (mode == "query") {
        const std::int64_t expires = get_int(sig_j, "expires", "signing");
        const net::PresignedRequest p = net::presign_request(req, creds, opts, std::chrono::seconds(expires), key);
        common(p);
        check.url_with_param_set("presigned_url", p.url);
        check.unordered_pairs("presigned_query", p.query);
        check.ordered_pairs("headers_to_send", p.headers_to_send);
    } else {
        throw VectorError("unsupported signing.mode '" + mode + "'");
    }

    check.check_all_handled();
    std::vector<Mismatch> out = std::move(pre);
    out.insert(out.end(), check.mismatches().begin(), check.mismatches().end());
    return out;
}

std::string vector_id(const json::object& vec, std::size_t index) {
    if (const json::value* id = find(vec, "id"); id && id->is_string()) return std::string(id->get_string());
    return "#" + std::to_string(index);
}

std::optional<json::value> load(const std::string& path, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot open " + path;
        return std::nullopt;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        error = "cannot read " + path;
        return std::nullopt;
    }
    boost::system::error_code ec;
    json::value v = json::parse(ss.str(), ec);
    if (ec) {
        error = path + ": invalid JSON: " + ec.message();
        return std::nullopt;
    }
    if (!v.is_object()) {
        error = path + ": not a JSON object";
        return std::nullopt;
    }
    const json::object& o = v.get_object();
    const json::value* fmt = find(o, "format");
    if (!fmt || !fmt->is_string() || fmt->get_string() != "sigv4-test-vectors") {
        error = path + ": not a sigv4-test-vectors file (\"format\" field)";
        return std::nullopt;
    }
    const json::value* vecs = find(o, "vectors");
    if (!vecs || !vecs->is_array()) {
        error = path + ": no \"vectors\" array";
        return std::nullopt;
    }
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: " << (argc > 0 ? argv[0] : "sigv4_vectors") << " FILE.json [FILE.json...]\n";
        return 2;
    }
    std::vector<std::pair<std::string, json::value>> files;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::cout << "usage: sigv4_vectors FILE.json [FILE.json...]\n";
            return 0;
        }
        std::string error;
        auto v = load(arg, error);
        if (!v) {
            std::cerr << "sigv4_vectors: " << error << "\n";
            return 2;
        }
        files.emplace_back(arg, std::move(*v));
    }

    std::size_t passed = 0, failed = 0;
    for (const auto& [path, doc] : files) {
        const json::object& root = doc.get_object();
        const json::array& vectors = root.at("vectors").get_array();
        if (const json::value* c = find(root, "count"); c && c->is_number() && c->to_number<double>() != double(vectors.size()))
            std::cerr << "sigv4_vectors: warning: " << path << " declares count " << json::serialize(*c) << " but holds "
                      << vectors.size() << " vectors\n";
        std::size_t index = 0;
        for (const auto& v : vectors) {
            std::string id = "#" + std::to_string(index);
            std::vector<Mismatch> mismatches;
            try {
                if (!v.is_object()) throw VectorError("vector is not an object");
                id = vector_id(v.get_object(), index);
                mismatches = run_vector(v.get_object());
            } catch (const std::exception& e) {
                mismatches.push_back({"error", e.what()});
            }
            ++index;
            if (mismatches.empty()) {
                ++passed;
                continue;
            }
            ++failed;
            std::string line = "FAIL " + id + ": " + mismatches.front().field + ": " + mismatches.front().detail;
            if (mismatches.size() > 1) {
                line += " (+" + std::to_string(mismatches.size() - 1) + " more:";
                for (std::size_t i = 1; i < mismatches.size(); ++i) line += " " + mismatches[i].field;
                line += ")";
            }
            std::cout << line << "\n";
        }
    }
    std::cout << passed << " passed, " << failed << " failed" << std::endl;
    return failed > 0 ? 1 : 0;
}
