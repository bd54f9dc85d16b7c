#!/usr/bin/env python3
"""Writes ONNX files with PyTorch's own exporter (torch.onnx.export, Debian's
python3-torch) and what PyTorch computes from them, for nnplug's import tests:
an MLP, the W3 CNN, a two-layer LSTM and a Transformer encoder.

    /usr/bin/python3 tests/unit/onnx_fixtures.py

writes tests/unit/onnx_fixtures/{name}.onnx and expected.json
({name: {"input": {"dims", "data"}, "output": {"dims", "data"}}}), inputs at a
batch size other than the one traced, so the batch axis is dynamic."""
import json
import os

import torch
from torch import nn

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_fixtures")


class LastStep(nn.Module):
    """An LSTM classifier: the last time step of a two-layer LSTM, then Linear."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, num_layers=2)
        self.fc = nn.Linear(12, 5)

    def forward(self, x):  # x: [seq, batch, 8]
        y, _ = self.lstm(x)
        return self.fc(y[-1])


class Encoder(nn.Module):
    """W7's shape, small: two encoder layers, mean over the sequence, Linear."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):  # x: [batch, seq, 16]
        return self.fc(self.encoder(x).mean(dim=1))


def models():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    cnn = nn.Sequential(nn.Conv2d(1, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 5), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(512, 10))
    return {
        "mlp": (mlp, (3, 64), (5, 64), 0),
        "cnn": (cnn, (3, 1, 28, 28), (2, 1, 28, 28), 0),
        "lstm": (LastStep(), (7, 3, 8), (7, 4, 8), 1),
        "encoder": (Encoder(), (3, 6, 16), (5, 6, 16), 0),
    }


def main():
    os.makedirs(HERE, exist_ok=True)
    expected = {}
    for name, (model, traced, checked, batch_axis) in models().items():
        model.eval()
        path = os.path.join(HERE, name + ".onnx")
        torch.onnx.export(model, torch.randn(*traced), path, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {batch_axis: "batch"}, "output": {0: "batch"}}, opset_version=17)
        x = torch.randn(*checked)
        with torch.no_grad():
            y = model(x)
        expected[name] = {"input": {"dims": list(x.shape), "data": x.flatten().tolist()},
                          "output": {"dims": list(y.shape), "data": y.flatten().tolist()}}
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f)


if __name__ == "__main__":
    main()
