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


# ---- engine options: each engine's own settings ---------------------------------------

@pytest.mark.parametrize("overrides, needle", [
    ({"engine": "model", "method": "deep"},
     "--method 'deep' (model engine option method): choose one of lemon, dljsfuzzer"),
    ({"engine": "model", "inputs_per_model": -1},
     "--inputs-per-model -1 (model engine option inputs_per_model): must be at least 1"),
    ({"engine": "program", "times_mt": 0},
     "--times-mt 0 (program engine option times_mt): must be at least 1"),
    ({"engine": "api", "generator": "smart"},
     "--generator 'smart' (api engine option generator): choose one of random, typed, "
     "adjust, z3"),
    ({"engine": "api", "violate_share": 1.5},
     "--violate-share 1.5 (api engine option violate_share): give a share in [0, 1]"),
    ({"engine": "api", "spec_files": ("/nonexistent/specs.json",)},
     "--spec-file /nonexistent/specs.json: no such spec file (api engine option spec_files)"),
    ({"engine": "program", "program_data": "/nonexistent/d.npz"},
     "--program-data /nonexistent/d.npz: no such data file"),
    ({"engine": "program", "seed_programs": ("/nonexistent/seed.py",)},
     "--seed-program /nonexistent/seed.py: no such seed program"),
    ({"engine": "model", "seed_models": ("/nonexistent/m.onnx",)},
     "--seed-model /nonexistent/m.onnx: no such model file"),
])
def test_engine_option_validation_names_option_value_and_fix(overrides, needle):
    with pytest.raises(UsageError) as info:
        load_settings(overrides=overrides)
    assert needle in str(info.value)


@pytest.mark.parametrize("overrides, needle", [
    ({"engine": "api", "seed_models": ("lenet5",)},
     "--seed-model is a model-engine option; the campaign's engine is api "
     "(add --engine model, or drop --seed-model)"),
    ({"engine": "model", "specials": False}, "--no-specials is an api-engine option"),
    ({"engine": "numpy-api", "times_mt": 2}, "--times-mt is a program-engine option"),
    ({"seed_programs": ("torch_lenet_seq",)}, "--seed-program is a program-engine option; "
                                              "the campaign's engine is api"),
])
def test_option_of_another_engine_is_refused(overrides, needle):
    with pytest.raises(UsageError) as info:
        load_settings(overrides=overrides)
    assert needle in str(info.value)


def test_engine_options_reach_their_engine_settings():
    from dlfuzz.engines.model.settings import ModelEngineSettings
    from dlfuzz.engines.program.settings import ProgramEngineSettings

    s = load_settings(overrides={"engine": "model", "method": "dljsfuzzer",
                                 "seed_models": ("lenet5",), "inputs_per_model": 2})
    assert s.engine_settings == ModelEngineSettings("dljsfuzzer", ("lenet5",), 2)
    s = load_settings(overrides={"engine": "program", "times_mt": 8})
    assert s.engine_settings == ProgramEngineSettings(times_mt=8)
    assert load_settings().engine_settings.generator == "adjust"  # api engine defaults


def test_toml_flat_and_engine_table(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[campaign]\nengine = 'model'\nmethod = 'dljsfuzzer'\ninputs_per_model = 2\n"
                   "seed = 5\n")
    s = load_settings(cfg)
    assert (s.engine, s.seed) == ("model", 5)
    assert (s.engine_settings.method, s.engine_settings.inputs_per_model) == ("dljsfuzzer", 2)
    # the engine's own table; tables of other engines are for other runs and left alone
    cfg.write_text("[campaign]\nengine = 'model'\n[model]\nseed_models = ['lenet5', 'vgg']\n"
                   "[program]\ntimes_mt = 9\n[api]\nviolate_share = 0\n")
    s = load_settings(cfg)
    assert s.engine_settings.seed_models == ("lenet5", "vgg")
    s = load_settings(cfg, overrides={"engine": "api"})
    assert s.engine_settings.violate_share == 0.0  # int 0 read as the float it is
    s = load_settings(cfg, overrides={"engine": "program", "times_mt": 3})
    assert s.engine_settings.times_mt == 3  # the command line wins over the file
    # mistakes name the key and the fix
    cfg.write_text("[campaign]\nseed_models = ['lenet5']\n")
    with pytest.raises(UsageError, match=r"campaign.seed_models is a model-engine option, "
                                         r"but the engine is api; move it to a \[model\] table"):
        load_settings(cfg)
    cfg.write_text("[campaign]\nengine = 'model'\nmethod = 'lemon'\n[model]\nmethod = 'lemon'\n")
    with pytest.raises(UsageError, match=r"method is set both in \[campaign\] and in \[model\]"):
        load_settings(cfg)
    cfg.write_text("[campaign]\nengine = 'model'\n[model]\nmethods = 'lemon'\n")
    with pytest.raises(UsageError, match="unknown key model.methods; the model engine's "
                                         "options: method, seed_models, inputs_per_model"):
        load_settings(cfg)
    cfg.write_text("[campaign]\nengine = 'model'\n[model]\ninputs_per_model = 'many'\n")
    with pytest.raises(UsageError, match="model.inputs_per_model = 'many' should be a int"):
        load_settings(cfg)
    cfg.write_text("[campaign]\nengine = 'program'\ntimes_mt = 0\n")
    with pytest.raises(UsageError, match="--times-mt 0"):
        load_settings(cfg)


