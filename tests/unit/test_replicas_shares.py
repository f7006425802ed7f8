"""How a replicated backend's batch is cut and queued (``executor/replicas.py``)."""

from __future__ import annotations

from dlfuzz.executor.replicas import NEW_SIGNATURE_WEIGHT, share_out


def test_chunks_by_signature_new_ones_to_the_least_loaded_known_ones_home() -> None:
    keys = ["a", "a", "b", "c", "c", "c", "a"]
    homes: dict = {"c": 0}
    shares = share_out(keys, range(len(keys)), 2, homes, key=lambda k: k)
    # "c" was compiled in process 0; "a" (new) goes to the emptier process 1, then "b"
    # (new) to process 0, whose load (3 cases of a known signature) is under a new one's
    assert homes == {"a": 1, "b": 0, "c": 0}
    assert shares.take(1) == [0, 1, 6]  # every case of a signature in one chunk
    assert shares.take(0) == [2]  # chunks in batch order of first appearance ("a" first)
    assert shares.take(0) == [3, 4, 5]
    assert shares.take(0) is None and shares.take(1) is None
    assert shares.left_over() == []


def test_a_process_out_of_work_takes_the_last_chunk_of_the_longest_queue() -> None:
    keys = [f"k{i}" for i in range(6)]
    homes = {k: 0 for k in keys}  # all compiled in process 0 before
    shares = share_out(keys, range(6), 2, homes, key=lambda k: k)
    assert shares.take(1) == [5]
    assert homes["k5"] == 1  # the compilation is now in the taker
    assert shares.take(0) == [0]


def test_a_lost_process_leaves_its_chunk_and_queue_over() -> None:
    keys = ["a", "b", "c", "d"]
    shares = share_out(keys, range(4), 2, {}, key=lambda k: k)
    chunk = shares.take(0)
    assert chunk is not None
    shares.lose(chunk, 0)
    taken = []
    while (c := shares.take(1)) is not None:
        taken += c
    assert sorted(taken + shares.left_over()) == [0, 1, 2, 3]
    assert chunk[0] not in taken


def test_new_signatures_weigh_more_than_cases() -> None:
    # one process holds a known signature with many cases; a new signature still goes
    # to the other until that process's load exceeds a compilation's weight
    keys = ["old"] * (NEW_SIGNATURE_WEIGHT - 1) + ["new1", "new2"]
    homes = {"old": 0}
    share_out(keys, range(len(keys)), 2, homes, key=lambda k: k)
    assert homes["new1"] == 1 and homes["new2"] == 0
