"""Stacked LSTM regressing the next stock price: torch, module style (layers defined in __init__, used in forward).

A seed program of dlfuzz's program-level engine (MoCo). It is standalone on purpose: the
engine cuts it into a template and one code block per hidden layer, and every program it
assembles from those pieces is again a runnable file like this one (the reproducer format).

nn.LSTM returns (output, (h, c)); SequenceOutput keeps the output and LastStep the last
time step, so recurrent layers chain like any other layer.
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


class SequenceOutput(nn.Module):
    """Keeps the sequence output of a recurrent layer (which returns (output, state))."""

    def forward(self, x):
        return x[0] if isinstance(x, tuple) else x


class LastStep(nn.Module):
    """Keeps the last time step of a (batch, time, features) sequence."""

    def forward(self, x):
        return x[:, -1]


class Net(nn.Module):
    """The model: each layer defined once in __init__ and used once in forward."""

    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTM(5, 32, batch_first=True)
        self.seq1 = SequenceOutput()
        self.lstm2 = nn.LSTM(32, 32, batch_first=True)
        self.seq2 = SequenceOutput()
        self.last = LastStep()
        self.fc1 = nn.Linear(32, 16)
        self.relu1 = nn.ReLU()
        self.flatten = nn.Flatten()
        self.head = nn.LazyLinear(NUM_CLASSES)

    def forward(self, x):
        x = self.lstm1(x)
        x = self.seq1(x)
        x = self.lstm2(x)
        x = self.seq2(x)
        x = self.last(x)
        x = self.fc1(x)
        x = self.relu1(x)
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
loss_fn = nn.MSELoss()
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
