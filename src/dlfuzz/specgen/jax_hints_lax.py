"""Hand hints for jax.lax, jax.numpy.linalg/fft, jax.nn and jax.scipy.special (see
``jax_hints`` for the format). Each entry covers a check that extraction cannot see:
XLA-side shape checks (conv window sizes, slice bounds), checks in C++ or in loops that
``validation`` drops, and structured arguments restricted to a simple form."""

from __future__ import annotations

from typing import Any

SCALAR = {"rank": [0, 0]}
INT_INDEX = {"dtypes": ["int32", "int64"], "rank": [0, 0]}
INT_SCALAR = {"type": ["int"]}
VEC = {"rank": [1, 1]}


def _same_shape(a: str, b: str) -> list[str]:
    return [f"{a}.ndims == {b}.ndims"] + [
        f"{a}.shape[{i}] == {b}.shape[{i}] or {b}.ndims <= {i}" for i in range(4)]


def _square(a: str, rank: tuple[int, int] = (2, 4)) -> dict[str, Any]:
    return {"params": {a: {"rank": list(rank)}},
            "constraints": [f"{a}.shape[-1] == {a}.shape[-2]"]}


def _conv(lhs_rank: tuple[int, int] = (3, 5), nhwc: bool = False) -> list[str]:
    """Kernels no larger than the input along every spatial dimension, one dtype, one
    stride per spatial dimension (checked by XLA, not by the Python shape rule)."""
    first = 1 if nhwc else 2
    out = ["lhs.ndims == rhs.ndims", "lhs.dtype == rhs.dtype", "rhs.num_element > 0"]
    for i in range(lhs_rank[1] - 2):
        out.append(f"rhs.shape[{first + i - (1 if nhwc else 0)}] <= lhs.shape[{first + i}] "
                   f"or lhs.ndims <= {first + i + (1 if nhwc else 0)}")
    return out


_DIL = {"type": ["ints", "none"], "range": [1, 2]}
_LAPACK = ["float32", "float64", "complex64", "complex128"]  # no half types in LAPACK calls
_PAD = {"type": ["str"], "values": ["SAME", "VALID"]}
_CUM = {"params": {"operand": {"rank": [1, 4]}}}

