#!/usr/bin/python3
"""Writes quant_fixtures.json: what PyTorch (Debian's 1.13, /usr/bin/python3)
computes for quantized tensors, observers, FakeQuantize, and dynamically and
statically quantized models, for quant_fixture_test.cpp to compare with.

Run: /usr/bin/python3 tests/unit/quant_fixtures.py (writes next to itself)."""
import json
import os

import torch
from torch import nn
from torch.ao import quantization as tq

torch.manual_seed(7)
if "fbgemm" in torch.backends.quantized.supported_engines:
    torch.backends.quantized.engine = "fbgemm"


def flat(t):
    t = t.detach()
    if t.dtype in (torch.uint8, torch.int8, torch.int32, torch.int64):
        return [int(v) for v in t.reshape(-1).tolist()]
    return [float(v) for v in t.reshape(-1).double().tolist()]


def tensor(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": flat(t)}


def state(module):  # a list: the order of the keys is part of what is compared
    return [dict(key=k, **tensor(v)) for k, v in module.state_dict().items()]


out = {}

# ---- quantize / dequantize: values with exact ties (k + 0.5) * scale and out of range ----
x = torch.cat([torch.randn(40) * 3, (torch.arange(-6, 6) + 0.5) * 0.25, torch.tensor([1e3, -1e3, 0.0, -0.0])])
cases = []
for scale, zp, dtype in [(0.25, 10, torch.quint8), (0.07, 0, torch.qint8), (0.013, -5, torch.qint8), (0.3, 128, torch.quint8)]:
    q = torch.quantize_per_tensor(x, scale, zp, dtype)
    cases.append({"scale": scale, "zero_point": zp, "dtype": "u8" if dtype == torch.quint8 else "i8",
                  "int_repr": flat(q.int_repr()), "dequantized": flat(q.dequantize())})
out["per_tensor"] = {"x": tensor(x), "cases": cases}

w = torch.randn(4, 6) * 2
ch = []
for axis, dtype in [(0, torch.qint8), (1, torch.quint8)]:
    n = w.shape[axis]
    scales = torch.rand(n, dtype=torch.float64) * 0.05 + 0.01
    zps = torch.randint(-3, 4, (n,)) + (128 if dtype == torch.quint8 else 0)
    q = torch.quantize_per_channel(w, scales, zps, axis, dtype)
    ch.append({"axis": axis, "dtype": "u8" if dtype == torch.quint8 else "i8", "scales": flat(scales),
               "zero_points": flat(zps), "int_repr": flat(q.int_repr()), "dequantized": flat(q.dequantize())})
out["per_channel"] = {"x": tensor(w), "cases": ch}

# ---- fake quantization: values and the straight-through gradient ----
xf = (torch.randn(30) * 4).requires_grad_()
y = torch.fake_quantize_per_tensor_affine(xf, 0.1, 3, -20, 20)
y.backward(torch.arange(30, dtype=torch.float32))
fq = {"x": tensor(xf), "scale": 0.1, "zero_point": 3, "quant_min": -20, "quant_max": 20, "out": flat(y),
      "grad": flat(xf.grad)}
wf = (torch.randn(3, 5) * 2).requires_grad_()
sc = torch.tensor([0.1, 0.05, 0.2])
zc = torch.tensor([0, 2, -1], dtype=torch.int32)
yc = torch.fake_quantize_per_channel_affine(wf, sc, zc, 0, -8, 7)
yc.backward(torch.ones_like(yc))
fqc = {"x": tensor(wf), "scales": flat(sc), "zero_points": flat(zc), "axis": 0, "quant_min": -8, "quant_max": 7,
       "out": flat(yc), "grad": flat(wf.grad)}
out["fake_quantize"] = {"per_tensor": fq, "per_channel": fqc}

# ---- observers: state after three batches, and calculate_qparams ----
batches = [torch.randn(5, 4) * s + m for s, m in [(1.0, 0.5), (2.0, -1.0), (0.5, 3.0)]]
obs = []
for name, ctor in [
    ("MinMaxObserver", lambda: tq.MinMaxObserver()),
    ("MinMaxObserver qint8 symmetric", lambda: tq.MinMaxObserver(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric)),
    ("MinMaxObserver quint8 0..127", lambda: tq.MinMaxObserver(quant_min=0, quant_max=127)),
    ("MinMaxObserver reduce_range", lambda: tq.MinMaxObserver(reduce_range=True)),
    ("MovingAverageMinMaxObserver", lambda: tq.MovingAverageMinMaxObserver()),
    ("MovingAverageMinMaxObserver 0.1 qint8", lambda: tq.MovingAverageMinMaxObserver(averaging_constant=0.1, dtype=torch.qint8)),
    ("PerChannelMinMaxObserver", lambda: tq.PerChannelMinMaxObserver()),
    ("PerChannelMinMaxObserver axis 1 qint8 symmetric",
     lambda: tq.PerChannelMinMaxObserver(ch_axis=1, dtype=torch.qint8, qscheme=torch.per_channel_symmetric)),
]:
    o = ctor()
    for b in batches:
        o(b)
    s, z = o.calculate_qparams()
    obs.append({"name": name, "state": state(o), "scale": flat(s), "zero_point": flat(z), "repr": repr(o)})
out["observers"] = {"batches": [tensor(b) for b in batches], "cases": obs}

# ---- FakeQuantize (the default: MovingAverageMinMaxObserver, quint8 0..255) ----
torch.manual_seed(3)
fqm = tq.FakeQuantize()
steps = []
for b in batches:
    xb = b.clone().requires_grad_()
    yb = fqm(xb)
    yb.sum().backward()
    steps.append({"out": flat(yb), "grad": flat(xb.grad)})
fqm.disable_observer()
yd = fqm(batches[0] * 3)
out["fake_quantize_module"] = {"steps": steps, "state": state(fqm), "observer_off_out": flat(yd),
                               "keys": list(fqm.state_dict().keys())}

# ---- dynamic quantization of an MLP (per-channel qint8 weights) ----
torch.manual_seed(11)
mlp = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))
xin = torch.randn(8, 12)
dyn = tq.quantize_dynamic(mlp, {nn.Linear: tq.per_channel_dynamic_qconfig}, dtype=torch.qint8)
w0, _ = dyn[0]._packed_params._weight_bias()
out["dynamic"] = {"state": state(mlp), "x": tensor(xin), "float_out": flat(mlp(xin)), "out": flat(dyn(xin)),
                  "weight0_int_repr": flat(w0.int_repr()), "weight0_scales": flat(w0.q_per_channel_scales()),
                  "repr": repr(dyn[0])}

