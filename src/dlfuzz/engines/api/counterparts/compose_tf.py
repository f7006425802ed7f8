"""Compositions computed with TensorFlow: torch and JAX APIs rebuilt from ``tf`` operations.

Each function takes the API's own parameter names and runs inside the TF worker,
receiving TF tensors. torch's NCHW convolutions are transposed to NHWC for ``tf.nn``
(stride and dilation together, which TF's CPU kernels refuse, become a stride-1 dilated
convolution subsampled afterwards); torch pooling is a maximum/sum over strided slices
of the padded input (``ceil_mode`` geometry from ``compose_common``), a different
algorithm from either library's pooling kernels.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from dlfuzz.engines.api.counterparts.compose_common import (
    composes,
    ntuple,
    pool_geometry,
    torch_pad_pairs,
    torch_softmax_dim,
    window_count,
)


def wide(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Compute a half-precision (float16/bfloat16) call in float32 and round the result
    back, as torch's CPU kernels accumulate these dtypes (see ``compose_jax.wide``)."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        import tensorflow as tf

        half = (tf.float16, tf.bfloat16)
        low = [v.dtype for v in (*args, *kwargs.values())
               if isinstance(v, tf.Tensor) and v.dtype in half]
        if not low:
            return fn(*args, **kwargs)

        def up(v: Any) -> Any:
            return tf.cast(v, tf.float32) if isinstance(v, tf.Tensor) and v.dtype in half \
                else v

        out = fn(*map(up, args), **{k: up(v) for k, v in kwargs.items()})
        return tf.cast(out, low[0]) if out.dtype == tf.float32 else out
    return run


def _perm_last(ndim: int) -> list[int]:
    return [0, *range(2, ndim), 1]


def _perm_first(ndim: int) -> list[int]:
    return [0, ndim - 1, *range(1, ndim - 1)]


# ---- torch.nn.functional convolutions and pooling --------------------------------------
def _torch_conv(n: int, input: Any, weight: Any, bias: Any, stride: Any, padding: Any,
                dilation: Any, groups: int) -> Any:
    import tensorflow as tf

    unbatched = len(input.shape) == n + 1
    x = input[None] if unbatched else input
    if x.shape[0] == 0:
        # TF 2.21's convolution returns its *input's* shape for an empty batch (a TF bug,
        # reported by this validation); compute one zero sample and keep none of it.
        one = tf.zeros([1, *x.shape[1:]], x.dtype)
        out = _torch_conv(n, one, weight, bias, stride, padding, dilation, groups)[:0]
        return out[0] if unbatched else out
    s, d = ntuple(stride, n), ntuple(dilation, n)
    k = weight.shape[2:]
    if isinstance(padding, str):
        pads = [(0, 0)] * n if padding == "valid" else [
            (d[i] * (k[i] - 1) // 2, d[i] * (k[i] - 1) - d[i] * (k[i] - 1) // 2)
            for i in range(n)]
    else:
        pads = [(p, p) for p in ntuple(padding, n)]
    if x.shape[1] == 0 or weight.shape[1] == 0:  # no input channels: only the bias is left
        size = [window_count(x.shape[2 + i], k[i], s[i], d[i], *pads[i]) for i in range(n)]
        out = tf.zeros([x.shape[0], weight.shape[0], *size], x.dtype)
        out = out if bias is None else out + tf.reshape(bias, [1, -1] + [1] * n)
        return out[0] if unbatched else out
    x = tf.transpose(x, _perm_last(n + 2))
    x = tf.pad(x, [(0, 0), *pads, (0, 0)])
    w = tf.transpose(weight, [*range(2, n + 2), 1, 0])  # (O, I, *k) -> (*k, I, O)
    both = any(v > 1 for v in s) and any(v > 1 for v in d)
    out = tf.nn.convolution(x, w, strides=1 if both else list(s), padding="VALID",
                            dilations=list(d))
    if both:  # TF's CPU kernels take strides or dilations, not both at once
        out = out[(slice(None), *(slice(None, None, v) for v in s), slice(None))]
    out = tf.transpose(out, _perm_first(n + 2))
    if bias is not None:
        out = out + tf.reshape(bias, [1, -1] + [1] * n)
    return out[0] if unbatched else out


@composes("torch.nn.functional.conv1d")
@wide
def torch_conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
    return _torch_conv(1, input, weight, bias, stride, padding, dilation, groups)


@composes("torch.nn.functional.conv2d")
@wide
def torch_conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
    return _torch_conv(2, input, weight, bias, stride, padding, dilation, groups)


def _geometry(shape: Any, n: int, kernel: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool) -> tuple[Any, ...]:
    """torch pooling geometry: kernel, stride, padding, dilation, outputs, pads after."""
    k = ntuple(kernel, n)
    s = ntuple(stride, n) if stride is not None and stride != [] and stride != () else k
    p, d = ntuple(padding, n), ntuple(dilation, n)
    lead = len(shape) - n
    geo = [pool_geometry(shape[lead + i], k[i], s[i], p[i], d[i], ceil_mode)
           for i in range(n)]
    return k, s, p, d, [g[0] for g in geo], [g[1] for g in geo]


def _views(xp: Any, n: int, k: Any, s: Any, d: Any, outs: Any) -> list[Any]:
    """Every kernel offset's strided view of an already padded input."""
    import itertools

    lead = len(xp.shape) - n
    views = []
    for offset in itertools.product(*(range(v) for v in k)):
        index = [slice(None)] * lead + [
            slice(offset[i] * d[i], offset[i] * d[i] + (outs[i] - 1) * s[i] + 1, s[i])
            for i in range(n)]
        views.append(xp[tuple(index)])
    return views


