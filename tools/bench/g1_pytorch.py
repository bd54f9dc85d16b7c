#!/usr/bin/env python3
"""G1's peer where PyTorch for CUDA is installed (the lent GPU machines have
it; Debian's does not): W1's training step (MLP 784-512-512-10, batch 1024,
cross-entropy, SGD lr 0.01 momentum 0.9, zero_grad + forward + loss +
backward + step) on cuda:0, timed as nnp_gpu_bench times G1/nnplug: ten
warm-up steps, then each timed step ends when the device has finished it.
Prints one line: G1/pytorch_cuda <median microseconds per step>."""
import statistics
import sys
import time

import torch


def main() -> int:
    if not torch.cuda.is_available():
        print("G1/pytorch_cuda skipped: torch.cuda.is_available() is False")
        return 0
    torch.manual_seed(1)
    device = torch.device("cuda:0")
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
        return loss

    for _ in range(10):
        step()
    medians = []
    for _ in range(5):  # five repetitions of 2 s, as the benchmark's MinTime
        times = []
        end = time.perf_counter() + 2.0
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        medians.append(statistics.median(times))
    print(f"G1/pytorch_cuda {statistics.median(medians) * 1e6:.1f} us per step "
          f"(torch {torch.__version__}, {torch.cuda.get_device_name(0)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
