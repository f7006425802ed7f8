"""Host side of the executor: long-lived workers, timeouts, crash recovery.

Each backend has one worker process, or ``WorkerConfig.replicas`` of them sharing its
cases by signature (``replicas``). A worker is forked from the backend's fork server, a
process that has imported the library and run nothing (``zygote``: milliseconds per
restart; JAX, TF and CUDA break when forked after they ran, not after an import), or,
where the backend has not opted in, a fresh interpreter. Cases go in batches; the
worker writes each result into the pipe as soon as the case ends, so when a worker dies or hangs the host knows exactly which case
it was running: that case gets ``crash``/``timeout``/``oom``, a new worker starts, and
the rest of the batch goes on. The host does not wake for every result: it drains the
pipe in bulk, pausing up to ``_PACE_S`` between drains (see ``protocol``).
Whether the case kills a worker on its own or only after its predecessors is settled
later by triage, which re-runs it alone in a fresh worker (``Pool.isolate``).

Process-level details (death detection, group kill, log drain) live in ``process``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from dlfuzz.cases import Outcome
from dlfuzz.executor import zygote
from dlfuzz.executor.cancel import Cancelled, StopSignal
from dlfuzz.executor.host import (
    SKIPPED,
    BackendUnavailable,
    Worker,
    WorkerConfig,
    WorkerStats,
    signature_key,
)
from dlfuzz.executor.protocol import encode_cases
from dlfuzz.executor.replicas import Shares, share_out

__all__ = ["BackendUnavailable", "Cancelled", "Pool", "StopSignal", "Worker", "WorkerConfig",
           "WorkerStats"]


T = TypeVar("T")

# The counters of ``WorkerStats`` that add up over a backend's processes.
_SUMMED_STATS = ("cases", "restarts", "crashes", "timeouts", "idle_deaths", "busy_s", "forks")


class Pool:
    """One worker per backend (or ``replicas`` of them); a case runs on all its backends
    in parallel."""

    def __init__(self, configs: Sequence[WorkerConfig]) -> None:
        self.configs = {c.backend: c for c in configs}
        self.workers: dict[str, Worker] = {}
        # Further processes of a backend with ``replicas`` > 1, and which of its processes
        # each signature went to (index 0 is ``workers[name]``).
        self.replicas: dict[str, list[Worker]] = {}
        self._homes: dict[str, dict[Any, int]] = {}
        self.unavailable: dict[str, str] = {}
        # Set by the campaign (Ctrl-C, SIGTERM, budget deadline): every wait for a worker
        # then ends within ``cancel.POLL_S`` with ``Cancelled``.
        self.stop = StopSignal()
        self._executor = self._threads()
        # Spare fresh workers (``fresh_worker``): started in the background, one per
        # backend that triage has asked a fresh worker of, each watching its own stop
        # signal until it is handed out (a stopping campaign must not cancel a spare
        # half-started for the next confirmation).
        self._spares: dict[str, tuple[Worker, Future[Any]]] = {}
        self._spare_stop = StopSignal()
        self._spare_executor = ThreadPoolExecutor(max_workers=1)

    @classmethod
    def for_campaign(cls, configs: Sequence[WorkerConfig], settings: Any) -> Pool:
        """The pool a campaign with ``settings`` (``CampaignSettings``) runs on; an
        executor with options of its own (``RayPool``: the cluster's address) reads them
        here."""
        return cls(configs)

    def _threads(self) -> ThreadPoolExecutor:
        """One thread per worker process, all waiting at once while a batch runs."""
        return ThreadPoolExecutor(
            max_workers=max(1, sum(max(1, c.replicas) for c in self.configs.values())))

    def _new_worker(self, config: WorkerConfig, stop: StopSignal, process: int) -> Worker:
        """A worker (not started) for process ``process`` of ``config.backend`` (-1: a
        fresh one for triage). Here a local sandboxed process; ``RayPool`` places it in
        a Ray actor on a node of the cluster."""
        return Worker(config, stop)

    def start(self, on_ready: Callable[[str, int, int, str | None, str], None] | None = None
              ) -> dict[str, str]:
        """Start every worker in parallel; returns backend -> version of those that started.

        ``on_ready(backend, done, total, version, reason)`` is called in this thread as each
        worker is ready (version) or found unavailable (None and the reason): importing a
        library takes seconds, and whoever waits should see it advance.
        """
        for cfg in self.configs.values():
            cfg.target  # noqa: B018 - an unknown name is a UsageError before anything starts

        def start_one(cfg: WorkerConfig, process: int) -> tuple[Worker, str | None, str]:
            worker = self._new_worker(cfg, self.stop, process)
            try:
                return worker, worker.start(), ""
            except BackendUnavailable as exc:
                return worker, None, exc.reason
            except BaseException:
                worker.close()
                raise

        # A backend's further processes start beside its first (each with its own scratch
        # folder); one that cannot start is left out, the backend runs on fewer.
        jobs = [(name, i, cfg if i == 0 else replace(
                    cfg, scratch=f"{cfg.scratch}.{i}" if cfg.scratch else ""))
                for name, cfg in self.configs.items() for i in range(max(1, cfg.replicas))]
        versions: dict[str, str] = {}
        extras: dict[str, list[Worker]] = {}
        error: BaseException | None = None
        futures = {self._executor.submit(start_one, cfg, i): (name, i) for name, i, cfg in jobs}
        total = len(self.configs)
        done = 0
        for future in as_completed(futures):
            name, i = futures[future]  # collect all: a started worker must not be lost
            try:
                worker, version, reason = future.result()
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                error = error or exc
                continue
            if i > 0:
                if version is not None:
                    extras.setdefault(name, []).append(worker)
                continue
            done += 1
            if version is None:
                self.unavailable[name] = reason
            else:
                self.workers[name] = worker
                versions[name] = version
            if on_ready is not None and error is None:
                on_ready(name, done, total, version, reason)
        # Report in the configured order, whatever order the workers became ready in.
        self.workers = {n: self.workers[n] for n in self.configs if n in self.workers}
        for name, workers in extras.items():
            if name in self.workers:
                self.replicas[name] = workers
            else:
                for worker in workers:
                    worker.close()
        versions = {n: versions[n] for n in self.configs if n in versions}
        if error is not None:
            raise error
        return versions

    def run(self, cases: Sequence[Any], progress: Callable[[int], None] | None = None,
            only: Collection[str] | None = None) -> list[dict[str, Outcome]]:
        """For each case, backend -> Outcome for every started backend whose library it calls.

        ``only`` restricts the run to those backends (oracles re-running a case on the
        reference backends); None means every started backend. ``progress`` is called
        from several threads at once (one per backend). A backend
        whose worker can no longer be started drops out: it moves to ``unavailable`` and
        its outcomes are missing from this and later results.
        """
        results: list[dict[str, Outcome]] = [{} for _ in cases]
        names = [n for n in self.workers if only is None or n in only]
        libraries = {self.workers[n].library for n in names}
        # Pickled once here rather than once per backend: most cases run on all of them.
        encoded = encode_cases(cases, lambda c: any(c.call_for(lib) is not None
                                                    for lib in libraries))

        def run_part(name: str, worker: Worker, index: list[int]) -> str:
            try:
                outcomes = worker.run([cases[i] for i in index], progress,
                                      encoded=[encoded[i] for i in index])
            except BackendUnavailable as exc:
                return exc.reason
            for i, outcome in zip(index, outcomes, strict=True):
                if outcome.status != SKIPPED:  # not run: no outcome, as for a backend
                    results[i][name] = outcome  # that does not run the case
            return ""

        def run_shares(name: str, process: int, shares: Shares) -> str:
            worker = self._process(name, process)
            while (chunk := shares.take(process)) is not None:
                reason = run_part(name, worker, chunk)
                if reason:
                    shares.lose(chunk, process)
                    return reason
            return ""

        tasks: list[tuple[str, int]] = []
        futures: list[Future[str]] = []
        shared: dict[str, Shares] = {}
        for name in names:
            library = self.workers[name].library
            index = [i for i, c in enumerate(cases) if c.call_for(library) is not None]
            if not index:
                continue
            extras = self.replicas.get(name, [])
            if not extras:
                tasks.append((name, 0))
                futures.append(self._executor.submit(run_part, name, self.workers[name], index))
                continue
            shares = shared[name] = share_out(
                cases, index, 1 + len(extras), self._homes.setdefault(name, {}),
                partial(signature_key, library=library))
            for process in range(1 + len(extras)):
                tasks.append((name, process))
                futures.append(self._executor.submit(run_shares, name, process, shares))
        error: BaseException | None = None
        gone: dict[str, dict[int, str]] = {}  # backend -> its processes that cannot go on
        for (name, process), future in zip(tasks, futures, strict=True):
            try:  # wait for every backend before raising: none may be left mid-batch
                reason = future.result()
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                error = error or exc
                continue
            if reason:
                gone.setdefault(name, {})[process] = reason
        for name, lost in gone.items():
            self._drop_processes(name, lost)
        if error is not None:
            raise error
        for name, shares in shared.items():  # what a lost process left: on the first one
            left = shares.left_over()
            while left and name in self.workers:
                reason = run_part(name, self.workers[name], left)
                if not reason:
                    break
                self._drop_processes(name, {0: reason})
        return results

    def _drop_processes(self, name: str, lost: dict[int, str]) -> None:
        """Close the processes of ``name`` that could not go on; the first one left
        takes the lead, and the backend is unavailable only when none is left (its
        chunks went to the others meanwhile, ``Shares.lose``)."""
        processes = [self.workers[name], *self.replicas.get(name, [])]
        kept = [w for i, w in enumerate(processes) if i not in lost]
        for i in lost:
            processes[i].close()
        self._homes.pop(name, None)
        self.replicas.pop(name, None)
        if not kept:
            self.unavailable[name] = lost[min(lost)]
            self.workers.pop(name)
            return
        self.workers[name] = kept[0]
        if kept[1:]:
            self.replicas[name] = kept[1:]

    def _process(self, name: str, replica: int) -> Worker:
        return self.workers[name] if replica == 0 else self.replicas[name][replica - 1]

    def isolate(self, case: Any, backends: Sequence[str]) -> dict[str, Outcome]:
        """Run one case alone, each backend in a brand-new worker (confirmation of crashes)."""
        out: dict[str, Outcome] = {}
        for name in backends:
            worker = self.fresh_worker(name)
            try:
                out[name] = worker.run([case])[0]
            finally:
                worker.close()
        return out

    def fresh_worker(self, backend: str, timeout_factor: float = 1.0) -> Worker:
        """A newly started worker of ``backend``, outside the pool (the caller closes it):
        triage confirms a finding there, away from what earlier cases left in the pool's
        worker. Same configuration, hence the same case timeout, as detection, unless
        ``timeout_factor`` widens it (telling a hang from a slow run).

        With the detection's timeout, the worker is a spare started in the background
        after the previous request (a new interpreter that has run nothing: as fresh as
        one started now), and the next spare starts at once: confirming a new bug on JAX
        or TF no longer waits 3-8 s for a library import."""
        if timeout_factor == 1.0:
            spare = self._take_spare(backend)
            self._start_spare(backend)
            if spare is not None:
                return spare
        return self._started(self._fresh_config(backend, timeout_factor))

    def _fresh_config(self, backend: str, timeout_factor: float) -> WorkerConfig:
        config = self.configs[backend]
        return replace(config, restart_every=0, first_limit_share=1.0,
                       case_timeout_s=config.case_timeout_s * timeout_factor)

    def _started(self, config: WorkerConfig) -> Worker:
        worker = self._new_worker(config, self.stop, -1)
        try:
            worker.start()
        except BaseException:
            worker.close()
            raise
        return worker

    def _start_spare(self, backend: str) -> None:
        if backend in self._spares or self._spare_stop.is_set():
            return
        worker = self._new_worker(self._fresh_config(backend, 1.0), self._spare_stop, -1)
        self._spares[backend] = (worker, self._spare_executor.submit(worker.start))

    def _take_spare(self, backend: str) -> Worker | None:
        """The backend's spare once started (waiting for it if it is starting), with the
        pool's stop signal from now on; None if there is none or it failed to start."""
        worker, future = self._spares.pop(backend, (None, None))
        if worker is None or future is None:
            return None
        try:
            future.result()
        except BaseException:  # noqa: BLE001 - the caller starts one the usual way
            worker.close()
            return None
        worker.stop_signal = self.stop
        return worker

    def case_timeout(self, backend: str) -> float:
        """The per-case limit detection used for ``backend`` (its factor included)."""
        worker = self.workers.get(backend)
        if worker is not None:
            return worker.case_timeout
        return Worker(self.configs[backend]).case_timeout

    def stats(self) -> dict[str, WorkerStats]:
        """Per backend, its processes' counters summed (version and memory: the first's)."""
        out = {}
        for name, worker in self.workers.items():
            st = worker.stats
            extras = [w.stats for w in self.replicas.get(name, ())]
            if extras:
                st = replace(st, **{k: sum(getattr(s, k) for s in (st, *extras))
                                    for k in _SUMMED_STATS})
            out[name] = st
        return out

    def in_folder_near(self, backend: str, folder: Path, fn: Callable[..., T], *args: Any
                       ) -> T:
        """``fn(folder, *args)`` where ``backend``'s workers run (triage's reproducer
        checks). Here: on this host, in the folder itself; ``RayPool`` runs it as a Ray
        task on a node with the backend's resources, in a copy of the folder."""
        return fn(folder, *args)

    def generation_nodes(self) -> list[str]:
        """Nodes to generate cases on, one engine each (``engines.sharded``); empty: the
        campaign's own engine proposes everything, here."""
        return []

    def node_stats(self) -> dict[str, dict[str, Any]]:
        """Per node of a cluster, its worker processes and cases (the live status);
        empty for a pool on this host alone."""
        return {}

    def kill(self) -> None:
        """SIGKILL every worker now, without waiting (safe from a signal handler)."""
        self.stop.set("killed")
        self._spare_stop.set("killed")
        for worker in [*self.workers.values(), *(w for ws in self.replicas.values() for w in ws),
                       *(w for w, _ in self._spares.values())]:
            worker.kill()

    def close(self) -> None:
        for worker in [*self.workers.values(), *(w for ws in self.replicas.values() for w in ws)]:
            worker.close()
        self.workers.clear()
        self.replicas.clear()
        self._spare_stop.set("closed")  # a spare still starting gives up within POLL_S
        self._spare_executor.shutdown(wait=True)
        for worker, _ in self._spares.values():
            worker.close()
        self._spares.clear()
        self._executor.shutdown(wait=False)
        zygote.REGISTRY.close_idle()  # each holds a library imported: gigabytes in all

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

