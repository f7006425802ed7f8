"""``dlfuzz specs``: show, validate, stats and extract (with a fake extractor and a local
LLM server on 127.0.0.1) on small spec files the tests write."""

from __future__ import annotations

import json
import re
import sys
import threading
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dlfuzz.cli.main import main
from dlfuzz.engines.api import libspecs
from dlfuzz.engines.api.specs import DEFAULT_SPEC_FILE

SPEC = """{"format": 2, "library": "torch", "versions": {"torch": "2.13.0"}, "apis": [
  {"api": "torch.nn.functional.conv2d", "group": "nn",
   "params": [
    {"name": "input", "type": ["tensor"], "rank": [3, 4], "dtypes": ["float32", "float64"]},
    {"name": "weight", "type": ["tensor"], "rank": [4, 4]},
    {"name": "bias", "type": ["tensor", "none"], "optional": true, "default": null},
    {"name": "groups", "type": ["int"], "optional": true, "default": 1, "range": [1, 4]}],
   "constraints": [
    {"expr": "input.shape[-3] == weight.shape[1] * groups", "from": "error"},
    "weight.shape[0] % groups == 0",
    {"expr": "bias is None or bias.shape[0] == weight.shape[0]", "from": "validation"}]},
  {"api": "torch.special.erf", "params": [{"name": "input", "type": ["tensor"]}],
   "constraints": [], "skip": "not yet"}
]}
"""


def dlfuzz(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    return info.value.code, out, err


@pytest.fixture
def spec_file(tmp_path):
    path = tmp_path / "mini.json"
    path.write_text(SPEC)
    return path


def test_validate_reports_counts(capsys, spec_file):
    code, out, _ = dlfuzz(capsys, "specs", "validate", str(spec_file), str(DEFAULT_SPEC_FILE))
    assert code == 0
    assert (f"ok {spec_file}: format 2, 2 APIs, 1 skipped, 0 random, 3 constraints "
            "(validation 1, error 1, hand 1)") in out
    assert re.search(r"numpy_like.json: format 1, \d+ APIs", out)


def test_validate_bad_constraint_names_file_line_col(capsys, spec_file, tmp_path):
    bad = tmp_path / "bad.json"
    text = SPEC.replace('"weight.shape[0] % groups == 0"', '"weight.rank % groups == 0"')
    bad.write_text(text)
    code, out, err = dlfuzz(capsys, "specs", "validate", str(spec_file), str(bad))
    assert code == 1
    assert f"ok {spec_file}" in out and str(bad) not in out
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "weight.rank" in s)
    col = text.splitlines()[line - 1].index('"weight.rank') + 2
    assert f"{bad}:{line}:{col}: api 'torch.nn.functional.conv2d'" in err
    assert "unknown property 'rank'" in err and "Traceback" not in err