def _padded(x: Any, n: int, p: Any, after: Any, fill: Any) -> Any:
    import tensorflow as tf

    lead = len(x.shape) - n
    return tf.pad(x, [(0, 0)] * lead + [(p[i], max(after[i], 0)) for i in range(n)],
                  constant_values=fill)


def _torch_max_pool(n: int, input: Any, kernel_size: Any, stride: Any, padding: Any,
                    dilation: Any, ceil_mode: bool) -> Any:
    import tensorflow as tf

    low = input.dtype.min if not input.dtype.is_floating else float("-inf")
    k, s, p, d, outs, after = _geometry(input.shape, n, kernel_size, stride, padding,
                                        dilation, ceil_mode)
    views = _views(_padded(input, n, p, after, low), n, k, s, d, outs)
    return tf.reduce_max(tf.stack(views), axis=0)


@composes("torch.nn.functional.max_pool1d", requires_default={"return_indices": False})
def torch_max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                     dilation: Any = 1, ceil_mode: bool = False,
                     return_indices: bool = False) -> Any:
    return _torch_max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode)


@composes("torch.nn.functional.max_pool2d", requires_default={"return_indices": False})
def torch_max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                     dilation: Any = 1, ceil_mode: bool = False,
                     return_indices: bool = False) -> Any:
    return _torch_max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode)


def _torch_avg_pool(n: int, input: Any, kernel_size: Any, stride: Any, padding: Any,
                    ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> Any:
    import tensorflow as tf

    k, s, p, d, outs, after = _geometry(input.shape, n, kernel_size, stride, padding, 1,
                                        ceil_mode)
    if input.dtype.is_integer:  # torch: C++ integer division of the sum, toward zero
        exact = _torch_avg_pool(n, tf.cast(input, tf.float64), kernel_size, stride, padding,
                                ceil_mode, count_include_pad, divisor_override)
        return tf.cast(exact, input.dtype)  # a float-to-int cast truncates
    total = tf.add_n(_views(_padded(input, n, p, after, 0), n, k, s, d, outs))
    if divisor_override:
        return total / tf.cast(divisor_override, total.dtype)
    # What a window counts: the input, the padding too with count_include_pad, never the
    # overhang that ceil_mode adds past the padding.
    edge = 1.0 if count_include_pad else 0.0
    spatial = input.shape[len(input.shape) - n:]
    mask = tf.ones([], total.dtype)
    for i, size in enumerate(spatial):
        line = ([edge] * p[i] + [1.0] * size + [edge] * p[i]
                + [0.0] * max(after[i] - p[i], 0))[: p[i] + size + max(after[i], 0)]
        mask = mask[..., None] * tf.constant(line, total.dtype)
    count = tf.add_n(_views(mask, n, k, s, d, outs))
    return total / count


@composes("torch.nn.functional.avg_pool1d")
def torch_avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                     ceil_mode: bool = False, count_include_pad: bool = True) -> Any:
    return _torch_avg_pool(1, input, kernel_size, stride, padding, ceil_mode,
                           count_include_pad, None)


