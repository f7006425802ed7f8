"""Fuzz the CLI itself: argument vectors for every verb, drawn from its argparse parsers.

Values mix valid and invalid ones (numbers out of range, non-numbers, unknown names,
markup text) and odd paths (missing, an existing file, a folder under a file, an
unwritable place, non-UTF-8 bytes, rich markup characters, TOML configs with wrong types,
unknown keys, negative numbers). Each vector runs in-process through
``dlfuzz.cli.main.main``; whatever it is, the CLI must answer with an exit status in
{0, 1, 2, 130}, never a traceback, and leave no campaign folder behind when it refuses
the vector as a usage error.

Nothing slow or external runs: the campaign loop, the worker pool of ``backends`` and
the TF.js installer are replaced by stand-ins (their argument handling and validation
are what is fuzzed); ``specs extract`` (which imports the libraries to introspect them)
is left out.
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlfuzz.cli import backends_cmd, run_cmd
from dlfuzz.cli.main import build_parser, main
from dlfuzz.store.db import BugRow, Store

SKIPPED = {("specs", "extract")}
ALLOWED = {0, 1, 2, 130}
MARKUP = ["[dim]", "[batch, 3]", "[/x]", "[bold red]x[/]", "[/]"]


def verbs() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every leaf verb (``run``, ``specs show``, ``tfjs list``...) and its parser."""
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}

    def walk(prefix: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            if prefix not in SKIPPED:
                found[prefix] = parser
            return
        for name, child in subs[0].choices.items():
            walk((*prefix, name), child)

    walk((), build_parser())
    return found


VERBS = verbs()


class Sandbox:
    """A fresh folder per example with the odd paths the values refer to."""

    counter = itertools.count()

    def __init__(self, base: Path) -> None:
        self.root = base / f"ex{next(self.counter)}"
        self.root.mkdir()
        self.campaign = make_campaign(self.root / "camp")
        (self.root / "file.txt").write_text("not a campaign")
        (self.root / "full").mkdir()
        (self.root / "full" / "x").write_text("")
        (self.root / "empty").mkdir()
        self.configs = {
            "good": "[campaign]\nbudget_s = 1\nmax_cases = 1\n",
            "types": "[campaign]\nbudget_s = 'soon'\nseed = [1]\nbackends = 3\n",
            "unknown": "[campaign]\nspeed = 11\n[nonsense]\nx = 1\n",
            "negative": "[campaign]\nbatch_size = -4\nbudget_s = -1\nconfirm_runs = -2\n",
            "broken": "[campaign\nbudget_s = = 1\n",
            "engine": "[campaign]\nengine = 'api'\n[api]\nviolate_share = 7\n",
            "binary": "\udcff\udcfe[campaign]",
        }
        for name, text in self.configs.items():
            path = self.root / f"{name}.toml"
            path.write_bytes(text.encode("utf-8", "surrogateescape"))

    def paths(self) -> list[str]:
        r = self.root
        return [str(self.campaign), str(r / "missing"), str(r / "file.txt"),
                str(r / "file.txt" / "under"), str(r / "full"), str(r / "empty"),
                str(r / "new-out"), str(r / "a" / "b" / "c"), "/proc/dlfuzz-unwritable",
                os.fsdecode(bytes(r) + b"/bad\xff\xfename"), str(r / "m[/x]"),
                str(r / "[dim]"), "", *(str(r / f"{n}.toml") for n in self.configs)]


def make_campaign(root: Path) -> Path:
    store = Store.create(root, {"settings": {}})
    now = time.time()
    for i, msg in enumerate(["plain", "shape [batch, 3] [dim] [/x]"]):
        store.add_bug(BugRow(
            id=f"b{i:010x}", signature=f"s{i}", symptom="crash", guilty_backend="torch",
            api="torch.add", stage="run", message=msg, status="confirmed", occurrences=1,
            case_blob="x", reduced_blob=None, confirm_runs=2, confirm_hits=2, dir=None,
            details={}, created_at=now, updated_at=now))
    store.close()
    return root


def texts() -> st.SearchStrategy[str]:
    """Values for free-text options: plausible ones and junk."""
    return st.one_of(
        st.sampled_from(["numpy", "torch,jax", "api", "model", "program", "numpy-api",
                         "1", "0", "-3", "60s", "2m", "0.5", "nan", "1e9", "torch=python",
                         "tf=", "=x", "lenet5", "lemon", "quick", "ci", "4.22.0", ",,",
                         "torch.add", "b0000000000", "b0000000001", "bnope", *MARKUP]),
        st.text(max_size=12))


# Values each option accepts, so that a vector can get past argparse and the first checks
# and reach the deeper validation (settings, engines, folders) with one odd value in it.
VALID = {
    "engine": ["api", "numpy-api", "model", "program"], "backends": ["numpy", "numpy,jax"],
    "budget": ["1s", "2s"], "timeout": ["1s"], "apis": ["add", "torch.add"],
    "method": ["lemon", "dljsfuzzer"], "seed_model": ["lenet5", "identity"],
    "python": [f"numpy={sys.executable}"], "preload": ["numpy=math"],
    "tfjs_version": ["4.22.0"], "profile": ["quick", "ci"], "require": ["numpy"],
    "bug_id": ["b0000000000", "b0000000001"], "target": ["torch", "jax"],
    "targets": ["torch", "jax"], "api": ["torch.add", "add"], "library": ["torch"],
    "versions": ["4.22.0"], "seed_program": ["torch_lenet_seq"],
}


def value_for(action: argparse.Action, paths: list[str], valid: bool
              ) -> st.SearchStrategy[str]:
    """A value for ``action``: one it accepts when ``valid``, else anything odd."""
    path_like = action.type is Path or any(
        w in (action.metavar or "") for w in ("PATH", "FILE", "DIR")) or action.dest in (
        "dir", "out", "resume", "config", "spec_file", "program_data")
    if valid:
        if action.choices:
            return st.sampled_from([str(c) for c in action.choices])
        if action.dest in VALID:
            return st.sampled_from(VALID[action.dest])
        if action.type is int:
            return st.integers(1, 3).map(str)
        if action.type is float:
            return st.sampled_from(["0.1", "0.5", "5"])
        if path_like:
            return st.sampled_from(paths)
        return texts()
    options: list[st.SearchStrategy[str]] = [texts()]
    if action.choices:
        options.append(st.sampled_from([str(c) for c in action.choices]))
    if action.type in (int, float):
        options.append(st.integers(-5, 10**12).map(str))
    if path_like:
        options = [st.sampled_from(paths), st.sampled_from(paths), *options]
    return st.one_of(options)


@st.composite
def argv_for(draw: st.DrawFn, verb: tuple[str, ...], paths: list[str]) -> list[str]:
    """Positionals mostly given, each option a sixth of the time; all values valid but
    (usually) one, so most vectors fail deep in validation rather than in argparse."""
    parser = VERBS[verb]
    actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    odd = draw(st.integers(-1, len(actions) - 1))  # -1: every value valid
    argv = list(verb)
    for i, action in enumerate(actions):
        value = value_for(action, paths, valid=i != odd)
        if not action.option_strings:  # positional
            count = 1 if action.nargs in (None, "?") else draw(st.integers(0, 2))
            if action.nargs is None and draw(st.integers(0, 19)) == 0:
                count = 0
            argv += [draw(value) for _ in range(count)]
            continue
        if i != odd and draw(st.integers(0, 5)) != 0:
            continue
        flag = draw(st.sampled_from(action.option_strings))
        argv += [flag] if action.nargs == 0 else [flag, draw(value)]
    if verb == ("run",):
        if draw(st.booleans()):
            argv += ["--out", draw(st.sampled_from(paths))]
        if draw(st.booleans()):
            argv += ["--max-cases", "1", "--budget", "1s"]
    if draw(st.integers(0, 19)) == 0:
        argv.insert(draw(st.integers(0, len(argv))), draw(texts()))  # a stray word
    return argv


class FakePool:
    """`dlfuzz backends` without starting workers."""

    def __init__(self, configs: Any) -> None:
        self.names = [c.backend for c in configs]
        self.unavailable = {n: "[red]not here[/] [/x]" for n in self.names[1:]}

    def __enter__(self) -> FakePool:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def start(self, on_ready: object = None) -> dict[str, str]:
        return {n: "1.0 [dim]" for n in self.names[:1]}


class FakeCampaign:
    """`dlfuzz run` without fuzzing: its arguments, settings and folder are real."""

    def __init__(self, store: Any, settings: Any, update: Any) -> None:
        self.store = store

    def run(self) -> Any:
        return SimpleNamespace(cases=0, bugs_confirmed=0, bugs_flaky=0, interrupted=False)


def invoke(argv: list[str]) -> tuple[int, str, str]:
    """Run ``main(argv)`` with stdout/stderr as strict UTF-8 streams, like a real one."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    code: Any = 0
    try:
        main(argv)
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:  # noqa: BLE001 - the CLI must not let anything escape
        sys.stdout, sys.stderr = old
        pytest.fail(f"{argv!r} raised {type(exc).__name__}: {exc}\n"
                    + "".join(traceback.format_exception(exc)))
    finally:
        sys.stdout, sys.stderr = old
    texts_out = []
    for stream in (out, err):
        stream.flush()
        texts_out.append(stream.buffer.getvalue().decode("utf-8", "replace"))
    code = 0 if code is None else code if isinstance(code, int) else 1
    return code, texts_out[0], texts_out[1]


def campaign_dirs(root: Path) -> set[Path]:
    return {p.parent for p in root.rglob("campaign.db")}


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from dlfuzz.backends.tfjs import install

    monkeypatch.setattr(backends_cmd, "Pool", FakePool)
    monkeypatch.setattr(run_cmd, "Campaign", FakeCampaign)
    monkeypatch.setattr(install, "ensure_installed", lambda version="": tmp_path / "tfjs")
    monkeypatch.setattr(install, "ensure_tools", lambda: tmp_path / "tools")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # crash files stay here
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("DLFUZZ_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def check(base: Path, verb: tuple[str, ...], data: st.DataObject) -> None:
    box = Sandbox(base)
    argv = data.draw(argv_for(verb, box.paths()), label="argv")
    before = campaign_dirs(box.root)
    code, out, err = invoke(argv)
    assert code in ALLOWED, f"{argv!r}: exit {code}\n{err}"
    assert "Traceback" not in out + err, f"{argv!r}:\n{err}"
    if code == 2:
        assert campaign_dirs(box.root) == before, f"{argv!r} left a campaign: {err}"
        assert err.startswith("dlfuzz: error:") or "usage:" in err, f"{argv!r}: {err!r}"


# Examples per verb: the `specs` verbs load whole spec files (about a second each), so
# they get fewer; the whole file stays well under a minute.
EXAMPLES = {("specs", "stats"): 6, ("specs", "show"): 15, ("specs", "validate"): 15}


@pytest.mark.parametrize("verb", sorted(VERBS), ids=" ".join)
def test_cli_never_crashes(verb: tuple[str, ...], tmp_path: Path, fakes: None) -> None:
    @settings(max_examples=EXAMPLES.get(verb, 20), deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        check(tmp_path, verb, data)

    one()
