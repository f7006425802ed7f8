"""Bad input to ``dlfuzz run`` is refused before anything is written.

Each case is one a user hit: nonsense values accepted (a negative batch size, budget or
restart interval), flags silently ignored (``--tfjs-version`` without a tfjs backend,
every flag but ``--budget`` on ``--resume``), half-made campaign folders after an error,
tracebacks on filesystem errors, two runs writing one campaign at once. Every test goes
through the real CLI entry point and checks the exit code, the message and that no
folder is left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dlfuzz.cli.main import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``dlfuzz ARGS`` in this process: (exit code, stderr)."""
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
    code = info.value.code
    return (0 if code is None else int(code)), capsys.readouterr().err


def _usage_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run, expect exit 2 with one line and no traceback; return that line."""
    code, err = _run(capsys, *args)
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _toml(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text("[campaign]\n" + body + "\n")
    return path


# ---- numeric ranges: flag, config file and profile alike ---------------------------------

@pytest.mark.parametrize("body, needle", [
    ("batch_size = -3", "--batch-size -3 (config key campaign.batch_size in"),
    ("budget_s = -10", "--budget -10.0 (config key campaign.budget_s in"),
    ("budget_s = 0", "--budget 0.0 (config key campaign.budget_s in"),
    ("budget_s = nan", "(config key campaign.budget_s in"),
    ("max_cases = -1", "--max-cases -1 (config key campaign.max_cases in"),
    ("restart_every = -5", "--restart-every -5 (config key campaign.restart_every in"),
    ("confirm_runs = 0", "--confirm-runs 0 (config key campaign.confirm_runs in"),
    ("max_reduce_runs = -1", "(config key campaign.max_reduce_runs in"),
    ("case_timeout_s = 0", "--timeout 0.0 (config key campaign.case_timeout_s in"),
    ("memory_limit_mb = 0", "--memory-limit-mb 0 (config key campaign.memory_limit_mb in"),
    ("threads = 0", "--threads 0 (config key campaign.threads in"),
    ("replicas = -1", "--replicas -1 (config key campaign.replicas in"),
    ("batch_size = true", "campaign.batch_size = True should be a int"),
    ("seed = 1.5", "campaign.seed = 1.5 should be a int"),
    ("reference = 'sometimes'", "(config key campaign.reference in"),
    ("backends = []", "(config key campaign.backends in"),
])
def test_config_values_out_of_range_are_refused(capsys, tmp_path, body, needle):
    line = _usage_error(capsys, "run", "--config", _toml(tmp_path, body),
                        "--out", tmp_path / "camp")
    assert needle in line
    assert not (tmp_path / "camp").exists()


@pytest.mark.parametrize("args, needle", [
    (["--batch-size", "-3"], "--batch-size -3 (config key campaign.batch_size): must be "
                             "at least 1"),
    (["--batch-size", "0"], "--batch-size 0 (config key campaign.batch_size)"),
    (["--max-cases", "-1"], "--max-cases -1 (config key campaign.max_cases): must be 0"),
    (["--restart-every", "-5"], "--restart-every -5 (config key campaign.restart_every): "
                                "must be 0 (never restart) or more"),
    (["--confirm-runs", "0"], "--confirm-runs 0 (config key campaign.confirm_runs)"),
    (["--memory-limit-mb", "-1"], "--memory-limit-mb -1 (config key "
                                  "campaign.memory_limit_mb)"),
    (["--threads", "0"], "--threads 0 (config key campaign.threads)"),
    (["--replicas", "-2"], "--replicas -2 (config key campaign.replicas): must be 0"),
    (["--budget", "-10"], "--budget '-10'"),
    (["--budget", "0s"], "--budget '0s': must be positive"),
])
def test_flags_out_of_range_are_refused(capsys, tmp_path, args, needle):
    line = _usage_error(capsys, "run", *args, "--out", tmp_path / "camp")
    assert needle in line
    assert not (tmp_path / "camp").exists()


def test_profile_values_are_checked_like_the_others(capsys, tmp_path, monkeypatch):
    from dlfuzz import settings

    monkeypatch.setitem(settings.PROFILES, "broken", {"batch_size": -3})
    line = _usage_error(capsys, "run", "--profile", "broken", "--out", tmp_path / "camp")
    assert "--batch-size -3 (config key campaign.batch_size in --profile broken)" in line
    assert not (tmp_path / "camp").exists()


# ---- settings that do not fit the others -------------------------------------------------

def test_tfjs_version_without_a_tfjs_backend_is_refused(capsys, tmp_path):
    line = _usage_error(capsys, "run", "--backends", "numpy,torch", "--tfjs-version", "4.1.0",
                        "--out", tmp_path / "camp")
    assert "--tfjs-version '4.1.0' (config key campaign.tfjs_version)" in line
    assert "tfjs" in line.split(":", 2)[-1]
    assert not (tmp_path / "camp").exists()


@pytest.mark.parametrize("args, needle", [
    (["--executor", "slurm"], "--executor 'slurm' (config key campaign.executor): choose one "
                              "of local, ray"),
    (["--ray-address", "127.0.0.1:6379"], "--ray-address '127.0.0.1:6379' (config key "
                                          "campaign.ray_address): it applies to --executor "
                                          "ray only"),
])
def test_executor_settings_are_checked(capsys, tmp_path, args, needle):
    line = _usage_error(capsys, "run", *args, "--out", tmp_path / "camp")
    assert needle in line
    assert not (tmp_path / "camp").exists()


def test_an_unreachable_ray_cluster_is_a_clear_error(capsys, tmp_path, monkeypatch):
    """Nothing listens there: the error names the flag, the address and the fix, and no
    campaign folder is left behind."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nobody listens on it
    code, err = _run(capsys, "run", "--backends", "numpy,torch", "--executor", "ray",
                     "--ray-address", f"127.0.0.1:{port}", "--out", tmp_path / "camp")
    assert code == 2 and "Traceback" not in err, err
    line = err.strip().splitlines()[-1]  # after the status line "starting workers"
    assert f"--ray-address '127.0.0.1:{port}': cannot join the Ray cluster" in line
    assert "ray status" in line
    assert not (tmp_path / "camp").exists()