@composes("torch.nn.functional.avg_pool2d")
def torch_avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                     ceil_mode: bool = False, count_include_pad: bool = True,
                     divisor_override: Any = None) -> Any:
    return _torch_avg_pool(2, input, kernel_size, stride, padding, ceil_mode,
                           count_include_pad, divisor_override)


# ---- torch.nn.functional: normalization, activations, losses ------------------------------
def _softmax(x: Any, dim: Any, dtype: Any, log: bool) -> Any:
    import tensorflow as tf

    if dtype is not None:
        x = tf.cast(x, dtype)
    rank = len(x.shape)
    fn = tf.nn.log_softmax if log else tf.nn.softmax
    if rank == 0:
        return fn(x[None], axis=0)[0]
    return fn(x, axis=torch_softmax_dim(rank, dim) % rank)


@composes("torch.nn.functional.softmax", "torch.softmax", "torch.special.softmax")
@wide
def torch_softmax(input: Any, dim: Any = None, dtype: Any = None, _stacklevel: int = 3) -> Any:
    return _softmax(input, dim, dtype, log=False)


@composes("torch.nn.functional.log_softmax", "torch.log_softmax", "torch.special.log_softmax")
@wide
def torch_log_softmax(input: Any, dim: Any = None, dtype: Any = None,
                      _stacklevel: int = 3) -> Any:
    return _softmax(input, dim, dtype, log=True)


@composes("torch.nn.functional.normalize")
@wide
def torch_normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
                    out: Any = None) -> Any:
    import tensorflow as tf

    if len(input.shape) == 0:
        return torch_normalize(input[None], p, 0, eps)[0]
    a = tf.abs(input)
    if p == float("inf"):
        norm = tf.reduce_max(a, axis=dim, keepdims=True)
    elif p == float("-inf"):
        norm = tf.reduce_min(a, axis=dim, keepdims=True)
    elif p == 0:
        norm = tf.cast(tf.math.count_nonzero(a, axis=dim, keepdims=True), input.dtype)
    elif p == 2:
        norm = tf.norm(input, ord="euclidean", axis=dim, keepdims=True)
    else:
        norm = tf.reduce_sum(a ** p, axis=dim, keepdims=True) ** (1.0 / p)
    return input / tf.maximum(norm, tf.cast(eps, norm.dtype))


@composes("torch.nn.functional.layer_norm")
@wide
def torch_layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
                     eps: float = 1e-5) -> Any:
    import tensorflow as tf

    n = len(normalized_shape) if isinstance(normalized_shape, list | tuple) else 1
    rank = len(input.shape)
    mean, var = tf.nn.moments(input, axes=list(range(rank - n, rank)), keepdims=True)
    return tf.nn.batch_normalization(input, mean, var, bias, weight, eps)


@composes("torch.nn.functional.one_hot")
def torch_one_hot(input: Any = None, num_classes: int = -1, tensor: Any = None) -> Any:
    import tensorflow as tf

    x = input if input is not None else tensor  # the docs say tensor, the binding input
    n = int(tf.reduce_max(x)) + 1 if num_classes == -1 else num_classes
    return tf.one_hot(x, n, dtype=tf.int64)


@composes("torch.nn.functional.pad")
def torch_pad(input: Any, pad: Any, mode: str = "constant", value: Any = None) -> Any:
    import tensorflow as tf

    rank = len(input.shape)
    pairs = torch_pad_pairs(pad, rank)
    if mode == "constant":
        if value is not None and input.dtype.is_integer:
            value = int(value)  # torch casts the fill value: truncation
        grown = tf.pad(input, [(max(a, 0), max(b, 0)) for a, b in pairs],
                       constant_values=0 if value is None else value)
        return grown[tuple(slice(-min(a, 0), grown.shape[i] + min(b, 0))
                           for i, (a, b) in enumerate(pairs))]
    if mode == "reflect":
        return tf.pad(input, pairs, mode="REFLECT")
    out = input
    for axis, (a, b) in enumerate(pairs):
        if not a and not b:
            continue
        size = out.shape[axis]
        if mode == "replicate":
            index = [0] * a + list(range(size)) + [size - 1] * b
        else:  # circular
            index = [(i - a) % size for i in range(size + a + b)]
        out = tf.gather(out, index, axis=axis)
    return out


