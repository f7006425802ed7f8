"""The API engine's power schedule (``engines/api/schedule.py``) and where its per-API
stats are shown (``findings --stats``, the report, a resumed campaign)."""

from __future__ import annotations

import json

import pytest

from dlfuzz.cases import Outcome
from dlfuzz.cli.main import main
from dlfuzz.engines.api.engine import ApiEngine
from dlfuzz.engines.api.libspecs import load_library
from dlfuzz.engines.api.schedule import (
    COST_SCALE,
    MIN_WEIGHT,
    ApiStats,
    estimated_costs,
    message_key,
    violate_share,
)
from dlfuzz.engines.api.signature_costs import GROUP_MAX
from dlfuzz.report.html import write_report
from dlfuzz.store.db import Store


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return int(exc.value.code or 0)


def _fed(keys_per_case: list[set[str]], ok: bool = True) -> ApiStats:
    s = ApiStats()
    for keys in keys_per_case:
        s.tried += 1
        s.ran_somewhere += ok
        s.novel += s.observe(keys)
    return s


def test_an_api_still_showing_new_behaviour_gets_more_energy() -> None:
    settled = _fed([{"torch:ok"}] * 40)
    lively = _fed([{"torch:ok", f"torch:exception:RuntimeError:m{i}"} for i in range(40)])
    assert lively.yield_rate > 0.9 and settled.yield_rate < 0.1
    assert lively.weight > 3 * settled.weight
    fresh = ApiStats()
    assert 0.5 * settled.weight < fresh.weight < lively.weight  # fresh ones get tried


def test_every_api_keeps_a_floor_and_hangs_halve_the_energy() -> None:
    dead = _fed([{"torch:exception:TypeError:x"}] * 50, ok=False)
    assert dead.weight >= MIN_WEIGHT * MIN_WEIGHT
    hanging = _fed([{"torch:ok"}] * 10)
    before = hanging.weight
    hanging.costly = 2
    assert abs(hanging.weight - before / 4) < 1e-9
    hanging.costly = 50  # capped: a crashing API is still tried now and then
    assert hanging.weight > 0


def test_an_all_rejected_edge_group_does_not_sink_the_api() -> None:
    """An API's first group is an edge one; all 16 of its cases rejected (an axis at
    INT_MAX in each) must leave the API about where a fresh one is, not at a tenth of a
    healthy API's energy (three APIs with known bugs got no second group that way)."""
    rejected = _fed([{"tf:exception:InvalidArgumentError:axis"}] * 16, ok=False)
    edge_first = _fed([{"tf:exception:InvalidArgumentError:axis"}] * 16, ok=False)
    edge_first.edge_tried = 16
    fresh = ApiStats()
    assert edge_first.valid_rate == fresh.valid_rate
    assert edge_first.weight > 0.5 * fresh.weight
    assert rejected.weight < 0.25 * fresh.weight  # ordinary inputs all rejected: it sinks
    edge_first.tried += 10
    edge_first.ran_somewhere += 10  # then ordinary inputs run
    assert edge_first.valid_rate > 0.9


def test_the_engine_counts_edge_cases_apart_and_a_resume_keeps_them() -> None:
    name = "torch.cumsum"
    specs = {name: load_library("torch")[name]}
    engine = ApiEngine(seed=1, libraries=("torch",), specs=specs, counterparts={},
                       violate_share=0.0, edge_share=1.0)
    # Every group an edge one; a scalar pushed outside a range its library checks
    # becomes a violate-mode member and one breaking a relation an "outside" one
    # (``_judged``): the edge members alone are fed back here.
    proposed = engine.propose(64)
    cases = [c for c in proposed if c.expect.startswith("edge:")][:8]
    assert len(cases) == 8 and all(c.expect.startswith(("edge:", "invalid:", "outside:"))
                                   for c in proposed), [c.expect for c in proposed]
    for case in cases:
        engine.feedback(case, {"torch": Outcome("torch", "exception", exc_type="IndexError",
                                                message="Dimension out of range")}, [])
    row = engine.api_stats()[name]
    assert row["tried"] == 8 and row["edge_tried"] == 8 and row["valid_rate"] == 0.5
    again = ApiEngine(seed=1, libraries=("torch",), specs=specs, counterparts={},
                      violate_share=0.0, edge_share=1.0)
    again.load_api_stats({name: row})
    assert again.stats[name].edge_tried == 8 and again.stats[name].valid_rate == 0.5


