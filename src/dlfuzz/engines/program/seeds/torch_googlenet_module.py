"""GoogLeNet-style network (inception blocks) on CIFAR-10-shaped data: torch, module style (layers defined in __init__, used in forward).

A seed program of dlfuzz's program-level engine (MoCo). It is standalone on purpose: the
engine cuts it into a template and one code block per hidden layer, and every program it
assembles from those pieces is again a runnable file like this one (the reproducer format).

Scaled down to stay fast: 32x32 input, four small inception blocks at 16x16 and 8x8 (GoogLeNet:
224x224, nine inception blocks); the four-branch block (1x1, 1x1->3x3, 1x1->5x5, pool->1x1, concat)
is kept and each inception block is one layer of the model (a composite block).
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


class Inception(nn.Module):
    """GoogLeNet inception block: four parallel branches concatenated along channels."""

    def __init__(self, in_channels, c1, c3_reduce, c3, c5_reduce, c5, pool_proj):
        super().__init__()
        self.b1 = nn.Conv2d(in_channels, c1, kernel_size=1)
        self.b3_reduce = nn.Conv2d(in_channels, c3_reduce, kernel_size=1)
        self.b3 = nn.Conv2d(c3_reduce, c3, kernel_size=3, padding=1)
        self.b5_reduce = nn.Conv2d(in_channels, c5_reduce, kernel_size=1)
        self.b5 = nn.Conv2d(c5_reduce, c5, kernel_size=5, padding=2)
        self.pool = nn.MaxPool2d(kernel_size=3, stride=1, padding=1)
        self.pool_proj = nn.Conv2d(in_channels, pool_proj, kernel_size=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        b1 = self.relu(self.b1(x))
        b3 = self.relu(self.b3(self.relu(self.b3_reduce(x))))
        b5 = self.relu(self.b5(self.relu(self.b5_reduce(x))))
        bp = self.relu(self.pool_proj(self.pool(x)))
        return torch.cat([b1, b3, b5, bp], dim=1)


class Net(nn.Module):
    """The model: each layer defined once in __init__ and used once in forward."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.inception1 = Inception(16, 8, 8, 12, 2, 4, 4)
        self.inception2 = Inception(28, 12, 12, 16, 4, 8, 8)
        self.pool2 = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.inception3 = Inception(44, 16, 12, 20, 4, 8, 8)
        self.inception4 = Inception(52, 16, 16, 24, 4, 8, 8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(p=0.2)
        self.flatten = nn.Flatten()
        self.head = nn.LazyLinear(NUM_CLASSES)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu1(x)
        x = self.pool1(x)
        x = self.inception1(x)
        x = self.inception2(x)
        x = self.pool2(x)
        x = self.inception3(x)
        x = self.inception4(x)
        x = self.pool(x)
        x = self.drop(x)
        x = self.flatten(x)
        x = self.head(x)
        return x


x_train, y_train = load_data()
torch.manual_seed(SEED)
model = Net()

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
