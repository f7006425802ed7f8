"""Hand-written knowledge for the TensorFlow extractor (``tf_apis``): what no docstring,
op definition or Python check states. Kept here, not in ``data/tf.json``, so that a
regenerated file keeps it.

- ``EXCLUDE``: public functions that are not tensor computations (control flow,
  graph building, tracing, I/O set-up); not listed at all.
- ``SKIP``: tensor APIs listed but not fuzzed, with why (string tensors, sparse tensors,
  callables as required arguments).
- ``NAMES``: parameter-name conventions shared across TF (``axis``, ``keepdims``,
  ``padding``...). ``force`` makes the entry win over the op definition (``axis`` is an
  int32 *input* of ``Sum`` but a Python int to the caller); ``cons`` are constraint
  templates, ``{p}`` the parameter and ``{t}`` the API's first tensor parameter.
- ``HINTS``: per API: ``params`` (field overrides), ``constraints`` (C++ checks, source
  ``hand``), ``drop`` (parameters not passed), ``random``, ``skip``.
"""

from __future__ import annotations

from typing import Any

EXCLUDE = frozenset({
    "Assert", "as_dtype", "assert_equal", "assert_greater", "assert_less", "assert_rank",
    "broadcast_static_shape", "case", "cond", "control_dependencies", "convert_to_tensor",
    "custom_gradient", "device", "executing_eagerly", "foldl", "foldr", "function",
    "get_current_name_scope", "get_logger", "get_static_value", "grad_pass_through",
    "gradients", "group", "hessians", "import_graph_def", "init_scope", "inside_function",
    "is_symbolic_tensor", "is_tensor", "load_library", "load_op_library", "make_ndarray",
    "make_tensor_proto", "map_fn", "no_gradient", "no_op", "nondifferentiable_batch_function",
    "numpy_function", "print", "py_function", "recompute_grad",
    "register_tensor_conversion_function", "scan", "switch_case", "timestamp", "tuple",
    "type_spec_from_value", "variable_creator_scope", "vectorized_map", "while_loop",
    "inverse_stft_window_fn", "check_pinned", "constant",
})

_STRING = "string tensors: dlfuzz tensors are numeric"
_SPARSE = "takes tf.SparseTensor arguments"
SKIP: dict[str, str] = {
    **{n: _STRING for n in (
        "as_string", "decode_and_crop_jpeg", "decode_bmp", "decode_gif", "decode_image",
        "decode_jpeg", "decode_jxl", "decode_png", "decode_webp", "encode_jpeg", "encode_png",
        "extract_jpeg_shape", "is_jpeg")},
    **{n: _SPARSE for n in ("embedding_lookup_sparse", "safe_embedding_lookup_sparse",
                            "edit_distance")},
    "with_space_to_batch": "takes a callable op",
    "ragged_fill_empty_rows_grad": "gradient helper of a ragged op",
}

_RANDOM = frozenset({
    "dropout", "all_candidate_sampler", "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler", "log_uniform_candidate_sampler",
    "uniform_candidate_sampler", "compute_accidental_hits", "nce_loss",
    "sampled_softmax_loss", "fractional_avg_pool", "fractional_max_pool", "random_crop",
    "sample_distorted_bounding_box",
})


def is_random(api: str) -> bool:
    """Output depends on an RNG state (not on a seed argument)."""
    short = api.rsplit(".", 1)[1]
    return short in _RANDOM or short.startswith("random_")


_AXIS = "{p} is None or ({p} >= -{t}.ndims and {p} < {t}.ndims)"
NAMES: dict[str, dict[str, Any]] = {
    "axis": {"structures": ("int",), "range": (-3, 3), "force": True, "cons": (_AXIS,)},
    "keepdims": {"structures": ("bool",), "force": True},
    "keep_dims": {"structures": ("bool",), "force": True},
    "exclusive": {"structures": ("bool",)},
    "reverse": {"structures": ("bool",)},
    "validate_args": {"structures": ("bool",), "force": True},
    "padding": {"structures": ("str",), "values": ("SAME", "VALID"), "force": True},
    "data_format": {"omit": True, "force": True},
    "epsilon": {"structures": ("float",), "range": (1e-6, 1e-2)},
    "variance_epsilon": {"structures": ("float",), "range": (1e-6, 1e-2)},
    "block_size": {"structures": ("int",), "range": (2, 3), "force": True},
    "k": {"structures": ("int",), "range": (1, 3)},
}

