#pragma once
// Hashing primitives for the transport layer: SHA-256 (one-shot and incremental), HMAC-SHA256 and
// lower-case hex, on OpenSSL 3's EVP interfaces (EVP_MD / EVP_MAC; no deprecated SHA256_* or
// HMAC_CTX_* calls).
//
// Error messages never include key material or input data: only the OpenSSL call that failed.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <smdebug/core/errors.hpp>

namespace smdebug::net {

inline constexpr std::size_t sha256_size = 32;
using Sha256Digest = std::array<std::uint8_t, sha256_size>;

/// Hex SHA-256 of the empty string (the payload hash of a request without a body).
inline constexpr std::string_view empty_sha256_hex =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

namespace detail::crypto {

[[noreturn]] inline void throw_openssl(const char* what) {
    throw SMDebugRuntimeError(std::string("OpenSSL call failed: ") + what);
}

inline std::span<const std::uint8_t> as_bytes(std::string_view s) noexcept {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The HMAC implementation, fetched once per process (EVP_MAC objects are reference counted and
// safe to share between threads once fetched).
inline EVP_MAC* hmac_algorithm() {
    static EVP_MAC* const mac = [] {
        EVP_MAC* m = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
        if (!m) throw_openssl("EVP_MAC_fetch(HMAC)");
        return m;
    }();
    return mac;
}

}  // namespace detail::crypto

/// Overwrite memory that held key material (not optimised away).
inline void secure_clear(void* p, std::size_t n) noexcept {
    if (p && n) OPENSSL_cleanse(p, n);
}
inline void secure_clear(std::string& s) noexcept {
    secure_clear(s.data(), s.size());
    s.clear();
}

/// Lower-case hexadecimal of bytes.
inline std::string to_hex(std::span<const std::uint8_t> bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.resize(bytes.size() * 2);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0x0f];
    }
    return out;
}
inline std::string to_hex(std::string_view bytes) { return to_hex(detail::crypto::as_bytes(bytes)); }

/// Incremental SHA-256. Movable, not copyable. After finish() the object may be reset() and reused.
class Sha256 {
public:
    Sha256() : ctx_(EVP_MD_CTX_new()) {
        if (!ctx_) detail::crypto::throw_openssl("EVP_MD_CTX_new");
        reset();
    }
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    Sha256(Sha256&& o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
    Sha256& operator=(Sha256&& o) noexcept {
        if (this != &o) {
            EVP_MD_CTX_free(ctx_);
            ctx_ = std::exchange(o.ctx_, nullptr);
        }
        return *this;
    }
    ~Sha256() { EVP_MD_CTX_free(ctx_); }

    void reset() {
        if (!ctx_) detail::crypto::throw_openssl("Sha256 used after move");
        if (EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) detail::crypto::throw_openssl("EVP_DigestInit_ex");
    }
    Sha256& update(const void* data, std::size_t n) {
        if (n == 0) return *this;
        if (!ctx_ || EVP_DigestUpdate(ctx_, data, n) != 1) detail::crypto::throw_openssl("EVP_DigestUpdate");
        return *this;
    }
    Sha256& update(std::string_view s) { return update(s.data(), s.size()); }
    Sha256& update(std::span<const std::uint8_t> s) { return update(s.data(), s.size()); }
    Sha256& update(std::span<const std::byte> s) { return update(s.data(), s.size()); }

    Sha256Digest finish() {
        Sha256Digest out{};
        unsigned int len = 0;
        if (!ctx_ || EVP_DigestFinal_ex(ctx_, out.data(), &len) != 1 || len != out.size())
            detail::crypto::throw_openssl("EVP_DigestFinal_ex");
        return out;
    }
    std::string finish_hex() {
        auto d = finish();
        return to_hex(d);
    }

private:
    EVP_MD_CTX* ctx_;
};

/// One-shot SHA-256.
inline Sha256Digest sha256(std::span<const std::uint8_t> data) {
    Sha256Digest out{};
    unsigned int len = 0;
    if (EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr) != 1 ||
        len != out.size())
        detail::crypto::throw_openssl("EVP_Digest(SHA-256)");
    return out;
}
inline Sha256Digest sha256(std::string_view data) { return sha256(detail::crypto::as_bytes(data)); }
inline Sha256Digest sha256(std::span<const std::byte> data) {
    return sha256(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
}
inline std::string sha256_hex(std::string_view data) { return to_hex(sha256(data)); }
inline std::string sha256_hex(std::span<const std::uint8_t> data) { return to_hex(sha256(data)); }
inline std::string sha256_hex(std::span<const std::byte> data) { return to_hex(sha256(data)); }

/// HMAC-SHA256(key, data).
inline Sha256Digest hmac_sha256(std::span<const std::uint8_t> key, std::span<const std::uint8_t> data) {
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(detail::crypto::hmac_algorithm());
    if (!ctx) detail::crypto::throw_openssl("EVP_MAC_CTX_new");
    struct Guard {
        EVP_MAC_CTX* c;
        ~Guard() { EVP_MAC_CTX_free(c); }
    } guard{ctx};
    char digest_name[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
                           OSSL_PARAM_construct_end()};
    // OpenSSL rejects a null key pointer even for an empty key.
    static const unsigned char empty_key = 0;
    const unsigned char* key_ptr = key.empty() ? &empty_key : key.data();
    if (EVP_MAC_init(ctx, key_ptr, key.size(), params) != 1) detail::crypto::throw_openssl("EVP_MAC_init(HMAC-SHA256)");
    if (!data.empty() && EVP_MAC_update(ctx, data.data(), data.size()) != 1)
        detail::crypto::throw_openssl("EVP_MAC_update");
    Sha256Digest out{};
    std::size_t len = 0;
    if (EVP_MAC_final(ctx, out.data(), &len, out.size()) != 1 || len != out.size())
        detail::crypto::throw_openssl("EVP_MAC_final");
    return out;
}
inline Sha256Digest hmac_sha256(std::span<const std::uint8_t> key, std::string_view data) {
    return hmac_sha256(key, detail::crypto::as_bytes(data));
}
inline Sha256Digest hmac_sha256(std::string_view key, std::string_view data) {
    return hmac_sha256(detail::crypto::as_bytes(key), detail::crypto::as_bytes(data));
}

}  // namespace smdebug::net
