"""Datasets of the program-level engine: synthetic arrays and user ``.npz`` files.

The seed programs carry their own ``load_data`` (they are standalone and must not import
dlfuzz): synthetic arrays from ``np.random.default_rng(SEED)``, or ``np.load(DATA_FILE)``.
This module is the host side of the same contract. ``synthetic`` produces exactly what a
seed's ``load_data`` produces, so the engine can reason about a seed's input without
running it. ``load_npz`` + ``conform`` check a user's dataset *before* it is placed into
thousands of generated programs: a bad file there would make every program fail and every
failure look like a library bug, so problems are reported once, as a ``UsageError`` that
names the file, what is wrong and the fix. ``write_npz`` writes the checked arrays in the
layout the seeds ``np.load``.

Decision on size: programs train on at most ``MAX_SAMPLES`` (100) samples, as in MoCo. A
larger file is not an error: the first 100 samples are kept (the same ones a seed keeps
with ``[:N_SAMPLES]``, so the host checks exactly what the programs will train on) and a
``UserWarning`` says so, naming the file and both counts.
"""

from __future__ import annotations

import hashlib
import re
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from dlfuzz.errors import UsageError

MAX_SAMPLES = 100
Layout = Literal["torch", "keras"]
EXPECTED_KEYS = ("x", "y")


@dataclass(frozen=True)
class DatasetShape:
    """One sample's input shape per library layout, and what the target is.

    ``target`` is ``"classes"`` (integer labels in ``[0, classes)``, cross-entropy) or
    ``"regression"`` (one float per sample, mean squared error; ``classes`` is then the
    output width, 1).
    """

    torch: tuple[int, ...]
    keras: tuple[int, ...]
    target: Literal["classes", "regression"]
    classes: int
    note: str = ""

    def sample_shape(self, layout: Layout) -> tuple[int, ...]:
        return self.torch if layout == "torch" else self.keras


SHAPES: dict[str, DatasetShape] = {
    "mnist": DatasetShape((1, 28, 28), (28, 28, 1), "classes", 10, "MNIST-shaped images"),
    "cifar10": DatasetShape((3, 32, 32), (32, 32, 3), "classes", 10, "CIFAR-10-shaped images"),
    # ImageNet crops scaled down to 64x64 (and 100 classes) so programs stay fast.
    "imagenet": DatasetShape((3, 64, 64), (64, 64, 3), "classes", 100,
                             "ImageNet-like crops, scaled down to 64x64"),
    # Point clouds are (points, xyz) in both files; torch seeds transpose after loading.
    "points": DatasetShape((64, 3), (64, 3), "classes", 10, "point clouds of 64 points"),
    "stock": DatasetShape((30, 5), (30, 5), "regression", 1,
                          "30-day windows of open/high/low/close/volume"),
}


def _shape(name: str) -> DatasetShape:
    if name not in SHAPES:
        raise UsageError(f"dataset {name!r}: unknown; known datasets are {', '.join(SHAPES)}")
    return SHAPES[name]


def _layout(layout: str) -> Layout:
    if layout not in ("torch", "keras"):
        raise UsageError(f"dataset layout {layout!r}: unknown; give 'torch' or 'keras'")
    return layout  # type: ignore[return-value]


def synthetic(name: str, n: int = MAX_SAMPLES, seed: int = 0,
              layout: str = "torch") -> tuple[np.ndarray, np.ndarray]:
    """The arrays a seed's ``load_data`` makes with ``N_SAMPLES = n`` and ``SEED = seed``.

    Same generator, same draws, same order as the seed files, so the two stay in step
    (a unit test compares them). Labels are int64; the stock target is float32 (n, 1).
    """
    spec, layout = _shape(name), _layout(layout)
    if n < 1:
        raise UsageError(f"synthetic dataset {name}: n={n}; give at least 1 sample")
    rng = np.random.default_rng(seed)
    if spec.target == "regression":
        return _stock(rng, n)
    x = rng.standard_normal((n, *spec.sample_shape(layout))).astype(np.float32)
    y = rng.integers(0, spec.classes, size=n).astype(np.int64)
    return x, y


