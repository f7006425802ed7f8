"""Test-only seed program: a tiny Keras functional model with ONE hidden layer.

Not a patch: the seed the keras planted-bug test derives from. One slot (a MaxPooling2D
between the input convolution and the head) keeps every round of the derivation tree
one level deep, so a test sees many fresh mutants of that block in a short budget. It
follows the seed conventions (docs/programs.md): header constants, load_data, one layer
per line, numpy-assigned weights, one SGD epoch, RESULT.
"""

import numpy as np

try:
    import keras
    from keras import layers
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise SystemExit(f"this program needs keras: {exc}") from exc

SEED = 0
N_SAMPLES = 40
BATCH = 20
DATA_FILE = None
NUM_CLASSES = 4
LR = 0.05


def load_data():
    """Small image-shaped arrays (N, 8, 8, 1) and class labels."""
    if DATA_FILE is not None:
        with np.load(DATA_FILE) as data:
            return data["x"][:N_SAMPLES].astype(np.float32), data["y"][:N_SAMPLES].astype(np.int64)
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((N_SAMPLES, 8, 8, 1)).astype(np.float32)
    y = rng.integers(0, NUM_CLASSES, size=N_SAMPLES).astype(np.int64)
    return x, y


def init_weights(model):
    """Every float weight from one numpy stream: all backends start alike."""
    rng = np.random.default_rng(SEED)
    for weight in model.weights:
        if "float" not in str(weight.dtype):
            continue
        shape = tuple(weight.shape)
        if len(shape) <= 1:
            value = np.zeros(shape)
        else:
            limit = np.sqrt(6.0 / (int(np.prod(shape[:-1])) + shape[-1]))
            value = rng.uniform(-limit, limit, size=shape)
        weight.assign(value.astype(str(weight.dtype)))


x_train, y_train = load_data()
inputs = keras.Input(shape=(8, 8, 1))
x = layers.Conv2D(4, kernel_size=3, padding="same", activation="relu")(inputs)
x = layers.MaxPooling2D(pool_size=2)(x)
x = layers.Flatten()(x)
outputs = layers.Dense(NUM_CLASSES)(x)
model = keras.Model(inputs, outputs)
init_weights(model)

loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
model.compile(optimizer=keras.optimizers.SGD(learning_rate=LR), loss=loss_fn)
history = model.fit(x_train, y_train, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)

eval_out = model(x_train[:BATCH], training=False)
eval_loss = loss_fn(y_train[:BATCH], eval_out)
RESULT = {
    "loss": float(history.history["loss"][-1]),
    "eval_loss": float(keras.ops.convert_to_numpy(eval_loss)),
    "outputs": np.asarray(keras.ops.convert_to_numpy(eval_out), dtype=np.float32),
}

if __name__ == "__main__":
    print(f"loss={RESULT['loss']:.6f} eval_loss={RESULT['eval_loss']:.6f}")
