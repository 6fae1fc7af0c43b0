#pragma once
// Collections files (docs/format.md §6): collection definitions plus the job's worker count.
#include <string>
#include <string_view>
#include <vector>

#include <smdebug/core/collection.hpp>
#include <smdebug/format/detail/json.hpp>

namespace smdebug::collections_file {

struct CollectionsFile {
    std::vector<Collection> collections;  // in file order
    int num_workers = 1;
};

namespace detail {
[[noreturn]] inline void bad(std::string_view context, const std::string& what) {
    throw FormatError(std::string(context) + ": invalid collections file: " + what);
}
inline std::int64_t as_int(const json::bj::value& v, std::string_view context, const std::string& key) {
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64()) return static_cast<std::int64_t>(v.get_uint64());
    if (v.is_string()) {  // the reference accepts numeric strings in save configs
        try { return std::stoll(std::string(v.get_string())); } catch (...) {}
    }
    bad(context, "'" + key + "' must be an integer");
}
inline std::vector<std::string> string_list(const json::bj::value* v, std::string_view context, const std::string& key) {
    std::vector<std::string> out;
    if (!v || v->is_null() || (v->is_bool() && !v->get_bool())) return out;
    if (!v->is_array()) bad(context, "'" + key + "' must be a list of strings");
    for (const auto& e : v->get_array()) {
        if (!e.is_string()) bad(context, "'" + key + "' must be a list of strings");
        out.emplace_back(e.get_string());
    }
    return out;
}
}  // namespace detail

// A collections file with a single collection, "default", that matches every tensor name: all a
// reader needs besides the worker count (fixtures, converters, tools writing trials by hand).
inline CollectionsFile match_all(int num_workers = 1) {
    CollectionsFile f;
    f.num_workers = num_workers;
    Collection c;
    c.name = "default";
    c.include_regex = {".*"};
    f.collections.push_back(std::move(c));
    return f;
}

