"""docs/ci.md's worked CI job stays runnable: every `dlfuzz` command in it parses.

A flag renamed or dropped would otherwise surface in a library team's first nightly run.
Each ```yaml block must be valid YAML; every `dlfuzz ...` command line in a step's
`run:` goes through dlfuzz's own parser, and `dlfuzz run` lines through the settings
checks too (backends, budget, engine options), as `dlfuzz run` would before fuzzing.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from dlfuzz.cli.main import build_parser
from dlfuzz.cli.run_cmd import _overrides
from dlfuzz.settings import load_settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "ci.md"
FENCE = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)
EXPRESSION = re.compile(r"\$\{\{.*?\}\}")  # a GitHub Actions expression
SHELL_STOP = {">", ">>", "2>", "2>&1", "|", "&&", "||", ";"}


def _workflows() -> list[dict[str, Any]]:
    blocks = FENCE.findall(DOC.read_text(encoding="utf-8"))
    return [yaml.safe_load(block) for block in blocks]


def _run_scripts(workflow: dict[str, Any]) -> list[str]:
    return [step["run"] for job in workflow["jobs"].values() for step in job["steps"]
            if "run" in step]


def _dlfuzz_commands(script: str) -> list[list[str]]:
    """The arguments after `dlfuzz` of each command in a shell script, up to a redirect."""
    commands = []
    for line in script.replace("\\\n", " ").splitlines():
        words = shlex.split(EXPRESSION.sub("X", line))
        for i, word in enumerate(words):
            if word == "dlfuzz" or word.endswith("/dlfuzz"):
                rest = words[i + 1:]
                end = next((j for j, w in enumerate(rest) if w in SHELL_STOP), len(rest))
                commands.append(rest[:end])
                break
    return commands


def _all_commands() -> list[list[str]]:
    return [argv for workflow in _workflows() for script in _run_scripts(workflow)
            for argv in _dlfuzz_commands(script)]


def test_the_doc_has_a_workflow_that_gates_uploads_sarif_and_caches_the_baseline() -> None:
    workflows = _workflows()
    assert workflows, f"no ```yaml block in {DOC}"
    uses = {step.get("uses", "").split("@")[0] for w in workflows
            for job in w["jobs"].values() for step in job["steps"]}
    assert {"github/codeql-action/upload-sarif", "actions/upload-artifact"} <= uses
    assert {"actions/cache/restore", "actions/cache/save"} <= uses
    verbs = [argv[0] for argv in _all_commands()]
    assert {"run", "findings", "baseline", "report", "backends"} <= set(verbs)
    gate = [argv for argv in _all_commands() if argv[0] == "run" and "--fail-on" in argv]
    assert gate and all("--baseline" in argv and "--python" in argv for argv in gate)
    formats = {argv[argv.index("--format") + 1] for argv in _all_commands()
               if "--format" in argv}
    assert "sarif" in formats


@pytest.mark.parametrize("argv", _all_commands(), ids=lambda argv: " ".join(argv)[:60])
def test_every_dlfuzz_command_in_the_doc_is_accepted(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)  # a UsageError names the bad flag
    if args.verb == "run":
        load_settings(args.config, args.profile, _overrides(args))


def test_the_extractor_sees_flags_that_do_not_exist() -> None:
    """The check above is only worth something if a wrong command line fails it."""
    from dlfuzz.errors import UsageError

    [argv] = _dlfuzz_commands('.venv/bin/dlfuzz findings camp --fromat sarif > x.sarif')
    assert argv == ["findings", "camp", "--fromat", "sarif"]
    with pytest.raises(UsageError, match="--fromat"):
        build_parser().parse_args(argv)
