// CTest serve.browser: `smdebug serve`'s page in a real browser — Debian's chromium driven by
// puppeteer-core (pinned in package-lock.json; no browser is downloaded):
//   node browser_check.js SMDEBUG CRASH_WRITER CASES_DIR WORK_DIR [SCREENSHOT_DIR]
//  1. the page on a conformance trial: the run and its tensors listed, a tensor chosen, the data
//     the chart draws (uPlot's own arrays) equal to the library's values (`smdebug reductions`),
//     another reduction, a histogram, a rule's firings listed;
//  2. a job written step by step by the Hook (crash_writer, 300 ms a step) while the page is open:
//     the steps appear without a reload, and the run shows as ended;
//  3. a trial whose tensor and worker names are markup: shown as those characters, no element
//     made of them, no script run;
//  4. a foreign Host header refused.
// Screenshots go to SCREENSHOT_DIR (default WORK_DIR); docs/images/serve-*.png are made this way.
"use strict";
const fs = require("fs");
const path = require("path");
const { spawn } = require("child_process");
let puppeteer;
try {
  puppeteer = require("puppeteer-core");
} catch (e) {
  console.error("FAIL: puppeteer-core is not installed: `PUPPETEER_SKIP_DOWNLOAD=1 npm ci` in tests/serve (scripts/test.sh does it)");
  process.exit(1);
}
const { check, finish, startServe, stopServe, request, cli, cliJson } = require("./common.js");
const { writeTrial, valueOf } = require("./trial_writer.js");

const [SMDEBUG, CRASH_WRITER, CASES, WORK, SHOTS_ARG] = process.argv.slice(2);
const SHOTS = SHOTS_ARG || WORK;
const CHROMIUM = process.env.SMDEBUG_CHROMIUM || "/usr/bin/chromium";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(page, fn, arg, what, timeout = 15000) {
  try {
    await page.waitForFunction(fn, { timeout, polling: 50 }, arg);
    return true;
  } catch (e) {
    return check(false, `${what}: not within ${timeout} ms`);
  }
}
const chartState = (page) => page.evaluate(() => {
  const s = window.smdebugServe;
  return { selected: s.selected, draws: s.chartDraws, data: s.chart ? s.chart.data.map((a) => Array.from(a)) : null,
           labels: s.chart ? s.chart.series.map((x) => x.label) : [], series: s.chartSeries };
});
async function selectTensor(page, name) {
  const before = (await chartState(page)).draws;
  await page.evaluate((n) => [...document.querySelectorAll("#tensors li")].find((li) => li.dataset.tensor === n).click(), name);
  await waitFor(page, ([n, d]) => window.smdebugServe.selected === n && window.smdebugServe.chartDraws > d, [name, before], `chart of ${name}`);
}
async function setControl(page, id, value) {
  const before = (await chartState(page)).draws;
  await page.evaluate(([i, v]) => {
    const e = document.getElementById(i);
    if (e.type === "checkbox") e.checked = v; else e.value = v;
    e.dispatchEvent(new Event("change"));
  }, [id, value]);
  await waitFor(page, (d) => window.smdebugServe.chartDraws > d, before, `redraw after ${id}=${value}`);
}

