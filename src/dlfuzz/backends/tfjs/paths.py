"""Where the TF.js backends' JavaScript lives: the Node children, the IR interpreter, the
headless page runner.

The backends start these files and the reproducers inline ``graph.js``, so both read the
paths from here rather than from each other.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER_JS = HERE / "worker.js"  # the Node child of tfjs-cpu and tfjs-wasm
WEBGL_DRIVER_JS = HERE / "webgl_driver.js"  # the Node child holding tfjs-webgl's page
GRAPH_JS = HERE / "graph.js"  # J-MODEL's interpreter of IR graphs, in the child and repros
GRAD_JS = HERE / "grad.js"  # cotangents and tf.grads, in the child and gradient repros
RUN_HTML_JS = HERE / "run_html.js"  # runs an HTML reproducer headless
