"""ResNet18 on CIFAR-10-shaped data: torch, module style (layers defined in __init__, used in forward).

A seed program of dlfuzz's program-level engine (MoCo). It is standalone on purpose: the
engine cuts it into a template and one code block per hidden layer, and every program it
assembles from those pieces is again a runnable file like this one (the reproducer format).

Scaled down to stay fast: 32x32 input and 8-64 channels (ResNet18: 224x224, 64-512
channels); the structure (stem, 4 stages x 2 BasicBlocks, global pool) is kept. Each
BasicBlock is one layer of the model (a composite block).
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


class BasicBlock(nn.Module):
    """ResNet basic block: two 3x3 convs with batch norm and an identity (or 1x1) shortcut."""

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.project = stride != 1 or in_channels != out_channels
        if self.project:  # a 1x1 conv shortcut where the shape changes, else the identity
            self.shortcut_conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=stride, bias=False)
            self.shortcut_bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        shortcut = self.shortcut_bn(self.shortcut_conv(x)) if self.project else x
        return self.relu(y + shortcut)


class Net(nn.Module):
    """The model: each layer defined once in __init__ and used once in forward."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.block1 = BasicBlock(8, 8, stride=1)
        self.block2 = BasicBlock(8, 8, stride=1)
        self.block3 = BasicBlock(8, 16, stride=2)
        self.block4 = BasicBlock(16, 16, stride=1)
        self.block5 = BasicBlock(16, 32, stride=2)
        self.block6 = BasicBlock(32, 32, stride=1)
        self.block7 = BasicBlock(32, 64, stride=2)
        self.block8 = BasicBlock(64, 64, stride=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.head = nn.LazyLinear(NUM_CLASSES)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu1(x)
        x = self.block1(x)
        x = self.block2(x)
        x = self.block3(x)
        x = self.block4(x)
        x = self.block5(x)
        x = self.block6(x)
        x = self.block7(x)
        x = self.block8(x)
        x = self.pool(x)
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
