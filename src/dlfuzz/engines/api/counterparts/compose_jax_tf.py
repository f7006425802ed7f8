"""Compositions computed with JAX for TensorFlow APIs (see ``compose_jax`` for torch's).

Each function takes the TF API's own parameter names and runs inside the JAX worker
(64-bit types on), receiving JAX arrays: NHWC convolutions map onto
``lax.conv_general_dilated``'s dimension numbers, pools onto ``lax.reduce_window`` with
TF's ``SAME`` split, segment reductions onto ``jax.ops`` with TF's values for empty
segments (0 for sorted ones, the dtype's lowest/highest for unsorted max/min).
"""

from __future__ import annotations

from typing import Any

from dlfuzz.engines.api.counterparts import tf_signatures
from dlfuzz.engines.api.counterparts.compose_common import (
    composes,
    same_padding,
    tf_explicit_padding,
    tf_ntuple,
)
from dlfuzz.engines.api.counterparts.compose_jax import SPATIAL, lowest


# ---- TensorFlow APIs ---------------------------------------------------------------------
@composes("tensorflow.math.is_non_decreasing")
def tf_is_non_decreasing(x: Any, name: Any = None) -> Any:
    import jax.numpy as jnp

    flat = jnp.ravel(x)
    return jnp.all(flat[1:] >= flat[:-1])


@composes("tensorflow.math.is_strictly_increasing")
def tf_is_strictly_increasing(x: Any, name: Any = None) -> Any:
    import jax.numpy as jnp

    flat = jnp.ravel(x)
    return jnp.all(flat[1:] > flat[:-1])


def _tf_conv(n: int, input: Any, filters: Any, strides: Any, padding: Any, data_format: Any,
             dilations: Any) -> Any:
    import jax

    last = data_format is None or data_format.endswith("C")
    s, d = tf_ntuple(strides, n, last), tf_ntuple(dilations, n, last)
    explicit = tf_explicit_padding(padding, n, last)
    pad = explicit if explicit is not None else padding.upper()
    sp = SPATIAL[n]
    fmt = "N" + sp + "C" if last else "NC" + sp
    groups = input.shape[-1 if last else 1] // filters.shape[-2]
    return jax.lax.conv_general_dilated(input, filters, s, pad, rhs_dilation=d,
                                        feature_group_count=groups,
                                        dimension_numbers=(fmt, sp + "IO", fmt))


def _tf_pool(n: int, input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any,
             kind: str) -> Any:
    import jax
    import jax.numpy as jnp

    last = data_format is None or data_format.endswith("C")
    k, s = tf_ntuple(ksize, n, last), tf_ntuple(strides, n, last)
    first = 1 if last else 2
    spatial = [input.shape[first + i] for i in range(n)]
    if isinstance(padding, str) and padding.upper() == "SAME":
        pads = [same_padding(spatial[i], k[i], s[i]) for i in range(n)]
    else:
        pads = tf_explicit_padding(padding, n, last) or [(0, 0)] * n
    full = [(0, 0)] * input.ndim
    window, step = [1] * input.ndim, [1] * input.ndim
    for i in range(n):
        full[first + i] = pads[i]
        window[first + i], step[first + i] = k[i], s[i]
    if kind == "max":
        init = lowest(input.dtype)
        xp = jnp.pad(input, full, constant_values=init)
        return jax.lax.reduce_window(xp, jnp.array(init, input.dtype), jax.lax.max,
                                     window, step, "VALID")
    wide = input.astype(jnp.float32) if input.dtype in (jnp.float16, jnp.bfloat16) else input
    xp = jnp.pad(wide, full)  # half-precision sums accumulate in float32, as TF's do
    total = jax.lax.reduce_window(xp, jnp.array(0, wide.dtype), jax.lax.add, window, step,
                                  "VALID")
    ones = jnp.pad(jnp.ones(input.shape, jnp.float32), full)
    count = jax.lax.reduce_window(ones, jnp.array(0, jnp.float32), jax.lax.add, window, step,
                                  "VALID")
    return (total / count.astype(total.dtype)).astype(input.dtype)


