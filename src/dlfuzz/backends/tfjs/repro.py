"""Standalone TF.js reproducers: ``repro_tfjs_cpu.js`` (node) and ``repro_tfjs_webgl.html``.

Same contract as the Python reproducers (``dlfuzz.triage.repro``): the inputs are
rebuilt from exact literals, the one call is made, and the expectation decides: exit /
report 1 while the bug is present, 0 once it is fixed. The HTML page reports through
``document.title`` and ``window.dlfuzzExit``; ``run_html.js`` serves it on 127.0.0.1,
opens it in headless Chromium and exits with that status.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from dlfuzz.backends.tfjs.install import DEFAULT_VERSION, tfjs_dir
from dlfuzz.backends.tfjs.paths import GRAD_JS, GRAPH_JS
from dlfuzz.cases import ApiCase, DType, Ref
from dlfuzz.oracles.tolerances import tolerance_for


def js_literal(value: Any) -> str:
    """JS source for (nested lists of) numbers, exact for every float32/float64 value."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(js_literal(v) for v in value) + "]"
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        v = float(value)
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(value, Ref):
        return f"x{value.index}"
    if isinstance(value, DType):
        return json.dumps(value.name)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {js_literal(v)}"
                               for k, v in value.items()) + "}"
    if value is None:
        return "undefined"  # an omitted argument, as the worker passes None
    return json.dumps(value)


def _flat(array: np.ndarray) -> list[Any]:
    """Values in C order; complex as interleaved (re, im), as the check flattens them.

    Booleans as 0/1: the check reads every output through ``Number`` (TF.js gives a
    bool tensor's data as 0/1), and ``0 !== false`` in JavaScript would make the script
    of a backend that is right report a bug."""
    if np.iscomplexobj(array):
        return np.stack([array.real, array.imag], axis=-1).ravel().tolist()
    if array.dtype == np.bool_:
        return np.asarray(array, dtype=np.int64).ravel().tolist()
    return np.asarray(array).ravel().tolist()


def _tensor(i: int, array: np.ndarray) -> str:
    shape = js_literal(list(array.shape))
    if np.iscomplexobj(array):
        return (f"const x{i} = tf.complex(tf.tensor({js_literal(array.real.ravel().tolist())}, "
                f"{shape}), tf.tensor({js_literal(array.imag.ravel().tolist())}, {shape}));")
    dtype = "bool" if array.dtype == np.bool_ else array.dtype.name
    return f"const x{i} = tf.tensor({js_literal(array.ravel().tolist())}, {shape}, '{dtype}');"


# The check shared by node and the page: outputs flattened the way dlfuzz's worker does,
# each with its shape, judged shape-exactly and element by element (NaN equals NaN).
_CHECK = r"""
async function flatOutputs(tf, value, out) {
  if (value && typeof value.then === 'function') value = await value;
  if (value instanceof tf.Tensor) {
    if (value.dtype === 'complex64') {
      const re = await tf.real(value).data(), im = await tf.imag(value).data();
      const both = [];
      for (let i = 0; i < re.length; i++) both.push(re[i], im[i]);
      out.push({ shape: value.shape, values: both });
    } else {
      out.push({ shape: value.shape, values: Array.from(await value.data(), Number) });
    }
  } else if (Array.isArray(value)) {
    for (const v of value) await flatOutputs(tf, v, out);
  } else if (typeof value === 'number' || typeof value === 'boolean') {
    out.push({ shape: [], values: [Number(value)] });
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) await flatOutputs(tf, v, out);
  }
  return out;
}

function oneLine(text) { return String(text).split(/\s+/).join(' ').trim(); }

function indexOf(k, shape, per) {
  let flat = Math.floor(k / per);
  const idx = [];
  for (let d = shape.length - 1; d >= 0; d--) { idx.unshift(flat % shape[d]); flat = Math.floor(flat / shape[d]); }
  return '[' + idx.join(', ') + ']' + (per === 2 ? (k % 2 ? ' (imag)' : ' (real)') : '');
}

function isOff(a, e, allowed) {
  if (Number.isNaN(a) || Number.isNaN(e)) return Number.isNaN(a) !== Number.isNaN(e);
  if (!Number.isFinite(a) || !Number.isFinite(e)) return a !== e;
  return Math.abs(a - e) > allowed;
}

// [problems, detail lines] of the outputs against the reference (SHOWN elements listed).
function judge(got, target, expected, shapes, allowed, tolerance) {
  const SHOWN = 5;
  if (got.length !== expected.length) {
    return [[target + ' returned ' + got.length + ' outputs, the reference has ' + expected.length], []];
  }
  const problems = [], details = [];
  for (let i = 0; i < got.length; i++) {
    const shape = Array.from(got[i].shape), want = shapes[i];
    if (shape.length !== want.length || shape.some((d, j) => d !== want[j])) {
      problems.push(target + ' output ' + i + ': shape ' + JSON.stringify(shape)
                    + ", the reference's is " + JSON.stringify(want));
      continue;
    }
    const g = got[i].values, e = expected[i];
    if (g.length !== e.length) {
      problems.push(target + ' output ' + i + ': ' + g.length + ' values, the reference has ' + e.length);
      continue;
    }
    const per = e.length === 2 * want.reduce((a, b) => a * b, 1) && e.length > 0 ? 2 : 1;
    const bad = [];
    for (let j = 0; j < g.length; j++) if (isOff(g[j], e[j], allowed[i][j])) bad.push(j);
    if (!bad.length) continue;
    const k = bad[0];
    const where = want.length ? 'first at ' + indexOf(k, want, per) : 'the value';
    problems.push(target + ' output ' + i + ': ' + bad.length + ' of ' + e.length
                  + ' elements off beyond tolerance (' + tolerance[i] + '); ' + where
                  + ': got ' + g[k] + ', expected ' + e[k]);
    for (const j of bad.slice(0, SHOWN)) {
      details.push('  output ' + i + ' at ' + indexOf(j, want, per) + ': got ' + g[j]
                   + ', expected ' + e[j] + ' (allowed error ' + allowed[i][j].toPrecision(3) + ')');
    }
    if (bad.length > SHOWN) details.push('  output ' + i + ': ' + (bad.length - SHOWN) + ' more differing elements');
  }
  return [problems, details];
}
"""


