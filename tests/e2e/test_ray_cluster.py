"""``--executor ray`` on a real two-node Ray cluster on 127.0.0.1 (a head and a second
node, each a ``ray start`` of its own), with a planted torch bug.

* The same seed and the same cases (fixed batches, a case limit) find the same bugs on
  the local executor and on Ray with one node.
* Across two nodes, with one worker actor SIGKILLed and then the whole second node
  SIGKILLed mid-campaign: the campaign ends cleanly within its budget, the plant is
  found once, confirmed and reproduced, the actors' deaths are counted, and a resume
  on the local executor goes on with the stored bugs.

Ray is told to use no authentication tokens (``RAY_AUTH_MODE=disabled``): a token file
left in ``~/.ray`` by an earlier local ``ray.init`` would otherwise make the driver and
a ``ray start`` cluster disagree.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from executor_support import dlfuzz_cli, planted_env

RAY = str(Path(sys.executable).with_name("ray"))
APIS = "numpy.cumsum,numpy.cumprod"
PLANT = "torch=planted_torch_cumsum"


def _env() -> dict[str, str]:
    env = planted_env()
    env["RAY_AUTH_MODE"] = "disabled"
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A head node and a second node started with ``ray start`` on this machine."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        # Ray's socket paths must stay short: a temp dir of its own under /tmp.
        self.temp = tempfile.mkdtemp(prefix="dlfr", dir="/tmp")
        self.second: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        subprocess.run([RAY, "start", "--head", "--node-ip-address", "127.0.0.1",
                        "--port", str(self.port), "--num-cpus", "1",
                        "--include-dashboard", "false", "--disable-usage-stats",
                        "--temp-dir", self.temp],
                       check=True, capture_output=True, env=_env(), timeout=120)
        # The second node blocks in the foreground: killing its process group is a node
        # dying (its raylet and every actor on it).
        self.second = subprocess.Popen(
            [RAY, "start", "--address", self.address, "--node-ip-address", "127.0.0.1",
             "--num-cpus", "1", "--block"],
            env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + 120
        while self.alive_nodes() < 2:
            assert time.monotonic() < deadline, "the second Ray node did not join"
            time.sleep(1)

    def alive_nodes(self) -> int:
        code = (f"import ray; ray.init(address={self.address!r}, log_to_driver=False, "
                "logging_level='ERROR'); print(sum(n['Alive'] for n in ray.nodes()))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=_env(), timeout=120)
        return int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else 0

    def kill_second_node(self) -> None:
        assert self.second is not None
        os.killpg(self.second.pid, signal.SIGKILL)
        self.second.wait(30)

    def stop(self) -> None:
        if self.second is not None and self.second.poll() is None:
            os.killpg(self.second.pid, signal.SIGKILL)
        subprocess.run([RAY, "stop", "--force"], capture_output=True, env=_env(), timeout=120)


def _actor_pids() -> list[int]:
    """Processes of dlfuzz's worker actors (Ray titles them ``ray::BackendActor``)."""
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True)
    return [int(line.split()[0]) for line in out.stdout.splitlines()
            if "ray::BackendActor" in line]


def _run(out: Path, *extra: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dlfuzz", "run", "--engine", "numpy-api",
         "--backends", "numpy,torch", "--apis", APIS, "--seed", "3", "--out", str(out),
         "--preload", PLANT, "--quiet", *extra],
        capture_output=True, text=True, env=_env(), timeout=timeout)


def _bugs(root: Path) -> list[dict]:
    proc = dlfuzz_cli("findings", str(root), "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _plant(bugs: list[dict]) -> list[dict]:
    return [b for b in bugs if b["api"] == "numpy.cumsum" and b["guilty_backend"] == "torch"]


def test_local_and_ray_one_node_find_the_same_bugs(tmp_path: Path) -> None:
    fixed = ("--batch-size", "64", "--max-cases", "1024", "--budget", "300s")
    local = _run(tmp_path / "local", *fixed)
    assert local.returncode == 0, local.stderr[-3000:]
    ray = _run(tmp_path / "ray", *fixed, "--executor", "ray")
    assert ray.returncode == 0, ray.stderr[-3000:]
    assert "node " in ray.stderr  # the live status names the Ray node and its actors

    def found(root: Path) -> set[tuple[str, str, str, bool]]:
        return {(b["api"], b["guilty_backend"], b["symptom"], b["confirmed"])
                for b in _bugs(root)}

    assert found(tmp_path / "local") == found(tmp_path / "ray")
    assert ("numpy.cumsum", "torch", "numeric", True) in found(tmp_path / "ray")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    c = Cluster()
    try:
        c.start()
        yield c
    finally:
        c.stop()


def test_worker_and_node_killed_mid_campaign_lose_nothing(cluster: Cluster,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "camp"
    budget = 90.0
    proc = subprocess.Popen(
        [sys.executable, "-m", "dlfuzz", "run", "--engine", "numpy-api",
         "--backends", "numpy,torch", "--apis", APIS, "--seed", "3", "--out", str(out),
         "--preload", PLANT, "--quiet", "--budget", f"{budget:g}s", "--batch-seconds", "2",
         "--executor", "ray", "--ray-address", cluster.address],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    # Wait for the workers: two actors per backend, one on each node.
    deadline = time.monotonic() + 180
    while len(_actor_pids()) < 4:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the worker actors did not start"
        time.sleep(0.5)
    started = time.monotonic()
    time.sleep(10)
    victim = _actor_pids()[0]
    os.kill(victim, signal.SIGKILL)  # one worker actor, mid-batch
    time.sleep(15)
    cluster.kill_second_node()  # the whole second node: its raylet and actors
    stdout, stderr = proc.communicate(timeout=budget + 300)
    took = time.monotonic() - started
    assert proc.returncode == 0, stderr[-3000:]
    # Within the budget, plus triage's reproducer checks and the shutdown.
    assert took < budget + 120, took

    bugs = _bugs(out)
    plant = _plant(bugs)
    assert len(plant) == 1, bugs  # found once, however many nodes ran its cases
    bug = plant[0]
    assert bug["confirmed"] and bug["symptom"] == "numeric" and bug["reduced"]
    assert "torch" in bug["repro"]
    # Its reproducer was checked by a Ray task on a node with torch, in a copy of the
    # bug folder, and the verdict came back into the folder.
    meta = json.loads((Path(bug["dir"]) / "meta.json").read_text())
    assert meta["reproducer"]["reproduced"] is True, meta["reproducer"]
    assert dlfuzz_cli("reproduce", str(out), bug["id"], timeout=300).returncode == 1

    # The deaths are on record: the killed actor and the second node's actors came back.
    from dlfuzz.store.db import Store

    store = Store.open(out, "test")
    try:
        restarts = sum(int(row["restarts"]) for row in store.backend_rows())
        shards, lost = store.meta()["generation_shards"], store.counters()
    finally:
        store.close()
    assert restarts >= 2, restarts
    # Each node proposed its share with its own engine; the second node's died with it,
    # and its share was proposed by the others from then on.
    assert shards == 2 and lost.get("generation_shards_lost") == 1, (shards, lost)

    # Resumed on the local executor: the bug is kept, and not filed again.
    more = subprocess.run(
        [sys.executable, "-m", "dlfuzz", "run", "--resume", str(out), "--budget", "10s",
         "--executor", "local", "--quiet"],
        capture_output=True, text=True, env=_env(), timeout=600)
    assert more.returncode == 0, more.stderr[-3000:]
    assert len(_plant(_bugs(out))) == 1
