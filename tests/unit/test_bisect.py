"""Version bisection's pure parts: the search on a fake probe, registry listings, the
range selection, the verdict cache and the torch wheel check (``triage.bisect``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlfuzz.errors import UsageError
from dlfuzz.libraries import get
from dlfuzz.triage import bisect as bs

RELEASES = [f"1.{i}.0" for i in range(12)]  # 1.0.0 .. 1.11.0


def fake(bad_from: str | None = None, good_from: str | None = None,
         skips: tuple[str, ...] = ()) -> tuple[list[str], object]:
    """A probe judging by index; records which versions it was asked about."""
    asked: list[str] = []

    def probe_at(version: str) -> bs.Probe:
        asked.append(version)
        if version in skips:
            return bs.Probe(version, bs.SKIP, 0.0, "no verdict")
        i = RELEASES.index(version)
        if bad_from is not None:
            bad = i >= RELEASES.index(bad_from)
        else:
            bad = i < RELEASES.index(good_from or RELEASES[-1])
        return bs.Probe(version, bs.BAD if bad else bs.GOOD, 0.1, "x")
    return asked, probe_at


@pytest.mark.parametrize("first_bad", RELEASES[1:])
def test_search_finds_every_regression_in_few_probes(first_bad: str) -> None:
    asked, probe_at = fake(bad_from=first_bad)
    out = bs.search(RELEASES, probe_at)  # type: ignore[arg-type]
    assert out.direction == "regression"
    assert out.first_bad == first_bad
    assert out.last_good == RELEASES[RELEASES.index(first_bad) - 1]
    assert out.summary().startswith(f"first bad {first_bad}, last good ")
    assert asked[:2] == [RELEASES[0], RELEASES[-1]]  # both ends first
    assert len(asked) <= 2 + 4  # ceil(log2(10 inner releases)) after the ends
    assert len(set(asked)) == len(asked)  # no release probed twice


def test_search_finds_a_fix() -> None:
    _, probe_at = fake(good_from="1.7.0")
    out = bs.search(RELEASES, probe_at)  # type: ignore[arg-type]
    assert (out.direction, out.last_bad, out.first_good) == ("fix", "1.6.0", "1.7.0")
    assert out.first_bad is None and out.last_good is None
    assert out.as_json()["first_good"] == "1.7.0"


def test_a_release_without_verdict_is_skipped_and_its_neighbour_tried() -> None:
    asked, probe_at = fake(bad_from="1.8.0", skips=("1.5.0", "1.6.0"))
    out = bs.search(RELEASES, probe_at)  # type: ignore[arg-type]
    assert (out.last_good, out.first_bad) == ("1.7.0", "1.8.0")
    assert out.skipped == ()
    assert "1.5.0" in asked  # the midpoint was tried, gave nothing, a neighbour came next


def test_skips_at_the_change_are_reported() -> None:
    _, probe_at = fake(bad_from="1.6.0", skips=("1.5.0", "1.6.0"))
    out = bs.search(RELEASES, probe_at)  # type: ignore[arg-type]
    assert (out.last_good, out.first_bad) == ("1.4.0", "1.7.0")
    assert out.skipped == ("1.5.0", "1.6.0")
    assert "gave no verdict: 1.5.0, 1.6.0" in out.summary()


def test_ends_with_the_same_verdict_or_none_are_refused() -> None:
    _, probe_at = fake(bad_from="1.0.0")
    with pytest.raises(bs.NoTransition, match="present in both 1.0.0 and 1.11.0") as info:
        bs.search(RELEASES, probe_at)  # type: ignore[arg-type]
    assert [p.version for p in info.value.probes] == ["1.0.0", "1.11.0"]
    _, probe_at = fake(bad_from="1.3.0", skips=("1.11.0",))
    with pytest.raises(bs.NoTransition, match="no verdict on 1.11.0"):
        bs.search(RELEASES, probe_at)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="at least two"):
        bs.search(["1.0.0"], probe_at)  # type: ignore[arg-type]


def test_pypi_listing_keeps_installable_final_releases_in_version_order() -> None:
    data = {"releases": {
        "2.9.0": [{"yanked": False}], "2.10.0": [{"yanked": False}],
        "2.11.0rc1": [{"yanked": False}], "2.8.1": [{"yanked": True}, {"yanked": True}],
        "2.8.0": [{"yanked": True}, {}], "2.7.0": [], "not-a-version": [{}]}}
    assert bs.parse_pypi_json(data) == ["2.8.0", "2.9.0", "2.10.0"]
    assert bs.parse_pypi_json(data, pre=True) == ["2.8.0", "2.9.0", "2.10.0", "2.11.0rc1"]


def test_npm_listing() -> None:
    text = '["4.9.0", "4.10.0", "4.2.0", "4.11.0-rc.1", "0.6.1"]'
    assert bs.parse_npm_versions(text) == ["0.6.1", "4.2.0", "4.9.0", "4.10.0"]
    assert bs.parse_npm_versions('"4.1.0"') == ["4.1.0"]


def test_version_selection() -> None:
    listed = ["4.0.0", "4.1.0", "4.2.0", "4.10.0", "4.22.0"]
    assert bs.select_versions("4.1.0..4.10.0", lambda: listed) == ["4.1.0", "4.2.0", "4.10.0"]
    assert bs.select_versions("4.22.0,4.1.0,4.10.0", lambda: []) == ["4.1.0", "4.10.0",
                                                                        "4.22.0"]
    with pytest.raises(UsageError, match="release 4.3.0 is not listed"):
        bs.select_versions("4.1.0..4.3.0", lambda: listed)
    with pytest.raises(UsageError, match="not a release number"):
        bs.select_versions("4.1.0..latest", lambda: listed)
    with pytest.raises(UsageError, match="at least two"):
        bs.select_versions("4.1.0", lambda: listed)


def test_verdict_cache_keeps_verdicts_not_skips(tmp_path: Path) -> None:
    cache = bs.VerdictCache(tmp_path, "k")
    cache.put(bs.Probe("1.0.0", bs.BAD, 1.234, "BUG present: x"))
    cache.put(bs.Probe("1.1.0", bs.SKIP, 0.5, "no verdict"))
    again = bs.VerdictCache(tmp_path, "k")
    assert again.get("1.0.0") == bs.Probe("1.0.0", bs.BAD, 1.23, "BUG present: x", cached=True)
    assert again.get("1.1.0") is None
    assert bs.VerdictCache(tmp_path, "other").get("1.0.0") is None


def test_torch_needs_local_cpu_wheels(tmp_path: Path) -> None:
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert bs.local_torch_versions([tmp_path]) == ["2.13.0"]
    bs.check_torch(["2.13.0"], [tmp_path])  # available: no error
    with pytest.raises(UsageError, match=r"no local CPU wheel for release\(s\) 2\.9\.0.*"
                                         r"available there: 2\.13\.0"):
        bs.check_torch(["2.9.0", "2.13.0"], [tmp_path])


def test_python_release_requirements() -> None:
    assert bs.python_requirements(get("jax"), "0.4.30") == ["jax==0.4.30", "jaxlib==0.4.30",
                                                            "numpy"]
    assert bs.python_requirements(get("onnxruntime"), "1.20.0") == ["onnxruntime==1.20.0",
                                                                    "numpy"]
