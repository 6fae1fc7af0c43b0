'use strict';
// Starts s3rver on 127.0.0.1 and prints one JSON line when it is ready:
//   {"address":"127.0.0.1","port":41213,"directory":"...","https":false}
// Environment: S3RVER_PORT (0 = a free port), S3RVER_DIR (default: a temporary folder, deleted at
// exit), S3RVER_BUCKETS (comma-separated, created at start), S3RVER_KEY + S3RVER_CERT (PEM files:
// serve HTTPS), S3RVER_NO_VHOST, S3RVER_SERVICE_ENDPOINT, S3RVER_VERBOSE, S3RVER_WATCH_STDIN=1
// (exit when stdin closes, so a crashed parent cannot leave it behind).
// Run with `node --openssl-legacy-provider` so that ListObjectsV2 pagination works on Node >= 17.
const fs = require('fs');
const os = require('os');
const path = require('path');
const S3rver = require('s3rver');

const port = Number(process.env.S3RVER_PORT || 0);
const dir = process.env.S3RVER_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
const buckets = (process.env.S3RVER_BUCKETS || 'test-bucket').split(',').filter(Boolean);
const opts = {
  address: '127.0.0.1',
  port,
  silent: !process.env.S3RVER_VERBOSE,
  directory: dir,
  resetOnClose: true,
  configureBuckets: buckets.map(name => ({ name })),
};
if (process.env.S3RVER_KEY && process.env.S3RVER_CERT) {
  opts.key = fs.readFileSync(process.env.S3RVER_KEY);
  opts.cert = fs.readFileSync(process.env.S3RVER_CERT);
}
if (process.env.S3RVER_NO_VHOST) opts.vhostBuckets = false;
if (process.env.S3RVER_SERVICE_ENDPOINT) opts.serviceEndpoint = process.env.S3RVER_SERVICE_ENDPOINT;

const server = new S3rver(opts);
server.run().then(addr => {
  process.stdout.write(JSON.stringify({ address: addr.address, port: addr.port, directory: dir,
                                        https: Boolean(opts.key) }) + '\n');
}, err => { console.error(err); process.exit(1); });

let closing = false;
function shutdown() {
  if (closing) return;
  closing = true;
  server.close().catch(() => {}).then(() => {
    if (!process.env.S3RVER_DIR) fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
if (process.env.S3RVER_WATCH_STDIN) {
  process.stdin.on('end', shutdown);
  process.stdin.resume();
}
