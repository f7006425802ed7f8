"""TensorFlow.js backends: ``tfjs-cpu`` and ``tfjs-wasm`` (Node), ``tfjs-webgl`` (Chromium).

Each is an ordinary dlfuzz backend living in the ordinary sandboxed Python worker; its
``setup`` starts one long-lived Node child (``worker.js``, or ``webgl_driver.js`` which
holds one headless Chromium page) and ``run`` relays each case to it (see ``wire``). So
timeouts, memory limits, restarts and batching are the executor's, unchanged, and tfjs
is loaded once per worker instead of once per input (TensorJSFuzz paid ~3 s per input
for a fresh browser).

The child's death, a wasm trap or an abort becomes status ``crash`` (``NativeCrash``)
and the child is restarted for the next case. The version comes from
``$DLFUZZ_TFJS_VERSION`` (``dlfuzz run --tfjs-version``), default ``DEFAULT_VERSION``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dlfuzz.backends.base import Backend, NativeCrash, StageError
from dlfuzz.backends.tfjs import install
from dlfuzz.backends.tfjs.paths import GRAPH_JS, WORKER_JS
from dlfuzz.backends.tfjs.repro import node_script
from dlfuzz.backends.tfjs.wire import (
    NodeChild,
    decode_outputs,
    encode_value,
    raise_error,
    tensor_specs,
)
from dlfuzz.cases import ApiCase, GraphCase
from dlfuzz.errors import UsageError
from dlfuzz.libraries import get
from dlfuzz.libraries.versions import selected_release

LIBRARY = get("tfjs")
VERSION_ENV = LIBRARY.release_env
# Test-only JS patches (``module.exports = function (tf) {...}``), applied to every live
# tfjs backend of this worker and again after each restart of its child.
_PATCHES: list[str] = []
_ACTIVE: list[TfjsBackend] = []
_OWNERS: dict[str, str] = {}  # patch path -> module that added it


def patches_of(preload: Sequence[str]) -> list[str]:
    """The JS patches the given preload modules add (imported here if not yet)."""
    import importlib

    for module in preload:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise UsageError(f"the campaign's --preload module {module!r} cannot be imported "
                             f"here ({exc}); put its folder on PYTHONPATH, or run without "
                             "it (--no-preload)") from exc
    return [p for p in _PATCHES if _OWNERS.get(p) in set(preload)]


def add_patch(path: str | Path) -> None:
    """Apply a JS patch module to the tfjs of this worker (planted bugs, user hooks)."""
    import sys

    path = str(Path(path).resolve())
    _PATCHES.append(path)
    # Which preload module asked: a reproducer of a campaign loads that module's patches.
    _OWNERS[path] = str(sys._getframe(1).f_globals.get("__name__", ""))
    for backend in _ACTIVE:
        backend.apply_patch(path)


def selected_version() -> str:
    return install.check_version(selected_release(LIBRARY.name))


def installed_dir(version: str) -> Path:
    """The version's cache directory, installing it if npm can; else a UsageError."""
    try:
        return install.ensure_installed(version)
    except UsageError as exc:
        raise UsageError(f"TF.js {version} is not installed and installing it failed: {exc}; "
                         f"run `dlfuzz tfjs install --version {version}`") from exc


