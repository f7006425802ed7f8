"""VGG-style network on CIFAR-10-shaped data: torch, module style (layers defined in __init__, used in forward).

A seed program of dlfuzz's program-level engine (MoCo). It is standalone on purpose: the
engine cuts it into a template and one code block per hidden layer, and every program it
assembles from those pieces is again a runnable file like this one (the reproducer format).

Scaled down to stay fast: three stages of two 3x3 convs with 16/32/64 channels (VGG-11/16:
five stages, 64-512 channels, 224x224 input); the conv-conv-pool pattern is kept.
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
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(16, 16, kernel_size=3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(kernel_size=2, stride=2)
        self.conv3 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.relu3 = nn.ReLU()
        self.conv4 = nn.Conv2d(32, 32, kernel_size=3, padding=1)
        self.relu4 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(kernel_size=2, stride=2)
        self.conv5 = nn.Conv2d(32, 64, kernel_size=3, padding=1)
        self.relu5 = nn.ReLU()
        self.conv6 = nn.Conv2d(64, 64, kernel_size=3, padding=1)
        self.relu6 = nn.ReLU()
        self.pool3 = nn.MaxPool2d(kernel_size=2, stride=2)
        self.fc1 = nn.Linear(1024, 128)
        self.relu7 = nn.ReLU()
        self.fc2 = nn.Linear(128, 128)
        self.relu8 = nn.ReLU()
        self.flatten = nn.Flatten()
        self.head = nn.LazyLinear(NUM_CLASSES)

    def forward(self, x):
        x = self.conv1(x)
        x = self.relu1(x)
        x = self.conv2(x)
        x = self.relu2(x)
        x = self.pool1(x)
        x = self.conv3(x)
        x = self.relu3(x)
        x = self.conv4(x)
        x = self.relu4(x)
        x = self.pool2(x)
        x = self.conv5(x)
        x = self.relu5(x)
        x = self.conv6(x)
        x = self.relu6(x)
        x = self.pool3(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = self.relu7(x)
        x = self.fc2(x)
        x = self.relu8(x)
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
