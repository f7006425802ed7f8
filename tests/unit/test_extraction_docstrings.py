"""docstrings.py over real docstrings of torch 2.13, TensorFlow 2.21, JAX 0.10, numpy 2.4.

The literals below were copied from the libraries' ``__doc__`` (Args/Parameters sections
only) by a scratch script; the tests do not import the libraries.
"""

from __future__ import annotations

import math

from dlfuzz.specgen.docstrings import constraints_from_doc, hints, param_docs

# ruff: noqa: E501 - verbatim docstrings
TF_CONV2D = 'Args:\n  input: A `Tensor`. Must be one of the following types: `half`, `bfloat16`, `float32`, `float64`, `int32`.\n    A 4-D tensor. The dimension order is interpreted according to the value\n    of `data_format`, see below for details.\n  filter: A `Tensor`. Must have the same type as `input`.\n    A 4-D tensor of shape\n    `[filter_height, filter_width, in_channels, out_channels]`\n  strides: A list of `ints`.\n    1-D tensor of length 4.  The stride of the sliding window for each\n    dimension of `input`. The dimension order is determined by the value of\n    `data_format`, see below for details.\n  padding: A `string` from: `"SAME", "VALID", "EXPLICIT"`.\n    The type of padding algorithm to use.\n  use_cudnn_on_gpu: An optional `bool`. Defaults to `True`.\n  explicit_paddings: An optional list of `ints`. Defaults to `[]`.\n    If `padding` is `"EXPLICIT"`, the list of explicit padding amounts. For the ith\n    dimension, the amount of padding inserted before and after the dimension is\n    `explicit_paddings[2 * i]` and `explicit_paddings[2 * i + 1]`, respectively. If\n    `padding` is not `"EXPLICIT"`, `explicit_paddings` must be empty.\n  data_format: An optional `string` from: `"NHWC", "NCHW"`. Defaults to `"NHWC"`.\n    Specify the data format of the input and output data. With the\n    default format "NHWC", the data is stored in the order of:\n        [batch, height, width, channels].\n    Alternatively, the format could be "NCHW", the data storage order of:\n        [batch, channels, height, width].\n  dilations: An optional list of `ints`. Defaults to `[1, 1, 1, 1]`.\n    1-D tensor of length 4.  The dilation factor for each dimension of\n    `input`. If set to k > 1, there will be k-1 skipped cells between each\n    filter element on that dimension. The dimension order is determined by the\n    value of `data_format`, see above for details. Dilations in the batch and\n    depth dimensions must be 1.\n  name: A name for the operation (optional).\n'

TF_CUMSUM = 'Args:\n  x: A `Tensor`. Must be one of the following types: `float32`, `float64`,\n    `int64`, `int32`, `uint8`, `uint16`, `int16`, `int8`, `complex64`,\n    `complex128`, `qint8`, `quint8`, `qint32`, `half`.\n  axis: A `Tensor` of type `int32` (default: 0). Must be in the range\n    `[-rank(x), rank(x))`.\n  exclusive: If `True`, perform exclusive cumsum.\n  reverse: A `bool` (default: False).\n  name: A name for the operation (optional).\n'

TF_SEGMENT_SUM = "Args:\n  data: A `Tensor`. Must be one of the following types: `float32`, `float64`, `int32`, `uint8`, `int16`, `int8`, `complex64`, `int64`, `qint8`, `quint8`, `qint32`, `bfloat16`, `qint16`, `quint16`, `uint16`, `complex128`, `half`, `uint32`, `uint64`.\n  segment_ids: A `Tensor`. Must be one of the following types: `int32`, `int64`.\n    A 1-D tensor whose size is equal to the size of `data`'s\n    first dimension.  Values should be sorted and can be repeated.\n\n    Caution: The values are always validated to be sorted on CPU, never validated\n    on GPU.\n  name: A name for the operation (optional).\n"

TF_DEPTH_TO_SPACE = 'Args:\n  input: A `Tensor`.\n  block_size: An `int` that is `>= 2`.\n    The size of the spatial block, same as in Space2Depth.\n  data_format: An optional `string` from: `"NHWC", "NCHW", "NCHW_VECT_C"`. Defaults to `"NHWC"`.\n  name: A name for the operation (optional).\n'