@pytest.mark.parametrize("flag, value", [("--preload", "tf=planted_x"),
                                         ("--python", "jax=/usr/bin/python3")])
def test_python_and_preload_must_name_a_selected_backend(capsys, tmp_path, flag, value):
    line = _usage_error(capsys, "run", "--backends", "numpy,torch", flag, value,
                        "--out", tmp_path / "camp")
    assert f"{flag} '{value}'" in line and "is not selected" in line
    assert not (tmp_path / "camp").exists()


def test_backend_typo_leaves_nothing_so_the_fixed_command_can_run(capsys, tmp_path):
    line = _usage_error(capsys, "run", "--backends", "numpy,torhc", "--out", tmp_path / "camp")
    assert "unknown backend 'torhc'; known backends: numpy, torch" in line
    assert not (tmp_path / "camp").exists()
    cfg = _toml(tmp_path, "backends = ['numpy', 'torhc']")
    line = _usage_error(capsys, "run", "--config", cfg, "--out", tmp_path / "camp")
    assert "unknown backend 'torhc'" in line and "c.toml" in line
    assert not (tmp_path / "camp").exists()


def test_an_existing_empty_folder_stays_empty_after_a_usage_error(capsys, tmp_path):
    (tmp_path / "camp").mkdir()
    _usage_error(capsys, "run", "--batch-size", "0", "--out", tmp_path / "camp")
    _usage_error(capsys, "run", "--engine", "numpy-api", "--backends", "numpy", "--apis",
                 "no_such_api", "--out", tmp_path / "camp")
    assert list((tmp_path / "camp").iterdir()) == []


def test_an_engine_that_cannot_load_leaves_no_folder(capsys, tmp_path):
    line = _usage_error(capsys, "run", "--engine", "numpy-api", "--backends", "numpy",
                        "--apis", "no_such_api", "--out", tmp_path / "a" / "camp")
    assert "no_such_api" in line
    assert not (tmp_path / "a").exists()


# ---- filesystem errors: one line, the path and the reason ---------------------------------

def test_out_under_proc_is_one_line(capsys):
    line = _usage_error(capsys, "run", "--budget", "5s", "--out", "/proc/dlfuzz-x/camp")
    assert "--out /proc/dlfuzz-x/camp: cannot write the campaign there" in line


def test_an_argument_holding_a_nul_byte_is_one_line(capsys, tmp_path):
    """Found by the CLI fuzz test: ``--baseline '\\x00'`` was an internal error (Python's
    open refuses the name)."""
    line = _usage_error(capsys, "findings", tmp_path, "--baseline", "\x00")
    assert "holds a NUL byte" in line


def test_out_below_a_file_is_one_line(capsys, tmp_path):
    (tmp_path / "f").write_text("x")
    line = _usage_error(capsys, "run", "--budget", "5s", "--out", tmp_path / "f" / "camp")
    assert f"--out {tmp_path / 'f' / 'camp'}: cannot write the campaign there" in line
    assert "Not a directory" in line


def test_out_is_a_file_is_one_line(capsys, tmp_path):
    (tmp_path / "f").write_text("x")
    line = _usage_error(capsys, "run", "--budget", "5s", "--out", tmp_path / "f")
    assert "exists and is not a directory" in line
    assert (tmp_path / "f").read_text() == "x"


def test_out_without_permission_is_one_line(capsys, tmp_path):
    """A folder nobody may create in, root included (sysfs refuses mkdir)."""
    line = _usage_error(capsys, "run", "--budget", "5s", "--out", "/sys/dlfuzz-camp")
    assert "/sys/dlfuzz-camp" in line and "not permitted" in line
    assert not Path("/sys/dlfuzz-camp").exists()


# ---- --resume: stored settings, only --budget and --max-cases may change -----------------

