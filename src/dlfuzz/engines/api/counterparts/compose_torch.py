"""Compositions computed with PyTorch: TF and JAX APIs rebuilt from torch operations.

Each function takes the API's own parameter names and runs inside the torch worker,
receiving torch tensors. TF's channels-last convolutions and pools are permuted to
torch's NCHW, ``SAME`` padding (possibly asymmetric) is applied with ``F.pad`` first;
segment reductions go through ``scatter_reduce``; cumulative ops with TF's
``exclusive``/``reverse`` are flips and shifts around ``cumsum``/``logcumsumexp``.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.engines.api.counterparts import tf_signatures
from dlfuzz.engines.api.counterparts.compose_common import (
    composes,
    same_padding,
    tf_explicit_padding,
    tf_ntuple,
    window_count,
)


def _to_first(x: Any, n: int) -> Any:
    """Channels-last (N, *spatial, C) to channels-first (N, C, *spatial)."""
    return x.permute(0, x.ndim - 1, *range(1, x.ndim - 1)) if n else x


def _to_last(x: Any) -> Any:
    return x.permute(0, *range(2, x.ndim), 1)


# ---- TensorFlow: predicates, convolutions, pooling -------------------------------------
@composes("tensorflow.math.is_non_decreasing")
def tf_is_non_decreasing(x: Any, name: Any = None) -> Any:
    import torch

    flat = x.reshape(-1)
    return torch.all(flat[1:] >= flat[:-1])


@composes("tensorflow.math.is_strictly_increasing")
def tf_is_strictly_increasing(x: Any, name: Any = None) -> Any:
    import torch

    flat = x.reshape(-1)
    return torch.all(flat[1:] > flat[:-1])


def _tf_conv(n: int, input: Any, filters: Any, strides: Any, padding: Any, data_format: Any,
             dilations: Any) -> Any:
    import torch
    import torch.nn.functional as F

    last = data_format is None or data_format.endswith("C")
    s, d = tf_ntuple(strides, n, last), tf_ntuple(dilations, n, last)
    x = _to_first(input, n) if last else input
    spatial = x.shape[2:]
    k = filters.shape[:n]
    explicit = tf_explicit_padding(padding, n, last)
    if explicit is None:
        explicit = ([same_padding(spatial[i], k[i], s[i], d[i]) for i in range(n)]
                    if padding.upper() == "SAME" else [(0, 0)] * n)
    out = [window_count(spatial[i], k[i], s[i], d[i], *explicit[i]) for i in range(n)]
    if x.numel() == 0 or 0 in out:  # torch refuses empty convolutions; the result is empty
        empty = torch.zeros((x.shape[0], filters.shape[-1], *out), dtype=x.dtype)
        return _to_last(empty) if last else empty
    flat = [v for pair in reversed(explicit) for v in pair]
    x = F.pad(x, flat)
    w = filters.permute(n + 1, n, *range(n))  # (*k, I, O) -> (O, I, *k)
    groups = x.shape[1] // w.shape[1]
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    out = conv(x, w, None, s, 0, d, groups)
    return _to_last(out) if last else out


def _tf_pool(n: int, input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any,
             kind: str) -> Any:
    import torch
    import torch.nn.functional as F

    last = data_format is None or data_format.endswith("C")
    k, s = tf_ntuple(ksize, n, last), tf_ntuple(strides, n, last)
    x = _to_first(input, n) if last else input
    spatial = x.shape[2:]
    if isinstance(padding, str) and padding.upper() == "SAME":
        pads = [same_padding(spatial[i], k[i], s[i]) for i in range(n)]
    else:
        pads = tf_explicit_padding(padding, n, last) or [(0, 0)] * n
    out = [window_count(spatial[i], k[i], s[i], 1, *pads[i]) for i in range(n)]
    if x.numel() == 0 or 0 in out:  # torch refuses empty pooling; the result is empty
        empty = torch.zeros((*x.shape[:2], *out), dtype=x.dtype)
        return _to_last(empty) if last else empty
    if x.dtype in (torch.float16, torch.bfloat16):  # accumulate as TF does, in float32
        return _tf_pool(n, input.float(), ksize, strides, padding, data_format,
                        kind).to(x.dtype)
    flat = [v for pair in reversed(pads) for v in pair]
    if kind == "max":
        low = float("-inf") if x.dtype.is_floating_point else torch.iinfo(x.dtype).min
        out = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[n](
            F.pad(x, flat, value=low), k, s)
    else:
        pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[n]
        total = pool(F.pad(x, flat), k, s)
        ones = F.pad(torch.ones((1, 1) + tuple(spatial), dtype=x.dtype), flat)
        out = total / pool(ones, k, s)  # TF's average leaves the padding out
    return _to_last(out) if last else out


# ---- TensorFlow: segments, gathers, one-hot ------------------------------------------------
def _segment(data: Any, segment_ids: Any, num: int, kind: str, empty: Any,
             true_mean: bool = False) -> Any:
    import torch

    ids = segment_ids.reshape(-1).long()
    flat = data.reshape((ids.numel(),) + tuple(data.shape[segment_ids.ndim:]))
    keep = (ids >= 0) & (ids < num)
    ids, flat = ids[keep], flat[keep]
    shape = (num,) + tuple(flat.shape[1:])
    index = ids.reshape((-1,) + (1,) * (flat.ndim - 1)).expand_as(flat)
    count = torch.zeros(num, dtype=torch.long).index_add(0, ids, torch.ones_like(ids))
    count = count.reshape((-1,) + (1,) * (len(shape) - 1))
    if kind == "mean":
        total = torch.zeros(shape, dtype=data.dtype).index_add(0, ids, flat)
        if data.dtype.is_floating_point or data.dtype.is_complex:
            return torch.where(count > 0, total / count.clamp(min=1).to(total.dtype), 0)
        if true_mean:  # unsorted_segment_mean is Python ``/``: float64 for integers
            return total.double() / count.clamp(min=1).double()
        # the sorted kernel's integer mean is C++ integer division: toward zero
        return torch.div(total, count.clamp(min=1), rounding_mode="trunc").to(data.dtype)
    reduce = {"sum": "sum", "max": "amax", "min": "amin", "prod": "prod"}[kind]
    start = {"sum": 0, "prod": 1}.get(kind, empty)
    out = torch.full(shape, start, dtype=data.dtype)
    out = out.scatter_reduce(0, index, flat, reduce=reduce, include_self=False)
    return torch.where(count > 0, out, torch.full_like(out, empty))


def _limits(dtype: Any) -> tuple[Any, Any]:
    import torch

    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    return info.min, info.max


def _sorted_segment(data: Any, segment_ids: Any, kind: str) -> Any:
    num = int(segment_ids.max()) + 1 if segment_ids.numel() else 0
    return _segment(data, segment_ids, num, kind, 1 if kind == "prod" else 0)


def _unsorted(data: Any, segment_ids: Any, num_segments: Any, kind: str) -> Any:
    """TF's unsorted segment reduction: an empty segment holds the reduction's identity
    (the dtype's lowest for max, highest for min)."""
    empty = {"sum": 0, "prod": 1}.get(kind)
    if empty is None:
        empty = _limits(data.dtype)[0 if kind == "max" else 1]
    return _segment(data, segment_ids, int(num_segments), kind, empty)


@composes("tensorflow.math.unsorted_segment_mean")
def tf_unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any,
                             name: Any = None) -> Any:
    return _segment(data, segment_ids, int(num_segments), "mean", 0, true_mean=True)


