"""errorfeedback over error messages captured from torch 2.13, TensorFlow 2.21 and JAX 0.10.

Every message below was produced by running the library on a bad input (scratch script,
not part of the suite); the draw beside it holds the inputs that produced it. The
expected constraints name the parameter the message is about and are violated by the
draw.
"""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import numpy as np
import pytest

from dlfuzz.engines.api.constraints import Env, TensorProps, holds, parse
from dlfuzz.engines.api.errorfeedback.engine import constraints_from_error, dtype_of, shape_of
from dlfuzz.engines.api.libspecs import LibParam, LibSpec

# ruff: noqa: E501 - verbatim messages


def draw(lib: str, api: str, **values: Any) -> NS:
    """A Draw-like object: a spec with one parameter per value, and the values."""
    params = []
    for k, v in values.items():
        s = (("tensor",) if isinstance(v, np.ndarray | TensorProps) else ("ints",)
             if isinstance(v, list) else ("str",) if isinstance(v, str) else ("float",)
             if isinstance(v, float) else ("int",))
        params.append(LibParam(k, s))
    return NS(spec=LibSpec(lib, api, tuple(params)), values=values)


def Z(*shape: int, dtype: Any = np.float32) -> np.ndarray:  # noqa: N802 - reads like a literal
    return np.zeros(shape, dtype)


