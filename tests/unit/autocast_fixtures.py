# Regenerates tests/unit/autocast_fixtures.json for autocast_test.cpp: the
# dtype each op gives under PyTorch 1.13's CPU autocast (bf16), one case per
# op nnplug has from the three lists (f32 inputs for the lower-precision
# list, bf16 inputs for the f32 list, bf16 with f32 for promote) and ops in
# no list (which run on what they are given). autocast_test.cpp builds the
# same calls on the same shapes. Run with Debian's PyTorch:
#   /usr/bin/python3 tests/unit/autocast_fixtures.py
import json, os
import torch
import torch.nn.functional as F

torch.manual_seed(0)
f32, bf16 = torch.float32, torch.bfloat16


def r(*shape, dtype=f32):
    return torch.rand(*shape).to(dtype)


idx = torch.tensor([1, 0, 2, 1])
cases = {
    # lower precision: f32 in, bf16 out
    "linear": lambda: F.linear(r(4, 8), r(6, 8), r(6)),
    "matmul": lambda: torch.matmul(r(4, 8), r(8, 3)),
    "mm": lambda: torch.mm(r(4, 8), r(8, 3)),
    "bmm": lambda: torch.bmm(r(2, 4, 8), r(2, 8, 3)),
    "conv1d": lambda: F.conv1d(r(1, 2, 6), r(3, 2, 3), r(3)),
    "conv2d": lambda: F.conv2d(r(1, 2, 5, 5), r(3, 2, 3, 3), r(3)),
    "conv3d": lambda: F.conv3d(r(1, 2, 4, 4, 4), r(3, 2, 2, 2, 2), r(3)),
    # f32: bf16 in, f32 out
    "conv_transpose1d": lambda: F.conv_transpose1d(r(1, 2, 5, dtype=bf16), r(2, 3, 3, dtype=bf16)),
    "conv_transpose2d": lambda: F.conv_transpose2d(r(1, 2, 4, 4, dtype=bf16), r(2, 3, 3, 3, dtype=bf16)),
    "conv_transpose3d": lambda: F.conv_transpose3d(r(1, 2, 3, 3, 3, dtype=bf16), r(2, 3, 2, 2, 2, dtype=bf16)),
    "avg_pool3d": lambda: F.avg_pool3d(r(1, 2, 4, 4, 4, dtype=bf16), 2),
    "max_pool3d": lambda: F.max_pool3d(r(1, 2, 4, 4, 4, dtype=bf16), 2),
    "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(r(1, 2, 4, 4, 4, dtype=bf16), 2),
    "adaptive_max_pool3d": lambda: F.adaptive_max_pool3d(r(1, 2, 4, 4, 4, dtype=bf16), 2),
    "reflection_pad1d": lambda: F.pad(r(1, 2, 5, dtype=bf16), (1, 1), mode="reflect"),
    "reflection_pad2d": lambda: F.pad(r(1, 2, 5, 5, dtype=bf16), (1, 1, 1, 1), mode="reflect"),
    "replication_pad1d": lambda: F.pad(r(1, 2, 5, dtype=bf16), (1, 1), mode="replicate"),
    "replication_pad2d": lambda: F.pad(r(1, 2, 5, 5, dtype=bf16), (1, 1, 1, 1), mode="replicate"),
    "replication_pad3d": lambda: F.pad(r(1, 2, 3, 3, 3, dtype=bf16), (1, 1, 1, 1, 1, 1), mode="replicate"),
    "mse_loss": lambda: F.mse_loss(r(4, 3, dtype=bf16), r(4, 3, dtype=bf16)),
    "l1_loss": lambda: F.l1_loss(r(4, 3, dtype=bf16), r(4, 3, dtype=bf16)),
    "smooth_l1_loss": lambda: F.smooth_l1_loss(r(4, 3, dtype=bf16), r(4, 3, dtype=bf16)),
    "huber_loss": lambda: F.huber_loss(r(4, 3, dtype=bf16), r(4, 3, dtype=bf16)),
    "nll_loss": lambda: F.nll_loss(r(4, 3, dtype=bf16), idx),
    "cross_entropy_loss": lambda: F.cross_entropy(r(4, 3, dtype=bf16), idx),
    "binary_cross_entropy": lambda: F.binary_cross_entropy(r(4, 3, dtype=bf16), r(4, 3, dtype=bf16)),
    "binary_cross_entropy_with_logits": lambda: F.binary_cross_entropy_with_logits(r(4, 3, dtype=bf16),
                                                                                   r(4, 3, dtype=bf16)),
    "kl_div": lambda: F.kl_div(r(4, 3, dtype=bf16), r(4, 3, dtype=bf16), reduction="batchmean"),
    "poisson_nll_loss": lambda: F.poisson_nll_loss(r(4, 3, dtype=bf16), r(4, 3, dtype=bf16)),
    "cosine_embedding_loss": lambda: F.cosine_embedding_loss(r(4, 3, dtype=bf16), r(4, 3, dtype=bf16),
                                                             torch.tensor([1.0, -1.0, 1.0, -1.0])),
    "hinge_embedding_loss": lambda: F.hinge_embedding_loss(r(4, 3, dtype=bf16), torch.ones(4, 3)),
    "margin_ranking_loss": lambda: F.margin_ranking_loss(r(4, dtype=bf16), r(4, dtype=bf16), torch.ones(4)),
    "soft_margin_loss": lambda: F.soft_margin_loss(r(4, 3, dtype=bf16), torch.ones(4, 3)),
    "triplet_margin_loss": lambda: F.triplet_margin_loss(r(4, 3, dtype=bf16), r(4, 3, dtype=bf16),
                                                         r(4, 3, dtype=bf16)),
    "multi_margin_loss": lambda: F.multi_margin_loss(r(4, 3, dtype=bf16), idx),
    "multilabel_margin_loss": lambda: F.multilabel_margin_loss(r(4, 3, dtype=bf16),
                                                               torch.tensor([[0, 1, -1]] * 4)),
    # promote: bf16 with f32, the wider out
    "cat": lambda: torch.cat([r(2, 3, dtype=bf16), r(2, 3)]),
    "stack": lambda: torch.stack([r(2, 3, dtype=bf16), r(2, 3)]),
    # in no list: they run on what they are given
    "add_bf16_f32": lambda: r(2, 3, dtype=bf16) + r(2, 3),
    "softmax": lambda: F.softmax(r(4, 3, dtype=bf16), -1),
    "log_softmax": lambda: F.log_softmax(r(4, 3, dtype=bf16), -1),
    "layer_norm": lambda: F.layer_norm(r(4, 8, dtype=bf16), (8,)),
    "gelu": lambda: F.gelu(r(4, 3, dtype=bf16)),
    "exp": lambda: torch.exp(r(4, 3, dtype=bf16)),
    "sum": lambda: r(4, 3, dtype=bf16).sum(),
    "relu_f32": lambda: F.relu(r(4, 3)),
    "max_pool2d": lambda: F.max_pool2d(r(1, 2, 4, 4, dtype=bf16), 2),
    "avg_pool2d": lambda: F.avg_pool2d(r(1, 2, 4, 4, dtype=bf16), 2),
    "linear_f64": lambda: F.linear(r(4, 8, dtype=torch.float64), r(6, 8, dtype=torch.float64)),
}

names = {f32: "f32", bf16: "bf16", torch.float64: "f64"}
out = {}
with torch.autocast("cpu", dtype=torch.bfloat16):
    for name, make in cases.items():
        out[name] = names[make().dtype]
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autocast_fixtures.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cpu_bf16": out}, f, indent=1, sort_keys=True)
    f.write("\n")
print(len(out), "cases")
