"""Compositions computed with JAX: torch APIs rebuilt from ``jax.lax``/``jax.numpy``.

Each function takes the API's own parameter names and runs inside the JAX worker (64-bit
types enabled), receiving JAX arrays (TF APIs are in ``compose_jax_tf``). torch's NCHW
convolutions map onto ``lax.conv_general_dilated``'s dimension numbers; pooling goes
through ``lax.reduce_window`` with torch's ``ceil_mode`` geometry from ``compose_common``.
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

SPATIAL = {1: "H", 2: "HW", 3: "DHW"}


def wide(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Compute a half-precision (float16/bfloat16) call in float32 and round the result
    back: what torch's CPU kernels and TF's do for these dtypes (accumulation in float32);
    a composition summing in half precision would differ from them by its own rounding."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        import jax.numpy as jnp

        half = (jnp.float16, jnp.bfloat16)
        low = [v.dtype for v in (*args, *kwargs.values())
               if hasattr(v, "dtype") and v.dtype in half]
        if not low:
            return fn(*args, **kwargs)

        def up(v: Any) -> Any:
            return v.astype(jnp.float32) if hasattr(v, "dtype") and v.dtype in half else v

        out = fn(*map(up, args), **{k: up(v) for k, v in kwargs.items()})
        return out.astype(low[0]) if out.dtype == jnp.float32 else out
    return run


def lowest(dtype: Any) -> Any:
    import jax.numpy as jnp

    if jnp.issubdtype(dtype, jnp.floating):
        return -jnp.inf
    return jnp.iinfo(dtype).min


# ---- torch.nn.functional convolutions and pooling -----------------------------------------
def _torch_conv(n: int, input: Any, weight: Any, bias: Any, stride: Any, padding: Any,
                dilation: Any, groups: int) -> Any:
    import jax

    x = input[None] if input.ndim == n + 1 else input
    s, d = ntuple(stride, n), ntuple(dilation, n)
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * n
        else:  # torch 'same': total d*(k-1), the smaller half before
            pads = [(d[i] * (weight.shape[2 + i] - 1) // 2,
                     d[i] * (weight.shape[2 + i] - 1) - d[i] * (weight.shape[2 + i] - 1) // 2)
                    for i in range(n)]
    else:
        pads = [(p, p) for p in ntuple(padding, n)]
    sp = SPATIAL[n]
    if x.shape[1] == 0 or weight.shape[1] == 0:
        # No input channels: every output is the empty sum plus the bias, with the
        # weight's output channels (torch 2.13 returns 0 channels here: a torch bug that
        # validation records as outvoted when the TF composition agrees with this one).
        import jax.numpy as jnp

        size = [window_count(x.shape[2 + i], weight.shape[2 + i], s[i], d[i], *pads[i])
                for i in range(n)]
        out = jnp.zeros((x.shape[0], weight.shape[0], *size), x.dtype)
    else:
        out = jax.lax.conv_general_dilated(
            x, weight, s, pads, rhs_dilation=d, feature_group_count=groups,
            dimension_numbers=("NC" + sp, "OI" + sp, "NC" + sp))
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * n)
    return out[0] if input.ndim == n + 1 else out


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


@composes("torch.nn.functional.conv3d")
@wide
def torch_conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
    return _torch_conv(3, input, weight, bias, stride, padding, dilation, groups)


def _windows(x: Any, n: int, kernel: Any, stride: Any, padding: Any, dilation: Any,
             ceil_mode: bool, fill: Any) -> tuple[Any, tuple[int, ...], tuple[int, ...],
                                                   tuple[int, ...]]:
    """x padded for torch pooling (and cut where the floor drops the tail)."""
    import jax.numpy as jnp

    k = ntuple(kernel, n)
    s = ntuple(stride, n) if stride is not None and stride != [] and stride != () else k
    p, d = ntuple(padding, n), ntuple(dilation, n)
    lead = x.ndim - n
    pads, cut = [(0, 0)] * lead, [slice(None)] * lead
    for i in range(n):
        _, after = pool_geometry(x.shape[lead + i], k[i], s[i], p[i], d[i], ceil_mode)
        pads.append((p[i], max(after, 0)))
        cut.append(slice(0, p[i] + x.shape[lead + i] + after))
    xp = jnp.pad(x, pads, constant_values=fill)[tuple(cut)]
    return xp, k, s, d


def _torch_max_pool(n: int, input: Any, kernel_size: Any, stride: Any, padding: Any,
                    dilation: Any, ceil_mode: bool) -> Any:
    import jax

    init = lowest(input.dtype)
    xp, k, s, d = _windows(input, n, kernel_size, stride, padding, dilation, ceil_mode, init)
    lead = (1,) * (input.ndim - n)
    return jax.lax.reduce_window(xp, jax.numpy.array(init, input.dtype), jax.lax.max,
                                 lead + k, lead + s, "VALID", window_dilation=lead + d)


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
    import jax
    import jax.numpy as jnp

    xp, k, s, d = _windows(input, n, kernel_size, stride, padding, 1, ceil_mode, 0)
    lead = (1,) * (input.ndim - n)
    total = jax.lax.reduce_window(xp, jnp.array(0, input.dtype), jax.lax.add, lead + k,
                                  lead + s, "VALID")
    if divisor_override:
        return total / divisor_override
    count = _count_mask(input.shape[input.ndim - n:], k, s, ntuple(padding, n), ceil_mode,
                        count_include_pad)
    count = jax.lax.reduce_window(count, jnp.array(0, count.dtype), jax.lax.add, k, s, "VALID")
    return (total / count.astype(total.dtype)).astype(input.dtype)


def _count_mask(spatial: Any, k: Any, s: Any, p: Any, ceil_mode: bool,
                include_pad: bool) -> Any:
    """1 where a torch average window counts an element: the input, the padding too with
    ``count_include_pad``, never the overhang ``ceil_mode`` adds past the padding."""
    import jax.numpy as jnp

    mask = jnp.ones((), jnp.float32)
    for i, size in enumerate(spatial):
        _, after = pool_geometry(size, k[i], s[i], p[i], 1, ceil_mode)
        edge = 1.0 if include_pad else 0.0
        line = jnp.concatenate([jnp.full(p[i], edge), jnp.ones(size),
                                jnp.full(p[i], edge), jnp.zeros(max(after - p[i], 0))])
        line = line[: p[i] + size + after].astype(jnp.float32)
        mask = mask[..., None] * line
    return mask


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
@composes("torch.nn.functional.softmax", "torch.softmax", "torch.special.softmax")
@wide
def torch_softmax(input: Any, dim: Any = None, dtype: Any = None, _stacklevel: int = 3) -> Any:
    import jax

    x = input.astype(dtype) if dtype is not None else input
    axis = torch_softmax_dim(x.ndim, dim)
    if x.ndim == 0:
        return jax.nn.softmax(x[None], axis=0)[0]
    return jax.nn.softmax(x, axis=axis)


@composes("torch.nn.functional.log_softmax", "torch.log_softmax", "torch.special.log_softmax")
@wide
def torch_log_softmax(input: Any, dim: Any = None, dtype: Any = None,
                      _stacklevel: int = 3) -> Any:
    import jax

    x = input.astype(dtype) if dtype is not None else input
    axis = torch_softmax_dim(x.ndim, dim)
    if x.ndim == 0:
        return jax.nn.log_softmax(x[None], axis=0)[0]
    return jax.nn.log_softmax(x, axis=axis)


@composes("torch.nn.functional.softmin")
@wide
def torch_softmin(input: Any, dim: Any = None, dtype: Any = None, _stacklevel: int = 3) -> Any:
    return torch_softmax(-(input.astype(dtype) if dtype is not None else input), dim)


@composes("torch.nn.functional.normalize")
@wide
def torch_normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
                    out: Any = None) -> Any:
    import jax.numpy as jnp

    if input.ndim == 0:
        return torch_normalize(input[None], p, 0, eps)[0]
    a = jnp.abs(input)
    if p == float("inf"):
        norm = jnp.max(a, axis=dim, keepdims=True)
    elif p == float("-inf"):
        norm = jnp.min(a, axis=dim, keepdims=True)
    elif p == 0:
        norm = jnp.sum(a != 0, axis=dim, keepdims=True).astype(input.dtype)
    else:
        norm = jnp.sum(a ** p, axis=dim, keepdims=True) ** (1.0 / p)
    return input / jnp.maximum(norm, eps)


@composes("torch.nn.functional.layer_norm")
@wide
def torch_layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
                     eps: float = 1e-5) -> Any:
    import jax.numpy as jnp

    n = len(normalized_shape) if isinstance(normalized_shape, list | tuple) else 1
    axes = tuple(range(input.ndim - n, input.ndim))
    mean = jnp.mean(input, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(input - mean), axis=axes, keepdims=True)
    out = (input - mean) / jnp.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


@composes("torch.nn.functional.one_hot")
def torch_one_hot(input: Any = None, num_classes: int = -1, tensor: Any = None) -> Any:
    import jax.numpy as jnp

    x = input if input is not None else tensor  # the docs say tensor, the binding input
    n = int(jnp.max(x)) + 1 if num_classes == -1 else num_classes
    return (x[..., None] == jnp.arange(n)).astype(jnp.int64)


@composes("torch.nn.functional.pad")
def torch_pad(input: Any, pad: Any, mode: str = "constant", value: Any = None) -> Any:
    import jax.numpy as jnp

    pairs = torch_pad_pairs(pad, input.ndim)
    if mode == "constant":
        if value is not None and jnp.issubdtype(input.dtype, jnp.integer):
            value = int(value)  # torch casts the fill value: truncation
        grow = [(max(a, 0), max(b, 0)) for a, b in pairs]
        out = jnp.pad(input, grow, constant_values=0 if value is None else value)
        cut = tuple(slice(-min(a, 0), out.shape[i] + min(b, 0))
                    for i, (a, b) in enumerate(pairs))
        return out[cut]
    jmode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    return jnp.pad(input, pairs, mode=jmode)


@composes("torch.nn.functional.embedding", requires_default={"max_norm": None})
def torch_embedding(input: Any, weight: Any, padding_idx: Any = None, max_norm: Any = None,
                    norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                    sparse: bool = False) -> Any:
    import jax.numpy as jnp

    return jnp.take(weight, input, axis=0)


@composes("torch.nn.functional.linear")
@wide
def torch_linear(input: Any, weight: Any, bias: Any = None) -> Any:
    import jax.numpy as jnp

    out = jnp.matmul(input, weight.T)
    return out if bias is None else out + bias


def _reduce(loss: Any, reduction: str) -> Any:
    import jax.numpy as jnp

    if reduction == "mean":
        return jnp.mean(loss)
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


_LOSS_DEFAULTS = {"size_average": None, "reduce": None}


@composes("torch.nn.functional.mse_loss", requires_default=_LOSS_DEFAULTS)
@wide
def torch_mse_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", weight: Any = None) -> Any:
    import jax.numpy as jnp

    return _reduce(jnp.square(input - target), reduction)


@composes("torch.nn.functional.l1_loss", requires_default=_LOSS_DEFAULTS)
@wide
def torch_l1_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
                  reduction: str = "mean", weight: Any = None) -> Any:
    import jax.numpy as jnp

    return _reduce(jnp.abs(input - target), reduction)


@composes("torch.nn.functional.smooth_l1_loss", requires_default=_LOSS_DEFAULTS)
@wide
def torch_smooth_l1_loss(input: Any, target: Any, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean",
                         beta: float = 1.0) -> Any:
    import jax.numpy as jnp

    d = jnp.abs(input - target)
    loss = d if beta == 0 else jnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


@composes("torch.nn.functional.huber_loss")
@wide
def torch_huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0,
                     weight: Any = None) -> Any:
    import jax.numpy as jnp

    d = jnp.abs(input - target)
    return _reduce(jnp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


@composes("torch.nn.functional.gelu")
@wide
def torch_gelu(input: Any, approximate: str = "none") -> Any:
    import jax

    return jax.nn.gelu(input, approximate=approximate == "tanh")


@composes("torch.nn.functional.hardshrink")
def torch_hardshrink(input: Any, lambd: float = 0.5) -> Any:
    import jax.numpy as jnp

    # Zero where |x| <= lambd, else x: NaN stays NaN as in torch (NaN <= lambd is false).
    return jnp.where(jnp.abs(input) <= lambd, jnp.zeros_like(input), input)


@composes("torch.nn.functional.softshrink")
def torch_softshrink(input: Any, lambd: float = 0.5) -> Any:
    import jax.numpy as jnp

    # Zero where |x| <= lambd, else x shrunk toward 0: NaN stays NaN as in torch.
    return jnp.where(jnp.abs(input) <= lambd, jnp.zeros_like(input),
                     input - jnp.sign(input) * lambd)


@composes("torch.nn.functional.tanhshrink")
def torch_tanhshrink(input: Any) -> Any:
    import jax.numpy as jnp

    return input - jnp.tanh(input)


@composes("torch.nn.functional.threshold", requires_default={"inplace": False})
def torch_threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Any:
    import jax.numpy as jnp

    if jnp.issubdtype(input.dtype, jnp.integer):  # torch casts both scalars: truncation
        threshold, value = int(threshold), int(value)
    # torch: value where x <= threshold, else x, so a NaN input stays NaN.
    return jnp.where(input <= threshold, jnp.asarray(value, input.dtype), input)


@composes("torch.nn.functional.prelu")
def torch_prelu(input: Any, weight: Any) -> Any:
    import jax.numpy as jnp

    w = weight
    if input.ndim >= 2 and weight.size > 1:
        w = weight.reshape((1, -1) + (1,) * (input.ndim - 2))
    return jnp.where(input >= 0, input, w * input)


@composes("torch.nn.functional.pixel_shuffle")
def torch_pixel_shuffle(input: Any, upscale_factor: int) -> Any:
    import jax.numpy as jnp

    r = upscale_factor
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = jnp.transpose(x, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape(*lead, c // (r * r), h * r, w * r)


@composes("torch.nn.functional.pixel_unshuffle")
def torch_pixel_unshuffle(input: Any, downscale_factor: int) -> Any:
    import jax.numpy as jnp

    r = downscale_factor
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = jnp.transpose(x, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape(*lead, c * r * r, h // r, w // r)


@composes("torch.nn.functional.cosine_similarity")
@wide
def torch_cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    import jax.numpy as jnp

    a, b = jnp.broadcast_arrays(x1, x2)
    na = jnp.maximum(jnp.sqrt(jnp.sum(a * a, axis=dim, keepdims=True)), eps)
    nb = jnp.maximum(jnp.sqrt(jnp.sum(b * b, axis=dim, keepdims=True)), eps)
    return jnp.sum((a / na) * (b / nb), axis=dim)


@composes("torch.nn.functional.pairwise_distance")
@wide
def torch_pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6,
                            keepdim: bool = False) -> Any:
    import jax.numpy as jnp

    d = jnp.abs(x1 - x2 + eps)
    axis = -1 if d.ndim else None
    if p == float("inf"):
        return jnp.max(d, axis=axis, keepdims=keepdim)
    if p == 0:
        return jnp.sum(d != 0, axis=axis, keepdims=keepdim).astype(d.dtype)
    return jnp.sum(d ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)


@composes("torch.logcumsumexp", "torch.special.logcumsumexp")
@wide
def torch_logcumsumexp(input: Any, dim: int) -> Any:
    import jax

    if input.ndim == 0:
        return input
    return jax.lax.cumlogsumexp(input, axis=dim % input.ndim)
