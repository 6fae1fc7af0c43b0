#pragma once
// Errors of the transport layer (HTTP client, XML reader, AWS configuration, S3 client).
// Every message names the URL, bucket/key or file involved and never a secret.
#include <string>

#include <smdebug/core/errors.hpp>

namespace smdebug {

#define SMDEBUG_DEFINE_NET_ERROR(Name, Base)                                     \
    class Name : public Base {                                                   \
    public:                                                                      \
        using Base::Base;                                                        \
        const char* python_name() const noexcept override { return #Name; }      \
    }

SMDEBUG_DEFINE_NET_ERROR(NetworkError, StorageError);         // any transport failure (names the URL)
SMDEBUG_DEFINE_NET_ERROR(ConnectionError, NetworkError);      // resolve/connect failed, reset, closed early
SMDEBUG_DEFINE_NET_ERROR(NetworkTimeout, NetworkError);       // connect or read timed out
SMDEBUG_DEFINE_NET_ERROR(HttpProtocolError, NetworkError);    // malformed status line, header, chunk
SMDEBUG_DEFINE_NET_ERROR(ResponseTooLarge, HttpProtocolError);// a header or body exceeds the configured bound
SMDEBUG_DEFINE_NET_ERROR(TlsError, NetworkError);             // handshake or certificate verification failed
SMDEBUG_DEFINE_NET_ERROR(TruncatedResponse, TruncatedData);   // fewer body bytes than announced
SMDEBUG_DEFINE_NET_ERROR(XmlError, FormatError);              // malformed or hostile XML
SMDEBUG_DEFINE_NET_ERROR(AwsConfigError, SMDebugCustomerError); // bad URL, profile, endpoint setting
SMDEBUG_DEFINE_NET_ERROR(CredentialsError, StorageError);     // no credentials, or a provider failed

#undef SMDEBUG_DEFINE_NET_ERROR

// An error response from S3 (or any S3-compatible server), parsed from its XML error document.
class S3Error : public StorageError {
public:
    S3Error(std::string message, int http_status, std::string code, std::string request_id,
            std::string bucket, std::string key)
        : StorageError(std::move(message)), http_status(http_status), code(std::move(code)),
          request_id(std::move(request_id)), bucket(std::move(bucket)), key(std::move(key)) {}
    const char* python_name() const noexcept override { return "S3Error"; }

    int http_status;
    std::string code;        // "NoSuchKey", "SlowDown", ... (empty when the body had none)
    std::string request_id;  // x-amz-request-id header, or the RequestId element
    std::string bucket;
    std::string key;
};

}  // namespace smdebug
