"""Sharing one backend's batch between its worker processes (``WorkerConfig.replicas``).

A backend that compiles every new signature (JAX eager) bounds a campaign while the other
workers wait; a second process of it puts the idle core to work. Two things decide how
well: a signature's later cases should run where it was compiled (its compile cache is
there), and no process should sit idle while the other still has a queue (a batch ends
when its slowest process does, and single cases can take seconds). So the batch is cut
into signature chunks, each queued on the process that compiled that signature before,
or the least loaded one; a process whose queue is empty takes the last chunk of the
longest queue, and the signature's home moves with it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

# What a signature new to every process weighs against one case when chunks are queued
# (a JAX compilation ~100 ms, a later case ~1-5 ms).
NEW_SIGNATURE_WEIGHT = 20
# Signatures remembered per backend; forgotten all at once when full, as a compile cache
# is only a speed-up.
HOMES_MAX = 8192


class Shares:
    """One batch's chunks of a replicated backend, queued per process; thread-safe."""

    def __init__(self, queues: list[deque[tuple[Any, list[int]]]],
                 homes: dict[Any, int]) -> None:
        self._queues = queues
        self._homes = homes
        self._lock = threading.Lock()
        self._lost: list[int] = []

    def take(self, process: int) -> list[int] | None:
        """The next chunk for ``process``: its own queue's first, else the last of the
        longest other queue; None when every queue is empty."""
        with self._lock:
            own = self._queues[process]
            if own:
                return own.popleft()[1]
            longest = max(self._queues, key=lambda q: sum(len(c) for _, c in q))
            if not longest:
                return None
            key, chunk = longest.pop()
            self._homes[key] = process
            return chunk

    def lose(self, chunk: list[int], process: int) -> None:
        """``process`` died with ``chunk`` (and can take no more): both are left over."""
        with self._lock:
            self._lost.extend(chunk)
            queue = self._queues[process]
            self._lost.extend(i for _, c in queue for i in c)
            queue.clear()

    def left_over(self) -> list[int]:
        """Cases no process ran, in batch order."""
        with self._lock:
            left = self._lost + [i for q in self._queues for _, c in q for i in c]
            self._lost = []
            for q in self._queues:
                q.clear()
        return sorted(left)


def share_out(cases: Sequence[Any], index: Sequence[int], processes: int,
              homes: dict[Any, int], key: Callable[[Any], Any]) -> Shares:
    """``index`` (cases of one backend) in signature chunks queued on ``processes``."""
    if len(homes) > HOMES_MAX:
        homes.clear()
    chunks: dict[Any, list[int]] = {}
    for i in index:
        chunks.setdefault(key(cases[i]), []).append(i)
    placed: list[list[tuple[Any, list[int]]]] = [[] for _ in range(processes)]
    load = [0] * processes
    # Signatures compiled before first, where they were compiled; then the new ones, each
    # to the least loaded process. Each queue then runs in batch order.
    known = {k for k in chunks if 0 <= homes.get(k, -1) < processes}
    for k in chunks.keys() & known:
        placed[homes[k]].append((k, chunks[k]))
        load[homes[k]] += len(chunks[k])
    for k, chunk in chunks.items():
        if k in known:
            continue
        where = min(range(processes), key=load.__getitem__)
        load[where] += NEW_SIGNATURE_WEIGHT + len(chunk)
        homes[k] = where
        placed[where].append((k, chunk))
    return Shares([deque(sorted(p, key=lambda kc: kc[1][0])) for p in placed], homes)
