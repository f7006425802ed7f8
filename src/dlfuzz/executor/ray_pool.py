"""``--executor ray``: the same pool, its worker processes in Ray actors across a cluster.

Ray does what a cluster engine is for: placing workers on nodes (by resources, so a
TF.js worker lands only where Node is), restarting them when they or their node die,
and moving batches and outcomes. dlfuzz keeps everything else as it is:

* Each backend's worker is still a sandboxed process (``host.Worker``): a library crash
  kills that process, never the actor that owns it, and the actor restarts it exactly
  as the local pool does. ``BackendActor`` is that owner, one per worker process.
* The driver (``Campaign``) is unchanged: one engine proposes every batch, the oracles
  judge, triage confirms and reduces, and the one SQLite store records, one transaction
  per batch. A backend's cases are shared between its actors the way the local pool
  shares them between a compiling backend's processes (``replicas.share_out``: by
  signature, queued where the signature was compiled, idle actors taking what is left),
  so no two nodes run the same case and no case is generated twice.
* Each backend gets ``replicas`` workers (1, or 2 for a backend that compiles every
  signature) on *every* node that has its resources; triage's fresh workers and
  reduction re-runs are actors too, placed by the same resources.
* Faults: an actor that dies mid-batch (its process killed, its node gone) is restarted
  by Ray (``max_restarts=-1``; on another node when its own is gone) and its chunk of the
  batch is run again there; outcomes of a dead actor are never half-used. Only when an
  actor cannot come back does its backend run on its other actors
  (``Pool._drop_processes``). A case that kills the *sandboxed* process is a finding, as
  everywhere.

Without ``--ray-address`` the pool starts a Ray instance on this machine (and stops it
at the end); with one it joins that cluster, whose nodes must have dlfuzz and the
libraries installed at the same paths.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import pickle
import socket
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from dlfuzz.backends.base import load_backend_class
from dlfuzz.cases import Outcome
from dlfuzz.errors import UsageError
from dlfuzz.executor.cancel import POLL_S, Cancelled, StopSignal
from dlfuzz.executor.host import BackendUnavailable, Worker, WorkerConfig, WorkerStats
from dlfuzz.executor.pool import _SUMMED_STATS, Pool
from dlfuzz.executor.protocol import encode_cases

T = TypeVar("T")

# How long a chunk is retried after its actor was lost before the backend goes on
# without that actor: a node's death is noticed by Ray's health checks (about 13 s
# here), then the new actor imports its library (seconds to a minute).
RESTART_WAIT_S = 180.0
RETRY_PAUSE_S = 1.0  # between tries while an actor restarts
CLOSE_WAIT_S = 10.0  # for an actor to stop its worker before it is killed
# Environment a worker needs from the driver: plugins and patches on PYTHONPATH
# (``--preload``), dlfuzz's own switches.
_FORWARDED_ENV_PREFIXES = ("DLFUZZ_",)
_FORWARDED_ENV = ("PYTHONPATH",)


def _ray() -> Any:
    """Ray, imported only for ``--executor ray`` (an optional extra)."""
    try:
        import ray
    except ImportError as exc:
        raise UsageError("--executor ray needs Ray, an optional extra: "
                         "pip install 'dlfuzz[ray]' (or drop --executor ray)") from exc
    return ray


class BackendActor:
    """Ray actor owning one sandboxed worker process of one backend on its node.

    Threaded (``max_concurrency=2``) so that ``cancel`` reaches a ``run`` in progress;
    a stop then ends the worker's wait within ``cancel.POLL_S``, as on the host."""

    def __init__(self, config: WorkerConfig, env: dict[str, str]) -> None:
        os.environ.update(env)
        ray = _ray()
        self._node = str(ray.get_runtime_context().get_node_id())
        # Which life of the actor this is: a restart (its process or node died) shows as
        # a new one in its next answer, even when no call of the driver saw it die.
        self._life = uuid.uuid4().hex
        self._stop = StopSignal()
        self._worker = Worker(config, self._stop)
        self._reason = ""
        self._version: str | None = None
        try:
            self._version = self._worker.start()
        except BackendUnavailable as exc:
            self._reason = exc.reason

    def ready(self) -> tuple[str | None, str, dict[str, Any], tuple[str, str, WorkerStats]]:
        """(version or None, why not, what the worker said of itself, ``where``)."""
        return self._version, self._reason, self._worker.info, self.where()

    def where(self) -> tuple[str, str, WorkerStats]:
        """(this life, its node, its worker's stats)."""
        return self._life, self._node, self._worker.stats

    def run(self, blobs: list[bytes]) -> tuple[list[Outcome], tuple[str, str, WorkerStats]]:
        if self._stop.is_set():  # a cancelled run's signal must not cut the next one
            self._stop = StopSignal()
            self._worker.stop_signal = self._stop
        cases = [pickle.loads(b) for b in blobs]
        return self._worker.run(cases, encoded=blobs), self.where()

    def cancel(self, reason: str) -> None:
        self._stop.set(reason)

    def close(self) -> None:
        self._worker.close()


