"""The per-API hand table of the torch extractor: checks that live in C++ kernels.

Each entry: ``params`` (LibParam fields by parameter: rank, dtypes, domain, range, values,
structures, length, count), ``constraints`` (marked ``"from": "hand"``), ``reject``
(extracted constraint texts that torch does not enforce: violate mode showed inputs
breaking them run fine), ``drop``
(parameters left at their defaults), ``no_dim_rule`` (the ``dim`` name convention does
not apply), ``specials`` (False: NaN/Inf inputs make the kernel raise, e.g. LAPACK).
Families share builders (``_conv``, ``_pool``, ``_scatter``) so one relation is written
once. Constraints state what the kernel checks; ranks, ranges and dropped parameters are
generation windows (the kernel accepts more). Entries of the second part of the table
(``torch_hints_more``) cover torch's top-level indexing, splitting and linear-algebra
functions.
"""

from __future__ import annotations

from typing import Any

F = "torch.nn.functional."
L = "torch.linalg."
FLOATS = ("float32", "float64")
REAL = ("float16", "bfloat16", "float32", "float64")
FLOAT_COMPLEX = FLOATS + ("complex64", "complex128")


def same_shape(a: str, b: str, rank: int = 4) -> list[str]:
    return [f"{a}.ndims == {b}.ndims"] + [
        f"{a}.ndims <= {i} or {a}.shape[{i}] == {b}.shape[{i}]" for i in range(rank)]


def broadcast(a: str, b: str) -> list[str]:
    return [f"{a}.ndims < {i} or {b}.ndims < {i} or {a}.shape[-{i}] == {b}.shape[-{i}] or "
            f"{a}.shape[-{i}] == 1 or {b}.shape[-{i}] == 1" for i in range(1, 5)]


def same_dtype(first: str, *others: str, optional: bool = False) -> list[str]:
    return [(f"{o} is None or " if optional else "") + f"{o}.dtype == {first}.dtype"
            for o in others]


def per_channel(x: str, *vectors: str) -> list[str]:
    """Optional 1-D tensors with one entry per channel (dimension 1) of ``x``."""
    return [f"{v} is None or ({v}.ndims == 1 and {v}.shape[0] == {x}.shape[1])"
            for v in vectors] + same_dtype(x, *vectors, optional=True)


def _conv(n: int) -> dict[str, Any]:
    cons = ["input.shape[1] == weight.shape[1] * groups", "weight.shape[0] % groups == 0",
            "bias is None or bias.shape[0] == weight.shape[0]",
            "input.dtype == weight.dtype", "bias is None or bias.dtype == input.dtype"]
    for i in range(n):
        cons.append(f"input.shape[{2 + i}] + 2 * padding >= dilation * "
                    f"(weight.shape[{2 + i}] - 1) + 1")
    return {"params": {"input": {"rank": (n + 2, n + 2)},
                       "weight": {"rank": (n + 2, n + 2)},
                       "bias": {"rank": (1, 1)},
                       "padding": {"structures": ("int",), "range": (0, 1)},
                       "dilation": {"structures": ("int",), "range": (1, 2)},
                       "stride": {"length": (n, n), "range": (1, 2)},
                       "groups": {"range": (1, 2)}},
            "constraints": cons}


def _conv_t(n: int) -> dict[str, Any]:
    cons = ["input.shape[1] == weight.shape[0]", "weight.shape[0] % groups == 0",
            "bias is None or bias.shape[0] == weight.shape[1] * groups",
            "input.dtype == weight.dtype", "bias is None or bias.dtype == input.dtype",
            "output_padding < stride or output_padding < dilation"]
    for i in range(n):
        cons.append(f"(input.shape[{2 + i}] - 1) * stride - 2 * padding + dilation * "
                    f"(weight.shape[{2 + i}] - 1) + output_padding + 1 >= 1")
    return {"params": {"input": {"rank": (n + 2, n + 2)},
                       "weight": {"rank": (n + 2, n + 2)},
                       "bias": {"rank": (1, 1)},
                       "padding": {"structures": ("int",), "range": (0, 1)},
                       "dilation": {"structures": ("int",), "range": (1, 2)},
                       "stride": {"structures": ("int",), "range": (1, 2)},
                       "output_padding": {"structures": ("int",), "range": (0, 1)},
                       "groups": {"range": (1, 2)}},
            "constraints": cons}


