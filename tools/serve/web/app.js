// The page of `smdebug serve`: plain JavaScript over the JSON API (docs/serve.md). Every name that
// comes from a trial (runs, tensors, workers, collections, findings) is put in the page as text
// (textContent, option.text), never as markup.
"use strict";

const api = (path, params) => {
  const q = new URLSearchParams(params || {});
  return fetch("api/v1/" + path + (q.toString() ? "?" + q : "")).then(async (r) => {
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  });
};
const $ = (id) => document.getElementById(id);
function el(tag, text, props) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (props) Object.assign(e, props);
  return e;
}
// Axis ticks with 4 significant digits: small values (gradients) keep their digits and their sign.
const tickText = (v) => (v === null || v === undefined ? "" : String(Number(v.toPrecision(4))));
const num = (v) => (typeof v === "string" ? Number(v) : v);  // "NaN", "Infinity", "-Infinity"

// What the tests read (tests/serve/browser_check.js): the data the chart draws, and when.
const state = {
  runs: new Map(),           // name -> status
  tensors: new Map(),        // run -> [{name, collections, shape, dtype}]
  selected: null,            // tensor name
  chart: null, hist: null,
  chartSeries: [],           // [{run, worker, mode, steps, values}] as the API gave them
  chartDrawnAt: null, chartDraws: 0,
  firings: [],               // [{run, step, tensor, message}]
};
window.smdebugServe = state;

const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

// ---- runs ----------------------------------------------------------------------------------------
function renderRuns() {
  const body = $("runs").tBodies[0];
  body.replaceChildren();
  for (const s of state.runs.values()) {
    const tr = el("tr");
    tr.append(el("td", s.run), el("td", s.path, { className: "path" }), el("td", s.steps),
      el("td", s.last_step === null ? "—" : s.last_step),
      el("td", s.workers.length <= 4 ? s.workers.join(", ") : s.workers.length + " workers"),
      el("td", s.error ? "waiting: " + s.error : s.loading ? "loading" : s.ended ? "ended" : "running",
         { className: s.error ? "error" : "" }));
    body.append(tr);
  }
  const workers = new Set();
  for (const s of state.runs.values()) for (const w of s.workers) workers.add(w);
  const sel = $("worker");
  const current = sel.value;
  if (sel.options.length - 1 !== Math.min(workers.size, 2000)) {
    sel.replaceChildren(el("option", "all (band over 8)", { value: "" }));
    for (const w of [...workers].sort().slice(0, 2000)) sel.append(el("option", w, { value: w }));
    sel.value = current;
  }
}

async function loadRuns() {
  for (const s of await api("runs")) state.runs.set(s.run, s);
  renderRuns();
}

// ---- tensors -------------------------------------------------------------------------------------
async function loadTensors() {
  await Promise.all([...state.runs.keys()].map(async (run) => state.tensors.set(run, await api("tensors", { run }))));
  renderTensors();
}

function renderTensors() {
  const box = $("tensors");
  let re = null;
  $("filter-error").textContent = "";
  try {
    re = $("filter").value ? new RegExp($("filter").value) : null;
  } catch (e) {
    $("filter-error").textContent = e.message;
  }
  const groups = new Map();  // collection -> Set(names)
  for (const list of state.tensors.values())
    for (const t of list) {
      if (re && !re.test(t.name)) continue;
      const cs = t.collections.length ? t.collections : ["(no collection)"];
      for (const c of cs) {
        if (!groups.has(c)) groups.set(c, new Set());
        groups.get(c).add(t.name);
      }
    }
  const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.collection));
  box.replaceChildren();
  for (const [c, names] of [...groups].sort((a, b) => a[0].localeCompare(b[0]))) {
    const d = el("details");
    d.dataset.collection = c;
    d.open = open.size === 0 || open.has(c) || groups.size <= 6;
    d.append(el("summary", c + " (" + names.size + ")"));
    const ul = el("ul");
    for (const n of [...names].sort()) {
      const li = el("li", n, { title: n });
      li.dataset.tensor = n;
      if (n === state.selected) li.classList.add("selected");
      li.addEventListener("click", () => selectTensor(n));
      ul.append(li);
    }
    d.append(ul);
    box.append(d);
  }
  if (!state.selected) {
    const first = box.querySelector("li");
    if (first) selectTensor(first.dataset.tensor);
  }
}

