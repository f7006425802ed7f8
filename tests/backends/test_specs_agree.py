"""Every API of the numpy spec set runs, and agrees, on numpy, torch, jax and tf for ordinary inputs.

This is the false-positive guard of the API engine: a spec whose libraries disagree on
plain float64/int64 inputs would flood a campaign with reports that are not bugs. Each
spec gets two signatures of three value sets each (no special values), run through the
real sandboxed pool; all four libraries must return ``ok`` with the same output count,
dtypes, shapes, and values (float64 to ~1e-7, integers and booleans exactly, NaN == NaN).

A few differences are genuine library bugs that the fuzzer *should* keep finding; they
are listed in ``KNOWN_BUGS`` with what goes wrong, and tolerated here only for the
inputs that trigger them.

Compiled modes are checked on a deterministic sample of specs (torch.compile takes
seconds per signature): jax-jit, torch-compile and tf-xla must run and agree with numpy.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dlfuzz.cases import ApiCase, Outcome
from dlfuzz.engines.api.counterparts import load_counterparts
from dlfuzz.engines.api.libspecs import LibSpec, load_set
from dlfuzz.engines.api.rulegen import RuleGenerator
from dlfuzz.engines.api.values import Profile
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.specgen.numpy_like import disagreement

EAGER = ("numpy", "torch", "jax", "tf")
COMPILED = ("jax-jit", "torch-compile", "tf-xla")
SPECS = load_set("numpy")
COUNTERPARTS = load_counterparts("numpy")
SIGNATURES, VALUES = 2, 3
COMPILED_SAMPLE = 24

# (api, backend, does this case trigger it?, what the bug is)
KNOWN_BUGS: list[tuple[str, str, Callable[[ApiCase], bool], str]] = [
    ("numpy.transpose", "tf", lambda case: case.tensors[0].shape == (),
     "tnp.transpose(0-d array, axes=()) raises InvalidArgumentError (the empty "
     "permutation becomes a float64 tensor)"),
    ("numpy.linalg.pinv", "tf-xla", lambda case: True,
     "tf.linalg.pinv under XLA is ~1e-6 accurate in float64, even for cond(a) < 10"),
]


def _known(case: ApiCase, why: str) -> bool:
    return any(api == case.api and why.startswith(f"{backend}:") and hit(case)
               for api, backend, hit, _ in KNOWN_BUGS)


def _dtypes(spec: LibSpec) -> list[str]:
    wanted = [d for d in ("float64", "int64") if d in spec.dtypes]
    return wanted or [spec.dtypes[0]]


def _cases() -> list[ApiCase]:
    gen = RuleGenerator(20240601)
    cases = []
    for spec in SPECS.values():
        for dtype in _dtypes(spec):
            for _ in range(SIGNATURES):
                cases += gen.group(spec, VALUES, COUNTERPARTS[spec.api], dtype=dtype,
                                   profile=Profile())
    return cases


@pytest.fixture(scope="module")
def pool():
    with Pool([WorkerConfig(b) for b in EAGER + COMPILED]) as p:
        p.start()
        missing = [b for b in EAGER if b in p.unavailable]
        if missing:
            pytest.skip(f"backends unavailable: {', '.join(missing)}")
        yield p


@pytest.fixture(scope="module")
def eager_results(pool) -> dict[str, list[tuple[ApiCase, dict[str, Outcome]]]]:
    cases = _cases()
    results = pool.run(cases, only=EAGER)
    by_api: dict[str, list[tuple[ApiCase, dict[str, Outcome]]]] = {}
    for case, outcomes in zip(cases, results, strict=True):
        by_api.setdefault(case.api, []).append((case, outcomes))
    return by_api


@pytest.mark.parametrize("api", sorted(SPECS))
def test_libraries_agree_on_ordinary_inputs(api: str, eager_results) -> None:
    problems = []
    for case, outcomes in eager_results[api]:
        assert set(outcomes) == set(EAGER), f"{api}: ran on {sorted(outcomes)}"
        why = disagreement(outcomes)
        if why is None or _known(case, why):
            continue
        problems.append(f"{[(t.dtype, t.shape) for t in case.tensors]} {case.params}: {why}")
    assert not problems, f"{api}:\n" + "\n".join(problems[:5])


def _sample() -> list[str]:
    names = sorted(SPECS)
    step = max(1, len(names) // COMPILED_SAMPLE)
    return names[::step][:COMPILED_SAMPLE]


def test_compiled_modes_run_a_sample_of_specs(pool) -> None:
    missing = [b for b in COMPILED if b in pool.unavailable]
    if missing:
        pytest.skip(f"compiled backends unavailable: {', '.join(missing)}")
    gen = RuleGenerator(7)
    cases = []
    for api in _sample():
        spec = SPECS[api]
        cases += gen.group(spec, 1, COUNTERPARTS[api], dtype=_dtypes(spec)[0],
                           profile=Profile())
    results = pool.run(cases, only=("numpy",) + COMPILED)
    problems = []
    for case, outcomes in zip(cases, results, strict=True):
        for backend in COMPILED:
            if backend in dict(SPECS[case.api].unsupported):
                continue  # a documented limitation (tf-xla has no kernel for det)
            why = disagreement({"numpy": outcomes["numpy"], backend: outcomes[backend]})
            if why and not _known(case, why):
                problems.append(f"{case.api} {[t.shape for t in case.tensors]} "
                                f"{case.params}: {why}")
    assert not problems, "\n".join(problems)
