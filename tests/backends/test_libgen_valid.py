"""The generators against real torch: valid-input rates per mode, and violate mode.

Hand-written specs of four torch APIs, written to be *exact*: every constraint and
declared type bound is one torch enforces (checked by hand against torch 2.13's error
messages), so a valid input must run and an input that breaks one of them must be
rejected. The inputs run in-process on the real ``TorchBackend`` (the same conversion
code the sandboxed workers use): these four APIs do not crash on bad input.

What is measured is what TensorJSFuzz reports (Fig. 7a): the share of inputs that run
without an exception, for the Random baseline, Algorithm 1 (typed), Algorithm 1+2
(adjust) and z3; and for violate mode the share torch rejects.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from dlfuzz.engines.api.libgen import LibGenerator, to_case
from dlfuzz.engines.api.libspecs import load_file

torch = pytest.importorskip("torch")
pytest.importorskip("z3")



def _pad_rules(k: int) -> list[str]:
    """torch's rules for the k-th padded dimension from the end (pad[2k-2], pad[2k-1])."""
    lo, hi, size = f"pad[{2 * k - 2}]", f"pad[{2 * k - 1}]", f"input.shape[-{k}]"
    when = f"len(pad) < {2 * k} or "
    out = f"{size} + {lo} + {hi}"
    rules = [f"mode != 'constant' or {when}{size} + min({lo}, 0) + min({hi}, 0) >= 0"]
    if k > 3:
        return rules
    return rules + [
        # reflect/replicate need every non-batch dimension non-empty
        f"mode == 'constant' or mode == 'circular' or input.ndims < {k} or "
        f"input.ndims == {k} and input.ndims == len(pad) // 2 + 2 or {size} >= 1",
        f"mode == 'constant' or mode == 'circular' or {when}{out} >= "
        "(1 if len(pad) == 2 else 0)",  # torch: 1-D padding must keep one element
        f"mode != 'reflect' or {when}{lo} < {size} and {hi} < {size}",
        f"mode != 'circular' or {when}{out} >= 0 and {lo} <= {size} and {hi} <= {size} "
        f"and {hi} >= -{size}",
    ]