# What today's flat layout stored for a model campaign (every engine's options flat).
OLD_STORED = {
    "engine": "model", "backends": ["torch", "ort"], "budget_s": 20.0, "seed": 1,
    "batch_size": 256, "case_timeout_s": 10.0, "memory_limit_mb": 8192, "restart_every": 0,
    "confirm_runs": 2, "reduce": True, "max_reduce_runs": 200, "max_cases": 0, "apis": [],
    "pythons": [], "preload": [["torch", "planted_x"]], "reference": "auto", "threads": 1,
    "method": "dljsfuzzer", "seed_models": ["lenet5"], "inputs_per_model": 3,
    "llm_endpoint": "", "llm_model": "", "llm_api_key_env": "DLFUZZ_LLM_API_KEY",
    "generator": "adjust", "violate_share": 0.1, "spec_files": [], "specials": True,
    "seed_programs": [], "times_mt": 4, "program_data": "", "tfjs_version": "",
}


def test_old_stored_settings_load():
    import json

    from dlfuzz.engines.api.settings import ApiEngineSettings
    from dlfuzz.engines.model.settings import ModelEngineSettings
    from dlfuzz.settings import CampaignSettings

    s = CampaignSettings.from_json(OLD_STORED)
    assert s.engine_settings == ModelEngineSettings("dljsfuzzer", ("lenet5",), 3)
    assert s.backends == ("torch", "ort") and s.preload == (("torch", "planted_x"),)
    api = CampaignSettings.from_json({**OLD_STORED, "engine": "api", "generator": "z3",
                                      "specials": False})
    assert api.engine_settings == ApiEngineSettings(generator="z3", specials=False)
    # the new layout round-trips through JSON, as the store keeps it
    again = CampaignSettings.from_json(json.loads(json.dumps(s.to_json())))
    assert again == s
    assert s.to_json()["engine_settings"] == {"method": "dljsfuzzer",
                                              "seed_models": ("lenet5",),
                                              "inputs_per_model": 3,
                                              "gradients": True}
    # a stored campaign whose file options point nowhere any more still opens (report)
    moved = CampaignSettings.from_json({**OLD_STORED, "seed_models": ["/gone/m.onnx"]})
    assert moved.engine_settings.seed_models == ("/gone/m.onnx",)


@pytest.mark.parametrize("args, needle", [
    (["run", "--engine", "api", "--seed-model", "lenet5", "--out", "x"],
     "--seed-model is a model-engine option"),
    (["run", "--engine", "model", "--method", "deep", "--out", "x"], "--method 'deep'"),
    (["run", "--engine", "program", "--times-mt", "0", "--out", "x"], "--times-mt 0"),
    (["run", "--engine", "model", "--times-mt", "3", "--out", "x"],
     "--times-mt is a program-engine option"),
])
def test_cli_engine_option_errors(args, needle, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "dlfuzz", *args], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_batches_are_sized_by_time_unless_a_size_is_given(tmp_path):
    assert load_settings().batch_seconds == 5.0
    assert load_settings(overrides={"batch_size": 300}).batch_seconds == 0.0
    both = load_settings(overrides={"batch_size": 300, "batch_seconds": 2.0})
    assert (both.batch_size, both.batch_seconds) == (300, 2.0)
    assert load_settings(profile="deep").batch_seconds == 0.0  # the profile's size is kept
    config = tmp_path / "c.toml"
    config.write_text("[campaign]\nbatch_size = 64\n")
    assert load_settings(config).batch_seconds == 0.0
    with pytest.raises(UsageError, match="--batch-seconds.*-1"):
        load_settings(overrides={"batch_seconds": -1.0})
