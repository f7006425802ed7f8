"""`--program-data`: a user's .npz reaches the seeds through the real loading code."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dlfuzz.engines.program.datasets import write_npz
from dlfuzz.engines.program.engine import ProgramEngine
from dlfuzz.errors import UsageError


def test_mnist_like_file_is_conformed_and_read_by_every_program(tmp_path, monkeypatch):
    monkeypatch.setenv("DLFUZZ_CACHE", str(tmp_path / "cache"))
    rng = np.random.default_rng(0)
    x = rng.random((30, 28, 28), dtype=np.float32)  # MNIST without its channel axis
    y = rng.integers(0, 10, 30)
    data = write_npz(tmp_path / "mine.npz", x, y)
    engine = ProgramEngine(libraries=("torch",), seed_programs=["torch_lenet_seq"],
                           program_data=str(data))
    case = engine.propose(1)[0]
    line = next(ln for ln in case.source.splitlines() if ln.startswith("DATA_FILE = "))
    used = Path(eval(line.split("=", 1)[1]))  # the absolute path the program reads
    assert used.is_file() and used.parent == tmp_path / "cache" / "program-data"
    with np.load(used) as arrays:
        assert arrays["x"].shape == (30, 1, 28, 28)
        assert np.array_equal(arrays["x"][:, 0], x) and np.array_equal(arrays["y"], y)


def test_a_chosen_seed_that_does_not_fit_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DLFUZZ_CACHE", str(tmp_path / "cache"))
    data = write_npz(tmp_path / "cifar.npz", np.zeros((10, 32, 32, 3), np.float32),
                     np.zeros(10, np.int64))
    with pytest.raises(UsageError, match="cifar.npz"):
        ProgramEngine(libraries=("torch",), seed_programs=["torch_lenet_seq"],
                      program_data=str(data))
    # without a chosen seed, the seeds that fit are kept and the others left out
    engine = ProgramEngine(libraries=("torch",), program_data=str(data))
    names = [t.seed.name for t in engine.trees]
    assert names and not any(n.startswith("torch_lenet") for n in names), names
    assert "torch_vgg_seq" in names, names


def test_the_generated_program_trains_on_the_file(tmp_path, monkeypatch):
    """The root program, run as a standalone script, trains on the user's samples."""
    monkeypatch.setenv("DLFUZZ_CACHE", str(tmp_path / "cache"))
    rng = np.random.default_rng(1)
    data = write_npz(tmp_path / "mine.npz", rng.random((40, 1, 28, 28), dtype=np.float32),
                     rng.integers(0, 10, 40))
    engine = ProgramEngine(libraries=("torch",), seed_programs=["torch_lenet_seq"],
                           program_data=str(data))
    script = tmp_path / "program.py"
    script.write_text(engine.propose(1)[0].source + "\nprint('samples', len(load_data()[0]))\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "samples 40" in proc.stdout, proc.stdout
