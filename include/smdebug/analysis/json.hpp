#pragma once
// The JSON of an analysis (what `smdebug diagnose --json`, `smdebug diff --json`, the Python
// package's smdebug_cpp.analysis and `smdebug serve`'s /api/v1/diagnose and /api/v1/diff give):
// docs/diagnose.md "JSON". Steps are global steps; modes are TRAIN, EVAL, PREDICT or GLOBAL; a
// difference too large for a number (a NaN facing a number, a shape mismatch) is the string "inf".
#include <cmath>
#include <string>

#include <boost/json.hpp>

#include <smdebug/analysis/diagnose.hpp>
#include <smdebug/analysis/diff.hpp>

namespace smdebug::analysis {

namespace detail {
inline boost::json::value number_or_inf(double v) {
    if (std::isfinite(v)) return v;
    return boost::json::string(std::isnan(v) ? "nan" : "inf");
}

inline boost::json::object first_nonfinite_json(const FirstNonFinite& f) {
    boost::json::object o;
    o["step"] = f.step;
    o["mode"] = std::string(mode_name(f.mode));
    o["mode_step"] = f.mode_step;
    o["worker"] = f.worker;
    o["tensor"] = f.tensor;
    o["kind"] = std::string(role_name(f.role));
    if (!f.module.empty()) o["module"] = f.module;
    o["value"] = f.value;
    o["element"] = f.element;
    boost::json::object inputs;
    for (const auto& [name, finite] : f.inputs) inputs[name] = finite ? "finite" : "nonfinite";
    o["inputs"] = std::move(inputs);
    o["inputs_inferred"] = f.inputs_inferred;
    boost::json::array all;
    for (const auto& t : f.nonfinite_tensors) all.push_back(boost::json::string(t));
    o["nonfinite_tensors"] = std::move(all);
    if (f.weight) {
        boost::json::object w;
        w["last_finite_step"] = f.weight->last_finite_step ? boost::json::value(*f.weight->last_finite_step) : nullptr;
        w["gradient"] = f.weight->gradient.empty() ? boost::json::value(nullptr) : boost::json::value(f.weight->gradient);
        w["gradient_max_abs"] = f.weight->gradient_max_abs ? number_or_inf(*f.weight->gradient_max_abs) : nullptr;
        o["weight"] = std::move(w);
    }
    o["verdict"] = f.verdict;
    return o;
}

inline boost::json::object difference_json(const TensorDifference& d) {
    boost::json::object o;
    o["step"] = d.step;
    o["mode"] = std::string(mode_name(d.mode));
    o["mode_step"] = d.mode_step;
    o["tensor"] = d.tensor;
    o["max_abs"] = number_or_inf(d.max_abs);
    o["max_rel"] = number_or_inf(d.max_rel);
    o["step_b"] = d.step_b;
    o["worker"] = d.worker;
    if (!d.reason.empty()) o["reason"] = d.reason;
    return o;
}
}  // namespace detail

inline boost::json::object to_json(const Diagnosis& d) {
    boost::json::object o;
    o["first_nonfinite"] = d.first_nonfinite ? boost::json::value(detail::first_nonfinite_json(*d.first_nonfinite)) : nullptr;
    boost::json::array findings;
    for (const auto& f : d.findings) {
        boost::json::object x;
        x["rule"] = f.rule;
        x["step"] = f.step;
        x["mode"] = f.mode.empty() ? boost::json::value(nullptr) : boost::json::value(f.mode);
        x["mode_step"] = f.mode_step >= 0 ? boost::json::value(f.mode_step) : nullptr;
        x["tensor"] = f.tensor.empty() ? boost::json::value(nullptr) : boost::json::value(f.tensor);
        x["finding"] = f.finding;
        x["tensors"] = f.tensors;
        findings.push_back(std::move(x));
    }
    o["findings"] = std::move(findings);
    boost::json::array workers;
    for (const auto& w : d.workers) workers.push_back(detail::first_nonfinite_json(w));
    o["workers"] = std::move(workers);
    boost::json::array checked;
    for (const auto& r : d.rules_checked) checked.push_back(boost::json::string(r));
    o["rules_checked"] = std::move(checked);
    boost::json::object skipped;
    for (const auto& [r, why] : d.rules_skipped) skipped[r] = why;
    o["rules_skipped"] = std::move(skipped);
    boost::json::array notes;
    for (const auto& [r, note] : d.rule_notes) notes.push_back(boost::json::object{{"rule", r}, {"note", note}});
    o["rule_notes"] = std::move(notes);
    o["steps_checked"] = d.steps_checked;
    o["records_checked"] = d.records_checked;
    o["bad_records"] = d.bad_records;
    boost::json::array errors;
    for (const auto& e : d.bad_record_errors) errors.push_back(boost::json::string(e));
    o["bad_record_errors"] = std::move(errors);
    o["partial"] = d.partial;
    o["last_complete_step"] = d.last_complete_step;
    o["wrong"] = d.wrong();
    return o;
}

inline boost::json::object to_json(const DiffResult& r) {
    boost::json::object o;
    o["first_difference"] = r.first_difference ? boost::json::value(detail::difference_json(*r.first_difference)) : nullptr;
    boost::json::array at_first;
    for (const auto& d : r.first_step_differences) at_first.push_back(detail::difference_json(d));
    o["first_step_differences"] = std::move(at_first);
    o["differing_values"] = r.differing_values;
    o["differing_tensors"] = r.differing_tensors;
    o["differing_steps"] = r.differing_steps;
    o["compared_values"] = r.compared_values;
    o["compared_steps"] = r.compared_steps;
    auto only = [](const RunOnly& x) {
        boost::json::object j;
        boost::json::array t, s;
        for (const auto& n : x.tensors) t.push_back(boost::json::string(n));
        for (const auto& st : x.steps) s.push_back(boost::json::object{{"mode", std::string(mode_name(st.mode))}, {"mode_step", st.mode_step}});
        j["tensors"] = std::move(t);
        j["steps"] = std::move(s);
        return j;
    };
    o["only_in_a"] = only(r.only_in_a);
    o["only_in_b"] = only(r.only_in_b);
    o["partial"] = r.partial;
    o["nothing_shared"] = r.nothing_shared.empty() ? boost::json::value(nullptr) : boost::json::value(r.nothing_shared);
    o["rtol"] = r.tolerance.rtol;
    o["atol"] = r.tolerance.atol;
    return o;
}

}  // namespace smdebug::analysis
