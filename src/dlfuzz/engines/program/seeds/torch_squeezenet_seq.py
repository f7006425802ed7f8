"""SqueezeNet on CIFAR-10-shaped data: torch, sequential style.

A seed program of dlfuzz's program-level engine (MoCo). It is standalone on purpose: the
engine cuts it into a template and one code block per hidden layer, and every program it
assembles from those pieces is again a runnable file like this one (the reproducer format).

Scaled down to stay fast: 32x32 input and 16-64 channels (SqueezeNet: 224x224, 96-512
channels, 8 Fire modules); the Fire module (1x1 squeeze, 1x1 + 3x3 expand, concat) is kept
and each Fire module is one layer of the model (a composite block).
"""

import numpy as np

try:  # the library under test, imported in a block so a missing install reads as one line
    import torch
    from torch import nn
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise SystemExit(f"this program needs torch: {exc}") from exc

SEED = 0
N_SAMPLES = 100
BATCH = 20
DATA_FILE = None
NUM_CLASSES = 10
LR = 0.01


def load_data():
    """CIFAR-10-shaped images (N_SAMPLES, 3, 32, 32) and class labels, or the arrays x, y of DATA_FILE."""
    if DATA_FILE is not None:
        with np.load(DATA_FILE) as data:
            return data["x"][:N_SAMPLES].astype(np.float32), data["y"][:N_SAMPLES].astype(np.int64)
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((N_SAMPLES, 3, 32, 32)).astype(np.float32)
    y = rng.integers(0, NUM_CLASSES, size=N_SAMPLES).astype(np.int64)
    return x, y


class Fire(nn.Module):
    """SqueezeNet Fire module: a 1x1 squeeze conv, then 1x1 and 3x3 expand convs concatenated."""

    def __init__(self, in_channels, squeeze, expand):
        super().__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze, kernel_size=1)
        self.expand1x1 = nn.Conv2d(squeeze, expand, kernel_size=1)
        self.expand3x3 = nn.Conv2d(squeeze, expand, kernel_size=3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        s = self.relu(self.squeeze(x))
        return torch.cat([self.relu(self.expand1x1(s)), self.relu(self.expand3x3(s))], dim=1)


x_train, y_train = load_data()
torch.manual_seed(SEED)
model = nn.Sequential(
    nn.Conv2d(3, 16, kernel_size=3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(kernel_size=2, stride=2),
    Fire(16, 4, 8),
    Fire(16, 4, 8),
    nn.MaxPool2d(kernel_size=2, stride=2),
    Fire(16, 8, 16),
    Fire(32, 8, 16),
    nn.MaxPool2d(kernel_size=2, stride=2),
    Fire(32, 12, 24),
    Fire(48, 16, 32),
    nn.Dropout(p=0.5),
    nn.Conv2d(64, 32, kernel_size=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.LazyLinear(NUM_CLASSES),
)

# Train one epoch: plain SGD, no shuffling, so the run is the same every time.
inputs = torch.from_numpy(x_train)
targets = torch.from_numpy(y_train)
with torch.no_grad():  # materialize lazy layers before the optimizer sees the parameters
    model.eval()
    model(inputs[:BATCH])
model.train()
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR)
losses = []
for start in range(0, len(inputs), BATCH):
    optimizer.zero_grad()
    loss = loss_fn(model(inputs[start:start + BATCH]), targets[start:start + BATCH])
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

# Evaluate on a fixed batch (the first BATCH samples).
model.eval()
with torch.no_grad():
    eval_out = model(inputs[:BATCH])
    eval_loss = loss_fn(eval_out, targets[:BATCH])
RESULT = {
    "loss": float(np.mean(losses)),
    "eval_loss": float(eval_loss),
    "outputs": eval_out.numpy().astype(np.float32),
}

if __name__ == "__main__":
    print(f"loss={RESULT['loss']:.6f} eval_loss={RESULT['eval_loss']:.6f} "
          f"outputs={RESULT['outputs'].shape}")