def _segments(data: Any, segment_ids: Any, num_segments: int, kind: str) -> Any:
    import jax
    import jax.numpy as jnp

    ops = {"sum": jax.ops.segment_sum, "max": jax.ops.segment_max,
           "min": jax.ops.segment_min, "prod": jax.ops.segment_prod}
    flat = data.reshape((segment_ids.size,) + data.shape[segment_ids.ndim:])
    ids = segment_ids.reshape(-1)
    if kind == "mean":
        total = jax.ops.segment_sum(flat, ids, num_segments)
        count = jax.ops.segment_sum(jnp.ones(ids.shape, total.dtype), ids, num_segments)
        count = jnp.maximum(count.reshape(count.shape + (1,) * (total.ndim - 1)), 1)
        if jnp.issubdtype(total.dtype, jnp.integer):  # TF: C++ division, toward zero
            return jax.lax.div(total, count)
        return (total / count).astype(total.dtype)
    return ops[kind](flat, ids, num_segments)


def _empty_as(values: Any, ids: Any, num_segments: int, fill: Any) -> Any:
    import jax
    import jax.numpy as jnp

    count = jax.ops.segment_sum(jnp.ones(ids.size, jnp.int32), ids.reshape(-1), num_segments)
    count = count.reshape(count.shape + (1,) * (values.ndim - 1))
    return jnp.where(count > 0, values, jnp.asarray(fill, values.dtype))


def _sorted_segment(data: Any, segment_ids: Any, kind: str) -> Any:
    import jax.numpy as jnp

    n = int(jnp.max(segment_ids)) + 1 if segment_ids.size else 0
    out = _segments(data, segment_ids, n, kind)
    if kind in ("max", "min"):
        out = _empty_as(out, segment_ids, n, 0)  # TF: an empty sorted segment is 0
    return out


def _unsorted(data: Any, segment_ids: Any, num_segments: Any, kind: str) -> Any:
    import jax.numpy as jnp

    n = int(num_segments)
    out = _segments(data, segment_ids, n, kind)
    if kind in ("max", "min"):  # TF: an empty segment holds the dtype's lowest/highest
        info = jnp.finfo(out.dtype) if jnp.issubdtype(out.dtype, jnp.floating) \
            else jnp.iinfo(out.dtype)
        out = _empty_as(out, segment_ids, n, info.min if kind == "max" else info.max)
    return out


@composes("tensorflow.math.unsorted_segment_mean")
def tf_unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any,
                             name: Any = None) -> Any:
    import jax
    import jax.numpy as jnp

    n = int(num_segments)
    wide = data.astype(jnp.float64) if jnp.issubdtype(data.dtype, jnp.integer) else data
    total = _segments(wide, segment_ids, n, "sum")  # integers: Python ``/``, float64
    count = jax.ops.segment_sum(jnp.ones(segment_ids.size, total.dtype),
                                segment_ids.reshape(-1), n)
    count = jnp.maximum(count.reshape(count.shape + (1,) * (total.ndim - 1)), 1)
    return total / count


@composes("tensorflow.gather_nd", requires_default={"batch_dims": 0})
def tf_gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: Any = None) -> Any:
    depth = indices.shape[-1]
    return params[tuple(indices[..., i] for i in range(depth))]


@composes("tensorflow.gather", requires_default={"batch_dims": 0})
def tf_gather(params: Any, indices: Any, validate_indices: Any = None, axis: Any = None,
              batch_dims: int = 0, name: Any = None) -> Any:
    import jax.numpy as jnp

    return jnp.take(params, indices, axis=0 if axis is None else int(axis))


