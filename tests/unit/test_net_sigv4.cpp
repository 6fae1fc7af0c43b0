// Unit tests for smdebug/net/detail/crypto.hpp and smdebug/net/detail/sigv4.hpp.
// (The full vector sets run through tools/sigv4/sigv4_vectors, registered by tests/cmake/sigv4.cmake.)
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <smdebug/net/detail/crypto.hpp>
#include <smdebug/net/detail/sigv4.hpp>

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_net_sigv4 {

namespace net = smdebug::net;
using namespace std::string_literals;

namespace {

std::vector<std::uint8_t> bytes(std::size_t n, std::uint8_t b) { return std::vector<std::uint8_t>(n, b); }

std::string hmac_hex(const std::vector<std::uint8_t>& key, std::string_view data) {
    return net::to_hex(net::hmac_sha256(key, data));
}

// The S3 documentation's example credentials and signing time.
const net::Credentials kDocCreds{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", std::nullopt};
constexpr const char* kDocTime = "20130524T000000Z";

}  // namespace

TEST_CASE("SHA-256 known answers (FIPS 180-2 examples)", "[net][crypto]") {
    CHECK(net::sha256_hex("") == std::string(net::empty_sha256_hex));
    CHECK(net::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(net::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    SECTION("incremental equals one-shot; one million 'a'") {
        net::Sha256 h;
        const std::string thousand(1000, 'a');
        for (int i = 0; i < 1000; ++i) h.update(thousand);
        CHECK(h.finish_hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
        h.reset();
        h.update("ab").update("").update("c");
        CHECK(h.finish_hex() == net::sha256_hex("abc"));
    }
    SECTION("move leaves a usable object behind the new owner") {
        net::Sha256 a;
        a.update("ab");
        net::Sha256 b = std::move(a);
        b.update("c");
        CHECK(b.finish_hex() == net::sha256_hex("abc"));
    }
}

TEST_CASE("HMAC-SHA256 known answers (RFC 4231)", "[net][crypto]") {
    // Test case 1
    CHECK(hmac_hex(bytes(20, 0x0b), "Hi There") == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    // Test case 2: key shorter than the output
    CHECK(net::to_hex(net::hmac_sha256("Jefe"s, "what do ya want for nothing?"s)) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    // Test case 3: combined length of key and data larger than 64 bytes
    CHECK(hmac_hex(bytes(20, 0xaa), std::string(50, '\xdd')) ==
          "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    // Test case 4
    std::vector<std::uint8_t> k4;
    for (std::uint8_t i = 1; i <= 25; ++i) k4.push_back(i);
    CHECK(hmac_hex(k4, std::string(50, '\xcd')) == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    // Test case 5: truncated to 128 bits
    CHECK(hmac_hex(bytes(20, 0x0c), "Test With Truncation").substr(0, 32) == "a3b6167473100ee06e0c796c2955552b");
    // Test case 6: key larger than the block size
    CHECK(hmac_hex(bytes(131, 0xaa), "Test Using Larger Than Block-Size Key - Hash Key First") ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    // Test case 7: key and data larger than the block size
    CHECK(hmac_hex(bytes(131, 0xaa),
                   "This is a test using a larger than block-size key and a larger than block-size data. The key "
                   "needs to be hashed before being used by the HMAC algorithm.") ==
          "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST_CASE("to_hex is lower case", "[net][crypto]") {
    const std::vector<std::uint8_t> b{0x00, 0x0f, 0xab, 0xff};
    CHECK(net::to_hex(b) == "000fabff");
    CHECK(net::to_hex(std::string_view("\x01\xfe", 2)) == "01fe");
}

TEST_CASE("URI encoding edge cases", "[net][sigv4]") {
    CHECK(net::uri_encode("a b") == "a%20b");                 // space is %20, never '+'
    CHECK(net::uri_encode("é") == "%C3%A9");                  // UTF-8 bytes, upper-case hex
    CHECK(net::uri_encode("日😀") == "%E6%97%A5%F0%9F%98%80");
    CHECK(net::uri_encode("~") == "~");                        // unreserved
    CHECK(net::uri_encode("AZaz09-_.~") == "AZaz09-_.~");
    CHECK(net::uri_encode("a/b") == "a%2Fb");                  // '/' encoded in query components
    CHECK(net::uri_encode("a/b", true) == "a/b");              // ... and kept in paths
    CHECK(net::uri_encode("%") == "%25");
    CHECK(net::uri_encode("%20") == "%2520");
    CHECK(net::uri_encode("!$&'()*+,;:=@") == "%21%24%26%27%28%29%2A%2B%2C%3B%3A%3D%40");
    CHECK(net::uri_encode("?#[]") == "%3F%23%5B%5D");
    CHECK(net::uri_encode(std::string_view("\0\x7f", 2)) == "%00%7F");
    CHECK(net::uri_encode("") == "");
}

TEST_CASE("Canonical URI: S3 keeps the path as sent, other services normalise then encode", "[net][sigv4]") {
    CHECK(net::canonical_uri("/bucket//a/./b/../c%20d", true) == "/bucket//a/./b/../c%20d");
    CHECK(net::canonical_uri("", true) == "/");

    CHECK(net::remove_dot_segments("/example/..") == "/");
    CHECK(net::remove_dot_segments("/example1/example2/../..") == "/");
    CHECK(net::remove_dot_segments("/./") == "/");
    CHECK(net::remove_dot_segments("/./example") == "/example");
    CHECK(net::remove_dot_segments("//") == "/");
    CHECK(net::remove_dot_segments("//example//") == "/example/");
    CHECK(net::remove_dot_segments("/a/b/.") == "/a/b");
    CHECK(net::remove_dot_segments("/../a") == "/a");
    CHECK(net::remove_dot_segments("") == "/");

    CHECK(net::canonical_uri("/example space/", false) == "/example%20space/");
    CHECK(net::canonical_uri("/documents%20and%20settings/", false) == "/documents%2520and%2520settings/");  // double
    CHECK(net::canonical_uri("/ሴ", false) == "/%E1%88%B4");
    CHECK(net::canonical_uri("/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", false) ==
          "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
}

TEST_CASE("Canonical query string", "[net][sigv4]") {
    // Sorted by encoded name (byte order: upper before lower, "Param" before "Param-3"), then value.
    CHECK(net::canonical_query_string({{"Param2", "value2"}, {"Param1", "value1"}}) == "Param1=value1&Param2=value2");
    CHECK(net::canonical_query_string({{"Param1", "value2"}, {"Param1", "Value1"}}) == "Param1=Value1&Param1=value2");
    CHECK(net::canonical_query_string({{"param", "x"}, {"Param", "y"}}) == "Param=y&param=x");
    CHECK(net::canonical_query_string({{"Param-3", "a"}, {"Param", "b"}}) == "Param=b&Param-3=a");
    CHECK(net::canonical_query_string({{"lifecycle", ""}}) == "lifecycle=");
    CHECK(net::canonical_query_string({{"prefix", "a b/c"}, {"k+y", "=&"}}) == "k%2By=%3D%26&prefix=a%20b%2Fc");
    CHECK(net::canonical_query_string({}) == "");
    // On the wire: same encoding, request order kept.
    CHECK(net::encode_query({{"b", "1 2"}, {"a", ""}}) == "b=1%202&a=");
}

TEST_CASE("Canonical headers: trimming, folding, duplicates, order", "[net][sigv4]") {
    CHECK(net::canonical_header_value("  value1  ") == "value1");
    CHECK(net::canonical_header_value("value1\n  value2\n     value3") == "value1 value2 value3");
    CHECK(net::canonical_header_value("a \t b") == "a b");
    CHECK(net::canonical_header_value("   ") == "");

    const auto ch = net::canonical_headers({{"My-Header1", " value4 "},
                                            {"Host", "example.amazonaws.com"},
                                            {"my-header1", "value1"},
                                            {"MY-HEADER1", "value3  x"},
                                            {"User-Agent", "ua"}},
                                           {"user-agent"});
    CHECK(ch.text == "host:example.amazonaws.com\nmy-header1:value4,value1,value3 x\n");
    CHECK(ch.signed_headers == "host;my-header1");
}

TEST_CASE("Host header from the URL authority", "[net][sigv4]") {
    CHECK(net::host_header_value("https", "example.com") == "example.com");
    CHECK(net::host_header_value("https", "Example.COM:443") == "example.com");
    CHECK(net::host_header_value("http", "example.com:80") == "example.com");
    CHECK(net::host_header_value("http", "example.com:443") == "example.com:443");
    CHECK(net::host_header_value("http", "127.0.0.1:4568") == "127.0.0.1:4568");
    CHECK(net::host_header_value("https", "[::1]:9000") == "[::1]:9000");
    CHECK(net::host_header_value("https", "[::1]:443") == "[::1]");
    CHECK_THROWS_AS(net::host_header_value("https", ""), smdebug::UsageError);
    CHECK_THROWS_AS(net::host_header_value("https", "host:port"), smdebug::UsageError);
}

TEST_CASE("Timestamps", "[net][sigv4]") {
    using namespace std::chrono;
    CHECK(net::format_amz_date(sys_days{2013y / May / 24}) == "20130524T000000Z");
    CHECK(net::format_amz_date(sys_days{2015y / August / 30} + 12h + 36min + 7s + 999ms) == "20150830T123607Z");
    CHECK(net::format_amz_date(sys_days{1969y / December / 31} + 23h + 59min + 59s) == "19691231T235959Z");
}

TEST_CASE("S3 GET Object example from the S3 documentation", "[net][sigv4]") {
    net::SigningRequest req;
    req.method = "GET";
    req.host = "examplebucket.s3.amazonaws.com";
    req.path_as_sent = "/test.txt";
    req.headers = {{"Range", "bytes=0-9"}};
    req.payload_hash = std::string(net::empty_sha256_hex);
    const auto opts = net::SigningOptions::s3("us-east-1", kDocTime);

    const net::SignedRequest s = net::sign_request(req, kDocCreds, opts);
    CHECK(s.canonical_request ==
          "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
          "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
          "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(s.string_to_sign ==
          "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
          "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
    CHECK(s.signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    CHECK(s.signed_headers == "host;range;x-amz-content-sha256;x-amz-date");
    CHECK(s.authorization ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
          "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    const net::HeaderList expected_headers{{"Host", "examplebucket.s3.amazonaws.com"},
                                           {"Range", "bytes=0-9"},
                                           {"X-Amz-Date", "20130524T000000Z"},
                                           {"X-Amz-Content-SHA256", std::string(net::empty_sha256_hex)},
                                           {"Authorization", s.authorization}};
    CHECK(s.headers_to_send == expected_headers);
    CHECK(s.url == "https://examplebucket.s3.amazonaws.com/test.txt");

    const net::SigningKey key = net::derive_signing_key(kDocCreds.secret_access_key, "20130524", "us-east-1", "s3");
    CHECK(net::to_hex(key.key) == "dbb893acc010964918f1fd433add87c70e8b0db6be30c1fbeafefa5ec6ba8378");

    SECTION("a cached key gives the same signature; a key of another scope is refused") {
        net::SigningKeyCache cache;
        const net::SigningKey k1 = cache.get(kDocCreds, opts);
        CHECK(net::sign_request(req, kDocCreds, opts, k1).signature == s.signature);
        CHECK(cache.get(kDocCreds, "20130524", "us-east-1", "s3").key == k1.key);
        const net::SigningKey other = cache.get(kDocCreds, "20130525", "us-east-1", "s3");
        CHECK(other.key != k1.key);
        CHECK_THROWS_AS(net::sign_request(req, kDocCreds, opts, other), smdebug::UsageError);
    }
    SECTION("re-signing replaces the signer's own headers instead of duplicating them") {
        net::SigningRequest again = req;
        again.headers = s.headers_to_send;
        const net::SignedRequest s2 = net::sign_request(again, kDocCreds, opts);
        CHECK(s2.signature == s.signature);
        CHECK(s2.headers_to_send == s.headers_to_send);
    }
    SECTION("unsigned payload") {
        net::SigningRequest u = req;
        u.payload_hash = std::string(net::unsigned_payload);
        const net::SignedRequest su = net::sign_request(u, kDocCreds, opts);
        CHECK(su.payload_hash == "UNSIGNED-PAYLOAD");
        CHECK(su.canonical_request.find("x-amz-content-sha256:UNSIGNED-PAYLOAD\n") != std::string::npos);
    }
}

TEST_CASE("S3 PUT Object example (components mode, Date header signed)", "[net][sigv4]") {
    net::SigningRequest req;
    req.method = "PUT";
    req.host = "examplebucket.s3.amazonaws.com";
    req.path_as_sent = "/test%24file.text";
    req.payload_hash = net::sha256_hex("Welcome to Amazon S3.");
    req.headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                   {"x-amz-date", kDocTime},
                   {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                   {"x-amz-content-sha256", req.payload_hash}};
    auto opts = net::SigningOptions::s3("us-east-1", kDocTime);
    opts.header_signing = net::HeaderSigning::components;
    const net::SignedRequest s = net::sign_request(req, kDocCreds, opts);
    CHECK(s.signed_headers == "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
    CHECK(s.signature == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");

    // components mode refuses an X-Amz-Date that is not the signing time
    opts.timestamp = "20130524T000001Z";
    CHECK_THROWS_AS(net::sign_request(req, kDocCreds, opts), smdebug::UsageError);
}

TEST_CASE("Presigned URL (S3 documentation example)", "[net][sigv4]") {
    net::SigningRequest req;
    req.method = "GET";
    req.host = "examplebucket.s3.amazonaws.com";
    req.path_as_sent = "/test.txt";
    const auto opts = net::SigningOptions::s3("us-east-1", kDocTime);
    const net::PresignedRequest p = net::presign_request(req, kDocCreds, opts, std::chrono::hours(24));
    CHECK(p.payload_hash == "UNSIGNED-PAYLOAD");
    CHECK(p.signed_headers == "host");
    CHECK(p.signature == "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
    CHECK(p.url ==
          "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
          "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
          "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
          "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
    REQUIRE(p.query.size() == 6);
    CHECK(p.query.back() == net::QueryParam{"X-Amz-Signature", p.signature});
    CHECK(p.headers_to_send.empty());

    SECTION("operation parameters first; a session token is signed as a query parameter") {
        net::SigningRequest r2 = req;
        r2.query = {{"response-content-type", "text/csv;charset=UTF-8"}};
        net::Credentials temp = kDocCreds;
        temp.session_token = "tok/en+=";
        const net::PresignedRequest t = net::presign_request(r2, temp, opts, std::chrono::seconds(3600));
        CHECK(t.url.starts_with("https://examplebucket.s3.amazonaws.com/test.txt?response-content-type=text%2Fcsv%3Bcharset%3DUTF-8&X-Amz-Algorithm="));
        CHECK(t.url.find("&X-Amz-Security-Token=tok%2Fen%2B%3D&X-Amz-Signature=") != std::string::npos);
        CHECK(t.canonical_request.find("X-Amz-Security-Token=tok%2Fen%2B%3D") != std::string::npos);
        CHECK(t.signature != p.signature);
    }
    SECTION("expiry limits") {
        CHECK_THROWS_AS(net::presign_request(req, kDocCreds, opts, std::chrono::seconds(0)), smdebug::UsageError);
        CHECK_THROWS_AS(net::presign_request(req, kDocCreds, opts, std::chrono::seconds(604801)), smdebug::UsageError);
        CHECK_NOTHROW(net::presign_request(req, kDocCreds, opts, std::chrono::seconds(604800)));
    }
}

TEST_CASE("Generic (non-S3) signing: the SigV4 test suite's get-vanilla and a double-encoded path", "[net][sigv4]") {
    const net::Credentials creds{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", std::nullopt};
    net::SigningRequest req;
    req.method = "GET";
    req.host = "example.amazonaws.com";
    req.path_as_sent = "/example/..";  // normalises to "/", like get-vanilla
    const auto opts = net::SigningOptions::service_rules("us-east-1", "service", "20150830T123600Z");
    const net::SignedRequest s = net::sign_request(req, creds, opts);
    CHECK(s.signed_headers == "host;x-amz-date");
    CHECK(s.signature == "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    CHECK(s.url == "https://example.amazonaws.com/example/..");

    req.path_as_sent = "/a%20b";
    CHECK(net::sign_request(req, creds, opts).canonical_request.starts_with("GET\n/a%2520b\n"));
}

TEST_CASE("aws-chunked seed and chunk signatures (S3 documentation example)", "[net][sigv4]") {
    net::SigningRequest req;
    req.method = "PUT";
    req.host = "s3.amazonaws.com";
    req.path_as_sent = "/examplebucket/chunkObject.txt";
    req.payload_hash = std::string(net::streaming_payload);
    req.headers = {{"x-amz-date", kDocTime},
                   {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                   {"x-amz-content-sha256", std::string(net::streaming_payload)},
                   {"Content-Encoding", "aws-chunked"},
                   {"x-amz-decoded-content-length", "66560"},
                   {"Content-Length", std::to_string(net::aws_chunked_content_length(66560, 65536))}};
    CHECK(req.headers.back().second == "66824");
    auto opts = net::SigningOptions::s3("us-east-1", kDocTime);
    opts.header_signing = net::HeaderSigning::components;
    const net::SigningKey key = net::derive_signing_key(kDocCreds.secret_access_key, "20130524", "us-east-1", "s3");
    const net::SignedRequest seed = net::sign_request(req, kDocCreds, opts, key);
    CHECK(seed.signature == "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9");

    net::ChunkSigner chunks(key, opts, seed);
    CHECK(chunks.next(std::string(65536, 'a')).signature == "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648");
    CHECK(chunks.next(std::string(1024, 'a')).signature == "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497");
    const auto last = chunks.next(std::string_view());
    CHECK(last.signature == "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9");
    CHECK(last.string_to_sign.starts_with("AWS4-HMAC-SHA256-PAYLOAD\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n0055627c"));
    CHECK(net::chunk_header(65536, "ad80") == "10000;chunk-signature=ad80\r\n");
    CHECK(net::chunk_header(0, "b6c6") == "0;chunk-signature=b6c6\r\n");
}

TEST_CASE("The secret never appears in results or error messages", "[net][sigv4]") {
    const std::string secret = "SuperSecret/Key+Value=0123456789abcdefXYZ";
    const net::Credentials creds{"AKIDSECRETTEST", secret, "session-token-value"};
    const std::vector<std::string> forbidden{
        secret, net::uri_encode(secret), "AWS4" + secret,
        net::to_hex(net::derive_signing_key(secret, "20240101", "us-east-1", "s3").key)};

    auto clean = [&](const std::string& s) {
        for (const auto& f : forbidden)
            if (s.find(f) != std::string::npos) return false;
        return true;
    };
    auto clean_details = [&](const net::SigningDetails& d) {
        CHECK(clean(d.canonical_request));
        CHECK(clean(d.canonical_request_sha256));
        CHECK(clean(d.string_to_sign));
        CHECK(clean(d.credential_scope));
        CHECK(clean(d.signed_headers));
        CHECK(clean(d.payload_hash));
        CHECK(clean(d.signature));
    };
    auto clean_pairs = [&](const std::vector<std::pair<std::string, std::string>>& v) {
        for (const auto& [n, x] : v) {
            CHECK(clean(n));
            CHECK(clean(x));
        }
    };

    net::SigningRequest req;
    req.method = "PUT";
    req.host = "bucket.s3.amazonaws.com";
    req.path_as_sent = "/key";
    req.query = {{"uploads", ""}};
    req.headers = {{"Content-Type", "text/plain"}};
    auto opts = net::SigningOptions::s3("us-east-1", "20240101T000000Z");

    const net::SignedRequest s = net::sign_request(req, creds, opts);
    clean_details(s);
    CHECK(clean(s.authorization));
    CHECK(clean(s.url));
    clean_pairs(s.headers_to_send);

    const net::PresignedRequest p = net::presign_request(req, creds, opts, std::chrono::minutes(5));
    clean_details(p);
    CHECK(clean(p.url));
    clean_pairs(p.query);
    clean_pairs(p.headers_to_send);

    net::ChunkSigner cs(net::derive_signing_key(secret, "20240101", "us-east-1", "s3"), opts.timestamp,
                        s.credential_scope, s.signature);
    const auto chunk = cs.next("data");
    CHECK(clean(chunk.string_to_sign));
    CHECK(clean(chunk.signature));

    // Every error path names what is wrong, never the secret.
    auto error_is_clean = [&](auto&& fn) {
        try {
            fn();
            FAIL("expected an exception");
        } catch (const smdebug::SMDebugError& e) {
            CHECK(clean(e.what()));
        }
    };
    error_is_clean([&] {
        auto o = opts;
        o.timestamp = "2024-01-01T00:00:00Z";
        net::sign_request(req, creds, o);
    });
    error_is_clean([&] {
        auto o = opts;
        o.region = "";
        net::sign_request(req, creds, o);
    });
    error_is_clean([&] {
        auto r = req;
        r.headers.push_back({"Bad Name", "v"});
        net::sign_request(r, creds, opts);
    });
    error_is_clean([&] {
        auto c = creds;
        c.access_key_id.clear();
        net::presign_request(req, c, opts, std::chrono::minutes(5));
    });
    error_is_clean([&] {
        net::sign_request(req, creds, opts, net::derive_signing_key(secret, "20231231", "us-east-1", "s3"));
    });
    error_is_clean([&] { net::presign_request(req, creds, opts, std::chrono::seconds(-1)); });
}

}  // namespace smdebug_test_net_sigv4
