"""Test-only: plants a compile-only wrong result in ``jax.lax.conv_general_dilated`` (in
a jax worker).

Under tracing (``jax.jit``) a 2-D convolution with a 3x3 kernel at stride 1 applies the
kernel flipped; run eagerly (concrete arrays) it is right. So the bug is the jit mode's
alone, as a miscompilation would be: eager JAX, torch and TensorFlow agree on the true
result, and only a campaign whose graphs hold such a convolution, run under ``jax-jit``,
can see it.
"""

from jax import core, lax

_real_conv = lax.conv_general_dilated


def conv_general_dilated(lhs, rhs, window_strides, padding, *args, **kwargs):
    dims = kwargs.get("dimension_numbers")
    traced = isinstance(lhs, core.Tracer)
    if (traced and dims is not None and dims[1] == "HWIO" and tuple(rhs.shape[:2]) == (3, 3)
            and all(s == 1 for s in window_strides)):
        rhs = rhs[::-1, ::-1]
    return _real_conv(lhs, rhs, window_strides, padding, *args, **kwargs)


lax.conv_general_dilated = conv_general_dilated