TF_FRAME = 'Args:\n  signal: A `[..., samples, ...]` `Tensor`. The rank and dimensions\n    may be unknown. Rank must be at least 1.\n  frame_length: The frame length in samples. An integer or scalar `Tensor`.\n  frame_step: The frame hop size in samples. An integer or scalar `Tensor`.\n  pad_end: Whether to pad the end of `signal` with `pad_value`.\n  pad_value: An optional scalar `Tensor` to use where the input signal\n    does not exist when `pad_end` is True.\n  axis: A scalar integer `Tensor` indicating the axis to frame. Defaults to\n    the last axis. Supports negative values for indexing from the end.\n  name: An optional name for the operation.\n'

TF_BIAS_ADD = "Args:\n  value: A `Tensor` with type `float`, `double`, `int64`, `int32`, `uint8`,\n    `int16`, `int8`, `complex64`, or `complex128`.\n  bias: A 1-D `Tensor` with size matching the channel dimension of `value`.\n    Must be the same type as `value` unless `value` is a quantized type,\n    in which case a different quantized type may be used.\n  data_format: A string. 'N...C' and 'NC...' are supported. If `None` (the\n    default) is specified then 'N..C' is assumed.\n  name: A name for the operation (optional).\n"

TF_LRN = 'Args:\n  input: A `Tensor`. Must be one of the following types: `half`, `bfloat16`, `float32`.\n    4-D.\n  depth_radius: An optional `int`. Defaults to `5`.\n    0-D.  Half-width of the 1-D normalization window.\n  bias: An optional `float`. Defaults to `1`.\n    An offset (usually positive to avoid dividing by 0).\n  alpha: An optional `float`. Defaults to `1`.\n    A scale factor, usually positive.\n  beta: An optional `float`. Defaults to `0.5`. An exponent.\n  name: A name for the operation (optional).\n'

TF_SPACE_TO_BATCH = 'Args:\n  input: A `Tensor`.\n    N-D with shape `input_shape = [batch] + spatial_shape + remaining_shape`,\n    where spatial_shape has `M` dimensions.\n  block_shape: A `Tensor`. Must be one of the following types: `int32`, `int64`.\n    1-D with shape `[M]`, all values must be >= 1.\n  paddings: A `Tensor`. Must be one of the following types: `int32`, `int64`.\n    2-D with shape `[M, 2]`, all values must be >= 0.\n      `paddings[i] = [pad_start, pad_end]` specifies the padding for input dimension\n      `i + 1`, which corresponds to spatial dimension `i`.  It is required that\n      `block_shape[i]` divides `input_shape[i + 1] + pad_start + pad_end`.\n  name: A name for the operation (optional).\n'

TF_BINCOUNT = 'Args:\n  arr: A Tensor, RaggedTensor, or SparseTensor whose values should be counted.\n    These tensors must have a rank of 2 if `axis=-1`.\n  weights: If non-None, must be the same shape as arr. For each value in\n    `arr`, the bin will be incremented by the corresponding weight instead of\n    1. If non-None, `binary_output` must be False.\n  minlength: If given, ensures the output has length at least `minlength`,\n    padding with zeros at the end if necessary.\n  maxlength: If given, skips values in `arr` that are equal or greater than\n    `maxlength`, ensuring that the output has length at most `maxlength`.\n  dtype: If `weights` is None, determines the type of the output bins.\n  name: A name scope for the associated operations (optional).\n  axis: The axis to slice over. Axes at and below `axis` will be flattened\n    before bin counting. Currently, only `0`, and `-1` are supported. If None,\n    all axes will be flattened (identical to passing `0`).\n  binary_output: If True, this op will output 1 instead of the number of times\n    a token appears (equivalent to one_hot + reduce_any instead of one_hot +\n    reduce_add). Defaults to False.\n'