def _pool(n: int, dilation: bool = True) -> dict[str, Any]:
    """max/avg pooling: a window (with dilation) fits the padded input; padding is at
    most half the window."""
    d = "dilation * " if dilation else ""
    cons = ["padding * 2 <= kernel_size"]
    for i in range(1, n + 1):
        cons.append(f"input.shape[-{i}] + 2 * padding >= {d}(kernel_size - 1) + 1")
    cons.append(f"input.shape[{-(n + 1)}] >= 1")
    params: dict[str, Any] = {
        "input": {"rank": (n + 1, n + 2)},
        "kernel_size": {"structures": ("int",), "range": (1, 3)},
        "stride": {"structures": ("int", "none"), "range": (1, 2)},
        "padding": {"structures": ("int",), "range": (0, 1)}}
    if dilation:
        params["dilation"] = {"structures": ("int",), "range": (1, 2)}
    elif n > 1:
        params["divisor_override"] = {"range": (1, 3)}
    return {"params": params, "constraints": cons}


def _lp_pool(n: int) -> dict[str, Any]:
    return {"params": {"input": {"rank": (n + 1, n + 2)},
                       "kernel_size": {"structures": ("int",), "range": (1, 2)},
                       "stride": {"structures": ("int", "none"), "range": (1, 2)},
                       "norm_type": {"structures": ("float",), "range": (1.0, 3.0)}},
            "reject": ["input.dtype not in ('uint8', 'uint16', 'uint32', 'uint64')"] * (n > 1),
            "constraints": [f"input.shape[-{i}] >= kernel_size" for i in range(1, n + 1)]}


def _unpool(n: int) -> dict[str, Any]:
    """max_unpool with stride = kernel_size, no padding: each input element lands in its
    own kernel window, so indices index the kernel_size**n times larger output plane."""
    plane = " * ".join([f"input.shape[-{i}]" for i in range(1, n + 1)] + ["kernel_size"] * n)
    return {"params": {"input": {"rank": (n + 2, n + 2), "dtypes": FLOATS},
                       "indices": {"rank": (n + 2, n + 2), "dtypes": ("int64",),
                                   "domain": (0, 3)},
                       "kernel_size": {"structures": ("int",), "range": (1, 2)}},
            "drop": ["stride", "padding", "output_size"],
            "constraints": same_shape("indices", "input", n + 2) + [f"indices.max < {plane}"]}


def _adaptive(n: int, nonempty: bool) -> dict[str, Any]:
    return {"params": {"input": {"rank": (n + 1, n + 2)},
                       "output_size": {"length": (n, n), "range": (1, 4)}},
            "constraints": [f"input.shape[-{i}] >= 1" for i in range(1, n + 1)] * nonempty}


def _fractional(n: int) -> dict[str, Any]:
    return {"params": {"input": {"rank": (n + 2, n + 2), "dtypes": REAL},
                       "kernel_size": {"structures": ("int",), "range": (1, 2)},
                       "output_size": {"structures": ("int",), "range": (1, 2)}},
            "drop": ["output_ratio"],
            "constraints": [f"input.shape[-{i}] {'>' if n == 3 else '>='} output_size + "
                            "kernel_size - 1" for i in range(1, n + 1)]}


def _square(a: str = "A", specials: bool = True) -> dict[str, Any]:
    return {"params": {a: {"rank": (2, 3), "dtypes": FLOAT_COMPLEX}},
            "constraints": [f"{a}.shape[-1] == {a}.shape[-2]"], "specials": specials}


def _matmul_pair(a: str, b: str, ra: tuple[int, int], rb: tuple[int, int],
                 ia: int, ib: int) -> dict[str, Any]:
    return {"params": {a: {"rank": ra}, b: {"rank": rb}},
            "constraints": [f"{a}.shape[{ia}] == {b}.shape[{ib}]", f"{a}.dtype == {b}.dtype"]}


def _fft1(inverse_real: bool = False) -> dict[str, Any]:
    cons = ["n is not None or input.shape[dim] >= 2"] if inverse_real else []
    return {"params": {"input": {"rank": (1, 4)}, "n": {"range": (1, 6)}},
            "constraints": cons}