@composes("torch.logcumsumexp", "torch.special.logcumsumexp")
@wide
def torch_logcumsumexp(input: Any, dim: int) -> Any:
    import tensorflow as tf

    if len(input.shape) == 0:
        return input
    return tf.math.cumulative_logsumexp(input, axis=dim)


@composes("torch.nn.functional.linear")
@wide
def torch_linear(input: Any, weight: Any, bias: Any = None) -> Any:
    import tensorflow as tf

    if len(weight.shape) == 1:
        out = tf.tensordot(input, weight, axes=[[-1], [0]])
    else:
        out = tf.tensordot(input, weight, axes=[[-1], [1]])
    return out if bias is None else out + bias


@composes("torch.nn.functional.embedding", requires_default={"max_norm": None})
def torch_embedding(input: Any, weight: Any, padding_idx: Any = None, max_norm: Any = None,
                    norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                    sparse: bool = False) -> Any:
    import tensorflow as tf

    return tf.nn.embedding_lookup(weight, input)


@composes("torch.nn.functional.gelu")
@wide
def torch_gelu(input: Any, approximate: str = "none") -> Any:
    import tensorflow as tf

    return tf.nn.gelu(input, approximate=approximate == "tanh")


def _reduce(loss: Any, reduction: str) -> Any:
    import tensorflow as tf

    if reduction == "mean":
        return tf.reduce_mean(loss)
    if reduction == "sum":
        return tf.reduce_sum(loss)
    return loss


_LOSS_DEFAULTS = {"size_average": None, "reduce": None}


@composes("torch.nn.functional.mse_loss", requires_default=_LOSS_DEFAULTS)
@wide
def torch_mse_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", weight: Any = None) -> Any:
    import tensorflow as tf

    return _reduce(tf.math.squared_difference(input, target), reduction)


@composes("torch.nn.functional.l1_loss", requires_default=_LOSS_DEFAULTS)
@wide
def torch_l1_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
                  reduction: str = "mean", weight: Any = None) -> Any:
    import tensorflow as tf

    return _reduce(tf.abs(input - target), reduction)


@composes("torch.nn.functional.hardshrink")
def torch_hardshrink(input: Any, lambd: float = 0.5) -> Any:
    import tensorflow as tf

    # Zero where |x| <= lambd, else x: NaN stays NaN as in torch (NaN <= lambd is false).
    return tf.where(tf.abs(input) <= lambd, tf.zeros_like(input), input)


@composes("torch.nn.functional.tanhshrink")
def torch_tanhshrink(input: Any) -> Any:
    import tensorflow as tf

    return input - tf.math.tanh(input)


# ---- JAX APIs ----------------------------------------------------------------------------
def _lax_cumulative(operand: Any, axis: int, reverse: bool, kind: str) -> Any:
    import tensorflow as tf

    if len(operand.shape) == 0:
        return operand
    if kind in ("max", "min"):
        axis = int(axis) % len(operand.shape)
        x = tf.reverse(operand, [axis]) if reverse else operand
        moved = tf.experimental.numpy.moveaxis(x, axis, 0)
        pick = tf.maximum if kind == "max" else tf.minimum
        out = tf.scan(pick, moved)
        out = tf.experimental.numpy.moveaxis(out, 0, axis)
        return tf.reverse(out, [axis]) if reverse else out
    fn = {"sum": tf.math.cumsum, "prod": tf.math.cumprod,
          "logsumexp": tf.math.cumulative_logsumexp}[kind]
    return fn(operand, axis=int(axis), reverse=reverse)


@composes("jax.lax.cumsum")
def lax_cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    return _lax_cumulative(operand, axis, reverse, "sum")


@composes("jax.lax.cumprod")
def lax_cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    return _lax_cumulative(operand, axis, reverse, "prod")