CASES = [
    ("torch", "IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 3)", draw("torch","torch.sum", input=Z(2,3), dim=3),
     ['-(input.ndims) <= dim < input.ndims']),
    ("torch", "IndexError", "Dimension out of range (expected to be in range of [-3, 2], but got 4)", draw("torch","torch.unsqueeze", input=Z(2,3), dim=4),
     ['-(input.ndims + 1) <= dim < input.ndims + 1']),
    ("torch", "IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)", draw("torch","torch.nn.functional.normalize", input=Z(3)),
     ['input.ndims > 1']),
    ("torch", "RuntimeError", "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]", draw("torch","c", input=Z(2,3), weight=Z(4,3,3,3)),
     ['input.ndims >= 3 and input.ndims <= 4']),
    ("torch", "RuntimeError", "Given groups=1, weight of size [4, 2, 3, 3], expected input[1, 3, 5, 5] to have 2 channels, but got 3 channels instead", draw("torch","c", input=Z(1,3,5,5), weight=Z(4,2,3,3), groups=1),
     ['input.shape[-3] == weight.shape[1] * groups']),
    ("torch", "RuntimeError", "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size [[4, 2, 3, 3]] instead", draw("torch","c", input=Z(1,6,5,5), weight=Z(4,2,3,3), groups=3),
     ['weight.shape[0] % groups == 0']),
    ("torch", "RuntimeError", "expected scalar type Float but found Double", draw("torch","c", input=Z(1,3,5,5), weight=Z(4,3,3,3, dtype=np.float64)),
     ['weight.dtype == input.dtype']),
    ("torch", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", draw("torch","mm", input=Z(2,3), mat2=Z(4,5)),
     ['input.shape[-1] == mat2.shape[-2]']),
    ("torch", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)", draw("torch","linear", input=Z(2,3), weight=Z(4,5)),
     ['input.shape[-1] == weight.shape[-1]']),
    ("torch", "RuntimeError", "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", draw("torch","add", input=Z(2,3), other=Z(4)),
     ['input.ndims < 1 or other.ndims < 1 or input.shape[-1] == other.shape[-1] or input.shape[-1] == 1 or other.shape[-1] == 1']),
    ("torch", "RuntimeError", "zeros: Dimension size must be non-negative.", draw("torch","zeros", size=[-1, 2]),
     ["size.type not in ('ints', 'floats') or min(size) >= 0"]),
    ("torch", "NotImplementedError", "\"softmax_lastdim_kernel_impl\" not implemented for 'Int'", draw("torch","softmax", input=Z(3, dtype=np.int32), dim=0),
     ["input.dtype != 'int32'"]),
    ("torch", "RuntimeError", "linalg.inv: Low precision dtypes not supported. Got Half", draw("torch","inv", A=Z(3,3, dtype=np.float16)),
     ["A.dtype != 'float16'"]),
    ("torch", "RuntimeError", "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices", draw("torch","inv", A=Z(2,3)),
     ['A.ndims >= 2 and A.shape[-1] == A.shape[-2]']),
    ("torch", "RuntimeError", "linalg.inv: The input tensor A must have at least 2 dimensions.", draw("torch","inv", A=Z(3)),
     ['A.ndims >= 2']),
    ("torch", "RuntimeError", "linalg.inv: Expected a floating point or complex tensor as input. Got Long", draw("torch","inv", A=Z(3,3, dtype=np.int64)),
     ["A.dtype in ('float16', 'bfloat16', 'float32', 'float64', 'complex64', 'complex128')"]),
    ("torch", "RuntimeError", "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]", draw("torch","ln", input=Z(2,3), normalized_shape=[4]),
     ['len(normalized_shape) <= 0 or input.shape[-len(normalized_shape)] == normalized_shape[0]']),
    ("torch", "RuntimeError", "running_mean should contain 3 elements not 4", draw("torch","bn", input=Z(2,3), running_mean=Z(4), running_var=Z(4)),
     ['running_mean.num_element == input.shape[1]']),
    ("torch", "RuntimeError", "Halving dimension must be even, but dimension 0 is size 3", draw("torch","glu", input=Z(3), dim=0),
     ['input.shape[dim] % 2 == 0']),
    ("torch", "RuntimeError", "chunk expects `chunks` to be greater than 0, got: 0", draw("torch","chunk", input=Z(2,3), chunks=0),
     ["chunks.type not in ('int', 'float') or chunks > 0"]),
    ("torch", "RuntimeError", "non-positive stride is not supported", draw("torch","conv", input=Z(1,3,5,5), weight=Z(4,3,3,3), stride=0),
     ["stride.type not in ('int', 'float') or stride > 0"]),
    ("torch", "RuntimeError", "selected index k out of range", draw("torch","topk", input=Z(3), k=5),
     ['k <= input.shape[-1]']),
    ("torch", "RuntimeError", "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=3 is not divisible by 4", draw("torch","ps", input=Z(1,3,2,2), upscale_factor=2),
     ['input.shape[-3] % (upscale_factor * upscale_factor) == 0']),
    ("torch", "RuntimeError", "Index tensor must have the same number of dimensions as input tensor", draw("torch","gather", input=Z(2,3), dim=1, index=Z(2,3,4, dtype=np.int64)),
     ['index.ndims == input.ndims']),
    ("torch", "RuntimeError", "1D tensors expected, but got 2D and 1D tensors", draw("torch","dot", input=Z(3,3), other=Z(3)),
     ['input.ndims == 1']),
    ("torch", "RuntimeError", "Invalid normalization mode: \"bad\"", draw("torch","fft", input=Z(3), norm="bad"),
     ["norm != 'bad'"]),
    ("torch", "NotImplementedError", "Got 3D input, but bilinear mode needs 4D input", draw("torch","interp", input=Z(1,1,3), size=4, mode="bilinear"),
     ["mode != 'bilinear' or input.ndims == 4"]),
    ("torch", "RuntimeError", "random_ expects 'from' to be less than 'to', but got from=5 >= to=2", draw("torch","randint", low=5, high=2, size=[3]),
     ['low < high']),
    ("torch", "RuntimeError", "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater than actual input size", draw("torch","c", input=Z(1,3,2,2), weight=Z(4,3,3,3)),
     ['input.shape[-1] >= weight.shape[-1]']),
    ("torch", "RuntimeError", "Given input size: (1x2x2). Calculated output size: (1x0x0). Output size is too small", draw("torch","mp", input=Z(1,1,2,2), kernel_size=5),
     ['input.shape[-1] >= kernel_size and input.shape[-2] >= kernel_size']),
    ("torch", "TypeError", "only integer tensors of a single element can be converted to an index", draw("torch","x", input=Z(3), repeats=Z(3, dtype=np.int64)),
     ["repeats.type != 'tensor' or (repeats.num_element == 1 and repeats.dtype in ('int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64'))"]),
    ("torch", "RuntimeError", "expected m1 and m2 to have the same dtype, but got: float != double", draw("torch","mm", input=Z(2,3), mat2=Z(3,2, dtype=np.float64)),
     ['mat2.dtype == input.dtype']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__AddV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} Incompatible shapes: [2,3] vs. [4] [Op:AddV2] name: ", draw("tf","add", x=Z(2,3), y=Z(4)),
     ['x.ndims < 1 or y.ndims < 1 or x.shape[-1] == y.shape[-1] or x.shape[-1] == 1 or y.shape[-1] == 1']),
    ("tf", "InvalidArgumentError", "cannot compute AddV2 as input #1(zero-based) was expected to be a float tensor but is a double tensor [Op:AddV2] name: ", draw("tf","add", x=Z(2), y=Z(2, dtype=np.float64)),
     ['y.dtype == x.dtype']),
    ("tf", "InvalidArgumentError", "Value for attr 'T' of int8 is not in the list of allowed values: half, bfloat16, float, double, int32\n\t; NodeDef: {{node Conv2D}}; Op<name=Conv2D; signature=input:T, filter:T -> output:T; attr=T:type,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT32]; attr=strides:list(int); attr=use_cudnn_on_gpu:bool,defaul", draw("tf","conv", input=Z(1,5,5,3, dtype=np.int8), filters=Z(3,3,3,4, dtype=np.int8)),
     ["input.dtype in ('float16', 'bfloat16', 'float32', 'float64', 'int32')", "filters.dtype in ('float16', 'bfloat16', 'float32', 'float64', 'int32')"]),
    ("tf", "ValueError", "in user code:\n\n    File \"/tmp/x.py\", line 6, in None  *\n        lambda: tf.matmul(T(2,3), T(4,5))\n\n    ValueError: Dimensions must be equal, but are 3 and 4 for '{{node MatMul}} = MatMul[T=DT_FLOAT, grad_a=false, grad_b=false, transpose_a=false, transpose_b=false](Const, Const_1)' with input shapes: [2,3], [4,5].\n", draw("tf","matmul", a=Z(2,3), b=Z(4,5)),
     ['a.shape[-1] == b.shape[-2]']),
    ("tf", "ValueError", "ValueError: Shape must be rank 4 but is rank 2 for '{{node LRN}} = LRN[T=DT_FLOAT, alpha=1, beta=0.5, bias=1, depth_radius=5](Const)' with input shapes: [2,3].", draw("tf","lrn", input=Z(2,3)),
     ['input.ndims == 4']),
    ("tf", "ValueError", "Shape must be at least rank 2 but is rank 1 for '{{node MatrixInverse}}", draw("tf","inv", input=Z(3)),
     ['input.ndims >= 2']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__MaxPool_device_/job:localhost/replica:0/task:0/device:CPU:0}} Input must be 4 or 5-dimensional [Op:MaxPool] name: ", draw("tf","mp", input=Z(2,3), ksize=2),
     ['input.ndims >= 4 and input.ndims <= 5']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__MatrixInverse_device_/job:localhost/replica:0/task:0/device:CPU:0}} Input tensor 0 must have rank >= 2, got 1 [Op:MatrixInverse] name: ", draw("tf","inv", input=Z(3)),
     ['input.ndims >= 2']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__Sum_device_/job:localhost/replica:0/task:0/device:CPU:0}} Invalid reduction dimension (3 for input with 2 dimension(s) [Op:Sum] name: ", draw("tf","rs", input_tensor=Z(2,3), axis=3),
     ['-(input_tensor.ndims) <= axis < input_tensor.ndims']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__Cumsum_device_/job:localhost/replica:0/task:0/device:CPU:0}} ScanOp: Expected scan axis in the range [-2, 2), but got 5 [Op:Cumsum] name: ", draw("tf","cs", x=Z(2,3), axis=5),
     ['-(x.ndims) <= axis < x.ndims']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__ExpandDims_device_/job:localhost/replica:0/task:0/device:CPU:0}} Tried to expand dim index 5 for tensor with 2 dimensions. [Op:ExpandDims] name: ", draw("tf","ed", input=Z(2,3), axis=5),
     ['-(input.ndims + 1) <= axis < input.ndims + 1']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped____MklMatMul_device_/job:localhost/replica:0/task:0/device:CPU:0}} Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5] [Op:MatMul] name: ", draw("tf","mm", a=Z(2,3), b=Z(4,5)),
     ['a.shape[-1] == b.shape[-2]']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__DepthToSpace_device_/job:localhost/replica:0/task:0/device:CPU:0}} Input depth dimension 3 should be divisible by: 4 [Op:DepthToSpace] name: ", draw("tf","d2s", input=Z(1,2,2,3), block_size=2),
     ['input.shape[-1] % (block_size * block_size) == 0']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = 5 is not in [0, 2) [Op:GatherV2] name: ", draw("tf","g", params=Z(2,3), indices=np.array([5], np.int32)),
     ['indices.min >= 0 and indices.max < params.shape[0]']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped____MklNativeConv2D_device_/job:localhost/replica:0/task:0/device:CPU:0}} input depth must be evenly divisible by filter depth: 3 vs 2 [Op:Conv2D] name: ", draw("tf","c", input=Z(1,5,5,3), filters=Z(3,3,2,4)),
     ['input.shape[-1] % filters.shape[-2] == 0']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__TopKV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} input must have at least k columns. Had 3, needed 5 [Op:TopKV2] name: ", draw("tf","tk", input=Z(3), k=5),
     ['input.shape[-1] >= k']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__BiasAdd_device_/job:localhost/replica:0/task:0/device:CPU:0}} Must provide as many biases as the last dimension of the input tensor: [4] vs. [2,3] [Op:BiasAdd] name: ", draw("tf","ba", value=Z(2,3), bias=Z(4)),
     ['bias.shape[0] == value.shape[-1]']),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__Range_device_/job:localhost/replica:0/task:0/device:CPU:0}} Requires delta != 0: 0 [Op:Range] name: ", draw("tf","r", start=0, limit=5, delta=0),
     ['delta != 0']),
    ("tf", "NotFoundError", "Could not find device for node: {{node Cholesky}} = Cholesky[T=DT_HALF]\nAll kernels registered for op Cholesky:\n  device='XLA_CPU_JIT'; T in [DT_FLOAT]", draw("tf","ch", input=Z(3,3, dtype=np.float16)),
     ["input.dtype != 'float16'"]),
    ("tf", "InvalidArgumentError", "{{function_node __wrapped__Tile_device_/job:localhost/replica:0/task:0/device:CPU:0}} Expected multiples argument to be a vector of length 2 but got length 1 [Op:Tile]", draw("tf","tile", input=Z(2,3), multiples=[2]),
     ['len(multiples) == input.ndims']),
    ("tf", "ValueError", "Negative dimension size caused by subtracting 3 from 2 for '{{node MaxPool2d}} = MaxPool[T=DT_FLOAT]' with input shapes: [1,2,2,1].", draw("tf","mp", input=Z(1,2,2,1), ksize=3),
     ['input.shape[-2] >= ksize']),
    ("tf", "TypeError", "Value passed to parameter 'x' has DataType int32 not in list of allowed values: bfloat16, float16, float32, float64, complex64, complex128", draw("tf","sqrt", x=Z(3, dtype=np.int32)),
     ["x.dtype in ('bfloat16', 'float16', 'float32', 'float64', 'complex64', 'complex128')"]),
    ("jax", "ValueError", "axis 3 is out of bounds for array of dimension 2", draw("jax","sum", a=Z(2,3), axis=3),
     ['-(a.ndims) <= axis < a.ndims']),
    ("jax", "ValueError", "axis 5 is out of bounds for array of dimension 3", draw("jax","ed", a=Z(2,3), axis=5),
     ['-(a.ndims + 1) <= axis < a.ndims + 1']),
    ("jax", "ValueError", "Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]", draw("jax","add", x1=Z(2,3), x2=Z(4)),
     ['x1.ndims < 1 or x2.ndims < 1 or x1.shape[-1] == x2.shape[-1] or x1.shape[-1] == 1 or x2.shape[-1] == 1']),
    ("jax", "ValueError", "Incompatible shapes for broadcasting: (2, 3) and (4,)", draw("jax","add", x1=Z(2,3), x2=Z(4)),
     ['x1.ndims < 1 or x2.ndims < 1 or x1.shape[-1] == x2.shape[-1] or x1.shape[-1] == 1 or x2.shape[-1] == 1']),
    ("jax", "TypeError", "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,).", draw("jax","matmul", a=Z(2,3), b=Z(4,5)),
     ['a.shape[-1] == b.shape[-2]']),
    ("jax", "TypeError", "lax.add requires arguments to have the same dtypes, got float32, float64. (Tip: jnp.add is a similar function that does automatic type promotion on inputs).", draw("jax","add", x=Z(2), y=Z(2, dtype=np.float64)),
     ['y.dtype == x.dtype']),
    ("jax", "TypeError", "sin does not accept dtype int32. Accepted dtypes are subtypes of floating, complexfloating.", draw("jax","sin", x=Z(3, dtype=np.int32)),
     ["x.dtype in ('float16', 'bfloat16', 'float32', 'float64', 'complex64', 'complex128')"]),
    ("jax", "TypeError", "and does not accept dtype float32 at position 0. Accepted dtypes at position 0 are subtypes of integer, bool.", draw("jax","and", x=Z(3), y=Z(3)),
     ["x.dtype in ('int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'bool')"]),
    ("jax", "ValueError", "conv_general_dilated lhs feature dimension size divided by feature_group_count must equal the rhs input feature dimension size, but 3 // 1 != 2.", draw("jax","conv", lhs=Z(1,3,5,5), rhs=Z(4,2,3,3), window_strides=[1,1], padding="SAME"),
     ['lhs.shape[1] == rhs.shape[1]']),
    ("jax", "TypeError", "convolution requires lhs and rhs ndim to be equal, got 3 and 4.", draw("jax","conv", lhs=Z(3,5,5), rhs=Z(4,3,3,3)),
     ['lhs.ndims == rhs.ndims']),
    ("jax", "ValueError", "Argument to inv must have shape [..., n, n], got (2, 3).", draw("jax","inv", a=Z(2,3)),
     ['a.ndims >= 2 and a.shape[-1] == a.shape[-2]']),
    ("jax", "ValueError", "Argument to jax.numpy.tril must be at least 2D", draw("jax","tril", m=Z(3)),
     ['m.ndims >= 2']),
    ("jax", "ValueError", "k argument to top_k must be no larger than size along axis; got k=5 with shape=[3] and axis=0", draw("jax","top_k", operand=Z(3), k=5),
     ['k <= operand.shape[0]']),
    ("jax", "TypeError", "slice slice_sizes must be less than or equal to operand shape, got slice_sizes (5,) for operand shape (4,).", draw("jax","ds", operand=Z(4), start_indices=[0], slice_sizes=[5]),
     ['slice_sizes[0] <= operand.shape[0]']),
    ("jax", "ValueError", "indices and arr must have the same number of dimensions; 3 vs. 2", draw("jax","tak", arr=Z(2,3), indices=Z(1,2,3, dtype=np.int32), axis=1),
     ['indices.ndims == arr.ndims']),
    ("jax", "TypeError", "transpose permutation isn't a permutation of operand dimensions, got permutation (0,) for operand shape (2, 3).", draw("jax","tr", a=Z(2,3), axes=[0]),
     ['len(axes) == a.ndims']),
    ("jax", "ValueError", "top_k is not compatible with complex inputs.", draw("jax","top_k", operand=Z(3, dtype=np.complex64), k=1),
     ["operand.dtype not in ('complex64', 'complex128')"]),
    ("jax", "ValueError", "array split does not result in an equal division: rest is 1", draw("jax","split", ary=Z(4), indices_or_sections=3),
     ['ary.shape[0] % indices_or_sections == 0']),
    ("jax", "ValueError", "cannot select an axis to squeeze out which has size not equal to one, got shape=(2, 3) and dimensions=(0,)", draw("jax","sq", a=Z(2,3), axis=0),
     ['a.shape[axis] == 1']),
    ("jax", "TypeError", "select `which` must be boolean or integer type, got float32.", draw("jax","select", pred=Z(3), on_true=Z(3), on_false=Z(3)),
     ["pred.dtype in ('bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64')"]),
]


