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
const { option, sender, readFrames } = require('./framing.js');

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

const send = sender(fdOut);
const bytesOf = (c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength);

function reply(result) {
  if (!result.ok) return send(result, Buffer.alloc(0));
  const outputs = result.outputs.map((o) => ({ dtype: o.dtype, shape: o.shape, nbytes: o.bytes.byteLength }));
  send({ ok: true, outputs }, Buffer.concat(result.outputs.map((o) => bytesOf(o.bytes))));
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
  if (header.op === 'grad') return checkBackend() || core.runGrad(tf, header, body);
  if (header.op === 'train') {
    if (buildGraph === null) buildGraph = require(graphJs).buildGraph;
    return checkBackend() || core.runTrain(tf, buildGraph, header, body);
  }
  if (header.op === 'patch') {
    require(header.path)(tf);
    return { ok: true, outputs: [] };
  }
  return { ok: false, error: { type: 'DlfuzzError', message: 'unknown op ' + header.op, stage: 'dlfuzz' } };
}

let busy = Promise.resolve();

function onFrame(header, body) {
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

async function main() {
  const ok = await tf.setBackend(wanted);
  await tf.ready();
  if (!ok || tf.getBackend() !== wanted) {
    send({ ok: false, error: { type: 'BackendFallback', stage: 'setup', message:
      `tf.setBackend('${wanted}') failed; tf.getBackend() is ${tf.getBackend()}` } }, Buffer.alloc(0));
    process.exit(2);
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(modules, '@tensorflow', 'tfjs', 'package.json')));
  send({ ok: true, ready: true, version: pkg.version, backend: tf.getBackend() }, Buffer.alloc(0));
  readFrames(onFrame, () => busy.then(() => process.exit(0)));
}

main().catch((err) => {
  send({ ok: false, error: core.describeError(err, 'setup') }, Buffer.alloc(0));
  process.exit(2);
});
