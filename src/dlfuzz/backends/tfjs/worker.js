// dlfuzz TF.js worker for Node (backends cpu and wasm), a child of dlfuzz's Python worker.
//
// Usage: node --disable-wasm-trap-handler worker.js --backend cpu|wasm --tfjs-dir DIR
//             --fd-out N [--graph-js FILE]
// Requests arrive on stdin, replies leave on file descriptor N (not stdout: tfjs and the
// code under test print to stdout, which goes to the worker's log). Each message is
// [u32 LE header length][u32 LE body length][JSON header][body bytes]; tensor data is
// raw bytes in the body, in the order of the header's specs. The process exits when
// stdin closes, so it never outlives the Python worker that feeds it.
'use strict';
const fs = require('fs');
const path = require('path');
const core = require('./core.js');

function option(name, fallback) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const wanted = option('backend', 'cpu');
const tfjsDir = option('tfjs-dir');
const fdOut = Number(option('fd-out', '1'));
const graphJs = option('graph-js', '');
const modules = path.join(tfjsDir, 'node_modules');

// tfjs-backend-wasm 3.x loads its .wasm with fetch when fetch exists (Node 18+), which
// fails for a file path; without fetch it reads the file, as every version does in Node.
delete globalThis.fetch;
const tf = require(path.join(modules, '@tensorflow', 'tfjs'));
if (wanted === 'wasm') require(path.join(modules, '@tensorflow', 'tfjs-backend-wasm'));
let buildGraph = null;

function send(header, chunks) {
  const body = Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
  const head = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32LE(head.length, 0);
  prefix.writeUInt32LE(body.length, 4);
  const all = Buffer.concat([prefix, head, body]);
  let done = 0;
  while (done < all.length) done += fs.writeSync(fdOut, all, done, all.length - done);
}

function reply(result) {
  if (!result.ok) return send(result, []);
  const outputs = result.outputs.map((o) => ({ dtype: o.dtype, shape: o.shape, nbytes: o.bytes.byteLength }));
  send({ ok: true, outputs }, result.outputs.map((o) => o.bytes));
}

function checkBackend() {
  const now = tf.getBackend();
  if (now !== wanted) {
    return { ok: false, error: { type: 'BackendFallback', stage: 'dlfuzz', crash: false,
      message: `tf.getBackend() is ${now}, not ${wanted}: not a result of ${wanted}` } };
  }
  return null;
}

async function handle(header, body) {
  if (header.op === 'run') return checkBackend() || core.runCall(tf, header, body);
  if (header.op === 'graph') {
    if (buildGraph === null) buildGraph = require(graphJs).buildGraph;
    return checkBackend() || core.runGraph(tf, buildGraph, header, body);
  }
  if (header.op === 'patch') {
    require(header.path)(tf);
    return { ok: true, outputs: [] };
  }
  return { ok: false, error: { type: 'DlfuzzError', message: 'unknown op ' + header.op, stage: 'dlfuzz' } };
}

let pending = Buffer.alloc(0);
let busy = Promise.resolve();

function pump() {
  while (pending.length >= 8) {
    const headLen = pending.readUInt32LE(0);
    const bodyLen = pending.readUInt32LE(4);
    if (pending.length < 8 + headLen + bodyLen) return;
    const header = JSON.parse(pending.subarray(8, 8 + headLen).toString('utf8'));
    const body = new Uint8Array(pending.subarray(8 + headLen, 8 + headLen + bodyLen));
    pending = pending.subarray(8 + headLen + bodyLen);
    busy = busy.then(async () => {
      let result;
      try {
        result = await handle(header, body);
      } catch (err) {
        result = { ok: false, error: core.describeError(err, 'call') };
      }
      reply(result);
      if (!result.ok && result.error.crash) process.exit(70); // the wasm heap is suspect now
    });
  }
}

async function main() {
  const ok = await tf.setBackend(wanted);
  await tf.ready();
  if (!ok || tf.getBackend() !== wanted) {
    send({ ok: false, error: { type: 'BackendFallback', stage: 'setup', message:
      `tf.setBackend('${wanted}') failed; tf.getBackend() is ${tf.getBackend()}` } }, []);
    process.exit(2);
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(modules, '@tensorflow', 'tfjs', 'package.json')));
  send({ ok: true, ready: true, version: pkg.version, backend: tf.getBackend() }, []);
  process.stdin.on('data', (chunk) => { pending = Buffer.concat([pending, chunk]); pump(); });
  process.stdin.on('end', () => busy.then(() => process.exit(0)));
}

main().catch((err) => {
  send({ ok: false, error: core.describeError(err, 'setup') }, []);
  process.exit(2);
});