@pytest.mark.parametrize(("library", "exc_type", "message", "d", "expected"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_real_messages(library: str, exc_type: str, message: str, d: NS,
                       expected: list[str]) -> None:
    got = constraints_from_error(library, exc_type, message, d)
    assert got == expected
    for text in got:  # each parses over the API's parameters and explains the failure
        assert not holds(parse(text, d.spec.names), Env(d.values))


def test_constraints_allow_the_fix() -> None:
    d = draw("torch", "torch.sum", input=Z(2, 3), dim=3)
    (text,) = constraints_from_error("torch", "IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 3)", d)
    tree = parse(text)
    assert holds(tree, Env({"input": Z(2, 3), "dim": 1}))
    assert holds(tree, Env({"input": Z(2, 3, 4, 5), "dim": 3}))
    assert not holds(tree, Env({"input": Z(2, 3), "dim": -3}))


def test_defaults_of_unpassed_parameters_are_used() -> None:
    spec = LibSpec("torch", "torch.nn.functional.normalize",
                   (LibParam("input", ("tensor",)), LibParam("dim", ("int",), optional=True, default=1)))
    d = NS(spec=spec, values={"input": Z(3)})
    assert constraints_from_error("torch", "IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)", d) == [
        "-(input.ndims) <= dim < input.ndims"]


def test_tensor_props_work_as_values() -> None:
    d = draw("jax", "jax.numpy.tril", m=TensorProps((3,), "float32"))
    assert constraints_from_error("jax", "ValueError", "Argument to jax.numpy.tril must be at least 2D", d) == ["m.ndims >= 2"]


def test_other_libraries_and_unknown_messages_give_nothing() -> None:
    d = draw("torch", "torch.sum", input=Z(2, 3), dim=3)
    msg = "Dimension out of range (expected to be in range of [-2, 1], but got 3)"
    assert constraints_from_error("jax", "IndexError", msg, d) == []
    assert constraints_from_error("torch", "RuntimeError", "something went wrong", d) == []
    assert constraints_from_error("torch", "RuntimeError", "", d) == []


def test_a_constraint_the_draw_satisfies_is_not_an_explanation() -> None:
    # the message names a rank the draw already has: nothing to learn from it
    d = draw("tf", "tf.nn.local_response_normalization", input=Z(1, 2, 2, 3))
    assert constraints_from_error("tf", "ValueError", "Shape must be rank 4 but is rank 2 for '{{node LRN}}'", d) == []


def test_dtype_and_shape_spellings() -> None:
    assert [dtype_of(w) for w in ("Float", "Double", "Half", "DT_HALF", "ComplexFloat", "torch.FloatTensor", "int32", "tf.float64", "qint8")] == [
        "float32", "float64", "float16", "float16", "complex64", "float32", "int32", "float64", None]
    assert shape_of("[2, 3]") == shape_of("(2, 3)") == shape_of("[2,3]") == (2, 3)
    assert shape_of("(2,)") == (2,) and shape_of("[]") == ()


def test_scalars_have_the_axes_of_vectors_in_torch() -> None:
    d = draw("torch", "torch.cumsum", input=Z(), dim=-2)
    (text,) = constraints_from_error("torch", "IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got -2)", d)
    assert text == "-(max(input.ndims, 1)) <= dim < max(input.ndims, 1)"
    assert holds(parse(text), Env({"input": Z(), "dim": -1}))
    assert holds(parse(text), Env({"input": Z(2), "dim": -1}))
    assert not holds(parse(text), Env({"input": Z(2), "dim": -2}))


def test_named_matrix_messages() -> None:
    d = draw("torch", "torch.mm", input=Z(3), mat2=Z(3, 2))
    assert constraints_from_error("torch", "RuntimeError", "self must be a matrix", d) == ["input.ndims == 2"]
    d = draw("torch", "torch.mm", input=Z(2, 3), mat2=Z(3))
    assert constraints_from_error("torch", "RuntimeError", "mat2 must be a matrix", d) == ["mat2.ndims == 2"]