def _stored_campaign(path: Path, **given: object) -> Path:
    """A campaign folder as `dlfuzz run` leaves it, without running workers."""
    from dlfuzz.campaign import open_campaign
    from dlfuzz.settings import load_settings

    settings = load_settings(overrides={"engine": "numpy-api", "backends": ("numpy",),
                                        "seed": 3, "batch_size": 16, **given})
    store, _ = open_campaign(path, None, settings)
    store.close()
    return path


@pytest.mark.parametrize("args, needles", [
    (["--backends", "numpy,torch"],
     ["--backends (campaign.backends): stored 'numpy', given 'numpy,torch'"]),
    (["--seed", "4", "--batch-size", "8"],
     ["--seed (campaign.seed): stored 3, given 4",
      "--batch-size (campaign.batch_size): stored 16, given 8"]),
    (["--engine", "api"], ["--engine (campaign.engine): stored 'numpy-api', given 'api'"]),
    (["--no-reduce"], ["--no-reduce (campaign.reduce): stored True, given False"]),
    (["--profile", "deep"], ["--batch-size (campaign.batch_size): stored 16, given 512"]),
])
def test_resume_refuses_changed_settings_naming_each(capsys, tmp_path, args, needles):
    camp = _stored_campaign(tmp_path / "camp")
    line = _usage_error(capsys, "run", "--resume", camp, "--budget", "5s", *args)
    assert f"--resume {camp}: a resumed campaign runs with its stored settings" in line
    for needle in needles:
        assert needle in line
    assert "only --budget and --max-cases may change" in line


def test_resume_refuses_a_changed_config_file_value(capsys, tmp_path):
    camp = _stored_campaign(tmp_path / "camp")
    line = _usage_error(capsys, "run", "--resume", camp,
                        "--config", _toml(tmp_path, "restart_every = 50"))
    assert "--restart-every (campaign.restart_every): stored 0, given 50" in line


def test_resume_refuses_a_changed_engine_option(capsys, tmp_path):
    camp = _stored_campaign(tmp_path / "camp", engine="api", backends=("torch", "jax"))
    line = _usage_error(capsys, "run", "--resume", camp, "--generator", "random")
    assert "--generator (api.generator): stored 'adjust', given 'random'" in line


def test_resume_accepts_settings_equal_to_the_stored_ones(tmp_path):
    from dlfuzz.settings import CampaignSettings, load_settings, resume_changes
    from dlfuzz.store.db import Store

    camp = _stored_campaign(tmp_path / "camp")
    store = Store.open(camp)
    stored = CampaignSettings.from_json(store.meta()["settings"])
    store.close()
    same = load_settings(overrides={"engine": "numpy-api", "backends": ("numpy",), "seed": 3,
                                    "budget_s": 30.0, "max_cases": 100}, base=stored)
    assert resume_changes(stored, same) == []  # budget and case limit may change
    assert (same.budget_s, same.max_cases) == (30.0, 100)


def test_resume_still_validates_what_it_is_given(capsys, tmp_path):
    camp = _stored_campaign(tmp_path / "camp")
    line = _usage_error(capsys, "run", "--resume", camp, "--max-cases", "-1")
    assert "--max-cases -1 (config key campaign.max_cases)" in line


# ---- the campaign lock ----------------------------------------------------------------

def test_a_second_writer_is_refused_naming_the_holder(capsys, tmp_path):
    from dlfuzz.store.lock import CampaignLock

    camp = _stored_campaign(tmp_path / "camp")
    held = CampaignLock(camp)
    try:
        assert (camp / "campaign.lock").read_text().strip() == str(os.getpid())
        line = _usage_error(capsys, "run", "--resume", camp, "--budget", "5s")
        assert f"the campaign is in use by another dlfuzz run (pid {os.getpid()})" in line
        code, err = _run(capsys, "findings", camp)  # readers need no lock
        assert code == 0, err
    finally:
        held.release()


def test_a_run_creating_a_campaign_holds_its_lock(tmp_path):
    from dlfuzz.campaign import open_campaign
    from dlfuzz.errors import UsageError
    from dlfuzz.settings import load_settings
    from dlfuzz.store.lock import CampaignLock

    settings = load_settings(overrides={"engine": "numpy-api", "backends": ("numpy",)})
    store, _ = open_campaign(tmp_path / "camp", None, settings)
    with pytest.raises(UsageError, match=f"pid {os.getpid()}"):
        CampaignLock(tmp_path / "camp", "--resume")
    store.close()
    CampaignLock(tmp_path / "camp").release()  # closing the store frees it


def test_a_dead_holder_never_blocks(capsys, tmp_path):
    camp = _stored_campaign(tmp_path / "camp")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from dlfuzz.store.lock import CampaignLock; "
         f"CampaignLock({str(camp)!r}); print('held', flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        line = _usage_error(capsys, "run", "--resume", camp, "--seed", "9")
        assert f"pid {holder.pid}" in line
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    time.sleep(0.1)
    # The stale pid stays in the file; the lock itself died with its holder, so the next
    # run gets as far as comparing settings.
    assert (camp / "campaign.lock").read_text().strip() == str(holder.pid)
    line = _usage_error(capsys, "run", "--resume", camp, "--seed", "9")
    assert "--seed (campaign.seed): stored 3, given 9" in line