class TfjsBackend(Backend):
    """The Node backends; ``tfjs_backend`` is what ``tf.setBackend`` gets."""

    name = "tfjs-cpu"
    library = LIBRARY.name
    tfjs_backend: ClassVar[str] = "cpu"
    repro_import = ""
    repro_suffix: ClassVar[str] = ".js"
    # TF.js reuses heap and texture memory between kernels: a kernel reading what it never
    # wrote gives run-to-run garbage, which the determinism oracle looks for.
    rerun_check: ClassVar[bool] = True
    # graphs: J-MODEL's graph.js; gradient cases and training steps: tf.grads (grad.js)
    case_kinds: ClassVar[tuple[str, ...]] = ("api", "graph", "grad", "train")
    ray_resources: ClassVar[tuple[tuple[str, float], ...]] = (("dlfuzz-nodejs", 0.001),)

    def __init__(self) -> None:
        super().__init__()
        self._child: Any = None
        self._version = ""
        self._dir = Path()
        self._graph_keys: set[str] = set()

    # ---- the child ---------------------------------------------------------------------
    def setup(self) -> None:
        self._version = selected_version()
        self._dir = installed_dir(self._version)
        self._child = self._start()
        _ACTIVE.append(self)

    def _start(self) -> Any:
        args = ["--backend", self.tfjs_backend, "--tfjs-dir", str(self._dir)]
        if GRAPH_JS.exists():
            args += ["--graph-js", str(GRAPH_JS)]
        # Without the trap handler V8 checks wasm bounds explicitly instead of reserving
        # 10 GB of address space per memory, which the worker's RLIMIT_AS would refuse.
        child = NodeChild(str(WORKER_JS), args, ["--disable-wasm-trap-handler"])
        self._check_ready(child)
        for path in _PATCHES:
            self._patch(child, path)
        self._graph_keys = set()
        return child

    def _check_ready(self, child: Any) -> None:
        header, _ = child.ready
        if not header.get("ok"):
            err = header.get("error", {})
            child.close()
            raise RuntimeError(f"tfjs {self._version} backend {self.tfjs_backend} did not "
                               f"start: {err.get('type')}: {err.get('message')}")
        self._info = header

    def _patch(self, child: Any, path: str) -> None:
        header, _ = child.request({"op": "patch", "path": path})
        if not header.get("ok"):
            raise RuntimeError(f"patch {path} failed: {header.get('error')}")

    def apply_patch(self, path: str) -> None:
        if self._child is not None:
            self._patch(self._child, path)

    def version(self) -> str:
        return f"tfjs {self._version} ({self.tfjs_backend})"

    def _request(self, header: dict[str, Any], blobs: list[bytes], stage: str
                 ) -> tuple[np.ndarray, ...]:
        if self._child is None or not self._child.alive():
            self._restart()
        try:
            reply, body = self._child.request(header, blobs)
        except NativeCrash as exc:
            self._drop_child()
            raise StageError(stage) from exc
        if reply.get("ok"):
            return decode_outputs(reply, body)
        if reply.get("error", {}).get("crash"):
            self._drop_child()  # it exits by itself; the next case gets a fresh one
        raise_error(reply)
        raise AssertionError("unreachable")

    def _restart(self) -> None:
        self._drop_child()
        try:
            self._child = self._start()
        except Exception as exc:
            raise StageError("prepare") from NativeCrash(f"restarting tfjs failed: {exc}")

    def _drop_child(self) -> None:
        if self._child is not None:
            try:
                self._child.close()
            except OSError:
                pass
        self._child = None

    # ---- cases -------------------------------------------------------------------------
    def run_api(self, case: ApiCase) -> tuple[np.ndarray, ...]:
        call = case.call_for(self.library)
        if call is None:
            raise StageError("prepare") from NotImplementedError(
                f"case {case.api} has no call for library {self.library}")
        try:
            specs, blobs = tensor_specs([t.to_numpy() for t in case.tensors])
            header = {"op": "run", "tensors": specs, "call": _call_header(call)}
        except Exception as exc:
            raise StageError("prepare") from exc
        return self._request(header, blobs, "call")

    def run_graph(self, case: GraphCase) -> tuple[np.ndarray, ...]:
        """The IR JSON run by ``graph.js`` (built once per model key, weights kept in JS)."""
        key = case.model_key
        try:
            inputs = [t.to_numpy() for t in case.tensors]
            weights = [(k, t.to_numpy()) for k, t in case.weights]
        except Exception as exc:
            raise StageError("prepare") from exc
        for _ in range(2):  # the child may have evicted the model: send it again
            send_model = key not in self._graph_keys
            try:
                arrays = inputs + ([w for _, w in weights] if send_model else [])
                specs, blobs = tensor_specs(arrays)
            except Exception as exc:
                raise StageError("prepare") from exc
            header = {"op": "graph", "key": key, "inputs": len(inputs), "tensors": specs,
                      "probe": bool(case.probe),
                      "graph": json.loads(json.dumps(case.graph.to_dict()))
                      if send_model else None,
                      "weights": [k for k, _ in weights] if send_model else []}
            try:
                out = self._request(header, blobs, "call")
            except StageError as err:
                if getattr(err.__cause__, "js_type", "") == "DlfuzzError" and not send_model:
                    self._graph_keys.discard(key)
                    continue
                raise
            self._graph_keys.add(key)
            return out
        raise StageError("dlfuzz") from RuntimeError("model evicted twice in a row")

    def run_grad(self, case: Any) -> tuple[np.ndarray, ...]:
        """The gradient of an API call (``cases/grad.py``), computed in JS (``grad.js``):
        ``J^T c`` per differentiated input, then a self-check vector of NaN. TF.js
        computes in float32 only, so it has no float64 pass to check against finite
        differences: its gradients are judged against the other libraries'."""
        call = case.call_for(self.library)
        if call is None:
            raise StageError("prepare") from NotImplementedError(
                f"case {case.api} has no call for library {self.library}")
        if not case.wrt:
            raise StageError("prepare") from ValueError("no floating input to differentiate")
        try:
            specs, blobs = tensor_specs([t.to_numpy() for t in case.tensors])
            header = {"op": "grad", "tensors": specs, "wrt": list(case.wrt),
                      "still": list(case.still), "seed": case.seed & 0xFFFFFFFF,
                      "call": _call_header(call)}
        except Exception as exc:
            raise StageError("prepare") from exc
        return (*self._request(header, blobs, "call"), no_self_check())

    def run_train(self, case: Any) -> tuple[np.ndarray, ...]:
        """One SGD step of a model (``cases/train.py``) in JS: ``graph.js`` builds the
        model from the weights inside the function ``grad.js`` differentiates. Outputs as
        every backend's, the self-check NaN (see ``run_grad``)."""
        from dlfuzz.cases.train import LEARNING_RATE

        names = [k for k, _ in case.weights]
        trained = set(case.trained)
        try:
            arrays = ([t.to_numpy() for _, t in case.weights]
                      + [t.to_numpy() for t in case.tensors])
            specs, blobs = tensor_specs(arrays)
            header = {"op": "train", "tensors": specs, "names": names,
                      "trained": [i for i, k in enumerate(names) if k in trained],
                      "wrt": list(case.wrt), "seed": case.seed & 0xFFFFFFFF,
                      "rate": LEARNING_RATE,
                      "graph": json.loads(json.dumps(case.graph.to_dict()))}
        except Exception as exc:
            raise StageError("prepare") from exc
        if not header["trained"] and not header["wrt"]:
            raise StageError("prepare") from ValueError("nothing to train")
        return (*self._request(header, blobs, "call"), no_self_check())

    # ---- reproducers (host side) -------------------------------------------------------
    def repro_script(self, case: Any, expectation: Any, title: str, version: str
                     ) -> str | None:
        """The node script; None for a finite-difference gradient check, which needs a
        float64 pass TF.js does not have (no such finding is made for it)."""
        if expectation.kind == "gradient":
            return None
        return node_script(self, case, expectation, title, version)

    def repro_dtype(self, name: str) -> str:
        return json.dumps(name)

    def repro_command(self, script: Path, preload: Sequence[str] = ()) -> list[str]:
        """The argv that runs this backend's reproducer (for ``dlfuzz reproduce``).

        ``preload`` are the campaign's ``--preload`` modules of this backend: importing
        them here registers their JS patches (``add_patch``), which the command loads
        into tfjs before the reproducer runs, as the worker did.
        """
        code = f"const tf = require({json.dumps(str(self._tfjs_module(script)))}); "
        code += "".join(f"require({json.dumps(p)})(tf); " for p in patches_of(preload))
        code += f"require({json.dumps(str(Path(script).resolve()))});"
        return ["node", "-e", code]

    @staticmethod
    def _tfjs_module(script: Path) -> Path:
        """The tfjs the reproducer loads: ``$DLFUZZ_TFJS_DIR`` as the script reads it
        (``dlfuzz bisect`` picks a release so), else the release its header names."""
        import os
        import re

        found = re.search(r'DIR = process.env.DLFUZZ_TFJS_DIR \|\| "([^"]+)"',
                          Path(script).read_text())
        chosen = os.environ.get("DLFUZZ_TFJS_DIR", "")
        base = Path(chosen) if chosen else (Path(found.group(1)) if found
                                            else install.tfjs_dir())
        return base / "node_modules" / "@tensorflow" / "tfjs"


def _call_header(call: Any) -> dict[str, Any]:
    """An API call as ``core.js`` decodes it: target, wire-encoded args and kwargs."""
    kwargs = {k: encode_value(v) for k, v in call.kwargs} if call.kwargs else None
    return {"target": call.target, "args": encode_value(list(call.args)), "kwargs": kwargs}


def no_self_check() -> np.ndarray:
    """The self-check vector of a backend without a float64 pass: every entry NaN
    (``cases.grad.has_self_check`` is false for it)."""
    from dlfuzz.cases.grad import CHECKS

    return np.full(len(CHECKS), np.nan)


class TfjsCpuBackend(TfjsBackend):
    name = "tfjs-cpu"
    tfjs_backend = "cpu"


class TfjsWasmBackend(TfjsBackend):
    name = "tfjs-wasm"
    tfjs_backend = "wasm"