@composes("tensorflow.one_hot")
def tf_one_hot(indices: Any, depth: int, on_value: Any = None, off_value: Any = None,
               axis: Any = None, dtype: Any = None, name: Any = None) -> Any:
    import jax.numpy as jnp

    if dtype is None:  # TF: the on/off value's dtype (a Python int is int32), else float32
        given = on_value if on_value is not None else off_value
        dtype = jnp.float32 if given is None or isinstance(given, float) else (
            jnp.int32 if isinstance(given, int) else jnp.asarray(given).dtype)
    on = jnp.asarray(1 if on_value is None else on_value, dtype)
    off = jnp.asarray(0 if off_value is None else off_value, dtype)
    hot = indices[..., None] == jnp.arange(depth)
    out = jnp.where(hot, on, off)
    if axis is not None and axis != -1:
        out = jnp.moveaxis(out, -1, axis)
    return out


def _tf_cumulative(x: Any, axis: Any, exclusive: bool, reverse: bool, kind: str) -> Any:
    import jax
    import jax.numpy as jnp

    axis = int(axis) % max(x.ndim, 1)
    fn = {"sum": jnp.cumsum, "prod": jnp.cumprod,
          "logsumexp": lambda a, axis: jax.lax.cumlogsumexp(a, axis=axis)}[kind]
    identity = {"sum": 0, "prod": 1, "logsumexp": -jnp.inf}[kind]
    y = jnp.flip(x, axis) if reverse else x
    if exclusive:
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        y = jnp.pad(y, pad, constant_values=identity)
        y = jax.lax.slice_in_dim(y, 0, x.shape[axis], axis=axis)
    out = fn(y, axis=axis).astype(x.dtype)
    return jnp.flip(out, axis) if reverse else out


@composes("tensorflow.math.reduce_logsumexp")
def tf_reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                        name: Any = None) -> Any:
    import jax.scipy.special as jss

    axis = tuple(axis) if isinstance(axis, list | tuple) else axis
    return jss.logsumexp(input_tensor, axis=axis, keepdims=keepdims)


@composes("tensorflow.nn.softmax", "tensorflow.math.softmax")
def tf_softmax(logits: Any, axis: Any = None, name: Any = None) -> Any:
    import jax

    return jax.nn.softmax(logits, axis=-1 if axis is None else axis)


@composes("tensorflow.nn.log_softmax", "tensorflow.math.log_softmax")
def tf_log_softmax(logits: Any, axis: Any = None, name: Any = None) -> Any:
    import jax

    return jax.nn.log_softmax(logits, axis=-1 if axis is None else axis)


@composes("tensorflow.nn.l2_normalize", "tensorflow.math.l2_normalize")
def tf_l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: Any = None,
                    dim: Any = None) -> Any:
    import jax
    import jax.numpy as jnp

    axis = tuple(axis) if isinstance(axis, list | tuple) else axis
    square = jnp.sum(jnp.square(jnp.abs(x)), axis=axis, keepdims=True)
    return x * jax.lax.rsqrt(jnp.maximum(square, epsilon).astype(x.real.dtype))


@composes("tensorflow.linalg.band_part")
def tf_band_part(input: Any, num_lower: Any, num_upper: Any, name: Any = None) -> Any:
    import jax.numpy as jnp

    m, n = input.shape[-2], input.shape[-1]
    i, j = jnp.arange(m)[:, None], jnp.arange(n)[None, :]
    keep = ((num_lower < 0) | (i - j <= num_lower)) & ((num_upper < 0) | (j - i <= num_upper))
    return jnp.where(keep, input, jnp.zeros_like(input))


@composes("tensorflow.image.flip_left_right")
def tf_flip_left_right(image: Any) -> Any:
    import jax.numpy as jnp

    return jnp.flip(image, axis=-2)


@composes("tensorflow.image.flip_up_down")
def tf_flip_up_down(image: Any) -> Any:
    import jax.numpy as jnp

    return jnp.flip(image, axis=-3)


@composes("tensorflow.image.rot90")
def tf_rot90(image: Any, k: int = 1, name: Any = None) -> Any:
    import jax.numpy as jnp

    return jnp.rot90(image, k, axes=(-3, -2))


# The TF wrappers (conv, pool, segment, cumulative) over this module's helpers.
tf_signatures.install(globals())
