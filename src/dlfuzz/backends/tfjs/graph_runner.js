#!/usr/bin/env node
/*
 * Test/tool runner for graph.js: one JSON request on stdin, one JSON answer on stdout.
 * Not the backend worker (that one keeps tfjs loaded and calls buildGraph itself).
 *
 * Request: {"tfjs_dir": "<dir holding node_modules/@tensorflow>", "backend": "cpu"|"wasm",
 *           "cases": [{"graph": <IR JSON>, "weights": {"n0.kernel": T, ...},
 *                      "inputs": [T, ...], "probe": false, "repeat": 1}]}
 *   (repeat: run the one built function that many times; "stable" says whether every run
 *   gave the same bits, "tensors_left" counts tensors alive after all cases: leaks).
 *   where T = {"shape": [..], "dtype": "float32"|"int32"|"bool" (default float32),
 *              "data": "<base64 of the little-endian values>"}.
 * Answer (one stdout line starting with "DLFUZZ-RESULT ", since tfjs itself may print):
 *          {"backend": tf.getBackend(), "version": tf.version_core, "ops": [...],
 *           "unsupported": [...], "tensors_left": n,
 *           "results": [{"ok": true, "outputs": [T, ...], "stable": true} |
 *           {"ok": false, "stage": "build"|"run", "error": name, "message": text}]}
 */
'use strict';
const fs = require('fs');
const path = require('path');
const core = require('./core.js');
const graph = require('./graph.js');

const ARRAYS = {float32: Float32Array, int32: Int32Array, bool: Uint8Array};

function toTensor(tf, t) {
  const dtype = t.dtype || 'float32';
  if (!ARRAYS[dtype]) throw new Error(`wire dtype ${dtype} (float32, int32 and bool only)`);
  const bytes = Buffer.from(t.data, 'base64');
  // Copy into a fresh buffer: a Buffer's byteOffset need not be 4-aligned.
  const values = new ARRAYS[dtype](new Uint8Array(bytes).buffer);
  return tf.tensor(values, t.shape, dtype);
}

function fromTensor(t) {
  if (!ARRAYS[t.dtype]) throw new Error(`output dtype ${t.dtype} (float32, int32 and bool only)`);
  // The cpu backend's cast from bool keeps the bool's Uint8Array: core.js copies it.
  const values = core.asDtypeArray(t.dtype, t.dataSync());
  const bytes = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  return {shape: t.shape, dtype: t.dtype, data: bytes.toString('base64')};
}

function runCase(tf, c) {
  const weights = {};
  for (const [k, v] of Object.entries(c.weights || {})) weights[k] = toTensor(tf, v);
  const inputs = (c.inputs || []).map((t) => toTensor(tf, t));
  let stage = 'build';
  try {
    const run = graph.buildGraph(tf, c.graph, weights, {probe: Boolean(c.probe)});
    stage = 'run';
    let first = null;
    let result = null;
    for (let i = 0; i < Math.max(1, c.repeat || 1); i++) {
      const outs = run(inputs);
      const wire = outs.map(fromTensor);
      tf.dispose(outs);
      if (first === null) first = JSON.stringify(wire);
      result = {ok: true, outputs: wire, stable: (result ? result.stable : true) &&
        JSON.stringify(wire) === first};
    }
    return result;
  } catch (err) {
    return {ok: false, stage, error: (err && err.name) || 'Error',
      message: String((err && err.message) || err)};
  } finally {
    tf.dispose(Object.values(weights));
    tf.dispose(inputs);
  }
}

async function main() {
  const req = JSON.parse(fs.readFileSync(0, 'utf8'));
  const modules = path.join(req.tfjs_dir, 'node_modules');
  const tf = require(path.join(modules, '@tensorflow', 'tfjs'));
  if (req.backend === 'wasm') require(path.join(modules, '@tensorflow', 'tfjs-backend-wasm'));
  const backend = req.backend || 'cpu';
  if (!(await tf.setBackend(backend))) throw new Error(`tfjs backend ${backend} failed`);
  await tf.ready();
  if (tf.getBackend() !== backend) {
    throw new Error(`asked for tfjs backend ${backend}, got ${tf.getBackend()}`);
  }
  const before = tf.memory().numTensors;
  const results = (req.cases || []).map((c) => runCase(tf, c));
  const answer = {backend: tf.getBackend(), version: tf.version_core, ops: graph.OPS,
    unsupported: graph.UNSUPPORTED, tensors_left: tf.memory().numTensors - before, results};
  process.stdout.write('\nDLFUZZ-RESULT ' + JSON.stringify(answer) + '\n');
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + '\n');
  process.exit(1);
});
