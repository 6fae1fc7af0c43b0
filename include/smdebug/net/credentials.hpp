#pragma once
// AWS credentials: what the providers (net/aws_credentials.hpp) produce and SigV4 (net/detail/sigv4.hpp)
// signs with. `secret_access_key` is only ever used to derive signing keys; nothing here is ever
// logged or put in a message.
#include <chrono>
#include <optional>
#include <string>

namespace smdebug::net {

struct AwsCredentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::optional<std::string> session_token;  // temporary credentials (STS); none (or empty) for long-term keys
    std::optional<std::chrono::system_clock::time_point> expiration;
    std::string source;  // "environment", "profile default", "container", "imds" (no secrets)

    bool has_session_token() const noexcept { return session_token && !session_token->empty(); }
};

// The name SigV4 uses.
using Credentials = AwsCredentials;

// Where a client gets its credentials (the providers: net/aws_credentials.hpp).
class CredentialsProvider {
public:
    virtual ~CredentialsProvider() = default;
    // Current credentials; throws CredentialsError when none can be had.
    virtual AwsCredentials get() = 0;
};

}  // namespace smdebug::net
