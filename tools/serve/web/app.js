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
// Axis ticks: 4 significant digits from 0.001 to 10,000 (small values keep their digits and their
// sign), SI suffixes (k, M, G, T) for large ones, scientific notation beyond: never a cut label.
function tickText(v) {
  if (v === null || v === undefined) return "";
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e4) return String(Number(v.toPrecision(4)));
  if (a >= 1e4 && a < 1e15)
    for (const [f, suffix] of [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]])
      if (a >= f) return String(Number((v / f).toPrecision(4))) + suffix;
  return v.toExponential(2).replace("e+", "e");
}
// The y axis is as wide as its longest label (7 px a character, at least 50 px).
const axisWidth = (u, values) => Math.max(50, 14 + 7 * Math.max(0, ...(values || []).map((t) => String(t).length)));
const num = (v) => (typeof v === "string" ? Number(v) : v);  // "NaN", "Infinity", "-Infinity"

// What the tests read (tests/serve/browser_check.js): the data the chart draws, and when.
const state = {
  runs: new Map(),           // name -> status
  tensors: new Map(),        // run -> [{name, collections, shape, dtype}]
  selected: null,            // tensor name
  chart: null, hist: null,
  chartSeries: [],           // [{run, worker, mode, steps, values}] as the API gave them
  chartDrawnAt: null, chartDraws: 0,
  firings: [],               // [{run, step, tensor, message, mode, mode_step}]
  diagnoses: new Map(),      // run -> /api/v1/diagnose's answer
  nonFiniteMarks: 0,         // non-finite points drawn as markers at the chart's edge (last draw)
  firstNonFiniteMarks: [],   // [{run, step}] marked on the last draw
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
         { className: s.error ? "error" : "" }),
      diagnosisCell(s.run));
    body.append(tr);
  }
  const base = $("diff-base");
  if (base.options.length - 1 !== state.runs.size) {
    const current = base.value;
    base.replaceChildren(el("option", "(none)", { value: "" }));
    for (const run of state.runs.keys()) base.append(el("option", run, { value: run }));
    base.value = current;
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

// ---- diagnosis (GET /api/v1/diagnose: docs/diagnose.md) -------------------------------------------
const stepText = (step, mode, modeStep) => "step " + step + (mode && modeStep !== null && modeStep !== undefined ? " (" + mode + " step " + modeStep + ")" : "");
function diagnosisText(d) {
  if (!d) return { text: "…", cls: "" };
  const f = d.first_nonfinite;
  if (f) return { text: "first non-finite: " + stepText(f.step, f.mode, f.mode_step) + ", " + f.tensor + " — " + f.verdict, cls: "bad" };
  if (d.findings.length) {
    const x = d.findings.reduce((a, b) => (b.step < a.step ? b : a));
    return { text: x.rule + " at " + stepText(x.step, x.mode, x.mode_step) + ": " + x.finding +
             (d.findings.length > 1 ? " (+" + (d.findings.length - 1) + " more rules)" : ""), cls: "bad" };
  }
  return { text: "clean: no non-finite value, no rule fired" + (d.partial ? " (complete steps so far)" : ""), cls: "good" };
}
function diagnosisCell(run) {
  const { text, cls } = diagnosisText(state.diagnoses.get(run));
  return el("td", text, { className: "diagnosis " + cls });
}
const diagnosing = new Map();  // run -> timer: at most one diagnosis per run every 3 s
function scheduleDiagnosis(run) {
  if (diagnosing.has(run)) return;
  diagnosing.set(run, setTimeout(async () => {
    try {
      state.diagnoses.set(run, await api("diagnose", { run }));
      renderRuns();
      if (state.chart) state.chart.redraw(false);
    } catch (e) {
      /* not opened yet: asked again when its status changes */
    }
    setTimeout(() => diagnosing.delete(run), 3000);
  }, 0));
}

async function loadRuns() {
  for (const s of await api("runs")) state.runs.set(s.run, s);
  renderRuns();
  for (const s of state.runs.values()) if (!s.loading) scheduleDiagnosis(s.run);
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
  if (!state.selected) {  // open on the loss when there is one (collection `losses`, else a name with "loss")
    const all = [...state.tensors.values()].flat().filter((t) => !re || re.test(t.name));
    const loss = all.find((t) => t.collections.includes("losses")) || all.find((t) => /loss/i.test(t.name));
    const first = box.querySelector("li");
    if (loss) selectTensor(loss.name);
    else if (first) selectTensor(first.dataset.tensor);
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
  // A run's difference from the chosen run: its series minus the base run's series of the same worker
  // and mode, at the steps both have.
  const base = $("diff-base").value;
  if (base && byRun.has(base))
    for (const s of series) {
      if (s.run === base) continue;
      const b = series.find((x) => x.run === base && x.worker === s.worker && x.mode === s.mode);
      if (!b) continue;
      const at = new Map(b.steps.map((st, i) => [st, b.values[i]]));
      const steps = [], values = [];
      s.steps.forEach((st, i) => { if (at.has(st)) { steps.push(st); values.push(s.values[i] - at.get(st)); } });
      lines.push({ label: s.run + " − " + base + " " + s.worker + (s.mode !== "GLOBAL" ? " " + s.mode : ""), steps, values, difference: true });
    }
  const yscale = $("yscale").value;
  const xs = [...new Set(lines.flatMap((l) => l.steps))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const data = [xs];
  const opts = {
    width: Math.max(400, $("chart").clientWidth || 800), height: 360,
    // log: values <= 0 cannot be drawn (left out); symlog (asinh) keeps negatives and zero. uPlot
    // ranges the scale over every drawn value: the largest is never clipped.
    scales: { x: { time: false }, y: yscale === "log" ? { distr: 3, log: 10 } : yscale === "symlog" ? { distr: 4, asinh: 1 } : {} },
    axes: [{ label: "step", values: (u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : "")) },  // steps are whole
           { size: axisWidth, values: (u, splits) => splits.map(tickText) }],
    series: [{ label: "step" }],
    bands: [],
    cursor: { drag: { x: true, y: false } },  // drag to zoom, double-click to zoom out
    hooks: { draw: [drawFirings, drawFirstNonFinite, drawNonFinite], ready: [wheelZoomAndPan] },
  };
  lines.forEach((l, k) => {
    const col = new Array(xs.length).fill(null);
    l.steps.forEach((st, i) => { const v = l.values[i]; col[index.get(st)] = Number.isFinite(v) && !(yscale === "log" && v <= 0) ? v : null; });
    data.push(col);
    const colour = palette[(l.band ? lines.indexOf(lines.find((m) => m.band === "min" && m.label.startsWith(l.label.split(" ")[0]))) : k) % palette.length];
    opts.series.push({ label: l.label, stroke: colour, width: l.band === "mean" ? 2 : 1, spanGaps: false,
                       points: { show: xs.length < 200 }, dash: l.difference ? [6, 3] : undefined });
    if (l.band === "max") opts.bands.push({ series: [k + 1, k - 1], fill: colour + "33" });
  });
  state.chartLines = lines;  // raw values (non-finite included) for drawNonFinite
  if (state.chart) state.chart.destroy();
  $("chart").replaceChildren();
  state.chart = new uPlot(opts, data, $("chart"));
  state.chartDraws++;
  state.chartDrawnAt = performance.now();
  // the histogram's step: the tensor's last step, unless the one shown is a step of this tensor too
  const shown = $("hist-step").value;
  if (xs.length && (shown === "" || !xs.includes(Number(shown)))) $("hist-step").value = xs[xs.length - 1];
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

// Each run's first non-finite step (its diagnosis) as a purple line with the run's name.
function drawFirstNonFinite(u) {
  const marks = [];
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = "#7b2cbf";
  ctx.fillStyle = "#7b2cbf";
  ctx.font = "11px system-ui, sans-serif";
  for (const [run, d] of state.diagnoses) {
    const f = d && d.first_nonfinite;
    if (!f) continue;
    const x = u.valToPos(f.step, "x", true);
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
    ctx.beginPath();
    ctx.setLineDash([2, 2]);
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillText("first non-finite: " + run + ", " + stepText(f.step, f.mode, f.mode_step), x + 4, u.bbox.top + 12 + 12 * marks.length);
    marks.push({ run, step: f.step });
  }
  ctx.restore();
  state.firstNonFiniteMarks = marks;
}

// Non-finite points (NaN, ±inf), which no scale can place, as markers at the chart's edge in their
// series' colour: NaN and +inf at the top, -inf at the bottom.
function drawNonFinite(u) {
  let n = 0;
  const ctx = u.ctx;
  ctx.save();
  (state.chartLines || []).forEach((l, k) => {
    const s = u.series[k + 1];
    if (!s || s.show === false) return;
    ctx.fillStyle = s._stroke || s.stroke || "#d62728";
    l.steps.forEach((st, i) => {
      const v = l.values[i];
      if (Number.isFinite(v)) return;
      const x = u.valToPos(st, "x", true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
      const top = v !== -Infinity;
      const y = top ? u.bbox.top + 2 : u.bbox.top + u.bbox.height - 2;
      ctx.beginPath();
      ctx.moveTo(x, y);
      ctx.lineTo(x - 4, top ? y + 7 : y - 7);
      ctx.lineTo(x + 4, top ? y + 7 : y - 7);
      ctx.closePath();
      ctx.fill();
      n++;
    });
  });
  ctx.restore();
  state.nonFiniteMarks = n;
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
  const checked = [];  // per run: the tensors the rule inspected
  await Promise.all([...state.runs.keys()].map(async (run) => {
    try {
      const answer = await api("rules", { run, ...params });
      for (const f of answer.fired) firings.push({ run, ...f });
      checked.push({ run, tensors: answer.checked_tensors });
    } catch (e) {
      errors.push(run + ": " + e.message);
    }
  }));
  firings.sort((a, b) => a.step - b.step || a.run.localeCompare(b.run));
  state.firings = firings;
  // One row per run and step, listing its tensors; the first firing as the headline.
  const rows = [];
  for (const f of firings) {
    const last = rows[rows.length - 1];
    if (last && last.run === f.run && last.step === f.step) { last.tensors.push(f.tensor); last.messages.push(f.message); continue; }
    rows.push({ run: f.run, step: f.step, mode: f.mode, mode_step: f.mode_step, tensors: [f.tensor], messages: [f.message] });
  }
  state.findingRows = rows;
  const body = $("findings").tBodies[0];
  body.replaceChildren();
  for (const r of rows.slice(0, 5000)) {
    const tr = el("tr");
    const tensors = r.tensors.filter(Boolean);
    tr.append(el("td", r.run), el("td", r.step), el("td", r.mode ? r.mode + " " + r.mode_step : "—"),
      el("td", tensors.length <= 6 ? tensors.join(", ") : tensors.slice(0, 6).join(", ") + " and " + (tensors.length - 6) + " more"),
      el("td", r.messages[0] + (r.messages.length > 1 ? " (+" + (r.messages.length - 1) + ")" : "")));
    body.append(tr);
  }
  const first = rows[0];
  $("findings-headline").textContent = first
    ? rule + " first fired in " + first.run + " at " + stepText(first.step, first.mode, first.mode_step) + ": " + first.messages[0] +
      " — " + rows.length + " step" + (rows.length === 1 ? "" : "s") + ", " + firings.length + " finding" + (firings.length === 1 ? "" : "s")
    : "";
  checked.sort((a, b) => a.run.localeCompare(b.run));
  const checkedText = "checked " + checked.map((c) => c.tensors + " tensor" + (c.tensors === 1 ? "" : "s") +
    (checked.length > 1 ? " in " + c.run : "")).join(", ");
  msg.textContent = errors.length ? errors.join("; ")
    : rule + " fired at " + rows.length + " step" + (rows.length === 1 ? "" : "s") + " (" + checkedText + ")";
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
    if (!before || before.steps !== s.steps || before.ended !== s.ended || before.loading !== s.loading) {
      scheduleRefresh();
      if (!s.loading) scheduleDiagnosis(s.run);
    }
  });
}

async function main() {
  for (const id of ["reduction", "abs", "mode", "worker", "yscale", "diff-base"]) $(id).addEventListener("change", drawChart);
  $("filter").addEventListener("input", renderTensors);
  $("hist-go").addEventListener("click", drawHistogram);
  $("rule-go").addEventListener("click", runRule);
  listen();
  await loadRuns();
  await Promise.all([loadTensors(), loadRules()]);
}
main().catch((e) => { $("chart-message").textContent = e.message; });