SPECS = {"format": 2, "library": "torch", "apis": [
    {"api": "torch.nn.functional.conv2d", "params": [
        {"name": "input", "type": ["tensor"], "rank": [3, 4]},
        {"name": "weight", "type": ["tensor"], "rank": [4, 4]},
        {"name": "bias", "type": ["tensor", "none"], "optional": True, "default": None,
         "rank": [1, 1]},
        {"name": "stride", "type": ["int"], "optional": True, "default": 1},
        {"name": "padding", "type": ["int", "str"], "optional": True, "default": 0,
         "values": ["valid", "same"]},
        {"name": "dilation", "type": ["int"], "optional": True, "default": 1},
        {"name": "groups", "type": ["int"], "optional": True, "default": 1}],
     "constraints": [
        "input.ndims == weight.ndims or input.ndims == weight.ndims - 1",
        "stride >= 1", "dilation >= 1", "groups >= 1",
        "padding.type == 'str' or padding >= 0",
        "input.shape[-3] == weight.shape[1] * groups",
        "weight.shape[0] % groups == 0",
        "weight.shape[0] >= 1",
        "weight.shape[-1] >= 1 and weight.shape[-2] >= 1",
        # torch allows empty spatial dims only with an empty batch or no channels, and
        # never with 'same' padding (the padded size falls one short of the kernel)
        "input.shape[-1] >= 1 and input.shape[-2] >= 1 or padding != 'same' and "
        "(input.shape[-3] == 0 or input.ndims == 4 and input.shape[0] == 0)",
        "bias is None or bias.shape[0] == weight.shape[0]",
        "input.dtype == weight.dtype",
        "bias is None or bias.dtype == weight.dtype",
        "padding != 'same' or stride == 1",
        "padding == 'same' or input.shape[-1] + 2 * (padding if padding.type == 'int' "
        "else 0) >= dilation * (weight.shape[-1] - 1) + 1",
        "padding == 'same' or input.shape[-2] + 2 * (padding if padding.type == 'int' "
        "else 0) >= dilation * (weight.shape[-2] - 1) + 1"]},
    {"api": "torch.matmul", "params": [
        {"name": "input", "type": ["tensor"], "rank": [1, 5]},
        {"name": "other", "type": ["tensor"], "rank": [1, 5]}],
     "constraints": [
        "input.dtype == other.dtype",
        # no bool kernels, but an empty matrix product never reaches one
        "input.dtype != 'bool' or (input.ndims > 1 or other.ndims > 1) and "
        "(input.num_element == 0 or other.num_element == 0)",
        "input.shape[-1] == (other.shape[-2] if other.ndims >= 2 else other.shape[0])",
        *[f"input.ndims < {k} or other.ndims < {k} or input.shape[-{k}] == "
          f"other.shape[-{k}] or input.shape[-{k}] == 1 or other.shape[-{k}] == 1"
          for k in (3, 4, 5)]]},
    {"api": "torch.gather", "params": [
        {"name": "input", "type": ["tensor"], "rank": [1, 5]},
        {"name": "dim", "type": ["int"]},
        {"name": "index", "type": ["tensor"], "rank": [1, 5]}],
     "constraints": [
        "index.num_element == 0 or index.dtype in ('int32', 'int64')",
        "dim < input.ndims and dim >= -input.ndims",
        "index.num_element == 0 or index.ndims == input.ndims",
        *[f"index.num_element == 0 or input.ndims <= {i} or dim % input.ndims == {i} "
          f"or index.shape[{i}] <= input.shape[{i}]" for i in range(5)],
        "index.num_element == 0 or index.min >= 0",
        "index.num_element == 0 or index.max < input.shape[dim]"]},
    {"api": "torch.nn.functional.pad", "params": [
        {"name": "input", "type": ["tensor"], "rank": [1, 5]},
        {"name": "pad", "type": ["ints"], "length": [2, 8]},
        {"name": "mode", "type": ["str"], "optional": True, "default": "constant",
         "values": ["constant", "reflect", "replicate", "circular"]},
        {"name": "value", "type": ["float", "none"], "optional": True, "default": None}],
     "constraints": [
        "len(pad) % 2 == 0",
        "len(pad) // 2 <= input.ndims",
        "mode == 'constant' or value is None",
        "mode == 'constant' or len(pad) <= 6",
        "mode == 'constant' or input.ndims == len(pad) // 2 + 1 "
        "or input.ndims == len(pad) // 2 + 2",
        *[c for k in (1, 2, 3, 4) for c in _pad_rules(k)]]},
]}

APIS = [a["api"] for a in SPECS["apis"]]
N = 100


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("libgen_valid") / "torch.json"
    path.write_text(json.dumps(SPECS))
    return {s.api: s for s in load_file(path)}


@pytest.fixture(scope="module")
def backend():
    from dlfuzz.backends.torch_backend import TorchBackend

    b = TorchBackend()
    b.setup()
    return b


def runs(backend, draw) -> bool:
    """True when torch returns without an exception (TensorJSFuzz's validity)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            backend.run(to_case(draw))
        except Exception:  # noqa: BLE001 - any rejection counts as invalid
            return False
    return True


def test_valid_rates_by_mode(specs, backend):
    rates: dict[str, dict[str, float]] = {}
    for mode in ("random", "typed", "adjust", "z3"):
        g = LibGenerator(np.random.default_rng(11), mode)
        rates[mode] = {api: sum(runs(backend, g.draw(specs[api])) for _ in range(N)) / N
                       for api in APIS}
    print("valid rates:", json.dumps(rates, indent=1))
    mean = {m: sum(r.values()) / len(r) for m, r in rates.items()}
    assert mean["random"] < mean["typed"] < mean["adjust"], mean
    for mode in ("adjust", "z3"):
        for api, rate in rates[mode].items():
            assert rate >= 0.9, (mode, api, rate)


@pytest.mark.parametrize("mode", ["adjust", "z3"])
def test_violate_inputs_are_rejected(specs, backend, mode):
    g = LibGenerator(np.random.default_rng(12), mode)
    for api in APIS:
        draws = [g.violate(specs[api]) for _ in range(60)]
        made = [d for d in draws if d is not None]
        assert len(made) == len(draws), api  # every spec here has something to break
        accepted = [d.violated for d in made if runs(backend, d)]
        rejected = 1 - len(accepted) / len(made)
        print(mode, api, f"rejected {rejected:.2f}", sorted(set(accepted)))
        assert rejected >= 0.9, (mode, api, accepted)
