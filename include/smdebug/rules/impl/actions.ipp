#pragma once
// The definitions of rules/actions/actions.hpp that parse the reference's action string (JSON).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include <smdebug/core/errors.hpp>
#include <smdebug/core/text.hpp>
#include <smdebug/rules/actions/actions.hpp>
#if !SMDEBUG_HEADER_ONLY && !defined(SMDEBUG_SOURCE)
#error "this file defines functions compiled once by <smdebug/src.hpp>: in separate mode include it only there"
#endif

namespace smdebug {

namespace detail {
// A string value by case-insensitive key (D18).
SMDEBUG_INLINE std::optional<std::string> action_string_field(const boost::json::object& o, std::string_view key) {
    for (const auto& kv : o)
        if (text::to_lower(kv.key()) == key && kv.value().is_string()) return std::string(kv.value().as_string());
    return std::nullopt;
}
}  // namespace detail

SMDEBUG_INLINE Actions Actions::parse(std::string_view action_str, const std::string& rule_name, const Factories& f) {
    Actions out;
    const std::string_view json_text = text::trim(action_str);
    if (json_text.empty()) return out;
    boost::system::error_code ec;
    auto v = boost::json::parse(json_text, ec);
    if (ec) throw InvalidRuleParameter(rule_name, "actions", std::string(json_text), "invalid JSON (" + ec.message() + ")");
    std::vector<const boost::json::object*> list;
    if (v.is_object()) list.push_back(&v.as_object());
    else if (v.is_array()) {
        for (const auto& e : v.as_array())
            if (e.is_object()) list.push_back(&e.as_object());
            else if (f.log) f.log("info", "action " + boost::json::serialize(e) + " is not an object: skipped");
    } else {
        if (f.log) f.log("info", "action string is neither an object nor a list: no actions");
        return out;
    }
    for (const auto* obj : list) {
        const auto name = detail::action_string_field(*obj, "name");
        if (!name) continue;
        const auto lname = text::to_lower(*name);
        if (lname == "stoptraining") {
            const auto prefix = detail::action_string_field(*obj, "training_job_prefix");
            if (!prefix) { if (f.log) f.log("info", "action stoptraining needs training_job_prefix: skipped"); continue; }
            if (!f.stop_training) { if (f.log) f.log("info", "action stoptraining: no AWS client configured: skipped"); continue; }
            out.add("stoptraining " + *prefix, f.stop_training(rule_name, *prefix));
        } else if (lname == "sms" || lname == "email") {
            const auto endpoint = detail::action_string_field(*obj, "endpoint");
            if (!endpoint) { if (f.log) f.log("info", "action " + lname + " needs endpoint: skipped"); continue; }
            if (!f.message) { if (f.log) f.log("info", "action " + lname + ": no AWS client configured: skipped"); continue; }
            out.add(lname + " " + *endpoint, f.message(rule_name, lname, *endpoint));
        } else if (f.log) {
            f.log("info", "action " + *name + " not supported (allowed: stoptraining, sms, email)");
        }
    }
    return out;
}

}  // namespace smdebug
