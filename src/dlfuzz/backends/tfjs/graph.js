/*
 * dlfuzz graph IR interpreter on TensorFlow.js ops (docs/ir.md is the contract).
 *
 * Interface (for the tfjs workers and pages; helper J-RUN):
 *   const {buildGraph, UNSUPPORTED, OPS} = require('.../graph.js');   // Node
 *   <script src="graph.js"></script> -> window.dlfuzzGraph             // browser page
 *   const run = buildGraph(tf, graphJson, weights, {probe: false});
 *   const outs = run([x0, x1, ...]);   // tf.Tensor[]: the graph outputs, in order
 * - graphJson: the parsed IR JSON, either Graph.to_dict() ({inputs, nodes, outputs}) or a
 *   whole model.json document ({"format": "dlfuzz-model", "graph": {...}}).
 * - weights: {"n3.kernel": tf.Tensor, ...} in the graph's dtype (float32, or int32 for an
 *   integer graph, whose kinds docs/ir.md lists; tfjs has no int64). The interpreter
 *   never disposes them; the caller owns them and may reuse them across many runs.
 * - build-time Errors (thrown by buildGraph, before any computation):
 *   "graph dtype <d> is not supported by tfjs (float32, int32 and bool only)",
 *   "unsupported op <Kind>: <why>"
 *   (kinds listed in UNSUPPORTED), "unknown op kind <Kind>", "missing weight <name>".
 * - run-time: inputs are checked (count, shape, dtype) and must not be disposed by the
 *   call; every intermediate is freed by tf.tidy; the returned tensors are new (an output
 *   that is a graph input is cloned), the caller disposes them. {probe: true} returns every
 *   node's value in node order instead of the outputs (layer localization).
 * - a library error inside a node keeps its type and text, prefixed "<OpKind>: ", with
 *   err.dlfuzzNode = the node id.
 * - deterministic: no randomness (Dropout is the identity, recurrent state starts at zero).
 * Everything computes in the graph's dtype with tfjs' own kernels on whatever backend is active, so
 * a difference between tfjs backends (or against TF/torch) is the library's, not ours.
 * Spellings are the same on every backend; two avoid webgl shader rank limits (rank-5
 * pad, rank-5 where; see zeroPad and where below). Checked against torch in float64 by
 * tests/backends/test_tfjs_graph.py on cpu, wasm and webgl (known tfjs-wasm 4.22.0 bugs:
 * MaxPool3D of an all-negative window gives FLT_MIN; Conv3DTranspose drops depth slices).
 */