FLOAT = ("float16", "bfloat16", "float32", "float64")
F32 = ("float32", "float64")
CPLX = ("complex64", "complex128")
IDX = ("int32", "int64")
NUM = ("int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64")


def T(rank: tuple[int, int] | None = None, dtypes: tuple[str, ...] | None = None,
      domain: tuple[float, float] | None = None, **kw: Any) -> dict[str, Any]:
    """A tensor parameter."""
    out: dict[str, Any] = {"structures": ("tensor",), **kw}
    for key, value in (("rank", rank), ("dtypes", dtypes), ("domain", domain)):
        if value is not None:
            out[key] = value
    return out


def I(lo: int, hi: int, **kw: Any) -> dict[str, Any]:  # noqa: E743 - reads like a type
    return {"structures": ("int",), "range": (lo, hi), **kw}


def F(lo: float, hi: float, **kw: Any) -> dict[str, Any]:
    return {"structures": ("float",), "range": (float(lo), float(hi)), **kw}


def L(lo: int, hi: int, length: tuple[int, int], **kw: Any) -> dict[str, Any]:
    return {"structures": ("ints",), "range": (lo, hi), "length": length, **kw}


def S(*values: str, **kw: Any) -> dict[str, Any]:
    return {"structures": ("str",), "values": values, **kw}


B = {"structures": ("bool",)}
DT_FLOAT = {"structures": ("dtype",), "dtypes": F32}


def same_shape(a: str, b: str, rank: int = 4) -> list[str]:
    """``b`` has exactly ``a``'s shape (``b`` on the left: Algorithm 2 writes it)."""
    return [f"{b}.ndims == {a}.ndims"] + [
        f"{a}.ndims <= {i} or {b}.shape[{i}] == {a}.shape[{i}]" for i in range(rank)]


def broadcast(a: str, b: str, rank: int = 4) -> list[str]:
    """NumPy broadcasting of ``a`` and ``b``, one constraint per trailing dimension."""
    return [f"{a}.ndims <= {i} or {b}.ndims <= {i} or {a}.shape[-{i + 1}] == "
            f"{b}.shape[-{i + 1}] or {a}.shape[-{i + 1}] == 1 or {b}.shape[-{i + 1}] == 1"
            for i in range(rank)]


def square(x: str) -> list[str]:
    """Square innermost matrices; the last dimension is the one others refer to."""
    return [f"{x}.shape[-2] == {x}.shape[-1]"]


def valid_window(x: str, dims: tuple[int, ...], size: str) -> str:
    """VALID padding: each spatial dimension at least the window."""
    return "padding == 'SAME' or (" + " and ".join(
        f"{x}.shape[{d}] >= {size.format(i=i)}" for i, d in enumerate(dims)) + ")"


# Ops whose two first tensor inputs broadcast against each other.
BROADCAST_OPS = frozenset({
    "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "DivNoNan", "MulNoNan", "FloorDiv", "FloorMod",
    "TruncateDiv", "TruncateMod", "Maximum", "Minimum", "Pow", "Atan2", "Equal", "NotEqual",
    "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr",
    "SquaredDifference", "Xlogy", "Xdivy", "Xlog1py", "Igamma", "Igammac", "Zeta",
    "Polygamma", "NextAfter", "Complex", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
})
# Integer division by zero is an error, not a value: the divisor stays positive.
NONZERO_DIVISOR = frozenset({"FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod", "Div",
                             "RealDiv"})

_POOL = {"ksize": I(1, 3), "strides": I(1, 2), "padding": S("SAME", "VALID")}
_NHWC = {"structures": ("str",), "values": ("NHWC",)}
_ONE4 = L(1, 1, (4, 4))
_NMS = ["boxes.shape[1] == 4", "scores.shape[0] == boxes.shape[0]"]
_IMG = T((3, 4), F32)
_RGB = ["{t}.shape[-1] == 3"]
_SEG = {"data": T((1, 3)), "segment_ids": T((1, 1), IDX, (0, 1))}
_SEG_CONS = ["segment_ids.shape[0] == data.shape[0]",
             "data.shape[0] <= 1 or segment_ids.max == segment_ids.min"]  # sorted ids
