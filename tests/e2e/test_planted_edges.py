"""Bugs only the recall mechanisms reach, found unaided (no ``--apis``) on real torch.

Three bugs are planted in the torch worker at once (with a fourth, the wrong tanh
backward of ``test_planted_gradient.py``: ``conftest.torch_plants_campaign``), and one
campaign of 200,000 cases runs over every torch spec with default settings:

* ``planted_torch_gcd_extreme``: ``torch.gcd`` dies of SIGFPE where the first argument
  holds its dtype's minimum and the second -1 (the integer-division crash ``torch.lcm``
  really has). Only integer extremes in both arguments at once reach it (``edges.py``:
  ``int-extremes``); valid draws keep integers in [-10, 10]. (The same plant on
  ``torch.floor_divide``, an API whose draws mostly mix float and integer dtypes, is
  measured by ``benchmarks/recall.py --planted``, not asserted here.)
* ``planted_torch_pool_rank_abort``: ``torch.nn.functional.avg_pool2d`` aborts on an
  input whose rank is not 3 or 4 (a failed CHECK). Only an edge input breaking the rank
  bound reaches it (violate mode breaks library-vouched constraints only); ``lp_pool2d``
  calls ``avg_pool2d``, so the abort may be reached through either.
* ``planted_torch_hardswish_bf16``: ``torch.nn.functional.hardswish`` is wrong for
  bfloat16 only. No other library has a validated counterpart, so only the dtype oracle
  (torch against itself in float64) sees it.

Each must be confirmed, and its reproducer must show it with the plant and pass
without it. Without these mechanisms none of the three is reachable: valid draws keep
integers in [-10, 10] and ranks inside their bounds, and the differential oracle needs
a counterpart hardswish does not have.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from executor_support import campaign_digest, dlfuzz_cli, planted_env

PLANT_APIS = ("torch.gcd", "torch.nn.functional.avg_pool2d", "torch.nn.functional.lp_pool2d",
              "torch.nn.functional.hardswish")


@pytest.fixture(scope="module")
def bugs(torch_plants_campaign: Path) -> list[dict]:
    listing = dlfuzz_cli("findings", str(torch_plants_campaign), "--json", timeout=120)
    assert listing.returncode == 0, listing.stderr
    found: list[dict] = json.loads(listing.stdout)
    return found


def _one(bugs: list[dict], api: str, severity: str, campaign: Path) -> dict:
    mine = [b for b in bugs if b["api"] == api and b["severity"] == severity
            and b["guilty_backend"] == "torch"]
    assert mine, campaign_digest(campaign, PLANT_APIS)  # evaluated only on failure
    assert mine[0]["confirmed"]
    return mine[0]


def _repro(script: str, planted: str | None) -> subprocess.CompletedProcess:
    code = f"import runpy; runpy.run_path({script!r}, run_name='__main__')"
    if planted is not None:
        code = f"import {planted}; " + code
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=planted_env())


def test_integer_extremes_find_the_division_crash(bugs, torch_plants_campaign) -> None:
    bug = _one(bugs, "torch.gcd", "crash", torch_plants_campaign)
    assert "SIGFPE" in bug["message"]
    script = bug["repro"]["torch"]
    assert _repro(script, "planted_torch_gcd_extreme").returncode != 0
    assert _repro(script, None).returncode == 0


def test_a_rank_outside_the_bound_finds_the_abort(bugs, torch_plants_campaign) -> None:
    # lp_pool2d calls avg_pool2d: the abort may first be reached through it.
    found = [b for b in bugs if b["api"] in ("torch.nn.functional.avg_pool2d",
                                             "torch.nn.functional.lp_pool2d")
             and b["severity"] == "crash" and b["confirmed"]]
    assert found, campaign_digest(torch_plants_campaign, PLANT_APIS)
    bug = found[0]
    assert "SIGABRT" in bug["message"]
    case = json.loads((Path(bug["dir"]) / "case.json").read_text())
    assert case["expect"].startswith("edge:rank:"), case["expect"]
    script = bug["repro"]["torch"]
    assert _repro(script, "planted_torch_pool_rank_abort").returncode != 0


def test_the_dtype_oracle_finds_a_bfloat16_only_wrong_result(bugs, torch_plants_campaign
                                                              ) -> None:
    bug = _one(bugs, "torch.nn.functional.hardswish", "wrong-result", torch_plants_campaign)
    assert "bfloat16" in bug["message"] and "float64" in bug["message"]
    script = bug["repro"]["torch"]
    patched = _repro(script, "planted_torch_hardswish_bf16")
    assert patched.returncode == 1 and "BUG present" in patched.stdout, patched.stdout
    assert _repro(script, None).returncode == 0