def test_a_slow_api_gets_less_energy_than_a_fast_one() -> None:
    fast, slow = _fed([{"torch:ok"}] * 20), _fed([{"torch:ok"}] * 20)
    fast.seconds, slow.seconds = 20 * 0.001, 20 * COST_SCALE
    assert abs(slow.weight - fast.weight / 2) < 0.05 * fast.weight
    slow.seconds = 20 * 1.0  # a second a case: a fiftieth
    assert slow.weight < fast.weight / 40


def _ran(cases: int, seconds: float) -> ApiStats:
    s = _fed([{"torch:ok"}] * cases)
    s.seconds = seconds
    return s


def test_an_api_not_tried_yet_is_charged_what_its_module_or_library_costs() -> None:
    """Before its first case an API is charged the median cost of the APIs tried in its
    module (three at least), else in its library, else nothing; once it ran, its own.
    One API that hung moves the median of its module little (the pooled mean of its
    module's cases, as before, went up fivefold)."""
    stats = {"jax.scipy.special.a": _ran(10, 10.0), "jax.scipy.special.b": _ran(10, 20.0),
             "jax.scipy.special.c": _ran(20, 10.0), "jax.scipy.special.new": ApiStats(),
             "jax.numpy.new": ApiStats(), "jax.numpy.d": _ran(10, 0.1),
             "torch.new": ApiStats(), "torch.e": _ran(4, 0.04)}
    costs = estimated_costs(stats)
    assert costs["jax.scipy.special.new"] == pytest.approx(1.0)  # its module: 1, 2, 0.5
    assert costs["jax.numpy.new"] == pytest.approx(0.75)  # too few: its library's median
    cheap = {f"torch.nn.functional.f{i}": _ran(8, 8 * 0.01) for i in range(6)}
    hung = {**cheap, "torch.nn.functional.hang": _ran(10, 5.0),
            "torch.nn.functional.new": ApiStats()}
    assert estimated_costs(hung)["torch.nn.functional.new"] == pytest.approx(0.01)
    assert costs["torch.new"] == 0.0  # one torch API tried: nothing known
    assert costs["jax.numpy.d"] == pytest.approx(0.01) and costs["torch.e"] == 0.01
    assert stats["jax.scipy.special.new"].energy(costs["jax.scipy.special.new"]) < \
        stats["torch.new"].energy(costs["torch.new"]) / 10


