#pragma once
// The query string of an API request, decoded: `a=1&b=x%20y` → {a: "1", b: "x y"} (`+` is a
// space). A malformed %-escape is a BadParameter naming the parameter.
#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/net/detail/url.hpp>

namespace serve {

// A request the API refuses as malformed: 400, with this message.
struct BadParameter : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A run, tensor, worker or rule the server does not have: 404, with this message.
struct NotFound : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class QueryParams {
public:
    QueryParams() = default;
    explicit QueryParams(std::string_view query) {
        while (!query.empty()) {
            const auto amp = query.find('&');
            const auto piece = query.substr(0, amp);
            query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
            if (piece.empty()) continue;
            const auto eq = piece.find('=');
            try {
                auto key = smdebug::net::percent_decode(piece.substr(0, eq), /*plus_as_space=*/true);
                auto value = smdebug::net::percent_decode(eq == std::string_view::npos ? std::string_view{} : piece.substr(eq + 1), true);
                params_.emplace_back(std::move(key), std::move(value));
            } catch (const smdebug::FormatError&) {
                throw BadParameter("parameter '" + std::string(piece.substr(0, eq)) + "': malformed %-escape");
            }
        }
    }

    // The last value given for `key`.
    std::optional<std::string> get(std::string_view key) const {
        std::optional<std::string> out;
        for (const auto& [k, v] : params_)
            if (k == key) out = v;
        return out;
    }
    std::string required(std::string_view key) const {
        auto v = get(key);
        if (!v || v->empty()) throw BadParameter("parameter '" + std::string(key) + "' is required");
        return *v;
    }
    // An integer in [lo, hi], or nullopt when absent.
    std::optional<std::int64_t> integer(std::string_view key, std::int64_t lo, std::int64_t hi) const {
        const auto v = get(key);
        if (!v) return std::nullopt;
        std::int64_t n = 0;
        const auto r = std::from_chars(v->data(), v->data() + v->size(), n);
        if (r.ec != std::errc() || r.ptr != v->data() + v->size() || n < lo || n > hi)
            throw BadParameter("parameter '" + std::string(key) + "' must be an integer from " + std::to_string(lo) + " to " +
                               std::to_string(hi) + ", not '" + *v + "'");
        return n;
    }
    // 0/1/false/true; `fallback` when absent.
    bool flag(std::string_view key, bool fallback = false) const {
        const auto v = get(key);
        if (!v) return fallback;
        if (*v == "1" || *v == "true") return true;
        if (*v == "0" || *v == "false" || v->empty()) return false;
        throw BadParameter("parameter '" + std::string(key) + "' must be 0 or 1, not '" + *v + "'");
    }
    const std::vector<std::pair<std::string, std::string>>& all() const noexcept { return params_; }

private:
    std::vector<std::pair<std::string, std::string>> params_;
};

}  // namespace serve