def _stock(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Random-walk price windows: x (n, 30, 5), y the close of the day after (n, 1)."""
    close = np.cumsum(rng.normal(0.0, 0.02, size=(n, 31)), axis=1)
    spread = np.abs(rng.normal(0.0, 0.01, size=(n, 30)))
    volume = rng.lognormal(0.0, 0.3, size=(n, 30)) - 1.0
    opening = close[:, :30] + rng.normal(0.0, 0.005, size=(n, 30))
    x = np.stack([opening, close[:, :30] + spread, close[:, :30] - spread, close[:, :30], volume],
                 axis=-1)
    return x.astype(np.float32), close[:, 30:].astype(np.float32)


def load_npz(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Read a user dataset: a ``.npz`` with arrays ``x`` (inputs) and ``y`` (targets).

    Checks what holds for every dataset (file, keys, equal lengths, numbers, finite
    values) and keeps at most ``MAX_SAMPLES`` samples; the shape check against a seed's
    dataset is ``conform``. Pickled objects are never loaded.
    """
    file = Path(path)
    fix = f"write it with numpy.savez({str(file)!r}, x=inputs, y=targets)"
    if not file.is_file():
        raise UsageError(f"dataset file {file}: no such file; {fix}")
    try:
        archive = np.load(file, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise UsageError(f"dataset file {file}: not a readable .npz archive ({exc}); {fix}") from exc
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise UsageError(f"dataset file {file}: a single array (.npy), not a .npz archive with "
                         f"arrays x and y; {fix}")
    with archive:
        present = sorted(archive.files)
        missing = [key for key in EXPECTED_KEYS if key not in present]
        if missing:
            raise UsageError(f"dataset file {file}: missing {', '.join(missing)}; it has keys "
                             f"{present or 'none'}, expected keys x (inputs) and y (targets); "
                             f"{fix}")
        try:
            x, y = archive["x"], archive["y"]
        except ValueError as exc:  # object arrays need pickle, which is refused
            raise UsageError(f"dataset file {file}: x or y holds Python objects ({exc}); store "
                             f"numeric arrays") from exc
    for key, array in (("x", x), ("y", y)):
        if array.dtype.kind not in "iuf":
            raise UsageError(f"dataset file {file}: {key} has dtype {array.dtype}; it must hold "
                             f"integers or floats (convert with {key}.astype('float32'))")
        if array.ndim == 0 or len(array) == 0:
            raise UsageError(f"dataset file {file}: {key} has shape {array.shape}; it needs a "
                             f"first (sample) axis with at least one sample")
    if len(x) != len(y):
        raise UsageError(f"dataset file {file}: x has {len(x)} samples but y has {len(y)}; "
                         f"give one target per input sample")
    bad = int(np.size(x) - np.count_nonzero(np.isfinite(x)))
    if bad:
        raise UsageError(f"dataset file {file}: x has {bad} NaN/inf values; a non-finite "
                         f"input makes every program's loss non-finite; clean or drop them")
    if len(x) > MAX_SAMPLES:
        warnings.warn(f"dataset file {file}: {len(x)} samples; programs train on the first "
                      f"{MAX_SAMPLES}", UserWarning, stacklevel=2)
        x, y = x[:MAX_SAMPLES], y[:MAX_SAMPLES]
    return x, y


def conform(x: np.ndarray, y: np.ndarray, dataset: str, layout: str,
            source: str = "dataset") -> tuple[np.ndarray, np.ndarray]:
    """Arrays ready for a seed of ``dataset`` in ``layout``, or a ``UsageError``.

    Accepted inputs: samples already in the layout; images in the other layout
    (channels-first <-> channels-last, transposed here); MNIST without its channel axis.
    Targets: integer labels in ``[0, classes)`` (integral floats are accepted) or, for
    regression, one number per sample. ``source`` names the file in messages.
    """
    spec, layout = _shape(dataset), _layout(layout)
    want = spec.sample_shape(layout)
    got = tuple(x.shape[1:])
    if got != want:
        other = spec.keras if layout == "torch" else spec.torch
        if got == other and len(want) == 3:
            axes = (0, 3, 1, 2) if layout == "torch" else (0, 2, 3, 1)
            x = np.ascontiguousarray(np.transpose(x, axes))
        elif got == tuple(d for d in want if d != 1) and 1 in want:
            x = x.reshape((len(x), *want))
        else:
            raise UsageError(f"{source}: x has samples of shape {got}; the {dataset} seeds "
                             f"({spec.note}) expect {spec.torch} (torch) or {spec.keras} (keras)")
    x = x.astype(np.float32)
    if spec.target == "regression":
        if y.size != len(y):
            raise UsageError(f"{source}: y has shape {y.shape}; the {dataset} seeds regress one "
                             f"number per sample, give y of shape ({len(y)},) or ({len(y)}, 1)")
        return x, y.astype(np.float32).reshape(-1, 1)
    if y.ndim != 1:
        raise UsageError(f"{source}: y has shape {y.shape}; give integer class labels of shape "
                         f"({len(y)},), not one-hot rows (use y.argmax(axis=1))")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y) & (y == np.round(y))):
        raise UsageError(f"{source}: y holds non-integral floats; give class labels 0.."
                         f"{spec.classes - 1}")
    labels = y.astype(np.int64)
    out = labels[(labels < 0) | (labels >= spec.classes)]
    if out.size:
        raise UsageError(f"{source}: y has labels outside 0..{spec.classes - 1} (e.g. "
                         f"{int(out[0])}); the {dataset} seeds have {spec.classes} classes, "
                         f"remap the labels")
    return x, labels


