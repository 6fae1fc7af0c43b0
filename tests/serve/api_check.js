// CTest serve.api: every endpoint of `smdebug serve`'s JSON API on the conformance trials, compared
// with the library's answers through the CLI (summary, tensors, collections, reductions, value, rule):
//   node api_check.js SMDEBUG CASES_DIR MAKE_ANALYSIS_TRIALS WORK_DIR
// /api/v1/diagnose and /api/v1/diff on the MLP trials of tests/analysis/make_analysis_trials.cpp,
// equal to `smdebug diagnose --json` / `smdebug diff --json`; `serve` on a path without a trial
// fails at once (exit 2) unless --wait.
// Also the refusals: unknown run/tensor/worker/rule (404), bad parameters (400), a foreign Host
// (403), other methods (405), and the event stream's first events.
"use strict";
const path = require("path");
const http = require("http");
const fs = require("fs");
const { spawnSync } = require("child_process");
const { check, finish, startServe, stopServe, request, get, cli, cliJson, sameNumber } = require("./common.js");

const [SMDEBUG, CASES, MAKE_ANALYSIS_TRIALS, WORK] = process.argv.slice(2);
const CASE_NAMES = ["pt_train_eval", "multiworker_incomplete", "dtype_zoo", "ongoing_no_end"];
const trialOf = (c) => path.join(CASES, c, "trial");

function numpyHistogram(values, bins) {
  const finite = values.filter(Number.isFinite);
  let lo = Math.min(...finite), hi = Math.max(...finite);
  if (!finite.length) { lo = 0; hi = 1; }
  if (lo === hi) { lo -= 0.5; hi += 0.5; }
  const counts = new Array(bins).fill(0);
  for (const v of finite) counts[Math.min(Math.floor(((v - lo) / (hi - lo)) * bins), bins - 1)]++;
  return { lo, hi, counts, nonFinite: values.length - finite.length };
}

// The library's values of `reduction` of tensor `name` for worker `w`, by global step: one
// `smdebug reductions --json` call; when the worker is missing at some step (the library's query
// raises InvalidWorker there, as the reference does), one call per step the API listed, each
// loading only that step (--steps).
function libValues(trial, name, w, reduction, abs, apiSteps) {
  const key = abs ? "abs_" + reduction : reduction;
  const args = ["reductions", trial, name, "--worker", w, "--json", "--reduction", reduction, ...(abs ? ["--abs"] : [])];
  const out = new Map();
  const all = cli(SMDEBUG, args);
  if (all.status === 0) {
    for (const row of JSON.parse(all.stdout).rows) if (row[key] !== undefined) out.set(row.step, row[key]);
    return out;
  }
  check(/unknown worker/.test(all.stderr), `smdebug ${args.join(" ")}: ${all.stderr}`);
  for (const step of apiSteps) {
    const one = cli(SMDEBUG, [...args, "--steps", `${step}:${step + 1}`]);
    if (!check(one.status === 0, `smdebug ${args.join(" ")} --steps ${step}:${step + 1}: ${one.stderr}`)) continue;
    for (const row of JSON.parse(one.stdout).rows) if (row.step === step && row[key] !== undefined) out.set(row.step, row[key]);
  }
  return out;
}
const close = (a, b) => Math.abs(Number(a) - b) <= 1e-6 * Math.max(1, Math.abs(b));

