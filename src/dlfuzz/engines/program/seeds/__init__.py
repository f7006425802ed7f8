"""Built-in seed programs of the program-level engine (MoCo) and their registry.

Each seed is a standalone Python file in this package that builds one model with a
library's public API, trains it for one epoch on at most 100 samples and evaluates it,
ending with a module-level ``RESULT``. The files are data as much as code: the engine reads
their text (``seed_source``), cuts it into a template and code blocks, and every program
it writes is again such a file. They are never imported by dlfuzz (importing one would run
it); they ship with the package because setuptools packages every ``.py`` file of a
package, and pytest does not collect them (no ``test_`` prefix, outside ``testpaths``).

The conventions the seeds follow (header constants ``SEED``/``N_SAMPLES``/``BATCH``/
``DATA_FILE``/``NUM_CLASSES``, an inline ``load_data``, one hidden layer per statement
between a template input layer and a flatten + classifier head, deterministic weights,
``RESULT = {"loss", "eval_loss", "outputs"}``) are what ``template.py`` relies on to cut
them. Names not prefixed ``nn.``/``layers.`` in a layer list (``BasicBlock``, ``Fire``,
``Inception``, ``TNet``, ``SequenceOutput``, ``LastStep``) are small classes defined in the
seed itself: composite blocks or glue, used as one layer each.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Literal

from dlfuzz.errors import UsageError

Library = Literal["torch", "keras"]
Style = Literal["sequential", "module", "functional"]
Dataset = Literal["mnist", "cifar10", "imagenet", "stock", "points"]


@dataclass(frozen=True)
class SeedInfo:
    """What the engine needs to know about a seed without reading it.

    ``dataset`` names the entry of ``datasets.SHAPES`` the seed's ``load_data`` produces
    (and that a user ``.npz`` placed into the seed through ``DATA_FILE`` must match);
    ``file`` is the file name inside this package.
    """

    name: str
    library: Library
    style: Style
    dataset: Dataset
    file: str


# (network, dataset): every network exists as torch sequential, torch module and Keras.
_NETWORKS: tuple[tuple[str, Dataset], ...] = (
    ("lenet", "mnist"),
    ("alexnet", "imagenet"),
    ("vgg", "cifar10"),
    ("resnet18", "cifar10"),
    ("mobilenet", "cifar10"),
    ("squeezenet", "cifar10"),
    ("googlenet", "cifar10"),
    ("pointnet", "points"),
    ("lstm", "stock"),
)


def _table() -> dict[str, SeedInfo]:
    table: dict[str, SeedInfo] = {}
    for network, dataset in _NETWORKS:
        for name, library, style in (
            (f"torch_{network}_seq", "torch", "sequential"),
            (f"torch_{network}_module", "torch", "module"),
            (f"keras_{network}", "keras", "functional"),
        ):
            table[name] = SeedInfo(name, library, style, dataset, f"{name}.py")  # type: ignore[arg-type]
    return table


SEEDS: dict[str, SeedInfo] = _table()


def seed_names(library: str | None = None) -> list[str]:
    """Names of the built-in seeds, all of them or those of one library, sorted."""
    if library is not None and library not in ("torch", "keras"):
        raise UsageError(f"seed library {library!r}: unknown; give 'torch' or 'keras'")
    return sorted(n for n, info in SEEDS.items() if library is None or info.library == library)


def seed_source(name: str) -> str:
    """The text of a built-in seed, read from the installed package (works from a wheel)."""
    info = SEEDS.get(name)
    if info is None:
        raise UsageError(f"seed program {name!r}: unknown; built-in seeds are "
                         f"{', '.join(sorted(SEEDS))}")
    return resources.files(__name__).joinpath(info.file).read_text(encoding="utf-8")