def write_npz(path: str | Path, x: np.ndarray, y: np.ndarray) -> Path:
    """Write ``x``/``y`` as the ``.npz`` a seed's ``DATA_FILE`` reads; returns the path."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("wb") as handle:  # a file object keeps numpy from appending ".npz"
        np.savez(handle, x=np.asarray(x), y=np.asarray(y))
    return file


def prepare(path: str | Path, dataset: str, layout: str, out: str | Path) -> Path:
    """Load, check and conform a user file, and write it where programs will read it."""
    x, y = load_npz(path)
    x, y = conform(x, y, dataset, layout, source=f"dataset file {path}")
    return write_npz(out, x, y)


_DATA_LINE = re.compile(r"^DATA_FILE = None$", re.M)


def data_dir() -> Path:
    """Where conformed copies of user datasets go (``$DLFUZZ_CACHE`` or ~/.cache/dlfuzz)."""
    from dlfuzz.cachedir import dlfuzz_cache

    return dlfuzz_cache() / "program-data"


def use_dataset(seed: str, source: str, path: str | Path) -> str:
    """The seed's source reading the user's ``.npz`` file instead of synthetic data.

    The file is checked and conformed to the seed's dataset shape and layout (a
    ``UsageError`` names the file, the shapes and the fix), written once as a copy keyed
    by its content, and the seed's ``DATA_FILE = None`` line set to that copy's absolute
    path: every generated program, and so every reproducer, reads the same file.
    """
    from dlfuzz.engines.program.seeds import SEEDS

    info = SEEDS.get(seed)
    if info is None or not _DATA_LINE.search(source):
        raise UsageError(f"--program-data {path}: seed {seed!r} is not a built-in seed with a "
                         "`DATA_FILE = None` line; set DATA_FILE in your seed file instead")
    layout = "torch" if info.library == "torch" else "keras"
    x, y = load_npz(path)
    x, y = conform(x, y, info.dataset, layout, source=f"dataset file {path}")
    digest = hashlib.blake2b(x.tobytes() + y.tobytes(), digest_size=8).hexdigest()
    out = data_dir() / f"{info.dataset}-{layout}-{digest}.npz"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        write_npz(out, x, y)
    return _DATA_LINE.sub(f"DATA_FILE = {str(out.resolve())!r}", source, count=1)
