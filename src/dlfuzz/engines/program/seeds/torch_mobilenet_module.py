"""MobileNet (v1) on CIFAR-10-shaped data: torch, module style (layers defined in __init__, used in forward).

A seed program of dlfuzz's program-level engine (MoCo). It is standalone on purpose: the
engine cuts it into a template and one code block per hidden layer, and every program it
assembles from those pieces is again a runnable file like this one (the reproducer format).

Scaled down to stay fast: 32x32 input and 8-64 channels (MobileNet v1: 224x224, 32-1024
channels, 13 separable blocks); the depthwise 3x3 + pointwise 1x1 pattern is kept.
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


class Net(nn.Module):
    """The model: each layer defined once in __init__ and used once in forward."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.dw1 = nn.Conv2d(8, 8, kernel_size=3, stride=1, padding=1, groups=8, bias=False)
        self.dw_bn1 = nn.BatchNorm2d(8)
        self.dw_relu1 = nn.ReLU()
        self.pw1 = nn.Conv2d(8, 16, kernel_size=1, bias=False)
        self.pw_bn1 = nn.BatchNorm2d(16)
        self.pw_relu1 = nn.ReLU()
        self.dw2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1, groups=16, bias=False)
        self.dw_bn2 = nn.BatchNorm2d(16)
        self.dw_relu2 = nn.ReLU()
        self.pw2 = nn.Conv2d(16, 32, kernel_size=1, bias=False)
        self.pw_bn2 = nn.BatchNorm2d(32)
        self.pw_relu2 = nn.ReLU()
        self.dw3 = nn.Conv2d(32, 32, kernel_size=3, stride=1, padding=1, groups=32, bias=False)
        self.dw_bn3 = nn.BatchNorm2d(32)
        self.dw_relu3 = nn.ReLU()
        self.pw3 = nn.Conv2d(32, 32, kernel_size=1, bias=False)
        self.pw_bn3 = nn.BatchNorm2d(32)
        self.pw_relu3 = nn.ReLU()
        self.dw4 = nn.Conv2d(32, 32, kernel_size=3, stride=2, padding=1, groups=32, bias=False)
        self.dw_bn4 = nn.BatchNorm2d(32)
        self.dw_relu4 = nn.ReLU()
        self.pw4 = nn.Conv2d(32, 64, kernel_size=1, bias=False)
        self.pw_bn4 = nn.BatchNorm2d(64)
        self.pw_relu4 = nn.ReLU()
        self.dw5 = nn.Conv2d(64, 64, kernel_size=3, stride=1, padding=1, groups=64, bias=False)
        self.dw_bn5 = nn.BatchNorm2d(64)
        self.dw_relu5 = nn.ReLU()
        self.pw5 = nn.Conv2d(64, 64, kernel_size=1, bias=False)
        self.pw_bn5 = nn.BatchNorm2d(64)
        self.pw_relu5 = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.head = nn.LazyLinear(NUM_CLASSES)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu1(x)
        x = self.dw1(x)
        x = self.dw_bn1(x)
        x = self.dw_relu1(x)
        x = self.pw1(x)
        x = self.pw_bn1(x)
        x = self.pw_relu1(x)
        x = self.dw2(x)
        x = self.dw_bn2(x)
        x = self.dw_relu2(x)
        x = self.pw2(x)
        x = self.pw_bn2(x)
        x = self.pw_relu2(x)
        x = self.dw3(x)
        x = self.dw_bn3(x)
        x = self.dw_relu3(x)
        x = self.pw3(x)
        x = self.pw_bn3(x)
        x = self.pw_relu3(x)
        x = self.dw4(x)
        x = self.dw_bn4(x)
        x = self.dw_relu4(x)
        x = self.pw4(x)
        x = self.pw_bn4(x)
        x = self.pw_relu4(x)
        x = self.dw5(x)
        x = self.dw_bn5(x)
        x = self.dw_relu5(x)
        x = self.pw5(x)
        x = self.pw_bn5(x)
        x = self.pw_relu5(x)
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