def _fftn(rank: int) -> dict[str, Any]:
    return {"params": {"input": {"rank": (rank, 4)}}, "drop": ["s"]}


_BOTH_STATS = ("(running_mean is None and running_var is None) or (running_mean is not None "
               "and running_var is not None)")
_LOSS_BROADCAST = {F + n: {"constraints": broadcast("input", "target"), "drop": ["weight"]}
                   for n in ("l1_loss", "mse_loss", "huber_loss")}
_LOSS_BROADCAST[F + "smooth_l1_loss"] = {"constraints": broadcast("input", "target")}

API: dict[str, dict[str, Any]] = {
    **{f"{F}conv{n}d": _conv(n) for n in (1, 2, 3)},
    **{f"{F}conv_transpose{n}d": _conv_t(n) for n in (1, 2, 3)},
    **{f"{F}max_pool{n}d": _pool(n) for n in (1, 2, 3)},
    **{f"{F}max_pool{n}d_with_indices": _pool(n) for n in (1, 2, 3)},
    **{f"{F}avg_pool{n}d": _pool(n, dilation=False) for n in (1, 2, 3)},
    **{f"{F}lp_pool{n}d": _lp_pool(n) for n in (1, 2, 3)},
    **{f"{F}max_unpool{n}d": _unpool(n) for n in (1, 2, 3)},
    **{f"{F}adaptive_avg_pool{n}d": _adaptive(n, False) for n in (1, 2, 3)},
    **{f"{F}adaptive_max_pool{n}d": _adaptive(n, True) for n in (1, 2, 3)},
    **{f"{F}adaptive_max_pool{n}d_with_indices": _adaptive(n, True) for n in (1, 2, 3)},
    **{f"{F}fractional_max_pool{n}d": _fractional(n) for n in (2, 3)},
    **{f"{F}fractional_max_pool{n}d_with_indices": _fractional(n) for n in (2, 3)},
    F + "linear": {"params": {"input": {"rank": (1, 3)}, "weight": {"rank": (2, 2)},
                              "bias": {"rank": (1, 1)}},
                   "constraints": ["input.shape[-1] == weight.shape[1]",
                                   "input.dtype == weight.dtype",
                                   "bias is None or bias.shape[0] == weight.shape[0]",
                                   "bias is None or bias.dtype == input.dtype"]},
    F + "bilinear": {"params": {"input1": {"rank": (2, 2)}, "input2": {"rank": (2, 2)},
                                "weight": {"rank": (3, 3)}, "bias": {"rank": (1, 1)}},
                     "constraints": ["input1.shape[0] == input2.shape[0]",
                                     "input1.shape[1] == weight.shape[1]",
                                     "input2.shape[1] == weight.shape[2]",
                                     "bias is None or bias.shape[0] == weight.shape[0]"]
                     + same_dtype("input1", "input2", "weight")
                     + same_dtype("input1", "bias", optional=True)},
    F + "affine_grid": {"params": {"theta": {"rank": (3, 3), "dtypes": FLOATS},
                                   "size": {"length": (4, 4), "range": (1, 3)}},
                        "constraints": ["size[0] == theta.shape[0]", "theta.shape[1] == 2",
                                        "theta.shape[2] == 3"]},
    F + "batch_norm": {"params": {"input": {"rank": (2, 4)}},
                       "constraints": per_channel("input", "running_mean", "running_var",
                                                  "weight", "bias") + [_BOTH_STATS,
                           "training == True or (running_mean is not None and "
                           "running_var is not None)",
                           "training == False or input.num_element > input.shape[1]"]},
    F + "instance_norm": {"params": {"input": {"rank": (3, 4)}},
                          "constraints": per_channel("input", "running_mean", "running_var",
                                                     "weight", "bias") + [_BOTH_STATS,
                              "use_input_stats == True or (running_mean is not None and "
                              "running_var is not None)",
                              "use_input_stats == False or input.num_element > "
                              "input.shape[0] * input.shape[1]"]},
    F + "group_norm": {"params": {"input": {"rank": (2, 4)}, "num_groups": {"range": (1, 3)}},
                       "constraints": per_channel("input", "weight", "bias") + [
                           "input.shape[1] % num_groups == 0",
                           "input.num_element > input.shape[0] * num_groups"]},
    **{F + n: {"params": {"input": {"rank": (1, 4)},
                          "normalized_shape": {"length": (1, 1), "range": (1, 4)}},
               "constraints": ["normalized_shape[0] == input.shape[-1]"] + [
                   f"{w} is None or ({w}.ndims == 1 and {w}.shape[0] == normalized_shape[0])"
                   for w in ws] + same_dtype("input", *ws, optional=True)}
       for n, ws in (("layer_norm", ("weight", "bias")), ("rms_norm", ("weight",)))},
    F + "local_response_norm": {"params": {"input": {"rank": (3, 4)},
                                           "size": {"range": (1, 3)}},
                                "reject": ["input.ndims in (4, 5)"]},
    F + "embedding": {"params": {"input": {"dtypes": ("int64",), "domain": (0, 3)},
                                 "weight": {"rank": (2, 2)}},
                      "drop": ["max_norm"],
                      "constraints": ["input.max < weight.shape[0]",
                                      "padding_idx is None or (padding_idx < weight.shape[0] "
                                      "and padding_idx >= -weight.shape[0])"]},
    F + "embedding_bag": {"params": {"input": {"rank": (2, 2), "dtypes": ("int64",),
                                               "domain": (0, 3)},
                                     "weight": {"rank": (2, 2), "dtypes": FLOATS},
                                     "mode": {"values": ("sum", "mean", "max")}},
                          "drop": ["offsets", "max_norm", "per_sample_weights",
                                   "include_last_offset"],
                          "constraints": ["input.max < weight.shape[0]",
                                          "padding_idx is None or (padding_idx < "
                                          "weight.shape[0] and padding_idx >= "
                                          "-weight.shape[0])"]},
    F + "one_hot": {"params": {"input": {"dtypes": ("int64",), "domain": (0, 3)},
                               "num_classes": {"range": (-1, 6)}},
                    "constraints": ["num_classes == -1 or num_classes > input.max",
                                    "input.num_element > 0 or num_classes >= 0"]},
    F + "fold": {"params": {"input": {"rank": (3, 3)},
                            **{k: {"structures": ("int",), "range": r} for k, r in (
                                ("output_size", (1, 4)), ("kernel_size", (1, 2)),
                                ("dilation", (1, 2)), ("padding", (0, 1)),
                                ("stride", (1, 2)))}},
                 "constraints": [
                     "input.shape[1] % (kernel_size * kernel_size) == 0",
                     "output_size + 2 * padding >= dilation * (kernel_size - 1) + 1",
                     "input.shape[2] == ((output_size + 2 * padding - dilation * "
                     "(kernel_size - 1) - 1) // stride + 1) * ((output_size + 2 * padding - "
                     "dilation * (kernel_size - 1) - 1) // stride + 1)"]},
    F + "unfold": {"params": {"input": {"rank": (4, 4)},
                              **{k: {"structures": ("int",), "range": r} for k, r in (
                                  ("kernel_size", (1, 2)), ("dilation", (1, 2)),
                                  ("padding", (0, 1)), ("stride", (1, 2)))}},
                   "constraints": [f"input.shape[-{i}] + 2 * padding >= dilation * "
                                   "(kernel_size - 1) + 1" for i in (1, 2)]},
    F + "pad": {"params": {"pad": {"length": (2, 4), "range": (0, 2)}}, "drop": ["mode"],
                "constraints": ["len(pad) % 2 == 0", "len(pad) <= 2 * input.ndims"]},
    F + "interpolate": {
        "params": {"input": {"rank": (3, 5), "dtypes": FLOATS},
                   "size": {"range": (1, 4)},
                   "scale_factor": {"structures": ("float", "none"), "range": (1.0, 2.5)}},
        "drop": ["recompute_scale_factor"],
        "constraints": ["size is None or scale_factor is None",
                        "size is not None or scale_factor is not None",
                        "mode != 'linear' or input.ndims == 3",
                        "mode not in ('bilinear', 'bicubic') or input.ndims == 4",
                        "mode != 'trilinear' or input.ndims == 5",
                        "align_corners is None or mode in ('linear', 'bilinear', "
                        "'bicubic', 'trilinear')",
                        "input.num_element > 0"]},
    F + "grid_sample": {"params": {"input": {"rank": (4, 4), "dtypes": FLOATS},
                                   "grid": {"rank": (4, 4)}},
                        "constraints": ["grid.shape[3] == 2", "grid.shape[0] == input.shape[0]",
                                        "input.shape[2] >= 1 and input.shape[3] >= 1",
                                        "grid.dtype == input.dtype"]},
    F + "scaled_dot_product_attention": {
        "params": {n: {"rank": (4, 4), "dtypes": FLOATS} for n in ("query", "key", "value")},
        "drop": ["attn_mask", "scale", "enable_gqa"],
        "constraints": ["key.shape[0] == query.shape[0]", "value.shape[0] == query.shape[0]",
                        "key.shape[1] == query.shape[1]", "value.shape[1] == query.shape[1]",
                        "key.shape[-1] == query.shape[-1]",
                        "value.shape[-2] == key.shape[-2]"]
        + same_dtype("query", "key", "value")},
    F + "pixel_shuffle": {"params": {"input": {"rank": (3, 4)},
                                     "upscale_factor": {"range": (1, 2)}}},
    F + "pixel_unshuffle": {"params": {"input": {"rank": (3, 4)},
                                       "downscale_factor": {"range": (1, 2)}},
                            "constraints": ["input.shape[-1] % downscale_factor == 0",
                                            "input.shape[-2] % downscale_factor == 0"]},
    F + "channel_shuffle": {"params": {"input": {"rank": (3, 4)}, "groups": {"range": (1, 2)}},
                            "constraints": ["input.shape[1] % groups == 0"]},
    F + "glu": {"params": {"input": {"rank": (1, 4)}},
                "constraints": ["input.shape[dim] % 2 == 0"]},
    F + "prelu": {"params": {"input": {"rank": (1, 4)}, "weight": {"rank": (1, 1)}},
                  "constraints": ["weight.shape[0] == 1 or (input.ndims >= 2 and "
                                  "weight.shape[0] == input.shape[1])",
                                  "weight.dtype == input.dtype"]},
    F + "rrelu": {"params": {"lower": {"range": (0.0, 0.3)}, "upper": {"range": (0.3, 0.6)}},
                  "constraints": ["lower <= upper"]},
    **{F + n: {"params": {"input": {"dtypes": FLOAT_COMPLEX}}} for n in (
        "dropout", "alpha_dropout")},
    F + "dropout1d": {"params": {"input": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX}}},
    F + "dropout2d": {"params": {"input": {"rank": (3, 4), "dtypes": FLOAT_COMPLEX}}},
    F + "dropout3d": {"params": {"input": {"rank": (4, 5), "dtypes": FLOAT_COMPLEX}}},
    F + "feature_alpha_dropout": {"params": {"input": {"rank": (2, 4), "dtypes": REAL}}},
    F + "nll_loss": {"params": {"input": {"rank": (2, 2)},
                                "target": {"rank": (1, 1), "dtypes": ("int64",),
                                           "domain": (0, 3)},
                                "weight": {"rank": (1, 1)}},
                     "constraints": ["target.shape[0] == input.shape[0]",
                                     "target.max < input.shape[1]",
                                     "weight is None or weight.shape[0] == input.shape[1]",
                                     "weight is None or weight.dtype == input.dtype"]},
    F + "cross_entropy": {"params": {"input": {"rank": (2, 2), "dtypes": FLOATS},
                                     "target": {"rank": (1, 1), "dtypes": ("int64",),
                                                "domain": (0, 3)},
                                     "weight": {"rank": (1, 1)}},
                          "constraints": ["target.shape[0] == input.shape[0]",
                                          "target.max < input.shape[1]",
                                          "weight is None or weight.shape[0] == "
                                          "input.shape[1]",
                                          "weight is None or weight.dtype == input.dtype"]},
    F + "multi_margin_loss": {"params": {"input": {"rank": (2, 2), "dtypes": FLOATS},
                                         "target": {"rank": (1, 1), "dtypes": ("int64",),
                                                    "domain": (0, 3)},
                                         "p": {"values": (1, 2)}},
                              "drop": ["weight"],
                              "constraints": ["target.shape[0] == input.shape[0]",
                                              "target.max < input.shape[1]",
                                              "input.shape[1] >= 1"]},
    F + "multilabel_margin_loss": {"params": {"input": {"rank": (2, 2), "dtypes": FLOATS},
                                              "target": {"rank": (2, 2), "dtypes": ("int64",),
                                                         "domain": (-1, 3)}},
                                   "constraints": same_shape("input", "target", 2) + [
                                       "target.max < input.shape[1]",
                                       "input.num_element > 0"]},
    F + "cosine_embedding_loss": {"params": {"input1": {"rank": (2, 2)},
                                             "input2": {"rank": (2, 2)},
                                             "target": {"rank": (1, 1)}},
                                  "constraints": same_shape("input1", "input2", 2) + [
                                      "target.shape[0] == input1.shape[0]"]},
    F + "margin_ranking_loss": {"constraints": same_shape("input1", "input2") + same_shape(
        "input1", "target")},
    F + "triplet_margin_loss": {"params": {n: {"rank": (2, 2)} for n in (
        "anchor", "positive", "negative")},
        "constraints": same_shape("anchor", "positive", 2) + same_shape("anchor", "negative", 2)},
    F + "triplet_margin_with_distance_loss": {"params": {n: {"rank": (2, 2)} for n in (
        "anchor", "positive", "negative")},
        "constraints": same_shape("anchor", "positive", 2) + same_shape("anchor", "negative", 2)},
    F + "gaussian_nll_loss": {"params": {"var": {"domain": (0.1, 2.0)}},
                              "constraints": same_shape("input", "target") + same_shape(
                                  "input", "var"), "specials": False},
    **_LOSS_BROADCAST,
    F + "kl_div": {"constraints": broadcast("input", "target")},
    F + "poisson_nll_loss": {"constraints": broadcast("input", "target")},
    F + "soft_margin_loss": {"constraints": same_shape("input", "target")},
    F + "multilabel_soft_margin_loss": {"params": {"input": {"rank": (2, 2)}},
                                        "drop": ["weight"],
                                        "constraints": same_shape("input", "target", 2)},
    F + "binary_cross_entropy_with_logits": {"drop": ["weight", "pos_weight"],
                                             "constraints": same_shape("input", "target")},
    F + "binary_cross_entropy": {
        "params": {"input": {"domain": (0.0, 1.0)}, "target": {"domain": (0.0, 1.0)}},
        "drop": ["weight"], "constraints": same_shape("input", "target"), "specials": False},
    F + "hinge_embedding_loss": {"params": {"input": {"dtypes": FLOAT_COMPLEX}},
                                 "constraints": broadcast("input", "target")},
    F + "pdist": {"params": {"input": {"rank": (2, 2)}, "p": {"range": (0.0, 3.0)}}},
    F + "pairwise_distance": {"constraints": broadcast("x1", "x2")},
    F + "ctc_loss": {"params": {"log_probs": {"rank": (3, 3), "dtypes": FLOATS},
                                "targets": {"rank": (2, 2), "dtypes": ("int64",),
                                            "domain": (1, 2)},
                                "input_lengths": {"rank": (1, 1), "dtypes": ("int64",)},
                                "target_lengths": {"rank": (1, 1), "dtypes": ("int64",)},
                                "blank": {"range": (0, 0)}},
                     "constraints": ["targets.shape[0] == log_probs.shape[1]",
                                     "input_lengths.shape[0] == log_probs.shape[1]",
                                     "target_lengths.shape[0] == log_probs.shape[1]",
                                     "input_lengths.max <= log_probs.shape[0]",
                                     "input_lengths.min >= 0", "target_lengths.min >= 0",
                                     "target_lengths.max <= targets.shape[1]",
                                     "targets.max < log_probs.shape[2]"]},
}

SKIP: dict[str, str] = {
    "torch.einsum": "the equation string decides operand count and ranks",
    F + "multi_head_attention_forward": "twenty coupled projection weights; covered by "
                                        "scaled_dot_product_attention",
}
