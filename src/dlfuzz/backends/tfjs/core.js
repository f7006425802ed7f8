// dlfuzz TF.js core: decode a case, make the call, encode the outputs.
//
// Shared by the Node worker (worker.js, backends cpu and wasm) and the Chromium page
// (page.html, backend webgl), so both run a case in exactly the same way. Inputs are
// built here from the host's bytes (never computed with tfjs); outputs leave as bytes.
//
// Wire values (the host's Python side writes them, see wire.py):
//   {"$ref": i}       the i-th input tensor     {"$dtype": "float32"}  a dtype string
//   {"$float": "nan"} NaN / "inf" / "-inf"      {"$obj": {...}}        a JS object
//   arrays, numbers, strings, booleans          as themselves; null -> undefined
(function (root) {
  'use strict';

  const ELEMENT_BYTES = { float32: 4, int32: 4, bool: 1, complex64: 8 };

  function copyBytes(bytes, offset, n) {
    // A fresh ArrayBuffer: typed arrays need aligned offsets, and tfjs may keep it.
    const out = new Uint8Array(n);
    out.set(bytes.subarray(offset, offset + n));
    return out.buffer;
  }

  function makeTensor(tf, spec, bytes, offset) {
    const size = spec.shape.reduce((a, b) => a * b, 1);
    const n = size * ELEMENT_BYTES[spec.dtype];
    const buf = copyBytes(bytes, offset, n);
    if (spec.dtype === 'float32') return tf.tensor(new Float32Array(buf), spec.shape, 'float32');
    if (spec.dtype === 'int32') return tf.tensor(new Int32Array(buf), spec.shape, 'int32');
    if (spec.dtype === 'bool') return tf.tensor(new Uint8Array(buf), spec.shape, 'bool');
    if (spec.dtype === 'complex64') {
      const both = new Float32Array(buf);
      const re = new Float32Array(size);
      const im = new Float32Array(size);
      for (let i = 0; i < size; i++) { re[i] = both[2 * i]; im[i] = both[2 * i + 1]; }
      return tf.complex(tf.tensor(re, spec.shape), tf.tensor(im, spec.shape));
    }
    throw new TypeError('tfjs has no dtype ' + spec.dtype);
  }

  function makeTensors(tf, specs, bytes) {
    const out = [];
    let offset = 0;
    for (const spec of specs) {
      out.push(makeTensor(tf, spec, bytes, offset));
      offset += spec.nbytes;
    }
    return out;
  }

  // Python's None is JS' undefined: an omitted argument, so tfjs applies its default
  // (null would not: `dataFormat = 'NHWC'` stays null when given null).
  function decode(value, tensors) {
    if (Array.isArray(value)) return value.map((v) => decode(v, tensors));
    if (value === null) return undefined;
    if (typeof value !== 'object') return value;
    if ('$ref' in value) return tensors[value.$ref];
    if ('$dtype' in value) return value.$dtype;
    if ('$float' in value) {
      return value.$float === 'nan' ? NaN : (value.$float === 'inf' ? Infinity : -Infinity);
    }
    if ('$obj' in value) {
      const out = {};
      for (const [k, v] of Object.entries(value.$obj)) out[k] = decode(v, tensors);
      return out;
    }
    throw new TypeError('unknown wire value ' + JSON.stringify(value));
  }

  function resolve(tf, target) {
    const parts = target.split('.');
    if (parts[0] !== 'tf') throw new TypeError('target must start with tf.: ' + target);
    let owner = tf;
    let fn = tf;
    for (const part of parts.slice(1)) {
      owner = fn;
      fn = fn == null ? undefined : fn[part];
    }
    if (typeof fn !== 'function') throw new TypeError(target + ' is not a function');
    return [owner, fn];
  }

  // The typed array of each dtype's values. dataSync() does not always return it: the cpu
  // backend casts bool to float32 or int32 without copying ("no encoding loss"), so the
  // float32 tensor's values stay a Uint8Array (tfjs 4.10), whose bytes read as float32
  // would be garbage. Such values are copied into the dtype's array.
  const DTYPE_ARRAYS = {float32: Float32Array, int32: Int32Array, bool: Uint8Array};

  function asDtypeArray(dtype, values) {
    const Array_ = DTYPE_ARRAYS[dtype];
    return Array_ && !(values instanceof Array_) ? Array_.from(values) : values;
  }

  function encodeTensor(tf, t) {
    const shape = t.shape.slice();
    let data;
    if (t.dtype === 'complex64') {
      const re = tf.real(t).dataSync();
      const im = tf.imag(t).dataSync();
      data = new Float32Array(2 * re.length);
      for (let i = 0; i < re.length; i++) { data[2 * i] = re[i]; data[2 * i + 1] = im[i]; }
    } else if (t.dtype === 'string') {
      throw new TypeError('string outputs are not compared by dlfuzz');
    } else {
      data = asDtypeArray(t.dtype, t.dataSync());
    }
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    return { dtype: t.dtype, shape, bytes };
  }

  function flatten(tf, value, out) {
    if (value instanceof tf.Tensor) {
      out.push(encodeTensor(tf, value));
    } else if (Array.isArray(value)) {
      for (const v of value) flatten(tf, v, out);
    } else if (value === null || value === undefined) {
      // nothing
    } else if (typeof value === 'number') {
      out.push({ dtype: 'float64', shape: [], bytes: new Uint8Array(new Float64Array([value]).buffer) });
    } else if (typeof value === 'boolean') {
      out.push({ dtype: 'bool', shape: [], bytes: new Uint8Array([value ? 1 : 0]) });
    } else if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      for (const v of Object.values(value)) flatten(tf, v, out);
    } else {
      throw new TypeError('cannot compare an output of type ' + typeof value);
    }
    return out;
  }

  // Every error leaves as {type, message, stage, crash}: a wasm trap or abort is a crash
  // of the library (the host maps it to status "crash" and restarts the process).
  const CRASH_RE = /memory access out of bounds|Aborted\(|^abort|unreachable|RuntimeError/;

  function describeError(err, stage) {
    const type = (err && err.constructor && err.constructor.name) || 'Error';
    const message = String((err && err.message) || err);
    const wasmTrap = typeof WebAssembly !== 'undefined' && err instanceof WebAssembly.RuntimeError;
    const crash = wasmTrap || CRASH_RE.test(type + ': ' + message);
    return { type, message: message.slice(0, 4000), stage, crash };
  }

  // Runs fn inside a tfjs scope so every tensor made for the case is freed after it.
  async function scoped(tf, fn) {
    tf.engine().startScope();
    try {
      return await fn();
    } finally {
      tf.engine().endScope();
    }
  }

  // The call (stage 'call', awaited if it returns a promise), then its outputs read
  // back (stage 'fetch'): each failure names the stage it happened in.
  async function callAndFetch(tf, call) {
    let result;
    try {
      result = call();
      if (result && typeof result.then === 'function') result = await result;
    } catch (err) {
      return { ok: false, error: describeError(err, 'call') };
    }
    try {
      return { ok: true, outputs: flatten(tf, result, []) };
    } catch (err) {
      return { ok: false, error: describeError(err, 'fetch') };
    }
  }

  // An API case's inputs and its call, ready to make: {inputs, call}, or {failed} with
  // the 'prepare' error to reply.
  function prepareCall(tf, header, bytes) {
    try {
      const inputs = makeTensors(tf, header.tensors, bytes);
      const [owner, fn] = resolve(tf, header.call.target);
      const args = header.call.args.map((a) => decode(a, inputs));
      if (header.call.kwargs) args.push(decode({ $obj: header.call.kwargs }, inputs));
      return { inputs, call: () => fn.apply(owner, args) };
    } catch (err) {
      return { failed: { ok: false, error: describeError(err, 'prepare') } };
    }
  }

  // One API case: {call, tensors (specs)} + the concatenated input bytes.
  async function runCall(tf, header, bytes) {
    return scoped(tf, async () => {
      const prepared = prepareCall(tf, header, bytes);
      return prepared.failed || callAndFetch(tf, prepared.call);
    });
  }

  // Models: built once per key by graph.js's buildGraph, weights kept across runs.
  const models = new Map();
  const MODEL_CACHE = 16;

  async function runGraph(tf, buildGraph, header, bytes) {
    let model = models.get(header.key);
    if (model === undefined) {
      if (!header.graph) return { ok: false, error: { type: 'DlfuzzError', message: 'model not cached', stage: 'dlfuzz', crash: false, evicted: true } };
      try {
        const all = makeTensors(tf, header.tensors, bytes);
        const weights = {};
        header.weights.forEach((name, i) => { weights[name] = tf.keep(all[header.inputs + i]); });
        all.slice(0, header.inputs).forEach((t) => t.dispose());
        const fn = buildGraph(tf, header.graph, weights, { probe: !!header.probe });
        model = { fn, weights };
        models.set(header.key, model);
        while (models.size > MODEL_CACHE) {
          const [oldKey, old] = models.entries().next().value;
          Object.values(old.weights).forEach((t) => t.dispose());
          models.delete(oldKey);
        }
      } catch (err) {
        return { ok: false, error: describeError(err, 'build') };
      }
    }
    return scoped(tf, async () => {
      let inputs;
      try {
        inputs = makeTensors(tf, header.tensors.slice(0, header.inputs), bytes);
      } catch (err) {
        return { ok: false, error: describeError(err, 'prepare') };
      }
      return callAndFetch(tf, () => model.fn(inputs));
    });
  }

  // grad.js: in Node next to this file, in the page a script loaded before this one.
  const G = typeof module !== 'undefined' && module.exports ? require('./grad.js')
    : root.dlfuzzGrad;

  // The gradient's outputs read back (stage 'fetch'); `stage` says where f failed.
  function gradientResult(tf, run) {
    const where = { stage: 'call' };
    let tensors;
    try {
      tensors = run(where);
    } catch (err) {
      return { ok: false, error: describeError(err, where.stage) };
    }
    try {
      return { ok: true, outputs: tensors.map((t) => encodeTensor(tf, t)) };
    } catch (err) {
      return { ok: false, error: describeError(err, 'fetch') };
    }
  }

  // One gradient case: the API case's {call, tensors} plus {wrt, still, seed}. Outputs:
  // J^T c per input of `wrt` (c: grad.js's cotangents of the floating outputs).
  async function runGrad(tf, header, bytes) {
    return scoped(tf, async () => {
      const prepared = prepareCall(tf, header, bytes);
      if (prepared.failed) return prepared.failed;
      const primals = header.wrt.map((i) => prepared.inputs[i]);
      return gradientResult(tf, (where) => G.gradients(tf, () => {
        const loss = G.weightedLoss(tf, prepared.call(), header.seed, header.still);
        where.stage = 'backward';
        return loss;
      }, primals).grads);
    });
  }

  // One training step of a model: {graph, names, trained, wrt, seed, rate, tensors (the
  // weights in `names` order, then the inputs)}. The model is built from the weights
  // inside the differentiated function, so tfjs differentiates its own ops. Outputs: the
  // gradients (trained weights, then the `wrt` inputs), the loss, the trained weights
  // after one SGD step (w - rate * g).
  async function runTrain(tf, buildGraph, header, bytes) {
    return scoped(tf, async () => {
      let all;
      try {
        all = makeTensors(tf, header.tensors, bytes);
      } catch (err) {
        return { ok: false, error: describeError(err, 'prepare') };
      }
      const nw = header.names.length;
      const weights = all.slice(0, nw);
      const inputs = all.slice(nw);
      const primals = header.trained.map((i) => weights[i])
        .concat(header.wrt.map((i) => inputs[i]));
      return gradientResult(tf, (where) => {
        const { value, grads } = G.gradients(tf, () => {
          const W = {};
          header.names.forEach((name, i) => { W[name] = weights[i]; });
          where.stage = 'build';
          const model = buildGraph(tf, header.graph, W, { probe: false });
          where.stage = 'call';
          const loss = G.weightedLoss(tf, model(inputs), header.seed, []);
          where.stage = 'backward';
          return loss;
        }, primals);
        where.stage = 'fetch';
        const stepped = header.trained.map(
          (i, j) => tf.sub(weights[i], tf.mul(tf.scalar(header.rate), grads[j])));
        return grads.concat([value], stepped);
      });
    });
  }

  const api = { runCall, runGraph, runGrad, runTrain, describeError, makeTensors,
    asDtypeArray, ELEMENT_BYTES };
  if (typeof module !== 'undefined' && module.exports) module.exports = api;
  else root.dlfuzzCore = api;
})(typeof globalThis !== 'undefined' ? globalThis : this);
