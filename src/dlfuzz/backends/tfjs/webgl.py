"""``tfjs-webgl``: TF.js on WebGL in one long-lived headless Chromium page.

The Python side is the Node backend's, with ``webgl_driver.js`` as the child: it serves
the page and tfjs from 127.0.0.1, launches Chromium through playwright-core (SwiftShader
WebGL) and relays each case into the page. The driver refuses to start, and every case
is refused (stage ``dlfuzz``: never compared), when ``tf.getBackend()`` is not webgl.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from dlfuzz.backends.tfjs import backend, install
from dlfuzz.backends.tfjs.backend import TfjsBackend, patches_of
from dlfuzz.backends.tfjs.paths import GRAPH_JS, RUN_HTML_JS, WEBGL_DRIVER_JS
from dlfuzz.backends.tfjs.repro import html_page
from dlfuzz.backends.tfjs.wire import NodeChild


class TfjsWebglBackend(TfjsBackend):
    name = "tfjs-webgl"
    tfjs_backend = "webgl"
    repro_suffix: ClassVar[str] = ".html"
    case_timeout_factor = 3.0  # shader compilation on first use of a kernel and shape
    # Chromium reserves ~100 GB of address space at start (and dies under RLIMIT_AS): the
    # worker caps its data segment instead (``executor.worker._limit_kind``).
    address_space_limit: ClassVar[bool] = False
    ray_resources: ClassVar[tuple[tuple[str, float], ...]] = (
        ("dlfuzz-nodejs", 0.001), ("dlfuzz-chromium", 0.001))

    def _start(self) -> Any:
        tools = install.ensure_tools()
        args = ["--tfjs-dir", str(self._dir), "--tools-dir", str(tools)]
        if GRAPH_JS.exists():
            args += ["--graph-js", str(GRAPH_JS)]
        child = NodeChild(str(WEBGL_DRIVER_JS), args)
        self._check_ready(child)
        for path in self._patches():
            self._patch(child, path)
        self._graph_keys = set()
        return child

    @staticmethod
    def _patches() -> list[str]:
        return list(backend._PATCHES)

    def version(self) -> str:
        renderer = str(getattr(self, "_info", {}).get("renderer", ""))
        gpu = "SwiftShader" if "swiftshader" in renderer.lower() else (renderer or "?")
        return f"tfjs {self._version} (webgl, {gpu})"

    def repro_command(self, script: Path, preload: Sequence[str] = ()) -> list[str]:
        """``node run_html.js PAGE [--patch JS]``: the page headless, with the patches."""
        argv = ["node", str(RUN_HTML_JS), str(Path(script).resolve())]
        for path in patches_of(preload):
            argv += ["--patch", path]
        return argv

    def repro_script(self, case: Any, expectation: Any, title: str, version: str
                     ) -> str | None:
        if expectation.kind == "gradient":
            return None  # see TfjsBackend.repro_script
        return html_page(self, case, expectation, title, version)