inline CollectionsFile parse(std::string_view text, std::string_view context) {
    using detail::bad;
    const auto root = json::parse(text, context, "invalid collections file JSON");
    if (!root.is_object()) bad(context, "top level is not an object");
    const auto& obj = root.get_object();
    for (const auto& kv : obj)
        if (kv.key() != "collections" && kv.key() != "_meta") bad(context, "unexpected top-level key '" + std::string(kv.key()) + "'");
    const auto* colls = obj.if_contains("collections");
    const auto* meta = obj.if_contains("_meta");
    if (!colls || !colls->is_object()) bad(context, "'collections' is missing or not an object");
    if (!meta || !meta->is_object()) bad(context, "'_meta' is missing or not an object");
    CollectionsFile f;
    const auto* nw = meta->get_object().if_contains("num_workers");
    if (!nw) bad(context, "'_meta.num_workers' is missing");
    const auto n = detail::as_int(*nw, context, "_meta.num_workers");
    if (n < 1 || n > 1'000'000) bad(context, "'_meta.num_workers' must be a positive integer");
    f.num_workers = static_cast<int>(n);

    for (const auto& kv : colls->get_object()) {
        const std::string key(kv.key());
        if (kv.value().is_null()) continue;
        if (!kv.value().is_object()) bad(context, "collection '" + key + "' is not an object");
        const auto& c = kv.value().get_object();
        Collection col;
        const auto* name = c.if_contains("name");
        col.name = name && name->is_string() ? std::string(name->get_string()) : key;
        col.include_regex = detail::string_list(c.if_contains("include_regex"), context, key + ".include_regex");
        for (auto& t : detail::string_list(c.if_contains("tensor_names"), context, key + ".tensor_names")) col.add_tensor_name(std::move(t));
        if (const auto* rc = c.if_contains("reduction_config"); rc && !rc->is_null()) {
            if (!rc->is_object()) bad(context, key + ".reduction_config is not an object");
            ReductionConfig r;
            const auto& ro = rc->get_object();
            if (const auto* v = ro.if_contains("save_raw_tensor"); v && v->is_bool()) r.save_raw_tensor = v->get_bool();
            if (const auto* v = ro.if_contains("save_shape"); v && v->is_bool()) r.save_shape = v->get_bool();
            if (const auto* v = ro.if_contains("reductions"); v && !v->is_null()) {
                if (!v->is_string()) bad(context, key + ".reduction_config.reductions is not a string");
                try {
                    r.add_reductions_string(v->get_string());
                } catch (const SMDebugValueError& e) {
                    bad(context, key + ".reduction_config: " + e.what());
                }
            }
            col.reduction_config = std::move(r);
        }
        if (const auto* sc = c.if_contains("save_config"); sc && !sc->is_null()) {
            if (!sc->is_object()) bad(context, key + ".save_config is not an object");
            SaveConfig cfg;
            for (Mode m : all_modes) {
                const auto* e = sc->get_object().if_contains(mode_name(m));
                if (!e || e->is_null()) continue;
                if (!e->is_object()) bad(context, key + ".save_config." + std::string(mode_name(m)) + " is not an object");
                const auto& eo = e->get_object();
                SaveConfigMode scm;
                const std::string where = key + ".save_config." + std::string(mode_name(m));
                if (const auto* v = eo.if_contains("save_interval")) scm.save_interval = detail::as_int(*v, context, where + ".save_interval");
                if (const auto* v = eo.if_contains("start_step")) scm.start_step = detail::as_int(*v, context, where + ".start_step");
                if (const auto* v = eo.if_contains("end_step"); v && !v->is_null()) scm.end_step = detail::as_int(*v, context, where + ".end_step");
                if (const auto* v = eo.if_contains("save_steps"); v && !v->is_null()) {
                    if (!v->is_array()) bad(context, where + ".save_steps is not a list");
                    for (const auto& s : v->get_array()) scm.save_steps.push_back(detail::as_int(s, context, where + ".save_steps"));
                }
                cfg[m] = std::move(scm);
            }
            col.save_config = std::move(cfg);
        }
        if (const auto* sh = c.if_contains("save_histogram"); sh && sh->is_bool()) col.save_histogram = sh->get_bool();
        f.collections.push_back(std::move(col));
    }
    return f;
}

inline std::string serialize(const CollectionsFile& f) {
    json::bj::object colls;
    for (const auto& c : f.collections) {
        json::bj::object o;
        o["name"] = c.name;
        json::bj::array regex, names;
        for (const auto& r : c.include_regex) regex.emplace_back(r);
        for (const auto& n : c.tensor_names) names.emplace_back(n);
        o["include_regex"] = std::move(regex);
        o["tensor_names"] = std::move(names);
        if (c.reduction_config) {
            json::bj::object r;
            r["save_raw_tensor"] = c.reduction_config->save_raw_tensor;
            r["reductions"] = c.reduction_config->reductions_string();
            r["save_shape"] = c.reduction_config->save_shape;
            o["reduction_config"] = std::move(r);
        } else {
            o["reduction_config"] = nullptr;
        }
        if (c.save_config) {
            json::bj::object sc;
            for (Mode m : all_modes) {
                const auto& e = (*c.save_config)[m];
                if (!e) { sc[mode_name(m)] = nullptr; continue; }
                json::bj::object eo;
                eo["save_interval"] = e->save_interval;
                json::bj::array steps;
                for (auto s : e->save_steps) steps.emplace_back(s);
                eo["save_steps"] = std::move(steps);
                eo["start_step"] = e->start_step;
                if (e->end_step) eo["end_step"] = *e->end_step; else eo["end_step"] = nullptr;
                sc[mode_name(m)] = std::move(eo);
            }
            o["save_config"] = std::move(sc);
        } else {
            o["save_config"] = nullptr;
        }
        o["save_histogram"] = c.save_histogram;
        colls[c.name] = std::move(o);
    }
    json::bj::object root;
    root["collections"] = std::move(colls);
    root["_meta"] = json::bj::object{{"num_workers", f.num_workers}};
    return json::dumps(root);
}

}  // namespace smdebug::collections_file
