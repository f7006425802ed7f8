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
from dlfuzz.backends.tfjs.paths import GRAPH_JS
from dlfuzz.cases import ApiCase, DType, Ref


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
    """Values in C order; complex as interleaved (re, im), as the check flattens them."""
    if np.iscomplexobj(array):
        return np.stack([array.real, array.imag], axis=-1).ravel().tolist()
    return np.asarray(array).ravel().tolist()


def _tensor(i: int, array: np.ndarray) -> str:
    shape = js_literal(list(array.shape))
    if np.iscomplexobj(array):
        return (f"const x{i} = tf.complex(tf.tensor({js_literal(array.real.ravel().tolist())}, "
                f"{shape}), tf.tensor({js_literal(array.imag.ravel().tolist())}, {shape}));")
    dtype = "bool" if array.dtype == np.bool_ else array.dtype.name
    return f"const x{i} = tf.tensor({js_literal(array.ravel().tolist())}, {shape}, '{dtype}');"


# The check shared by node and the page: outputs flattened the way dlfuzz's worker does.
_CHECK = r"""
async function flatOutputs(tf, value, out) {
  if (value && typeof value.then === 'function') value = await value;
  if (value instanceof tf.Tensor) {
    if (value.dtype === 'complex64') {
      const re = await tf.real(value).data(), im = await tf.imag(value).data();
      const both = [];
      for (let i = 0; i < re.length; i++) both.push(re[i], im[i]);
      out.push(both);
    } else {
      out.push(Array.from(await value.data(), Number));
    }
  } else if (Array.isArray(value)) {
    for (const v of value) await flatOutputs(tf, v, out);
  } else if (typeof value === 'number' || typeof value === 'boolean') {
    out.push([Number(value)]);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) await flatOutputs(tf, v, out);
  }
  return out;
}

function countBad(got, expected, allowed) {
  if (got.length !== expected.length) return 1;
  let bad = 0;
  for (let i = 0; i < got.length; i++) {
    if (got[i].length !== expected[i].length) { bad++; continue; }
    for (let j = 0; j < got[i].length; j++) {
      const a = got[i][j], e = expected[i][j];
      if (Number.isNaN(a) || Number.isNaN(e)) { bad += Number.isNaN(a) !== Number.isNaN(e); continue; }
      if (!Number.isFinite(a) || !Number.isFinite(e)) { bad += a !== e; continue; }
      bad += Math.abs(a - e) > allowed[i][j];
    }
  }
  return bad;
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


_GRAPH_HELPERS = r"""
// graph.js, dlfuzz's interpreter of its model IR on tfjs ops (as the worker ran it).
const dlfuzzGraph = (function () {
  const module = { exports: {} };
%s
  return module.exports;
})();

function fromBase64(b64, dtype) {
  const u8 = typeof Buffer !== 'undefined' ? new Uint8Array(Buffer.from(b64, 'base64'))
    : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const buf = u8.buffer.slice(u8.byteOffset, u8.byteOffset + u8.byteLength);
  return dtype === 'int32' ? new Int32Array(buf) : new Float32Array(buf);
}
"""


def _graph_call(case: Any) -> tuple[list[str], str, str]:
    """(lines building the model and inputs, the run expression, helpers source)."""
    graph_js = GRAPH_JS.read_text()
    weights = [[name, t.dtype, list(t.shape), _b64(t.to_numpy())] for name, t in case.weights]
    lines = [f"  const GRAPH = {json.dumps(case.graph.to_dict())};",
             f"  const WEIGHTS = {json.dumps(weights)};",
             "  const W = {};",
             "  for (const [name, dtype, shape, b64] of WEIGHTS) "
             "W[name] = tf.tensor(fromBase64(b64, dtype), shape, dtype);",
             f"  const model = dlfuzzGraph.buildGraph(tf, GRAPH, W, {{ probe: "
             f"{'true' if case.probe else 'false'} }});"]
    names = ", ".join(f"x{i}" for i in range(len(case.tensors)))
    indented = "\n".join("  " + line if line else "" for line in graph_js.splitlines())
    return lines, f"model([{names}])", _GRAPH_HELPERS.replace("%s", indented, 1)


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
    if expectation.kind == "rejects":
        lines += [f"  // {expectation.note or 'the input is invalid'}",
                  f"  try {{ await flatOutputs(tf, {expr}, []); }} catch (err) {{",
                  "    return [0, 'OK: rejected with ' + err];",
                  "  }",
                  "  return [1, 'BUG present: the invalid input was accepted and a result "
                  "returned'];"]
    elif expectation.kind == "repeatable":
        # Between runs, tensors full of a marker value are made and freed, so memory the
        # kernel reads without writing holds something else on every run.
        lines += [f"  // {expectation.note or 'a deterministic call'}",
                  f"  const first = JSON.stringify(await flatOutputs(tf, {expr}, []));",
                  "  for (let run = 2; run <= 10; run++) {",
                  "    tf.tidy(() => { tf.fill([4096], run * 1234.5).square().dataSync(); });",
                  f"    const again = JSON.stringify(await flatOutputs(tf, {expr}, []));",
                  "    if (again !== first) {",
                  "      return [1, 'BUG present: run ' + run + ' differs from run 1\\n  run 1: ' "
                  "+ first + '\\n  run ' + run + ': ' + again];",
                  "    }",
                  "  }",
                  "  return [0, 'OK: 10 runs gave the same outputs'];"]
    elif expectation.kind == "runs":
        lines += [f"  try {{ await flatOutputs(tf, {expr}, []); }} catch (err) {{",
                  "    return [1, 'BUG present: ' + err];",
                  "  }",
                  "  return [0, 'OK: the call returned normally'];"]
    else:
        if expectation.note:
            lines.append(f"  // {expectation.note}")
        expected = [_flat(np.asarray(e)) for e in expectation.expected]
        allowed = [_allowance(np.asarray(e), w)
                   for e, w in zip(expectation.expected, expectation.allowed, strict=True)]
        lines += [f"  const EXPECTED = {js_literal(expected)};",
                  f"  const ALLOWED = {js_literal(allowed)};",
                  f"  const got = await flatOutputs(tf, {expr}, []);",
                  "  if (countBad(got, EXPECTED, ALLOWED)) {",
                  "    return [1, 'BUG present: output differs from the reference beyond the "
                  "allowed error\\n  got      ' + JSON.stringify(got) + '\\n  expected ' + "
                  "JSON.stringify(EXPECTED)];",
                  "  }",
                  "  return [0, 'OK: outputs match the reference'];"]
    lines.append("}")
    return lines


def _allowance(expected: np.ndarray, allowed: Any) -> list[float]:
    """Per-element allowance in the flat order of ``_flat`` (complex: re and im alike)."""
    flat = np.broadcast_to(np.asarray(allowed, dtype=np.float64), expected.shape).ravel()
    return np.repeat(flat, 2).tolist() if np.iscomplexobj(expected) else flat.tolist()


def _parts(backend: Any, case: Any) -> tuple[list[str], str, str]:
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
        "  console.log(message);",
        "  clearTimeout(timer);",
        "  process.exit(code);",
        "}, (err) => { console.log('BUG present: ' + err); process.exit(1); });",
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
        "  document.getElementById('out').textContent = result[1];",
        "  document.title = result[0] === 0 ? 'OK' : (result[0] === 1 ? 'BUG present' : 'cannot test');",
        "  console.log(result[1]);",
        "  window.dlfuzzExit = result[0];",
        "})();",
        "</script>",
    ]
    return "\n".join(lines) + "\n"
