// conformance_runner CASES_DIR [--s3 s3://BUCKET/PREFIX] [--quiet]
//
// Runs every query of every conformance case (../shared/conformance, schema in SCHEMA.md) through
// the C++ API and compares the answers with the reference's (or with the query's `cpp` object,
// where docs/deviations.md says the C++ library answers differently). Prints one line per failing
// query, per-deviation counts, and last `N passed, M failed`. Exit status 1 on any failure.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <smdebug/smdebug.hpp>

#include "expected_json.hpp"

namespace fs = std::filesystem;
namespace bj = boost::json;
using namespace smdebug;

namespace {

// ---- encoding our answers as the schema's JSON -------------------------------------------------

bj::value encode_double(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    return d;
}

bj::value encode_value(const TensorValue& v) {
    bj::object o;
    o["dtype"] = std::string(dtype_name(v.dtype()));
    bj::array shape;
    for (auto d : v.shape()) shape.push_back(static_cast<std::uint64_t>(d));
    o["shape"] = std::move(shape);
    bj::array data;
    if (v.is_string()) {
        for (const auto& s : v.strings()) data.emplace_back(s);
    } else {
        visit_dtype(v.dtype(), [&](auto tag) {
            using T = decltype(tag);
            for (const auto& x : v.elements<T>()) {
                if constexpr (std::is_same_v<T, bool>) data.emplace_back(x);
                else if constexpr (std::is_same_v<T, float16>) data.push_back(encode_double(static_cast<float>(x)));
                else if constexpr (std::is_floating_point_v<T>) data.push_back(encode_double(x));
                else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
                    data.push_back(bj::array{encode_double(x.real()), encode_double(x.imag())});
                else if constexpr (std::is_signed_v<T>) data.emplace_back(static_cast<std::int64_t>(x));
                else data.emplace_back(static_cast<std::uint64_t>(x));
            }
        });
    }
    o["data"] = std::move(data);
    return o;
}

bj::value encode_scalar(double d) {
    return bj::object{{"dtype", "float64"}, {"shape", bj::array{}}, {"data", bj::array{encode_double(d)}}};
}

template <class T>
bj::value encode_list(const std::vector<T>& v) {
    bj::array a;
    for (const auto& x : v) a.emplace_back(x);
    return a;
}

bj::value encode_optional_int(const std::optional<std::int64_t>& v) { return v ? bj::value(*v) : bj::value(nullptr); }

Mode mode_arg(const bj::object& args) {
    if (const auto* m = args.if_contains("mode")) {
        if (auto p = parse_mode(m->as_string())) return *p;
        throw UsageError("unknown mode in query: " + std::string(m->as_string()));
    }
    return Mode::GLOBAL;
}

std::int64_t int_arg(const bj::object& args, const char* key) { return args.at(key).to_number<std::int64_t>(); }

StepQuery step_query(const bj::object& args) {
    StepQuery q;
    q.mode = mode_arg(args);
    if (const auto* w = args.if_contains("worker"); w && !w->is_null()) q.worker = std::string(w->as_string());
    return q;
}

void flatten_regex(const bj::value& v, std::vector<std::string>& out) {
    if (v.is_string()) out.emplace_back(v.get_string());
    else if (v.is_array())
        for (const auto& e : v.get_array()) flatten_regex(e, out);
}

bj::value encode_reduction_config(const std::optional<ReductionConfig>& rc) {
    if (!rc) return nullptr;
    return bj::object{{"reductions", encode_list(rc->reductions)}, {"abs_reductions", encode_list(rc->abs_reductions)},
                      {"norms", encode_list(rc->norms)}, {"abs_norms", encode_list(rc->abs_norms)},
                      {"save_raw_tensor", rc->save_raw_tensor}, {"save_shape", rc->save_shape}};
}

bj::value encode_save_config(const std::optional<SaveConfig>& sc) {
    if (!sc) return nullptr;
    bj::object o;
    for (Mode m : all_modes) {
        const auto& e = (*sc)[m];
        if (!e) { o[mode_name(m)] = nullptr; continue; }
        o[mode_name(m)] = bj::object{{"save_interval", e->save_interval}, {"save_steps", encode_list(e->save_steps)},
                                     {"start_step", e->start_step}, {"end_step", encode_optional_int(e->end_step)}};
    }
    return o;
}

template <class T>
bj::value run_query(T& trial, const std::string& call, const bj::object& args, const bj::object& q) {
    auto tensor = [&] { return trial.tensor(std::string(q.at("tensor").as_string())); };
    if (call == "trial.workers") return encode_list(trial.workers());
    if (call == "trial.modes") {
        bj::array a;
        for (Mode m : trial.modes()) a.emplace_back(mode_name(m));
        return a;
    }
    if (call == "trial.steps") {
        const auto* inc = args.if_contains("show_incomplete_steps");
        return encode_list(trial.steps(mode_arg(args), inc && inc->as_bool()));
    }
    if (call == "trial.tensor_names") {
        TensorNamesQuery tq;
        if (const auto* s = args.if_contains("step"); s && !s->is_null()) tq.step = s->to_number<std::int64_t>();
        tq.mode = mode_arg(args);
        if (const auto* r = args.if_contains("regex"); r && !r->is_null()) flatten_regex(*r, tq.regex);
        if (const auto* c = args.if_contains("collection"); c && !c->is_null()) tq.collection = std::string(c->as_string());
        return encode_list(trial.tensor_names(tq));
    }
    if (call == "trial.mode") {
        auto m = trial.mode(int_arg(args, "global_step"));
        return m ? bj::value(mode_name(*m)) : bj::value(nullptr);
    }
    if (call == "trial.mode_step") return encode_optional_int(trial.mode_step(int_arg(args, "global_step")));
    if (call == "trial.global_step") return encode_optional_int(trial.global_step(mode_arg(args), int_arg(args, "mode_step")));
    if (call == "trial.has_tensor") return trial.has_tensor(std::string(args.at("tname").as_string()));
    if (call == "trial.tensor") return bj::value(trial.tensor(std::string(args.at("tname").as_string())).name());
    if (call == "trial.has_passed_step") return bj::value(step_state_name(trial.has_passed_step(int_arg(args, "step"), mode_arg(args))));
    if (call == "trial.collections") {
        bj::array a;
        for (const auto& [n, c] : trial.collections()) a.emplace_back(n);
        return a;
    }
    if (call == "trial.collection") {
        const auto& c = trial.collection(std::string(args.at("coll_name").as_string()));
        return bj::object{{"name", c.name}, {"include_regex", encode_list(c.include_regex)}, {"tensor_names", encode_list(c.tensor_names)}};
    }
    if (call == "collection.reduction_config") return encode_reduction_config(trial.collection(std::string(args.at("coll_name").as_string())).reduction_config);
    if (call == "collection.save_config") return encode_save_config(trial.collection(std::string(args.at("coll_name").as_string())).save_config);
    if (call == "tensor.steps") {
        const auto* inc = args.if_contains("show_incomplete_steps");
        return encode_list(tensor().steps(mode_arg(args), inc && inc->as_bool()));
    }
    if (call == "tensor.workers") return encode_list(tensor().workers(int_arg(args, "step_num"), mode_arg(args)));
    if (call == "tensor.value") return encode_value(tensor().value(int_arg(args, "step_num"), step_query(args)));
    if (call == "tensor.values") {
        bj::array a;
        for (const auto& [s, v] : tensor().values(step_query(args))) a.push_back(bj::object{{"step", s}, {"value", encode_value(v)}});
        return a;
    }
    if (call == "tensor.shape") {
        bj::array a;
        for (auto d : tensor().shape(int_arg(args, "step_num"), step_query(args))) a.emplace_back(static_cast<std::uint64_t>(d));
        return a;
    }
    if (call == "tensor.reduction_value") {
        const auto* abs = args.if_contains("abs");
        return encode_scalar(tensor().reduction_value(int_arg(args, "step_num"), args.at("reduction_name").as_string(),
                                                      step_query(args), abs && abs->as_bool()));
    }
    if (call == "tensor.reduction_values") {
        bj::array a;
        for (const auto& r : tensor().reduction_values(int_arg(args, "step_num"), step_query(args)))
            a.push_back(bj::object{{"reduction", r.reduction}, {"abs", r.abs}, {"value", encode_scalar(r.value)}});
        return a;
    }
    if (call == "tensor.prev_steps") {
        std::optional<std::size_t> n;
        if (const auto* nv = args.if_contains("n"); nv && !nv->is_null()) n = nv->to_number<std::size_t>();
        return encode_list(tensor().prev_steps(int_arg(args, "step"), n, mode_arg(args)));
    }
    throw UsageError("unsupported call " + call);
}

// ---- comparison ---------------------------------------------------------------------------------

struct Tolerance {
    double rtol = 0, atol = 0;
    bool check_dtype = true;
    bool relaxed_scalar = false;  // compare only data[0] of arrays (reductions modelled as doubles)
};

std::optional<double> as_double(const bj::value& v) {
    if (v.is_double()) return v.get_double();
    if (v.is_int64()) return static_cast<double>(v.get_int64());
    if (v.is_uint64()) return static_cast<double>(v.get_uint64());
    if (v.is_string()) {
        if (v.get_string() == "nan") return std::nan("");
        if (v.get_string() == "inf") return INFINITY;
        if (v.get_string() == "-inf") return -INFINITY;
    }
    return std::nullopt;
}

// Exact integer equality whatever the JSON representation (int64 or uint64).
bool integer_equal(const bj::value& a, const bj::value& b) {
    auto split = [](const bj::value& v) -> std::pair<bool, std::uint64_t> {
        if (v.is_uint64()) return {false, v.get_uint64()};
        const auto i = v.get_int64();
        return {i < 0, i < 0 ? 0 - static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(i)};
    };
    return split(a) == split(b);
}

bool is_float_dtype(std::string_view d) { return d == "float16" || d == "float32" || d == "float64" || d.starts_with("complex"); }

bool float_equal(const bj::value& e, const bj::value& g, const Tolerance& tol) {
    const auto x = as_double(e), y = as_double(g);
    if (!x || !y) return false;
    if (std::isnan(*x) || std::isnan(*y)) return std::isnan(*x) && std::isnan(*y);
    if (std::isinf(*x) || std::isinf(*y)) return *x == *y;
    if (tol.rtol == 0 && tol.atol == 0) return *x == *y;
    return std::fabs(*y - *x) <= tol.atol + tol.rtol * std::fabs(*x);
}

bool is_array_object(const bj::value& v) {
    return v.is_object() && v.get_object().contains("dtype") && v.get_object().contains("shape") && v.get_object().contains("data");
}

bool equal(const bj::value& e, const bj::value& g, const Tolerance& tol);

bool array_equal(const bj::object& e, const bj::object& g, const Tolerance& tol) {
    const auto& ed = e.at("data").as_array();
    const auto& gd = g.at("data").as_array();
    const std::string_view dtype = e.at("dtype").as_string();
    if (tol.relaxed_scalar) {
        if (ed.size() != 1 || gd.size() != 1) return false;
        if (dtype == "bool") return as_double(gd[0]) && *as_double(gd[0]) == (ed[0].as_bool() ? 1.0 : 0.0);
        return float_equal(ed[0], gd[0], tol);
    }
    if (tol.check_dtype && e.at("dtype") != g.at("dtype")) return false;
    if (e.at("shape") != g.at("shape")) return false;
    if (ed.size() != gd.size()) return false;
    for (std::size_t i = 0; i < ed.size(); ++i) {
        if (is_float_dtype(dtype)) {
            if (ed[i].is_array()) {
                if (!gd[i].is_array() || ed[i].as_array().size() != 2 || gd[i].as_array().size() != 2) return false;
                if (!float_equal(ed[i].as_array()[0], gd[i].as_array()[0], tol) || !float_equal(ed[i].as_array()[1], gd[i].as_array()[1], tol)) return false;
            } else if (!float_equal(ed[i], gd[i], tol)) {
                return false;
            }
        } else if (ed[i].is_number() && gd[i].is_number()) {
            // integers: exact (int64/uint64 representations may differ)
            if (ed[i].is_double() || gd[i].is_double()) { if (!float_equal(ed[i], gd[i], tol)) return false; }
            else if (!integer_equal(ed[i], gd[i])) return false;
        } else if (ed[i] != gd[i]) {
            return false;
        }
    }
    return true;
}

bool equal(const bj::value& e, const bj::value& g, const Tolerance& tol) {
    if (is_array_object(e)) return is_array_object(g) && array_equal(e.get_object(), g.get_object(), tol);
    if (e.is_object()) {
        if (!g.is_object() || e.get_object().size() != g.get_object().size()) return false;
        for (const auto& kv : e.get_object()) {
            const auto* gv = g.get_object().if_contains(kv.key());
            if (!gv) return false;
            if (kv.key() == "tensor_names" && kv.value().is_array() && gv->is_array()) {  // compared as a set
                std::vector<std::string> a, b;
                for (const auto& x : kv.value().get_array()) a.emplace_back(x.as_string());
                for (const auto& x : gv->get_array()) b.emplace_back(x.as_string());
                std::sort(a.begin(), a.end());
                std::sort(b.begin(), b.end());
                if (a != b) return false;
            } else if (!equal(kv.value(), *gv, tol)) {
                return false;
            }
        }
        return true;
    }
    if (e.is_array()) {
        if (!g.is_array() || e.get_array().size() != g.get_array().size()) return false;
        for (std::size_t i = 0; i < e.get_array().size(); ++i)
            if (!equal(e.get_array()[i], g.get_array()[i], tol)) return false;
        return true;
    }
    if (e.is_number() && g.is_number()) {
        if (e.is_double() || g.is_double()) return float_equal(e, g, tol);
        return integer_equal(e, g);
    }
    return e == g;
}

bj::value sorted_copy(const bj::value& v, const std::string& call) {
    if (!v.is_array()) return v;
    std::vector<bj::value> items(v.get_array().begin(), v.get_array().end());
    auto key = [&](const bj::value& x) {
        if (call == "tensor.reduction_values" && x.is_object())
            return std::string(x.get_object().at("reduction").as_string()) + (x.get_object().at("abs").as_bool() ? "1" : "0");
        return bj::serialize(x);
    };
    std::sort(items.begin(), items.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    return bj::array(items.begin(), items.end());
}

std::string abbreviate(std::string s, std::size_t n = 300) {
    if (s.size() > n) s = s.substr(0, n) + "...";
    return s;
}

struct Totals {
    std::size_t passed = 0, failed = 0;
    std::map<std::string, std::pair<std::size_t, std::size_t>> per_deviation;  // id -> (passed, total)
    std::map<std::string, std::pair<std::size_t, std::size_t>> per_call;
};

template <class MakeTrial>
void run_block(const std::string& case_name, const bj::object& block, MakeTrial&& make_trial, Totals& totals, bool quiet) {
    TrialOptions opts;
    if (const auto* ta = block.if_contains("trial_args"); ta && ta->is_object()) {
        if (const auto* rs = ta->get_object().if_contains("range_steps"); rs && rs->is_array()) {
            const auto& a = rs->get_array();
            if (!a.at(0).is_null()) opts.range_begin = a.at(0).to_number<std::int64_t>();
            if (!a.at(1).is_null()) opts.range_end = a.at(1).to_number<std::int64_t>();
        }
    }
    auto trial_holder = make_trial(opts);
    auto& trial = *trial_holder;
    const std::string block_name(block.at("name").as_string());
    for (const auto& qv : block.at("queries").as_array()) {
        const auto& q = qv.as_object();
        const std::string call(q.at("call").as_string());
        const auto& args = q.at("args").as_object();
        const bj::object* cpp = q.if_contains("cpp") ? &q.at("cpp").as_object() : nullptr;
        const bj::object& want = cpp ? *cpp : q;

        std::optional<bj::value> got;
        std::string got_error;
        try {
            got = run_query(trial, call, args, q);
        } catch (const SMDebugError& e) {
            got_error = e.python_name();
            if (got_error == "UsageError") got_error += std::string(": ") + e.what();
        } catch (const std::exception& e) {
            got_error = std::string("std::exception: ") + e.what();
        }

        bool ok = false;
        std::string expected_text;
        if (const auto* r = want.if_contains("raises")) {
            expected_text = "raises " + std::string(r->as_string());
            ok = !got && got_error == r->as_string();
        } else {
            const auto& expected = want.at("result");
            expected_text = bj::serialize(expected);
            Tolerance tol;
            if (const auto* v = want.if_contains("rtol")) tol.rtol = v->to_number<double>();
            if (const auto* v = want.if_contains("atol")) tol.atol = v->to_number<double>();
            if (const auto* v = want.if_contains("check_dtype")) tol.check_dtype = v->as_bool();
            tol.relaxed_scalar = call == "tensor.reduction_value" || call == "tensor.reduction_values";
            if (got) {
                const bool unordered = q.if_contains("unordered") && q.at("unordered").as_bool();
                ok = unordered || call == "tensor.reduction_values" ? equal(sorted_copy(expected, call), sorted_copy(*got, call), tol)
                                                                  : equal(expected, *got, tol);
            }
        }
        auto& pc = totals.per_call[call];
        ++pc.second;
        if (cpp) {
            auto& d = totals.per_deviation[std::string(cpp->at("deviation").as_string())];
            ++d.second;
            if (ok) ++d.first;
        }
        if (ok) {
            ++totals.passed;
            ++pc.first;
        } else {
            ++totals.failed;
            if (!quiet) {
                std::cout << "FAIL " << case_name << "/" << block_name << "#" << q.at("id").as_int64() << " " << call;
                if (const auto* t = q.if_contains("tensor")) std::cout << " tensor=" << t->as_string();
                std::cout << " args=" << bj::serialize(args) << (cpp ? " [" + std::string(cpp->at("deviation").as_string()) + "]" : "")
                          << "\n    expected: " << abbreviate(expected_text)
                          << "\n    got:      " << abbreviate(got ? bj::serialize(*got) : "raises " + got_error) << "\n";
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> positional;
    std::string s3_base;
    bool quiet = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--s3" && i + 1 < argc) s3_base = argv[++i];
        else if (a == "--quiet") quiet = true;
        else if (a == "-h" || a == "--help") {
            std::cout << "usage: conformance_runner CASES_DIR [--s3 s3://BUCKET/PREFIX] [--quiet]\n";
            return 0;
        } else positional.push_back(a);
    }
    if (positional.size() != 1) {
        std::cerr << "usage: conformance_runner CASES_DIR [--s3 s3://BUCKET/PREFIX] [--quiet]\n";
        return 2;
    }
    const fs::path root = positional[0];
    std::vector<fs::path> cases;
    std::error_code ec;
    if (fs::exists(root / "expected.json")) cases.push_back(root);
    else if (fs::is_directory(root, ec)) {
        for (const auto& e : fs::directory_iterator(root))
            if (fs::exists(e.path() / "expected.json")) cases.push_back(e.path());
        std::sort(cases.begin(), cases.end());
    }
    if (cases.empty()) {
        std::cerr << "conformance_runner: no case folders (with expected.json) under " << root << "\n";
        return 2;
    }

    Totals all;
    for (const auto& dir : cases) {
        const std::string case_name = dir.filename().string();
        bj::value expected;
        try {
            expected = conformance::load_expected(dir / "expected.json");
        } catch (const std::exception& e) {
            std::cerr << "conformance_runner: " << e.what() << "\n";
            return 2;
        }
        const auto& top = expected.as_object();
        if (top.at("schema_version").as_int64() != 1) {
            std::cerr << "conformance_runner: " << (dir / "expected.json") << ": unsupported schema_version\n";
            return 2;
        }
        const fs::path trial_dir = dir / std::string(top.at("trial_dir").as_string());
        std::string trial_path = trial_dir.string();
if (!s3_base.empty()) {
            trial_path = s3_base + (s3_base.ends_with("/") ? "" : "/") + case_name;
            conformance::upload_trial(trial_dir, trial_path);
        }
        Totals case_totals;
        for (const auto& block : top.at("blocks").as_array()) {
            auto make = [&](TrialOptions opts) {
                opts.name = default_trial_name(trial_path);
                AnyStore store = open_trial_store(trial_path, opts);  // through SMDEBUG_CACHE_DIR's cache when set
                return std::make_unique<Trial<AnyStore>>(std::move(store), std::move(opts));
            };
            try {
                run_block(case_name, block.as_object(), make, case_totals, quiet);
            } catch (const std::exception& e) {
                const auto n = block.as_object().at("queries").as_array().size();
                std::cout << "FAIL " << case_name << "/" << block.as_object().at("name").as_string() << ": block aborted ("
                          << e.what() << "); " << n << " queries counted as failed\n";
                case_totals.failed += n;
            }
        }
        std::cout << "case " << case_name << ": " << case_totals.passed << " passed, " << case_totals.failed << " failed\n";
        for (const auto& [id, c] : case_totals.per_deviation) std::cout << "  " << id << ": " << c.first << "/" << c.second << "\n";
        all.passed += case_totals.passed;
        all.failed += case_totals.failed;
        for (const auto& [id, c] : case_totals.per_deviation) {
            all.per_deviation[id].first += c.first;
            all.per_deviation[id].second += c.second;
        }
        for (const auto& [id, c] : case_totals.per_call) {
            all.per_call[id].first += c.first;
            all.per_call[id].second += c.second;
        }
    }
    std::cout << "per call:\n";
    for (const auto& [id, c] : all.per_call) std::cout << "  " << id << ": " << c.first << "/" << c.second << "\n";
    std::cout << "per deviation:\n";
    for (const auto& [id, c] : all.per_deviation) std::cout << "  " << id << ": " << c.first << "/" << c.second << "\n";
    std::cout << all.passed << " passed, " << all.failed << " failed\n";
    return all.failed ? 1 : 0;
}
