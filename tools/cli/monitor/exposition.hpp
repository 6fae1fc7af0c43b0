#pragma once
// The metrics of `smdebug monitor` and their text exposition, in the two formats a scraper asks
// for: OpenMetrics 1.0 (`application/openmetrics-text`, ends with `# EOF`) and the Prometheus text
// format 0.0.4 (`text/plain; version=0.0.4`, the default).
//
//   smdebug_last_step{mode}                   gauge   global step of the last processed step of each mode
//   smdebug_rule_fired_total{rule}            counter steps at which the rule fired
//   smdebug_rule_last_fired_step{rule}        gauge   global step of its last firing (absent before one)
//   smdebug_steps_behind                      gauge   complete steps the job has written past the last processed one
//   smdebug_training_ended                    gauge   1 once the job has ended, else 0
//   smdebug_tensor{tensor,reduction,worker}   gauge   the --metric reductions at the last processed step
//
// Escaping (both formats): a label value escapes backslash, double quote and newline (`\\`, `\"`,
// `\n`); a byte that is not valid UTF-8 becomes the text `\xNN` (its backslash escaped, so a label
// is always valid UTF-8). HELP text escapes backslash and newline (and, in OpenMetrics, the double
// quote). Metric and label names are the fixed ones above (trial text only ever goes into label
// values). Values: shortest round-trip decimals, `NaN`, `+Inf`, `-Inf`.
// Counters: the family is `smdebug_rule_fired` in OpenMetrics (samples `..._total`), and
// `smdebug_rule_fired_total` in the Prometheus format, as the Prometheus client libraries write them.
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <smdebug/core/text.hpp>

#include "../escape.hpp"
#include "../format.hpp"

namespace cli::monitor {

// What the monitor has seen, copied out under the monitor's mutex by each scrape.
struct MetricsSnapshot {
    std::map<std::string, std::int64_t> last_step;  // mode name -> global step
    struct RuleState {
        std::string label;  // the rule's name (its full --rule text when the same rule is given twice)
        std::uint64_t fired = 0;
        std::optional<std::int64_t> last_fired_step;
    };
    std::vector<RuleState> rules;
    std::int64_t steps_behind = 0;
    bool training_ended = false;
    // (tensor, reduction, worker) -> value
    std::map<std::tuple<std::string, std::string, std::string>, double> tensors;
};

enum class Exposition { prometheus, openmetrics };

// OpenMetrics when the Accept header names application/openmetrics-text (case-insensitively),
// else the Prometheus text format.
inline Exposition negotiate(std::string_view accept) {
    return smdebug::text::to_lower(accept).find("application/openmetrics-text") != std::string::npos ? Exposition::openmetrics
                                                                                                    : Exposition::prometheus;
}

inline std::string_view content_type(Exposition e) {
    return e == Exposition::openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                        : "text/plain; version=0.0.4; charset=utf-8";
}

namespace detail {

// Appends s with `\`, newline (and `"` when quote) escaped; bytes that are not valid UTF-8 as `\\xNN`.
inline void append_escaped(std::string& out, std::string_view s, bool quote) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0) {
            static constexpr char hex[] = "0123456789abcdef";
            const auto c = static_cast<unsigned char>(s[i]);
            out += "\\\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
            ++i;
            continue;
        }
        const char c = s[i];
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '"' && quote) out += "\\\"";
        else out.append(s.substr(i, n));
        i += n;
    }
}

}  // namespace detail

inline std::string escape_label_value(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    detail::append_escaped(out, s, true);
    return out;
}

inline std::string escape_help(std::string_view s, Exposition e) {
    std::string out;
    out.reserve(s.size());
    detail::append_escaped(out, s, e == Exposition::openmetrics);
    return out;
}

inline std::string sample_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v < 0 ? "-Inf" : "+Inf";
    return format_double(v);
}

// The whole exposition of `m` in format `e`.
inline std::string render(const MetricsSnapshot& m, Exposition e) {
    std::string out;
    const bool om = e == Exposition::openmetrics;
    auto family = [&](std::string_view name, std::string_view type, std::string_view help) {
        out += "# HELP ";
        out += name;
        out += ' ';
        out += escape_help(help, e);
        out += "\n# TYPE ";
        out += name;
        out += ' ';
        out += type;
        out += '\n';
    };
    using Labels = std::vector<std::pair<std::string_view, std::string_view>>;
    auto sample = [&](std::string_view name, const Labels& labels, const std::string& value) {
        out += name;
        if (!labels.empty()) {
            out += '{';
            for (std::size_t i = 0; i < labels.size(); ++i) {
                if (i) out += ',';
                out += labels[i].first;
                out += "=\"";
                out += escape_label_value(labels[i].second);
                out += '"';
            }
            out += '}';
        }
        out += ' ';
        out += value;
        out += '\n';
    };

    family("smdebug_last_step", "gauge", "Global step of the last step the monitor processed, by mode.");
    for (const auto& [mode, step] : m.last_step) sample("smdebug_last_step", {{"mode", mode}}, std::to_string(step));

    family(om ? "smdebug_rule_fired" : "smdebug_rule_fired_total", "counter", "Steps at which the rule fired.");
    for (const auto& r : m.rules) sample("smdebug_rule_fired_total", {{"rule", r.label}}, std::to_string(r.fired));

    family("smdebug_rule_last_fired_step", "gauge", "Global step at which the rule last fired.");
    for (const auto& r : m.rules)
        if (r.last_fired_step) sample("smdebug_rule_last_fired_step", {{"rule", r.label}}, std::to_string(*r.last_fired_step));

    family("smdebug_steps_behind", "gauge", "Complete steps written by the job and not processed yet.");
    sample("smdebug_steps_behind", {}, std::to_string(m.steps_behind));

    family("smdebug_training_ended", "gauge", "1 once the job has ended (its end marker was seen), else 0.");
    sample("smdebug_training_ended", {}, m.training_ended ? "1" : "0");

    family("smdebug_tensor", "gauge", "A reduction of a tensor at the last processed step that saved it.");
    for (const auto& [key, value] : m.tensors) {
        const auto& [tensor, reduction, worker] = key;
        sample("smdebug_tensor", {{"tensor", tensor}, {"reduction", reduction}, {"worker", worker}}, sample_value(value));
    }
    if (om) out += "# EOF\n";
    return out;
}

}  // namespace cli::monitor
