"""How ``reduce_case`` spends its runs: small round trips first, growing while nothing
holds, so a candidate that holds early does not drag eleven others through the workers
(each a compilation on a jit/xla backend)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from dlfuzz.cases import ApiCase, Call, Tensor
from dlfuzz.triage.reduce import reduce_case


def case_of(n: int) -> ApiCase:
    return ApiCase("f", (Tensor.from_numpy(np.zeros(n)),), (("numpy", Call("numpy.abs")),))


def shorter(case: ApiCase) -> Iterator[ApiCase]:
    """Every shorter length, shortest first (as a pass orders its boldest cuts first)."""
    n = case.tensors[0].to_numpy().size
    for m in range(1, n):
        yield case_of(m)


def test_round_trips_grow_while_nothing_holds_and_stop_at_the_chunk() -> None:
    trips: list[int] = []

    def never(cands: list[ApiCase]) -> list[bool]:
        trips.append(len(cands))
        return [False] * len(cands)

    result = reduce_case(case_of(40), never, {"shorter": shorter}, chunk=12)
    assert trips == [2, 4, 6]  # 12 candidates of the pass in all, as one trip of 12 was
    assert result.runs == 12 and result.case.tensors[0].to_numpy().size == 40


def test_a_candidate_that_holds_first_costs_one_small_trip() -> None:
    trips: list[int] = []

    def at_least(k: int):
        def holds(cands: list[ApiCase]) -> list[bool]:
            trips.append(len(cands))
            return [c.tensors[0].to_numpy().size >= k for c in cands]
        return holds

    result = reduce_case(case_of(40), at_least(1), {"shorter": shorter}, chunk=12)
    assert result.case.tensors[0].to_numpy().size == 1
    assert trips == [2] and result.runs == 2  # a fixed trip of 12 ran 12
    # A holding candidate third in line: trips of 2 then 4, and the greedy choice (the
    # first that holds, length 3) is the same as one candidate at a time would make.
    trips.clear()
    result = reduce_case(case_of(40), at_least(3), {"shorter": shorter}, chunk=12)
    assert result.case.tensors[0].to_numpy().size == 3 and trips[:2] == [2, 4]


def test_the_deadline_stops_a_pass_between_its_round_trips() -> None:
    """A round trip of a crash's candidates costs a worker start per candidate that still
    crashes (5 s for torch on the loaded machine): past the deadline not one more trip
    is sent, even inside a pass (a torch ``lcm`` SIGFPE's reduction with a 15 s
    deadline ran 10 candidates in 50 s when only passes checked it)."""
    import time

    trips: list[int] = []

    def slow_never(cands: list[ApiCase]) -> list[bool]:
        trips.append(len(cands))
        time.sleep(0.05)
        return [False] * len(cands)

    result = reduce_case(case_of(40), slow_never, {"shorter": shorter}, chunk=12,
                         first_chunk=1, deadline=time.monotonic() + 0.02)
    assert trips == [1] and result.cut and result.runs == 1
    trips.clear()
    result = reduce_case(case_of(40), slow_never, {"shorter": shorter}, chunk=12,
                         first_chunk=1, deadline=time.monotonic() + 60)
    assert trips == [1, 2, 4, 5] and not result.cut  # no deadline reached: the whole pass
