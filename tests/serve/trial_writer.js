// Writes a small smdebug trial from docs/format.md (TFRecord records with masked CRC-32C, Event and
// TensorProto messages, index JSON, collections files, the end marker), with the tensor and worker
// names the caller gives — names no Hook would pick, such as markup: the hostile-names check of
// browser_check.js. Each tensor is float32 of shape [4]: [step, -1, 0.5, worker index + 1].
"use strict";
const fs = require("fs");
const path = require("path");

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function maskedCrc32c(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  c = (c ^ 0xffffffff) >>> 0;
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
function varint(n) {
  const out = [];
  while (true) {
    const b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) out.push(b | 0x80);
    else { out.push(b); return Buffer.from(out); }
  }
}
const fieldBytes = (num, payload) => Buffer.concat([varint((num << 3) | 2), varint(payload.length), payload]);
const fieldVarint = (num, v) => Buffer.concat([varint(num << 3), varint(v)]);
function record(payload) {
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(payload.length));
  const lenCrc = Buffer.alloc(4);
  lenCrc.writeUInt32LE(maskedCrc32c(len));
  const dataCrc = Buffer.alloc(4);
  dataCrc.writeUInt32LE(maskedCrc32c(payload));
  return Buffer.concat([len, lenCrc, payload, dataCrc]);
}
function event(name, values, step) {
  const floats = Buffer.from(new Float32Array(values).buffer);
  const shape = fieldBytes(2, fieldVarint(1, values.length));
  const tensor = Buffer.concat([fieldVarint(1, 1), fieldBytes(2, shape), fieldBytes(4, floats)]);
  const plugins = Buffer.concat([
    fieldBytes(1, Buffer.concat([fieldBytes(1, Buffer.from("mode_step")), fieldBytes(2, Buffer.from(String(step)))])),
    fieldBytes(1, Buffer.concat([fieldBytes(1, Buffer.from("mode")), fieldBytes(2, Buffer.from("1"))])),
  ]);
  const value = Buffer.concat([fieldBytes(1, Buffer.from(name)), fieldBytes(8, tensor), fieldBytes(9, plugins)]);
  const wall = Buffer.alloc(8);
  wall.writeDoubleLE(Date.now() / 1000);
  return record(Buffer.concat([Buffer.from([0x09]), wall, step ? fieldVarint(2, step) : Buffer.alloc(0), fieldBytes(5, fieldBytes(1, value))]));
}
function writeAtomic(file, data) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file + ".tmp", data);
  fs.renameSync(file + ".tmp", file);
}

// The value tensor `name` holds at `step` for worker number `w`.
const valueOf = (step, w) => [step, -1, 0.5, w + 1];

function writeTrial(dir, { tensors, workers, steps }) {
  for (const w of workers) {
    const doc = { collections: { default: { name: "default", include_regex: [".*"], tensor_names: tensors, reduction_config: {},
                                            save_config: {}, save_histogram: true } },
                  _meta: { num_workers: workers.length } };
    writeAtomic(path.join(dir, "collections", "000000000", `${w}_collections.json`), JSON.stringify(doc));
  }
  for (let step = 0; step < steps; step++)
    workers.forEach((w, wi) => {
      const s12 = String(step).padStart(12, "0");
      const events = `events/${s12}/${s12}_${w}.tfevents`;
      const parts = [];
      const payload = [];
      let at = 0;
      for (const name of tensors) {
        const rec = event(name, valueOf(step, wi), step);
        payload.push({ tensorname: name, start_idx: at, length: rec.length });
        parts.push(rec);
        at += rec.length;
      }
      writeAtomic(path.join(dir, events), Buffer.concat(parts));
      const index = { meta: { mode: "TRAIN", mode_step: step, event_file_name: events }, tensor_payload: payload, shape_payload: [] };
      writeAtomic(path.join(dir, "index", String(Math.floor(step / 1000)).padStart(9, "0"), `${s12}_${w}.json`), JSON.stringify(index));
    });
  writeAtomic(path.join(dir, "training_job_end.ts"), "");
}

module.exports = { writeTrial, valueOf };