def _summed(a: WorkerStats, b: WorkerStats) -> WorkerStats:
    """``b`` with ``a``'s counters added (version, start time and memory: ``b``'s)."""
    return replace(b, **{k: getattr(a, k) + getattr(b, k)
                         for k in _SUMMED_STATS if k != "busy_s"})  # busy: the host's own


@functools.cache
def _actor_class() -> Any:
    return _ray().remote(BackendActor)


def _in_copy(env: dict[str, str], files: dict[str, bytes], fn: Callable[..., T],
             args: tuple[Any, ...]) -> T:
    """Ray task body of ``RayPool.in_folder_near``: the folder rebuilt in a temporary
    directory on this node, ``fn`` run on it."""
    os.environ.update(env)
    with tempfile.TemporaryDirectory(prefix="dlfuzz-folder-") as tmp:
        root = Path(tmp)
        for name, data in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return fn(root, *args)


@functools.cache
def _task() -> Any:
    return _ray().remote(_in_copy)


def _lost_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """What ``ray.get`` raises when an actor was lost: (for good: dead, or its node gone;
    for now: restarting, or the node holding its answer gone)."""
    exceptions = _ray().exceptions
    gone = (exceptions.ActorDiedError, exceptions.ActorUnschedulableError)
    return gone, (exceptions.RayActorError, exceptions.WorkerCrashedError,
                  exceptions.ObjectLostError)


