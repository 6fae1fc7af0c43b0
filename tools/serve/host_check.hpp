#pragma once
// The DNS-rebinding guard of `smdebug serve`: a request is answered only when its Host header
// names the address the server is bound to, or `localhost` (each with or without the port).
// A page on another site that has made its own name resolve to 127.0.0.1 sends its own name as
// Host, and is refused (403) before anything is read.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <smdebug/core/text.hpp>

namespace serve {

// Host "name", "name:port", "[v6]" or "[v6]:port" → the name (without brackets) and whether the
// port, when present, is `port`. False when the header does not parse.
inline bool host_matches(std::string_view host, std::string_view allowed, std::uint16_t port) {
    std::string_view name = host, port_text;
    if (host.starts_with('[')) {
        const auto close = host.find(']');
        if (close == std::string_view::npos) return false;
        name = host.substr(1, close - 1);
        const auto rest = host.substr(close + 1);
        if (!rest.empty()) {
            if (rest[0] != ':') return false;
            port_text = rest.substr(1);
        }
    } else if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
        if (host.find(':') != colon) return false;  // an IPv6 address without brackets
        name = host.substr(0, colon);
        port_text = host.substr(colon + 1);
    }
    if (!port_text.empty() || host.ends_with(':')) {
        if (port_text != std::to_string(port)) return false;
    }
    return smdebug::text::iequals(name, allowed);
}

// Whether a request with this Host header may be answered by a server bound to `bound` (an IP
// address as given to --host) on `port`; `also` are the names --trust-host adds (a server bound
// to 0.0.0.0 for other machines is reached by a name of this machine). A missing Host is refused.
inline bool host_allowed(std::string_view host, std::string_view bound, std::uint16_t port, std::span<const std::string> also = {}) {
    if (host.empty()) return false;
    if (host_matches(host, "localhost", port) || host_matches(host, bound, port)) return true;
    for (const auto& name : also)
        if (host_matches(host, name, port)) return true;
    return false;
}

}  // namespace serve
