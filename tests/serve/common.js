// Shared by the `smdebug serve` checks: starting the server, HTTP GETs, the library's own answers
// through the CLI, and a tally of failures.
"use strict";
const { spawn, spawnSync } = require("child_process");
const http = require("http");

const failures = [];
function check(ok, message) {
  if (!ok) {
    failures.push(message);
    console.error("FAIL: " + message);
  }
  return ok;
}
function finish(name) {
  if (failures.length) {
    console.error(`${name}: ${failures.length} failure(s)`);
    process.exit(1);
  }
  console.log(`${name}: all checks passed`);
}

// Starts `smdebug serve ARGS --port 0`; resolves {proc, url, port} once it prints its address.
function startServe(smdebug, args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(smdebug, ["serve", ...args, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const timer = setTimeout(() => reject(new Error("smdebug serve printed no address in 20 s: " + out)), 20000);
    proc.stdout.on("data", (d) => {
      out += d;
      const m = /at (http:\/\/[^ ]+:(\d+)\/)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: m[1], port: Number(m[2]) });
      }
    });
    proc.stderr.on("data", (d) => process.stderr.write("[serve] " + d));
    proc.on("exit", (code) => reject(new Error("smdebug serve exited with " + code + ": " + out)));
  });
}
function stopServe(s) {
  return new Promise((resolve) => {
    s.proc.removeAllListeners("exit");
    s.proc.on("exit", (code) => resolve(code));
    s.proc.kill("SIGTERM");
  });
}

// GET (or another method) of `path` on the server; resolves {status, headers, body, json}.
function request(port, path, { method = "GET", host } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, headers: { Host: host || `127.0.0.1:${port}` } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => {
        let json = null;
        try { json = JSON.parse(body); } catch (e) { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, body, json });
      });
    });
    req.on("error", reject);
    req.setTimeout(30000, () => req.destroy(new Error("timeout: " + path)));
    req.end();
  });
}
const get = (port, path, params) => request(port, path + (params ? "?" + new URLSearchParams(params) : ""));

// The library's answer through the CLI: `smdebug ARGS` with --json output parsed.
function cli(smdebug, args) {
  const r = spawnSync(smdebug, args, { encoding: "utf8", maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
function cliJson(smdebug, args) {
  const r = cli(smdebug, args);
  if (r.status !== 0) throw new Error(`smdebug ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// The same number, NaN and infinities included (the API writes them as "NaN", "Infinity", "-Infinity";
// the CLI's JSON as null).
function sameNumber(api, lib) {
  const a = typeof api === "string" ? Number(api) : api;
  if (lib === null) return !Number.isFinite(a);
  return a === lib || (Number.isNaN(a) && Number.isNaN(lib));
}

module.exports = { check, finish, failures, startServe, stopServe, request, get, cli, cliJson, sameNumber };
