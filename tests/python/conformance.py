"""The conformance runner of the Python package: every query of every vendored conformance case
(tests/data/conformance/cases/*/expected.json, schema in ../data/conformance/SCHEMA.md) run
through smdebug_cpp, compared as tools/conformance/conformance_runner.cpp compares the C++ answers
(the `cpp` object where the C++ library deviates on purpose, else the reference's answer) — except
for the deviations of PYTHON_FOLLOWS_REFERENCE, where the package gives smdebug's own answer on
purpose (docs/python.md) and is compared with the reference.

    python conformance.py [CASES_DIR] [--s3 s3://bucket/prefix] [--quiet]

prints one FAIL line per mismatch and ends with "N passed, M failed".
"""
import json
import math
import os
import sys

import numpy as np

from smdebug_cpp.trials import create_trial

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CASES = os.path.join(HERE, "..", "data", "conformance", "cases")

# D8: collections are mutable objects of the trial, and looking one up creates it, as smdebug's
# analysis code and tests rely on (trial.collection("test").include("foo")).
PYTHON_FOLLOWS_REFERENCE = {"D8-unknown-collection"}


# ---- encoding (SCHEMA.md §5) --------------------------------------------------------------------

def _enc_float(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def encode_array(a):
    a = np.asarray(a)
    kind = a.dtype.kind
    dtype = "str" if kind in "US" else a.dtype.name
    flat = a.reshape(-1)
    if kind == "f":
        data = [_enc_float(x) for x in flat.astype(np.float64)]
    elif kind == "c":
        data = [[_enc_float(x.real), _enc_float(x.imag)] for x in flat]
    elif kind == "b":
        data = [bool(x) for x in flat]
    elif kind in "iu":
        data = [int(x) for x in flat]
    else:
        data = [str(x) for x in flat]
    return {"dtype": dtype, "shape": list(a.shape), "data": data}


def encode_scalar(v):
    return {"dtype": "float64", "shape": [], "data": [_enc_float(v)]}


def _mode(args):
    return args.get("mode", "GLOBAL")


def _flatten(r, out):
    if isinstance(r, str):
        out.append(r)
    else:
        for x in r:
            _flatten(x, out)
    return out


def run_query(trial, q):
    call, args = q["call"], q["args"]
    tensor = (lambda: trial.tensor(q["tensor"]))
    if call == "trial.workers":
        return trial.workers()
    if call == "trial.modes":
        return [m.name for m in trial.modes()]
    if call == "trial.steps":
        return trial.steps(mode=_mode(args), show_incomplete_steps=args.get("show_incomplete_steps", False))
    if call == "trial.tensor_names":
        kw = {"mode": _mode(args)}
        for k in ("step", "regex", "collection"):
            if args.get(k) is not None:
                kw[k] = args[k]
        return trial.tensor_names(**kw)
    if call == "trial.mode":
        m = trial.mode(args["global_step"])
        return None if m is None else m.name
    if call == "trial.mode_step":
        return trial.mode_step(args["global_step"])
    if call == "trial.global_step":
        return trial.global_step(args["mode"], args["mode_step"])
    if call == "trial.has_tensor":
        return trial.has_tensor(args["tname"])
    if call == "trial.tensor":
        return trial.tensor(args["tname"]).name
    if call == "trial.has_passed_step":
        return trial.has_passed_step(args["step"], mode=_mode(args)).name
    if call == "trial.collections":
        return list(trial.collections().keys())
    if call == "trial.collection":
        c = trial.collection(args["coll_name"])
        return {"name": c.name, "include_regex": list(c.include_regex), "tensor_names": sorted(c.tensor_names)}
    if call == "collection.reduction_config":
        rc = trial.collection(args["coll_name"]).reduction_config
        if rc is None:
            return None
        return {"reductions": rc.reductions, "abs_reductions": rc.abs_reductions, "norms": rc.norms,
                "abs_norms": rc.abs_norms, "save_raw_tensor": rc.save_raw_tensor, "save_shape": rc.save_shape}
    if call == "collection.save_config":
        sc = trial.collection(args["coll_name"]).save_config
        if sc is None:
            return None
        out = {}
        for mode, m in sc.mode_save_configs.items():
            out[mode.name] = None if m is None else {"save_interval": m.save_interval, "save_steps": m.save_steps,
                                                     "start_step": m.start_step, "end_step": m.end_step}
        return out
    if call == "tensor.steps":
        return tensor().steps(mode=_mode(args), show_incomplete_steps=args.get("show_incomplete_steps", False))
    if call == "tensor.workers":
        return tensor().workers(args["step_num"], mode=_mode(args))
    if call == "tensor.value":
        return encode_array(tensor().value(args["step_num"], mode=_mode(args), worker=args.get("worker")))
    if call == "tensor.values":
        vals = tensor().values(mode=_mode(args), worker=args.get("worker"))
        return [{"step": s, "value": encode_array(v)} for s, v in sorted(vals.items())]
    if call == "tensor.shape":
        return list(tensor().shape(args["step_num"], mode=_mode(args), worker=args.get("worker")))
    if call == "tensor.reduction_value":
        return encode_scalar(tensor().reduction_value(args["step_num"], args["reduction_name"], mode=_mode(args),
                                                      worker=args.get("worker"), abs=args.get("abs", False)))
    if call == "tensor.reduction_values":
        rv = tensor().reduction_values(args["step_num"], mode=_mode(args), worker=args.get("worker"))
        return [{"reduction": n, "abs": a, "value": encode_scalar(v)} for (n, a), v in rv.items()]
    if call == "tensor.prev_steps":
        return tensor().prev_steps(args["step"], n=args.get("n"), mode=_mode(args))
    raise NotImplementedError("unsupported call " + call)


# ---- comparison (SCHEMA.md §7, §10.2) -----------------------------------------------------------

def _as_double(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(v) if isinstance(v, str) else None


def _float_equal(e, g, tol):
    x, y = _as_double(e), _as_double(g)
    if x is None or y is None:
        return False
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    if tol["rtol"] == 0 and tol["atol"] == 0:
        return x == y
    return abs(y - x) <= tol["atol"] + tol["rtol"] * abs(x)


def _is_array(v):
    return isinstance(v, dict) and {"dtype", "shape", "data"} <= v.keys()


def _array_equal(e, g, tol):
    ed, gd, dtype = e["data"], g["data"], e["dtype"]
    if tol["relaxed_scalar"]:
        if len(ed) != 1 or len(gd) != 1:
            return False
        if dtype == "bool":
            return _as_double(gd[0]) == (1.0 if ed[0] else 0.0)
        return _float_equal(ed[0], gd[0], tol)
    if tol["check_dtype"] and e["dtype"] != g["dtype"]:
        return False
    if e["shape"] != g["shape"] or len(ed) != len(gd):
        return False
    floaty = dtype.startswith("float") or dtype.startswith("complex")
    for x, y in zip(ed, gd):
        if floaty:
            if isinstance(x, list):
                if not (isinstance(y, list) and len(x) == len(y) == 2 and all(_float_equal(a, b, tol) for a, b in zip(x, y))):
                    return False
            elif not _float_equal(x, y, tol):
                return False
        elif isinstance(x, (int, float)) and not isinstance(x, bool) and isinstance(y, (int, float)) and not isinstance(y, bool):
            if (isinstance(x, float) or isinstance(y, float)) and not _float_equal(x, y, tol):
                return False
            if isinstance(x, int) and isinstance(y, int) and x != y:
                return False
        elif x != y or type(x) is not type(y):
            return False
    return True


def equal(e, g, tol):
    if _is_array(e):
        return _is_array(g) and _array_equal(e, g, tol)
    if isinstance(e, dict):
        if not isinstance(g, dict) or len(e) != len(g):
            return False
        for k, v in e.items():
            if k not in g:
                return False
            if k == "tensor_names" and isinstance(v, list) and isinstance(g[k], list):
                if sorted(v) != sorted(g[k]):
                    return False
            elif not equal(v, g[k], tol):
                return False
        return True
    if isinstance(e, list):
        return isinstance(g, list) and len(e) == len(g) and all(equal(a, b, tol) for a, b in zip(e, g))
    if isinstance(e, bool) or isinstance(g, bool):
        return type(e) is type(g) and e == g
    if isinstance(e, (int, float)) and isinstance(g, (int, float)):
        if isinstance(e, float) or isinstance(g, float):
            return _float_equal(e, g, tol)
        return e == g
    return e == g


def _sorted(v, call):
    if not isinstance(v, list):
        return v
    if call == "tensor.reduction_values":
        key = (lambda x: (x["reduction"], x["abs"]) if isinstance(x, dict) else ("", False))
    else:
        key = (lambda x: json.dumps(x, sort_keys=True))
    return sorted(v, key=key)


# ---- running ------------------------------------------------------------------------------------

class Totals:
    def __init__(self):
        self.passed = self.failed = 0
        self.per_deviation = {}
        self.per_call = {}


def run_block(case, block, trial_path, totals, quiet, out):
    kwargs = {}
    rs = (block.get("trial_args") or {}).get("range_steps")
    if rs is not None:
        kwargs["range_steps"] = tuple(rs)
    trial = create_trial(trial_path, **kwargs)
    for q in block["queries"]:
        call = q["call"]
        cpp = q.get("cpp")
        want = cpp if cpp and cpp["deviation"] not in PYTHON_FOLLOWS_REFERENCE else q
        got, got_error = None, None
        try:
            got = run_query(trial, q)
        except Exception as e:  # compared by class name, as the C++ runner does
            got_error = type(e).__name__
        if "raises" in want:
            ok = got_error == want["raises"]
            expected_text = "raises " + want["raises"]
        else:
            tol = {"rtol": want.get("rtol", 0.0), "atol": want.get("atol", 0.0),
                   "check_dtype": want.get("check_dtype", True),
                   "relaxed_scalar": call in ("tensor.reduction_value", "tensor.reduction_values")}
            ok = False
            if got_error is None:
                if q.get("unordered") or call == "tensor.reduction_values":
                    ok = equal(_sorted(want["result"], call), _sorted(got, call), tol)
                else:
                    ok = equal(want["result"], got, tol)
            expected_text = json.dumps(want["result"])[:300]
        pc = totals.per_call.setdefault(call, [0, 0])
        pc[1] += 1
        if "cpp" in q:
            d = totals.per_deviation.setdefault(q["cpp"]["deviation"], [0, 0])
            d[1] += 1
            d[0] += ok
        if ok:
            totals.passed += 1
            pc[0] += 1
        else:
            totals.failed += 1
            if not quiet:
                got_text = ("raises " + got_error) if got_error else json.dumps(got)[:300]
                print(f"FAIL {case}/{block['name']}#{q['id']} {call} tensor={q.get('tensor')} args={json.dumps(q['args'])}"
                      f"\n    expected: {expected_text}\n    got:      {got_text}", file=out)


def run(cases_dir=DEFAULT_CASES, s3_base=None, quiet=False, out=sys.stdout, upload=None):
    """Runs every case under cases_dir; returns Totals. With s3_base, each case's trial is read
    from s3_base/<case> (uploaded there by `upload(local_dir, s3_url)` when given)."""
    cases = sorted(d for d in (os.path.join(cases_dir, n) for n in os.listdir(cases_dir))
                   if os.path.exists(os.path.join(d, "expected.json")))
    if not cases:
        raise FileNotFoundError(f"no conformance cases (folders with expected.json) under {cases_dir}")
    totals = Totals()
    for case_dir in cases:
        case = os.path.basename(case_dir)
        with open(os.path.join(case_dir, "expected.json")) as f:
            expected = json.load(f)
        if expected["schema_version"] != 1:
            raise ValueError(f"{case}: unsupported schema_version {expected['schema_version']}")
        trial_path = os.path.join(case_dir, expected["trial_dir"])
        if s3_base:
            local = trial_path
            trial_path = s3_base.rstrip("/") + "/" + case
            if upload:
                upload(local, trial_path)
        for block in expected["blocks"]:
            try:
                run_block(case, block, trial_path, totals, quiet, out)
            except Exception as e:
                n = len(block["queries"])
                print(f"FAIL {case}/{block['name']}: block aborted ({type(e).__name__}: {e}); {n} queries counted as failed",
                      file=out)
                totals.failed += n
    return totals


def main(argv):
    s3 = None
    quiet = "--quiet" in argv
    rest = [a for a in argv if a != "--quiet"]
    if "--s3" in rest:
        i = rest.index("--s3")
        s3 = rest[i + 1]
        del rest[i:i + 2]
    totals = run(rest[0] if rest else DEFAULT_CASES, s3, quiet)
    print("per call:")
    for k, (p, n) in sorted(totals.per_call.items()):
        print(f"  {k}: {p}/{n}")
    print("per deviation:")
    for k, (p, n) in sorted(totals.per_deviation.items()):
        print(f"  {k}: {p}/{n}")
    print(f"{totals.passed} passed, {totals.failed} failed")
    return 1 if totals.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