@composes("tensorflow.gather_nd", requires_default={"batch_dims": 0})
def tf_gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: Any = None) -> Any:
    idx = indices.long()
    return params[tuple(idx[..., i] for i in range(idx.shape[-1]))]


@composes("tensorflow.gather", requires_default={"batch_dims": 0})
def tf_gather(params: Any, indices: Any, validate_indices: Any = None, axis: Any = None,
              batch_dims: int = 0, name: Any = None) -> Any:
    axis = 0 if axis is None else int(axis) % params.ndim
    idx = indices.long()
    out = params.index_select(axis, idx.reshape(-1))
    return out.reshape(tuple(params.shape[:axis]) + tuple(idx.shape)
                       + tuple(params.shape[axis + 1:]))


@composes("tensorflow.one_hot")
def tf_one_hot(indices: Any, depth: int, on_value: Any = None, off_value: Any = None,
               axis: Any = None, dtype: Any = None, name: Any = None) -> Any:
    import torch

    if dtype is None:  # TF: the on/off value's dtype (a Python int is int32), else float32
        given = on_value if on_value is not None else off_value
        dtype = torch.float32 if given is None or isinstance(given, float) else (
            torch.int32 if isinstance(given, int) else given.dtype)
    on = torch.as_tensor(1 if on_value is None else on_value).to(dtype)
    off = torch.as_tensor(0 if off_value is None else off_value).to(dtype)
    hot = indices.long()[..., None] == torch.arange(int(depth))
    out = torch.where(hot, on, off)
    if axis is not None and axis != -1:
        out = torch.movedim(out, -1, axis)
    return out


