"""The recall benchmark's bug files and its matching of campaign bugs to known bugs
(``benchmarks/recall.py``): a malformed entry is a clear error, and a known bug counts
as found only on its backend, API and severity, and only when the finding shows the
bug's mechanism (its ``match`` conditions, read from a real campaign store)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from benchmark_scripts import load

from dlfuzz.cases import ApiCase
from dlfuzz.cases.core import Call, Ref, Tensor, dtype_name
from dlfuzz.errors import UsageError
from dlfuzz.store.db import BugRow, Store

recall = load("recall")

ENTRY = {"id": "torch-x", "library": "torch", "level": "api", "kind": "crash",
         "upstream": "https://github.com/pytorch/pytorch/issues/1", "title": "t",
         "reproduces_on": "torch 2.13.0", "api": "torch.lcm", "backend": "torch",
         "severity": ["crash"], "symptom": "SIGFPE", "trigger_lang": "python",
         "trigger": "pass", "verify": "signal"}


def _folder(tmp_path: Path, *entries: dict) -> Path:
    (tmp_path / "b.json").write_text(json.dumps({"bugs": list(entries)}))
    return tmp_path


def test_the_shipped_bug_files_load_and_name_known_campaigns() -> None:
    bugs = recall.load_bugs()
    assert len(bugs) >= 40
    assert {b.library for b in bugs} >= {"torch", "tf", "jax", "onnxruntime", "keras", "tfjs"}
    assert {b.level for b in bugs} == {"api", "model", "program"}
    assert all(b.campaign_name in recall.CAMPAIGNS for b in bugs)
    assert len({b.id for b in bugs}) == len(bugs)


@pytest.mark.parametrize("change,needle", [
    ({"severity": ["fatal"]}, "severity"),
    ({"level": "kernel"}, "level"),
    ({"upstream": "http://example.com/1"}, "upstream"),
    ({"colour": "red"}, "unknown key"),
    ({"trigger": ""}, "missing trigger"),
])
def test_a_malformed_entry_names_its_file_entry_and_key(tmp_path, change, needle) -> None:
    folder = _folder(tmp_path, {**ENTRY, **change})
    with pytest.raises(UsageError) as exc:
        recall.load_bugs(folder)
    assert "b.json" in str(exc.value) and needle in str(exc.value)


def test_a_duplicate_id_is_an_error(tmp_path) -> None:
    with pytest.raises(UsageError, match="used already"):
        recall.load_bugs(_folder(tmp_path, ENTRY, ENTRY))


def _found(*rows: dict) -> object:
    base = {"api": "", "backend": "", "severity": "", "root_cause": "k", "places": [],
            "created_at": 130.0, "updated_at": 200.0, "suspect_op": "", "id": "b1"}
    return recall.CampaignBugs(100.0, [{**base, **r} for r in rows])


def test_a_known_bug_matches_its_backend_api_and_severity_only(tmp_path) -> None:
    (bug,) = recall.load_bugs(_folder(tmp_path, ENTRY))
    hit = recall.match(bug, _found({"api": "torch.lcm", "backend": "torch",
                                    "severity": "crash"}))
    assert hit is not None and hit.seconds == 30.0
    for other in ({"api": "torch.gcd", "backend": "torch", "severity": "crash"},
                  {"api": "torch.lcm", "backend": "torch-compile", "severity": "crash"},
                  {"api": "torch.lcm", "backend": "torch", "severity": "wrong-result"}):
        assert recall.match(bug, _found(other)) is None
    # as a later place of another root cause: counted by the time that bug last changed
    place = {"backend": "torch", "api": "torch.lcm"}
    hit = recall.match(bug, _found({"api": "torch.gcd", "backend": "torch",
                                    "severity": "crash", "places": [place]}))
    assert hit is not None and hit.seconds == 100.0


def test_a_bug_is_matched_by_what_its_backend_called(tmp_path) -> None:
    """A JAX hang reached through a torch API's counterpart is JAX's own bug: the case
    of ``torch.gcd`` called ``jax.numpy.gcd`` on the hanging backend, and the known bug
    (``jnp.lcm`` and, as its report says, ``jnp.gcd``) counts as found; a known bug of
    an API the backend did not call does not."""
    store = Store.create(tmp_path / "c", {"settings": {}})
    x = Tensor.from_numpy(np.array([np.iinfo(np.int8).min, 3], np.int8))
    y = Tensor.from_numpy(np.array([-1, 6], np.int8))
    calls = (("torch", Call("torch.gcd", (Ref(0), Ref(1)))),
             ("jax", Call("jax.numpy.gcd", (Ref(0), Ref(1)))))
    now = time.time()
    store.add_bug(BugRow(
        id="b1", signature="s1", symptom="timeout", guilty_backend="jax", api="torch.gcd",
        stage="call", message="no result within 10.0 s", status="confirmed", occurrences=1,
        case_blob=store.blobs.put(ApiCase("torch.gcd", (x, y), calls)), reduced_blob=None,
        confirm_runs=2, confirm_hits=2, dir=None, details={}, created_at=now,
        updated_at=now, severity="crash", root_cause="jax/gcd-lcm/hang",
        places=[{"backend": "jax", "api": "torch.gcd", "dtypes": "int8",
                 "symptom": "timeout", "count": 1}]))
    store.close()
    found = recall.read_campaign(tmp_path / "c")
    hang = BUGS["jax-lcm-gcd-int-min-hang"]
    assert hang.api == "jax.numpy.lcm" and "jax.numpy.gcd" in hang.also
    assert recall.match(hang, found) is not None
    assert recall.match(replace(hang, also=()), found) is None  # lcm was not called
    torch_side = replace(hang, backend="torch", api="torch.gcd", also=())
    assert recall.match(torch_side, found) is None  # torch did not hang
    bad = dict(ENTRY, also="torch.gcd")
    with pytest.raises(UsageError, match="also must be a list"):
        recall.load_bugs(_folder(tmp_path, bad))


# ---- the `match` conditions, on real campaign stores -----------------------------------------
BUGS = {b.id: b for b in recall.load_bugs()}
COUNT_OVERFLOW = BUGS["tf-reduce-mean-float16-count-overflow"]
DIV_SIGFPE = BUGS["torch-div-trunc-int32-min-by-minus-one-sigfpe"]
QR_CHECK = BUGS["tf-xla-linalg-qr-rank1-check-abort"]


def _row(bug_id: str, backend: str, api: str, symptom: str, severity: str, message: str,
         *arrays: np.ndarray, reduced: tuple[np.ndarray, ...] = (), error_log: str = "",
         places: tuple[dict, ...] = ()) -> dict:
    """A bug row to store, with its case (and reduced case) made of ``arrays``."""
    return {"id": bug_id, "backend": backend, "api": api, "symptom": symptom,
            "severity": severity, "message": message, "arrays": arrays, "reduced": reduced,
            "error_log": error_log, "places": places}


def _campaign(root: Path, *rows: dict) -> object:
    """A real campaign folder holding ``rows`` as confirmed bugs, read as the benchmark
    reads a campaign it ran."""
    store = Store.create(root, {"settings": {}})

    def blob(api: str, arrays: tuple[np.ndarray, ...]) -> str:
        tensors = tuple(Tensor.from_numpy(a) for a in arrays)
        call = Call(api, tuple(Ref(k) for k in range(len(tensors))))
        return store.blobs.put(ApiCase(api, tensors, (("lib", call),)))

    for i, r in enumerate(rows):
        folder = None
        if r["error_log"]:
            folder = f"bugs/{r['id']}"
            (root / folder).mkdir(parents=True)
            (root / folder / "error.log").write_text(r["error_log"])
        dtypes = ",".join(sorted({str(a.dtype) for a in r["arrays"]}))
        now = time.time() + i
        store.add_bug(BugRow(
            id=r["id"], signature=f"sig-{r['id']}", symptom=r["symptom"],
            guilty_backend=r["backend"], api=r["api"], stage="call", message=r["message"],
            status="confirmed", occurrences=1, case_blob=blob(r["api"], r["arrays"]),
            reduced_blob=blob(r["api"], r["reduced"]) if r["reduced"] else None, confirm_runs=2,
            confirm_hits=2, dir=folder, details={}, created_at=now, updated_at=now,
            severity=r["severity"], root_cause=f"x/{i}",
            places=[{"backend": r["backend"], "api": r["api"], "dtypes": dtypes,
                     "symptom": r["symptom"], "count": 1}, *r["places"]]))
    store.close()
    return recall.read_campaign(root)


def test_float32_overflow_is_not_the_float16_count_overflow(tmp_path) -> None:
    # the campaign's finding: float32 values near 3e38 overflow the sum to inf
    overflow = _row("b32", "tf", "tensorflow.math.reduce_mean", "nan", "special-value",
                    "tf gives inf where the reference gives 3e38",
                    np.full((9,), 3e38, np.float32))
    found = _campaign(tmp_path / "a", overflow)
    assert recall.match(COUNT_OVERFLOW, found) is None
    near = recall.near_miss(COUNT_OVERFLOW, found)
    assert near is not None and near.startswith("near miss (b32:")
    assert "float32 not in float16" in near and "9 elements < 65520" in near
    # backend, API and severity alone (the old matcher) would have counted it
    assert recall.match(replace(COUNT_OVERFLOW, rule=recall.Rule()), found) is not None

    small = _row("b16s", "tf", "tensorflow.math.reduce_mean", "numeric", "wrong-result",
                 "off", np.ones((1000,), np.float16))
    counted = _row("b16", "tf", "tensorflow.math.reduce_mean", "numeric", "wrong-result",
                   "tf gives -0.0 where the reference gives 0.0039",
                   np.random.default_rng(0).standard_normal(65536).astype(np.float16))
    found = _campaign(tmp_path / "b", overflow, small, counted)
    hit = recall.match(COUNT_OVERFLOW, found)
    assert hit is not None and hit.bug_id == "b16"
    assert recall.near_miss(COUNT_OVERFLOW, found) is None


def test_the_case_as_detected_or_as_reduced_may_show_the_conditions(tmp_path) -> None:
    big = np.zeros((70000,), np.float16)
    reduced_away = _row("b1", "tf", "tensorflow.math.reduce_mean", "numeric", "wrong-result",
                        "off", big, reduced=(np.zeros((3,), np.float16),))
    assert recall.match(COUNT_OVERFLOW, _campaign(tmp_path / "a", reduced_away)) is not None
    neither = _row("b2", "tf", "tensorflow.math.reduce_mean", "numeric", "wrong-result",
                   "off", np.zeros((70000,), np.float32),
                   reduced=(np.zeros((3,), np.float16),))
    assert recall.match(COUNT_OVERFLOW, _campaign(tmp_path / "b", neither)) is None


def test_the_message_regex_and_the_special_inputs(tmp_path) -> None:
    int_min = np.array([-2**31, 5], np.int32)
    minus_one = np.array([-1, 1], np.int32)
    sigfpe = _row("b1", "torch", "torch.div", "crash", "crash",
                  "SIGFPE: worker killed by SIGFPE", int_min, minus_one)
    hit = recall.match(DIV_SIGFPE, _campaign(tmp_path / "a", sigfpe))
    assert hit is not None and hit.bug_id == "b1"
    segv = _row("b2", "torch", "torch.div", "crash", "crash",
                "SIGSEGV: worker killed by SIGSEGV", int_min, minus_one)
    found = _campaign(tmp_path / "b", segv)
    assert recall.match(DIV_SIGFPE, found) is None
    assert "lacks /SIGFPE/" in str(recall.near_miss(DIV_SIGFPE, found))
    no_min = _row("b3", "torch", "torch.div", "crash", "crash",
                  "SIGFPE: worker killed by SIGFPE", np.array([7, 5], np.int32), minus_one)
    found = _campaign(tmp_path / "c", no_min)
    assert recall.match(DIV_SIGFPE, found) is None
    assert "inputs hold no int-min" in str(recall.near_miss(DIV_SIGFPE, found))


def test_the_message_regex_reads_the_guilty_backends_worker_output(tmp_path) -> None:
    # a CHECK abort's message is only the signal; its words are in the worker's output
    log = ("== tf: ok (stage call, 1.00 ms)\n"
           "== tf-xla: crash (stage worker, 300.00 ms)\nSIGABRT: worker killed by SIGABRT\n"
           "-- worker output (tail) --\nF0000 shape_util.cc:952] Check failed: "
           "dimension_number >= 0 (-1 vs. 0)\n")
    x = np.ones((3,), np.float32)
    abort = _row("b1", "tf-xla", "tensorflow.linalg.qr", "crash", "crash",
                 "SIGABRT: worker killed by SIGABRT", x, error_log=log)
    assert recall.match(QR_CHECK, _campaign(tmp_path / "a", abort)) is not None
    # the same words in another backend's part of the log are not this crash's
    other = log.replace("== tf: ok (stage call, 1.00 ms)\n",
                        "== tf: exception (stage call, 1.00 ms)\nCheck failed: x\n")
    other = other.replace("Check failed: dimension_number", "assertion: dimension_number")
    abort = _row("b2", "tf-xla", "tensorflow.linalg.qr", "crash", "crash",
                 "SIGABRT: worker killed by SIGABRT", x, error_log=other)
    assert recall.match(QR_CHECK, _campaign(tmp_path / "b", abort)) is None


def test_a_merged_place_cannot_show_what_it_does_not_record(tmp_path) -> None:
    # torch.div crashed only as a place merged into a torch.remainder bug: the place
    # keeps its dtypes and symptom, not its message nor its inputs
    place = {"backend": "torch", "api": "torch.div", "dtypes": "int32", "symptom": "crash",
             "count": 1}
    merged = _row("b1", "torch", "torch.remainder", "crash", "crash",
                  "SIGFPE: worker killed by SIGFPE", np.array([-2**31], np.int32),
                  places=(place,))
    found = _campaign(tmp_path / "a", merged)
    assert recall.match(DIV_SIGFPE, found) is None
    assert "not recorded for a place merged into b1" in str(recall.near_miss(DIV_SIGFPE,
                                                                             found))
    uint8 = BUGS["torch-compile-any-uint8-returns-bool"]  # dtypes only: a place shows it
    place = {"backend": "torch-compile", "api": "torch.any", "dtypes": "uint8",
             "symptom": "dtype", "count": 1}
    merged = _row("b2", "torch-compile", "torch.all", "dtype", "inconsistency", "bool",
                  np.zeros((2,), np.uint8), places=(place,))
    assert recall.match(uint8, _campaign(tmp_path / "b", merged)) is not None


@pytest.mark.parametrize("array,values", [
    (np.array([-128, 3], np.int8), {"int-min"}),
    (np.array([-127, 3], np.int8), set()),
    (np.array([0, 255], np.uint8), set()),
    (np.zeros((2, 0), np.float32), {"zero-size"}),
    (np.array([1e-40, np.nan, -np.inf], np.float32), {"subnormal", "nan", "-inf"}),
    (np.array([1e-40, np.inf], np.float64), {"inf"}),  # a normal number in float64
    (np.array([1e-39], ml_dtypes.bfloat16), {"subnormal"}),
    (np.array([complex(0, np.nan)], np.complex64), {"nan"}),
])
def test_tensor_facts_name_the_special_values(array, values) -> None:
    name = dtype_name(array.dtype)
    facts = recall.tensor_facts(name, array)
    assert facts.values == values and facts.dtype == name and facts.elements == array.size


@pytest.mark.parametrize("rule,needle", [
    ({"colour": "red"}, "match key(s) ['colour'] unknown"),
    ({}, "match must be an object"),
    ("SIGFPE", "match must be an object"),
    ({"message": "("}, "match.message"),
    ({"dtypes": ["float17"]}, "match.dtypes ['float17'] unknown"),
    ({"dtypes": "float16"}, "match.dtypes must be a non-empty list"),
    ({"min_elements": 0}, "match.min_elements"),
    ({"min_elements": True}, "match.min_elements"),
    ({"symptom": ["wrong"]}, "match.symptom ['wrong'] unknown"),
    ({"inputs": ["NaN"]}, "match.inputs ['NaN'] unknown"),
])
def test_a_bad_match_names_its_file_bug_and_key(tmp_path, rule, needle) -> None:
    folder = _folder(tmp_path, {**ENTRY, "match": rule})
    with pytest.raises(UsageError) as exc:
        recall.load_bugs(folder)
    text = str(exc.value)
    assert "b.json" in text and "torch-x" in text and needle in text


def test_the_shipped_match_objects_load() -> None:
    rules = {b.id: b.rule for b in BUGS.values()}
    assert rules["tf-reduce-mean-float16-count-overflow"] == recall.Rule(
        dtypes=("float16",), min_elements=65520)
    assert rules["tf-fake-quant-per-channel-scalar-check-abort"].message is not None
    assert sum(not r.empty for r in rules.values()) >= 25


def test_a_plant_is_the_bug_whose_reproducer_needs_it(tmp_path) -> None:
    """A plant is found by the first confirmed bug of its backend and severity whose
    reproducer fails with the plant imported and passes without it, whatever API's case
    it was (``lp_pool2d`` reaching the ``avg_pool2d`` plant); a real bug of the library
    (failing both ways) or another backend's is not it."""
    plants = tmp_path / "plants"
    plants.mkdir()
    (plants / "planted_here.py").write_text("PLANTED = True\n")
    needs_plant = "import sys\nsys.exit(1 if 'planted_here' in sys.modules else 0)\n"
    always = "import sys\nsys.exit(1)\n"
    rows = [_row("b0", "torch", "torch.real_bug", "crash", "crash", "SIGFPE",
                 np.ones(2, np.float32), error_log="x"),
            _row("b1", "jax", "jax.numpy.other", "crash", "crash", "SIGABRT",
                 np.ones(2, np.float32), error_log="x"),
            _row("b2", "torch", "torch.nn.functional.lp_pool2d", "crash", "crash", "SIGABRT",
                 np.ones(2, np.float32), error_log="x")]
    root = tmp_path / "c"
    _campaign(root, *rows)
    for bug_id, backend, script in (("b0", "torch", always), ("b1", "jax", needs_plant),
                                    ("b2", "torch", needs_plant)):
        folder = root / "bugs" / bug_id
        (folder / f"repro_{backend}.py").write_text(script)
        (folder / "meta.json").write_text(json.dumps({"repro": {backend: f"repro_{backend}.py"}}))
    env = {**os.environ, "PYTHONPATH": str(plants)}
    plant = recall.Plant("planted_here", "torch", "torch.nn.functional.avg_pool2d", ("crash",))
    hit = recall.plant_match(plant, root, env)
    assert hit is not None and hit.bug_id == "b2" and hit.api == "torch.nn.functional.lp_pool2d"
    assert recall._through(plant, hit) == "torch.nn.functional.lp_pool2d"
    wrong = recall.Plant("planted_here", "torch", "torch.x", ("wrong-result",))
    assert recall.plant_match(wrong, root, env) is None  # no bug of that severity
