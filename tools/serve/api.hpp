#pragma once
// The JSON API of `smdebug serve` (docs/serve.md): each endpoint turns the library's answers into
// JSON; nothing is computed here that the library computes (values are Tensor::reduction_value's,
// through Trial::read; findings are invoke_rule's, as `smdebug rule` runs them).
//
//   GET /api/v1/runs                  the runs' status snapshots (run_registry.hpp)
//   GET /api/v1/tensors?run=R          names, collections, shape and dtype
//   GET /api/v1/scalars?run=R&tensor=T[&reduction=mean][&abs=1][&mode=TRAIN][&worker=W][&max_points=N]
//   GET /api/v1/histogram?run=R&tensor=T&step=S[&mode=M][&worker=W][&bins=N]
//   GET /api/v1/rules?run=R&rule=NAME[&KEY=VALUE...]
//   GET /api/v1/builtin_rules         the built-in rules and their parameters (`smdebug rules`)
//   GET /api/v1/diagnose?run=R          `smdebug diagnose --json` (analysis_api.hpp)
//   GET /api/v1/diff?run=R&other=O[&rtol=X][&atol=Y]   `smdebug diff --json` of runs R and O
//
// Errors: BadParameter → 400, NotFound → 404, a request past its time limit → 503, each
// {"error": "..."}. Work per request is bounded: max_points ≤ 100,000, bins ≤ 1,000, and reads
// stop at the deadline.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/rules/registry.hpp>

#include "../cli/format.hpp"
#include "../cli/plot/histogram.hpp"
#include "../cli/rule_spec.hpp"
#include "analysis_api.hpp"
#include "json_text.hpp"
#include "query_string.hpp"
#include "rule_findings.hpp"
#include "run_registry.hpp"