TORCH_CONV2D = "Args:\n    input: input tensor of shape :math:`(\\text{minibatch} , \\text{in\\_channels} , iH , iW)`\n    weight: filters of shape :math:`(\\text{out\\_channels} , \\frac{\\text{in\\_channels}}{\\text{groups}} , kH , kW)`\n    bias: optional bias tensor of shape :math:`(\\text{out\\_channels})`. Default: ``None``\n    stride: the stride of the convolving kernel. Can be a single number or a\n      tuple `(sH, sW)`. Default: 1\n    padding: implicit paddings on both sides of the input. Can be a string {'valid', 'same'},\n      single number or a tuple `(padH, padW)`. Default: 0\n      ``padding='valid'`` is the same as no padding. ``padding='same'`` pads\n      the input so the output has the same shape as the input. However, this mode\n      doesn't support any stride values other than 1.\n\n      .. warning::\n          For ``padding='same'``, if the ``weight`` is even-length and\n          ``dilation`` is odd in any dimension, a full :func:`pad` operation\n          may be needed internally. Lowering performance.\n\n    dilation: the spacing between kernel elements. Can be a single number or\n      a tuple `(dH, dW)`. Default: 1\n    groups: split input into groups, both :math:`\\text{in\\_channels}` and :math:`\\text{out\\_channels}`\n      should be divisible by the number of groups. Default: 1\n"

TORCH_DROPOUT = 'Args:\n    p: probability of an element to be zeroed. Default: 0.5\n    training: apply dropout if is ``True``. Default: ``True``\n    inplace: If set to ``True``, will do this operation in-place. Default: ``False``'

TORCH_PAD = "Args:\n    input (Tensor): N-dimensional tensor\n    pad (tuple): m-elements tuple, where\n        :math:`\\frac{m}{2} \\leq` input dimensions and :math:`m` is even.\n    mode: ``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.\n        Default: ``'constant'``\n    value: fill value for ``'constant'`` padding. Default: ``0``\n"

TORCH_INTERPOLATE = "Args:\n    input (Tensor): the input tensor\n    size (int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int]):\n        output spatial size.\n    scale_factor (float or Tuple[float]): multiplier for spatial size. If `scale_factor` is a tuple,\n        its length has to match the number of spatial dimensions; `input.dim() - 2`.\n    mode (str): algorithm used for upsampling:\n        ``'nearest'`` | ``'linear'`` | ``'bilinear'`` | ``'bicubic'`` |\n        ``'trilinear'`` | ``'lanczos'`` | ``'area'`` | ``'nearest-exact'``. Default: ``'nearest'``\n    align_corners (bool, optional): Geometrically, we consider the pixels of the\n        input and output as squares rather than points.\n        If set to ``True``, the input and output tensors are aligned by the\n        center points of their corner pixels, preserving the values at the corner pixels.\n        If set to ``False``, the input and output tensors are aligned by the corner\n        points of their corner pixels, and the interpolation uses edge value padding\n        for out-of-boundary values, making this operation *independent* of input size\n        when :attr:`scale_factor` is kept the same. This only has an effect when :attr:`mode`\n        is ``'linear'``, ``'bilinear'``, ``'bicubic'`` or ``'trilinear'``.\n        Default: ``None``. ``None`` leaves :attr:`align_corners` unset for modes\n        that do not use it. For modes that use :attr:`align_corners`, ``None``\n        is treated as ``False``.\n    recompute_scale_factor (bool, optional): recompute the scale_factor for use in the\n        interpolation calculation. If `recompute_scale_factor` is ``True``, then\n        `scale_factor` must be passed in and `scale_factor` is used to compute the\n        output `size`. The computed output `size` will be used to infer new scal"