@composes("jax.lax.cumlogsumexp")
def lax_cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    return _lax_cumulative(operand, axis, reverse, "logsumexp")


@composes("jax.lax.cummax")
def lax_cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    return _lax_cumulative(operand, axis, reverse, "max")


@composes("jax.nn.gelu")
def jax_gelu(x: Any, approximate: bool = True) -> Any:
    import tensorflow as tf

    return tf.nn.gelu(x, approximate=bool(approximate))


@composes("jax.nn.one_hot")
def jax_one_hot(x: Any, num_classes: int, dtype: Any = None, axis: Any = -1) -> Any:
    import tensorflow as tf

    dtype = tf.float64 if dtype is None else dtype  # jax's default float (x64 on)
    hot = tf.cast(tf.equal(x[..., None], tf.range(int(num_classes), dtype=x.dtype)), dtype)
    if axis != -1:
        hot = tf.experimental.numpy.moveaxis(hot, -1, int(axis))
    return hot


@composes("jax.numpy.searchsorted", requires_default={"sorter": None})
def jnp_searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None,
                     method: str = "scan") -> Any:
    import tensorflow as tf

    flat = tf.reshape(v, [1, -1])
    out = tf.searchsorted(a[None], flat, side=side, out_type=tf.int64)
    return tf.reshape(out, tf.shape(v))


@composes("jax.lax.top_k")
def lax_top_k(operand: Any, k: int, **_: Any) -> Any:
    import tensorflow as tf

    values, indices = tf.math.top_k(operand, int(k), sorted=True)
    return values, indices


@composes("jax.ops.segment_sum", requires_default={"bucket_size": None, "mode": None})
def jax_segment_sum(data: Any, segment_ids: Any, num_segments: Any = None,
                    indices_are_sorted: bool = False, unique_indices: bool = False,
                    bucket_size: Any = None, mode: Any = None) -> Any:
    import tensorflow as tf

    if num_segments is None:
        num_segments = int(tf.reduce_max(segment_ids)) + 1
    return tf.math.unsorted_segment_sum(data, segment_ids, int(num_segments))


@composes("jax.lax.conv")
def lax_conv(lhs: Any, rhs: Any, window_strides: Any, padding: Any,
             precision: Any = None, preferred_element_type: Any = None) -> Any:
    import tensorflow as tf

    n = len(lhs.shape) - 2
    x = tf.transpose(lhs, _perm_last(n + 2))
    if isinstance(padding, str):
        mode = padding.upper()
    else:
        x = tf.pad(x, [(0, 0), *[tuple(p) for p in padding], (0, 0)])
        mode = "VALID"
    w = tf.transpose(rhs, [*range(2, n + 2), 1, 0])
    out = tf.nn.convolution(x, w, strides=list(window_strides), padding=mode)
    return tf.transpose(out, _perm_first(n + 2))



@composes("torch.nn.functional.pixel_shuffle")
def torch_pixel_shuffle(input: Any, upscale_factor: int) -> Any:
    import tensorflow as tf

    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    n = len(lead)
    x = tf.reshape(input, [*lead, c // (r * r), r, r, h, w])
    x = tf.transpose(x, [*range(n), n, n + 3, n + 1, n + 4, n + 2])
    return tf.reshape(x, [*lead, c // (r * r), h * r, w * r])


@composes("torch.nn.functional.pixel_unshuffle")
def torch_pixel_unshuffle(input: Any, downscale_factor: int) -> Any:
    import tensorflow as tf

    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    n = len(lead)
    x = tf.reshape(input, [*lead, c, h // r, r, w // r, r])
    x = tf.transpose(x, [*range(n), n, n + 2, n + 4, n + 1, n + 3])
    return tf.reshape(x, [*lead, c * r * r, h // r, w // r])


@composes("torch.nn.functional.threshold", requires_default={"inplace": False})
def torch_threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Any:
    import tensorflow as tf

    if input.dtype.is_integer:  # torch casts both scalars: truncation
        threshold, value = int(threshold), int(value)
    # torch: value where x <= threshold, else x, so a NaN input stays NaN.
    return tf.where(input <= tf.cast(threshold, input.dtype), tf.cast(value, input.dtype),
                    input)
