"""Test-only: a wrong result on keras-jax only (MaxPooling2D with ``padding="same"``).

Imported after Keras in the keras-jax worker (``--preload keras-jax=...``); under any other
Keras backend it does nothing. The patched layer scales its output by 1.5 when its padding
is "same", so the same program trains to different losses and outputs on keras-jax than on
keras-tf and keras-torch: the cross-backend comparison must blame keras-jax and localize
the bug to the MaxPooling2D block and its ``padding`` parameter.
"""

import keras

if keras.backend.backend() == "jax":
    _real_call = keras.layers.MaxPooling2D.call

    def call(self, inputs):
        out = _real_call(self, inputs)
        return out * 1.5 if self.padding == "same" else out

    keras.layers.MaxPooling2D.call = call