# ---- static post-training quantization (default_per_channel_qconfig) ----
torch.manual_seed(12)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(4 * 5 * 5, 10)
        self.relu2 = nn.ReLU()
        self.fc2 = nn.Linear(10, 3)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu1(self.conv(x))
        x = self.relu2(self.fc1(self.flatten(x)))
        return self.dequant(self.fc2(x))


net = Net().eval()
float_state = state(net)
calib = torch.randn(16, 2, 5, 5)
xs = torch.randn(4, 2, 5, 5)
float_out = net(xs)
net.qconfig = tq.default_per_channel_qconfig
fused = tq.fuse_modules(net, [["conv", "relu1"], ["fc1", "relu2"]])
prepared = tq.prepare(fused)
prepared(calib)
converted = tq.convert(prepared)
out["static"] = {"state": float_state, "calibration": tensor(calib), "x": tensor(xs), "float_out": flat(float_out),
                 "out": flat(converted(xs)),
                 "input_scale": float(converted.quant.scale), "input_zero_point": int(converted.quant.zero_point),
                 "conv_scale": float(converted.conv.scale), "conv_zero_point": int(converted.conv.zero_point),
                 "fc1_scale": float(converted.fc1.scale), "fc2_scale": float(converted.fc2.scale),
                 "fc2_zero_point": int(converted.fc2.zero_point)}

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quant_fixtures.json")
with open(path, "w") as f:
    json.dump(out, f, separators=(",", ":"))
print(path, os.path.getsize(path), "bytes")
