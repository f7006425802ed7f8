"""Every dlfuzz-written counterpart against its native API on special values, for real.

The property: on inputs holding NaN, +inf, -inf, -0.0 or a large finite value, a
composition that may judge such inputs (its recorded ``specials``) computes what the
native API computes (same status, structure, NaN/Inf places and signs, finite values
within the dtype's tolerance), in float32 and float64. The counterpart files record which
kinds each composition was found right on (``python -m dlfuzz.specgen.counterparts
specials``); ``Counterpart.applies`` keeps it off every other kind.

* Every composition registered with ``@composes`` and accepted into a counterpart file
  must carry the check's verdict: a new one that was never checked fails here.
* The check is re-run on the installed torch, TensorFlow and JAX (other inputs than the
  recorded run: another seed) for every recorded composition: a kind recorded as trusted
  that disagrees now fails here, with the disagreement.
* The fixed ones stay fixed: ``hardshrink`` and ``softshrink`` propagate NaN as torch
  does; a composition that pads explicitly (``0 * inf``) is not trusted on
  infinities.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from dlfuzz.engines.api.counterparts.model import DATA_DIR as COUNTERPARTS_DIR
from dlfuzz.engines.api.counterparts.model import LIBRARIES, Counterpart, load_file

pytest.importorskip("torch")
pytest.importorskip("tensorflow")
pytest.importorskip("jax")


def recorded() -> list[Counterpart]:
    """The dlfuzz-written counterparts of the torch, tf and jax files."""
    return [c for lib in LIBRARIES for c in load_file(COUNTERPARTS_DIR / f"{lib}.json").counterparts
            if c.dlfuzz_written]


def registered() -> set[tuple[str, str]]:
    from dlfuzz.engines.api.counterparts import (  # noqa: F401 - their registrations
        compose_jax,
        compose_jax_tf,
        compose_tf,
        compose_torch,
    )
    from dlfuzz.engines.api.counterparts.compose_common import REGISTRY

    return {(c.api, c.target) for c in REGISTRY}


@pytest.fixture(scope="module")
def pool() -> Iterator[object]:
    from dlfuzz.executor.pool import Pool, WorkerConfig

    with Pool([WorkerConfig(lib, case_timeout_s=30.0, start_timeout_s=180.0)
               for lib in LIBRARIES]) as p:
        p.start()
        assert not p.unavailable, p.unavailable
        yield p


@pytest.fixture(scope="module")
def specs() -> dict:
    from dlfuzz.engines.api.libspecs import load_library

    return {api: s for lib in LIBRARIES for api, s in load_library(lib).items()}


def test_every_recorded_composition_carries_the_special_value_check():
    cps = recorded()
    assert len(cps) >= 100
    compositions = {(c.api, c.target) for c in cps if c.kind == "composition"}
    assert compositions <= registered()  # the files name only functions that exist
    unchecked = [f"{c.api} <- {c.target}" for c in cps if not c.specials and not (
                 {"specials_disagree", "specials_unchecked"} & set(c.evidence_dict()))]
    assert not unchecked, ("never checked on special values; run `python -m "
                           "dlfuzz.specgen.counterparts specials`: " + ", ".join(unchecked))


def test_recorded_trust_holds_against_the_native_apis(pool, specs):
    from dlfuzz.specgen.counterparts.specials import check

    cps = [c for c in recorded() if c.specials]
    verdicts = check(specs, cps, pool, seed=1, per_dtype=2)
    broken = {f"{v.candidate.api} <- {v.candidate.target}":
              {k: v.disagree[k] for k in v.candidate.specials if k in v.disagree}
              for v in verdicts}
    broken = {k: v for k, v in broken.items() if v}
    assert not broken, broken
    tested = sum(1 for v in verdicts if v.tested)
    assert tested >= 0.8 * len(cps)  # most were reached by inputs the API accepts


@pytest.mark.parametrize("target", ["compose_jax.torch_hardshrink",
                                    "compose_tf.torch_hardshrink",
                                    "compose_jax.torch_softshrink"])
def test_shrink_compositions_propagate_nan_as_torch_does(pool, specs, target):
    from dlfuzz.specgen.counterparts.specials import check

    (cp,) = [c for c in recorded() if c.target.endswith(target)]
    assert "nan" in cp.specials
    (v,) = check(specs, [cp], pool, seed=2, per_dtype=2)
    assert v.tested.get("nan") and "nan" not in v.disagree, v.disagree


def test_a_composition_wrong_on_infinities_is_not_trusted_there():
    """torch skips padded taps; a TF or JAX composition of torch's conv2d pads with zeros
    and computes 0 * inf = nan there."""
    from dlfuzz.engines.api.counterparts.model import special_kinds

    convs = [c for c in recorded() if c.api == "torch.nn.functional.conv2d"]
    assert convs
    weights = {"input": np.ones((1, 1, 3, 3), np.float32),
               "weight": np.full((1, 1, 3, 3), np.inf, np.float32), "padding": 1}
    assert special_kinds(weights) == {"inf"}
    for cp in convs:
        assert "inf" not in cp.specials, cp.evidence_dict().get("specials_disagree")
        assert not cp.applies(weights)
        assert cp.applies({**weights, "weight": np.ones((1, 1, 3, 3), np.float32)})