def _api_call(backend: Any, case: ApiCase) -> tuple[list[str], str]:
    """(lines before the call, the call expression) of an API case."""
    call = case.call_for(backend.library)
    if call is None:
        raise ValueError(f"case has no call for {backend.library}")
    args = [js_literal(a) for a in call.args]
    if call.kwargs:
        args.append(js_literal(dict(call.kwargs)))
    return [], f"{call.target}({', '.join(args)})"


def _b64(array: np.ndarray) -> str:
    import base64

    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()


def _inlined(name: str, path: Any, what: str) -> str:
    """A UMD file of this folder inlined as the constant ``name`` (its module.exports)."""
    body = "\n".join("  " + line if line else "" for line in path.read_text().splitlines())
    return (f"\n// {path.name}, {what} (as the worker ran it).\nconst {name} = (function () {{\n"
            f"  const module = {{ exports: {{}} }};\n{body}\n  return module.exports;\n}})();\n")


_GRAPH_HELPERS = r"""
function fromBase64(b64, dtype) {
  const u8 = typeof Buffer !== 'undefined' ? new Uint8Array(Buffer.from(b64, 'base64'))
    : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const buf = u8.buffer.slice(u8.byteOffset, u8.byteOffset + u8.byteLength);
  return dtype === 'int32' ? new Int32Array(buf) : new Float32Array(buf);
}
"""


def _grad_helpers() -> str:
    return _inlined("dlfuzzGrad", GRAD_JS, "dlfuzz's cotangents and gradients on tfjs")


def _gradient_call(backend: Any, case: Any) -> tuple[list[str], str, str]:
    """(lines defining the loss ``f``, the expression of the gradients, helpers) of a
    gradient case or a training step: ``J^T c`` with respect to the differentiated
    inputs (and a step's trained weights), cotangents drawn from SEED as dlfuzz did."""
    seed = case.seed & 0xFFFFFFFF
    if case.kind == "train":
        lines, helpers = _graph_weights(case.base)
        trained = list(case.trained)
        lines += [f"  const SEED = {seed};  // draws the cotangents weighing the outputs",
                  f"  const TRAINED = {json.dumps(trained)};  // the weights differentiated",
                  "  // The model built from the weights W, inside the differentiated "
                  "function.",
                  "  const f = () => dlfuzzGrad.weightedLoss(tf, dlfuzzGraph.buildGraph(tf, "
                  f"GRAPH, W, {{ probe: false }})({_graph_inputs(case)}), SEED, []);"]
        wrt = ["...TRAINED.map((k) => W[k])"] + [f"x{i}" for i in case.wrt]
        return lines, f"dlfuzzGrad.gradients(tf, f, [{', '.join(wrt)}]).grads", \
            helpers + _grad_helpers()
    _, expr = _api_call(backend, case.base)
    lines = [f"  const SEED = {seed};  // draws the cotangents weighing the outputs",
             f"  const STILL = {json.dumps(list(case.still))};  // outputs without a cotangent",
             "  // The call's floating outputs, each weighed by its cotangent, summed.",
             f"  const f = () => dlfuzzGrad.weightedLoss(tf, {expr}, SEED, STILL);"]
    xs = ", ".join(f"x{i}" for i in case.wrt)
    return lines, f"dlfuzzGrad.gradients(tf, f, [{xs}]).grads", _grad_helpers()