TORCH_EMBEDDING = 'Args:\n    input (LongTensor): Tensor containing indices into the embedding matrix\n    weight (Tensor): The embedding matrix (must be 2-D) with number of rows equal to the maximum possible index + 1,\n        and number of columns equal to the embedding size\n    padding_idx (int, optional): If specified, the entries at :attr:`padding_idx` do not contribute to the gradient;\n                                 therefore, the embedding vector at :attr:`padding_idx` is not updated during training,\n                                 i.e. it remains as a fixed "pad".\n    max_norm (float, optional): If given, each embedding vector with norm larger than :attr:`max_norm`\n                                is renormalized to have norm :attr:`max_norm`.\n                                Note: this will modify :attr:`weight` in-place.\n    norm_type (float, optional): The p of the p-norm to compute for the :attr:`max_norm` option. Default ``2``.\n    scale_grad_by_freq (bool, optional): If given, this will scale gradients by the inverse of frequency of\n                                            the words in the mini-batch. Default ``False``.\n    sparse (bool, optional): If ``True``, gradient w.r.t. :attr:`weight` will be a sparse tensor. See Notes under\n                             :class:`torch.nn.Embedding` for more details regarding sparse gradients.\n\nShape:\n    - Input: LongTensor of arbitrary shape containing the indices to extract\n    - Weight: Embedding matrix of floating point type with shape `(V, embedding_dim)`,\n      where V = maximum index + 1 and embedding_dim = the embedding size\n    - Output: `(*, embedding_dim)`, where `*` is the input shape\n'

TORCH_NORM = "Args:\n    input (Tensor): tensor of shape `(*, n)` or `(*, m, n)` where `*` is zero or more batch dimensions\n    ord (int, float, inf, -inf, 'fro', 'nuc', optional): order of norm. Default: `None`\n    dim (int, Tuple[int], optional): dimensions over which to compute\n        the vector or matrix norm. See above for the behavior when :attr:`dim`\\ `= None`.\n        Default: `None`\n    keepdim (bool, optional): If set to `True`, the reduced dimensions are retained\n        in the result as dimensions with size one. Default: `False`\n\nKeyword args:\n    out (Tensor, optional): output tensor. Ignored if `None`. Default: `None`.\n    dtype (:class:`torch.dtype`, optional): If specified, the input tensor is cast to\n        :attr:`dtype` before performing the operation, and the returned tensor's type\n        will be :attr:`dtype`. Default: `None`\n\nReturns:\n    A real-valued tensor, even when :attr:`input` is complex.\n\nExamples::\n\n    >>> from torch import linalg as LA\n    >>> a = torch.arange(9, dtype=torch.float) - 4\n    >>> a\n    tensor([-4., -3., -2., -1.,  0.,  1.,  2.,  3.,  4.])\n    >>> B = a.reshape((3, 3))\n    >>> B\n    t"

JAX_SUM = "Args:\n  a: Input array.\n  axis: int or array, default=None. Axis along which the sum to be computed.\n    If None, the sum is computed along all the axes.\n  dtype: The type of the output array. Default=None.\n  out: Unused by JAX\n  keepdims: bool, default=False. If true, reduced axes are left in the result\n    with size 1.\n  initial: int or array, Default=None. Initial value for the sum.\n  where: int or array, default=None. The elements to be used in the sum. Array\n    should be broadcast compatible to the input.\n  promote_integers : bool, default=True. If True, then integer inputs will be\n    promoted to the widest available integer dtype, following numpy's behavior.\n    If False, the result will have the same dtype as the input.\n    ``promote_integers`` is ignored if ``dtype`` is specified.\n"

