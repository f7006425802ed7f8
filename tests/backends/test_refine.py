"""refine.py against real torch in the sandboxed pool: specs that know only structures
learn their dependency constraints from torch's own error messages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dlfuzz.engines.api.constraints import parse
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.specgen.refine import refine, valid_rate


def T(name: str, **kw: Any) -> LibParam:  # noqa: N802 - reads like a type
    return LibParam(name, ("tensor",), **kw)


SPECS = [
    LibSpec("torch", "torch.mm", (T("input"), T("mat2"))),
    LibSpec("torch", "torch.linalg.inv", (T("A"),)),
    LibSpec("torch", "torch.cumsum", (T("input"), LibParam("dim", ("int",), range=(-3, 3)))),
    # a keyword torch does not have: no input can ever run
    LibSpec("torch", "torch.abs", (T("input"), LibParam("bogus", ("int",)))),
    LibSpec("torch", "torch.nn.functional.relu", (T("input"),), skip="listed only"),
]


@pytest.fixture(scope="module")
def pool() -> Iterator[Any]:
    pytest.importorskip("torch")
    from dlfuzz.executor.pool import Pool, WorkerConfig

    with Pool([WorkerConfig("torch")]) as p:
        p.start()
        yield p


@pytest.fixture(scope="module")
def refined(pool: Any) -> tuple[list[LibSpec], Any]:
    return refine(SPECS, "torch", rounds=3, per_api=24, seed=1, pool=pool)


def test_valid_rate_rises_and_constraints_come_from_errors(refined: Any) -> None:
    specs, report = refined
    by_api = {s.api: s for s in specs}
    for api in ("torch.mm", "torch.linalg.inv", "torch.cumsum"):
        rec = report.apis[api]
        assert rec.after > rec.before, (api, rec.before, rec.after, rec.errors.most_common(3))
        assert rec.after >= 0.8, (api, rec.after, rec.errors.most_common(3))
        learned = [c for c in by_api[api].constraints if c.source == "error"]
        assert learned and {c.text for c in learned} == set(rec.added)
        for c in learned:
            parse(c.text, by_api[api].names)
    mm = {c.text for c in by_api["torch.mm"].constraints}
    assert "input.shape[-1] == mat2.shape[-2]" in mm


def test_apis_that_never_run_are_skipped_with_the_reason(refined: Any) -> None:
    specs, report = refined
    by_api = {s.api: s for s in specs}
    assert by_api["torch.abs"].skip.startswith("never ran: TypeError")
    assert "abs() takes 1 positional argument" in by_api["torch.abs"].skip
    assert report.apis["torch.abs"].after == 0.0


def test_skipped_specs_are_left_alone_and_order_kept(refined: Any) -> None:
    specs, report = refined
    assert [s.api for s in specs] == [s.api for s in SPECS]
    assert specs[-1] is SPECS[-1] and "torch.nn.functional.relu" not in report.apis
    assert "valid" in report.summary()


def test_valid_rate_measures_refined_specs(refined: Any, pool: Any) -> None:
    specs, _ = refined
    before = valid_rate(SPECS[:2], "torch", n=20, seed=7, pool=pool)
    after = valid_rate(specs[:2], "torch", n=20, seed=7, pool=pool)
    assert set(after) == {"torch.mm", "torch.linalg.inv"}
    assert sum(after.values()) > sum(before.values())


def test_dtype_messages_become_dtype_lists() -> None:
    from dlfuzz.specgen.refine import _dtype_list

    spec = LibSpec("torch", "torch.nanmean", (T("input", dtypes=("complex64", "complex128")),
                                              T("other")))
    # the message says no complex: the list keeps nothing, so the generator's default
    # dtypes for tensors without dtype information take over
    assert _dtype_list(spec, "input.dtype not in ('complex64', 'complex128')") == (
        "input", ("float32", "float64"))
    assert _dtype_list(spec, "other.dtype == 'float64'") == ("other", ("float64",))
    assert _dtype_list(spec, "other.dtype == input.dtype") is None


def test_narrowing_needs_evidence_beyond_bad_luck() -> None:
    from dlfuzz.specgen.refine import _narrow

    spec = LibSpec("torch", "torch.x", (T("input"),))
    # float64 failed 3 times while float32 passed 1 time in 10: could be luck, kept
    kept, dropped = _narrow(spec, {"input": {"float32": [1, 9], "float64": [0, 3]}})
    assert dropped == {} and kept.params[0].dtypes == ()
    # float64 failed 6 times while float32 always passed: dropped
    narrowed, dropped = _narrow(spec, {"input": {"float32": [10, 0], "float64": [0, 6]}})
    assert dropped == {"input": ["float64"]} and narrowed.params[0].dtypes == ("float32",)