def _graph_weights(case: Any) -> tuple[list[str], str]:
    """(lines defining GRAPH and the weights W, helpers source) of a model case."""
    weights = [[name, t.dtype, list(t.shape), _b64(t.to_numpy())] for name, t in case.weights]
    lines = [f"  const GRAPH = {json.dumps(case.graph.to_dict())};",
             f"  const WEIGHTS = {json.dumps(weights)};",
             "  const W = {};",
             "  for (const [name, dtype, shape, b64] of WEIGHTS) "
             "W[name] = tf.tensor(fromBase64(b64, dtype), shape, dtype);"]
    return lines, _inlined("dlfuzzGraph", GRAPH_JS, "dlfuzz's interpreter of its model IR "
                           "on tfjs ops") + _GRAPH_HELPERS


def _graph_inputs(case: Any) -> str:
    return "[" + ", ".join(f"x{i}" for i in range(len(case.tensors))) + "]"


def _graph_call(case: Any) -> tuple[list[str], str, str]:
    """(lines building the model and inputs, the run expression, helpers source)."""
    lines, helpers = _graph_weights(case)
    lines.append(f"  const model = dlfuzzGraph.buildGraph(tf, GRAPH, W, {{ probe: "
                 f"{'true' if case.probe else 'false'} }});")
    return lines, f"model({_graph_inputs(case)})", helpers


