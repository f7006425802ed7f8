"""Stacked LSTM regressing the next stock price: Keras 3, functional API, backend-neutral.

A seed program of dlfuzz's program-level engine (MoCo). It is standalone on purpose: the
engine cuts it into a template and one code block per hidden layer, and every program it
assembles from those pieces is again a runnable file like this one (the reproducer format).

It uses only ``keras.layers`` and ``keras.ops``, so the same file runs on keras-tf, keras-jax
and keras-torch (choose with KERAS_BACKEND); every weight is assigned from numpy after the
build so all three backends start from identical weights and can be compared.
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
NUM_CLASSES = 1  # one regression output
LR = 0.01


def load_data():
    """stock-price windows (30 days x open/high/low/close/volume) (N_SAMPLES, 30, 5) and the next close, or the arrays x, y of DATA_FILE."""
    if DATA_FILE is not None:
        with np.load(DATA_FILE) as data:
            x = data["x"][:N_SAMPLES].astype(np.float32)
            return x, data["y"][:N_SAMPLES].astype(np.float32).reshape(-1, 1)
    rng = np.random.default_rng(SEED)
    # A random walk of log prices per window; the target is the close of the day after it.
    close = np.cumsum(rng.normal(0.0, 0.02, size=(N_SAMPLES, 31)), axis=1)
    spread = np.abs(rng.normal(0.0, 0.01, size=(N_SAMPLES, 30)))
    volume = rng.lognormal(0.0, 0.3, size=(N_SAMPLES, 30)) - 1.0
    opening = close[:, :30] + rng.normal(0.0, 0.005, size=(N_SAMPLES, 30))
    x = np.stack([opening, close[:, :30] + spread, close[:, :30] - spread, close[:, :30], volume], axis=-1)
    return x.astype(np.float32), close[:, 30:].astype(np.float32)


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
inputs = keras.Input(shape=(30, 5))
x = layers.LSTM(32, return_sequences=True)(inputs)
x = layers.LSTM(32)(x)
x = layers.Dense(16, activation="relu")(x)
x = layers.Flatten()(x)
outputs = layers.Dense(NUM_CLASSES)(x)
model = keras.Model(inputs, outputs)
init_weights(model)

# Train one epoch: plain SGD, no shuffling, so the run is the same on every backend.
loss_fn = keras.losses.MeanSquaredError()
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