JAX_CONV = "Args:\n  lhs: a rank `n+2` dimensional input array.\n  rhs: a rank `n+2` dimensional array of kernel weights.\n  window_strides: a sequence of `n` integers, representing the inter-window\n    strides.\n  padding: either the strings `'SAME'`, `'SAME_LOWER'`, or `'VALID'`, or a\n    sequence of `n` `(low, high)` integer pairs that give the padding to apply\n    before and after each spatial dimension. `'SAME'` and `'SAME_LOWER'` add\n    padding to produce same output size as the input. The padding is split\n    between the two sides equally or almost equally. In case the padding is an\n    odd number, the extra padding is added at the end for `'SAME'` and at the\n    beginning for `'SAME_LOWER'`.\n  lhs_dilation: `None`, or a sequence of `n` integers, giving the dilation\n    factor to apply in each spatial dimension of `lhs`. LHS dilation is also\n    known as transposed convolution.\n  rhs_dilation: `None`, or a sequence of `n` integers, giving the dilation\n    factor to apply in each spatial dimension of `rhs`. RHS dilation is also\n    known as atrous convolution.\n  dimension_numbers: either `None`, a ``ConvDimensionNumbers`` object, or a\n    3-tuple ``(lhs_spec, rhs_spec, out_spec)``, where each element is a string\n    of length `n+2`.\n  feature_group_count: integer, default 1. See XLA HLO docs.\n  batch_group_count: integer, default 1. See XLA HLO docs.\n  precision: Optional. Either ``None``, which means the default precision for\n    the backend, a :class:`~jax.lax.Precision` enum value\n    (``Precision.DEFAULT``, ``Precision.HIGH`` or ``Precision.HIGHEST``), a\n    string (e.g. 'highest' or 'fastest', see the\n    ``jax.default_matmul_precision`` context manager), or a tuple of two\n    :class:`~jax.lax.Precision` enums or strings indicating precision of\n    ``lhs`` and ``rhs``.\n  preferred_element_type: Optional. Either ``None``, which means the default\n    accumulation type for the input types, or a datatype, indicating to\n    accumulate results to and return a result with that datatype.\n  out_sharding: Optional. Specifies how the output array should be sharded\n    across devices in multi-device computation. Can be a\n    :class:`~jax.sharding.NamedSharding`, a :class:`~jax.sharding.PartitionSpec`\n    (``P``), or ``None`` (default). When specified, the output will be sharded\n    according to the given sharding specification. Primarily used in explicit\n    sharding mode.\n    See the `explicit sharding tutorial <https://docs.jax.dev/en/latest/parallel.html>`_\n    for more details.\n"

JAX_REDUCE_WINDOW = 'Args:\n  operand: input array or tree of arrays.\n  init_value: value or tree of values. Tree structure must match that\n    of ``operand``. The values in ``init_value`` must be scalars.\n  computation: callable function over which to reduce. Input and output must be\n    a tree of the same structure as ``operand``.\n  window_dimensions: sequence of integers specifying the window size.\n  window_strides: optional sequence of integers specifying the strides, of\n    the same length as ``window_dimensions``.  Default (``None``) indicates\n    a unit stride in each window dimension.\n  padding: string or sequence of integer tuples specifying the type of padding\n    to use (default: "VALID"). If a string, must be one of "VALID", "SAME", or\n    "SAME_LOWER". See the :func:`jax.lax.padtype_to_pads` utility.\n  base_dilation: optional sequence of integers for base dilation values, of\n    the same length as ``window_dimensions``. Default (``None``) indicates unit\n    dilation in each window dimension.\n  window_dilation: optional sequence of integers for window dilation values, of\n    the same length as ``window_dimensions``. Default (``None``) indicates unit\n    dilation in each window dimension.\n'

JAX_TOP_K = 'Args:\n  operand: N-dimensional array of non-complex type.\n  k: integer specifying the number of top entries.\n  axis: optional integer specifying the axis along which to compute the top\n    ``k`` entries. Default is -1, indicating the last axis.\n'

JAX_ONE_HOT = 'Args:\n  x: A tensor of indices.\n  num_classes: Number of classes in the one-hot dimension.\n  dtype: optional, a float dtype for the returned values (default :obj:`jnp.float_`).\n  axis: the axis or axes along which the function should be\n    computed.'

NUMPY_LINSPACE = 'Parameters\n----------\nstart : array_like\n    The starting value of the sequence.\nstop : array_like\n    The end value of the sequence, unless `endpoint` is set to False.\n    In that case, the sequence consists of all but the last of ``num + 1``\n    evenly spaced samples, so that `stop` is excluded.  Note that the step\n    size changes when `endpoint` is False.\nnum : int, optional\n    Number of samples to generate. Default is 50. Must be non-negative.\nendpoint : bool, optional\n    If True, `stop` is the last sample. Otherwise, it is not included.\n    Default is True.\nretstep : bool, optional\n    If True, return (`samples`, `step`), where `step` is the spacing\n    between samples.\ndtype : dtype, optional\n    The type of the output array.  If `dtype` is not given, the data type\n    is inferred from `start` and `stop`. The inferred dtype will never be\n    an integer; `float` is chosen even if the arguments would produce an\n    array of integers.\naxis : int, optional\n    The axis in the result to store the samples.  Relevant only if start\n    or stop are array-like.  By default (0), the samples will be along a\n    new axis inserted at the beginning. Use -1 to get an axis at the end.\ndevice : str, optional\n    The device on which to place the created array. Default: None.\n    For Array-API interoperability only, so must be ``"cpu"`` if passed.\n\n    .. versionadded:: 2.0.0\n'

