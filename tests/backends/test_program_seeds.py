"""Every seed program runs standalone with its real library and leaves a usable RESULT.

Seeds are run as scripts (``runpy.run_path(..., run_name="__main__")``, the way
``python seed.py`` runs them) in subprocesses, several per subprocess to pay each library's
import once: all torch seeds under torch, all Keras seeds under keras-torch, and Keras LeNet
and PointNet under keras-tf, keras-jax and keras-torch, whose results must agree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dlfuzz.engines.program.datasets import synthetic, write_npz
from dlfuzz.engines.program.seeds import SEEDS, seed_names

SEED_DIR = Path(__file__).resolve().parents[2] / "src/dlfuzz/engines/program/seeds"
# Same program, same initial weights, one SGD epoch: keras-tf/jax/torch differ only by float32
# rounding order (measured up to ~4e-7 on LeNet outputs); 1e-4 leaves room for other CPUs.
CROSS_TOL = 1e-4
CROSS_SEEDS = ("keras_lenet", "keras_pointnet")

RUNNER = r"""
import json, runpy, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
out_dir, jobs = sys.argv[1], json.loads(sys.argv[2])
summary = {}
for label, path in jobs:
    start, cpu = time.perf_counter(), time.process_time()
    namespace = runpy.run_path(path, run_name="__main__")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    result = namespace["RESULT"]
    np.save(f"{out_dir}/{label}.npy", result["outputs"])
    summary[label] = {"loss": result["loss"], "eval_loss": result["eval_loss"],
                      "keys": sorted(result), "dtype": str(result["outputs"].dtype),
                      "seconds": seconds, "cpu": cpu}
print("SUMMARY " + json.dumps(summary))
"""


def run_seeds(jobs: list[tuple[str, Path]], out_dir: Path, env: dict[str, str] | None = None,
              timeout: float = 240.0) -> dict[str, dict]:
    """Run seed files in one fresh interpreter; per label: losses, keys, time, outputs."""
    # One intra-op thread: on a shared 2-core machine thread pools oversubscribe and spin;
    # the numbers do not depend on it (the cross-backend tolerance covers reduction order).
    environment = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3",
                   "OMP_NUM_THREADS": "1", **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(out_dir),
         json.dumps([(label, str(path)) for label, path in jobs])],
        capture_output=True, text=True, timeout=timeout, env=environment, cwd=out_dir)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("SUMMARY ")][-1]
    summary = json.loads(line[len("SUMMARY "):])
    for label, entry in summary.items():
        entry["outputs"] = np.load(out_dir / f"{label}.npy")
    # each seed printed its one-line summary when run as a script
    assert proc.stdout.count("eval_loss=") == len(jobs), proc.stdout[-2000:]
    return summary


def check_result(name: str, entry: dict) -> None:
    info = SEEDS[name]
    assert entry["keys"] == ["eval_loss", "loss", "outputs"], name
    assert np.isfinite(entry["loss"]) and np.isfinite(entry["eval_loss"]), (name, entry)
    assert entry["dtype"] == "float32", name
    width = 1 if info.dataset == "stock" else (100 if info.dataset == "imagenet" else 10)
    assert entry["outputs"].shape == (20, width), (name, entry["outputs"].shape)
    assert np.all(np.isfinite(entry["outputs"])), name


def seed_file(name: str) -> Path:
    path = SEED_DIR / SEEDS[name].file
    assert path.is_file(), path
    return path


def report_times(library: str, summary: dict[str, dict]) -> None:
    print(f"\n{library} (wall/cpu s): " + ", ".join(f"{k} {v['seconds']:.2f}/{v['cpu']:.2f}"
                                                   for k, v in summary.items()))


def test_every_torch_seed_runs_and_both_styles_agree(tmp_path: Path):
    names = seed_names("torch")
    summary = run_seeds([(n, seed_file(n)) for n in names], tmp_path)
    report_times("torch", summary)
    for name in names:
        check_result(name, summary[name])
    # the sequential and module seed of a network build the same model from the same seed
    for name in names:
        if name.endswith("_seq"):
            twin = name[:-len("_seq")] + "_module"
            assert summary[name]["loss"] == pytest.approx(summary[twin]["loss"], rel=1e-5)
            np.testing.assert_allclose(summary[name]["outputs"], summary[twin]["outputs"],
                                       rtol=1e-4, atol=1e-5)


def test_every_keras_seed_runs_on_keras_torch(tmp_path: Path):
    names = [n for n in seed_names("keras") if n not in CROSS_SEEDS]  # those: cross test
    summary = run_seeds([(n, seed_file(n)) for n in names], tmp_path,
                        env={"KERAS_BACKEND": "torch"})
    report_times("keras-torch", summary)
    for name in names:
        check_result(name, summary[name])


def test_keras_seeds_agree_across_tf_jax_torch(tmp_path: Path):
    results = {}
    for backend in ("tensorflow", "jax", "torch"):
        out = tmp_path / backend
        out.mkdir()
        results[backend] = run_seeds([(n, seed_file(n)) for n in CROSS_SEEDS], out,
                                     env={"KERAS_BACKEND": backend})
        report_times(f"keras-{backend}", results[backend])
    for name in CROSS_SEEDS:
        ref = results["torch"][name]
        check_result(name, ref)
        for backend in ("tensorflow", "jax"):
            other = results[backend][name]
            check_result(name, other)
            assert other["loss"] == pytest.approx(ref["loss"], rel=CROSS_TOL, abs=CROSS_TOL)
            assert other["eval_loss"] == pytest.approx(ref["eval_loss"], rel=CROSS_TOL,
                                                       abs=CROSS_TOL)
            np.testing.assert_allclose(other["outputs"], ref["outputs"], rtol=CROSS_TOL,
                                       atol=CROSS_TOL, err_msg=f"{name} keras-{backend}")


def test_data_file_is_used(tmp_path: Path):
    """A seed with DATA_FILE set trains on the file: other data, other result, and a file
    holding exactly the synthetic arrays reproduces the synthetic run."""
    jobs = []
    for name, layout in (("torch_lenet_seq", "torch"), ("torch_lstm_module", "torch")):
        dataset = SEEDS[name].dataset
        same = write_npz(tmp_path / f"{name}_same.npz", *synthetic(dataset, 100, 0, layout))
        other = write_npz(tmp_path / f"{name}_other.npz", *synthetic(dataset, 60, 7, layout))
        source = seed_file(name).read_text()
        assert "\nDATA_FILE = None\n" in source
        for tag, path in (("plain", None), ("same", same), ("other", other)):
            program = tmp_path / f"{name}_{tag}.py"
            program.write_text(source.replace("\nDATA_FILE = None\n",
                                              f"\nDATA_FILE = {str(path)!r}\n" if path else
                                              "\nDATA_FILE = None\n"))
            jobs.append((f"{name}_{tag}", program))
    summary = run_seeds(jobs, tmp_path)
    for name in ("torch_lenet_seq", "torch_lstm_module"):
        plain, same, other = (summary[f"{name}_{t}"] for t in ("plain", "same", "other"))
        check_result(name, other)
        assert same["loss"] == plain["loss"]
        np.testing.assert_array_equal(same["outputs"], plain["outputs"])
        assert other["loss"] != plain["loss"]


def test_a_seed_runs_as_a_plain_script(tmp_path: Path):
    """``python <seed file>``: no dlfuzz on the path, nothing written, one summary line."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-I", str(seed_file("torch_lenet_module"))],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("loss=") and "outputs=(20, 10)" in proc.stdout
    assert list(tmp_path.iterdir()) == []