namespace serve {

inline constexpr std::int64_t max_points_cap = 100000;
inline constexpr std::int64_t bins_cap = 1000;
inline constexpr std::size_t cached_points_cap = 8'000'000;  // per run; past it the cache starts afresh

struct TimedOut : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct Deadline {
    std::chrono::steady_clock::time_point at;
    void check(std::string_view what) const {
        if (std::chrono::steady_clock::now() > at) throw TimedOut(std::string(what) + " took longer than the time limit (--time-limit)");
    }
};

struct ApiResponse {
    int status = 200;
    std::string body;
};

namespace api_detail {

inline Run& find_run(RunRegistry& runs, const QueryParams& q) {
    const auto name = q.required("run");
    auto* r = runs.find(name);
    if (!r) throw NotFound("unknown run '" + name + "'");
    return *r;
}

inline std::optional<smdebug::Mode> mode_param(const QueryParams& q) {
    const auto m = q.get("mode");
    if (!m || m->empty()) return std::nullopt;
    const auto mode = smdebug::parse_mode(smdebug::text::to_upper(*m));
    if (!mode) throw BadParameter("parameter 'mode' must be TRAIN, EVAL, PREDICT or GLOBAL, not '" + *m + "'");
    return mode;
}

inline smdebug::Tensor<smdebug::AnyStore> find_tensor(TrialT& t, const std::string& name) {
    if (!t.has_tensor(name)) throw NotFound("unknown tensor '" + name + "'");
    return t.tensor(name);
}

inline void check_worker(TrialT& t, const std::optional<std::string>& worker) {
    if (!worker) return;
    const auto ws = t.workers();
    if (std::find(ws.begin(), ws.end(), *worker) == ws.end()) throw NotFound("unknown worker '" + *worker + "'");
}

inline std::string shape_json(const smdebug::Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
    return out + "]";
}

// One point of a series: a global step of one worker, and the step and mode to ask the trial.
struct PointRef {
    std::int64_t global_step;
    std::int64_t query_step;
    smdebug::Mode query_mode;
    std::string worker;
    std::string series_mode;
};

// Down-samples a series to at most `max_points` points: consecutive buckets, each keeping its
// minimum and its maximum (NaN counts as the largest value, -Infinity as the smallest), in step order.
inline void downsample(std::vector<std::int64_t>& steps, std::vector<double>& values, std::size_t max_points) {
    if (values.size() <= max_points) return;
    const std::size_t buckets = std::max<std::size_t>(max_points / 2, 1);
    const auto above = [](double a, double b) {  // a > b, NaN the largest
        if (std::isnan(a)) return !std::isnan(b);
        if (std::isnan(b)) return false;
        return a > b;
    };
    std::vector<std::int64_t> out_steps;
    std::vector<double> out_values;
    const std::size_t n = values.size();
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t from = b * n / buckets, to = (b + 1) * n / buckets;
        if (from >= to) continue;
        std::size_t lo = from, hi = from;
        for (std::size_t i = from; i < to; ++i) {
            if (std::isnan(values[lo]) || (!std::isnan(values[i]) && values[i] < values[lo])) lo = i;
            if (above(values[i], values[hi])) hi = i;
        }
        for (const std::size_t i : {std::min(lo, hi), std::max(lo, hi)}) {
            if (!out_steps.empty() && out_steps.back() == steps[i]) continue;
            out_steps.push_back(steps[i]);
            out_values.push_back(values[i]);
        }
    }
    steps = std::move(out_steps);
    values = std::move(out_values);
}

inline std::string tensors(Run& r, const QueryParams& q, const Deadline& deadline) {
    std::lock_guard lock(r.mutex);
    if (!r.trial) return "[]";
    auto& t = *r.trial;
    const auto names = cli::naturally_sorted(t.tensor_names());  // as `smdebug tensors` lists them
    std::map<std::string, std::vector<std::string>> collections;
    for (const auto& c : t.collection_names_in_file_order())
        for (const auto& n : t.tensor_names({.collection = c})) collections[n].push_back(c);
    std::string out = "[";
    bool first = true;
    for (const auto& name : names) {
        auto info = r.tensor_info.find(name);
        if (info == r.tensor_info.end() && std::chrono::steady_clock::now() < deadline.at) {
            std::pair<std::string, std::string> found{"null", ""};
            try {
                const auto tensor = t.tensor(name);
                const auto steps = tensor.steps(smdebug::Mode::GLOBAL, true);
                if (!steps.empty()) {
                    const auto i = tensor.info(steps.back());
                    found = {shape_json(i.shape), std::string(smdebug::dtype_name(i.dtype))};
                    info = r.tensor_info.emplace(name, found).first;
                }
            } catch (const std::exception&) {  // only reductions saved, or not readable yet: no shape
            }
        }
        out += first ? "{\"name\":" : ",{\"name\":";
        first = false;
        append_string(out, name);
        out += ",\"collections\":[";
        const auto& cs = collections[name];
        for (std::size_t i = 0; i < cs.size(); ++i) {
            if (i) out += ',';
            append_string(out, cs[i]);
        }
        out += "],\"shape\":";
        if (info != r.tensor_info.end()) {
            out += info->second.first + ",\"dtype\":";
            append_string(out, info->second.second);
        } else {
            out += "null,\"dtype\":null";
        }
        out += '}';
    }
    return out + "]";
}

inline std::string scalars(Run& r, const QueryParams& q, const Deadline& deadline) {
    using namespace smdebug;
    const auto name = q.required("tensor");
    const auto reduction = q.get("reduction");
    if (reduction && !parse_reduction(*reduction))
        throw BadParameter("parameter 'reduction' must be one of min, max, mean, std, variance, sum, prod, l1, l2, not '" + *reduction + "'");
    const bool abs = q.flag("abs");
    if (abs && !reduction) throw BadParameter("parameter 'abs' needs a reduction");
    const auto mode = mode_param(q);
    const auto worker = q.get("worker");
    const auto max_points = q.integer("max_points", 2, max_points_cap);

    std::lock_guard lock(r.mutex);
    if (!r.trial) throw NotFound("unknown tensor '" + name + "' (the run has not been opened yet)");
    auto& t = *r.trial;
    check_worker(t, worker);
    const auto tensor = find_tensor(t, name);

    std::vector<PointRef> refs;
    const auto add_step = [&](std::int64_t g, std::int64_t query_step, Mode query_mode, const std::vector<std::string>& workers) {
        const auto mm = t.mode_modestep(g);
        const std::string series_mode(mode_name(mm ? mm->first : Mode::GLOBAL));
        for (const auto& w : workers)
            if (!worker || w == *worker) refs.push_back({g, query_step, query_mode, w, series_mode});
    };
    if (mode && *mode != Mode::GLOBAL) {
        for (const auto ms : tensor.steps(*mode)) {
            const auto g = t.global_step(*mode, ms);
            if (g) add_step(*g, ms, *mode, tensor.workers(ms, *mode));
        }
    } else {
        for (const auto g : tensor.steps()) add_step(g, g, Mode::GLOBAL, tensor.workers(g));
    }

    const std::string key = reduction ? (abs ? "abs_" : "") + *reduction : std::string("value");
    if (r.point_count + refs.size() > cached_points_cap) {  // the cache starts afresh
        r.points.clear();
        r.point_count = 0;
    }
    auto& cached = r.points[name + '\0' + key];
    std::vector<ValueRequest> requests;
    std::vector<std::size_t> missing;
    for (std::size_t i = 0; i < refs.size(); ++i) {
        if (cached.contains({refs[i].worker, refs[i].global_step})) continue;
        ValueRequest request{name, refs[i].query_step, StepQuery{refs[i].query_mode, refs[i].worker}};
        if (reduction) request.reduction = ReductionSpec{*reduction, abs};
        requests.push_back(std::move(request));
        missing.push_back(i);
    }
    ReadOptions options;
    options.keep_values = !reduction;
    std::string refused;  // why the library could not reduce a value (the first such reason)
    constexpr std::size_t chunk = 4096;
    for (std::size_t from = 0; from < requests.size(); from += chunk) {
        deadline.check("reading " + std::to_string(requests.size()) + " values of " + name);
        const auto to = std::min(requests.size(), from + chunk);
        const auto results = t.read(std::span<const ValueRequest>(requests.data() + from, to - from), options);
        for (std::size_t i = 0; i < results.size(); ++i) {
            const auto& res = results[i];
            const auto& ref = refs[missing[from + i]];
            if (res.error) {
                try {
                    std::rethrow_exception(res.error);
                } catch (const TensorUnavailableForStep&) {  // only other reductions saved there
                    continue;
                } catch (const StepNotYetAvailable&) {  // still being written: asked again next time
                    continue;
                } catch (const SMDebugValueError& e) {  // a reduction of an empty tensor: n/a, as `smdebug reductions` says
                    if (refused.empty()) refused = e.what();
                    continue;
                } catch (const SMDebugTypeError& e) {  // ... of text
                    if (refused.empty()) refused = e.what();
                    continue;
                }
            }
            double v = 0;
            if (reduction) {
                v = *res.reduced;
            } else {
                const auto& value = *res.value;
                if (value.size() != 1 || value.is_string())
                    throw BadParameter("tensor '" + name + "' holds " + std::to_string(value.size()) + " elements" +
                                       (value.is_string() ? " of text" : "") +
                                       " at step " + std::to_string(ref.global_step) + ": give a reduction (min, max, mean, ...)");
                v = smdebug::detail::as_doubles(value)[0];
            }
            cached[{ref.worker, ref.global_step}] = v;
            ++r.point_count;
        }
    }

    // One series per worker and mode, in the order of the workers' names.
    std::map<std::pair<std::string, std::string>, std::pair<std::vector<std::int64_t>, std::vector<double>>> series;
    for (const auto& ref : refs) {
        const auto found = cached.find({ref.worker, ref.global_step});
        if (found == cached.end()) continue;
        auto& s = series[{ref.worker, ref.series_mode}];
        s.first.push_back(ref.global_step);
        s.second.push_back(found->second);
    }
    if (series.empty() && !refused.empty()) throw BadParameter(refused);
    std::string out = "{\"series\":[";
    bool first = true;
    for (auto& [id, s] : series) {
        if (max_points) downsample(s.first, s.second, static_cast<std::size_t>(*max_points));
        out += first ? "{\"worker\":" : ",{\"worker\":";
        first = false;
        append_string(out, id.first);
        out += ",\"mode\":";
        append_string(out, id.second);
        out += ",\"steps\":[";
        for (std::size_t i = 0; i < s.first.size(); ++i) out += (i ? "," : "") + std::to_string(s.first[i]);
        out += "],\"values\":[";
        for (std::size_t i = 0; i < s.second.size(); ++i) {
            if (i) out += ',';
            append_number(out, s.second[i]);
        }
        out += "]}";
    }
    return out + "]}";
}

inline std::string histogram(Run& r, const QueryParams& q, const Deadline&) {
    using namespace smdebug;
    const auto name = q.required("tensor");
    const auto step = q.integer("step", 0, std::numeric_limits<std::int64_t>::max());
    if (!step) throw BadParameter("parameter 'step' is required");
    const auto bins = q.integer("bins", 1, bins_cap).value_or(50);
    const auto mode = mode_param(q).value_or(Mode::GLOBAL);
    const auto worker = q.get("worker");
    std::lock_guard lock(r.mutex);
    if (!r.trial) throw NotFound("unknown tensor '" + name + "' (the run has not been opened yet)");
    auto& t = *r.trial;
    check_worker(t, worker);
    const auto tensor = find_tensor(t, name);
    TensorValue v;
    try {
        v = tensor.value(*step, StepQuery{mode, worker});
    } catch (const TensorUnavailableForStep& e) {
        throw NotFound(e.what());
    } catch (const StepUnavailable& e) {
        throw NotFound(e.what());
    }
    if (v.is_string()) throw BadParameter("tensor '" + name + "' holds text: no histogram");
    const auto h = cli::plot::make_histogram(smdebug::detail::as_doubles(v), static_cast<std::size_t>(bins));
    std::string out = "{\"edges\":[";
    for (std::size_t i = 0; i <= h.counts.size(); ++i) {
        if (i) out += ',';
        append_number(out, h.lo + (h.hi - h.lo) * static_cast<double>(i) / static_cast<double>(h.counts.size()));
    }
    out += "],\"counts\":[";
    for (std::size_t i = 0; i < h.counts.size(); ++i) out += (i ? "," : "") + std::to_string(h.counts[i]);
    return out + "],\"non_finite\":" + std::to_string(h.non_finite) + "}";
}

inline std::string rules(Run& r, const QueryParams& q, const Deadline&) {
    using namespace smdebug;
    const auto name = q.required("rule");
    const auto* info = find_builtin_rule(name);
    if (!info) throw NotFound(cli::unknown_rule_message(name));
    if (info->needs_other_trial) throw BadParameter("rule " + std::string(info->name) + " compares two trials: run it with `smdebug rule --other`");
    RuleParams params;
    std::string key = std::string(info->name);
    for (const auto& [k, v] : q.all()) {
        if (k == "run" || k == "rule") continue;
        params.set(k, v);
        key += '\0' + k + '=' + v;
    }
    std::string canonical;
    try {
        canonical = validate_rule_params(name, params);
    } catch (const SMDebugError& e) {
        throw BadParameter(e.what());
    }
    std::lock_guard lock(r.mutex);
    if (!r.trial) return "{\"fired\":[],\"checked_tensors\":0}";
    if (const auto found = r.answers.find(key); found != r.answers.end() && found->second.first == r.generation) return found->second.second;
    auto& t = *r.trial;
    const auto steps = t.steps();
    std::string out = "{\"fired\":[";
    bool first = true;
    cli::RuleFindings result;
    if (!steps.empty()) result = cli::rule_findings(t, canonical, params, steps.back() + 1);
    for (const auto& f : result.fired) {
        out += first ? "{\"step\":" : ",{\"step\":";
        first = false;
        out += std::to_string(f.step) + ",\"tensor\":";
        append_string(out, f.tensor);
        out += ",\"message\":";
        append_string(out, f.text);
        out += ",\"mode\":";
        if (f.mode.empty()) out += "null";
        else append_string(out, f.mode);
        out += ",\"mode_step\":" + (f.mode_step >= 0 ? std::to_string(f.mode_step) : std::string("null"));
        out += '}';
    }
    // the tensors the rule inspected (what `smdebug rule` counts), not the trial's
    out += "],\"checked_tensors\":" + std::to_string(result.checked_tensors) + "}";
    r.answers[key] = {r.generation, out};
    return out;
}

inline std::string builtin_rules() {
    std::string out = "[";
    bool first = true;
    for (const auto& r : smdebug::builtin_rules()) {
        out += first ? "{\"name\":" : ",{\"name\":";
        first = false;
        append_string(out, r.name);
        out += ",\"fires_when\":";
        append_string(out, r.fires_when);
        out += std::string(",\"needs_other_trial\":") + (r.needs_other_trial ? "true" : "false") + ",\"parameters\":[";
        for (std::size_t i = 0; i < r.parameters.size(); ++i) {
            out += i ? ",{\"name\":" : "{\"name\":";
            append_string(out, r.parameters[i].name);
            out += ",\"default\":";
            append_string(out, r.parameters[i].default_value);
            out += ",\"meaning\":";
            append_string(out, r.parameters[i].meaning);
            out += '}';
        }
        out += "]}";
    }
    return out + "]";
}

}  // namespace api_detail