class RemoteWorker(Worker):
    """A ``Worker`` whose process lives in a ``BackendActor``, pinned to ``node`` while
    that node lives (``None``: wherever its resources are).

    Same contract as the local one: ``run`` returns an outcome per case, survives the
    deaths of its actor (waits for Ray's restart and re-runs the chunk there), honours
    the pool's stop signal, and raises ``BackendUnavailable`` only when no actor can be
    had. Its stats add up over the actor's lives."""

    def __init__(self, config: WorkerConfig, stop: StopSignal | None, node: str | None,
                 env: dict[str, str]) -> None:
        super().__init__(config, stop)
        self.node_wanted = node
        self._placed = bool(node)  # False once its node is gone: placed by resources only
        self.node = ""  # the node the actor runs on now (it moves when its node dies)
        self.actor_deaths = 0
        self._env = env
        self._actor: Any = None
        self._life = ""  # the actor's life last heard from (``BackendActor.where``)
        self._life_stats = WorkerStats()  # and its stats then
        self._before = WorkerStats()  # counters of the actor's earlier lives

    @property
    def pid(self) -> int | None:
        return None  # the sandboxed process is on another node, maybe

    def start(self) -> str:
        _ray()  # a clear error if Ray is missing, before the import below
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        cls = self.backend_class or load_backend_class(self.config.target)
        options: dict[str, Any] = {
            "max_restarts": -1, "max_task_retries": 0, "max_concurrency": 2, "num_cpus": 0,
            "resources": dict(cls.ray_resources)}
        if self.node_wanted and self._placed:
            # On that node and no other: a soft preference let Ray put a node's second
            # actor on the other node while the first was starting. When the node dies
            # the actor becomes unschedulable, and ``run`` starts a new one anywhere.
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(
                self.node_wanted, soft=False)
        self._actor = _actor_class().options(**options).remote(self.config, self._env)
        gone, unavailable = _lost_errors()
        try:
            return self._await_ready(self.config.start_timeout_s)
        except TimeoutError as exc:
            self._kill_actor()
            raise BackendUnavailable(self.config.backend, str(exc)) from exc
        except (*gone, *unavailable) as exc:  # e.g. dlfuzz not importable on that node
            self._kill_actor()
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            raise BackendUnavailable(self.config.backend, "its Ray actor could not start: "
                                     + (lines[-1][:300] if lines else type(exc).__name__)
                                     ) from exc

    def _await_ready(self, wait_s: float) -> str:
        version, reason, info, where = self._get(self._actor.ready.remote(), wait_s)
        if version is None:
            self._kill_actor()
            raise BackendUnavailable(self.config.backend, reason)
        self.info = dict(info)
        self._heard(where)
        return version

    def _get(self, ref: Any, wait_s: float | None) -> Any:
        """``ray.get(ref)``, in short waits that honour the stop signal and ``wait_s``."""
        ray = _ray()
        deadline = None if wait_s is None else time.monotonic() + wait_s
        while True:
            if self.stop_signal is not None and self.stop_signal.is_set():
                if self._actor is not None:
                    self._actor.cancel.remote(self.stop_signal.reason)
                raise Cancelled(self.stop_signal.reason)
            done, _ = ray.wait([ref], timeout=POLL_S)
            if done:
                return ray.get(ref)
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"{self.config.backend}: no answer from its Ray actor "
                                   f"within {wait_s:g} s")

    def run(self, cases: Sequence[Any], progress: Callable[[int], None] | None = None, *,
            encoded: Sequence[bytes] | None = None) -> list[Outcome]:
        blobs = list(encoded) if encoded is not None else encode_cases(cases)
        started = time.perf_counter()
        gone, unavailable = _lost_errors()
        deadline: float | None = None  # from the first loss of this chunk
        try:
            while True:
                try:
                    if self._actor is None:
                        self.start()
                    outcomes, where = self._get(self._actor.run.remote(blobs), None)
                except gone as exc:  # for good (its node is gone): a new actor, anywhere
                    why = exc
                    self._kill_actor()
                    self._placed = False
                except unavailable as exc:  # restarting: Ray brings it back
                    why = exc
                    self._pause(RETRY_PAUSE_S)
                else:
                    self._heard(where)
                    if progress is not None:
                        progress(len(outcomes))
                    return list(outcomes)
                deadline = deadline or time.monotonic() + RESTART_WAIT_S
                if time.monotonic() > deadline:
                    first = str(why).strip().splitlines()[0][:200] if str(why) else ""
                    raise BackendUnavailable(
                        self.config.backend, f"its Ray actor was lost and not back within "
                        f"{RESTART_WAIT_S:g} s ({type(why).__name__}: {first})")
        finally:
            self.stats.busy_s += time.perf_counter() - started

    def _pause(self, seconds: float) -> None:
        """Sleep, but end within ``POLL_S`` of a stop (``Cancelled``)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.stop_signal is not None:
                self.stop_signal.check()
            time.sleep(min(POLL_S, max(0.0, end - time.monotonic())))

    def _heard(self, where: tuple[str, str, WorkerStats]) -> None:
        """Take in an answer's (life, node, stats): a new life is a death of the actor,
        whose counters so far are kept; the stats are the lives' sums."""
        life, node, stats = where
        if self._life and life != self._life:
            self.actor_deaths += 1
            self._before = replace(_summed(self._before, self._life_stats),
                                   restarts=self._before.restarts
                                   + self._life_stats.restarts + 1)
        self._life, self._life_stats, self.node = life, stats, node
        self.stats = replace(_summed(self._before, stats), busy_s=self.stats.busy_s)

    def alive(self) -> bool:
        return self._actor is not None

    def stop(self) -> None:
        if self._actor is not None:
            try:
                self._actor.close.remote()
            except Exception:  # noqa: BLE001 - a dead actor has nothing to close
                pass

    def kill(self) -> None:
        self._kill_actor()

    def close(self) -> None:
        """The actor first kills its worker's process group (a worker hung in a case
        would not read the EOF that the actor's death leaves it), then it goes."""
        if self._actor is not None:
            try:
                _ray().get(self._actor.close.remote(), timeout=CLOSE_WAIT_S)
            except Exception:  # noqa: BLE001 - dead, restarting or slow: killed anyway
                pass
        self._kill_actor()

    def _kill_actor(self) -> None:
        actor, self._actor = self._actor, None
        if actor is None:
            return
        try:
            _ray().kill(actor, no_restart=True)  # its sandboxed worker reads EOF and exits
        except Exception:  # noqa: BLE001 - already gone, or Ray shut down
            pass