TORCH_SUM = '.. function:: sum(input, dim, keepdim=False, *, dtype=None) -> Tensor\n   :noindex:\n\nReturns the sum of each row of the :attr:`input` tensor in the given\ndimension :attr:`dim`. If :attr:`dim` is a list of dimensions,\nreduce over all of them.\n\n\nIf :attr:`keepdim` is ``True``, the output tensor is of the same size\nas :attr:`input` except in the dimension(s) :attr:`dim` where it is of size 1.\nOtherwise, :attr:`dim` is squeezed (see :func:`torch.squeeze`), resulting in the\noutput tensor having 1 (or ``len(dim)``) fewer dimension(s).\n\n\nArgs:\n    input (Tensor): the input tensor.\n    \n    dim (int or tuple of ints, optional): the dimension or dimensions to reduce.\n        If ``None``, all dimensions are reduced.\n\n    \n    keepdim (bool, optional): whether the output tensor has :attr:`dim` retained or not. Default: ``False``.\n\n\nKeyword args:\n    dtype (:class:`torch.dtype`, optional): the desired data type of returned tensor.\n        If specified, the input tensor is casted to :attr:`dtype` before the operation\n        is performed. This is useful for preventing data type overflows. Default: None.\n\n'

REST_DOC = """Top entries.

    :param x: the input.
    :type x: Tensor
    :param int k: number of entries,
        at least one.
    :returns: values
    """


# ---- param_docs -------------------------------------------------------------------------
def test_google_sections_of_each_library_are_split_by_parameter() -> None:
    assert list(param_docs(TF_CONV2D)) == ["input", "filter", "strides", "padding",
                                           "use_cudnn_on_gpu", "explicit_paddings",
                                           "data_format", "dilations", "name"]
    assert param_docs(TORCH_PAD)["pad"].startswith("(tuple): m-elements tuple")
    assert "reduced axes are left" in param_docs(JAX_SUM)["keepdims"]
    # jax writes "promote_integers : bool" (numpydoc spacing inside a Google section)
    assert param_docs(JAX_SUM)["promote_integers"].startswith("bool, default=True.")


def test_continuation_lines_belong_to_their_parameter() -> None:
    docs = param_docs(TF_CONV2D)
    assert "Dilations in the batch and" in docs["dilations"]
    assert "Dilations" not in docs["name"]


def test_numpydoc_and_rest_styles() -> None:
    docs = param_docs(NUMPY_LINSPACE)
    assert docs["num"].startswith("(int, optional):")
    assert "Must be non-negative" in docs["num"]
    assert set(docs) >= {"start", "stop", "num", "endpoint", "retstep", "dtype", "axis"}
    rest = param_docs(REST_DOC)
    assert rest["x"] == "(Tensor): the input."
    assert rest["k"].startswith("number of entries") and "at least one" in rest["k"]


def test_keyword_args_sections_and_overloads() -> None:
    docs = param_docs(TORCH_SUM)
    assert docs["dtype"].startswith("(:class:`torch.dtype`, optional)")
    assert docs["input"] == "(Tensor): the input tensor."
    assert docs["keepdim"].startswith("(bool, optional)")


def test_no_sections_no_params() -> None:
    assert param_docs(None) == {}
    assert param_docs("Returns x + y.\n\n  Returns:\n    A tensor.") == {}