async function waitReady(port) {
  for (let i = 0; i < 200; i++) {
    const runs = (await get(port, "/api/v1/runs")).json;
    if (runs.every((r) => !r.loading)) return runs;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the runs did not open in 20 s");
}

async function main() {
  const s = await startServe(SMDEBUG, CASE_NAMES.map((c) => `${c}=${trialOf(c)}`));
  const port = s.port;
  try {
    const runs = await waitReady(port);
    check(runs.length === CASE_NAMES.length, "runs: one per PATH");
    for (const c of CASE_NAMES) {
      const trial = trialOf(c);
      const run = runs.find((r) => r.run === c);
      const summary = cliJson(SMDEBUG, ["summary", trial, "--json"]);
      check(JSON.stringify(run.workers) === JSON.stringify(summary.workers), `${c}: workers ${run.workers} vs ${summary.workers}`);
      check(run.steps === summary.num_steps, `${c}: steps ${run.steps} vs ${summary.num_steps}`);
      check(run.last_step === summary.last_step, `${c}: last_step ${run.last_step} vs ${summary.last_step}`);
      check(run.ended === summary.training_ended, `${c}: ended ${run.ended} vs ${summary.training_ended}`);

      // tensors: names, collections, shapes and dtypes
      const tensors = (await get(port, "/api/v1/tensors", { run: c })).json;
      const names = cli(SMDEBUG, ["tensors", trial]).stdout.split("\n").filter(Boolean);
      check(JSON.stringify(tensors.map((t) => t.name)) === JSON.stringify(names), `${c}: tensor names`);
      for (const line of cli(SMDEBUG, ["collections", trial]).stdout.split("\n").filter(Boolean)) {
        const coll = line.split("\t")[0];
        const members = cli(SMDEBUG, ["tensors", trial, "--collection", coll]).stdout.split("\n").filter(Boolean);
        for (const t of tensors)
          check(t.collections.includes(coll) === members.includes(t.name), `${c}: ${t.name} in collection ${coll}`);
      }
      for (const t of tensors.slice(0, 6)) {
        const info = cliJson(SMDEBUG, ["dump", trial, "--json"]).tensors?.find?.((x) => x.name === t.name);
        if (info && info.dtype) check(info.dtype === t.dtype, `${c}: ${t.name} dtype ${t.dtype} vs ${info.dtype}`);
      }

      // scalars: every reduction asked (mean, abs l2) and the value of one-element tensors, per worker,
      // against `smdebug reductions --json --worker W` (stored reduction if saved, else computed)
      for (const t of tensors) {
        if (t.dtype === "string" || t.dtype === null) continue;
        for (const w of run.workers) {
          for (const [reduction, abs] of [["mean", false], ["l2", true], ["min", false]]) {
            const key = abs ? "abs_" + reduction : reduction;
            const params = { run: c, tensor: t.name, worker: w };
            const oneElement = reduction === "min";  // the value itself: min of one element
            if (oneElement && !(t.shape && t.shape.reduce((a, b) => a * b, 1) === 1)) continue;
            if (!oneElement) params.reduction = reduction;
            if (abs) params.abs = 1;
            const r = await get(port, "/api/v1/scalars", params);
            if (r.status === 400) {  // the library reduces none of the values (an empty tensor, text): n/a at every step
              const lib = libValues(trial, t.name, w, reduction, abs, []);
              check(lib.size > 0 && [...lib.values()].every((v) => v === null), `${c}: ${t.name} ${w} ${key}: 400 (${r.body}) but the library has values`);
              continue;
            }
            if (!check(r.status === 200, `${c}: scalars ${t.name} ${w} ${key}: ${r.status} ${r.body.slice(0, 200)}`)) continue;
            const got = new Map();
            for (const se of r.json.series) {
              check(se.worker === w, `${c}: series of worker ${se.worker} when ${w} was asked`);
              se.steps.forEach((st, i) => got.set(st, se.values[i]));
            }
            const lib = libValues(trial, t.name, w, reduction, abs, [...got.keys()]);
            check(got.size === lib.size, `${c}: ${t.name} ${w} ${key}: ${got.size} points vs the library's ${lib.size}`);
            for (const [step, v] of lib)
              check(got.has(step) && sameNumber(got.get(step), v), `${c}: ${t.name} ${w} ${key} step ${step}: ${got.get(step)} vs ${v}`);
          }
        }
      }

      // histogram of each numeric tensor at its last step, against the value `smdebug value` prints
      for (const t of tensors.slice(0, 12)) {
        if (t.dtype === "string" || t.dtype === null || !t.shape || t.shape.reduce((a, b) => a * b, 1) === 0) continue;
        const all = (await get(port, "/api/v1/scalars", { run: c, tensor: t.name, reduction: "max", worker: run.workers[0] })).json;
        const steps = all.series.flatMap((se) => se.steps);
        if (!steps.length) continue;
        const step = Math.max(...steps);
        const v = cliJson(SMDEBUG, ["value", trial, t.name, String(step), "--worker", run.workers[0], "--format", "json", "--full"]);
        const flat = [v.values].flat(Infinity).map((x) => (x === null ? NaN : typeof x === "boolean" ? Number(x) : Number(x)));
        const h = (await get(port, "/api/v1/histogram", { run: c, tensor: t.name, step, bins: 7, worker: run.workers[0] })).json;
        const want = numpyHistogram(flat, 7);
        check(JSON.stringify(h.counts) === JSON.stringify(want.counts), `${c}: histogram ${t.name}@${step}: ${h.counts} vs ${want.counts}`);
        check(h.edges.length === 8 && close(h.edges[0], want.lo) && close(h.edges[7], want.hi),
              `${c}: histogram ${t.name} edges ${h.edges[0]}..${h.edges[7]} vs ${want.lo}..${want.hi}`);
      }

      // rules, as `smdebug rule` runs them over the same steps
      // (`smdebug rule` waits for the steps of a running job: it is given the complete ones, the server's)
      const complete = cli(SMDEBUG, ["steps", trial]).stdout.split("\n").filter(Boolean).map((l) => Number(l.split("\t")[0]));
      if (complete.length) {
        for (const [rule, params] of [["ExplodingTensor", {}], ["AllZero", { tensor_regex: ".*" }], ["VanishingGradient", { threshold: "0.5" }]]) {
          const args = ["rule", trial, rule, "--end-step", String(complete[complete.length - 1] + 1)];
          for (const [k, v] of Object.entries(params)) args.push("--param", `${k}=${v}`);
          const lib = cli(SMDEBUG, args).stdout.split("\n").filter(Boolean);
          const r = await get(port, "/api/v1/rules", { run: c, rule, ...params });
          if (!check(r.status === 200, `${c}: rules ${rule}: ${r.status} ${r.body}`)) continue;
          // `smdebug rule` prints one line per step: its first finding, then the other tensors fired on
          const steps = [];
          for (const f of r.json.fired) {
            if (steps.length && steps[steps.length - 1][0].step === f.step) steps[steps.length - 1].push(f);
            else steps.push([f]);
          }
          const got = steps.map(([f, ...others]) => {
            const mode = f.mode && f.mode !== "GLOBAL" && f.mode_step !== null ? ` (${f.mode} step ${f.mode_step})` : "";
            if (!others.length) return `step ${f.step}${mode} ${f.message}`;
            const what = others.every((o) => o.tensor) ? "tensor" : "finding";
            return `step ${f.step}${mode} ${f.message} (and ${others.length} more ${what}${others.length === 1 ? "" : "s"}: ` +
                   others.map((o) => o.tensor || o.message).join(", ") + ")";
          });
          check(JSON.stringify(got) === JSON.stringify(lib), `${c}: ${rule} fired ${JSON.stringify(got)} vs ${JSON.stringify(lib)}`);
          // the tensors it inspected, as `smdebug rule` counts them on its last line
          const counted = /of (\d+) tensors? in /.exec(cli(SMDEBUG, args).stderr);
          check(counted && r.json.checked_tensors === Number(counted[1]), `${c}: ${rule} checked_tensors ${r.json.checked_tensors} vs ${counted && counted[1]}`);
        }
      }
    }

    // down-sampling keeps each bucket's minimum and maximum
    const full = (await get(port, "/api/v1/scalars", { run: "pt_train_eval", tensor: "MLP_fc1.weight", reduction: "std" })).json.series[0];
    const small = (await get(port, "/api/v1/scalars", { run: "pt_train_eval", tensor: "MLP_fc1.weight", reduction: "std", max_points: 4 })).json.series[0];
    check(small.values.length <= 4 && small.values.length >= 2, `max_points=4 gave ${small.values.length} points`);
    check(small.values.includes(Math.max(...full.values)) && small.values.includes(Math.min(...full.values)), "max_points keeps the minimum and maximum");

    // refusals
    const expect = async (status, p, params, what) => {
      const r = await get(port, p, params);
      check(r.status === status && r.json && typeof r.json.error === "string", `${what}: ${r.status} ${r.body}`);
    };
    await expect(404, "/api/v1/tensors", { run: "nope" }, "unknown run");
    await expect(404, "/api/v1/scalars", { run: "pt_train_eval", tensor: "nope" }, "unknown tensor");
    await expect(404, "/api/v1/scalars", { run: "pt_train_eval", tensor: "MLP_fc1.weight", reduction: "mean", worker: "nope" }, "unknown worker");
    await expect(404, "/api/v1/rules", { run: "pt_train_eval", rule: "NoSuchRule" }, "unknown rule");
    await expect(400, "/api/v1/scalars", { run: "pt_train_eval", tensor: "MLP_fc1.weight" }, "a tensor of many elements without a reduction");
    await expect(400, "/api/v1/scalars", { run: "pt_train_eval", tensor: "MLP_fc1.weight", reduction: "median" }, "unknown reduction");
    await expect(400, "/api/v1/scalars", { run: "pt_train_eval", tensor: "MLP_fc1.weight", reduction: "mean", max_points: 1000000 }, "max_points over the cap");
    await expect(400, "/api/v1/scalars", { run: "pt_train_eval", tensor: "MLP_fc1.weight", reduction: "mean", mode: "SOMETIMES" }, "bad mode");
    await expect(400, "/api/v1/histogram", { run: "pt_train_eval", tensor: "MLP_fc1.weight", step: "x" }, "bad step");
    await expect(400, "/api/v1/histogram", { run: "pt_train_eval", tensor: "MLP_fc1.weight", step: 0, bins: 5000 }, "bins over the cap");
    await expect(400, "/api/v1/rules", { run: "pt_train_eval", rule: "AllZero", bogus: 1 }, "unknown rule parameter");
    await expect(400, "/api/v1/scalars", { run: "pt_train_eval" }, "missing tensor");
    const bad = await request(port, "/api/v1/tensors?run=%zz");
    check(bad.status === 400, `malformed %-escape: ${bad.status}`);
    const foreign = await request(port, "/api/v1/runs", { host: `evil.example:${port}` });
    check(foreign.status === 403, `foreign Host: ${foreign.status}`);
    const rebinding = await request(port, "/", { host: `evil.example` });
    check(rebinding.status === 403, `foreign Host on the page: ${rebinding.status}`);
    const local = await request(port, "/api/v1/runs", { host: `localhost:${port}` });
    check(local.status === 200, `Host localhost: ${local.status}`);
    const post = await request(port, "/api/v1/runs", { method: "POST" });
    check(post.status === 405, `POST: ${post.status}`);
    const escape = await request(port, "/../../etc/passwd");
    check(escape.status === 404, `a path outside the page: ${escape.status}`);
    const page = await request(port, "/");
    check(page.status === 200 && /<title>smdebug serve<\/title>/.test(page.body) && /script-src 'self'/.test(page.headers["content-security-policy"] || ""),
          "the page, with its Content-Security-Policy");

    // the event stream starts with each run's status
    const events = await new Promise((resolve, reject) => {
      const req = http.get({ host: "127.0.0.1", port, path: "/api/v1/events", headers: { Host: `127.0.0.1:${port}` } }, (res) => {
        let text = "";
        res.on("data", (d) => {
          text += d;
          if ((text.match(/event: run\n/g) || []).length >= CASE_NAMES.length) { req.destroy(); resolve({ res, text }); }
        });
      });
      req.on("error", (e) => (e.code === "ECONNRESET" ? null : reject(e)));
      setTimeout(() => reject(new Error("no events in 10 s")), 10000);
    });
    check(/text\/event-stream/.test(events.res.headers["content-type"]), "events: content type");
    for (const c of CASE_NAMES) check(events.text.includes(`"run":"${c}"`), `events: a status of ${c}`);
  } finally {
    const code = await stopServe(s);
    check(code === 0 || code === null, `smdebug serve exited with ${code} on SIGTERM`);
  }
  finish("serve.api");
}
// The analysis endpoints answer what the CLI answers (exit 1 there: something is wrong / the runs differ).
function cliAnalysis(args) {
  const r = cli(SMDEBUG, [...args, "--json"]);
  check(r.status === 0 || r.status === 1, `smdebug ${args.join(" ")} --json: exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function analysis() {
  check(Boolean(MAKE_ANALYSIS_TRIALS) && fs.existsSync(MAKE_ANALYSIS_TRIALS), "make_analysis_trials is needed (tests/cmake/serve.cmake)");
  const dir = path.join(WORK, "analysis");
  fs.rmSync(dir, { recursive: true, force: true });
  const made = spawnSync(MAKE_ANALYSIS_TRIALS, [dir], { encoding: "utf8" });
  check(made.status === 0, `make_analysis_trials: ${made.stderr}`);
  const names = ["clean", "inf", "parted"];
  const s = await startServe(SMDEBUG, names.map((n) => `${n}=${path.join(dir, n)}`));
  const port = s.port;
  try {
    await waitReady(port);
    const inf = await get(port, "/api/v1/diagnose", { run: "inf" });
    check(inf.status === 200, `diagnose: ${inf.status}`);
    const f = inf.json.first_nonfinite;
    check(f && f.step === 16 && f.mode === "TRAIN" && f.mode_step === 12 && f.tensor === "fc2_output_0" && f.inputs.fc2_input_0 === "finite",
          `diagnose inf: ${JSON.stringify(f)}`);
    check(JSON.stringify(inf.json) === JSON.stringify(cliAnalysis(["diagnose", path.join(dir, "inf")])), "diagnose: the API equals the CLI");
    const clean = await get(port, "/api/v1/diagnose", { run: "clean" });
    check(clean.status === 200 && clean.json.first_nonfinite === null && clean.json.findings.length === 0, `diagnose clean: ${clean.body}`);
    const d = await get(port, "/api/v1/diff", { run: "clean", other: "parted" });
    check(d.status === 200 && d.json.first_difference && d.json.first_difference.step === 10 && d.json.first_difference.tensor === "fc2.weight",
          `diff: ${d.body}`);
    check(JSON.stringify(d.json) === JSON.stringify(cliAnalysis(["diff", path.join(dir, "clean"), path.join(dir, "parted")])), "diff: the API equals the CLI");
    const tol = await get(port, "/api/v1/diff", { run: "clean", other: "parted", rtol: "0.01", atol: "0.01" });
    check(tol.status === 200 && tol.json.first_difference === null, `diff with a tolerance: ${tol.body}`);
    check((await get(port, "/api/v1/diff", { run: "clean" })).status === 400, "diff without other: 400");
    check((await get(port, "/api/v1/diff", { run: "clean", other: "nope" })).status === 404, "diff with an unknown run: 404");
    check((await get(port, "/api/v1/diff", { run: "clean", other: "parted", rtol: "-1" })).status === 400, "diff with rtol -1: 400");
    check((await get(port, "/api/v1/diagnose", { run: "nope" })).status === 404, "diagnose of an unknown run: 404");
  } finally {
    await stopServe(s);
  }
  // a path without a trial fails at once; --wait waits for it
  const none = spawnSync(SMDEBUG, ["serve", path.join(dir, "nowhere"), "--port", "0"], { encoding: "utf8", timeout: 10000 });
  check(none.status === 2 && /no such trial folder/.test(none.stderr), `serve on a missing path: exit ${none.status}, ${none.stderr}`);
  const waiting = await startServe(SMDEBUG, [path.join(dir, "nowhere"), "--wait"]);
  await stopServe(waiting);
}

main().then(analysis).then(() => finish("serve.api analysis")).catch((e) => {
  console.error(e);
  process.exit(1);
});