async function pageOnConformanceTrial(browser) {
  const trial = path.join(CASES, "pt_train_eval", "trial");
  const s = await startServe(SMDEBUG, [trial]);
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  try {
    await page.goto(s.url, { waitUntil: "load" });
    await waitFor(page, () => window.smdebugServe.chartDraws > 0, null, "a first chart (the first tensor, opened at once)");
    const runText = await page.$eval("#runs tbody", (e) => e.textContent);
    check(runText.includes("trial") && runText.includes("ended"), `the run listed as ended: ${runText}`);
    const listed = await page.$$eval("#tensors li", (lis) => lis.map((li) => li.textContent));
    check(listed.includes("MLP_fc1.weight") && listed.includes("CrossEntropyLoss_output_0"), "the tensors listed");

    const compare = async (tensor, reduction, abs) => {
      const st = await chartState(page);
      const lib = cliJson(SMDEBUG, ["reductions", trial, tensor, "--json", "--reduction", reduction, ...(abs ? ["--abs"] : [])]).rows;
      const key = (abs ? "abs_" : "") + reduction;
      const xs = st.data[0];
      const drawn = new Map();
      for (let k = 1; k < st.data.length; k++) xs.forEach((x, i) => { if (st.data[k][i] !== null) drawn.set(x, st.data[k][i]); });
      check(drawn.size === lib.length, `${tensor} ${key}: the chart draws ${drawn.size} points, the library has ${lib.length}`);
      for (const row of lib) check(drawn.get(row.step) === row[key], `${tensor} ${key} at step ${row.step}: drawn ${drawn.get(row.step)}, library ${row[key]}`);
    };
    await selectTensor(page, "MLP_fc1.weight");
    check((await page.$eval("#reduction", (e) => e.value)) === "mean", "a tensor of many elements is charted as its mean");
    await compare("MLP_fc1.weight", "mean", false);
    await setControl(page, "reduction", "l2");
    await setControl(page, "abs", true);
    await compare("MLP_fc1.weight", "l2", true);
    await setControl(page, "abs", false);
    await selectTensor(page, "CrossEntropyLoss_output_0");
    const loss = await chartState(page);
    const lossLib = cliJson(SMDEBUG, ["reductions", trial, "CrossEntropyLoss_output_0", "--json", "--reduction", "min"]).rows;
    const drawnLoss = new Map();
    for (let k = 1; k < loss.data.length; k++) loss.data[0].forEach((x, i) => { if (loss.data[k][i] !== null) drawnLoss.set(x, loss.data[k][i]); });
    check(lossLib.every((row) => drawnLoss.get(row.step) === row.min), "the loss (one element) charted as its value");
    await page.screenshot({ path: path.join(SHOTS, "serve-chart.png") });
    // the wheel zooms in around the cursor, shift+drag pans
    const box = await page.$eval("#chart .u-over", (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
    const scale = () => page.evaluate(() => ({ ...window.smdebugServe.chart.scales.x }));
    const before = await scale();
    await page.mouse.move(box.x + box.w / 2, box.y + box.h / 2);
    await page.mouse.wheel({ deltaY: -100 });
    await sleep(100);
    const zoomed = await scale();
    check(zoomed.max - zoomed.min < before.max - before.min, `the wheel zooms in: ${JSON.stringify(before)} -> ${JSON.stringify(zoomed)}`);
    await page.keyboard.down("Shift");
    await page.mouse.down();
    await page.mouse.move(box.x + box.w / 2 - 100, box.y + box.h / 2, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up("Shift");
    const panned = await scale();
    check(panned.min > zoomed.min && Math.abs((panned.max - panned.min) - (zoomed.max - zoomed.min)) < 1e-9,
          `shift+drag pans: ${JSON.stringify(zoomed)} -> ${JSON.stringify(panned)}`);

    // histogram at the last step, and a rule's firings
    await selectTensor(page, "MLP_fc1.weight");
    await page.click("#hist-go");
    await waitFor(page, () => window.smdebugServe.hist, null, "a histogram");
    const total = await page.evaluate(() => window.smdebugServe.histogram.counts.reduce((a, b) => a + b, 0));
    check(total === 72, `the histogram counts 72 elements, not ${total}`);
    // VanishingGradient with threshold 0.0065 fires on this trial: the page lists what `smdebug rule` prints
    await page.select("#rule", "VanishingGradient");
    await page.type("#rule-params input[name=threshold]", "0.0065");
    await page.click("#rule-go");
    await waitFor(page, () => /fired/.test(document.getElementById("rule-message").textContent), null, "a rule's answer");
    const ran = cli(SMDEBUG, ["rule", trial, "VanishingGradient", "--param", "threshold=0.0065"]);
    const lib = ran.stdout.split("\n").filter(Boolean);
    // one row per step listing its tensors (issue 53 item 5), the first firing as the headline
    const rows = await page.$$eval("#findings tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
    const libSteps = new Map();
    for (const line of lib) {  // one line per step: its first finding "(and N more tensors: ...)"
      const step = Number(/^step (\d+) /.exec(line)[1]);
      const more = / \(and (\d+) more tensors?: /.exec(line);
      libSteps.set(step, 1 + (more ? Number(more[1]) : 0));
    }
    check(lib.length > 0 && JSON.stringify(rows.map((r) => Number(r[1]))) === JSON.stringify([...libSteps.keys()]),
          `the steps listed ${JSON.stringify(rows)} vs smdebug rule ${JSON.stringify(lib)}`);
    for (const r of rows)
      if (libSteps.get(Number(r[1])) <= 6)
        check(r[3].split(", ").length === libSteps.get(Number(r[1])), `step ${r[1]}: ${r[3]} lists every tensor that fired`);
    // the rule's message counts the tensors it inspected, as `smdebug rule` does
    const ruleMessage = await page.$eval("#rule-message", (e) => e.textContent);
    const counted = /of (\d+) tensors? in /.exec(ran.stderr);
    check(counted && ruleMessage.includes(`checked ${counted[1]} tensor`), `the rule message: ${ruleMessage}`);
    const headline = await page.$eval("#findings-headline", (e) => e.textContent);
    check(rows.length > 0 && headline.startsWith("VanishingGradient first fired in ") && headline.includes("step " + rows[0][1]),
          `the headline names the first firing: ${headline}`);
    if (rows.length) await selectTensor(page, rows[0][3].split(", ")[0]);  // its firings marked on its curve
    await page.screenshot({ path: path.join(SHOTS, "serve-page.png"), fullPage: true });
  } finally {
    check(errors.length === 0, "no script errors on the page: " + errors.join("; "));
    await page.close();
    await stopServe(s);
  }
}

async function liveJob(browser) {
  const dir = path.join(WORK, "live-trial");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const s = await startServe(SMDEBUG, [`live=${dir}`, "--wait"]);  // before the job writes anything (--wait: issue 53 item 7)
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const steps = 40;
  let writer = null;
  const durable = new Map();  // step -> when the Hook reported it durable
  try {
    await page.goto(s.url, { waitUntil: "load" });
    writer = spawn(CRASH_WRITER, [dir, String(steps), "300"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    writer.stdout.on("data", (d) => {
      out += d;
      for (const m of out.matchAll(/durable (\d+)\n/g)) if (!durable.has(Number(m[1]))) durable.set(Number(m[1]), Date.now());
    });
    await waitFor(page, () => [...document.querySelectorAll("#tensors li")].some((li) => li.dataset.tensor === "counter"), null,
                  "the job's tensors listed", 20000);
    await selectTensor(page, "counter");
    // Every 100 ms: which steps the chart shows; the delay from "durable" to "drawn" for each.
    const lags = [];
    const seen = new Set();
    const deadline = Date.now() + steps * 300 + 20000;
    let lastXs = [];
    while (Date.now() < deadline) {
      const st = await chartState(page);
      lastXs = st.data ? st.data[0] : [];
      for (const x of lastXs) if (!seen.has(x)) { seen.add(x); if (durable.has(x)) lags.push(Date.now() - durable.get(x)); }
      const ended = await page.$eval("#runs tbody", (e) => e.textContent.includes("ended"));
      if (seen.size === steps && ended) break;
      await sleep(100);
    }
    check(seen.size === steps, `the chart showed ${seen.size} of the ${steps} steps written while the page was open`);
    const st = await chartState(page);
    st.data[0].forEach((x, i) => check(st.data[1][i] === x, `counter at step ${x} drawn as ${st.data[1][i]}`));
    check(await page.$eval("#runs tbody", (e) => e.textContent.includes("ended")), "the run shows as ended once the Hook closed");
    lags.sort((a, b) => a - b);
    console.log(`live: ${lags.length} steps seen; from durable to drawn: median ${lags[lags.length >> 1]} ms, max ${lags[lags.length - 1]} ms (target: 2000)`);
    await page.screenshot({ path: path.join(SHOTS, "serve-live.png") });
  } finally {
    if (writer && writer.exitCode === null) writer.kill("SIGKILL");
    await page.close();
    await stopServe(s);
  }
}

async function hostileNames(browser) {
  const dir = path.join(WORK, "hostile-trial");
  fs.rmSync(dir, { recursive: true, force: true });
  const tensor = "<img src=x onerror=alert(1)>";
  const other = "\"><script>alert(3)<\\script>";
  const worker = "<img src=y onerror=alert(2)>";
  writeTrial(dir, { tensors: [tensor, other], workers: [worker, "w1"], steps: 3 });
  const runName = "<b>run<i>";  // NAME=PATH: no "/" or "=" in NAME
  const s = await startServe(SMDEBUG, [`${runName}=${dir}`]);
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const dialogs = [];
  page.on("dialog", async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  try {
    await page.goto(s.url, { waitUntil: "load" });
    await waitFor(page, () => window.smdebugServe.chartDraws > 0, null, "a chart of the hostile trial");
    await selectTensor(page, tensor);
    await setControl(page, "reduction", "max");
    const text = await page.evaluate(() => document.body.innerText);
    for (const name of [tensor, other, worker, runName]) check(text.includes(name), `the name ${name} shown as text`);
    const made = await page.evaluate(() => ({ img: document.querySelectorAll("img").length, b: document.querySelectorAll("b").length,
                                              scripts: document.querySelectorAll("script").length }));
    check(made.img === 0 && made.b === 0 && made.scripts === 2, `no element made of a name: ${JSON.stringify(made)}`);
    const st = await chartState(page);
    check(st.labels.some((l) => l.includes(worker)), "the worker name in the chart's legend, as text");
    const byWorker = new Map(st.series.map((x) => [x.worker, x]));
    [worker, "w1"].forEach((w, wi) => byWorker.get(w).values.forEach((v, i) =>
      check(v === Math.max(...valueOf(byWorker.get(w).steps[i], wi)), `max of ${w} at step ${byWorker.get(w).steps[i]}`)));
    await sleep(300);
    check(dialogs.length === 0, "no script ran: " + dialogs.join(", "));
    await page.screenshot({ path: path.join(SHOTS, "serve-hostile.png") });
  } finally {
    await page.close();
    await stopServe(s);
  }
}

async function foreignHost() {
  const s = await startServe(SMDEBUG, [path.join(CASES, "pt_train_eval", "trial")]);
  try {
    for (const host of ["attacker.example", `attacker.example:${s.port}`, `127.0.0.2:${s.port}`, `localhost:${s.port + 1}`]) {
      const r = await request(s.port, "/api/v1/runs", { host });
      check(r.status === 403, `Host ${host}: ${r.status}`);
    }
    for (const host of [`localhost:${s.port}`, `127.0.0.1:${s.port}`, "localhost"]) {
      const r = await request(s.port, "/api/v1/runs", { host });
      check(r.status === 200, `Host ${host}: ${r.status}`);
    }
  } finally {
    await stopServe(s);
  }
  // --trust-host adds a name (a server bound to 0.0.0.0, reached by the machine's name)
  const t = await startServe(SMDEBUG, [path.join(CASES, "pt_train_eval", "trial"), "--trust-host", "gpu-box"]);
  try {
    check((await request(t.port, "/api/v1/runs", { host: `gpu-box:${t.port}` })).status === 200, "--trust-host gpu-box: Host gpu-box accepted");
    check((await request(t.port, "/api/v1/runs", { host: `gpu-box.evil:${t.port}` })).status === 403, "--trust-host gpu-box: Host gpu-box.evil refused");
  } finally {
    await stopServe(t);
  }
}

// Issue 53 on the MLP trials of tests/analysis/make_analysis_trials.cpp (SMDEBUG_ANALYSIS_TRIALS):
// the page opens on the loss; each run's diagnosis is its headline; the first non-finite step is
// marked; non-finite points are markers at the edge; a log and a symlog y scale; a run's difference
// from another as its own series; axis labels never cut.
async function analysisPage(browser) {
  const program = process.env.SMDEBUG_ANALYSIS_TRIALS;
  if (!check(Boolean(program) && fs.existsSync(program), "SMDEBUG_ANALYSIS_TRIALS must name make_analysis_trials")) return;
  const dir = path.join(WORK, "analysis");
  fs.rmSync(dir, { recursive: true, force: true });
  const { spawnSync } = require("child_process");
  check(spawnSync(program, [dir]).status === 0, "make_analysis_trials");
  const s = await startServe(SMDEBUG, ["clean=" + path.join(dir, "clean"), "inf=" + path.join(dir, "inf"), "parted=" + path.join(dir, "parted")]);
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  try {
    await page.goto(s.url, { waitUntil: "load" });
    await waitFor(page, () => window.smdebugServe.chartDraws > 0, null, "a first chart");
    check((await chartState(page)).selected === "CrossEntropyLoss_output_0", "the page opens on the loss");
    await waitFor(page, () => window.smdebugServe.diagnoses.size === 3, null, "a diagnosis of each run");
    const cells = await page.$$eval("#runs tbody tr", (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[6].textContent]));
    const cell = (run) => (cells.find((c) => c[0] === run) || ["", ""])[1];
    check(cell("inf").startsWith("first non-finite: step 16 (TRAIN step 12), fc2_output_0 — module `fc2` turned finite inputs into inf"),
          `the diagnosis of inf: ${cell("inf")}`);
    check(cell("clean").startsWith("clean"), `the diagnosis of clean: ${cell("clean")}`);
    await setControl(page, "mode", "");  // a redraw with every diagnosis known
    // The markers are drawn by the chart's draw hook, which may run after the redraw is counted.
    await waitFor(page, () => window.smdebugServe.nonFiniteMarks > 0, null, "the NaN losses of run inf drawn as markers at the edge");
    const marks = await page.evaluate(() => ({ first: window.smdebugServe.firstNonFiniteMarks, nonFinite: window.smdebugServe.nonFiniteMarks }));
    check(marks.first.length === 1 && marks.first[0].run === "inf" && marks.first[0].step === 16, `the first non-finite step marked: ${JSON.stringify(marks.first)}`);
    check(marks.nonFinite > 0, "the NaN losses of run inf drawn as markers at the edge");
    await setControl(page, "yscale", "log");
    const log = await page.evaluate(() => ({ distr: window.smdebugServe.chart.scales.y.distr, max: window.smdebugServe.chart.scales.y.max }));
    check(log.distr === 3 && log.max >= 1, `a log scale keeps the largest loss (1): ${JSON.stringify(log)}`);
    await setControl(page, "yscale", "symlog");
    check((await page.evaluate(() => window.smdebugServe.chart.scales.y.distr)) === 4, "a symlog (asinh) scale");
    await setControl(page, "yscale", "linear");
    await selectTensor(page, "fc2.weight");
    await setControl(page, "diff-base", "clean");
    const st = await chartState(page);
    const k = st.labels.findIndex((l) => l.startsWith("parted − clean") && l.endsWith("TRAIN"));
    check(k > 0, `a difference series: ${JSON.stringify(st.labels)}`);
    if (k > 0) {
      const steps = st.data[0];
      const at = (step) => st.data[k][steps.indexOf(step)];
      check(at(9) === 0 && Math.abs(at(10) - 1e-3 / 8) < 1e-6, `parted − clean is 0 before step 10 and the perturbation's mean after: ${at(9)}, ${at(10)}`);
    }
    const ticks = await page.$$eval("#chart .u-axis", (axes) => axes.map((a) => [...a.querySelectorAll(".u-value")].map((v) => v.textContent)));
    check(ticks.flat().every((t) => t.length <= 9), `axis labels short enough to show: ${JSON.stringify(ticks)}`);
    await page.screenshot({ path: path.join(SHOTS, "serve-diagnose.png"), fullPage: true });
  } finally {
    check(errors.length === 0, "no script errors on the page: " + errors.join("; "));
    await page.close();
    await stopServe(s);
  }
}

async function main() {
  fs.mkdirSync(WORK, { recursive: true });
  fs.mkdirSync(SHOTS, { recursive: true });
  if (!fs.existsSync(CHROMIUM)) {
    check(false, `no chromium at ${CHROMIUM} (scripts/setup-deps.sh installs Debian's chromium)`);
    return finish("serve.browser");
  }
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
                                           args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  try {
    await pageOnConformanceTrial(browser);
    await analysisPage(browser);
    await liveJob(browser);
    await hostileNames(browser);
    await foreignHost();
  } finally {
    await browser.close();
  }
  finish("serve.browser");
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