def test_validate_broken_json_and_usage_errors(capsys, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": 2,\n "apis": [}')
    code, _, err = dlfuzz(capsys, "specs", "validate", str(broken))
    assert code == 1 and f"{broken}:2:" in err and "not valid JSON" in err
    code, _, err = dlfuzz(capsys, "specs", "validate", "nosuchlib")
    assert code == 2 and "unknown library 'nosuchlib'" in err
    code, _, err = dlfuzz(capsys, "specs", "show", str(tmp_path / "missing.json"))
    assert code == 2 and "no such spec file" in err


def test_show_list_and_one_api(capsys, spec_file):
    code, out, _ = dlfuzz(capsys, "specs", "show", str(spec_file))
    assert code == 0
    assert "torch.nn.functional.conv2d" in out and "torch.special.erf" in out
    assert "bias:tensor|none?" in out and "skip: not yet" in out
    code, out, _ = dlfuzz(capsys, "specs", "show", str(spec_file), "conv2d")
    assert code == 0
    assert "call: torch.nn.functional.conv2d(input, weight, bias=None, groups=1)" in out
    assert "rank 3..4; dtypes float32,float64" in out and "range 1..4" in out
    assert "[error     ] input.shape[-3] == weight.shape[1] * groups" in out
    assert "[hand      ] weight.shape[0] % groups == 0" in out
    code, out, _ = dlfuzz(capsys, "specs", "show", str(spec_file), "erf", "--json")
    assert json.loads(out) == {"api": "torch.special.erf", "params": [
        {"name": "input", "type": ["tensor"]}], "constraints": [], "skip": "not yet"}
    code, _, err = dlfuzz(capsys, "specs", "show", str(spec_file), "conv3d")
    assert code == 2 and "did you mean torch.nn.functional.conv2d" in err


def test_stats_json(capsys, spec_file):
    code, out, _ = dlfuzz(capsys, "specs", "stats", str(spec_file), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["files"][0]["apis"] == 2 and data["files"][0]["skipped"] == 1
    assert data["files"][0]["sources"] == {"validation": 1, "error": 1, "hand": 1}
    assert {(m["module"], m["apis"]) for m in data["modules"]} == {
        ("torch.nn.functional", 1), ("torch.special", 1)}


# ---- extract ----------------------------------------------------------------------------
TEXT_SPEC = {"format": 2, "library": "torch", "versions": {"torch": "x"}, "apis": [
    {"api": "textwrap.indent", "params": [{"name": "text", "type": ["str"]},
                                          {"name": "prefix", "type": ["str"]}],
     "constraints": [{"expr": "len(prefix) <= 8", "from": "doc"}]}]}


@pytest.fixture
def fake_extractor(monkeypatch):
    """Stands in for EXT0's extraction module: records argv, writes TEXT_SPEC to --out."""
    calls = []

    def fake_main(argv):
        calls.append(list(argv))
        out = argv[argv.index("--out") + 1]
        with open(out, "w") as fh:
            json.dump(TEXT_SPEC, fh)
        return 0

    module = types.ModuleType("dlfuzz.specgen.__main__")
    module.main = fake_main
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for var in ("DLFUZZ_LLM_ENDPOINT", "DLFUZZ_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return calls


def test_extract_calls_extractor_and_adds_llm_constraints(capsys, tmp_path, monkeypatch,
                                                         fake_extractor):
    out = tmp_path / "torch.json"
    code, _, _ = dlfuzz(capsys, "specs", "extract", "torch", "--refine", "--out", str(out))
    assert code == 0 and fake_extractor == [["torch", "--refine", "--out", str(out)]]
    code, _, err = dlfuzz(capsys, "specs", "extract", "torch", "--llm", "--out", str(out))
    assert code == 2 and "--llm needs an LLM endpoint" in err

    seen = []
    answer = "len(prefix) <= 8\nlen(text) >= 0\ntext.strip() != ''\nwidth > 2"

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            body = json.dumps({"choices": [{"message": {"content": answer}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        monkeypatch.setenv("DLFUZZ_LLM_ENDPOINT",
                           f"http://127.0.0.1:{server.server_address[1]}/v1")
        monkeypatch.setenv("DLFUZZ_LLM_MODEL", "m")
        monkeypatch.setenv("DLFUZZ_LLM_CACHE", str(tmp_path / "cache"))
        code, stdout, err = dlfuzz(capsys, "specs", "extract", "torch", "--llm",
                                   "--out", str(out))
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0, err
    assert "1 APIs asked" in stdout and "1 constraints added" in stdout
    assert "2 answer lines dropped" in stdout
    spec = libspecs.load_file(out)[0]
    assert [(c.text, c.source) for c in spec.constraints] == [
        ("len(prefix) <= 8", "doc"), ("len(text) >= 0", "llm")]
    assert "def indent(text, prefix" in seen[0]["messages"][-1]["content"]
    assert json.loads(out.read_text())["versions"] == {"torch": "x"}