def _body(backend: Any, case: Any, expectation: Any, setup: list[str], expr: str
          ) -> list[str]:
    """The async function ``reproduce(tf)`` returning [exit status, message]."""
    lines = ["async function reproduce(tf) {",
             f"  await tf.setBackend('{backend.tfjs_backend}');",
             "  await tf.ready();",
             f"  if (tf.getBackend() !== '{backend.tfjs_backend}') {{",
             f"    return [2, 'cannot test: tf.getBackend() is ' + tf.getBackend() + ', not "
             f"{backend.tfjs_backend}'];",
             "  }"]
    lines += setup
    lines += ["  " + _tensor(i, t.to_numpy()) for i, t in enumerate(case.tensors)]
    target = json.dumps(_target_name(backend, case))
    if expectation.kind == "rejects":
        lines += [f"  // {expectation.note or 'the input is invalid'}",
                  f"  try {{ await flatOutputs(tf, {expr}, []); }} catch (err) {{",
                  "    return [0, 'OK: rejected with ' + err];",
                  "  }",
                  f"  return [1, 'BUG present: ' + {target} + ' accepted the invalid input "
                  "and returned a result'];"]
    elif expectation.kind == "repeatable":
        # Between runs, tensors full of a marker value are made and freed, so memory the
        # kernel reads without writing holds something else on every run.
        lines += [f"  // {expectation.note or 'a deterministic call'}",
                  f"  const first = JSON.stringify(await flatOutputs(tf, {expr}, []));",
                  "  for (let run = 2; run <= 10; run++) {",
                  "    tf.tidy(() => { tf.fill([4096], run * 1234.5).square().dataSync(); });",
                  f"    const again = JSON.stringify(await flatOutputs(tf, {expr}, []));",
                  "    if (again !== first) {",
                  f"      return [1, 'BUG present: ' + {target} + ' run ' + run + ' differs "
                  "from run 1'];",
                  "    }",
                  "  }",
                  f"  return [0, 'OK: ' + {target} + ': 10 runs gave the same outputs'];"]
    elif expectation.kind == "gradient-shape":
        shapes = [list(shape) for _, shape in case.gradient_shapes()]
        labels = [label for label, _ in case.gradient_shapes()]
        lines += [f"  const WANT = {js_literal(shapes)};  // the inputs' (and weights') shapes",
                  f"  const LABELS = {json.dumps(labels)};",
                  f"  const got = await flatOutputs(tf, {expr}, []);",
                  "  for (let i = 0; i < WANT.length; i++) {",
                  "    const shape = JSON.stringify(Array.from(got[i].shape));",
                  "    console.log('gradient for ' + LABELS[i] + ': shape ' + shape + ', input "
                  "shape ' + JSON.stringify(WANT[i]));",
                  "    if (shape !== JSON.stringify(WANT[i])) {",
                  f"      return [1, 'BUG present: ' + {target} + ' for ' + LABELS[i] + ' has "
                  "shape ' + shape + ', not ' + JSON.stringify(WANT[i])];",
                  "    }",
                  "  }",
                  f"  return [0, 'OK: ' + {target} + \" has its inputs' shapes\"];"]
    elif expectation.kind == "runs":
        lines += [f"  try {{ await flatOutputs(tf, {expr}, []); }} catch (err) {{",
                  f"    return [1, 'BUG present: ' + {target} + ' raised ' + err];",
                  "  }",
                  f"  return [0, 'OK: ' + {target} + ' returned normally'];"]
    elif expectation.kind == "survives":
        # A wasm trap or abort is thrown here: the crash itself (``core.js`` CRASH_RE).
        lines += ["  // the bug is a trap, a crash or a hang; returning or throwing an error is "
                  "the fix",
                  f"  try {{ await flatOutputs(tf, {expr}, []); }} catch (err) {{",
                  "    const name = (err && err.constructor && err.constructor.name) || 'Error';",
                  "    if ((typeof WebAssembly !== 'undefined' && err instanceof "
                  "WebAssembly.RuntimeError)",
                  "        || /memory access out of bounds|Aborted\\(|^abort|unreachable|"
                  "RuntimeError/.test(name + ': ' + String((err && err.message) || err))) {",
                  f"      return [1, 'BUG present: ' + {target} + ' trapped: ' + err];",
                  "    }",
                  f"    return [0, 'OK: ' + {target} + ' threw ' + err];",
                  "  }",
                  f"  return [0, 'OK: ' + {target} + ' returned normally'];"]
    else:
        if expectation.note:
            lines.append(f"  // {expectation.note}")
        expected = [_flat(np.asarray(e)) for e in expectation.expected]
        allowed = [_allowance(np.asarray(e), w)
                   for e, w in zip(expectation.expected, expectation.allowed, strict=True)]
        shapes = [list(np.shape(e)) for e in expectation.expected]
        tolerance = [tolerance_text(np.asarray(e).dtype.name) for e in expectation.expected]
        lines += [f"  const EXPECTED = {js_literal(expected)};",
                  f"  const SHAPES = {js_literal(shapes)};",
                  f"  const ALLOWED = {js_literal(allowed)};",
                  f"  const TOLERANCE = {json.dumps(tolerance)};",
                  f"  const got = await flatOutputs(tf, {expr}, []);",
                  f"  const [problems, details] = judge(got, {target}, EXPECTED, SHAPES, "
                  "ALLOWED, TOLERANCE);",
                  "  for (const line of details) console.log(line);",
                  "  if (problems.length) return [1, 'BUG present: ' + problems.join('; ')];",
                  f"  return [0, 'OK: ' + {target} + ' matches the float64 reference within "
                  "tolerance (' + Array.from(new Set(TOLERANCE)).join('; ') + ')'];"]
    lines.append("}")
    return lines


def tolerance_text(dtype: str) -> str:
    """The documented per-dtype tolerance as the verdict names it (the same words as the
    Python reproducers' ``triage.repro_verdict.tolerance_text``; backends may not import
    triage, which imports backends)."""
    tol = tolerance_for(dtype)
    if tol.rtol == 0 and tol.atol == 0:
        return f"{dtype}: exact"
    return f"{dtype} rtol {tol.rtol:.3g} atol {tol.atol:.3g}, plus input-rounding sensitivity"


def _target_name(backend: Any, case: Any) -> str:
    """What the verdict names: the called function (API cases) or "the model"."""
    kind = getattr(case, "kind", "api")
    if kind == "graph":
        return "the model"
    if kind == "train":
        return "the gradient of the model's training step"
    call = case.call_for(backend.library)
    if kind == "grad":
        return f"the gradient of {call.target}" if call is not None else "the gradient"
    return call.target if call is not None else "the call"


def _allowance(expected: np.ndarray, allowed: Any) -> list[float]:
    """Per-element allowance in the flat order of ``_flat`` (complex: re and im alike)."""
    flat = np.broadcast_to(np.asarray(allowed, dtype=np.float64), expected.shape).ravel()
    return np.repeat(flat, 2).tolist() if np.iscomplexobj(expected) else flat.tolist()