# ---- hints: TensorFlow ------------------------------------------------------------------
def test_tf_dtype_lists_map_names_and_drop_unknown_dtypes() -> None:
    h = hints(param_docs(TF_CUMSUM)["x"])
    assert h["structures"] == ("tensor",)
    assert "float16" in h["dtypes"] and "half" not in h["dtypes"]
    assert not {"qint8", "quint8", "qint32"} & set(h["dtypes"])
    assert h["dtypes"][:4] == ("float32", "float64", "int64", "int32")
    bias = hints(param_docs(TF_BIAS_ADD)["value"])  # "with type `float`, `double`, ..."
    assert bias["dtypes"][:2] == ("float32", "float64")


def test_tf_of_type_default_and_rank() -> None:
    docs = param_docs(TF_CUMSUM)
    axis = hints(docs["axis"])
    assert axis["dtypes"] == ("int32",) and axis["default"] == 0
    assert hints(docs["reverse"]) == {"structures": ("bool",), "default": False}
    assert hints(docs["exclusive"])["structures"] == ("bool",)


def test_tf_enums_optional_defaults_lists() -> None:
    docs = param_docs(TF_CONV2D)
    assert hints(docs["padding"])["values"] == ("SAME", "VALID", "EXPLICIT")
    fmt = hints(docs["data_format"])
    assert fmt == {"structures": ("str",), "optional": True, "default": "NHWC",
                   "values": ("NHWC", "NCHW")}
    dil = hints(docs["dilations"])
    assert dil["structures"] == ("ints",) and dil["default"] == [1, 1, 1, 1]
    assert dil["length"] == (4, 4)
    assert hints(docs["input"])["rank"] == (4, 4)
    assert hints(docs["use_cudnn_on_gpu"])["default"] is True


def test_tf_int_ranges_and_lengths() -> None:
    block = hints(param_docs(TF_DEPTH_TO_SPACE)["block_size"])
    assert block["structures"] == ("int",)
    assert block["range"][0] == 2 and block["range"][1] > 2
    assert hints(param_docs(TF_DEPTH_TO_SPACE)["block_size"], open_bounds=True)["range"] \
        == (2, math.inf)
    docs = param_docs(TF_SPACE_TO_BATCH)
    assert hints(docs["block_shape"])["domain"][0] == 1      # "all values must be >= 1"
    assert hints(docs["paddings"])["rank"] == (2, 2)


def test_tf_scalars_at_least_and_free_sentences() -> None:
    docs = param_docs(TF_FRAME)
    assert hints(docs["signal"])["rank"][0] == 1            # "Rank must be at least 1"
    step = hints(docs["frame_step"])
    assert set(step["structures"]) == {"int", "tensor"} and step["rank"] == (0, 0)
    assert hints(docs["pad_end"])["structures"] == ("bool",)   # "Whether to ..."
    lrn = param_docs(TF_LRN)
    assert "range" not in hints(lrn["bias"])                # "usually positive": no bound
    assert hints(lrn["input"])["rank"] == (4, 4)


def test_conditional_statements_are_not_hints() -> None:
    docs = param_docs(TF_BINCOUNT)
    assert "rank" not in hints(docs["arr"])                 # "rank of 2 if `axis=-1`"
    assert "structures" not in hints(docs["weights"])        # "If non-None, ..."


# ---- hints: torch and jax ---------------------------------------------------------------
def test_torch_annotations() -> None:
    norm = param_docs(TORCH_NORM)
    assert hints(norm["keepdim"]) == {"structures": ("bool",), "optional": True,
                                      "default": False}
    ord_ = hints(norm["ord"])
    assert ord_["values"] == ("fro", "nuc") and set(ord_["structures"]) == {
        "int", "float", "str"}
    assert hints(norm["dtype"])["structures"] == ("dtype",)
    interp = param_docs(TORCH_INTERPOLATE)
    assert set(hints(interp["size"])["structures"]) == {"int", "ints"}
    assert set(hints(interp["scale_factor"])["structures"]) == {"float", "floats"}
    assert "values" not in hints(interp["align_corners"])  # modes quoted in prose of a bool
    assert hints(interp["mode"])["values"][:3] == ("nearest", "linear", "bilinear")
    emb = param_docs(TORCH_EMBEDDING)
    assert hints(emb["input"])["dtypes"] == ("int64",)      # (LongTensor)
    assert hints(emb["weight"])["rank"] == (2, 2)           # "(must be 2-D)"


