"""A model campaign on two backends runs its added reference library only on demand.

``dlfuzz run --engine model --backends torch,ort`` adds TensorFlow as the float64
reference (``resolve_backends``: the cheapest library to run a fresh float64 graph after
torch, which is already there; JAX eager compiles every op of a new graph). Every
backend runs the same graph, so the reference is needed only to settle who is wrong
when torch and ORT disagree; running JAX on every case cut the pipeline from about 100
to about 5 cases/s.
"""

from __future__ import annotations

import sqlite3

from executor_support import dlfuzz_cli

from dlfuzz.campaign import on_demand_references, resolve_backends
from dlfuzz.settings import CampaignSettings


def test_which_added_references_run_on_demand() -> None:
    model = CampaignSettings(engine="model", backends=("torch", "ort"))
    # torch is there; tf, the next cheapest, and jax to settle a torch-vs-tf split
    assert resolve_backends(model) == ["torch", "ort", "tf", "jax"]
    assert on_demand_references(model, resolve_backends(model)) == {"tf", "jax"}
    # Without torch, torch comes first: the cheapest float64 graph runner.
    ort_only = CampaignSettings(engine="model", backends=("ort", "ort-noopt"))
    assert resolve_backends(ort_only) == ["ort", "ort-noopt", "torch", "tf", "jax"]
    # one selected backend: the references are what it is compared with, on every case
    alone = CampaignSettings(engine="model", backends=("ort",))
    assert resolve_backends(alone) == ["ort", "torch", "tf"]
    assert on_demand_references(alone, resolve_backends(alone)) == frozenset()
    # an API campaign's added libraries are its counterparts: on every case
    api = CampaignSettings(engine="api", backends=("torch",))
    assert len(resolve_backends(api)) > 1
    assert on_demand_references(api, resolve_backends(api)) == frozenset()


def test_a_torch_vs_ort_model_campaign_runs_jax_only_for_the_judge(tmp_path) -> None:
    out = tmp_path / "c"
    proc = dlfuzz_cli("run", "--engine", "model", "--method", "lemon", "--backends",
                      "torch,ort", "--budget", "40s", "--seed", "1", "--out", str(out),
                      "--quiet", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with sqlite3.connect(out / "campaign.db") as db:
        cases = dict(db.execute("select name, cases from backends").fetchall())
        batches = db.execute("select count(*), sum(cases) from batches").fetchone()
    assert set(cases) == {"torch", "ort", "tf", "jax"}
    assert batches[0] > 0 and cases["ort"] >= batches[1] > 0
    # tf ran reference variants and confirmations at most, never every case; jax only
    # where torch and tf disagreed in float64
    assert cases["tf"] < cases["ort"] / 3, cases
    assert cases["jax"] <= cases["tf"], cases
