"""validation.py on the real Python sources of torch, TensorFlow and JAX.

Each extracted constraint is also checked against the library itself: an input that
violates it must be rejected, one that satisfies it must run.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from dlfuzz.engines.api.constraints import Env, holds, parse
from dlfuzz.specgen.validation import constraints_from_source


def _params(fn: object) -> list[str]:
    return list(inspect.signature(fn).parameters)  # type: ignore[arg-type]


def test_torch_functional_checks() -> None:
    F = pytest.importorskip("torch.nn.functional")  # noqa: N806 - torch's own spelling
    assert constraints_from_source(F.dropout, _params(F.dropout)) == [
        "not (p < 0.0 or p > 1.0)"]
    assert constraints_from_source(F.glu, _params(F.glu)) == ["input.ndims != 0"]
    assert "input.ndims >= 2" in constraints_from_source(F.group_norm, _params(F.group_norm))
    emb = constraints_from_source(F.embedding, _params(F.embedding))
    assert emb[0] == ("not (padding_idx is not None and padding_idx > 0 and "
                      "(padding_idx >= weight.shape[0]))")
    interp = constraints_from_source(F.interpolate, _params(F.interpolate))
    assert "not (size is not None and scale_factor is not None)" in interp
    assert "not (size is None and scale_factor is None)" in interp
    # the mode/rank table at the end of interpolate, reached after 13 early returns
    assert any("mode == 'lanczos'" in c for c in interp)


def test_torch_constraints_agree_with_torch() -> None:
    torch = pytest.importorskip("torch")
    F = torch.nn.functional  # noqa: N806
    tree = parse(constraints_from_source(F.embedding, _params(F.embedding))[0])
    weight = np.zeros((5, 3), np.float32)
    idx = torch.tensor([0, 1])
    for padding_idx in (1, 4, 5, 9):
        ok = holds(tree, Env({"weight": weight, "padding_idx": padding_idx}))
        try:
            F.embedding(idx, torch.from_numpy(weight), padding_idx=padding_idx)
            ran = True
        except AssertionError:
            ran = False
        assert ok == ran, padding_idx


def test_tensorflow_wrappers() -> None:
    tf = pytest.importorskip("tensorflow")
    frame = constraints_from_source(tf.signal.frame, _params(tf.signal.frame))
    assert frame[:3] == ["signal.ndims >= 1", "frame_length.ndims == 0",
                         "frame_step.ndims == 0"]
    dct = constraints_from_source(tf.signal.dct, _params(tf.signal.dct))
    assert "axis == -1" in dct and "type in (1, 2, 3, 4)" in dct
    # followed into image_ops_impl._resize_images_common (one call deep)
    assert "not (images.ndims != 3 and images.ndims != 4)" in constraints_from_source(
        tf.image.resize, _params(tf.image.resize))
    tree = parse("not (images.ndims != 3 and images.ndims != 4)")
    for rank in (2, 3, 4, 5):
        images = np.zeros((2,) * rank, np.float32)
        try:
            tf.image.resize(images, [3, 3])
            ran = True
        except ValueError:
            ran = False
        assert holds(tree, Env({"images": images})) == ran, rank


def test_jax_numpy_and_lax() -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    assert constraints_from_source(jnp.tril, _params(jnp.tril)) == ["m.ndims >= 2"]
    assert constraints_from_source(jnp.diagonal, _params(jnp.diagonal)) == ["a.ndims >= 2"]
    assert "len(start_indices) == operand.ndims" in constraints_from_source(
        jax.lax.dynamic_slice, _params(jax.lax.dynamic_slice))
    solve = constraints_from_source(jnp.linalg.solve, _params(jnp.linalg.solve))
    assert "a.ndims >= 2" in solve
    with pytest.raises(ValueError):
        jnp.tril(jnp.zeros(3))
    assert not holds(parse("m.ndims >= 2"), Env({"m": np.zeros(3)}))


def test_everything_extracted_parses() -> None:
    jax = pytest.importorskip("jax")
    count = 0
    for name in ("moveaxis", "take_along_axis", "trace", "einsum", "roll", "diff", "split"):
        fn = getattr(jax.numpy, name)
        params = _params(fn)
        for text in constraints_from_source(fn, params):
            parse(text, frozenset(params))
            count += 1
    assert count >= 2
