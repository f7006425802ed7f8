"""A synthesized-graph campaign end to end: every case's input set is counted by profile.

``dlfuzz run --engine model --method synth`` draws each input set as ``normal``, ``wide``
or ``special`` (``engines/model/inputs.py``) and re-runs a set whose outputs overflow,
rescaled. The campaign stores the engine's counters beside the oracles' (``counters``
table), which is how a user (and ``benchmarks/peers.py``) sees the profiles' shares, and
the training steps of models (``train_steps_run``) among the cases.
"""

from __future__ import annotations

import sqlite3

from executor_support import dlfuzz_cli


def test_a_synth_campaign_counts_its_input_profiles(tmp_path) -> None:
    out = tmp_path / "c"
    proc = dlfuzz_cli("run", "--engine", "model", "--method", "synth", "--backends",
                      "torch,ort", "--budget", "30s", "--seed", "2", "--out", str(out),
                      "--quiet", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with sqlite3.connect(out / "campaign.db") as db:
        counters = dict(db.execute("select name, value from counters").fetchall())
        cases = db.execute("select sum(cases) from batches").fetchone()[0]
    profiles = {k: v for k, v in counters.items()
                if k in ("model_inputs_normal", "model_inputs_wide", "model_inputs_special")}
    assert len(profiles) == 3 and all(v > 0 for v in profiles.values()), counters
    # Every case is one input set of one profile, the float32 sibling of a demoted
    # float16/bfloat16 model, or a training step of a model: the counts add up to the
    # cases run.
    siblings = counters.get("model_float32_siblings", 0)
    steps = counters.get("train_steps_run", 0)
    assert steps > 0  # on by default: a twentieth of the models are stepped
    assert sum(profiles.values()) + siblings + steps == cases > 0
    assert counters["model_inputs_normal"] > counters["model_inputs_special"]
    # Each rescaled case answers one earlier overflow.
    rescaled = (counters.get("model_inputs_rescaled_finite", 0)
                + counters.get("model_inputs_rescaled_non_finite", 0))
    assert rescaled <= counters.get("model_inputs_non_finite_outputs", 0)
    # torch and ORT compile nothing per model (ORT's session is built in milliseconds):
    # one input set per graph, as synth's default is (32 only with jax/XLA/inductor).
    assert counters["model_graphs"] == sum(profiles.values()) - rescaled
    assert counters.get("dlfuzz_errors", 0) == 0
