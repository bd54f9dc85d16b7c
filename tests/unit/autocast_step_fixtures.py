# Regenerates tests/unit/autocast_step_fixtures.safetensors for
# autocast_test.cpp: one W7-sized training step (docs/benchmarks.md, Workloads:
# two TransformerEncoderLayer(128, 4, 512, batch_first), the mean over the
# sequence, Linear(128, 10), cross-entropy) under PyTorch 1.13's CPU autocast
# (bf16), dropout 0 so both sides compute the same thing, on 4 sequences.
# Parameters and inputs are hashed integers both sides compute (noise():
# uniform in [-0.5, 0.5), exact in f64): parameter i of the state dict's
# order is noise(shape, i) * 2 / sqrt(fan_in), the norms' weights 1 + 0.2 *
# noise. (A well-conditioned step: in a badly conditioned one PyTorch's own
# bf16 and f32 gradients differ by a third.) The file holds the loss, every
# parameter's gradient norm, and the whole gradient of six parameters.
# Run with Debian's PyTorch:
#   /usr/bin/python3 tests/unit/autocast_step_fixtures.py
import os, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layer_fixtures import write_safetensors
torch.set_default_dtype(torch.float32)

FULL = ["encoder.layers.0.self_attn.in_proj_weight", "encoder.layers.0.norm1.weight", "encoder.layers.1.linear2.weight",
        "encoder.layers.1.linear1.bias", "head.weight", "head.bias"]


def noise(shape, seed):
    n = 1
    for s in shape:
        n *= s
    h = (torch.arange(n, dtype=torch.int64) * 2654435761 + seed * 40503 + 12345) % 4294967296
    h = (h * 2246822519 + 3266489917) % 4294967296
    return (h.double() / 4294967296.0 - 0.5).reshape(shape)


class W7(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2)
        self.head = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


model = W7()
with torch.no_grad():
    for i, (name, p) in enumerate(model.named_parameters()):
        v = noise(list(p.shape), i) * (2.0 / p.shape[-1] ** 0.5)
        if "norm" in name and name.endswith("weight"):
            v = 1 + 0.2 * noise(list(p.shape), i)
        p.copy_(v.float())
x = (2 * noise([4, 64, 128], 1000)).float()
y = torch.tensor([3, 1, 4, 1])
with torch.autocast("cpu", dtype=torch.bfloat16):
    loss = torch.nn.functional.cross_entropy(model(x), y)
loss.backward()

tensors = {"loss": loss.detach().reshape(1).float()}
for name, p in model.named_parameters():
    tensors["norm." + name] = p.grad.norm().reshape(1)
    if name in FULL:
        tensors["grad." + name] = p.grad
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autocast_step_fixtures.safetensors")
write_safetensors(path, tensors, {"torch": torch.__version__, "dtype": str(loss.dtype)})
print("loss", loss.item(), loss.dtype)
