// Speed of `smdebug serve` against the targets of issue 47 (figures in benchmarks/RESULTS.md):
//   node benchmarks/serve/bench_serve.js SMDEBUG TRIAL_A TRIAL_C TRIAL_M
// TRIAL_A, TRIAL_C, TRIAL_M: folders written by `bench_make_trial a|c|m DIR`.
//  - first chart: headless chromium opens the page on trial (a) (1,000 steps x 50 tensors of 1,024
//    float32); the time from navigation start to the first chart drawn (the first tensor's mean
//    over 1,000 steps), page's own clock (target: 1 s);
//  - one tensor over 10,000 steps (trial c): /api/v1/scalars answered, first request and again
//    (target: 100 ms of server time; on loopback the answer's wall time is the server's plus < 1 ms);
//  - 1,000 workers (trial m): the page draws the min/mean/max band of a tensor over 1,000 workers
//    (target: 2 s from the choice to the band drawn), and the API's answer alone.
// Uses puppeteer-core from tests/serve/node_modules (npm ci there) and Debian's chromium.
"use strict";
const path = require("path");
const puppeteer = require(path.join(__dirname, "../../tests/serve/node_modules/puppeteer-core"));
const { startServe, stopServe, get } = require("../../tests/serve/common.js");

const [SMDEBUG, TRIAL_A, TRIAL_C, TRIAL_M] = process.argv.slice(2);
const CHROMIUM = process.env.SMDEBUG_CHROMIUM || "/usr/bin/chromium";

async function timed(port, p, params) {
  const t0 = process.hrtime.bigint();
  const r = await get(port, p, params);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 200) throw new Error(`${p}: ${r.status} ${r.body}`);
  return { ms, json: r.json };
}
async function ready(port) {
  for (;;) {
    const runs = (await get(port, "/api/v1/runs")).json;
    if (runs.every((r) => !r.loading)) return runs;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main() {
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    // (a): first chart in the browser, 3 runs (a fresh server each: nothing cached)
    for (let i = 0; i < 3; i++) {
      const s = await startServe(SMDEBUG, [TRIAL_A]);
      const t0 = Date.now();
      await ready(s.port);
      const openMs = Date.now() - t0;
      const page = await browser.newPage();
      await page.goto(s.url);
      await page.waitForFunction(() => window.smdebugServe.chartDraws > 0, { timeout: 60000, polling: 10 });
      const st = await page.evaluate(() => ({ at: window.smdebugServe.chartDrawnAt, n: window.smdebugServe.chart.data[0].length }));
      console.log(`(a) first chart ${st.at.toFixed(0)} ms after navigation start (${st.n} steps); the run opened ${openMs} ms after start`);
      await page.close();
      await stopServe(s);
    }
    // (c): one tensor over 10,000 steps
    {
      const s = await startServe(SMDEBUG, [TRIAL_C]);
      await ready(s.port);
      const tensors = (await get(s.port, "/api/v1/tensors", { run: path.basename(TRIAL_C) })).json;
      for (const [k, t] of tensors.slice(0, 3).entries()) {
        const first = await timed(s.port, "/api/v1/scalars", { run: path.basename(TRIAL_C), tensor: t.name });
        const again = await timed(s.port, "/api/v1/scalars", { run: path.basename(TRIAL_C), tensor: t.name });
        const points = first.json.series.reduce((a, x) => a + x.steps.length, 0);
        console.log(`(c) ${t.name}: ${points} steps, first request ${first.ms.toFixed(1)} ms, again ${again.ms.toFixed(1)} ms`);
      }
      await stopServe(s);
    }
    // (m): 1,000 workers
    {
      const t0 = Date.now();
      const s = await startServe(SMDEBUG, [TRIAL_M]);
      await ready(s.port);
      console.log(`(m) the run opened ${Date.now() - t0} ms after start`);
      const run = path.basename(TRIAL_M);
      const tensors = (await get(s.port, "/api/v1/tensors", { run })).json;
      const api = await timed(s.port, "/api/v1/scalars", { run, tensor: tensors[1].name });
      console.log(`(m) ${tensors[1].name}: API ${api.ms.toFixed(0)} ms for ${api.json.series.length} series`);
      const page = await browser.newPage();
      await page.goto(s.url);
      await page.waitForFunction(() => window.smdebugServe.chartDraws > 0, { timeout: 120000, polling: 10 });
      const first = await page.evaluate(() => ({ at: window.smdebugServe.chartDrawnAt, labels: window.smdebugServe.chart.series.map((x) => x.label) }));
      console.log(`(m) first chart (band of ${first.labels[1]}) ${first.at.toFixed(0)} ms after navigation start`);
      const name = tensors[2].name;
      const t1 = await page.evaluate(() => performance.now());
      await page.evaluate((n) => [...document.querySelectorAll("#tensors li")].find((li) => li.dataset.tensor === n).click(), name);
      await page.waitForFunction((n) => window.smdebugServe.selected === n && window.smdebugServe.chartDraws > 1, { timeout: 120000, polling: 10 }, name);
      const t2 = await page.evaluate(() => window.smdebugServe.chartDrawnAt);
      console.log(`(m) band of ${name} over 1,000 workers drawn ${(t2 - t1).toFixed(0)} ms after the click (a fresh tensor: nothing cached)`);
      await page.close();
      await stopServe(s);
    }
  } finally {
    await browser.close();
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