# ---- TensorFlow: cumulative and reductions --------------------------------------------------
def _tf_cumulative(x: Any, axis: Any, exclusive: bool, reverse: bool, kind: str) -> Any:
    import torch
    import torch.nn.functional as F

    if x.ndim == 0:
        x1 = x.reshape(1)
        return _tf_cumulative(x1, 0, exclusive, reverse, kind).reshape(())
    axis = int(axis) % x.ndim
    y = torch.flip(x, (axis,)) if reverse else x
    if exclusive:
        identity = {"sum": 0.0, "prod": 1.0, "logsumexp": float("-inf")}[kind]
        moved = torch.movedim(y, axis, -1)
        moved = F.pad(moved, (1, 0), value=identity)[..., :-1]
        y = torch.movedim(moved, -1, axis)
    low = x.dtype in (torch.float16, torch.bfloat16)  # accumulate in float32, as TF does
    wide = y.float() if low else y
    if kind == "sum":
        out = torch.cumsum(wide, axis, dtype=wide.dtype)
    elif kind == "prod":
        out = torch.cumprod(wide, axis, dtype=wide.dtype)
    else:
        out = torch.logcumsumexp(wide, axis)
    out = out.to(x.dtype)
    return torch.flip(out, (axis,)) if reverse else out


def _dims(x: Any, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(x.ndim))
    if isinstance(axis, list | tuple):
        return tuple(int(a) for a in axis)
    return (int(axis),)


@composes("tensorflow.math.reduce_logsumexp")
def tf_reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                        name: Any = None) -> Any:
    import torch

    return torch.logsumexp(input_tensor, _dims(input_tensor, axis), keepdim=keepdims)


@composes("tensorflow.math.reduce_euclidean_norm")
def tf_reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                             name: Any = None) -> Any:
    import torch

    if not (input_tensor.dtype.is_floating_point or input_tensor.dtype.is_complex):
        return torch.sqrt(torch.sum(input_tensor * input_tensor, _dims(input_tensor, axis),
                                    keepdim=keepdims).double()).to(input_tensor.dtype)
    return torch.linalg.vector_norm(input_tensor, 2, _dims(input_tensor, axis),
                                    keepdim=keepdims)


@composes("tensorflow.nn.softmax", "tensorflow.math.softmax")
def tf_softmax(logits: Any, axis: Any = None, name: Any = None) -> Any:
    import torch

    return torch.softmax(logits, -1 if axis is None else int(axis))


@composes("tensorflow.nn.log_softmax", "tensorflow.math.log_softmax")
def tf_log_softmax(logits: Any, axis: Any = None, name: Any = None) -> Any:
    import torch

    return torch.log_softmax(logits, -1 if axis is None else int(axis))


@composes("tensorflow.nn.l2_normalize", "tensorflow.math.l2_normalize")
def tf_l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: Any = None,
                    dim: Any = None) -> Any:
    import torch

    square = torch.sum(torch.abs(x) ** 2, _dims(x, axis), keepdim=True)
    return x * torch.rsqrt(torch.clamp(square, min=epsilon))


@composes("tensorflow.nn.moments", requires_default={"shift": None})
def tf_moments(x: Any, axes: Any, shift: Any = None, keepdims: bool = False,
               name: Any = None) -> Any:
    import torch

    dims = _dims(x, axes)
    mean = torch.mean(x, dims, keepdim=True)
    var = torch.mean(torch.square(x - mean), dims, keepdim=keepdims)
    return (mean if keepdims else mean.squeeze(dims)), var


@composes("tensorflow.nn.bias_add")
def tf_bias_add(value: Any, bias: Any, data_format: Any = None, name: Any = None) -> Any:
    if data_format is not None and data_format.startswith("NC"):
        return value + bias.reshape((-1,) + (1,) * (value.ndim - 2))
    return value + bias


@composes("tensorflow.linalg.band_part")
def tf_band_part(input: Any, num_lower: Any, num_upper: Any, name: Any = None) -> Any:
    import torch

    m, n = input.shape[-2], input.shape[-1]
    i = torch.arange(m).reshape(-1, 1)
    j = torch.arange(n).reshape(1, -1)
    lower, upper = int(num_lower), int(num_upper)
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return torch.where(keep, input, torch.zeros_like(input))


