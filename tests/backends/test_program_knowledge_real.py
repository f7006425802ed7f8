"""The knowledge base against the real layers: random values build, boundary values don't.

MoCo's random generation must give values the layers accept (positive nodes run), and its
boundary checking values that they reject (negative nodes raise). Boundary values a layer
silently accepts are candidate boundary bugs: ``data/boundary_review.json`` lists the ones
found so far with a verdict, and a new one makes this test fail until it is reviewed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "torch")

from dlfuzz.engines.program import knowledge as kb  # noqa: E402
from dlfuzz.specgen.program_knowledge import (  # noqa: E402
    REVIEW_FILE,
    boundary_review,
    construct,
    draw_all,
    layer_classes,
    probe,
    probe_input,
    required_values,
)

LIBS = ("torch", "keras")


@pytest.mark.parametrize("library", LIBS)
def test_random_draws_construct_real_layers(library: str) -> None:
    rng = np.random.default_rng(11)
    classes = dict(layer_classes(library))
    specs = kb.load_kb(library)
    assert set(specs) <= set(classes)
    ok = tried = 0
    failures = []
    for api, spec in specs.items():
        required = {p.name for p in spec.params if not p.optional}
        for _ in range(4):
            values = draw_all(rng, spec, required_values(rng, spec))
            if not required <= set(values):
                break  # Reshape/Permute-like: only a seed can give the value
            tried += 1
            err = construct(classes[api], values)
            if err is None:
                ok += 1
            else:
                failures.append((api, values, err))
    print(f"{library}: {ok}/{tried} random constructions succeeded")
    assert tried >= 400
    assert ok / tried >= 0.9, failures[:10]


@pytest.mark.parametrize("library", ["torch"])
def test_random_draws_run_forward(library: str) -> None:
    """Layers built from random values also run on a fitting input (shape context)."""
    rng = np.random.default_rng(12)
    classes = dict(layer_classes(library))
    ok = tried = 0
    for api, spec in kb.load_kb(library).items():
        base = required_values(rng, spec)
        if probe_input(library, api, base) is None or probe(library, classes[api], api,
                                                            base) is not None:
            continue  # no runnable probe for this layer at all
        for _ in range(3):
            values = draw_all(rng, spec, dict(base))
            for param in kb.context_params(library, api):
                values[param] = base[param]
            tried += 1
            ok += probe(library, classes[api], api, values) is None
    print(f"{library}: {ok}/{tried} random layers ran forward")
    assert tried >= 150 and ok / tried >= 0.8


def _review(library: str) -> tuple[int, list[dict]]:
    """boundary_review, for keras in a child on the torch backend (what the review file was
    made with), whatever backend an earlier test imported keras with here."""
    if library == "torch":
        return boundary_review(library)
    code = ("import json; from dlfuzz.specgen.program_knowledge import "
            "boundary_review; print(json.dumps(boundary_review('keras'), default=str))")
    env = {**os.environ, "KERAS_BACKEND": "torch", "CUDA_VISIBLE_DEVICES": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300, check=True).stdout
    tried, accepted = json.loads(out.strip().splitlines()[-1])
    return tried, accepted


@pytest.mark.parametrize("library", LIBS)
def test_boundary_values_rejected_or_reviewed(library: str) -> None:
    tried, accepted = _review(library)
    review = json.loads(REVIEW_FILE.read_text(encoding="utf-8")).get(library, [])
    known = {(e["api"], e["param"]) for e in review}
    new = [a for a in accepted if (a["api"], a["param"]) not in known]
    candidates = [a for a in accepted if a["forward"]]
    print(f"{library}: {tried} boundary values, {len(accepted)} accepted "
          f"({len(candidates)} through the forward pass: candidate boundary bugs)")
    assert tried >= 200
    assert len(accepted) < tried / 2
    assert not new, f"unreviewed accepted boundary values: {new}"


def test_known_rejections_are_real() -> None:
    """The boundary values of well-checked params are refused by torch itself."""
    classes = dict(layer_classes("torch"))
    conv = classes["torch.nn.Conv2d"]
    # out_channels=0 builds; the forward pass refuses it
    assert construct(conv, {"in_channels": 3, "out_channels": 0, "kernel_size": 3}) is None
    assert probe("torch", conv, "torch.nn.Conv2d",
                 {"in_channels": 3, "out_channels": 0, "kernel_size": 3})
    assert probe("torch", conv, "torch.nn.Conv2d",
                 {"in_channels": 3, "out_channels": 4, "kernel_size": 3}) is None
    assert construct(conv, {"in_channels": 3, "out_channels": 4, "kernel_size": 3,
                            "groups": 3})
    assert construct(classes["torch.nn.Dropout"], {"p": 1.1})
    assert construct(conv, {"in_channels": 3, "out_channels": 4, "kernel_size": 3,
                            "padding_mode": kb.BAD_ENUM})