LAX: dict[str, dict[str, Any]] = {
    "jax.lax.conv": {"params": {"lhs": {"rank": [3, 5]}, "rhs": {"rank": [3, 5]},
                                "window_strides": {"range": [1, 3]}, "padding": _PAD},
                     "constraints": [*_conv(), "lhs.shape[1] == rhs.shape[1]",
                                     "len(window_strides) == lhs.ndims - 2"]},
    "jax.lax.conv_with_general_padding": {
        "params": {"lhs": {"rank": [3, 5]}, "rhs": {"rank": [3, 5]}, "padding": _PAD,
                   "window_strides": {"range": [1, 3]}, "lhs_dilation": {"type": ["none"]},
                   "rhs_dilation": _DIL},
        "constraints": [*_conv(), "lhs.shape[1] == rhs.shape[1]",
                        "len(window_strides) == lhs.ndims - 2",
                        "rhs_dilation is None or len(rhs_dilation) == lhs.ndims - 2"]},
    "jax.lax.conv_general_dilated": {
        "params": {"lhs": {"rank": [3, 5]}, "rhs": {"rank": [3, 5]},
                   "window_strides": {"range": [1, 3]},
                   "padding": {"type": ["str"], "values": ["SAME", "VALID", "SAME_LOWER"]},
                   "rhs_dilation": _DIL, "feature_group_count": {"type": ["int"],
                                                                 "range": [1, 2]}},
        "drop": ["dimension_numbers", "lhs_dilation", "batch_group_count"],
        "constraints": [*_conv(), "lhs.shape[1] == rhs.shape[1] * feature_group_count",
                        "rhs.shape[0] % feature_group_count == 0",
                        "len(window_strides) == lhs.ndims - 2",
                        "rhs_dilation is None or len(rhs_dilation) == lhs.ndims - 2"],
        "notes": "dimension_numbers None (NCHW/OIHW); padding as strings; no lhs dilation"},
    "jax.lax.conv_transpose": {
        "params": {"lhs": {"rank": [3, 5]}, "rhs": {"rank": [3, 5]}, "padding": _PAD,
                   "strides": {"range": [1, 3]}, "rhs_dilation": _DIL},
        "drop": ["dimension_numbers", "transpose_kernel", "use_consistent_padding"],
        "constraints": [*_conv(nhwc=True), "lhs.shape[-1] == rhs.shape[-2]",
                        "len(strides) == lhs.ndims - 2",
                        "rhs_dilation is None or len(rhs_dilation) == lhs.ndims - 2"],
        "notes": "dimension_numbers None: NHWC inputs, HWIO kernels"},
    "jax.lax.conv_general_dilated_patches": {
        "params": {"lhs": {"rank": [3, 5]}, "filter_shape": {"range": [1, 3]},
                   "window_strides": {"range": [1, 3]}, "padding": _PAD,
                   "rhs_dilation": _DIL},
        "drop": ["dimension_numbers", "lhs_dilation"],
        "constraints": ["lhs.shape[1] >= 1", "len(filter_shape) == lhs.ndims - 2",
                        "len(window_strides) == lhs.ndims - 2",
                        "rhs_dilation is None or len(rhs_dilation) == lhs.ndims - 2"] + [
            f"filter_shape[{i}] <= lhs.shape[{i + 2}] or lhs.ndims <= {i + 2}"
            for i in range(3)]},
    "jax.lax.fft": {"params": {"x": {"rank": [1, 4], "dtypes": ["float32", "float64",
                                                                  "complex64", "complex128"]},
                               "fft_type": {"type": ["str"], "values": ["FFT", "IFFT", "RFFT"]},
                               "fft_lengths": {"type": ["ints"], "range": [1, 4],
                                               "length": [1, 1]}},
                    "constraints": [
        "fft_lengths[0] == x.shape[-1]",
        "fft_type in ('FFT', 'IFFT') and x.dtype in ('complex64', 'complex128') or "
        "fft_type == 'RFFT' and x.dtype in ('float32', 'float64')"]},
    "jax.lax.round": {"params": {"rounding_method": {"type": ["int"], "values": [0, 1]}}},
    "jax.lax.dot": {"params": {"lhs": {"rank": [1, 2]}, "rhs": {"rank": [1, 2]}},
                    "drop": ["dimension_numbers"],
                    "constraints": ["lhs.shape[-1] == rhs.shape[0]", "lhs.dtype == rhs.dtype"]},
    "jax.lax.batch_matmul": {"params": {"lhs": {"rank": [2, 4]}, "rhs": {"rank": [2, 4]}},
                             "constraints": ["lhs.shape[-1] == rhs.shape[-2]",
                                             "lhs.dtype == rhs.dtype",
                                             "lhs.shape[0] == rhs.shape[0] or lhs.ndims < 3",
                                             "lhs.shape[1] == rhs.shape[1] or lhs.ndims < 4"]},
    "jax.lax.broadcast_in_dim": {
        "params": {"operand": {"rank": [0, 2]}, "shape": {"range": [1, 4], "length": [0, 3]},
                   "broadcast_dimensions": {"range": [0, 2], "length": [0, 2]}},
        "constraints": [
            "len(broadcast_dimensions) == operand.ndims", "len(shape) >= operand.ndims",
            "broadcast_dimensions[0] < len(shape) or len(broadcast_dimensions) < 1",
            "broadcast_dimensions[1] > broadcast_dimensions[0] and "
            "broadcast_dimensions[1] < len(shape) or len(broadcast_dimensions) < 2",
            "operand.shape[0] == shape[broadcast_dimensions[0]] or operand.shape[0] == 1 "
            "or operand.ndims < 1",
            "operand.shape[1] == shape[broadcast_dimensions[1]] or operand.shape[1] == 1 "
            "or operand.ndims < 2"]},
    "jax.lax.broadcast_like": {"constraints": ["like_arr.ndims >= arr.ndims"] + [
        f"arr.shape[-{i}] == like_arr.shape[-{i}] or arr.shape[-{i}] == 1 or arr.ndims < {i}"
        for i in range(1, 5)]},
    "jax.lax.broadcast_to_rank": {"params": {"rank": {"range": [0, 4]}},
                                  "constraints": ["rank >= x.ndims"]},
    "jax.lax.clamp": {"params": {"min": SCALAR, "max": SCALAR}},
    "jax.lax.full": {"params": {"fill_value": SCALAR}},
    "jax.lax.full_like": {"params": {"fill_value": SCALAR}},
    "jax.lax.iota": {"params": {"size": {"range": [0, 6]}}},
    "jax.lax.broadcasted_iota": {"params": {"shape": {"range": [0, 4], "length": [1, 4]},
                                            "dimension": {"range": [0, 3]}},
                                 "constraints": ["dimension < len(shape)"]},
    "jax.lax.integer_pow": {"params": {"y": {"range": [0, 4]}}},
    "jax.lax.pow": {"constraints": ["y.dtype == x.dtype or y.dtype in ('int8', 'int16', "
                                    "'int32', 'int64', 'uint8', 'uint32')"]},
    "jax.lax.bitcast_convert_type": {"constraints": [
        "operand.dtype in ('int8', 'uint8') and new_dtype in ('int8', 'uint8') or "
        "operand.dtype in ('int16', 'float16', 'bfloat16') and new_dtype in ('int16', "
        "'float16', 'bfloat16') or operand.dtype in ('int32', 'uint32', 'float32') and "
        "new_dtype in ('int32', 'uint32', 'float32') or operand.dtype in ('int64', "
        "'float64') and new_dtype in ('int64', 'float64')"],
        "params": {"operand": {"dtypes": ["int8", "uint8", "int16", "float16", "bfloat16",
                                          "int32", "uint32", "float32", "int64", "float64"]},
                   "new_dtype": {"dtypes": ["int8", "uint8", "int16", "float16", "bfloat16",
                                            "int32", "uint32", "float32", "int64",
                                            "float64"]}}},
    "jax.lax.argmax": {"params": {"index_dtype": {"dtypes": ["int32", "int64"]}},
                       "constraints": ["operand.shape[axis] > 0"]},
    "jax.lax.argmin": {"params": {"index_dtype": {"dtypes": ["int32", "int64"]}},
                       "constraints": ["operand.shape[axis] > 0"]},
    **{f"jax.lax.{n}": _CUM for n in ("cumsum", "cumprod", "cummax", "cummin",
                                      "cumlogsumexp")},
    "jax.lax.top_k": {"params": {"operand": {"rank": [1, 4]}, "k": {"range": [0, 3]}},
                      "constraints": ["k <= operand.shape[axis]"]},
    **{f"jax.lax.approx_{m}_k": {
        "params": {"operand": {"rank": [1, 4]}, "k": {"range": [1, 3]},
                   "reduction_dimension": INT_SCALAR},
        "constraints": ["k <= operand.shape[reduction_dimension]"]} for m in ("max", "min")},
    "jax.lax.sort": {"params": {"operand": {"rank": [1, 4], "count": [1, 2]},
                                "num_keys": {"range": [1, 2]}}},
    "jax.lax.sort_key_val": {"params": {"keys": {"rank": [1, 4]}},
                             "constraints": _same_shape("values", "keys")},
    "jax.lax.transpose": {"params": {"permutation": {"length": [0, 4]}},
                          "axes": ["permutation"],
                          "constraints": ["len(permutation) == operand.ndims"]},
    "jax.lax.rev": {"axes": ["dimensions"]},
    "jax.lax.squeeze": {"params": {"dimensions": {"length": [0, 1]}}, "axes": ["dimensions"],
                        "constraints": ["array.shape[dimensions[0]] == 1 or "
                                        "len(dimensions) == 0"]},
    "jax.lax.expand_dims": {"params": {"dimensions": {"length": [0, 1], "range": [0, 4]}},
                            "constraints": ["dimensions[0] <= array.ndims or "
                                            "len(dimensions) == 0"]},
    "jax.lax.reshape": {"params": {"new_sizes": {"length": [1, 1]}}, "drop": ["dimensions"],
                        "constraints": ["new_sizes[0] == operand.num_element"]},
    "jax.lax.tile": {"params": {"reps": {"type": ["ints"], "range": [0, 3], "length": [0, 4]}},
                     "constraints": ["len(reps) == operand.ndims"]},
    "jax.lax.split": {"params": {"operand": {"rank": [1, 4]},
                                 "sizes": {"range": [0, 4], "length": [1, 2]}},
                      "constraints": [
        "sizes[0] == operand.shape[axis] or len(sizes) == 2",
        "sizes[0] <= operand.shape[axis]",
        "sizes[1] == operand.shape[axis] - sizes[0] or len(sizes) == 1"]},
    "jax.lax.concatenate": {"params": {"operands": {"rank": [1, 4]}}},
    "jax.lax.stack": {"own_axes": ["axis"],
                      "constraints": ["axis >= 0 and axis <= operands.ndims"]},
    "jax.lax.unstack": {"params": {"x": {"rank": [1, 4]}}},
    "jax.lax.collapse": {"params": {"start_dimension": {"range": [0, 4]},
                                    "stop_dimension": {"type": ["int", "none"],
                                                       "range": [0, 4]}},
                         "constraints": ["start_dimension <= operand.ndims",
                                         "stop_dimension is None or stop_dimension >= "
                                         "start_dimension and stop_dimension <= operand.ndims"]},
    "jax.lax.slice": {"params": {"start_indices": {"range": [0, 4], "length": [0, 4]},
                                 "limit_indices": {"range": [0, 4], "length": [0, 4]},
                                 "strides": {"type": ["ints", "none"], "range": [1, 2],
                                             "length": [0, 4]}},
                      "constraints": ["strides is None or len(strides) == operand.ndims"] + [
        f"start_indices[{i}] <= limit_indices[{i}] and limit_indices[{i}] <= operand.shape[{i}]"
        f" or operand.ndims <= {i}" for i in range(4)]},
    "jax.lax.slice_in_dim": {"params": {"start_index": {"type": ["int", "none"],
                                                        "range": [0, 4]},
                                        "limit_index": {"type": ["int", "none"],
                                                        "range": [0, 4]},
                                        "stride": {"range": [1, 2]}},
                             "constraints": [
        "start_index is None or start_index <= operand.shape[axis]",
        "limit_index is None or limit_index <= operand.shape[axis]",
        "limit_index is None or start_index is None or start_index <= limit_index"]},
    "jax.lax.index_in_dim": {"params": {"index": {"range": [-3, 3]}},
                             "constraints": ["index >= -operand.shape[axis] and "
                                             "index < operand.shape[axis]"]},
    "jax.lax.dynamic_index_in_dim": {"params": {"index": INT_INDEX},
                                     "constraints": ["operand.shape[axis] > 0"]},
    "jax.lax.dynamic_slice_in_dim": {"params": {"start_index": INT_INDEX,
                                                "slice_size": {"range": [0, 4]}},
                                     "constraints": ["slice_size <= operand.shape[axis]"]},
    "jax.lax.dynamic_slice": {"params": {"start_indices": {**INT_INDEX, "count": [0, 4]},
                                         "slice_sizes": {"range": [0, 4], "length": [0, 4]}},
                              "constraints": ["len(slice_sizes) == operand.ndims"] + [
        f"slice_sizes[{i}] <= operand.shape[{i}] or operand.ndims <= {i}" for i in range(4)]},
    "jax.lax.dynamic_update_slice": {
        "params": {"start_indices": {**INT_INDEX, "count": [0, 4]}},
        "constraints": ["update.dtype == operand.dtype"] + [f"update.shape[{i}] <= operand.shape[{i}] or operand.ndims <= {i}"
                        for i in range(4)]},
    "jax.lax.dynamic_update_index_in_dim": {
        "params": {"index": INT_INDEX},
        "constraints": ["update.dtype == operand.dtype",
                        "update.ndims == operand.ndims", "update.shape[axis] == 1",
                        "operand.shape[axis] > 0"] + [
            f"update.shape[{i}] == operand.shape[{i}] or {i} == axis or operand.ndims <= {i}"
            for i in range(4)]},
    "jax.lax.dynamic_update_slice_in_dim": {
        "params": {"start_index": INT_INDEX},
        "constraints": ["update.dtype == operand.dtype", "update.ndims == operand.ndims",
                        "update.shape[axis] <= operand.shape[axis]"] + [
            f"update.shape[{i}] == operand.shape[{i}] or {i} == axis or operand.ndims <= {i}"
            for i in range(4)]},
    "jax.lax.index_take": {"params": {"idxs": {"type": ["tensors"], "dtypes": ["int32"],
                                               "domain": [0, 0],
                                               "rank": [1, 1], "count": [1, 2]},
                                      "axes": {"length": [1, 2]}},
                           "constraints": ["len(idxs) == len(axes)",
                                           "axes[1] > axes[0] or len(axes) < 2"]},
    "jax.lax.select": {"constraints": _same_shape("on_false", "on_true") + [
        "on_false.dtype == on_true.dtype",
        "pred.ndims == 0 or pred.ndims == on_true.ndims"] + [
        f"pred.shape[{i}] == on_true.shape[{i}] or pred.ndims <= {i}" for i in range(4)]},
    "jax.lax.select_n": {"params": {"which": {"dtypes": ["bool"]},
                                    "cases": {"count": [2, 2]}},
                         "constraints": ["which.ndims == 0 or which.ndims == cases.ndims"] + [
        f"which.shape[{i}] == cases.shape[{i}] or which.ndims <= {i}" for i in range(4)]},
    "jax.lax.reduce_precision": {"params": {"operand": {"type": ["tensor"]}}},
}