@composes("tensorflow.math.top_k", "tensorflow.nn.top_k", requires_default={"sorted": True})
def tf_top_k(input: Any, k: int = 1, sorted: bool = True, index_type: Any = None,
             name: Any = None) -> Any:
    import torch

    # A stable descending sort: among equal values the lower index first, as TF does.
    values, indices = torch.sort(input, dim=-1, descending=True, stable=True)
    k = int(k)
    return values[..., :k], indices[..., :k].to(
        index_type if index_type is not None else torch.int32)


@composes("tensorflow.image.flip_left_right")
def tf_flip_left_right(image: Any) -> Any:
    import torch

    return torch.flip(image, (-2,))


@composes("tensorflow.image.flip_up_down")
def tf_flip_up_down(image: Any) -> Any:
    import torch

    return torch.flip(image, (-3,))


@composes("tensorflow.image.rot90")
def tf_rot90(image: Any, k: int = 1, name: Any = None) -> Any:
    import torch

    return torch.rot90(image, int(k), (-3, -2))


@composes("tensorflow.image.rgb_to_grayscale")
def tf_rgb_to_grayscale(images: Any, name: Any = None) -> Any:
    import torch

    weights = torch.tensor([0.2989, 0.5870, 0.1140], dtype=torch.float32)
    floating = images.dtype.is_floating_point
    top = 1.0 if floating else _int_max(images.dtype)
    x = images if floating else images.float() * (1.0 / top)  # TF convert_image_dtype
    gray = torch.tensordot(x, weights.to(x.dtype), dims=([-1], [0])).unsqueeze(-1)
    if floating:
        return gray
    low = float(torch.iinfo(images.dtype).min)
    return torch.clamp(gray * (top + 0.5), low, top).to(images.dtype)  # saturate_cast


def _int_max(dtype: Any) -> float:
    import torch

    return float(torch.iinfo(dtype).max)


# ---- JAX APIs ----------------------------------------------------------------------------
def _lax_cumulative(operand: Any, axis: int, reverse: bool, kind: str) -> Any:
    import torch

    if operand.ndim == 0:
        return operand
    axis = int(axis) % operand.ndim
    x = torch.flip(operand, (axis,)) if reverse else operand
    if kind == "sum":
        out = torch.cumsum(x, axis, dtype=operand.dtype)
    elif kind == "prod":
        out = torch.cumprod(x, axis, dtype=operand.dtype)
    elif kind == "logsumexp":
        out = torch.logcumsumexp(x, axis)
    elif kind == "max":
        out = torch.cummax(x, axis).values
    else:
        out = torch.cummin(x, axis).values
    return torch.flip(out, (axis,)) if reverse else out


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


@composes("jax.lax.cummin")
def lax_cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    return _lax_cumulative(operand, axis, reverse, "min")


@composes("jax.nn.gelu")
def jax_gelu(x: Any, approximate: bool = True) -> Any:
    import torch.nn.functional as F

    return F.gelu(x, approximate="tanh" if approximate else "none")


@composes("jax.nn.one_hot")
def jax_one_hot(x: Any, num_classes: int, dtype: Any = None, axis: Any = -1) -> Any:
    import torch

    dtype = torch.float64 if dtype is None else dtype  # jax's default float (x64 on)
    hot = (x[..., None] == torch.arange(int(num_classes), dtype=x.dtype)).to(dtype)
    if axis != -1:
        hot = torch.movedim(hot, -1, int(axis))
    return hot


@composes("jax.numpy.searchsorted", requires_default={"sorter": None})
def jnp_searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None,
                     method: str = "scan") -> Any:
    import torch

    return torch.searchsorted(a, v, right=side == "right")


@composes("jax.lax.conv")
def lax_conv(lhs: Any, rhs: Any, window_strides: Any, padding: Any,
             precision: Any = None, preferred_element_type: Any = None) -> Any:
    import torch.nn.functional as F

    n = lhs.ndim - 2
    if isinstance(padding, str):
        if padding.upper() == "SAME":
            pads = [same_padding(lhs.shape[2 + i], rhs.shape[2 + i], window_strides[i])
                    for i in range(n)]
        else:
            pads = [(0, 0)] * n
    else:
        pads = [tuple(p) for p in padding]
    flat = [v for pair in reversed(pads) for v in pair]
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    return conv(F.pad(lhs, flat), rhs, None, tuple(window_strides), 0, 1,
                lhs.shape[1] // rhs.shape[1])


# The TF wrappers (conv, pool, segment, cumulative) over this module's helpers.
tf_signatures.install(globals())