def test_first_visits_go_to_the_cheaper_modules_first() -> None:
    """A module whose tried APIs each cost JAX a compilation gets its first visits after
    the cheap modules' (coverage groups: the cheapest least-visited API; energy: the
    module's cost charged to its untried APIs), so a deadline sees more APIs."""
    def first_visits(dear_s: float) -> int:
        engine = ApiEngine(seed=2, libraries=("torch",), gradients=False, violate_share=0.0)
        dear = [n for n in engine.names if n.startswith("torch.nn.functional.")]
        cheap = [n for n in engine.names if n.count(".") == 1]
        for name, seconds in [*((n, dear_s) for n in dear[:4]), *((n, 0.004) for n in cheap[:4])]:
            engine.stats[name] = _ran(16, 16 * seconds)
            engine.picker.visits[name] = 1
        for _ in range(len(engine.names) // 4):
            engine._next_group()
        return sum(engine.picker.visits[n] > 0 for n in dear[4:])

    even, dear = first_visits(0.004), first_visits(0.5)
    assert dear < even / 2, (dear, even)


def _timed(engine: ApiEngine, first_s: float, later_s: float, n: int = 400) -> list[int]:
    """Feed ``n`` proposed cases, the first of each new signature costing ``first_s``;
    returns the sizes of the groups proposed after that."""
    for case in engine.propose(n):
        cost = first_s if case.id in engine.costs.first_ids else later_s
        engine.feedback(case, {"torch": Outcome("torch", "ok", duration_s=cost)}, [])
    sizes: list[int] = []
    for _ in range(20):
        engine._pending = []
        sizes.append(len(engine._next_group()))
    return sizes


def test_groups_grow_with_the_measured_cost_of_a_new_signature() -> None:
    """Compilation 100x a later case (JAX eager): groups reach GROUP_MAX; free new
    signatures (numpy, torch eager) keep the base sizes; an explicit size is kept."""
    name = "torch.nn.functional.dropout"
    specs = {name: load_library("torch")[name]}

    def engine(**kw: object) -> ApiEngine:
        return ApiEngine(seed=1, libraries=("torch",), specs=specs, counterparts={},
                         violate_share=0.0, edge_share=0.0, **kw)  # type: ignore[arg-type]

    assert max(_timed(engine(), first_s=0.001, later_s=0.001)) <= 8
    assert min(_timed(engine(), first_s=0.1, later_s=0.001)) == GROUP_MAX
    assert max(_timed(engine(group_size=(4, 8)), first_s=0.1, later_s=0.001)) <= 8


def test_signature_inputs_fix_the_groups_whatever_compilation_costs() -> None:
    """``--signature-inputs 8``: groups of 8, each a new signature, on a machine where
    compilation is dear as where it is free; by default dear compilation reuses
    signatures (fewer new ones come back)."""
    name = "torch.nn.functional.dropout"
    specs = {name: load_library("torch")[name]}

    def new_signatures(first_s: float, **kw: object) -> tuple[set[int], int]:
        engine = ApiEngine(seed=1, libraries=("torch",), specs=specs, counterparts={},
                           violate_share=0.0, edge_share=0.0, **kw)  # type: ignore[arg-type]
        sizes = _timed(engine, first_s=first_s, later_s=0.001)
        before = len(engine.costs.first_ids)
        for _ in range(20):
            engine._pending = []
            engine._next_group()
        return set(sizes), len(engine.costs.first_ids) - before

    assert new_signatures(0.1, signature_inputs=8) == ({8}, 20)
    assert new_signatures(0.001, signature_inputs=8) == ({8}, 20)
    _, new = new_signatures(0.1)
    assert new < 10  # adaptive: a new signature for one group in ten or so


def test_signature_inputs_must_be_a_whole_number() -> None:
    from dlfuzz.engines.api.settings import ApiEngineSettings
    from dlfuzz.errors import UsageError

    with pytest.raises(UsageError, match="--signature-inputs -1 .*whole number"):
        ApiEngineSettings(signature_inputs=-1)


def test_messages_are_keyed_without_their_numbers() -> None:
    assert message_key("RuntimeError", "size 3 vs 4") == message_key("RuntimeError",
                                                                     "size 7 vs 12")
    assert message_key("RuntimeError", "a") != message_key("ValueError", "a")


def test_violate_mode_leans_toward_native_rejections() -> None:
    python_side, native = ApiStats(), ApiStats()
    python_side.violate_tried = native.violate_tried = 20
    native.violate_native = 20
    assert violate_share(0.1, native) > 0.1 > violate_share(0.1, python_side)


def test_stats_are_stored_shown_and_restored(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "140")
    name = "torch.nn.functional.dropout"
    specs = {name: load_library("torch")[name]}
    engine = ApiEngine(seed=1, libraries=("torch",), specs=specs, counterparts={},
                       violate_share=0.0, edge_share=0.0)
    for case in engine.propose(12):
        engine.feedback(case, {"torch": Outcome("torch", "ok")}, [])
    rows = engine.api_stats()
    assert rows[name]["tried"] == 12 and rows[name]["valid_rate"] > 0.8
    store = Store.create(tmp_path / "c", {"settings": {}})
    store.set_meta(api_stats=rows)
    store.finish_batch(0, 12, 0, 10.0, {"phase:generate_ms": 1000, "phase:run_ms": 4000,
                                        "phase:oracle:differential_ms": 2000,
                                        "phase:oracle:dtype_ms": 1000,
                                        "triage_confirm_ms": 1500}, {})
    store.close()
    assert _cli(["findings", str(tmp_path / "c"), "--stats", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown[name]["tried"] == 12 and "yield" in shown[name]
    assert _cli(["findings", str(tmp_path / "c"), "--stats"]) == 0
    text = capsys.readouterr().out
    assert "dropout" in text and "valid rate" in text
    assert ("time: generating 1 s, running 4 s, judging 3 s (differential 2, dtype 1), "
            "triage 2 s, the rest 0 s") in text, text
    store = Store.open(tmp_path / "c")
    html = write_report(store).read_text()
    store.close()
    assert "APIs (1 tried" in html and name in html
    again = ApiEngine(seed=1, libraries=("torch",), specs=specs, counterparts={})
    again.load_api_stats(rows)
    assert again.stats[name].tried == 12
    assert isinstance(again.stats[name].seconds, float)


def _visits(seed: int, groups_per_api: float, sunk: int) -> dict[str, int]:
    # (No edges: a cheap API's first group breaks a rank through the solver, whose
    # caches live on the spec's plan across engines, so a second engine in the same
    # process draws differently; the visits are what this measures.)
    engine = ApiEngine(seed=seed, libraries=("tf",), gradients=False, violate_share=0.0,
                       edge_share=0.0)
    engine.stats[engine.names[sunk]].costly = 50  # energy at its floor
    for _ in range(int(groups_per_api * len(engine.names))):
        engine._next_group()
    return engine.picker.visits


def test_coverage_groups_leave_no_api_unvisited_by_chance(monkeypatch) -> None:
    """A quarter of the groups go to the API visited least (until each has had two):
    once there are twice as many groups as APIs, each of the 400-odd tf APIs has had
    one, an API whose energy is at its floor (every case of it hung) included, where
    draws by energy alone leave about a seventh of them unvisited. Ties are broken by an
    order from the seed, so a seed gives the same visits."""
    visits = _visits(1, 2.0, sunk=200)
    assert len(visits) > 300
    assert min(visits.values()) >= 1, sorted(visits.items(), key=lambda kv: kv[1])[:5]
    assert _visits(1, 2.0, sunk=200) == visits
    monkeypatch.setattr("dlfuzz.engines.api.schedule.COVERAGE_SHARE", 0.0)
    alone = _visits(1, 2.0, sunk=200)
    assert sum(v == 0 for v in alone.values()) > len(alone) / 20


def test_coverage_stops_once_every_api_had_its_visits() -> None:
    """Past the floor of visits the energy schedule alone decides: an API whose cases
    all hang is then sampled as rarely as its energy says (coverage groups would give
    it a quarter of them)."""
    engine = ApiEngine(seed=3, libraries=("torch",), apis=["gcd", "add"],
                       gradients=False, violate_share=0.0)
    for _ in range(8):
        engine._next_group()
    assert min(engine.picker.visits.values()) >= 2 and engine.picker.uncovered == 0
    engine.stats["torch.gcd"].costly = 6
    engine.picker.stale()
    before = engine.picker.visits["torch.gcd"]
    for _ in range(400):
        engine._next_group()
    assert engine.picker.visits["torch.gcd"] - before < 0.1 * 400


def test_cases_beyond_the_size_limit_are_dropped_and_counted(monkeypatch) -> None:
    """The last guard against a huge input (a CI campaign once drew a 4 GiB one): no
    proposed case holds more input bytes than MAX_CASE_BYTES, and the campaign's
    counters say how many were dropped. (The limit is lowered to a few hundred bytes so
    that ordinary draws cross it.)"""
    monkeypatch.setattr("dlfuzz.engines.api.engine.MAX_CASE_BYTES", 256)
    engine = ApiEngine(seed=3, libraries=("torch",), apis=["add", "matmul"],
                       gradients=False, violate_share=0.0)
    cases = engine.propose(200)
    assert len(cases) == 200
    assert max(sum(len(t.data) for t in c.tensors) for c in cases) <= 256
    assert engine.counters()["oversized_cases_dropped"] == engine.oversized > 0