def test_torch_free_text_params() -> None:
    conv = param_docs(TORCH_CONV2D)
    pad = hints(conv["padding"])
    assert pad["values"] == ("valid", "same") and "str" in pad["structures"]
    stride = hints(conv["stride"])
    assert "ints" in stride["structures"] and stride["length"] == (2, 2)
    assert stride["default"] == 1
    assert hints(conv["input"])["rank"] == (4, 4)
    drop = hints(param_docs(TORCH_DROPOUT)["p"])
    assert drop["range"] == (0.0, 1.0) and drop["default"] == 0.5
    mode = hints(param_docs(TORCH_PAD)["mode"])
    assert mode["values"] == ("constant", "reflect", "replicate", "circular")


def test_jax_google_style() -> None:
    s = param_docs(JAX_SUM)
    assert hints(s["keepdims"]) == {"structures": ("bool",), "default": False}
    assert set(hints(s["axis"])["structures"]) == {"int", "tensor"}
    assert hints(s["dtype"])["structures"] == ("dtype",)    # "The type of the output array"
    conv = param_docs(JAX_CONV)
    assert hints(conv["window_strides"])["structures"] == ("ints",)
    assert hints(conv["feature_group_count"]) == {"structures": ("int",), "default": 1}
    pad = hints(conv["padding"])
    assert pad["values"] == ("SAME", "SAME_LOWER", "VALID") and "str" in pad["structures"]
    assert hints(param_docs(JAX_REDUCE_WINDOW)["padding"])["default"] == "VALID"
    assert hints(param_docs(JAX_TOP_K)["axis"])["default"] == -1
    one_hot = hints(param_docs(JAX_ONE_HOT)["dtype"])
    assert one_hot["structures"] == ("dtype",) and "float32" in one_hot["dtypes"]


def test_ranges_from_prose() -> None:
    assert hints("(float): must be between 0 and 1.")["range"] == (0.0, 1.0)
    assert hints("(int): a non-negative integer.", open_bounds=True)["range"] == (0, math.inf)
    assert hints("(int): must be positive.")["range"][0] == 1
    assert hints("(float): in the range [0.5, 2].")["range"] == (0.5, 2.0)
    assert "range" not in hints("(Tensor): a symmetric positive-definite matrix.")
    assert hints("(Tensor): must be a 3-D or 4-D tensor")["rank"] == (3, 4)


# ---- constraints_from_doc ---------------------------------------------------------------
def test_relational_sentences() -> None:
    assert constraints_from_doc(TF_CONV2D, ["input", "filter", "strides", "padding"]) == [
        "filter.dtype == input.dtype"]
    assert constraints_from_doc(TF_CUMSUM, ["x", "axis"]) == [
        "axis >= -x.ndims and axis < x.ndims"]
    assert constraints_from_doc(TF_SEGMENT_SUM, ["data", "segment_ids"]) == [
        "segment_ids.shape[0] == data.shape[0]"]
    # optional: "If non-None, must be the same shape as arr"
    assert constraints_from_doc(TF_BINCOUNT, ["arr", "weights"]) == [
        "weights is None or (weights.ndims == arr.ndims)"]


def test_relational_sentences_only_over_known_params() -> None:
    assert constraints_from_doc(TF_CONV2D, ["filter", "strides"]) == []
    assert constraints_from_doc("Args:\n  k (int): must be positive.\n", ["k"]) == ["k > 0"]
    assert constraints_from_doc(None, ["x"]) == []


def test_dtype_families_in_prose_are_unioned() -> None:
    # torch.nanmean: "input (Tensor): the input tensor, either of floating point or complex dtype"
    h = hints("(Tensor): the input tensor, either of floating point or complex dtype")
    assert h["structures"] == ("tensor",)  # the annotation decides the structure
    assert set(h["dtypes"]) == {"float16", "bfloat16", "float32", "float64", "complex64",
                                "complex128"}