function tensorInfo(name) {
  for (const list of state.tensors.values()) {
    const t = list.find((x) => x.name === name);
    if (t) return t;
  }
  return null;
}

function selectTensor(name) {
  state.selected = name;
  for (const li of $("tensors").querySelectorAll("li")) li.classList.toggle("selected", li.dataset.tensor === name);
  const info = tensorInfo(name);
  const elements = info && info.shape ? info.shape.reduce((a, b) => a * b, 1) : 1;
  // A tensor of one element is charted as its value; a larger one as its mean (any reduction on demand).
  $("reduction").value = elements === 1 ? "" : $("reduction").value || "mean";
  drawChart();
}

// ---- the chart -----------------------------------------------------------------------------------
let drawing = null, drawAgain = false;
async function drawChart() {
  if (drawing) { drawAgain = true; return drawing; }
  drawing = (async () => {
    try { await drawChartNow(); } finally { drawing = null; }
    if (drawAgain) { drawAgain = false; await drawChart(); }
  })();
  return drawing;
}

function chartParams(run) {
  const p = { run, tensor: state.selected, max_points: 4000 };
  if ($("reduction").value) p.reduction = $("reduction").value;
  if ($("abs").checked && p.reduction) p.abs = 1;
  if ($("mode").value) p.mode = $("mode").value;
  if ($("worker").value) p.worker = $("worker").value;
  return p;
}

async function drawChartNow() {
  const name = state.selected;
  if (!name) return;
  const reduction = $("reduction").value;
  $("chart-title").textContent = name + (reduction ? " — " + ($("abs").checked ? "abs " : "") + reduction : "");
  const msg = $("chart-message");
  const series = [];
  const errors = [];
  await Promise.all([...state.runs.keys()].map(async (run) => {
    if (!(state.tensors.get(run) || []).some((t) => t.name === name)) return;
    try {
      const r = await api("scalars", chartParams(run));
      for (const s of r.series) series.push({ run, ...s, values: s.values.map(num) });
    } catch (e) {
      errors.push(run + ": " + e.message);
    }
  }));
  if (name !== state.selected) return;
  series.sort((a, b) => (a.run + "\u0000" + a.worker + "\u0000" + a.mode).localeCompare(b.run + "\u0000" + b.worker + "\u0000" + b.mode));
  state.chartSeries = series;
  msg.textContent = errors.join("; ");
  msg.className = errors.length ? "message error" : "message";
  if (typeof uPlot === "undefined") {
    msg.textContent = "This build of smdebug has no chart library (uPlot): run `npm ci` in tools/serve/web and build again. " +
      series.length + " series read.";
    return;
  }
  // Lines: per run, one per worker x mode; a run with more than 8 workers is drawn as its min, mean and max over workers.
  const lines = [];
  const byRun = new Map();
  for (const s of series) {
    if (!byRun.has(s.run)) byRun.set(s.run, []);
    byRun.get(s.run).push(s);
  }
  for (const [run, list] of byRun) {
    const workers = new Set(list.map((s) => s.worker));
    if (workers.size > 8 && !$("worker").value) {
      const acc = new Map();  // step -> [min, sum, max, n]
      for (const s of list)
        s.steps.forEach((step, i) => {
          const v = s.values[i];
          if (!Number.isFinite(v)) return;
          const a = acc.get(step);
          if (a) { a[0] = Math.min(a[0], v); a[1] += v; a[2] = Math.max(a[2], v); a[3]++; }
          else acc.set(step, [v, v, v, 1]);
        });
      const steps = [...acc.keys()].sort((a, b) => a - b);
      const pick = (f) => steps.map((st) => f(acc.get(st)));
      lines.push({ label: run + " min (" + workers.size + " workers)", steps, values: pick((a) => a[0]), band: "min" });
      lines.push({ label: run + " mean", steps, values: pick((a) => a[1] / a[3]), band: "mean" });
      lines.push({ label: run + " max", steps, values: pick((a) => a[2]), band: "max" });
    } else {
      for (const s of list) lines.push({ label: run + " " + s.worker + (s.mode !== "GLOBAL" ? " " + s.mode : ""), steps: s.steps, values: s.values });
    }
  }
  const xs = [...new Set(lines.flatMap((l) => l.steps))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const data = [xs];
  const opts = {
    width: Math.max(400, $("chart").clientWidth || 800), height: 360,
    scales: { x: { time: false } },
    axes: [{ label: "step", values: (u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : "")) },  // steps are whole
           { size: 80, values: (u, splits) => splits.map(tickText) }],
    series: [{ label: "step" }],
    bands: [],
    cursor: { drag: { x: true, y: false } },  // drag to zoom, double-click to zoom out
    hooks: { draw: [drawFirings], ready: [wheelZoomAndPan] },
  };
  lines.forEach((l, k) => {
    const col = new Array(xs.length).fill(null);
    l.steps.forEach((st, i) => { const v = l.values[i]; col[index.get(st)] = Number.isFinite(v) ? v : null; });
    data.push(col);
    const colour = palette[(l.band ? lines.indexOf(lines.find((m) => m.band === "min" && m.label.startsWith(l.label.split(" ")[0]))) : k) % palette.length];
    opts.series.push({ label: l.label, stroke: colour, width: l.band === "mean" ? 2 : 1, spanGaps: false,
                       points: { show: xs.length < 200 } });
    if (l.band === "max") opts.bands.push({ series: [k + 1, k - 1], fill: colour + "33" });
  });
  if (state.chart) state.chart.destroy();
  $("chart").replaceChildren();
  state.chart = new uPlot(opts, data, $("chart"));
  state.chartDraws++;
  state.chartDrawnAt = performance.now();
  if (!$("hist-step").value && xs.length) $("hist-step").value = xs[xs.length - 1];
}

