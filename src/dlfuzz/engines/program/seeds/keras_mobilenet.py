"""MobileNet (v1) on CIFAR-10-shaped data: Keras 3, functional API, backend-neutral.

A seed program of dlfuzz's program-level engine (MoCo). It is standalone on purpose: the
engine cuts it into a template and one code block per hidden layer, and every program it
assembles from those pieces is again a runnable file like this one (the reproducer format).

It uses only ``keras.layers`` and ``keras.ops``, so the same file runs on keras-tf, keras-jax
and keras-torch (choose with KERAS_BACKEND); every weight is assigned from numpy after the
build so all three backends start from identical weights and can be compared.

Scaled down to stay fast: 32x32 input and 8-64 channels (MobileNet v1: 224x224, 32-1024
channels, 13 separable blocks); the depthwise 3x3 + pointwise 1x1 pattern is kept.
"""

import numpy as np

try:  # the library under test, imported in a block so a missing install reads as one line
    import keras
    from keras import layers
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise SystemExit(f"this program needs keras: {exc}") from exc

SEED = 0
N_SAMPLES = 100
BATCH = 20
DATA_FILE = None
NUM_CLASSES = 10
LR = 0.01


def load_data():
    """CIFAR-10-shaped images (N_SAMPLES, 32, 32, 3) and class labels, or the arrays x, y of DATA_FILE."""
    if DATA_FILE is not None:
        with np.load(DATA_FILE) as data:
            return data["x"][:N_SAMPLES].astype(np.float32), data["y"][:N_SAMPLES].astype(np.int64)
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((N_SAMPLES, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, NUM_CLASSES, size=N_SAMPLES).astype(np.int64)
    return x, y


def init_weights(model):
    """Assign every float weight from one numpy stream, in model.weights order.

    Backend initializers draw different random numbers; numpy values make keras-tf,
    keras-jax and keras-torch start from the same model. Kernels get Glorot-uniform values,
    scales (gamma, variances) ones, and other vectors (biases, betas, means) zeros.
    """
    rng = np.random.default_rng(SEED)
    for weight in model.weights:
        if "float" not in str(weight.dtype):
            continue
        shape = tuple(weight.shape)
        name = weight.path.rsplit("/", 1)[-1]
        if name in ("gamma", "scale") or "variance" in name:
            value = np.ones(shape)
        elif len(shape) <= 1:
            value = np.zeros(shape)
        else:
            receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
            limit = np.sqrt(6.0 / (receptive * (shape[-2] + shape[-1])))
            value = rng.uniform(-limit, limit, size=shape)
        weight.assign(value.astype(str(weight.dtype)))


x_train, y_train = load_data()
inputs = keras.Input(shape=(32, 32, 3))
x = layers.Conv2D(8, kernel_size=3, padding="same", use_bias=False)(inputs)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.DepthwiseConv2D(kernel_size=3, strides=1, padding="same", use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.Conv2D(16, kernel_size=1, use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.DepthwiseConv2D(kernel_size=3, strides=2, padding="same", use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.Conv2D(32, kernel_size=1, use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.DepthwiseConv2D(kernel_size=3, strides=1, padding="same", use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.Conv2D(32, kernel_size=1, use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.DepthwiseConv2D(kernel_size=3, strides=2, padding="same", use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.Conv2D(64, kernel_size=1, use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.DepthwiseConv2D(kernel_size=3, strides=1, padding="same", use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.Conv2D(64, kernel_size=1, use_bias=False)(x)
x = layers.BatchNormalization()(x)
x = layers.ReLU()(x)
x = layers.GlobalAveragePooling2D()(x)
x = layers.Flatten()(x)
outputs = layers.Dense(NUM_CLASSES)(x)
model = keras.Model(inputs, outputs)
init_weights(model)

# Train one epoch: plain SGD, no shuffling, so the run is the same on every backend.
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
model.compile(optimizer=keras.optimizers.SGD(learning_rate=LR), loss=loss_fn)
history = model.fit(x_train, y_train, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)

# Evaluate on a fixed batch (the first BATCH samples).
eval_out = model(x_train[:BATCH], training=False)
eval_loss = loss_fn(y_train[:BATCH], eval_out)
RESULT = {
    "loss": float(history.history["loss"][-1]),
    "eval_loss": float(keras.ops.convert_to_numpy(eval_loss)),
    "outputs": np.asarray(keras.ops.convert_to_numpy(eval_out), dtype=np.float32),
}

if __name__ == "__main__":
    print(f"loss={RESULT['loss']:.6f} eval_loss={RESULT['eval_loss']:.6f} "
          f"outputs={RESULT['outputs'].shape}")
