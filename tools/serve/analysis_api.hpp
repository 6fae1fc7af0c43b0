#pragma once
// The analysis endpoints of `smdebug serve` (docs/serve.md, docs/diagnose.md): the same JSON as
// `smdebug diagnose --json` and `smdebug diff --json`, computed by the library
// (smdebug/analysis/, through analysis_json.hpp), kept per run while the run's generation (and,
// for diff, the other run's) stays the same.
//
//   GET /api/v1/diagnose?run=R
//   GET /api/v1/diff?run=R&other=O[&rtol=X][&atol=Y]
#include <cmath>
#include <functional>
#include <mutex>
#include <string>

#include <cstdlib>

#include "analysis_json.hpp"
#include "query_string.hpp"
#include "run_registry.hpp"

namespace serve::api_detail {

inline std::string diagnose(Run& r) {
    std::lock_guard lock(r.mutex);
    if (!r.trial) throw NotFound("run '" + r.name + "' has not been opened yet");
    const std::string key = std::string("diagnose", 8) + '\0';
    if (const auto found = r.answers.find(key); found != r.answers.end() && found->second.first == r.generation) return found->second.second;
    auto out = cli::diagnose_json(*r.trial);
    r.answers[key] = {r.generation, out};
    return out;
}

inline double tolerance_param(const QueryParams& q, const char* name) {
    const auto v = q.get(name);
    if (!v || v->empty()) return 0;
    char* end = nullptr;
    const double x = std::strtod(v->c_str(), &end);
    if (*end != '\0' || !std::isfinite(x) || x < 0) throw BadParameter(std::string("parameter '") + name + "' must be a number >= 0, not '" + *v + "'");
    return x;
}

inline std::string diff(RunRegistry& runs, Run& a, const QueryParams& q) {
    const auto other = q.required("other");
    auto* b = runs.find(other);
    if (!b) throw NotFound("unknown run '" + other + "'");
    if (b == &a) throw BadParameter("parameter 'other' names the run itself");
    const double rtol = tolerance_param(q, "rtol"), atol = tolerance_param(q, "atol");
    const bool a_first = std::less<Run*>()(&a, b);  // two runs locked in one order: by address
    std::lock_guard first((a_first ? a : *b).mutex);
    std::lock_guard second((a_first ? *b : a).mutex);
    if (!a.trial || !b->trial) throw NotFound("run '" + (a.trial ? b->name : a.name) + "' has not been opened yet");
    const std::string key = "diff" + std::string(1, '\0') + other + '\0' + std::to_string(b->generation) + '\0' + std::to_string(rtol) + '\0' +
                            std::to_string(atol);
    if (const auto found = a.answers.find(key); found != a.answers.end() && found->second.first == a.generation) return found->second.second;
    auto out = cli::diff_json(*a.trial, *b->trial, rtol, atol);
    a.answers[key] = {a.generation, out};
    return out;
}

}  // namespace serve::api_detail
