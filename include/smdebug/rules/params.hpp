#pragma once
// Rule parameters given as strings (SageMaker passes every rule parameter as a string; lists are
// comma separated), their parsing, and the typed errors for a bad configuration.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/text.hpp>

namespace smdebug {

// No built-in rule has this name.
class UnknownRule : public SMDebugValueError {
public:
    explicit UnknownRule(std::string name, const std::string& known)
        : SMDebugValueError("unknown rule '" + name + "' (built-in rules: " + known + ")"), rule(std::move(name)) {}
    const char* python_name() const noexcept override { return "UnknownRule"; }
    std::string rule;
};

// The rule has no parameter of this name.
class UnknownRuleParameter : public SMDebugValueError {
public:
    UnknownRuleParameter(std::string rule, std::string parameter, const std::string& known)
        : SMDebugValueError("rule " + rule + " has no parameter '" + parameter + "' (parameters: " + known + ")"),
          rule(std::move(rule)), parameter(std::move(parameter)) {}
    const char* python_name() const noexcept override { return "UnknownRuleParameter"; }
    std::string rule, parameter;
};

// A parameter's value is malformed or out of range, or a required parameter is missing.
class InvalidRuleParameter : public SMDebugValueError {
public:
    InvalidRuleParameter(std::string rule, std::string parameter, std::string value, const std::string& why)
        : SMDebugValueError("rule " + rule + ": parameter " + parameter + "='" + value + "': " + why),
          rule(std::move(rule)), parameter(std::move(parameter)), value(std::move(value)) {}
    const char* python_name() const noexcept override { return "InvalidRuleParameter"; }
    std::string rule, parameter, value;
};

// "a, b,c" -> {"a","b","c"}; blanks around items are dropped, and so are empty items.
inline std::vector<std::string> split_list(std::string_view s) {
    std::vector<std::string> out;
    text::for_each_item(s, ',', text::whitespace, [&](std::string_view item) {
        if (!item.empty()) out.emplace_back(item);
    });
    return out;
}

// The string parameters of one rule, as given (keys are case-insensitive). Each parameter the rule
// knows is taken once with one of the typed getters; finish() then rejects whatever is left.
class RuleParams {
public:
    RuleParams() = default;
    RuleParams(std::initializer_list<std::pair<const std::string, std::string>> init) {
        for (const auto& [k, v] : init) set(k, v);
    }

    void set(std::string key, std::string value) { values_[text::to_lower(text::trim(key))] = std::move(value); }
    // "key=value"; UsageError when there is no '='.
    void set_assignment(std::string_view kv) {
        const auto eq = kv.find('=');
        if (eq == std::string_view::npos || eq == 0) throw UsageError("rule parameter '" + std::string(kv) + "' is not key=value");
        set(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
    bool contains(std::string_view key) const { return values_.contains(text::to_lower(key)); }
    const std::map<std::string, std::string>& values() const noexcept { return values_; }

    // Typed getters, for rule `rule`. Each records the parameter as known.
    std::optional<std::string> string(const std::string& /*rule*/, std::string_view key) {
        known_.insert(std::string(key));
        auto it = values_.find(std::string(key));
        if (it == values_.end()) return std::nullopt;
        return it->second;
    }
    double number(const std::string& rule, std::string_view key, double fallback) {
        auto s = string(rule, key);
        if (!s) return fallback;
        return parse_double(rule, key, *s);
    }
    std::optional<double> optional_number(const std::string& rule, std::string_view key) {
        auto s = string(rule, key);
        if (!s || text::to_lower(text::trim(*s)) == "none" || text::trim(*s).empty()) return std::nullopt;
        return parse_double(rule, key, *s);
    }
    std::int64_t integer(const std::string& rule, std::string_view key, std::int64_t fallback, std::int64_t min_value = 0) {
        auto s = string(rule, key);
        if (!s) return fallback;
        const std::string_view t = text::trim(*s);
        std::int64_t v = 0;
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || p != t.data() + t.size()) throw InvalidRuleParameter(rule, std::string(key), *s, "not an integer");
        if (v < min_value) throw InvalidRuleParameter(rule, std::string(key), *s, "must be at least " + std::to_string(min_value));
        return v;
    }
    bool boolean(const std::string& rule, std::string_view key, bool fallback) {
        auto s = string(rule, key);
        if (!s) return fallback;
        const auto t = text::to_lower(text::trim(*s));
        if (t == "true" || t == "1" || t == "yes") return true;
        if (t == "false" || t == "0" || t == "no") return false;
        throw InvalidRuleParameter(rule, std::string(key), *s, "not a boolean (true/false)");
    }
    std::vector<std::string> list(const std::string& rule, std::string_view key, std::string_view fallback = {}) {
        auto s = string(rule, key);
        return split_list(s ? std::string_view(*s) : fallback);
    }
    std::vector<double> number_list(const std::string& rule, std::string_view key, std::string_view fallback) {
        std::vector<double> out;
        auto s = string(rule, key);
        for (const auto& item : split_list(s ? std::string_view(*s) : fallback)) out.push_back(parse_double(rule, key, item));
        return out;
    }

    // Rejects any parameter the rule did not ask for.
    void finish(const std::string& rule) const {
        for (const auto& [k, v] : values_)
            if (!known_.contains(k)) {
                std::string names;
                for (const auto& n : known_) names += (names.empty() ? "" : ", ") + n;
                throw UnknownRuleParameter(rule, k, names.empty() ? "none" : names);
            }
    }

private:
    static double parse_double(const std::string& rule, std::string_view key, const std::string& s) {
        const std::string_view t = text::trim(s);
        double v = 0;
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (t.empty() || ec != std::errc() || p != t.data() + t.size() || std::isnan(v))
            throw InvalidRuleParameter(rule, std::string(key), s, "not a number");
        return v;
    }

    std::map<std::string, std::string> values_;
    std::set<std::string> known_;
};

}  // namespace smdebug
