"""The worked examples of docs/architecture.md run as they are written.

Each example starts at an ``<!-- example: NAME -->`` marker and takes the fenced Python
blocks that follow it, up to the next marker or heading. A block whose first line is
``# file: NAME.py`` becomes that file in an empty folder; the block that starts with
``# run`` runs there as a script, with the folder on ``PYTHONPATH`` (so the campaign's
worker processes import the example's modules too), and must print ``ok`` last. If the
protocols change and the document does not, these tests fail.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
_MARKER = re.compile(r"<!-- example: ([^>]+?) -->")
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def examples(text: str) -> dict[str, list[str]]:
    """Example name -> its Python blocks, in document order."""
    found: dict[str, list[str]] = {}
    marks = list(_MARKER.finditer(text))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end():end]
        heading = re.search(r"^#{2,3} ", body, re.M)  # a section heading
        if heading:
            body = body[:heading.start()]
        found[mark.group(1)] = _BLOCK.findall(body)
    return found


EXAMPLES = examples(DOC.read_text(encoding="utf-8"))


def test_the_document_has_the_four_examples() -> None:
    assert set(EXAMPLES) == {"backend", "engine", "oracle", "case kind"}
    for name, blocks in EXAMPLES.items():
        firsts = [b.splitlines()[0] for b in blocks]
        assert firsts.count("# run") == 1, (name, firsts)
        assert all(f == "# run" or f.startswith("# file: ") for f in firsts), (name, firsts)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name: str, tmp_path: Path) -> None:
    script = ""
    for block in EXAMPLES[name]:
        first, _, rest = block.partition("\n")
        if first == "# run":
            script = rest
        else:
            (tmp_path / first.removeprefix("# file: ").strip()).write_text(rest)
    (tmp_path / "run_example.py").write_text(script)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tmp_path), env.get("PYTHONPATH", ""))
                                        if p)
    proc = subprocess.run([sys.executable, "run_example.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "ok", proc.stdout[-2000:]