LINALG_FFT: dict[str, dict[str, Any]] = {
    **{f"jax.numpy.linalg.{n}": _square("a") for n in (
        "det", "inv", "eig", "eigvals", "slogdet", "cholesky", "eigh", "eigvalsh")},
    "jax.numpy.linalg.matrix_power": {"params": {"a": {"rank": [2, 4]}, "n": {"range": [-2, 4]}},
                                      "constraints": ["a.shape[-1] == a.shape[-2]",
                                                      f"n >= 0 or a.dtype in {tuple(_LAPACK)}"]},
    "jax.numpy.linalg.pinv": {"drop": ["rtol", "rcond"],
                              "constraints": ["a.shape[-1] == a.shape[-2] or hermitian == False"]},
    "jax.numpy.linalg.matrix_rank": {"drop": ["rtol", "tol"], "constraints": [
        "M.shape[-1] == M.shape[-2] or hermitian == False"]},
    "jax.numpy.linalg.qr": {"params": {"a": {"rank": [2, 4]}}},
    "jax.numpy.linalg.svd": {"constraints": ["a.shape[-1] == a.shape[-2] or hermitian == False"]},
    "jax.numpy.linalg.cond": {"params": {"p": {"type": ["none"]}},
                              "constraints": ["x.num_element > 0"]},
    "jax.numpy.linalg.matrix_norm": {"params": {"ord": {"type": ["str", "int"], "values": [
        "fro", "nuc", 1, -1, 2, -2]}, "x": {"dtypes": _LAPACK, "rank": [2, 4]}},
        "constraints": ["x.num_element > 0"]},
    "jax.numpy.linalg.vector_norm": {"params": {"ord": {"type": ["int"],
                                                        "values": [0, 1, -1, 2, -2]},
                                                "x": {"dtypes": _LAPACK}}},
    "jax.numpy.linalg.norm": {"params": {"ord": {"type": ["none", "int"], "values": [1, 2]},
                                         "axis": {"length": [1, 2]},
                                         "x": {"dtypes": _LAPACK, "rank": [1, 4]}},
                              "constraints": ["ord is None or axis is not None or x.ndims <= 2"]},
    "jax.numpy.linalg.lstsq": {"params": {"a": {"rank": [2, 2], "dtypes": _LAPACK},
                                          "b": {"rank": [1, 2], "dtypes": _LAPACK}},
                               "drop": ["rcond"], "constraints": ["b.shape[0] == a.shape[0]"]},
    "jax.numpy.linalg.solve": {"params": {"a": {"rank": [2, 2]}, "b": {"rank": [1, 2]}},
                               "constraints": ["a.shape[0] == a.shape[1]",
                                               "b.shape[0] == a.shape[0]"]},
    "jax.numpy.linalg.tensorsolve": {"params": {"a": {"rank": [2, 2]}, "b": VEC},
                                     "drop": ["axes"],
                                     "constraints": ["a.shape[0] == a.shape[1]",
                                                     "b.shape[0] == a.shape[0]"]},
    "jax.numpy.linalg.tensorinv": {"params": {"a": {"rank": [4, 4]},
                                              "ind": {"type": ["int"], "values": [2]}},
                                   "constraints": ["a.shape[0] == a.shape[2]",
                                                   "a.shape[1] == a.shape[3]"]},
    # members of a tensor list share one shape: square matrices, or two vectors
    "jax.numpy.linalg.multi_dot": {"params": {"arrays": {"rank": [1, 2], "count": [2, 3]}},
                                   "constraints": ["arrays.ndims == 1 and len(arrays) == 2 or "
                                                   "arrays.shape[0] == arrays.shape[1]"]},
    "jax.numpy.linalg.cross": {"drop": ["axis"], "broadcast": [["x1", "x2"]],
                               "constraints": ["x1.shape[-1] == 3", "x2.shape[-1] == 3"]},
    "jax.numpy.linalg.vecdot": {"drop": ["axis"], "params": {"x1": {"rank": [1, 4]}},
                                "broadcast": [["x1", "x2"]],
                                "constraints": ["x1.shape[-1] == x2.shape[-1]"]},
    "jax.numpy.linalg.tensordot": {"params": {"axes": {"type": ["int"], "range": [0, 2]}},
                                   "own_axes": ["axes"], "constraints": [
        "axes <= x1.ndims and axes <= x2.ndims",
        "x1.shape[x1.ndims - axes] == x2.shape[0] or axes < 1",
        "x1.shape[x1.ndims - axes + 1] == x2.shape[1] or axes < 2"]},
    **{f"jax.numpy{m}.matmul": {
        "params": {a: {"rank": [1, 3]}, b: {"rank": [1, 3]}},
        "constraints": [f"{a}.shape[-1] == ({b}.shape[-2] if {b}.ndims >= 2 else "
                        f"{b}.shape[0])",
                        f"{a}.shape[0] == {b}.shape[0] or {a}.shape[0] == 1 or "
                        f"{b}.shape[0] == 1 or {a}.ndims < 3 or {b}.ndims < 3"]}
        for m, a, b in (("", "a", "b"), (".linalg", "x1", "x2"))},
    **{f"jax.numpy.fft.{n}": {"params": {"a": {"rank": [1, 4]}}} for n in (
        "fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
}

NN_SPECIAL: dict[str, dict[str, Any]] = {
    "jax.nn.glu": {"constraints": ["x.shape[axis] % 2 == 0"]},
    "jax.nn.one_hot": {"params": {"x": {"dtypes": ["int32", "int64"], "domain": [0, 5]},
                                  "axis": INT_SCALAR},
                       "own_axes": ["axis"],
                       "constraints": ["axis >= -x.ndims - 1 and axis <= x.ndims"]},
    "jax.nn.dot_product_attention": {
        "params": {"query": {"rank": [4, 4]}, "key": {"rank": [4, 4]},
                   "value": {"rank": [4, 4]},
                   "scale": {"type": ["float", "none"], "range": [0.1, 2.0]}},
        "drop": ["bias", "mask"],
        "constraints": ["query.shape[0] == key.shape[0]", "value.shape[0] == key.shape[0]",
                        "query.shape[3] == key.shape[3]", "value.shape[1] == key.shape[1]",
                        "value.shape[2] == key.shape[2]", "query.shape[2] == key.shape[2]",
                        "value.shape[3] == key.shape[3]", "key.shape[2] > 0",
                        "query.dtype == key.dtype", "value.dtype == key.dtype"]},
    "jax.nn.standardize": {"drop": ["mean", "variance"]},
    "jax.nn.squareplus": {"params": {"b": {"type": ["float"], "range": [0.0, 4.0]}}},
    "jax.scipy.special.logsumexp": {"drop": ["b"]},
    "jax.scipy.special.multigammaln": {"params": {"d": {"type": ["int"], "range": [1, 4]}}},
    "jax.scipy.special.bessel_jn": {"params": {"v": {"range": [0, 3]}}},
    "jax.scipy.special.zeta": {"params": {"q": {"type": ["tensor"], "optional": False}},
                               "broadcast": [["x", "q"]]},
    "jax.scipy.special.factorial": {"drop": ["exact"]},
    "jax.scipy.special.bernoulli": {"params": {"n": {"range": [0, 10]}}},
    "jax.scipy.special.sph_harm_y": {
        "params": {"n": {"dtypes": ["int32", "int64"], "domain": [0, 3], "rank": [1, 1]},
                   "m": {"dtypes": ["int32", "int64"], "domain": [0, 0], "rank": [1, 1]},
                   "theta": VEC, "phi": VEC},
        "drop": ["diff_n", "n_max"], "broadcast": [["n", "m", "theta", "phi"]]},
}