class RayPool(Pool):
    """``Pool`` over a Ray cluster: ``replicas`` workers of each backend on every node
    that has the backend's resources (see the module docstring)."""

    def __init__(self, configs: Sequence[WorkerConfig], address: str = "") -> None:
        self.address = address
        self._placement: dict[str, list[str]] = {}  # backend -> node id of each process
        self._env = {k: (os.pathsep.join(os.path.abspath(p or os.curdir)
                                         for p in v.split(os.pathsep))
                         if k == "PYTHONPATH" else v)
                     for k, v in os.environ.items()
                     if k in _FORWARDED_ENV or k.startswith(_FORWARDED_ENV_PREFIXES)}
        super().__init__(configs)

    @classmethod
    def for_campaign(cls, configs: Sequence[WorkerConfig], settings: Any) -> Pool:
        return cls(configs, address=settings.ray_address)

    # ---- the cluster --------------------------------------------------------------------
    def _connect(self) -> None:
        ray = _ray()
        if ray.is_initialized():
            return
        wanted: dict[str, float] = {}
        for cfg in self.configs.values():
            for name, _ in load_backend_class(cfg.target).ray_resources:
                wanted[name] = 1000.0
        quiet = {"include_dashboard": False, "log_to_driver": False,
                 "logging_level": logging.WARNING, "configure_logging": True}
        if not self.address:
            # This machine only: it has what its backends need (each worker's start
            # says so if not), so their resources are declared here.
            ray.init(num_cpus=os.cpu_count() or 1, resources=wanted or None, **quiet)
            return
        _check_reachable(self.address)  # Ray itself retries for minutes
        try:
            ray.init(address=self.address, **quiet)
        except (ConnectionError, RuntimeError) as exc:
            raise UsageError(
                f"--ray-address {self.address!r}: cannot join the Ray cluster "
                f"({str(exc).splitlines()[0][:300]}); check `ray status --address "
                f"{self.address}` on that machine, or drop --ray-address to start a "
                f"local Ray instance") from exc

    def nodes(self) -> list[dict[str, Any]]:
        """The cluster's alive nodes (Ray's records), head first."""
        alive = [n for n in _ray().nodes() if n.get("Alive")]
        return sorted(alive, key=lambda n: "node:__internal_head__" not in n["Resources"])

    def start(self, on_ready: Callable[[str, int, int, str | None, str], None] | None = None
              ) -> dict[str, str]:
        self._connect()
        nodes = self.nodes()
        for name, cfg in list(self.configs.items()):
            needs = dict(load_backend_class(cfg.target).ray_resources)
            hosts = [n["NodeID"] for n in nodes
                     if all(n["Resources"].get(r, 0.0) >= amount for r, amount in needs.items())]
            if not hosts:
                self.unavailable[name] = (
                    f"no node of the Ray cluster has the resources {needs}; start one with "
                    f"`ray start --address ADDR --resources '{json.dumps(needs)}'`")
                del self.configs[name]
                continue
            per_node = max(1, cfg.replicas)
            self._placement[name] = [h for h in hosts for _ in range(per_node)]
            # Each actor has its own scratch directory on its node (the driver's folder
            # may not exist there).
            self.configs[name] = replace(cfg, replicas=len(self._placement[name]), scratch="")
        self._executor.shutdown(wait=False)
        self._executor = self._threads()
        unavailable = dict(self.unavailable)
        versions = super().start(on_ready)
        self.unavailable.update(unavailable)
        return versions

    def in_folder_near(self, backend: str, folder: Path, fn: Callable[..., T], *args: Any
                       ) -> T:
        """``fn(copy of folder, *args)`` as a Ray task on a node with ``backend``'s
        resources: a reproducer check runs where its library is, not on the driver."""
        files = {str(p.relative_to(folder)): p.read_bytes()
                 for p in sorted(folder.rglob("*")) if p.is_file()}
        needs = dict(load_backend_class(self.configs[backend].target).ray_resources)
        ref = _task().options(num_cpus=0, resources=needs).remote(self._env, files, fn, args)
        result: T = _ray().get(ref)
        return result

    def _new_worker(self, config: WorkerConfig, stop: StopSignal, process: int) -> Worker:
        hosts = self._placement.get(config.backend, [])
        node = hosts[process % len(hosts)] if process >= 0 and hosts else None
        return RemoteWorker(config, stop, node, self._env)

    def generation_nodes(self) -> list[str]:
        """Every node of the cluster, head first (``engines.sharded``)."""
        return [n["NodeID"] for n in self.nodes()]

    # ---- what the live status shows -------------------------------------------------
    def node_stats(self) -> dict[str, dict[str, Any]]:
        """Per node (its id's first 8 hex digits): worker actors per backend and the
        cases they ran."""
        out: dict[str, dict[str, Any]] = {}
        for name, worker in self._all_workers():
            if not isinstance(worker, RemoteWorker) or not worker.node:
                continue
            row = out.setdefault(worker.node[:8], {"actors": Counter(), "cases": 0,
                                                   "actor_deaths": 0})
            row["actors"][name] += 1
            row["cases"] += worker.stats.cases
            row["actor_deaths"] += worker.actor_deaths
        return out

    def _all_workers(self) -> list[tuple[str, Worker]]:
        return [(name, w) for name, primary in self.workers.items()
                for w in (primary, *self.replicas.get(name, []))]

    def close(self) -> None:
        super().close()
        ray = _ray()
        if ray.is_initialized():
            ray.shutdown()  # a local instance stops; a cluster only loses this driver


def _check_reachable(address: str) -> None:
    """A ``UsageError`` at once when nothing listens at ``HOST:PORT`` (``ray.init`` would
    retry for two minutes and more before it gives up). ``auto`` (the cluster
    ``ray start`` left on this machine) is Ray's to find."""
    if address == "auto":
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--ray-address {address!r}: give the head node's HOST:PORT (what "
                         "`ray start --head` printed, e.g. 127.0.0.1:6379), or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise UsageError(f"--ray-address {address!r}: cannot join the Ray cluster (nothing "
                         f"answers there: {exc.strerror or exc}); check `ray status "
                         f"--address {address}` on that machine, or drop --ray-address to "
                         "start a local Ray instance") from exc
