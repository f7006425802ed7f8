"""Program engine datasets: synthetic arrays, the seed registry, user .npz files.

No DL library here: seeds' ``load_data`` functions are pulled out of their source with
``ast`` and run with numpy only, to check they match ``datasets.synthetic``.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import pytest

from dlfuzz.engines.program import datasets
from dlfuzz.engines.program.datasets import (
    MAX_SAMPLES,
    SHAPES,
    conform,
    load_npz,
    prepare,
    synthetic,
    write_npz,
)
from dlfuzz.engines.program.seeds import SEEDS, seed_names, seed_source
from dlfuzz.errors import UsageError


def seed_load_data(name: str, n: int = 100, seed: int = 0, data_file: str | None = None):
    """Run a seed's own load_data (its constants + the function) without its library."""
    tree = ast.parse(seed_source(name))
    keep = [node for node in tree.body
            if (isinstance(node, ast.FunctionDef) and node.name == "load_data")
            or (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.isupper() and node.targets[0].id != "RESULT")]
    namespace: dict = {"np": np}
    exec(compile(ast.Module(body=keep, type_ignores=[]), name, "exec"), namespace)
    namespace.update(N_SAMPLES=n, SEED=seed, DATA_FILE=data_file)
    return namespace["load_data"]()


# ---- registry ---------------------------------------------------------------------------
def test_registry_lists_every_network_in_three_styles():
    assert len(SEEDS) == 27
    assert len(seed_names("torch")) == 18 and len(seed_names("keras")) == 9
    styles = {(info.library, info.style) for info in SEEDS.values()}
    assert styles == {("torch", "sequential"), ("torch", "module"), ("keras", "functional")}
    for name, info in SEEDS.items():
        assert info.dataset in SHAPES, name
        source = seed_source(name)
        assert "RESULT = {" in source and "def load_data():" in source, name
        for constant in ("SEED = 0", "N_SAMPLES = 100", "BATCH = 20", "DATA_FILE = None",
                         "NUM_CLASSES = "):
            assert f"\n{constant}" in source, (name, constant)
        assert "dlfuzz" not in source.replace("dlfuzz's", ""), f"{name} must stay standalone"


def test_seed_files_follow_the_layer_style_of_their_registry_entry():
    for name, info in SEEDS.items():
        source = seed_source(name)
        marker = {"sequential": "model = nn.Sequential(\n", "module": "class Net(nn.Module):",
                  "functional": "inputs = keras.Input(shape="}[info.style]
        assert marker in source, name
        if info.library == "torch":
            assert "nn.Flatten()" in source and "nn.LazyLinear(NUM_CLASSES)" in source, name
        else:
            assert "outputs = layers.Dense(NUM_CLASSES)(x)" in source, name
            assert "init_weights(model)" in source, name


def test_unknown_seed_and_library_are_usage_errors():
    with pytest.raises(UsageError, match="torch_lenet_seq"):
        seed_source("lenet")
    with pytest.raises(UsageError, match="'jax'"):
        seed_names("jax")


# ---- synthetic --------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SEEDS))
def test_synthetic_matches_the_seeds_own_load_data(name):
    info = SEEDS[name]
    layout = "torch" if info.library == "torch" else "keras"
    x, y = seed_load_data(name, n=7, seed=3)
    sx, sy = synthetic(info.dataset, n=7, seed=3, layout=layout)
    assert x.dtype == sx.dtype and y.dtype == sy.dtype
    np.testing.assert_array_equal(x, sx)
    np.testing.assert_array_equal(y, sy)


def test_synthetic_shapes_and_targets():
    for name, spec in SHAPES.items():
        for layout in ("torch", "keras"):
            x, y = synthetic(name, n=5, seed=0, layout=layout)
            assert x.shape == (5, *spec.sample_shape(layout)) and x.dtype == np.float32
            if spec.target == "classes":
                assert y.shape == (5,) and y.dtype == np.int64 and y.max() < spec.classes
            else:
                assert y.shape == (5, 1) and y.dtype == np.float32
    a, _ = synthetic("cifar10", 4, seed=1)
    b, _ = synthetic("cifar10", 4, seed=2)
    assert not np.array_equal(a, b)
    with pytest.raises(UsageError, match="known datasets are mnist"):
        synthetic("svhn", 4)
    with pytest.raises(UsageError, match="'nchw'"):
        synthetic("mnist", 4, layout="nchw")


# ---- user .npz files --------------------------------------------------------------------
def test_load_npz_round_trip(tmp_path: Path):
    x, y = synthetic("mnist", 30, seed=5)
    path = write_npz(tmp_path / "sub" / "mnist_like", x, y)
    assert path.name == "mnist_like" and path.is_file()  # written where asked, no suffix
    lx, ly = load_npz(path)
    np.testing.assert_array_equal(lx, x)
    np.testing.assert_array_equal(ly, y)
    # the seed's own DATA_FILE branch reads the same file to the same arrays
    sx, sy = seed_load_data("torch_lenet_seq", n=100, data_file=str(path))
    np.testing.assert_array_equal(sx, x)
    np.testing.assert_array_equal(sy, y)


def test_missing_file_names_file_and_fix(tmp_path: Path):
    with pytest.raises(UsageError) as err:
        load_npz(tmp_path / "nope.npz")
    assert "nope.npz" in str(err.value) and "no such file" in str(err.value)
    assert "numpy.savez" in str(err.value) and "x=" in str(err.value)


