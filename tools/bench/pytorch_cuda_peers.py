#!/usr/bin/env python3
"""The PyTorch peers of nnp_gpu_bench where PyTorch for CUDA is installed (the
lent GPU machines have it; Debian's does not), on cuda:0, each call timed as
nnp_gpu_bench times nnplug's: warm-up calls, then each timed call ends when the
device has finished it; the median of five repetitions of `seconds` each.

G1: W1's training step (MLP 784-512-512-10, batch 1024, cross-entropy, SGD
lr 0.01 momentum 0.9, zero_grad + forward + loss + backward + step).
G4: W3's CNN and W7's encoder in inference (eval mode, torch.inference_mode)
at W8's batches: W3 at 1 and 64, W7 at 1 and 32 (sequence 16, width 128).

Prints one line per case: NAME <median microseconds> ..."""
import statistics
import sys
import time

import torch


def timed(call, seconds: float) -> float:
    for _ in range(10):
        call()
    medians = []
    for _ in range(5):
        times = []
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
        medians.append(statistics.median(times))
    return statistics.median(medians) * 1e6


def g1(device: torch.device) -> None:
    net = torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10)).to(device)
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(1024, 784, device=device)
    y = torch.randint(0, 10, (1024,), device=device)

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()

    print(f"G1/pytorch_cuda {timed(step, 2.0):.1f} us per step")


class W7(torch.nn.Module):
    """W7's model: two encoder layers, the mean over the sequence, a classifier."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.1, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


def w3() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(512, 10))


def g4(device: torch.device) -> None:
    for name, make, shapes in (("W3", w3, {1: (1, 1, 28, 28), 64: (64, 1, 28, 28)}),
                               ("W7", W7, {1: (1, 16, 128), 32: (32, 16, 128)})):
        net = make().to(device).eval()
        for batch, shape in shapes.items():
            x = torch.randn(*shape, device=device)

            def call():
                with torch.inference_mode():
                    net(x)
                torch.cuda.synchronize()

            print(f"G4/{name}_b{batch}/pytorch_cuda {timed(call, 0.5):.1f} us per call")


def main() -> int:
    if not torch.cuda.is_available():
        print("G1/pytorch_cuda, G4/*/pytorch_cuda skipped: torch.cuda.is_available() is False")
        return 0
    torch.manual_seed(1)
    device = torch.device("cuda:0")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    g1(device)
    g4(device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
