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
  does; a composition that pads explicitly (``0 * -inf`` on taps XLA skips) is not
  trusted on infinities.
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


# The kernels the recorded verdicts were made against. On CPUs with AVX512_VNNI or
# AVX512_BF16, TensorFlow turns its oneDNN kernels on by default and oneDNN picks its
# AVX-512 code: there torch's gelu(+inf) is NaN, TensorFlow's softmax of [NaN, 1] is
# [NaN, 0] (Eigen's is all NaN) and TensorFlow's conv drops a NaN. Those are the
# libraries' differences between their own CPU paths (a campaign on such a machine
# reports them), not a composition computing something else than its native API, so the
# workers here run the kernels every x86-64 CPU with AVX2 runs.
PORTABLE_KERNELS = {"TF_ENABLE_ONEDNN_OPTS": "0", "ONEDNN_MAX_CPU_ISA": "AVX2"}


@pytest.fixture(scope="module")
def pool() -> Iterator[object]:
    from dlfuzz.executor.pool import Pool, WorkerConfig

    with pytest.MonkeyPatch.context() as mp:
        for name, value in PORTABLE_KERNELS.items():
            mp.setenv(name, value)  # the workers inherit it
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
    verdicts = check(specs, cps, pool, seed=7, per_dtype=2)
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


def test_explicit_padding_over_infinities_keeps_a_composition_off_them(pool, specs):
    """XLA's convolution skips the taps that fall on ``SAME`` padding; torch's and TF's
    compositions of ``jax.lax.conv`` pad with zeros and compute 0 * -inf = nan there."""
    from dlfuzz.engines.api.counterparts.model import special_kinds
    from dlfuzz.engines.api.libdraw import rebuild

    rhs = np.ones((1, 1, 3), np.float64)
    rhs[0, 0, 0] = -np.inf
    values = {"lhs": np.ones((1, 1, 4), np.float64), "rhs": rhs, "window_strides": (1,),
              "padding": "SAME"}
    assert special_kinds(values) == {"-inf"}
    convs = [c for c in recorded() if c.api == "jax.lax.conv"]
    assert {c.library for c in convs} == {"torch", "tf"}
    for cp in convs:
        (res,) = pool.run([rebuild(specs[cp.api], values, [cp])])
        native, composed = (res[b].outputs[0].to_numpy() for b in ("jax", cp.library))
        # The first output's first tap lies on the padding: XLA gives 2, zeros give nan.
        assert native[0, 0, 0] == 2.0 and np.isnan(composed[0, 0, 0])
        assert "-inf" not in cp.specials, cp.evidence_dict().get("specials_disagree")
        assert not cp.applies(values)
        assert cp.applies({**values, "rhs": np.ones((1, 1, 3))})