_USEG = {"data": T((1, 3), NUM), "segment_ids": T((1, 1), IDX, (0, 2)),
         "num_segments": I(3, 4)}
_SAMPLER = {"true_classes": T((2, 2), ("int64",), (0, 4)), "num_true": I(1, 3),
            "num_sampled": I(1, 3), "unique": B, "range_max": I(5, 8)}
_SAMPLER_CONS = ["num_true == true_classes.shape[1]"]
_MATMUL_LIKE = ["a.shape[-1] == b.shape[-2]"]
_CONVT = {"strides": I(1, 1), "padding": S("SAME")}
_FFT_R = {"input_tensor": T((1, 3), F32)}

HINTS: dict[str, dict[str, Any]] = {
    # ---- math ------------------------------------------------------------------------
    "math.accumulate_n": {"drop": ("shape", "tensor_dtype")},
    "math.angle": {"params": {"input": T(None, F32 + CPLX)}},
    "math.approx_max_k": {"params": {"operand": T((1, 3), ("float16", "bfloat16", "float32")),
                                     "k": I(1, 3)},
                          "drop": ("reduction_dimension", "reduction_input_size_override",
                                   "recall_target"),
                          "constraints": ["k <= operand.shape[-1]"]},
    "math.approx_min_k": {"skip": "ApproxTopK with is_max_k=False has no CPU kernel",
                          "params": {"operand": T((1, 3), F32), "k": I(1, 3)},
                          "drop": ("reduction_dimension", "reduction_input_size_override",
                                   "recall_target"),
                          "constraints": ["k <= operand.shape[-1]"]},
    "math.bincount": {"params": {"arr": T((1, 1), IDX, (0, 6)), "minlength": I(0, 8),
                                 "maxlength": I(1, 8),
                                 "dtype": {"structures": ("dtype",),
                                           "dtypes": ("int32", "int64", "float32", "float64")}},
                      "drop": ("weights", "axis")},
    "math.confusion_matrix": {"params": {"labels": T((1, 1), IDX, (0, 4)),
                                         "predictions": T((1, 1), IDX, (0, 4)),
                                         "num_classes": I(5, 7)},
                              "drop": ("weights", "dtype"),
                              "constraints": ["labels.shape[0] == predictions.shape[0]",
                                              "labels.dtype == predictions.dtype"]},
    "math.argmax": {"params": {"input": T((1, 4))}, "constraints": ["input.num_element > 0"]},
    "math.argmin": {"params": {"input": T((1, 4))}, "constraints": ["input.num_element > 0"]},
    "math.betainc": {"params": {"a": T(None, F32), "b": T(None, F32), "x": T(None, F32)},
                     "constraints": [*same_shape("a", "b"), *same_shape("a", "x")]},
    "math.cumprod": {"params": {"x": T((1, 4))}},
    "math.cumsum": {"params": {"x": T((1, 4))}},
    "math.cumulative_logsumexp": {"params": {"x": T((1, 4))}},
    "math.divide": {"params": {"x": T(None, F32 + CPLX), "y": T(None, F32 + CPLX)},
                    "constraints": ["x.dtype == y.dtype", *broadcast("x", "y")]},
    "math.in_top_k": {"params": {"targets": T((1, 1), IDX, (0, 2)),
                                 "predictions": T((2, 2), ("float32",)), "k": I(1, 3)},
                      "constraints": ["targets.shape[0] == predictions.shape[0]",
                                      "predictions.shape[1] >= 3"]},
    "math.invert_permutation": {"skip": "needs a permutation (not expressible)"},
    "math.l2_normalize": {"drop": ("dim",)},
    "math.truediv": {"params": {"x": T(None, NUM + CPLX), "y": T(None, NUM + CPLX)},
                     "constraints": ["y.dtype == x.dtype", *broadcast("x", "y")]},
    "math.multiply_no_nan": {"params": {"x": T(None, F32), "y": T(None, F32)}},
    "math.polyval": {"skip": "coeffs must be a Python list; cases pass tensor lists as tuples",
                     "params": {"coeffs": {"structures": ("tensors",), "count": (1, 3),
                                           "dtypes": F32}, "x": T(None, F32)},
                     "constraints": ["coeffs.dtype == x.dtype", "coeffs.ndims == 0"]},
    "math.pow": {"constraints": ["x.dtype in ('float16', 'bfloat16', 'float32', 'float64', "
                                 "'complex64', 'complex128') or y.min >= 0"]},
    "math.reduce_logsumexp": {"params": {"input_tensor": T(None, FLOAT)}},
    "math.reduce_std": {"params": {"input_tensor": T(None, FLOAT + CPLX)}},
    "math.reduce_variance": {"params": {"input_tensor": T(None, FLOAT + CPLX)}},
    "math.reduce_max": {"params": {"input_tensor": T(None, NUM)}},
    "math.reduce_sum": {"params": {"input_tensor": T(None, NUM + CPLX)}},
    "math.scalar_mul": {"params": {"scalar": T((0, 0))},
                        "constraints": ["scalar.dtype == x.dtype"]},
    "math.segment_max": {"params": _SEG, "constraints": _SEG_CONS},
    "math.segment_mean": {"params": _SEG, "constraints": _SEG_CONS},
    "math.segment_min": {"params": _SEG, "constraints": _SEG_CONS},
    "math.segment_prod": {"params": _SEG, "constraints": _SEG_CONS},
    "math.segment_sum": {"params": _SEG, "constraints": _SEG_CONS},
    **{f"math.unsorted_segment_{k}": {"params": _USEG, "constraints": [
        "segment_ids.shape[0] == data.shape[0]"]}
       for k in ("max", "mean", "min", "prod", "sqrt_n", "sum")},
    "math.sobol_sample": {"params": {"dim": I(1, 4), "num_results": I(1, 6), "skip": I(0, 4),
                                     "dtype": DT_FLOAT}},
    "math.top_k": {"params": {"input": T((1, 3)), "k": I(1, 3)},
                   "constraints": ["k <= input.shape[-1]"]},
    "math.zero_fraction": {"params": {"value": T(None, NUM)}},
    "math.lbeta": {"params": {"x": T((1, 3), F32)}},
    "math.log_softmax": {"params": {"logits": T((1, 4), FLOAT)}},
    "math.softmax": {"params": {"logits": T((1, 4), FLOAT)}},
    "math.is_non_decreasing": {"params": {"x": T(None, NUM)}},
    "math.is_strictly_increasing": {"params": {"x": T(None, NUM)}},
    "math.count_nonzero": {"params": {"dtype": {"structures": ("dtype",),
                                                "dtypes": ("int32", "int64", "float32")}}},
    "math.log_sigmoid": {"params": {"x": T(None, FLOAT)}},
    # ---- nn --------------------------------------------------------------------------
    "nn.all_candidate_sampler": {"params": {**_SAMPLER, "num_sampled": I(5, 8)},
                                 "drop": ("seed",),
                                 "constraints": [*_SAMPLER_CONS,
                                                 "true_classes.max < num_sampled"]},
    "nn.uniform_candidate_sampler": {"params": _SAMPLER, "drop": ("seed",),
                                     "constraints": _SAMPLER_CONS},
    "nn.log_uniform_candidate_sampler": {"params": _SAMPLER, "drop": ("seed",),
                                         "constraints": _SAMPLER_CONS},
    "nn.learned_unigram_candidate_sampler": {"params": _SAMPLER, "drop": ("seed",),
                                             "constraints": _SAMPLER_CONS},
    "nn.fixed_unigram_candidate_sampler": {
        "params": {**_SAMPLER, "unigrams": {"structures": ("floats",), "range": (0.1, 2.0),
                                            "length": (5, 8)}},
        "drop": ("seed", "vocab_file", "distortion", "num_reserved_ids", "num_shards", "shard"),
        "constraints": [*_SAMPLER_CONS, "len(unigrams) == range_max"]},
    "nn.compute_accidental_hits": {
        "params": {"true_classes": T((2, 2), ("int64",), (0, 4)), "num_true": I(1, 3),
                   "sampled_candidates": T((1, 1), ("int64",), (0, 4))},
        "drop": ("seed",), "constraints": _SAMPLER_CONS},
    "nn.atrous_conv2d": {"params": {"value": T((4, 4), F32), "filters": T((4, 4), F32),
                                    "rate": I(1, 2), "padding": S("SAME", "VALID")},
                         "constraints": ["filters.num_element > 0", "filters.shape[2] == value.shape[3]",
                                         "value.dtype == filters.dtype",
                                         valid_window("value", (1, 2),
                                                      "(filters.shape[{i}] - 1) * rate + 1")]},
    "nn.atrous_conv2d_transpose": {
        "params": {"value": T((4, 4), F32), "filters": T((4, 4), F32), "rate": I(1, 2),
                   "output_shape": L(1, 4, (4, 4)), "padding": S("SAME")},
        "constraints": ["filters.shape[3] == value.shape[3]", "value.dtype == filters.dtype",
                        "output_shape[0] == value.shape[0]", "output_shape[1] == value.shape[1]",
                        "output_shape[2] == value.shape[2]",
                        "output_shape[3] == filters.shape[2]"]},
    "nn.avg_pool": {"params": {"input": T((4, 4), FLOAT), **_POOL},
                    "constraints": [valid_window("input", (1, 2), "ksize")]},
    "nn.max_pool": {"params": {"input": T((4, 4), FLOAT), **_POOL},
                    "constraints": [valid_window("input", (1, 2), "ksize")]},
    "nn.avg_pool1d": {"params": {"input": T((3, 3)), **_POOL},
                      "constraints": [valid_window("input", (1,), "ksize")]},
    "nn.max_pool1d": {"params": {"input": T((3, 3)), **_POOL},
                      "constraints": [valid_window("input", (1,), "ksize")]},
    "nn.avg_pool2d": {"params": {"input": T((4, 4)), **_POOL},
                      "constraints": [valid_window("input", (1, 2), "ksize")]},
    "nn.max_pool2d": {"params": {"input": T((4, 4)), **_POOL},
                      "constraints": [valid_window("input", (1, 2), "ksize")]},
    "nn.avg_pool3d": {"params": {"input": T((5, 5)), **_POOL},
                      "constraints": [valid_window("input", (1, 2, 3), "ksize")]},
    "nn.max_pool3d": {"params": {"input": T((5, 5)), **_POOL},
                      "constraints": [valid_window("input", (1, 2, 3), "ksize")]},
    "nn.max_pool_with_argmax": {"params": {"input": T((4, 4)), **_POOL, "data_format": _NHWC},
                                "constraints": [valid_window("input", (1, 2), "ksize")]},
    "nn.pool": {"params": {"input": T((4, 4), F32), "window_shape": L(1, 3, (2, 2)),
                           "pooling_type": S("AVG", "MAX"), "padding": S("SAME", "VALID")},
                "drop": ("strides", "dilations"),
                "constraints": [valid_window("input", (1, 2), "window_shape[{i}]")]},
    "nn.batch_norm_with_global_normalization": {
        "params": {"input": T((4, 4), F32), "mean": T((1, 1), F32), "variance": T((1, 1), F32),
                   "beta": T((1, 1), F32), "gamma": T((1, 1), F32),
                   "variance_epsilon": F(1e-5, 1e-2), "scale_after_normalization": B},
        "constraints": [f"{n}.shape[0] == input.shape[3]" for n in ("mean", "variance", "beta",
                                                                     "gamma")]
        + [f"{n}.dtype == input.dtype" for n in ("mean", "variance", "beta", "gamma")]},
    "nn.batch_normalization": {
        "params": {"x": T((1, 4), FLOAT), "mean": T((1, 1)), "variance": T((1, 1)),
                   "offset": T((1, 1), optional=False), "scale": T((1, 1), optional=False),
                   "variance_epsilon": F(1e-5, 1e-2)},
        "constraints": [f"{n}.shape[0] == x.shape[-1]" for n in ("mean", "variance", "offset",
                                                                  "scale")]
        + [f"{n}.dtype == x.dtype" for n in ("mean", "variance", "offset", "scale")]},
    "nn.bias_add": {"params": {"value": T((2, 4))},
                    "constraints": ["bias.shape[0] == value.shape[-1]"]},
    "nn.collapse_repeated": {"params": {"labels": T((2, 2), ("int32",)),
                                        "seq_length": T((1, 1), ("int32",), (0, 3))},
                             "constraints": ["seq_length.shape[0] == labels.shape[0]",
                                             "seq_length.max <= labels.shape[1]"]},
    "nn.compute_average_loss": {"params": {"per_example_loss": T((1, 2), F32)},
                                "drop": ("sample_weight", "global_batch_size")},
    "nn.scale_regularization_loss": {"params": {"regularization_loss": T((0, 0), F32)}},
    "nn.conv1d": {"params": {"input": T((3, 3), F32), "filters": T((3, 3), F32),
                             "stride": I(1, 2), "padding": S("SAME", "VALID")},
                  "drop": ("dilations",),
                  "constraints": ["filters.num_element > 0", "filters.shape[1] == input.shape[2]",
                                  "input.dtype == filters.dtype",
                                  valid_window("input", (1,), "filters.shape[{i}]")]},
    "nn.conv2d": {"params": {"input": T((4, 4)), "filters": T((4, 4)), "strides": I(1, 2),
                             "padding": S("SAME", "VALID")},
                  "drop": ("dilations",),
                  "constraints": ["filters.num_element > 0", "filters.shape[2] == input.shape[3]",
                                  valid_window("input", (1, 2), "filters.shape[{i}]")]},
    "nn.convolution": {"params": {"input": T((4, 4), F32), "filters": T((4, 4), F32),
                                  "padding": S("SAME", "VALID")},
                       "drop": ("strides", "dilations"),
                       "constraints": ["filters.num_element > 0", "filters.shape[2] == input.shape[3]",
                                       "input.dtype == filters.dtype",
                                       valid_window("input", (1, 2), "filters.shape[{i}]")]},
    "nn.conv3d": {"params": {"input": T((5, 5)), "filters": T((5, 5)),
                             "strides": L(1, 1, (5, 5)), "padding": S("SAME", "VALID")},
                  "drop": ("dilations",),
                  "constraints": ["filters.num_element > 0", "filters.shape[3] == input.shape[4]",
                                  valid_window("input", (1, 2, 3), "filters.shape[{i}]")]},
    "nn.conv1d_transpose": {
        "params": {"input": T((3, 3), F32), "filters": T((3, 3), F32),
                   "output_shape": L(1, 4, (3, 3)), **_CONVT},
        "drop": ("dilations",),
        "constraints": ["filters.shape[2] == input.shape[2]", "input.dtype == filters.dtype",
                        "output_shape[0] == input.shape[0]", "output_shape[1] == input.shape[1]",
                        "output_shape[2] == filters.shape[1]"]},
    "nn.conv2d_transpose": {
        "params": {"input": T((4, 4), F32), "filters": T((4, 4), F32),
                   "output_shape": L(1, 4, (4, 4)), **_CONVT},
        "drop": ("dilations",),
        "constraints": ["filters.shape[3] == input.shape[3]", "input.dtype == filters.dtype",
                        "output_shape[0] == input.shape[0]", "output_shape[1] == input.shape[1]",
                        "output_shape[2] == input.shape[2]",
                        "output_shape[3] == filters.shape[2]"]},
    "nn.conv_transpose": {
        "params": {"input": T((4, 4), F32), "filters": T((4, 4), F32),
                   "output_shape": L(1, 4, (4, 4)), **_CONVT},
        "drop": ("dilations",),
        "constraints": ["filters.shape[3] == input.shape[3]", "input.dtype == filters.dtype",
                        "output_shape[0] == input.shape[0]", "output_shape[1] == input.shape[1]",
                        "output_shape[2] == input.shape[2]",
                        "output_shape[3] == filters.shape[2]"]},
    "nn.conv3d_transpose": {
        "params": {"input": T((5, 5), F32), "filters": T((5, 5), F32),
                   "output_shape": L(1, 4, (5, 5)), **_CONVT},
        "drop": ("dilations",),
        "constraints": ["filters.shape[4] == input.shape[4]", "input.dtype == filters.dtype",
                        "output_shape[0] == input.shape[0]", "output_shape[1] == input.shape[1]",
                        "output_shape[2] == input.shape[2]", "output_shape[3] == input.shape[3]",
                        "output_shape[4] == filters.shape[3]"]},
    "nn.ctc_beam_search_decoder": {"skip": "returns tf.SparseTensor values"},
    "nn.ctc_greedy_decoder": {"skip": "returns tf.SparseTensor values"},
    "nn.ctc_unique_labels": {"params": {"labels": T((2, 2), IDX)}},
    "nn.crelu": {"params": {"features": T((1, 4))}},
    "nn.ctc_loss": {
        "params": {"labels": T((2, 2), ("int32",), (1, 2)), "logits": T((3, 3), ("float32",)),
                   "label_length": T((1, 1), ("int32",), (0, 2)),
                   "logit_length": T((1, 1), ("int32",), (3, 4))},
        "drop": ("unique", "blank_index", "logits_time_major"),
        "constraints": ["logits.shape[1] == labels.shape[0]", "logits.shape[2] >= 3",
                        "label_length.shape[0] == labels.shape[0]",
                        "logit_length.shape[0] == labels.shape[0]",
                        "label_length.max <= labels.shape[1]",
                        "logit_length.max <= logits.shape[0]"]},
    "nn.depth_to_space": {"params": {"input": T((4, 4))},
                          "constraints": ["input.shape[3] % (block_size * block_size) == 0"]},
    "nn.space_to_depth": {"params": {"input": T((4, 4))},
                          "constraints": ["input.shape[1] % block_size == 0",
                                          "input.shape[2] % block_size == 0"]},
    "nn.depthwise_conv2d": {
        "params": {"input": T((4, 4), F32), "filter": T((4, 4), F32),
                   "strides": _ONE4, "padding": S("SAME", "VALID")},
        "drop": ("dilations",),
        "constraints": ["filter.shape[2] == input.shape[3]", "input.dtype == filter.dtype",
                        "filter.num_element > 0",
                        valid_window("input", (1, 2), "filter.shape[{i}]")]},
    "nn.depthwise_conv2d_backprop_filter": {
        "params": {"input": T((4, 4)), "filter_sizes": L(1, 3, (4, 4)), "out_backprop": T((4, 4)),
                   "strides": _ONE4, "padding": S("SAME")},
        "drop": ("dilations",),
        "constraints": ["filter_sizes[2] == input.shape[3]"]
        + [f"out_backprop.shape[{i}] == input.shape[{i}]" for i in range(3)]
        + ["out_backprop.shape[3] == filter_sizes[2] * filter_sizes[3]"]},
    "nn.depthwise_conv2d_backprop_input": {
        "params": {"input_sizes": L(1, 4, (4, 4)), "filter": T((4, 4)), "out_backprop": T((4, 4)),
                   "strides": _ONE4, "padding": S("SAME")},
        "drop": ("dilations",),
        "constraints": ["input_sizes[3] == filter.shape[2]"]
        + [f"out_backprop.shape[{i}] == input_sizes[{i}]" for i in range(3)]
        + ["out_backprop.shape[3] == filter.shape[2] * filter.shape[3]"]},
    "nn.dilation2d": {"params": {"input": T((4, 4)), "filters": T((3, 3)), "strides": _ONE4,
                                 "dilations": _ONE4, "data_format": _NHWC},
                      "constraints": ["filters.shape[2] == input.shape[3]",
                                      valid_window("input", (1, 2), "filters.shape[{i}]")]},
    "nn.erosion2d": {"params": {"value": T((4, 4), F32), "filters": T((3, 3), F32),
                                "strides": _ONE4, "dilations": _ONE4, "data_format": _NHWC},
                     "constraints": ["filters.shape[2] == value.shape[3]",
                                     "value.dtype == filters.dtype",
                                     valid_window("value", (1, 2), "filters.shape[{i}]")]},
    "nn.dropout": {"params": {"x": T(None, FLOAT), "rate": F(0.0, 0.9)},
                   "drop": ("noise_shape", "seed")},
    "nn.embedding_lookup": {"params": {"params": T((2, 2)), "ids": T((0, 2), IDX, (0, 3))},
                            "drop": ("max_norm",),
                            "constraints": ["params.shape[0] >= 1", "ids.max < params.shape[0]"]},
    "nn.fractional_avg_pool": {
        "params": {"value": T((4, 4)), "pooling_ratio": {"structures": ("floats",),
                                                         "range": (1.0, 1.0), "length": (4, 4)}},
        "drop": ("seed",)},
    "nn.fractional_max_pool": {
        "params": {"value": T((4, 4)), "pooling_ratio": {"structures": ("floats",),
                                                         "range": (1.0, 1.0), "length": (4, 4)}},
        "drop": ("seed",)},
    "nn.gelu": {"params": {"features": T(None, FLOAT)}},
    "nn.isotonic_regression": {"params": {"inputs": T((1, 2), F32)}, "drop": ("axis",)},
    "nn.local_response_normalization": {"params": {"depth_radius": I(0, 3), "bias": F(0.5, 2),
                                                   "alpha": F(0.1, 1), "beta": F(0.1, 1)}},
    "nn.log_poisson_loss": {"params": {"targets": T(None, F32), "log_input": T(None, F32)},
                            "constraints": ["targets.dtype == log_input.dtype",
                                            *same_shape("targets", "log_input")]},
    "nn.moments": {"params": {"x": T((1, 4), FLOAT), "axes": L(0, 3, (1, 1))},
                   "drop": ("shift",), "constraints": ["axes[0] < x.ndims"]},
    "nn.sufficient_statistics": {"params": {"x": T((1, 4), F32), "axes": L(0, 3, (1, 1))},
                                 "drop": ("shift",), "constraints": ["axes[0] < x.ndims"]},
    "nn.weighted_moments": {"params": {"x": T((1, 4), F32), "axes": L(0, 3, (1, 1)),
                                       "frequency_weights": T((1, 4), F32)},
                            "constraints": ["axes[0] < x.ndims",
                                            "x.dtype == frequency_weights.dtype",
                                            *same_shape("x", "frequency_weights")]},
    "nn.nce_loss": {"skip": "samples classes from the global RNG with several coupled inputs"},
    "nn.sampled_softmax_loss": {"skip": "samples classes from the global RNG with several "
                                        "coupled inputs"},
    "nn.normalize_moments": {"params": {"counts": T((0, 0), F32), "mean_ss": T(None, F32),
                                        "variance_ss": T(None, F32),
                                        "shift": {"structures": ("none",)}},
                             "constraints": ["counts.dtype == mean_ss.dtype",
                                             "counts.dtype == variance_ss.dtype",
                                             *same_shape("mean_ss", "variance_ss")]},
    "nn.sigmoid_cross_entropy_with_logits": {
        "params": {"labels": T(None, F32, optional=False), "logits": T(None, F32, optional=False)},
        "constraints": ["labels.dtype == logits.dtype", *same_shape("labels", "logits")]},
    "nn.softmax_cross_entropy_with_logits": {
        "params": {"labels": T((1, 3), F32), "logits": T((1, 3), F32)}, "drop": ("axis",),
        "constraints": ["labels.dtype == logits.dtype", *same_shape("labels", "logits")]},
    "nn.sparse_softmax_cross_entropy_with_logits": {
        "params": {"labels": T((1, 1), IDX, (0, 1)), "logits": T((2, 2), F32)},
        "constraints": ["labels.shape[0] == logits.shape[0]", "logits.shape[1] >= 2"]},
    "nn.weighted_cross_entropy_with_logits": {
        "params": {"labels": T(None, F32), "logits": T(None, F32), "pos_weight": F(0.1, 3)},
        "constraints": ["labels.dtype == logits.dtype", *same_shape("labels", "logits")]},
    "nn.silu": {"params": {"features": T(None, FLOAT), "beta": F(0.5, 2)}},
    "nn.space_to_batch": {"params": {"input": T((4, 4)), "block_shape": L(1, 2, (2, 2)),
                                     "paddings": T((2, 2), ("int32",), (0, 0))},
                          "constraints": ["input.shape[1] % block_shape[0] == 0",
                                          "input.shape[2] % block_shape[1] == 0",
                                          "paddings.shape[0] == 2", "paddings.shape[1] == 2"]},
    "nn.separable_conv2d": {
        "params": {"input": T((4, 4), F32), "depthwise_filter": T((4, 4), F32),
                   "pointwise_filter": T((4, 4), F32), "strides": _ONE4,
                   "padding": S("SAME", "VALID")},
        "drop": ("dilations",),
        "constraints": ["depthwise_filter.shape[2] == input.shape[3]",
                        "depthwise_filter.num_element > 0", "pointwise_filter.num_element > 0",
                        "pointwise_filter.shape[0] == 1", "pointwise_filter.shape[1] == 1",
                        "pointwise_filter.shape[2] == depthwise_filter.shape[2] * "
                        "depthwise_filter.shape[3]",
                        "input.dtype == depthwise_filter.dtype",
                        "input.dtype == pointwise_filter.dtype",
                        valid_window("input", (1, 2), "depthwise_filter.shape[{i}]")]},
}
