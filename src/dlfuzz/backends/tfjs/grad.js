/*
 * dlfuzz gradients on TensorFlow.js: the cotangents dlfuzz draws and J^T c of a call.
 *
 * Shared by the Node worker and the webgl page (core.js runs gradient cases and training
 * steps with it) and inlined into every TF.js gradient reproducer, so a reproducer
 * differentiates exactly as the worker did.
 *
 *   const G = require('.../grad.js');          // Node; window.dlfuzzGrad in a page
 *   G.grid(seed, salt, index, shape)           // Float32Array on the quarter-step grid
 *   G.weightedLoss(tf, value, seed, still)     // sum_k sum(out_k * cotangent_k)
 *   G.gradients(tf, f, xs)                     // {value, grads}: d f() / d xs
 *
 * grid() is dlfuzz.cases.grad.grid_draw, bit for bit: a 32-bit hash of (seed, salt,
 * index, shape) and each element's flat position picks one of GRID (values exact in
 * float32), so TF.js weighs its outputs with the cotangents PyTorch, JAX and TensorFlow
 * get. gradients() is tf.grads, except that an input the value does not depend on gets a
 * zero gradient (tf.grads throws there; the other libraries give zeros).
 */
(function (root, factory) {
  'use strict';
  const api = factory();
  if (typeof module !== 'undefined' && module.exports) {
    module.exports = api;
  } else {
    root.dlfuzzGrad = api;
  }
})(typeof globalThis !== 'undefined' ? globalThis : this, function () {
  'use strict';

  const GRID = [-2.0, -1.5, -1.0, -0.75, -0.5, -0.25, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0];
  const GOLDEN = 0x9E3779B9;

  // MurmurHash3's 32-bit finalizer.
  function mix32(h) {
    h = (h ^ (h >>> 16)) >>> 0;
    h = Math.imul(h, 0x85EBCA6B) >>> 0;
    h = (h ^ (h >>> 13)) >>> 0;
    h = Math.imul(h, 0xC2B2AE35) >>> 0;
    return (h ^ (h >>> 16)) >>> 0;
  }

  function grid(seed, salt, index, shape) {
    let key = 0;
    for (const part of [seed, salt, index, shape.length, ...shape]) {
      key = mix32((((key ^ (part >>> 0)) >>> 0) + GOLDEN) >>> 0);
    }
    const n = shape.reduce((a, b) => a * b, 1);
    const out = new Float32Array(n);
    for (let j = 0; j < n; j++) {
      out[j] = GRID[mix32((key + Math.imul(j, GOLDEN)) >>> 0) % GRID.length];
    }
    return out;
  }

  // The tensors of a call's result, nested arrays and objects flattened in order.
  function tensorsOf(tf, value, out) {
    if (value instanceof tf.Tensor) out.push(value);
    else if (Array.isArray(value)) value.forEach((v) => tensorsOf(tf, v, out));
    else if (value && typeof value === 'object' &&
             Object.getPrototypeOf(value) === Object.prototype) {
      Object.values(value).forEach((v) => tensorsOf(tf, v, out));
    }
    return out;
  }

  // The loss: the floating outputs but the `still` ones, each weighed by its cotangent.
  function weightedLoss(tf, value, seed, still) {
    if (value && typeof value.then === 'function') {
      throw new TypeError('the call returns a promise: it has no gradient');
    }
    const outs = tensorsOf(tf, value, []).filter(
      (o, k) => !(still || []).includes(k) && o.dtype === 'float32');
    if (!outs.length) throw new TypeError('no floating output to differentiate');
    let loss = null;
    outs.forEach((o, k) => {
      const c = tf.tensor(grid(seed, 1, k, o.shape), o.shape, 'float32');
      const term = tf.sum(tf.mul(o, c));
      loss = loss === null ? term : tf.add(loss, term);
    });
    return loss;
  }

  function gradients(tf, f, xs) {
    const { value, grads } = tf.engine().gradients(f, xs, undefined, true);
    return { value, grads: grads.map((g, i) => (g == null ? tf.zerosLike(xs[i]) : g)) };
  }

  return { grid, mix32, tensorsOf, weightedLoss, gradients, GRID };
});