def _parts(backend: Any, case: Any) -> tuple[list[str], str, str]:
    if getattr(case, "kind", "api") in ("grad", "train"):
        return _gradient_call(backend, case)
    if getattr(case, "kind", "api") == "graph":
        return _graph_call(case)
    setup, expr = _api_call(backend, case)
    return setup, expr, ""


def node_script(backend: Any, case: ApiCase, expectation: Any, title: str,
                version: str) -> str:
    number = version.split()[1] if version.startswith("tfjs ") else DEFAULT_VERSION
    where = str(tfjs_dir(number))
    wasm = backend.tfjs_backend == "wasm"
    lines = [
        f"// dlfuzz reproducer: {title}",
        f"// Backend: {backend.name} {version}. Needs only TF.js for Node (no tfjs-node):",
        f"//   npm install @tensorflow/tfjs@{number}"
        + (f" @tensorflow/tfjs-backend-wasm@{number}" if wasm else ""),
        "// Run: node THIS_FILE. TF.js is loaded from the directory $DLFUZZ_TFJS_DIR (whose",
        f"// node_modules holds it), default {where} (dlfuzz's cache).",
        "// Exit status: 1 while the bug is present, 0 once it is fixed.",
        "'use strict';",
        "const path = require('path');",
        f"const DIR = process.env.DLFUZZ_TFJS_DIR || {json.dumps(where)};",
        "delete globalThis.fetch;  // tfjs-backend-wasm 3.x under Node 18+ (harmless otherwise)",
        "const tf = require(path.join(DIR, 'node_modules', '@tensorflow', 'tfjs'));",
    ]
    if wasm:
        lines.append("require(path.join(DIR, 'node_modules', '@tensorflow', "
                     "'tfjs-backend-wasm'));")
    setup, expr, helpers = _parts(backend, case)
    lines += [_CHECK.strip(), helpers] + _body(backend, case, expectation, setup, expr)
    lines += [
        "",
        f"const timer = setTimeout(() => {{ console.log('BUG present: the call hangs'); "
        f"process.exit(1); }}, {int(expectation.timeout_s) * 1000});",
        "reproduce(tf).then(([code, message]) => {",
        "  console.log(oneLine(message));  // the verdict: the last line",
        "  clearTimeout(timer);",
        "  process.exit(code);",
        "}, (err) => { console.log(oneLine('BUG present: ' + err)); process.exit(1); });",
    ]
    return "\n".join(lines) + "\n"


def html_page(backend: Any, case: ApiCase, expectation: Any, title: str, version: str) -> str:
    number = version.split()[1] if version.startswith("tfjs ") else DEFAULT_VERSION
    setup, expr, helpers = _parts(backend, case)
    cdn = f"https://cdn.jsdelivr.net/npm/@tensorflow/tfjs@{number}/dist/tf.min.js"
    safe_title = title.replace("<", "&lt;").replace(">", "&gt;").replace("--", "- -")
    lines = [
        "<!doctype html>",
        f"<!-- dlfuzz reproducer: {safe_title}",
        f"     Backend: {backend.name} {version}. Open in a browser with WebGL; the title",
        "     and the page say 'BUG present' (window.dlfuzzExit = 1) while the bug is there,",
        "     'OK' (0) once it is fixed. Headless: node run_html.js THIS_FILE (dlfuzz's",
        "     src/dlfuzz/backends/tfjs/run_html.js) serves it on 127.0.0.1 in Chromium. -->",
        "<meta charset='utf-8'><title>running</title>",
        f"<script src='{cdn}'></script>",
        "<pre id='out'></pre>",
        "<script>",
        _CHECK.strip(),
        # "</script" inside the script (graph.js' comments) would end the element early.
        helpers.replace("</script", "<\\/script"),
    ] + _body(backend, case, expectation, setup, expr) + [
        "(async () => {",
        "  for (const hook of (window.dlfuzzHooks || [])) hook(tf);  // test-only patches",
        "  let result;",
        "  try { result = await reproduce(tf); } catch (err) { result = [1, 'BUG present: ' + err]; }",
        "  result[1] = oneLine(result[1]);",
        "  document.getElementById('out').textContent = result[1];",
        "  document.title = result[0] === 0 ? 'OK' : (result[0] === 1 ? 'BUG present' : 'cannot test');",
        "  console.log(result[1]);",
        "  window.dlfuzzExit = result[0];",
        "})();",
        "</script>",
    ]
    return "\n".join(lines) + "\n"