// The answer to GET `path` (under /api/v1/) with query `query`.
inline ApiResponse handle_api(RunRegistry& runs, std::string_view path, std::string_view query, std::chrono::milliseconds time_limit) {
    const Deadline deadline{std::chrono::steady_clock::now() + time_limit};
    try {
        const QueryParams q(query);
        if (path == "/api/v1/runs") {
            std::string out = "[";
            for (std::size_t i = 0; i < runs.runs().size(); ++i) out += (i ? "," : "") + status_json(runs.runs()[i]->snapshot());
            return {200, out + "]"};
        }
        if (path == "/api/v1/builtin_rules") return {200, api_detail::builtin_rules()};
        if (path == "/api/v1/tensors") return {200, api_detail::tensors(api_detail::find_run(runs, q), q, deadline)};
        if (path == "/api/v1/scalars") return {200, api_detail::scalars(api_detail::find_run(runs, q), q, deadline)};
        if (path == "/api/v1/histogram") return {200, api_detail::histogram(api_detail::find_run(runs, q), q, deadline)};
        if (path == "/api/v1/rules") return {200, api_detail::rules(api_detail::find_run(runs, q), q, deadline)};
        if (path == "/api/v1/diagnose") return {200, api_detail::diagnose(api_detail::find_run(runs, q))};
        if (path == "/api/v1/diff") return {200, api_detail::diff(runs, api_detail::find_run(runs, q), q)};
        return {404, error_json("no such endpoint: " + std::string(path))};
    } catch (const BadParameter& e) {
        return {400, error_json(e.what())};
    } catch (const NotFound& e) {
        return {404, error_json(e.what())};
    } catch (const TimedOut& e) {
        return {503, error_json(e.what())};
    } catch (const smdebug::SMDebugValueError& e) {  // e.g. a bad regular expression of a rule's parameter
        return {400, error_json(e.what())};
    } catch (const std::exception& e) {
        return {500, error_json(e.what())};
    }
}

}  // namespace serve
