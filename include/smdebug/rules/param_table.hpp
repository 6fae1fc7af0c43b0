#pragma once
// A built-in rule's parameters written once: a table of (member, name, default as text, meaning)
// from which the Params struct gets its defaults, its parse from string parameters and the rows
// the registry prints (`smdebug rule --list`, the Python package). A default is text and is read
// exactly as a given value would be, so the printed default and the one used cannot differ.
//
//   struct MyParams {
//       static constexpr std::string_view rule_name = "My";
//       static constexpr std::string_view fires_when = "x is above threshold";
//       double threshold = rule_param_default(&MyParams::threshold);
//       static constexpr auto parameters() {
//           return std::tuple{rule_param(&MyParams::threshold, "threshold", "0.5", "largest allowed x")};
//       }
//       static MyParams parse(const std::string& rule, RuleParams& p) { return parse_rule_table<MyParams>(rule, p); }
//   };
//
// Member types and how their text is read (rules/params.hpp): double (a number), std::int64_t (an
// integer, at least the parameter's min_value), bool, std::string, std::vector<std::string> (a
// comma separated list), std::vector<double>, std::optional<double> ("" or "none": none),
// std::optional<std::int64_t> ("none": none), std::optional<Mode> ("" or "none": none; TRAIN, EVAL,
// PREDICT, GLOBAL in any case), std::pair<double, double> (two numbers min,max with min < max). An
// empty default means the member's empty value (an empty list, no value).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <smdebug/core/modes.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/rules/params.hpp>

namespace smdebug {

// One row of a rule's parameter table as the registry lists it.
struct RuleParameterInfo {
    std::string_view name;
    std::string_view default_value;  // as text; "" = none
    std::string_view meaning;
};

template <class P, class T>
struct RuleParam {
    T P::*member;
    std::string_view name;
    std::string_view default_value;
    std::string_view meaning;
    std::int64_t min_value = 0;  // integers only
};

template <class P, class T>
constexpr RuleParam<P, T> rule_param(T P::*member, std::string_view name, std::string_view default_value, std::string_view meaning,
                                     std::int64_t min_value = 0) {
    return {member, name, default_value, meaning, min_value};
}

namespace detail {

// Reads parameter `key`, which `p` holds, as a T.
template <class T>
T read_rule_value(RuleParams& p, const std::string& rule, std::string_view key, std::int64_t min_value) {
    const std::string k(key);
    if constexpr (std::is_same_v<T, double>) {
        return p.number(rule, key, 0.0);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        return p.integer(rule, key, 0, min_value);
    } else if constexpr (std::is_same_v<T, bool>) {
        return p.boolean(rule, key, false);
    } else if constexpr (std::is_same_v<T, std::string>) {
        return p.string(rule, key).value_or("");
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        return p.list(rule, key);
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
        return p.number_list(rule, key, "");
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
        return p.optional_number(rule, key);
    } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
        const auto s = p.string(rule, key).value_or("");
        if (text::to_lower(text::trim(s)) == "none") return std::nullopt;
        return p.integer(rule, key, 0, min_value);
    } else if constexpr (std::is_same_v<T, std::optional<Mode>>) {
        const auto s = p.string(rule, key).value_or("");
        const auto t = text::trim(s);
        if (t.empty() || text::to_lower(t) == "none") return std::nullopt;
        const auto parsed = parse_mode(text::to_upper(t));
        if (!parsed) throw InvalidRuleParameter(rule, k, s, "not one of TRAIN, EVAL, PREDICT, GLOBAL");
        return parsed;
    } else if constexpr (std::is_same_v<T, std::pair<double, double>>) {
        const auto v = p.number_list(rule, key, "");
        if (v.size() != 2 || !(v[0] < v[1])) throw InvalidRuleParameter(rule, k, "", "expected two numbers min,max with min < max");
        return {v[0], v[1]};
    } else {
        static_assert(!sizeof(T), "no reader for this rule parameter type (rules/param_table.hpp)");
    }
}

template <class P, class T>
T read_default(const RuleParam<P, T>& param) {
    if (param.default_value.empty()) return T{};
    RuleParams d;
    d.set(std::string(param.name), std::string(param.default_value));
    return read_rule_value<T>(d, std::string(P::rule_name), param.name, param.min_value);
}

template <class P, class T>
void read_table_row(const std::string& rule, RuleParams& p, P& v, const RuleParam<P, T>& param) {
    if (p.contains(param.name)) {
        v.*(param.member) = read_rule_value<T>(p, rule, param.name, param.min_value);
    } else {
        (void)p.string(rule, param.name);  // known; absent: the default (from P's member initializer)
    }
}

}  // namespace detail

// The default of member `member` of P: its table row's default text, read as a given value would
// be. P's member initializers call it (`double threshold = rule_param_default(&P::threshold);`),
// so P stays an aggregate (designated initializers work) and the default is written once.
template <class P, class T>
T rule_param_default(T P::*member) {
    std::optional<T> out;
    std::apply(
        [&](const auto&... param) {
            (
                [&](const auto& row) {
                    if constexpr (std::is_same_v<decltype(row.member), T P::*>)
                        if (!out && row.member == member) out = detail::read_default(row);
                }(param),
                ...);
        },
        P::parameters());
    if (!out) throw UsageError(std::string(P::rule_name) + ": a parameter member has no row in its parameter table");
    return std::move(*out);
}

// Parses string parameters with P's table: every row in order, a given value or else the default.
// Then P::after_parse(rule, p, v) when P has one (parameters read only in some cases).
template <class P>
P parse_rule_table(const std::string& rule, RuleParams& p) {
    P v{};
    std::apply([&](const auto&... param) { (detail::read_table_row(rule, p, v, param), ...); }, P::parameters());
    if constexpr (requires { P::after_parse(rule, p, v); }) P::after_parse(rule, p, v);
    return v;
}

// The registry's rows for P's table.
template <class P>
std::vector<RuleParameterInfo> rule_parameter_infos() {
    std::vector<RuleParameterInfo> out;
    std::apply([&](const auto&... param) { (out.push_back({param.name, param.default_value, param.meaning}), ...); }, P::parameters());
    return out;
}

// P::needs_other_trial (compares with another trial) and P::step_local (the answer at a step
// depends only on that step), false when P does not say.
template <class P>
constexpr bool rule_needs_other_trial() {
    if constexpr (requires { P::needs_other_trial; }) return P::needs_other_trial;
    else return false;
}
template <class P>
constexpr bool rule_is_step_local() {
    if constexpr (requires { P::step_local; }) return P::step_local;
    else return false;
}

}  // namespace smdebug