(function (root, factory) {
  'use strict';
  const api = factory();
  if (typeof module !== 'undefined' && module.exports) {
    module.exports = api;
  } else {
    root.dlfuzzGraph = api;
  }
})(typeof globalThis !== 'undefined' ? globalThis : this, function () {
  'use strict';

  // Op kinds this interpreter refuses at build time, with the reason (none today: every
  // kind of dlfuzz.ir.ops.CATALOG has an exact tfjs spelling). Kept as data so the Python
  // side (tests, engine) can read it and never send such a graph.
  const UNSUPPORTED = {};

  function range(lo, hi) {
    const out = [];
    for (let i = lo; i < hi; i++) out.push(i);
    return out;
  }

  function windowStrides(a) {
    // Pooling: strides () means strides = pool_size.
    return a.strides && a.strides.length ? a.strides : a.pool_size;
  }

  // Each entry: (node, ctx) -> (xs) => tensor; the outer call runs once at build time
  // (attributes read, weights fetched by `ctx.w(name)` and checked), the inner one per
  // run inside tf.tidy.
  function makeOps(tf) {
    const bias = (y, b) => (b ? tf.add(y, b) : y);
    // tf.where on equal shapes, run flat: webgl's Select has no rank-5 shader ("Where for
    // rank 5 is not yet supported"); the flat spelling is exact and the same everywhere.
    const where = (cond, a, b) => tf.reshape(
      tf.where(tf.reshape(cond, [-1]), tf.reshape(a, [-1]), tf.reshape(b, [-1])), a.shape);
    // The Compare and Logical modes (ir/ops/logic.py) by name.
    const COMPARE = {
      greater: tf.greater, greater_equal: tf.greaterEqual, less: tf.less,
      less_equal: tf.lessEqual, equal: tf.equal, not_equal: tf.notEqual,
    };
    const LOGICAL = {and: tf.logicalAnd, or: tf.logicalOr, xor: tf.logicalXor};

    function dense(n, c) {
      const k = c.w('kernel');
      const b = n.attrs.use_bias ? c.w('bias') : null;
      return ([x]) => {
        if (x.rank === 2) return bias(tf.matMul(x, k), b);
        // Contract the last axis: fold the leading axes into rows, as tensordot does.
        const s = x.shape;
        const y = tf.matMul(tf.reshape(x, [-1, s[s.length - 1]]), k);
        return bias(tf.reshape(y, s.slice(0, -1).concat([k.shape[1]])), b);
      };
    }

    function conv(n, c) {
      const a = n.attrs;
      const k = c.w('kernel');
      const b = a.use_bias ? c.w('bias') : null;
      const s = a.strides;
      const d = a.dilation_rate;
      const p = a.padding;
      if (s.length === 1) return ([x]) => bias(tf.conv1d(x, k, s[0], p, 'NWC', d[0]), b);
      if (s.length === 2) return ([x]) => bias(tf.conv2d(x, k, s, p, 'NHWC', d), b);
      return ([x]) => bias(tf.conv3d(x, k, s, p, 'NDHWC', d), b);
    }

    function depthwise(n, c) {
      const a = n.attrs;
      const k = c.w('kernel');
      const b = a.use_bias ? c.w('bias') : null;
      return ([x]) => bias(tf.depthwiseConv2d(x, k, a.strides, a.padding, 'NHWC',
        a.dilation_rate), b);
    }

    function separable(n, c) {
      const a = n.attrs;
      const dk = c.w('depthwise_kernel');
      const pk = c.w('pointwise_kernel');
      const b = a.use_bias ? c.w('bias') : null;
      if (a.strides.length === 2) {
        return ([x]) => bias(tf.separableConv2d(x, dk, pk, a.strides, a.padding,
          a.dilation_rate, 'NHWC'), b);
      }
      // 1D runs as 2D on a height-1 image (as Keras does): kernel height 1, stride 1
      // on the height axis, so height stays 1 for either padding.
      return ([x]) => {
        const y = tf.separableConv2d(tf.expandDims(x, 1), tf.expandDims(dk, 0),
          tf.expandDims(pk, 0), [1, a.strides[0]], a.padding, [1, a.dilation_rate[0]],
          'NHWC');
        return bias(tf.squeeze(y, [1]), b);
      };
    }

    function convTranspose(n, c) {
      const a = n.attrs;
      const k = c.w('kernel'); // (*k, filters, cin): tfjs' [.., outDepth, inDepth]
      const b = a.use_bias ? c.w('bias') : null;
      const nsp = a.strides.length;
      const outShape = (x) => {
        const shape = [x.shape[0]];
        for (let i = 0; i < nsp; i++) {
          const len = x.shape[1 + i];
          const ks = a.kernel_size[i];
          const s = a.strides[i];
          shape.push(a.padding === 'same' ? len * s : (len - 1) * s + ks);
        }
        shape.push(a.filters);
        return shape;
      };
      if (nsp === 2) {
        return ([x]) => bias(tf.conv2dTranspose(x, k, outShape(x), a.strides, a.padding), b);
      }
      return ([x]) => bias(tf.conv3dTranspose(x, k, outShape(x), a.strides, a.padding), b);
    }

    function pool(kind, nsp) {
      return (n) => {
        const a = n.attrs;
        const ps = a.pool_size;
        const st = windowStrides(a);
        const p = a.padding;
        const fn2 = kind === 'max' ? tf.maxPool : tf.avgPool;
        if (nsp === 1) {
          // 1D as 2D on a height-1 image: window and stride 1 on the height axis.
          return ([x]) => tf.squeeze(fn2(tf.expandDims(x, 1), [1, ps[0]], [1, st[0]], p),
            [1]);
        }
        if (nsp === 2) return ([x]) => fn2(x, ps, st, p);
        const fn3 = kind === 'max' ? tf.maxPool3d : tf.avgPool3d;
        return ([x]) => fn3(x, ps, st, p, undefined, 'NDHWC');
      };
    }

    function globalPool(kind) {
      return () => ([x]) => {
        const axes = range(1, x.rank - 1);
        return kind === 'max' ? tf.max(x, axes) : tf.mean(x, axes);
      };
    }

    function relu(n) {
      const cap = n.attrs.max_value;
      if (cap === null || cap === undefined) return ([x]) => tf.relu(x);
      if (cap === 6) return ([x]) => tf.relu6(x);
      return ([x]) => tf.minimum(tf.relu(x), tf.scalar(cap, x.dtype));
    }

    function elu(n) {
      const alpha = n.attrs.alpha;
      if (alpha === 1) return ([x]) => tf.elu(x);
      // tf.elu has alpha 1; another alpha scales its negative branch (as Keras does).
      return ([x]) => where(tf.greater(x, 0), x, tf.mul(tf.elu(x), alpha));
    }

    function softmax(n) {
      const axis = n.attrs.axis;
      return ([x]) => {
        const ax = axis < 0 ? x.rank + axis : axis;
        if (ax === x.rank - 1) return tf.softmax(x);
        // tf.softmax only reduces the last axis: swap the axis there and back.
        const perm = range(0, x.rank);
        perm[ax] = x.rank - 1;
        perm[x.rank - 1] = ax;
        return tf.transpose(tf.softmax(tf.transpose(x, perm)), perm);
      };
    }

    function gelu(n) {
      if (n.attrs.approximate) {
        const c = Math.sqrt(2 / Math.PI);
        return ([x]) => {
          // x^3 as products: webgl's pow is exp2(3 log2|x|), needlessly inexact.
          const cube = tf.mul(tf.mul(x, x), x);
          const inner = tf.mul(tf.add(x, tf.mul(cube, 0.044715)), c);
          return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1));
        };
      }
      return ([x]) => tf.mul(tf.mul(x, 0.5), tf.add(tf.erf(tf.mul(x, Math.SQRT1_2)), 1));
    }

    function batchNorm(n, c) {
      const mean = c.w('moving_mean');
      const variance = c.w('moving_variance');
      const beta = c.w('beta');
      const gamma = c.w('gamma');
      const eps = n.attrs.epsilon;
      return ([x]) => tf.batchNorm(x, mean, variance, beta, gamma, eps);
    }

    function layerNorm(n, c) {
      const beta = c.w('beta');
      const gamma = c.w('gamma');
      const eps = n.attrs.epsilon;
      return ([x]) => {
        const mean = tf.mean(x, -1, true);
        const variance = tf.mean(tf.squaredDifference(x, mean), -1, true);
        const norm = tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, eps)));
        return tf.add(tf.mul(norm, gamma), beta);
      };
    }

    function fold(fn) {
      // A binary op applied left to right over all inputs (Keras merge order).
      return () => (xs) => xs.slice(1).reduce((acc, y) => fn(acc, y), xs[0]);
    }

    function scalarWeight(fn) {
      return (n, c) => {
        const v = c.w('value');
        return ([x]) => fn(x, v);
      };
    }

    function upsample(n) {
      const size = n.attrs.size;
      return ([x]) => {
        let y = x;
        size.forEach((reps, i) => {
          if (reps === 1) return;
          // repeat each element along axis: insert an axis after it, tile, merge.
          const axis = i + 1;
          const shape = y.shape;
          const tiles = shape.map(() => 1);
          tiles.splice(axis + 1, 0, reps);
          y = tf.tile(tf.expandDims(y, axis + 1), tiles);
          const merged = shape.slice();
          merged[axis] = shape[axis] * reps;
          y = tf.reshape(y, merged);
        });
        return y;
      };
    }

    function crop(n) {
      const pairs = n.attrs.cropping;
      return ([x]) => {
        const begin = [0].concat(pairs.map((p) => p[0]), [0]);
        const size = [-1].concat(pairs.map((p, i) => x.shape[1 + i] - p[0] - p[1]), [-1]);
        return tf.slice(x, begin, size);
      };
    }

    function zeroPad(n) {
      const pairs = n.attrs.padding.map((p) => [p[0], p[1]]);
      if (pairs.length < 3) return ([x]) => tf.pad(x, [[0, 0]].concat(pairs, [[0, 0]]));
      // The webgl Pad shader does not compile for rank 5 (tensorflow/tfjs#6167, still in
      // 4.22), so 3D padding is two exact rank <= 4 pads on every backend (one spelling
      // for all of them): (H, W) on (N*D, H, W, C), then D on (N, D, H'*W'*C).
      return ([x]) => {
        const [N, D, H, W, C] = x.shape;
        const [pd, ph, pw] = pairs;
        let y = tf.pad(tf.reshape(x, [N * D, H, W, C]), [[0, 0], ph, pw, [0, 0]]);
        const H2 = H + ph[0] + ph[1];
        const W2 = W + pw[0] + pw[1];
        y = tf.pad(tf.reshape(y, [N, D, H2 * W2 * C]), [[0, 0], pd, [0, 0]]);
        return tf.reshape(y, [N, D + pd[0] + pd[1], H2, W2, C]);
      };
    }

    function reduce(fn) {
      return (n) => ([x]) => fn(x, n.attrs.axes, n.attrs.keepdims);
    }

    // ---- recurrent: unrolled over the static time axis, zero initial state ----------
    function recurrent(cell) {
      return (n, c) => {
        const k = c.w('kernel');
        const r = c.w('recurrent_kernel');
        const b = c.w('bias');
        const seq = n.attrs.return_sequences;
        return ([x]) => {
          const units = r.shape[0];
          let state = {h: tf.zeros([x.shape[0], units]), c: null};
          if (cell === 'LSTM') state.c = tf.zeros([x.shape[0], units]);
          const bias2 = cell === 'GRU' ? tf.unstack(b) : null;
          const hs = [];
          for (const xt of tf.unstack(x, 1)) {
            state = STEP[cell](xt, state, k, r, b, bias2);
            hs.push(state.h);
          }
          return seq ? tf.stack(hs, 1) : state.h;
        };
      };
    }

    const STEP = {
      SimpleRNN(xt, s, k, r, b) {
        return {h: tf.tanh(tf.add(tf.add(tf.matMul(xt, k), tf.matMul(s.h, r)), b))};
      },
      LSTM(xt, s, k, r, b) {
        // gates i, f, c, o
        const z = tf.add(tf.add(tf.matMul(xt, k), tf.matMul(s.h, r)), b);
        const [i, f, g, o] = tf.split(z, 4, 1);
        const c = tf.add(tf.mul(tf.sigmoid(f), s.c), tf.mul(tf.sigmoid(i), tf.tanh(g)));
        return {h: tf.mul(tf.sigmoid(o), tf.tanh(c)), c};
      },
      GRU(xt, s, k, r, b, b2) {
        // reset_after, gates z, r, h; bias row 0 input side, row 1 recurrent side
        const [xz, xr, xh] = tf.split(tf.add(tf.matMul(xt, k), b2[0]), 3, 1);
        const [hz, hr, hh] = tf.split(tf.add(tf.matMul(s.h, r), b2[1]), 3, 1);
        const z = tf.sigmoid(tf.add(xz, hz));
        const rr = tf.sigmoid(tf.add(xr, hr));
        const cand = tf.tanh(tf.add(xh, tf.mul(rr, hh)));
        return {h: tf.add(tf.mul(z, s.h), tf.mul(tf.sub(1, z), cand))};
      },
    };

    const ops = {
      Dense: dense,
      Conv1D: conv, Conv2D: conv, Conv3D: conv,
      DepthwiseConv2D: depthwise,
      SeparableConv1D: separable, SeparableConv2D: separable,
      Conv2DTranspose: convTranspose, Conv3DTranspose: convTranspose,
      AddConst: scalarWeight(tf.add),
      MulConst: scalarWeight(tf.mul),
      ReLU: relu,
      LeakyReLU: (n) => ([x]) => tf.leakyRelu(x, n.attrs.alpha),
      PReLU: (n, c) => {
        const alpha = c.w('alpha');
        return ([x]) => tf.prelu(x, alpha);
      },
      ELU: elu,
      ThresholdedReLU: (n) => ([x]) => where(tf.greater(x, n.attrs.theta), x, tf.zerosLike(x)),
      Softmax: softmax,
      Sigmoid: () => ([x]) => tf.sigmoid(x),
      Tanh: () => ([x]) => tf.tanh(x),
      GELU: gelu,
      // tfjs-core has softplus, selu, abs, square and clipByValue; softsign, SiLU,
      // hard sigmoid and mish are written from docs/ir.md (tfjs-layers' hardSigmoid is
      // Keras 2's 0.2 * x + 0.5, not the IR's relu6(x + 3) / 6).
      Softplus: () => ([x]) => tf.softplus(x),
      Softsign: () => ([x]) => tf.div(x, tf.add(tf.abs(x), 1)),
      SELU: () => ([x]) => tf.selu(x),
      SiLU: () => ([x]) => tf.mul(x, tf.sigmoid(x)),
      HardSigmoid: () => ([x]) => tf.div(tf.relu6(tf.add(x, 3)), 6),
      Mish: () => ([x]) => tf.mul(x, tf.tanh(tf.softplus(x))),
      Abs: () => ([x]) => tf.abs(x),
      Square: () => ([x]) => tf.square(x),
      Clip: (n) => ([x]) => tf.clipByValue(x, n.attrs.min_value, n.attrs.max_value),
      BatchNorm: batchNorm,
      LayerNorm: layerNorm,
      Add: () => (xs) => tf.addN(xs),
      Mul: fold(tf.mul),
      Subtract: fold(tf.sub),
      Maximum: fold(tf.maximum),
      Minimum: fold(tf.minimum),
      MatMul: () => ([x0, x1]) => tf.matMul(x0, x1),
      Flatten: () => ([x]) => tf.reshape(x, [x.shape[0], x.size / x.shape[0]]),
      Reshape: (n) => ([x]) => tf.reshape(x, [x.shape[0]].concat(n.attrs.target_shape)),
      Transpose: (n) => ([x]) => tf.transpose(x, [0].concat(n.attrs.dims)),
      Concat: (n) => (xs) => {
        const axis = n.attrs.axis;
        return tf.concat(xs, axis < 0 ? xs[0].rank + axis : axis);
      },
      RepeatVector: (n) => ([x]) => tf.tile(tf.expandDims(x, 1), [1, n.attrs.n, 1]),
      ReduceMean: reduce(tf.mean),
      ReduceMax: reduce(tf.max),
      ReduceSum: reduce(tf.sum),
      ReduceMin: reduce(tf.min),
      Identity: () => ([x]) => tf.clone(x),
      Dropout: () => ([x]) => tf.clone(x), // inference: the identity
      SimpleRNN: recurrent('SimpleRNN'),
      LSTM: recurrent('LSTM'),
      GRU: recurrent('GRU'),
      // Comparisons and logic compute a bool tensor, cast back to the graph's dtype; a
      // truth value is the tensor cast to bool (x != 0).
      Compare: (n) => ([a, b]) => tf.cast(COMPARE[n.attrs.mode](a, b), a.dtype),
      Logical: (n) => ([a, b]) => tf.cast(
        LOGICAL[n.attrs.mode](tf.cast(a, 'bool'), tf.cast(b, 'bool')), a.dtype),
      LogicalNot: () => ([x]) => tf.cast(tf.logicalNot(tf.cast(x, 'bool')), x.dtype),
      // A bool Where selects by (c and a) or (not c and b): tfjs-wasm's Select on bool
      // branches reads and writes them at a 4-byte stride (4.22.0: wrong values from the
      // fifth element on, and a corrupted heap that fails later kernels with "memory
      // access out of bounds"), which would spoil every later case of the worker.
      Where: () => ([c, a, b]) => {
        const cond = tf.cast(c, 'bool');
        if (a.dtype !== 'bool') return where(cond, a, b);
        return tf.logicalOr(tf.logicalAnd(cond, a), tf.logicalAnd(tf.logicalNot(cond), b));
      },
    };
    for (const nsp of [1, 2, 3]) {
      ops[`MaxPool${nsp}D`] = pool('max', nsp);
      ops[`AvgPool${nsp}D`] = pool('avg', nsp);
      ops[`GlobalMaxPool${nsp}D`] = globalPool('max');
      ops[`GlobalAvgPool${nsp}D`] = globalPool('avg');
      ops[`ZeroPadding${nsp}D`] = zeroPad;
      ops[`Cropping${nsp}D`] = crop;
      ops[`UpSampling${nsp}D`] = upsample;
    }
    return ops;
  }

  // The op kinds handled (the names only; makeOps needs a tf object to build closures).
  const OPS = Object.keys(makeOps(new Proxy({}, {get: () => () => null})));

  // The graph dtypes tfjs computes in: float32, int32 for integer graphs (the IR only
  // lets kinds every library computes exactly on integers into them) and bool (shape and
  // logic kinds). tfjs has no int64, float16 or float64 tensors, so those graphs are
  // refused at build time.
  const GRAPH_DTYPES = ['float32', 'int32', 'bool'];

  function sameShape(a, b) {
    return a.length === b.length && a.every((v, i) => v === b[i]);
  }

  function buildGraph(tf, graphJson, weights, options) {
    const opts = options || {};
    const g = graphJson && graphJson.graph && graphJson.format === 'dlfuzz-model'
      ? graphJson.graph : graphJson;
    if (!g || !Array.isArray(g.inputs) || !Array.isArray(g.nodes) ||
        !Array.isArray(g.outputs)) {
      throw new Error('graphJson must have inputs, nodes and outputs (dlfuzz IR JSON)');
    }
    const dtype = g.inputs.length ? g.inputs[0].dtype : undefined;
    if (!GRAPH_DTYPES.includes(dtype)) {
      throw new Error(`graph dtype ${dtype} is not supported by tfjs (float32, int32 and bool only)`);
    }
    const ops = makeOps(tf);
    const w = weights || {};
    const steps = g.nodes.map((node) => {
      if (Object.prototype.hasOwnProperty.call(UNSUPPORTED, node.op)) {
        throw new Error(`unsupported op ${node.op}: ${UNSUPPORTED[node.op]}`);
      }
      const make = ops[node.op];
      if (!make) throw new Error(`unknown op kind ${node.op} (node ${node.id})`);
      const ctx = {
        w(name) {
          const key = `${node.id}.${name}`;
          const t = w[key];
          if (!t) throw new Error(`missing weight ${key} (node ${node.id} ${node.op})`);
          if (t.dtype !== dtype) {
            throw new Error(`weight ${key} is ${t.dtype}, the graph computes in ${dtype}`);
          }
          return t;
        },
      };
      const n = {id: node.id, op: node.op, attrs: node.attrs || {}};
      return {id: node.id, op: node.op, inputs: node.inputs, fn: make(n, ctx)};
    });
    const results = opts.probe ? steps.map((s) => s.id) : g.outputs.slice();

    return function run(inputs) {
      if (!Array.isArray(inputs) || inputs.length !== g.inputs.length) {
        throw new Error(`the graph takes ${g.inputs.length} inputs, got ` +
          `${Array.isArray(inputs) ? inputs.length : typeof inputs}`);
      }
      inputs.forEach((x, i) => {
        if (x.dtype !== dtype || !sameShape(x.shape, g.inputs[i].shape)) {
          throw new Error(`input x${i} is ${x.dtype}[${x.shape}], the graph declares ` +
            `${dtype}[${g.inputs[i].shape}]`);
        }
      });
      return tf.tidy(() => {
        const values = new Map();
        inputs.forEach((x, i) => values.set(`x${i}`, x));
        for (const s of steps) {
          let y;
          try {
            y = s.fn(s.inputs.map((v) => values.get(v)));
          } catch (err) {
            // Keep the library's error type and text, prefixed by the op kind only (a node
            // id would split one bug's signature per model); the node rides along.
            if (err instanceof Error) {
              err.message = `${s.op}: ${err.message}`;
              err.dlfuzzNode = s.id;
            }
            throw err;
          }
          values.set(s.id, y);
        }
        return results.map((v) => {
          const t = values.get(v);
          return inputs.includes(t) ? tf.clone(t) : t;
        });
      });
    };
  }

  return {buildGraph, UNSUPPORTED: Object.keys(UNSUPPORTED), OPS, VERSION: 1};
});
