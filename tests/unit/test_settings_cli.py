"""Bad input gets one line naming the problem and the fix, exit code 2."""

import subprocess
import sys

import pytest

from dlfuzz.errors import UsageError
from dlfuzz.settings import load_settings


def _dlfuzz(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dlfuzz", *args], capture_output=True,
                          text=True, timeout=120)


def test_toml_errors_name_the_key(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[campaign]\nbudget = 3\n")
    with pytest.raises(UsageError, match="campaign.budget"):
        load_settings(cfg)
    cfg.write_text("[campaign]\nseed = 'x'\n")
    with pytest.raises(UsageError, match="campaign.seed = 'x' should be a int"):
        load_settings(cfg)
    cfg.write_text("[campaign]\nbudget_s = 5\nbackends = ['numpy', 'torch']\n")
    s = load_settings(cfg, overrides={"seed": 9})
    assert s.budget_s == 5.0 and s.backends == ("numpy", "torch") and s.seed == 9


@pytest.mark.parametrize("args, needle", [
    (["run", "--budget", "soon", "--out", "x"], "--budget 'soon'"),
    (["run", "--backends", "numpy,nosuch", "--out", "x"], "unknown backend 'nosuch'"),
    (["run", "--engine", "nosuch", "--out", "x"], "unknown engine 'nosuch'"),
    (["run", "--budget", "5s"], "needs --out DIR"),
    (["findings", "/"], "not a dlfuzz campaign directory"),
    (["report", "/nonexistent/dir"], "no such directory"),
    (["run", "--python", "torch", "--out", "x"], "expected NAME=VALUE"),
    (["nosuchverb"], "invalid choice"),
])
def test_cli_usage_errors(args, needle, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "dlfuzz", *args], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
