"""TensorFlow API signatures shared by every library that composes TF APIs.

A composition takes the API's own parameter names, so the TF wrappers of the libraries
that compose TF APIs (``compose_jax_tf`` with JAX, ``compose_torch`` with PyTorch) are the
same functions: a TF signature handing its values to a helper of the composing library
(``_tf_conv``, ``_tf_pool``, ``_sorted_segment``, ``_unsorted``, ``_tf_cumulative``). They
are written once here and ``install``-ed into each composing module, where those names
resolve to that module's helpers: an installed copy is an ordinary function of that
module (its globals, its module name, its counterpart target), so workers call it and
reproducers inline it together with that module's helpers (``triage/repro.py``).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from dlfuzz.engines.api.counterparts.compose_common import composes


def _missing(*args: Any, **kwargs: Any) -> Any:
    """What a wrapper calls before ``install``: nothing, it names the helper only."""
    raise NotImplementedError("a TF wrapper runs only as installed into a composing module")


_tf_conv = _tf_pool = _sorted_segment = _unsorted = _tf_cumulative = _missing


def tf_conv2d(input: Any, filters: Any, strides: Any, padding: Any, data_format: Any = "NHWC",
              dilations: Any = None, name: Any = None) -> Any:
    return _tf_conv(2, input, filters, strides, padding, data_format, dilations)


def tf_conv3d(input: Any, filters: Any, strides: Any, padding: Any,
              data_format: Any = "NDHWC", dilations: Any = None, name: Any = None) -> Any:
    return _tf_conv(3, input, filters, strides, padding, data_format, dilations)


def tf_conv1d(input: Any, filters: Any, stride: Any, padding: Any, data_format: Any = "NWC",
              dilations: Any = None, name: Any = None) -> Any:
    return _tf_conv(1, input, filters, stride, padding, data_format, dilations)


def tf_max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any,
                  data_format: Any = "NHWC", name: Any = None) -> Any:
    return _tf_pool(2, input, ksize, strides, padding, data_format, "max")


def tf_avg_pool2d(input: Any, ksize: Any, strides: Any, padding: Any,
                  data_format: Any = "NHWC", name: Any = None) -> Any:
    return _tf_pool(2, input, ksize, strides, padding, data_format, "avg")


def tf_max_pool1d(input: Any, ksize: Any, strides: Any, padding: Any,
                  data_format: Any = "NWC", name: Any = None) -> Any:
    return _tf_pool(1, input, ksize, strides, padding, data_format, "max")


def tf_avg_pool1d(input: Any, ksize: Any, strides: Any, padding: Any,
                  data_format: Any = "NWC", name: Any = None) -> Any:
    return _tf_pool(1, input, ksize, strides, padding, data_format, "avg")


def tf_segment_sum(data: Any, segment_ids: Any, name: Any = None) -> Any:
    return _sorted_segment(data, segment_ids, "sum")


def tf_segment_max(data: Any, segment_ids: Any, name: Any = None) -> Any:
    return _sorted_segment(data, segment_ids, "max")


def tf_segment_min(data: Any, segment_ids: Any, name: Any = None) -> Any:
    return _sorted_segment(data, segment_ids, "min")


def tf_segment_mean(data: Any, segment_ids: Any, name: Any = None) -> Any:
    return _sorted_segment(data, segment_ids, "mean")


def tf_segment_prod(data: Any, segment_ids: Any, name: Any = None) -> Any:
    return _sorted_segment(data, segment_ids, "prod")


def tf_unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any,
                            name: Any = None) -> Any:
    return _unsorted(data, segment_ids, num_segments, "sum")


def tf_unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any,
                            name: Any = None) -> Any:
    return _unsorted(data, segment_ids, num_segments, "max")


def tf_unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any,
                            name: Any = None) -> Any:
    return _unsorted(data, segment_ids, num_segments, "min")


def tf_unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: Any,
                             name: Any = None) -> Any:
    return _unsorted(data, segment_ids, num_segments, "prod")


def tf_cumsum(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
              name: Any = None) -> Any:
    return _tf_cumulative(x, axis, exclusive, reverse, "sum")


def tf_cumprod(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
               name: Any = None) -> Any:
    return _tf_cumulative(x, axis, exclusive, reverse, "prod")


def tf_cumulative_logsumexp(x: Any, axis: Any = 0, exclusive: bool = False,
                            reverse: bool = False, name: Any = None) -> Any:
    return _tf_cumulative(x, axis, exclusive, reverse, "logsumexp")


# The TF API each wrapper composes.
WRAPPERS: dict[Callable[..., Any], str] = {
    tf_conv2d: "tensorflow.nn.conv2d",
    tf_conv3d: "tensorflow.nn.conv3d",
    tf_conv1d: "tensorflow.nn.conv1d",
    tf_max_pool2d: "tensorflow.nn.max_pool2d",
    tf_avg_pool2d: "tensorflow.nn.avg_pool2d",
    tf_max_pool1d: "tensorflow.nn.max_pool1d",
    tf_avg_pool1d: "tensorflow.nn.avg_pool1d",
    tf_segment_sum: "tensorflow.math.segment_sum",
    tf_segment_max: "tensorflow.math.segment_max",
    tf_segment_min: "tensorflow.math.segment_min",
    tf_segment_mean: "tensorflow.math.segment_mean",
    tf_segment_prod: "tensorflow.math.segment_prod",
    tf_unsorted_segment_sum: "tensorflow.math.unsorted_segment_sum",
    tf_unsorted_segment_max: "tensorflow.math.unsorted_segment_max",
    tf_unsorted_segment_min: "tensorflow.math.unsorted_segment_min",
    tf_unsorted_segment_prod: "tensorflow.math.unsorted_segment_prod",
    tf_cumsum: "tensorflow.math.cumsum",
    tf_cumprod: "tensorflow.math.cumprod",
    tf_cumulative_logsumexp: "tensorflow.math.cumulative_logsumexp",
}


def install(namespace: dict[str, Any]) -> None:
    """Define every wrapper in a composing module (``install(globals())``), calling that
    module's helpers, and register it as that library's composition of its TF API."""
    for template, api in WRAPPERS.items():
        fn = types.FunctionType(template.__code__, namespace, template.__name__,
                                template.__defaults__, template.__closure__)
        fn.__module__ = namespace["__name__"]
        fn.__qualname__ = template.__qualname__
        fn.__doc__ = template.__doc__
        fn.__annotations__ = dict(template.__annotations__)
        fn.__kwdefaults__ = template.__kwdefaults__
        namespace[fn.__name__] = composes(api)(fn)
