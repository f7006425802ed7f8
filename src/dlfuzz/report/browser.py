"""Opens a written report in headless Chromium and says what it shows (``page_check.js``).

The same Chromium and playwright-core as the tfjs-webgl backend: Debian's ``chromium``
(or ``$DLFUZZ_CHROMIUM``) and dlfuzz's npm tools folder, installed on first use like the
backend does. ``dlfuzz report --screenshot`` and the report's browser test use it, so
what the test checks is what a user's screenshot shows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from dlfuzz.backends.tfjs import install
from dlfuzz.errors import UsageError

CHROMIUM_PATHS = ("/usr/lib/chromium/chromium", "/usr/bin/chromium")
TIMEOUT_S = 120.0


@dataclass(frozen=True)
class PageCheck:
    """What the page did and drew (fields of ``page_check.js``'s JSON)."""

    console_errors: tuple[str, ...]
    page_errors: tuple[str, ...]
    blocked: tuple[str, ...]  # requests for anything but the report file (all refused)
    charts: dict[str, dict[str, Any]]  # id -> width, height, drawn, colored, error
    diff_marks: int
    visible_diff_marks: int
    marks: tuple[dict[str, str], ...]  # {bug, column} of each highlighted value
    open_bugs: tuple[str, ...]
    screenshot: Path | None

    @property
    def problems(self) -> list[str]:
        """What a reader would notice as broken: errors, network use, an empty chart."""
        found = [f"console error: {e}" for e in self.console_errors]
        found += [f"page error: {e}" for e in self.page_errors]
        found += [f"network request (refused): {u}" for u in self.blocked]
        for name, chart in sorted(self.charts.items()):
            if chart.get("error") or not chart.get("width") or not chart.get("colored"):
                found.append(f"chart {name} drew nothing ({chart})")
        return found


def _chromium() -> str:
    path = os.environ.get("DLFUZZ_CHROMIUM") or next(
        (p for p in CHROMIUM_PATHS if Path(p).exists()), "")
    if not path:
        raise UsageError("--screenshot: Chromium is not installed (looked for "
                         f"{', '.join(CHROMIUM_PATHS)}); install it (Debian: apt-get "
                         "install chromium) or point $DLFUZZ_CHROMIUM at it")
    return path


def check_page(page: Path, screenshot: Path | None = None) -> PageCheck:
    """Open ``page`` offline in headless Chromium; write ``screenshot`` (PNG) if given."""
    node = shutil.which("node")
    if node is None:
        raise UsageError("--screenshot: `node` is not on PATH; install Node.js 20+ "
                         "(Debian: apt-get install nodejs npm)")
    env = dict(os.environ, DLFUZZ_CHROMIUM=_chromium())
    tools = install.ensure_tools()
    script = resources.files("dlfuzz.report").joinpath("page_check.js")
    argv = [node, str(script), str(page.resolve()), "--tools-dir", str(tools)]
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        argv += ["--screenshot", str(screenshot.resolve())]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                              env=env, check=False)
    except subprocess.TimeoutExpired:
        raise UsageError(f"--screenshot: Chromium did not finish with {page} in "
                         f"{TIMEOUT_S:.0f} s") from None
    if proc.returncode != 0:
        raise UsageError(f"--screenshot: headless Chromium failed on {page} (exit "
                         f"{proc.returncode}): {proc.stderr.strip()[-1500:]}")
    data = json.loads(proc.stdout)
    return PageCheck(
        console_errors=tuple(data["consoleErrors"]), page_errors=tuple(data["pageErrors"]),
        blocked=tuple(data["blocked"]), charts=data.get("charts", {}),
        diff_marks=int(data.get("diffMarks", 0)),
        visible_diff_marks=int(data.get("visibleDiffMarks", 0)),
        marks=tuple(data.get("marks", ())),
        open_bugs=tuple(data.get("openBugs", ())),
        screenshot=Path(data["screenshot"]) if data.get("screenshot") else None)