// Zoom with the wheel around the cursor; pan with shift+drag or the middle button (uPlot itself
// zooms on a drag and zooms out on a double-click).
function wheelZoomAndPan(u) {
  const over = u.over;
  over.addEventListener("wheel", (e) => {
    e.preventDefault();
    const { min, max } = u.scales.x;
    const at = u.posToVal(e.offsetX, "x");
    const range = (max - min) * (e.deltaY < 0 ? 0.8 : 1.25);
    const left = at - (e.offsetX / over.clientWidth) * range;
    u.setScale("x", { min: left, max: left + range });
  }, { passive: false });
  over.addEventListener("mousedown", (e) => {
    if (e.button !== 1 && !(e.button === 0 && e.shiftKey)) return;
    e.preventDefault();
    e.stopImmediatePropagation();  // not uPlot's drag-to-zoom
    const x0 = e.clientX, { min, max } = u.scales.x, perPixel = (max - min) / over.clientWidth;
    const move = (ev) => { const d = (ev.clientX - x0) * perPixel; u.setScale("x", { min: min - d, max: max - d }); };
    const up = () => { document.removeEventListener("mousemove", move); document.removeEventListener("mouseup", up); };
    document.addEventListener("mousemove", move);
    document.addEventListener("mouseup", up);
  }, true);
}

// Rule firings on the shown tensor (or on no tensor in particular) as red marks at their steps.
function drawFirings(u) {
  const steps = new Set(state.firings.filter((f) => f.tensor === state.selected || f.tensor === "").map((f) => f.step));
  if (!steps.size) return;
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = "#d62728";
  ctx.fillStyle = "#d62728";
  ctx.lineWidth = 1;
  for (const step of steps) {
    const x = u.valToPos(step, "x", true);
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.setLineDash([4, 3]);
    ctx.stroke();
    ctx.beginPath();
    ctx.setLineDash([]);
    ctx.moveTo(x - 5, u.bbox.top);
    ctx.lineTo(x + 5, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + 8);
    ctx.fill();
  }
  ctx.restore();
}

