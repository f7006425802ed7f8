"""The hand table, part 2: torch's top-level indexing, splitting, matrix and FFT functions.

Same entry format as ``torch_hints_api``. Index tensors are int64 with values drawn in
small non-negative ranges; their bounds against the indexed dimension are constraints
(``index.max < input.shape[dim]``), which the generator fixes after drawing values.
``_except_dim`` writes ATen's "every dimension but ``dim``" rules (gather, scatter) one
dimension at a time.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.specgen.torch_hints_api import (
    FLOAT_COMPLEX,
    FLOATS,
    _fft1,
    _fftn,
    _matmul_pair,
    _square,
    broadcast,
    same_dtype,
    same_shape,
)

T = "torch."
L = "torch.linalg."
FFT = "torch.fft."
INDEX = {"dtypes": ("int64",), "domain": (0, 3)}


def _except_dim(a: str, b: str, op: str, rank: int = 4) -> list[str]:
    """``a.size(d) op b.size(d)`` for every d but ``dim`` (wrapped into a's rank)."""
    return [f"{a}.ndims <= {d} or dim % max({a}.ndims, 1) == {d} or "
            f"{a}.shape[{d}] {op} {b}.shape[{d}]" for d in range(rank)]


def _scatter(src: str | None, reduce: tuple[str, ...] = ()) -> dict[str, Any]:
    cons = ["index.ndims == input.ndims", "index.max < input.shape[dim]", "input.ndims >= 1"]
    cons += _except_dim("index", "input", "<=")
    params: dict[str, Any] = {"index": INDEX}
    if src:
        cons += [f"index.ndims <= {d} or index.shape[{d}] <= {src}.shape[{d}]"
                 for d in range(4)] + [f"{src}.ndims == input.ndims"] + same_dtype(
            "input", src)
    if reduce:
        params["reduce"] = {"values": reduce}
    return {"params": params, "constraints": cons}


def _index_op(reduce: tuple[str, ...] = ()) -> dict[str, Any]:
    """index_add/index_copy/index_reduce: ``source`` is ``input`` with ``dim`` resized to
    the index length."""
    params: dict[str, Any] = {"index": {**INDEX, "rank": (1, 1)}}
    if reduce:
        params["reduce"] = {"values": reduce}
    return {"params": params,
            "constraints": ["input.ndims >= 1", "source.ndims == input.ndims",
                            "index.shape[0] == source.shape[dim]",
                            "index.max < input.shape[dim]"]
            + _except_dim("source", "input", "==") + same_dtype("input", "source")}


def _split(dim: int, rank: int) -> dict[str, Any]:
    return {"params": {"input": {"rank": (rank, 4)}, "sections": {"range": (1, 3)}},
            "constraints": [f"input.shape[{dim}] % sections == 0"]}


def _dims_plus_one(*names: str) -> dict[str, Any]:
    """Dims of the *output*, which has one more dimension than the input."""
    return {"no_dim_rule": True,
            "constraints": [f"-(input.ndims + 1) <= {n} <= input.ndims" for n in names]}


_FLOAT_OR_CAST = ("dtype is not None or input.dtype in ('float16', 'bfloat16', 'float32', "
                  "'float64')")

MORE: dict[str, dict[str, Any]] = {
    # ---- softmax-like and means: integer inputs only with an explicit float dtype
    **{m + n: {"constraints": [_FLOAT_OR_CAST],
               "reject": ["dim is not None"] * (m == "torch.nn.functional.")}
       for m in ("torch.nn.functional.", "torch.special.")
       for n in ("softmax", "log_softmax", "softmin") if m + n != "torch.special.softmin"},
    T + "mean": {"constraints": [_FLOAT_OR_CAST + " or input.dtype in ('complex64', "
                                 "'complex128')"]},
    **{T + n: {"params": {"other": {"structures": ("tensor", "int")}}} for n in (
        "bitwise_left_shift", "bitwise_right_shift")},
    # ---- matrix products
    T + "mm": _matmul_pair("input", "mat2", (2, 2), (2, 2), 1, 0),
    T + "bmm": {"params": {"input": {"rank": (3, 3)}, "mat2": {"rank": (3, 3)}},
                "constraints": ["input.shape[2] == mat2.shape[1]",
                                "input.shape[0] == mat2.shape[0]", "input.dtype == mat2.dtype"]},
    T + "mv": _matmul_pair("input", "vec", (2, 2), (1, 1), 1, 0),
    T + "dot": _matmul_pair("input", "tensor", (1, 1), (1, 1), 0, 0),
    T + "vdot": _matmul_pair("input", "other", (1, 1), (1, 1), 0, 0),
    T + "inner": {"params": {"input": {"rank": (1, 3)}, "other": {"rank": (1, 3)}},
                  "constraints": ["input.shape[-1] == other.shape[-1]",
                                  "input.dtype == other.dtype"]},
    T + "outer": {"params": {"input": {"rank": (1, 1)}, "vec2": {"rank": (1, 1)}}},
    **{p + "matmul": {"params": {"input": {"rank": (1, 4)}, "other": {"rank": (1, 4)}},
                      "constraints": ["input.shape[-1] == other.shape[-2 if other.ndims >= 2 "
                                      "else -1]", "input.dtype == other.dtype"]}
       for p in (T, L)},
    T + "addmm": {"params": {"input": {"rank": (0, 2)}, "mat1": {"rank": (2, 2)},
                             "mat2": {"rank": (2, 2)}},
                  "constraints": ["mat1.shape[1] == mat2.shape[0]",
                                  "input.ndims < 1 or input.shape[-1] == mat2.shape[1] or "
                                  "input.shape[-1] == 1",
                                  "input.ndims < 2 or input.shape[-2] == mat1.shape[0] or "
                                  "input.shape[-2] == 1"] + same_dtype("input", "mat1", "mat2")},
    T + "addmv": {"params": {"input": {"rank": (0, 1)}, "mat": {"rank": (2, 2)},
                             "vec": {"rank": (1, 1)}},
                  "constraints": ["mat.shape[1] == vec.shape[0]",
                                  "input.ndims < 1 or input.shape[0] == mat.shape[0] or "
                                  "input.shape[0] == 1"] + same_dtype("input", "mat", "vec")},
    T + "addr": {"params": {"input": {"rank": (0, 2)}, "vec1": {"rank": (1, 1)},
                            "vec2": {"rank": (1, 1)}},
                 "constraints": ["input.ndims < 1 or input.shape[-1] == vec2.shape[0] or "
                                 "input.shape[-1] == 1",
                                 "input.ndims < 2 or input.shape[-2] == vec1.shape[0] or "
                                 "input.shape[-2] == 1"]},
    **{T + n: {"params": {"input": {"rank": (0, r)}, "batch1": {"rank": (3, 3)},
                          "batch2": {"rank": (3, 3)}},
               "constraints": ["batch1.shape[0] == batch2.shape[0]",
                               "batch1.shape[2] == batch2.shape[1]",
                               "input.ndims < 1 or input.shape[-1] == batch2.shape[2] or "
                               "input.shape[-1] == 1",
                               "input.ndims < 2 or input.shape[-2] == batch1.shape[1] or "
                               "input.shape[-2] == 1",
                               "input.ndims < 3 or input.shape[-3] == batch1.shape[0] or "
                               "input.shape[-3] == 1"] + same_dtype("input", "batch1", "batch2")}
       for n, r in (("baddbmm", 3), ("addbmm", 2))},
    L + "multi_dot": {"params": {"tensors": {"rank": (2, 2), "count": (2, 3)}},
                      "constraints": ["tensors.shape[0] == tensors.shape[1]"]},
    T + "index_put": {"params": {"indices": {"dtypes": ("int64",), "domain": (0, 3),
                                             "rank": (1, 1), "count": (1, 1)},
                                 "input": {"rank": (1, 3)},
                                 "values": {"rank": (0, 0)}},
                      "constraints": ["indices.max < input.shape[0]",
                                      "values.dtype == input.dtype"]},
    T + "tensordot": {"no_dim_rule": True,
                      "params": {"a": {"rank": (2, 3)}, "b": {"rank": (2, 3)},
                                 "dims": {"structures": ("int",), "range": (0, 1)}},
                      "constraints": ["dims == 0 or a.shape[-1] == b.shape[0]",
                                      "a.dtype == b.dtype"]},
    # ---- linear algebra
    **{L + n: _square("A") for n in ("det", "slogdet", "inv", "inv_ex")},
    **{L + n: _square("input", specials=False) for n in (
        "matrix_exp", "eigvals", "eig", "eigh", "eigvalsh", "cholesky_ex", "ldl_factor",
        "ldl_factor_ex")},
    L + "cholesky": {"params": {"input": {"rank": (2, 2), "dtypes": FLOATS,
                                          "domain": (1.0, 2.0)}},
                     "constraints": ["input.shape[-1] == input.shape[-2]",
                                     "input.shape[-1] <= 1"], "specials": False},
    **{T + n: _square("input") for n in ("det", "logdet", "slogdet", "inverse",
                                          "matrix_exp")},
    T + "matrix_power": {**_square("input"), "params": {
        "input": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX}, "n": {"range": (-2, 3)}}},
    L + "matrix_power": {**_square("input"), "params": {
        "input": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX}, "n": {"range": (-2, 3)}}},
    **{L + n: {"params": {"A": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX}}, "drop": ["pivot"],
               "specials": False} for n in ("lu_factor", "lu_factor_ex", "lu")},
    T + "lu": {"params": {"A": {"rank": (2, 3), "dtypes": FLOATS}}, "drop": ["pivot"]},
    **{L + n: {"params": {"A": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX}},
               "specials": False} for n in ("svdvals", "svd")},
    L + "qr": {"params": {"A": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX},
                          "mode": {"values": ("reduced", "complete", "r")}}},
    **{L + n: {"params": {"input": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX}},
               "constraints": ["hermitian == False or input.shape[-1] == input.shape[-2]"],
               "specials": False} for n in ("pinv", "matrix_rank")},
    T + "pinverse": {"params": {"input": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX}},
                     "specials": False},
    L + "cond": {"params": {"input": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX},
                            "p": {"structures": ("int", "str", "none"),
                                  "values": (1, -1, 2, -2, "fro", "nuc")}},
                 "constraints": ["p is None or p in (2, -2) or input.shape[-1] == "
                                 "input.shape[-2]"], "specials": False},
    L + "matrix_norm": {"params": {"input": {"rank": (2, 4), "dtypes": FLOAT_COMPLEX},
                                   "ord": {"structures": ("int", "str"),
                                           "values": (1, -1, 2, -2, "fro", "nuc")},
                                   "dim": {"length": (2, 2)}}, "specials": False,
                        "drop": ["dtype"]},
    L + "norm": {"params": {"ord": {"structures": ("int", "str", "none"),
                                    "values": (1, 2, "fro")}}, "drop": ["dtype"],
                 "constraints": ["ord is None or dim is not None or input.ndims in (1, 2)",
                                 "ord is None or ord.type == 'int' or input.ndims == 2 or "
                                 "(dim is not None and dim.type == 'ints')",
                                 "dim is None or dim.type == 'int' or ord is None or "
                                 "len(dim) == 2"]},
    L + "vector_norm": {"params": {"ord": {"structures": ("int", "float"),
                                           "range": (1, 3)}}, "drop": ["dtype"]},
    L + "diagonal": {"params": {"A": {"rank": (2, 4)}},
                     "constraints": ["(dim1 - dim2) % max(A.ndims, 1) != 0"]},
    T + "diagonal": {"constraints": ["(dim1 - dim2) % max(input.ndims, 1) != 0",
                                     "input.ndims >= 2"]},
    T + "diag_embed": {**_dims_plus_one("dim1", "dim2"), "constraints": [
        "-(input.ndims + 1) <= dim1 <= input.ndims", "-(input.ndims + 1) <= dim2 <= input.ndims",
        "(dim1 - dim2) % (input.ndims + 1) != 0"]},
    T + "diagonal_scatter": {"params": {"input": {"rank": (2, 2)}, "src": {"rank": (1, 1)},
                                        "offset": {"range": (0, 0)}},
                             "constraints": ["(dim1 - dim2) % 2 != 0",
                                             "src.shape[0] == min(input.shape[0], "
                                             "input.shape[1])", "src.dtype == input.dtype"]},
    **{p + n: {"params": {"input": {"rank": (2, 3)}, "input2": {"rank": (1, 2)}},
               "constraints": ["input2.ndims == input.ndims - 1",
                               "input.shape[-2] >= input.shape[-1]",
                               "input2.shape[-1] <= input.shape[-1]",
                               "input.ndims < 3 or input2.shape[0] == input.shape[0]",
                               "input2.dtype == input.dtype"]}
       for p, n in ((T, "orgqr"),)},
    L + "householder_product": {"params": {"input": {"rank": (2, 3)}, "tau": {"rank": (1, 2)}},
                                "constraints": ["tau.ndims == input.ndims - 1",
                                                "input.shape[-2] >= input.shape[-1]",
                                                "tau.shape[-1] <= input.shape[-1]",
                                                "input.ndims < 3 or tau.shape[0] == "
                                                "input.shape[0]", "tau.dtype == input.dtype"]},
    T + "ormqr": {"params": {"input": {"rank": (2, 2)}, "input2": {"rank": (1, 1)},
                             "input3": {"rank": (2, 2)}},
                  "constraints": ["input2.shape[0] <= input.shape[1]",
                                  "input3.shape[0 if left else 1] == input.shape[0]",
                                  "input2.shape[0] == min(input3.shape[0 if left else 1], "
                                  "input.shape[1])"]
                  + same_dtype("input", "input2", "input3")},
    **{L + n: {"params": {"A": {"rank": (2, 3), "dtypes": FLOAT_COMPLEX},
                          "B": {"rank": (2, 3)}},
               "drop": ["left"],
               "constraints": ["A.shape[-1] == A.shape[-2]", "B.shape[-2] == A.shape[-1]",
                               "B.dtype == A.dtype",
                               "A.ndims < 3 or B.ndims < 3 or A.shape[0] == B.shape[0] or "
                               "A.shape[0] == 1 or B.shape[0] == 1"]}
       for n in ("solve", "solve_ex")},
    L + "lu_solve": {"params": {"LU": {"rank": (2, 2), "dtypes": FLOAT_COMPLEX},
                                "pivots": {"rank": (1, 1), "dtypes": ("int32",),
                                           "domain": (1, 4)},
                                "B": {"rank": (2, 2)}},
                     "drop": ["left"],
                     "constraints": ["LU.shape[0] == LU.shape[1]",
                                     "pivots.shape[0] == LU.shape[0]",
                                     "pivots.max <= LU.shape[0]", "B.shape[0] == LU.shape[0]",
                                     "B.dtype == LU.dtype"]},
    L + "ldl_solve": {"params": {"LD": {"rank": (2, 2), "dtypes": FLOATS},
                                 "pivots": {"rank": (1, 1), "dtypes": ("int32",),
                                            "domain": (1, 4)},
                                 "B": {"rank": (2, 2)}},
                      "drop": ["hermitian"],
                      "constraints": ["LD.shape[0] == LD.shape[1]",
                                      "pivots.shape[0] == LD.shape[0]",
                                      "pivots.max <= LD.shape[0]",
                                      "B.shape[0] == LD.shape[0]", "B.dtype == LD.dtype"]},
    L + "lstsq": {"params": {"input": {"rank": (2, 2), "dtypes": FLOATS},
                             "b": {"rank": (2, 2)}},
                  "drop": ["driver"],
                  "constraints": ["b.shape[0] == input.shape[0]", "b.dtype == input.dtype"],
                  "specials": False},
    L + "tensorinv": {"params": {"input": {"rank": (2, 2), "dtypes": FLOATS},
                                 "ind": {"range": (1, 1)}},
                      "constraints": ["input.shape[0] == input.shape[1]"]},
    L + "tensorsolve": {"params": {"input": {"rank": (2, 2), "dtypes": FLOATS},
                                   "other": {"rank": (1, 1)}},
                        "drop": ["dims"],
                        "constraints": ["input.shape[0] == other.shape[0]",
                                        "input.shape[1] == input.shape[0]",
                                        "other.dtype == input.dtype"]},
    L + "vander": {"params": {"x": {"rank": (1, 1)}, "N": {"range": (2, 4)}}},
    T + "cholesky_solve": {"params": {"input": {"rank": (2, 2)}, "input2": {"rank": (2, 2)}},
                           "constraints": ["input2.shape[0] == input2.shape[1]",
                                           "input.shape[0] == input2.shape[0]",
                                           "input.dtype == input2.dtype"]},
    T + "cholesky_inverse": _square("input"),
    T + "geqrf": {"params": {"input": {"rank": (2, 3)}}},
    T + "trace": {"params": {"input": {"rank": (2, 2)}}},
    T + "cov": {"params": {"input": {"rank": (1, 2)}, "fweights": {**INDEX, "rank": (1, 1)},
                           "aweights": {"rank": (1, 1), "domain": (0.0, 2.0)}},
                "constraints": ["fweights is None or fweights.shape[0] == input.shape[-1]",
                                "aweights is None or aweights.shape[0] == input.shape[-1]"]},
    T + "corrcoef": {"params": {"input": {"rank": (1, 2)}}},
    T + "cdist": {"params": {"x1": {"rank": (2, 3), "dtypes": FLOATS}, "x2": {"rank": (2, 3)},
                             "p": {"range": (0.0, 3.0)},
                             "compute_mode": {"structures": ("str", "none"), "values": (
                                 "use_mm_for_euclid_dist_if_necessary",
                                 "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")}},
                  "constraints": ["x1.shape[-1] == x2.shape[-1]", "x1.ndims == x2.ndims",
                                  "x1.ndims < 3 or x1.shape[0] == x2.shape[0]",
                                  "x2.dtype == x1.dtype"]},
    # ---- indexing and scattering
    T + "gather": {"params": {"index": INDEX},
                   "constraints": ["index.ndims == input.ndims", "index.max < input.shape[dim]",
                                   "input.ndims >= 1"] + _except_dim("index", "input", "<=")},
    T + "take_along_dim": {"params": {"indices": INDEX, "dim": {"structures": ("int",)}},
                           "constraints": ["indices.ndims == input.ndims", "input.ndims >= 1",
                                           "indices.max < input.shape[dim]"] + [
                               f"indices.ndims <= {d} or dim % max(input.ndims, 1) == {d} or "
                               f"indices.shape[{d}] == input.shape[{d}] or "
                               f"indices.shape[{d}] == 1 or input.shape[{d}] == 1"
                               for d in range(4)]},
    T + "scatter": _scatter(None),
    T + "scatter_add": _scatter("src"),
    T + "scatter_reduce": _scatter("src", ("sum", "prod", "mean", "amax", "amin")),
    T + "index_add": _index_op(),
    T + "index_reduce": _index_op(("prod", "mean", "amax", "amin")),
    T + "index_select": {"params": {"input": {"rank": (1, 4)}, "index": {**INDEX,
                                                                         "rank": (0, 1)}},
                         "constraints": ["index.max < input.shape[dim]"]},
    T + "index_fill": {"params": {"input": {"rank": (1, 4)},
                                  "index": {**INDEX, "rank": (0, 1)},
                                  "value": {"structures": ("int", "float")}},
                       "constraints": ["index.max < input.shape[dim]"]},
    T + "take": {"params": {"index": INDEX},
                 "constraints": ["index.max < input.num_element"]},
    T + "put": {"params": {"index": INDEX},
                "constraints": ["index.max < input.num_element",
                                "index.num_element == source.num_element",
                                "source.dtype == input.dtype"]},
    T + "masked_fill": {"params": {"mask": {"dtypes": ("bool",)},
                                   "value": {"structures": ("int", "float")}},
                        "constraints": broadcast("input", "mask")
                        + ["mask.ndims <= input.ndims"]},
    T + "masked_select": {"params": {"mask": {"dtypes": ("bool",)}},
                          "constraints": broadcast("input", "mask")},
    T + "masked_scatter": {"params": {"mask": {"dtypes": ("bool",)}},
                           "constraints": broadcast("input", "mask") + [
                               "mask.ndims <= input.ndims",
                               "source.num_element >= input.num_element",
                               "source.dtype == input.dtype"]},
    T + "select": {"params": {"input": {"rank": (1, 4)}, "index": {"range": (0, 2)}},
                   "constraints": ["index < input.shape[dim]"]},
    T + "select_scatter": {"params": {"input": {"rank": (1, 3)}, "dim": {"range": (0, 0)},
                                      "index": {"range": (0, 2)}},
                           "constraints": ["src.ndims == input.ndims - 1",
                                           "index < input.shape[0]", "src.dtype == input.dtype"]
                           + [f"src.ndims <= {d} or src.shape[{d}] == input.shape[{d + 1}]"
                              for d in range(3)]},
    T + "slice_scatter": {"drop": ["start", "end", "step"],
                          "constraints": same_shape("input", "src") + ["input.ndims >= 1",
                                                                        "src.dtype == "
                                                                        "input.dtype"]},
    T + "narrow": {"params": {"input": {"rank": (1, 4)},
                              "start": {"structures": ("int",), "range": (0, 2)},
                              "length": {"range": (0, 2)}},
                   "constraints": ["start + length <= input.shape[dim]"]},
    T + "bincount": {"params": {"input": {**INDEX, "rank": (1, 1)},
                                "weights": {"rank": (1, 1)}, "minlength": {"range": (0, 3)}},
                     "constraints": ["weights is None or weights.shape[0] == input.shape[0]"]},
    T + "bucketize": {"params": {"boundaries": {"rank": (1, 1)}}},
    T + "searchsorted": {"params": {"sorted_sequence": {"rank": (1, 1)},
                                    "side": {"values": ("left", "right")}},
                         "drop": ["sorter"],
                         "constraints": ["side != 'left' or right == False"]},
    T + "repeat_interleave": {"params": {"repeats": {"structures": ("int",)}},
                              "drop": ["output_size"]},
    T + "unique_consecutive": {"params": {"dim": {"structures": ("none",)}}},
    # ---- shapes, splits, views
    T + "reshape": {"params": {"shape": {"length": (1, 1), "range": (-1, 256)}},
                    "constraints": ["shape[0] == -1 or shape[0] == input.num_element"]},
    T + "broadcast_to": {"params": {"size": {"length": (1, 4), "range": (1, 4)}},
                         "constraints": ["len(size) >= input.ndims"] + [
                             f"input.ndims <= {i} or size[len(size) - input.ndims + {i}] == "
                             f"input.shape[{i}] or input.shape[{i}] == 1" for i in range(4)]},
    T + "unflatten": {"params": {"input": {"rank": (1, 4)},
                                 "sizes": {"length": (1, 1), "range": (-1, 16)}},
                      "constraints": ["sizes[0] == -1 or sizes[0] == input.shape[dim]"]},
    T + "tile": {"params": {"dims": {"range": (0, 3)}}, "no_dim_rule": True},
    T + "split": {"params": {"tensor": {"rank": (1, 4)},
                             "split_size_or_sections": {"structures": ("int",),
                                                        "range": (1, 3)}}},
    T + "split_with_sizes": {"params": {"input": {"rank": (1, 4)},
                                        "split_sizes": {"length": (2, 2), "range": (0, 3)}},
                             "constraints": ["split_sizes[0] + split_sizes[1] == "
                                             "input.shape[dim]"]},
    T + "tensor_split": {"params": {"input": {"rank": (1, 4)}}},
    T + "chunk": {"params": {"input": {"rank": (1, 4)}}},
    T + "hsplit": _split(1, 2), T + "vsplit": _split(0, 2), T + "dsplit": _split(2, 3),
    **{T + n: _dims_plus_one("dim") for n in ("unsqueeze",)},
    T + "stack": {"no_dim_rule": True, "params": {"tensors": {"count": (1, 3)}},
                  "constraints": ["-(tensors.ndims + 1) <= dim <= tensors.ndims"]},
    **{T + n: {"params": {"tensors": {"rank": (1, 4)}}} for n in (
        "cat", "concat", "concatenate")},
    T + "block_diag": {"params": {"tensors": {"rank": (0, 2)}}},
    T + "cartesian_prod": {"params": {"tensors": {"rank": (1, 1), "count": (1, 3)}}},
    T + "meshgrid": {"params": {"tensors": {"rank": (0, 1)}},
                     "constraints": ["tensors.ndims <= 1"]},
    T + "combinations": {"params": {"input": {"rank": (1, 1)}, "r": {"range": (0, 3)}}},
    **{T + n: {"params": {"source": {"structures": ("int",), "range": (-4, 3)},
                          "destination": {"structures": ("int",), "range": (-4, 3)}},
               "constraints": [f"-max(input.ndims, 1) <= {p} < max(input.ndims, 1)"
                               for p in ("source", "destination")]}
       for n in ("movedim", "moveaxis")},
    T + "permute": {"params": {"dims": {"length": (1, 4)}},
                    "constraints": ["len(dims) == input.ndims"]},
    T + "flatten": {"constraints": ["start_dim % max(input.ndims, 1) <= end_dim % "
                                    "max(input.ndims, 1)"]},
    T + "roll": {"params": {"shifts": {"structures": ("int",)},
                            "dims": {"structures": ("int", "none")}},
                 "constraints": ["input.ndims >= 1 or dims is None"]},
    T + "rot90": {"params": {"input": {"rank": (2, 4)}, "dims": {"length": (2, 2)}}},
    T + "t": {"params": {"input": {"rank": (0, 2)}}},
    T + "adjoint": {"params": {"input": {"rank": (2, 4)}}},
    T + "diag": {"params": {"input": {"rank": (1, 2)}}},
    T + "view_as_complex": {"params": {"input": {"rank": (1, 4), "dtypes": FLOATS}},
                            "constraints": ["input.shape[-1] == 2"]},
    T + "is_nonzero": {"constraints": ["input.num_element == 1"]},
    # ---- reductions and statistics
    **{T + n: {"params": {"input": {"rank": (1, 4)}},
               "constraints": ["k >= 1", "k <= input.shape[dim]"]} for n in ("kthvalue",)},
    T + "topk": {"params": {"input": {"rank": (1, 4)}},
                 "constraints": ["k <= input.shape[dim]"]},
    **{T + n: {"params": {"q": {"structures": ("float",), "range": (0.0, 1.0)},
                          "input": {"dtypes": FLOATS}}} for n in ("quantile", "nanquantile")},
    T + "histc": {"params": {"min": {"range": (-2, 0)}, "max": {"range": (1, 3)}},
                  "specials": False},
    T + "histogram": {"params": {"input": {"dtypes": FLOATS},
                                 "bins": {"structures": ("int",), "range": (1, 5)},
                                 "range": {"length": (2, 2)}},
                      "drop": ["weight"], "specials": False,
                      "constraints": ["range is None or range[0] < range[1]"]},
    T + "histogramdd": {"params": {"input": {"rank": (2, 2), "dtypes": FLOATS},
                                   "bins": {"range": (1, 4)}},
                        "drop": ["weight", "range"], "specials": False},
    T + "gradient": {"params": {"dim": {"structures": ("int",)},
                                "edge_order": {"range": (1, 2)}},
                     "drop": ["spacing"],
                     "constraints": ["input.ndims >= 1", "input.shape[dim] >= edge_order + 1"]},
    **{T + n: {"params": {"y": {"rank": (1, 4)}, "x": {"rank": (1, 1)}},
               "constraints": ["x.shape[0] == y.shape[dim]"]}
       for n in ("trapezoid", "trapz", "cumulative_trapezoid")},
    T + "cross": {"params": {"dim": {"structures": ("int",)}},
                  "constraints": ["input.ndims == other.ndims", "input.shape[dim] == 3",
                                  "other.shape[dim] == 3"]},
    L + "cross": {"constraints": ["input.shape[dim] == 3", "other.shape[dim] == 3"]},
    **{T + n: {"constraints": ["min is not None or max is not None"]} for n in (
        "clamp", "clip")},
    T + "diff": {"drop": ["prepend", "append"], "constraints": ["input.ndims >= 1"]},
    T + "nanmean": {"params": {"input": {"dtypes": ("float16", "bfloat16") + FLOATS}}},
    **{p: {"params": {"p": {"range": (1, 3)}, "input": {"domain": (1.5, 5.0)}},
           "specials": False}
       for p in (T + "mvlgamma", "torch.special.multigammaln")},
    # ---- sampling
    T + "bernoulli": {"params": {"input": {"domain": (0.0, 1.0), "dtypes": FLOATS},
                                 "p": {"range": (0.0, 1.0)}}, "specials": False},
    T + "poisson": {"params": {"input": {"domain": (0.0, 5.0), "dtypes": FLOATS}},
                    "specials": False},
    T + "multinomial": {"params": {"input": {"rank": (1, 2), "domain": (0.1, 1.0),
                                             "dtypes": FLOATS},
                                   "num_samples": {"range": (1, 3)}},
                        "specials": False,
                        "constraints": ["input.shape[-1] >= 1",
                                        "replacement == True or num_samples <= "
                                        "input.shape[-1]"]},
    **{T + n: {"params": {"A": {"rank": (2, 2), "dtypes": FLOATS}, "q": {"range": (1, 3)},
                          "niter": {"range": (0, 2)}},
               "drop": ["M"] if n == "svd_lowrank" else [], "specials": False,
               "constraints": ["q is None or q <= min(A.shape[0], A.shape[1])",
                               "q is not None or min(A.shape[0], A.shape[1]) >= 6"]}
       for n in ("svd_lowrank", "pca_lowrank")},
    # ---- signal
    **{FFT + n: _fft1() for n in ("fft", "ifft", "rfft", "ihfft")},
    **{FFT + n: _fft1(inverse_real=True) for n in ("irfft", "hfft")},
    **{FFT + n: _fftn(2) for n in ("fft2", "ifft2", "rfft2", "ihfft2")},
    **{FFT + n: _fftn(1) for n in ("fftn", "ifftn", "rfftn", "ihfftn")},
    **{FFT + n: {"params": {"input": {"rank": (r, 4)}}, "drop": ["s", "dim"],
                 "constraints": ["input.shape[-1] >= 2"]}
       for n, r in (("irfft2", 2), ("hfft2", 2), ("irfftn", 1), ("hfftn", 1))},
    **{FFT + n: {"params": {"input": {"rank": (1, 4)}}} for n in ("fftshift", "ifftshift")},
    T + "stft": {"params": {"input": {"rank": (1, 2), "dtypes": FLOAT_COMPLEX},
                            "n_fft": {"range": (1, 4)}, "hop_length": {"range": (1, 2)},
                            "win_length": {"range": (1, 4)},
                            "return_complex": {"structures": ("bool",)}},
                 "drop": ["window", "align_to_window"],
                 "constraints": ["n_fft <= input.shape[-1]", "n_fft // 2 < input.shape[-1]",
                                 "win_length is None or win_length <= n_fft"]},
}

SKIP_MORE: dict[str, str] = {
    T + "lobpcg": "iterative eigensolver: needs symmetric positive-definite inputs of at "
                  "least 3k rows",
    T + "istft": "input must be the STFT of a signal with matching n_fft, hop and window "
                 "(the NOLA condition)",
}