def test_missing_keys_name_present_and_expected(tmp_path: Path):
    path = tmp_path / "keys.npz"
    np.savez(path, images=np.zeros((3, 4)), labels=np.zeros(3))
    with pytest.raises(UsageError) as err:
        load_npz(path)
    text = str(err.value)
    assert str(path) in text and "missing x, y" in text
    assert "'images'" in text and "'labels'" in text and "expected keys x" in text


def test_mismatched_lengths(tmp_path: Path):
    path = write_npz(tmp_path / "len.npz", np.zeros((5, 2), np.float32), np.zeros(4))
    with pytest.raises(UsageError, match=r"x has 5 samples but y has 4"):
        load_npz(path)


def test_non_numeric_dtypes(tmp_path: Path):
    path = write_npz(tmp_path / "str.npz", np.array([["a", "b"]] * 3), np.zeros(3))
    with pytest.raises(UsageError, match=r"x has dtype <U1.*integers or floats"):
        load_npz(path)
    path = tmp_path / "obj.npz"
    np.savez(path, x=np.zeros((2, 2)), y=np.array([{"a": 1}, None], dtype=object))
    with pytest.raises(UsageError, match="Python objects"):
        load_npz(path)


def test_not_an_archive_and_single_array(tmp_path: Path):
    text = tmp_path / "notes.npz"
    text.write_text("not numpy")
    with pytest.raises(UsageError, match=r"notes.npz: not a readable .npz"):
        load_npz(text)
    single = tmp_path / "one.npy"
    np.save(single, np.zeros((3, 2)))
    with pytest.raises(UsageError, match=r"one.npy: a single array"):
        load_npz(single)


def test_empty_and_non_finite(tmp_path: Path):
    path = write_npz(tmp_path / "empty.npz", np.zeros((0, 3)), np.zeros(0))
    with pytest.raises(UsageError, match="at least one sample"):
        load_npz(path)
    x = np.ones((4, 3), np.float32)
    x[1, 2] = np.nan
    x[2, 0] = np.inf
    path = write_npz(tmp_path / "nan.npz", x, np.zeros(4))
    with pytest.raises(UsageError, match="x has 2 NaN/inf values"):
        load_npz(path)


def test_more_than_100_samples_keeps_the_first_100_and_says_so(tmp_path: Path):
    x = np.arange(150 * 2, dtype=np.float32).reshape(150, 2)
    path = write_npz(tmp_path / "big.npz", x, np.arange(150))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lx, ly = load_npz(path)
    assert len(lx) == len(ly) == MAX_SAMPLES
    np.testing.assert_array_equal(lx, x[:MAX_SAMPLES])
    assert any("150 samples" in str(w.message) and "big.npz" in str(w.message) for w in caught)


# ---- conform / prepare --------------------------------------------------------------------
def test_conform_transposes_layouts_and_adds_mnist_channel():
    xk, y = synthetic("cifar10", 6, layout="keras")
    xt, yt = conform(xk, y, "cifar10", "torch")
    assert xt.shape == (6, 3, 32, 32)
    np.testing.assert_array_equal(xt, np.transpose(xk, (0, 3, 1, 2)))
    back, _ = conform(xt, yt, "cifar10", "keras")
    np.testing.assert_array_equal(back, xk)
    flat = np.zeros((4, 28, 28), np.float64)
    for layout, want in (("torch", (4, 1, 28, 28)), ("keras", (4, 28, 28, 1))):
        x, labels = conform(flat, np.array([0.0, 1.0, 2.0, 9.0]), "mnist", layout)
        assert x.shape == want and x.dtype == np.float32 and labels.dtype == np.int64


def test_conform_errors_name_shapes_labels_and_fix():
    with pytest.raises(UsageError) as err:
        conform(np.zeros((3, 5, 5)), np.zeros(3), "cifar10", "torch", source="dataset file d.npz")
    assert "d.npz" in str(err.value) and "(5, 5)" in str(err.value)
    assert "(3, 32, 32) (torch)" in str(err.value)
    with pytest.raises(UsageError, match=r"outside 0..9 \(e.g. 10\)"):
        conform(np.zeros((2, 1, 28, 28)), np.array([1, 10]), "mnist", "torch")
    with pytest.raises(UsageError, match="one-hot"):
        conform(np.zeros((2, 1, 28, 28)), np.eye(2), "mnist", "torch")
    with pytest.raises(UsageError, match="non-integral"):
        conform(np.zeros((2, 1, 28, 28)), np.array([0.5, 1.0]), "mnist", "torch")
    with pytest.raises(UsageError, match="one number per sample"):
        conform(np.zeros((2, 30, 5)), np.zeros((2, 3)), "stock", "keras")
    x, y = conform(np.zeros((2, 30, 5)), np.zeros(2), "stock", "keras")
    assert y.shape == (2, 1) and y.dtype == np.float32


def test_prepare_writes_what_the_seed_reads(tmp_path: Path):
    xk, y = synthetic("cifar10", 12, seed=9, layout="keras")
    user = write_npz(tmp_path / "user.npz", xk.astype(np.float64), y.astype(np.int32))
    out = prepare(user, "cifar10", "torch", tmp_path / "campaign" / "data.npz")
    sx, sy = seed_load_data("torch_vgg_seq", data_file=str(out))
    assert sx.shape == (12, 3, 32, 32) and sy.dtype == np.int64
    np.testing.assert_array_equal(sx, np.transpose(xk, (0, 3, 1, 2)))
    assert datasets.SHAPES["points"].torch == (64, 3)  # files keep (points, xyz) for torch too