// ---- histogram -----------------------------------------------------------------------------------
async function drawHistogram() {
  const msg = $("hist-message");
  msg.textContent = "";
  const run = [...state.runs.keys()].find((r) => (state.tensors.get(r) || []).some((t) => t.name === state.selected));
  if (!run) return;
  const p = { run, tensor: state.selected, step: $("hist-step").value, bins: $("hist-bins").value };
  if ($("mode").value) p.mode = $("mode").value;
  if ($("worker").value) p.worker = $("worker").value;
  try {
    const h = await api("histogram", p);
    state.histogram = h;
    msg.textContent = run + ", step " + p.step + (h.non_finite ? ", " + h.non_finite + " non-finite values left out" : "");
    if (typeof uPlot === "undefined") return;
    const centres = h.counts.map((_, i) => (num(h.edges[i]) + num(h.edges[i + 1])) / 2);
    if (state.hist) state.hist.destroy();
    $("histogram").replaceChildren();
    state.hist = new uPlot({
      width: Math.max(400, $("histogram").clientWidth || 800), height: 240, scales: { x: { time: false } },
      series: [{ label: "value" }, { label: "count", stroke: "#1f77b4", fill: "#1f77b455", paths: uPlot.paths.bars({ size: [1, Infinity] }) }],
    }, [centres, h.counts], $("histogram"));
  } catch (e) {
    msg.textContent = e.message;
    msg.className = "message error";
  }
}

// ---- rules ---------------------------------------------------------------------------------------
let builtinRules = [];
async function loadRules() {
  builtinRules = (await api("builtin_rules")).filter((r) => !r.needs_other_trial);
  const sel = $("rule");
  for (const r of builtinRules) sel.append(el("option", r.name, { value: r.name, title: "fires when " + r.fires_when }));
  sel.addEventListener("change", renderRuleParams);
  renderRuleParams();
}
function renderRuleParams() {
  const r = builtinRules.find((x) => x.name === $("rule").value);
  const box = $("rule-params");
  box.replaceChildren();
  if (!r) return;
  for (const p of r.parameters) {
    const label = el("label", p.name + " ", { title: p.meaning });
    label.append(el("input", null, { placeholder: p.default, name: p.name, size: 10 }));
    box.append(label);
  }
}
async function runRule() {
  const rule = $("rule").value;
  const params = { rule };
  for (const input of $("rule-params").querySelectorAll("input")) if (input.value !== "") params[input.name] = input.value;
  const msg = $("rule-message");
  msg.textContent = "running " + rule + "…";
  msg.className = "message";
  const firings = [];
  const errors = [];
  await Promise.all([...state.runs.keys()].map(async (run) => {
    try {
      for (const f of (await api("rules", { run, ...params })).fired) firings.push({ run, ...f });
    } catch (e) {
      errors.push(run + ": " + e.message);
    }
  }));
  firings.sort((a, b) => a.step - b.step || a.run.localeCompare(b.run));
  state.firings = firings;
  const body = $("findings").tBodies[0];
  body.replaceChildren();
  for (const f of firings.slice(0, 5000)) {
    const tr = el("tr");
    tr.append(el("td", f.run), el("td", f.step), el("td", f.tensor), el("td", f.message));
    body.append(tr);
  }
  msg.textContent = errors.length ? errors.join("; ") : rule + " fired " + firings.length + " time" + (firings.length === 1 ? "" : "s");
  msg.className = errors.length ? "message error" : "message";
  if (state.chart) state.chart.redraw(false);
}

// ---- live updates --------------------------------------------------------------------------------
let refreshTimer = null;
function scheduleRefresh() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(async () => {
    refreshTimer = null;
    try {
      await loadTensors();
      await drawChart();
    } catch (e) {
      $("chart-message").textContent = e.message;
    }
  }, 250);
}
function listen() {
  const source = new EventSource("api/v1/events");
  source.addEventListener("open", () => { $("live").textContent = "live"; $("live").classList.add("on"); });
  source.addEventListener("error", () => { $("live").textContent = "reconnecting…"; $("live").classList.remove("on"); });
  source.addEventListener("run", (e) => {
    const s = JSON.parse(e.data);
    const before = state.runs.get(s.run);
    state.runs.set(s.run, s);
    renderRuns();
    if (!before || before.steps !== s.steps || before.ended !== s.ended || before.loading !== s.loading) scheduleRefresh();
  });
}

async function main() {
  for (const id of ["reduction", "abs", "mode", "worker"]) $(id).addEventListener("change", drawChart);
  $("filter").addEventListener("input", renderTensors);
  $("hist-go").addEventListener("click", drawHistogram);
  $("rule-go").addEventListener("click", runRule);
  listen();
  await loadRuns();
  await Promise.all([loadTensors(), loadRules()]);
}
main().catch((e) => { $("chart-message").textContent = e.message; });
