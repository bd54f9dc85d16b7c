#!/usr/bin/env python3
"""Writes a corpus of ONNX models as other people's exporters and converters
write them, for comparing nnplug with ONNX Runtime on the same files (the
model_corpus test at small sizes, W14 in docs/benchmarks.md at real ones).

    /usr/bin/python3 tests/model_corpus/make_corpus.py OUT_DIR [--size small|real] [--only NAME]

Needs Debian's python3-torch, python3-torchvision, python3-onnx and
python3-numpy (scripts/setup.sh installs them). Weights are random (seeded):
nothing is downloaded. Writes OUT_DIR/*.onnx and OUT_DIR/manifest.json, a list
of {"name", "file", "family", "form", "opset", "parameters",
"inputs": {NAME: {"dims": [...], "dtype": "float32"}}}. The forms:

- "f32": torchvision's classifiers exported by torch.onnx.export at opsets
  9, 11, 13 and 17 (opset 9 as the old exporters wrote it: Upsample, Slice
  with attributes, Pad's pads as an attribute);
- "int8": the opset 13 file with each Conv, Gemm and MatMul of a constant
  weight made dynamic int8 the way ONNX Runtime's quantizer writes it
  (DynamicQuantizeLinear, then ConvInteger or MatMulInteger on an int8
  weight, Cast, Mul by the scales, Add of the bias);
- "qdq": the opset 13 file with QuantizeLinear/DequantizeLinear pairs on each
  such node's input (scales from a calibration run) and weight;
- "f16": the opset 13 file in float16, its graph input and output cast from
  and to float32 by Cast nodes appended at the end of the node list, as
  float16 converters leave them (not topologically sorted);
- a streaming LSTM (voice-activity detector shape: one 576-sample frame a
  call, its state in and out) and a U-Net (convolutions, max pooling,
  bilinear Resize, Concat) with its int8 form.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import helper, numpy_helper
from torch import nn

OPSETS = (9, 11, 13, 17)


# ---- the models -------------------------------------------------------------------------------------------------


def classifiers(size):
    """(name, module, input shape) of torchvision's classifiers, random weights."""
    small = size == "small"
    classes = 10 if small else 1000
    side = 64 if small else 224
    out = [
        ("mobilenet_v2", torchvision.models.mobilenet_v2(width_mult=0.25 if small else 1.0, num_classes=classes)),
        ("shufflenet_v2", torchvision.models.shufflenet_v2_x0_5(num_classes=classes)),
        ("squeezenet", torchvision.models.squeezenet1_1(num_classes=classes)),
    ]
    if not small:
        out.append(("resnet18", torchvision.models.resnet18(num_classes=classes)))
    return [(name, module, [1, 3, side, side]) for name, module in out]


class VoiceActivity(nn.Module):
    """A streaming detector: a frame of 576 samples, a Linear, a one-layer LSTM
    whose state goes in and out with each call, a sigmoid score."""

    def __init__(self):
        super().__init__()
        self.encode = nn.Linear(576, 64)
        self.lstm = nn.LSTM(64, 64)
        self.score = nn.Linear(64, 1)

    def forward(self, frame, h, c):  # frame [1, 576], h and c [1, 1, 64]
        y, (h, c) = self.lstm(torch.relu(self.encode(frame)).unsqueeze(0), (h, c))
        return torch.sigmoid(self.score(y[0])), h, c


class UNet(nn.Module):
    """Four levels down by max pooling, up by bilinear resizing and a
    concatenation with the level's skip, two 3x3 convolutions a level."""

    def __init__(self, width):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1),
                                 nn.ReLU())

        w = [width, 2 * width, 4 * width, 8 * width]
        self.down = nn.ModuleList([block(3, w[0]), block(w[0], w[1]), block(w[1], w[2]), block(w[2], w[3])])
        self.up = nn.ModuleList([block(w[3] + w[2], w[2]), block(w[2] + w[1], w[1]), block(w[1] + w[0], w[0])])
        self.head = nn.Conv2d(w[0], 1, 1)

    def forward(self, x):
        skips = []
        for i, level in enumerate(self.down):
            x = level(x if i == 0 else nn.functional.max_pool2d(x, 2))
            skips.append(x)
        for level, skip in zip(self.up, reversed(skips[:-1])):
            x = nn.functional.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
            x = level(torch.cat([x, skip], 1))
        return torch.sigmoid(self.head(x))


# ---- export -------------------------------------------------------------------------------------------------------


def settle_batch_norms(module, shape):
    """Running statistics from a few random batches, as training leaves them:
    with the initial ones (mean 0, variance 1) a deep random network's
    activations shrink layer by layer to nothing (outputs near 1e-7), and a
    comparison of them would say nothing."""
    norms = [m for m in module.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a plain average of the batches seen
    module.train()
    with torch.no_grad():
        for _ in range(3):
            module(torch.randn(8, *shape[1:]))
    module.eval()


def export(module, example, path, opset, input_names, output_names):
    module.eval()
    with torch.no_grad():
        torch.onnx.export(module, example, path, opset_version=opset, input_names=input_names,
                          output_names=output_names, do_constant_folding=True)
    return onnx.load(path)


def conv_inputs(module, example):
    """The largest magnitude each Conv2d and Linear sees, in call order (the
    calibration of the QDQ form; torch.onnx writes their nodes in that order)."""
    seen = []

    def hook(layer, args):
        seen.append((tuple(layer.weight.shape), float(args[0].abs().max())))

    handles = [m.register_forward_pre_hook(hook) for m in module.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        module(*example) if isinstance(example, tuple) else module(example)
    for h in handles:
        h.remove()
    return seen


# ---- the forms ----------------------------------------------------------------------------------------------------


def initializers(model):
    return {t.name: t for t in model.graph.initializer}


def inline_identities(model):
    """torch.onnx writes one initializer for equal ones and an Identity node
    for each other use: those become initializers of their own again."""
    inits = initializers(model)
    kept = []
    for node in model.graph.node:
        if node.op_type == "Identity" and node.input[0] in inits:
            copy = onnx.TensorProto()
            copy.CopyFrom(inits[node.input[0]])
            copy.name = node.output[0]
            model.graph.initializer.append(copy)
        else:
            kept.append(node)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    return model


def weighted_nodes(model):
    """Conv, Gemm and MatMul nodes whose weight is an initializer, with it."""
    inits = initializers(model)
    out = []
    for node in model.graph.node:
        if node.op_type in ("Conv", "Gemm", "MatMul") and len(node.input) > 1 and node.input[1] in inits:
            out.append((node, numpy_helper.to_array(inits[node.input[1]])))
    return out


def attribute(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def replace_node(model, old, new_nodes):
    nodes = list(model.graph.node)
    at = nodes.index(old)
    del model.graph.node[:]
    model.graph.node.extend(nodes[:at] + new_nodes + nodes[at + 1:])


def add_initializer(model, array, name):
    model.graph.initializer.append(numpy_helper.from_array(array, name))
    return name


def drop_unused_initializers(model):
    """The float weights a transform replaced."""
    read = {name for node in model.graph.node for name in node.input}
    read |= {v.name for v in model.graph.output}
    kept = [t for t in model.graph.initializer if t.name in read]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    inputs = [v for v in model.graph.input if v.name in read or v.name not in initializers(model)]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    return model


def dynamic_int8(model):
    """ONNX Runtime's dynamic quantization: per-tensor weights (uint8 for
    ConvInteger, int8 for MatMulInteger), uint8 activations quantized per call
    by DynamicQuantizeLinear."""
    inline_identities(model)
    for index, (node, weight) in enumerate(weighted_nodes(model)):
        p = "q%d_" % index
        transpose = node.op_type == "Gemm" and attribute(node, "transB", 0) == 1
        if node.op_type == "Gemm" and (attribute(node, "transA", 0) or attribute(node, "alpha", 1.0) != 1.0 or
                                       attribute(node, "beta", 1.0) != 1.0):
            continue
        w = weight.T if transpose else weight
        if node.op_type == "Conv":  # ONNX Runtime's ConvInteger takes uint8 weights: asymmetric, as its quantizer makes them
            low, high = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
            w_scale = np.float32(max(high - low, 1e-8) / 255.0)
            w_zero = np.uint8(np.clip(np.rint(-low / w_scale), 0, 255))
            w_q = np.clip(np.rint(w / w_scale) + w_zero, 0, 255).astype(np.uint8)
        else:  # MatMulInteger: int8 weights, symmetric
            w_scale = np.float32(max(np.abs(w).max(), 1e-8) / 127.0)
            w_zero = np.int8(0)
            w_q = np.clip(np.rint(w / w_scale), -127, 127).astype(np.int8)
        add_initializer(model, w_q, p + "w")
        add_initializer(model, np.array(w_scale, dtype=np.float32), p + "w_scale")
        add_initializer(model, np.array(w_zero), p + "w_zero")
        nodes = [helper.make_node("DynamicQuantizeLinear", [node.input[0]], [p + "x", p + "x_scale", p + "x_zero"])]
        if node.op_type == "Conv":
            nodes.append(helper.make_node("ConvInteger", [p + "x", p + "w", p + "x_zero", p + "w_zero"], [p + "acc"],
                                          **{a.name: helper.get_attribute_value(a) for a in node.attribute}))
        else:
            nodes.append(helper.make_node("MatMulInteger", [p + "x", p + "w", p + "x_zero", p + "w_zero"], [p + "acc"]))
        nodes += [
            helper.make_node("Cast", [p + "acc"], [p + "accf"], to=onnx.TensorProto.FLOAT),
            helper.make_node("Mul", [p + "x_scale", p + "w_scale"], [p + "scale"]),
        ]
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        scaled = node.output[0] if bias is None else p + "scaled"
        nodes.append(helper.make_node("Mul", [p + "accf", p + "scale"], [scaled]))
        if bias is not None:
            b = numpy_helper.to_array(initializers(model)[bias])
            if node.op_type == "Conv":
                b = b.reshape(1, -1, *([1] * (len(weight.shape) - 2)))
            add_initializer(model, b.astype(np.float32), p + "bias")
            nodes.append(helper.make_node("Add", [scaled, p + "bias"], [node.output[0]]))
        replace_node(model, node, nodes)
    return drop_unused_initializers(model)


def qdq(model, calibration):
    """QuantizeLinear/DequantizeLinear on each weighted node's input (u8, the
    calibrated range) and weight (int8, symmetric per tensor)."""
    inline_identities(model)
    pairs = weighted_nodes(model)
    if len(calibration) != len(pairs):
        raise RuntimeError("calibration saw %d layers, the graph has %d weighted nodes" % (len(calibration), len(pairs)))
    for index, ((node, weight), (_, largest)) in enumerate(zip(pairs, calibration)):
        p = "qdq%d_" % index
        x_scale = np.float32(max(largest, 1e-6) * 2 / 255.0)
        add_initializer(model, np.array(x_scale, dtype=np.float32), p + "x_scale")
        add_initializer(model, np.array(128, dtype=np.uint8), p + "x_zero")
        w_scale = np.float32(max(np.abs(weight).max(), 1e-8) / 127.0)
        add_initializer(model, np.clip(np.rint(weight / w_scale), -127, 127).astype(np.int8), p + "w")
        add_initializer(model, np.array(w_scale, dtype=np.float32), p + "w_scale")
        add_initializer(model, np.array(0, dtype=np.int8), p + "w_zero")
        nodes = [
            helper.make_node("QuantizeLinear", [node.input[0], p + "x_scale", p + "x_zero"], [p + "xq"]),
            helper.make_node("DequantizeLinear", [p + "xq", p + "x_scale", p + "x_zero"], [p + "xd"]),
            helper.make_node("DequantizeLinear", [p + "w", p + "w_scale", p + "w_zero"], [p + "wd"]),
        ]
        inputs = list(node.input)
        inputs[0], inputs[1] = p + "xd", p + "wd"
        nodes.append(helper.make_node(node.op_type, inputs, list(node.output), name=node.name,
                                      **{a.name: helper.get_attribute_value(a) for a in node.attribute}))
        replace_node(model, node, nodes)
    return drop_unused_initializers(model)


def float16_appended_casts(model):
    """Every float initializer and Constant in float16; the graph's float input
    and output cast at its edges by Cast nodes appended after all the others."""
    graph = model.graph
    for i, t in enumerate(graph.initializer):
        if t.data_type == onnx.TensorProto.FLOAT:
            graph.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for node in graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == onnx.TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
    appended = []
    for value in graph.input:
        if value.name in initializers(model):
            continue
        inner = value.name + "_f16"
        for node in graph.node:
            for i, name in enumerate(node.input):
                if name == value.name:
                    node.input[i] = inner
        appended.append(helper.make_node("Cast", [value.name], [inner], to=onnx.TensorProto.FLOAT16))
    for value in graph.output:
        inner = value.name + "_f16"
        for node in graph.node:
            for i, name in enumerate(node.output):
                if name == value.name:
                    node.output[i] = inner
        appended.append(helper.make_node("Cast", [inner], [value.name], to=onnx.TensorProto.FLOAT))
    graph.node.extend(appended)
    del graph.value_info[:]  # their element types were float32's
    return model


# ---- the corpus ---------------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--size", choices=("small", "real"), default="small")
    parser.add_argument("--only", default="", help="write only the families whose name contains this")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    manifest = []

    def save(model, name, family, form, opset, inputs, parameters):
        path = os.path.join(args.out, name + ".onnx")
        onnx.save(model, path)
        manifest.append({"name": name, "file": os.path.basename(path), "family": family, "form": form,
                         "opset": opset, "parameters": parameters,
                         "inputs": {k: {"dims": list(v), "dtype": "float32"} for k, v in inputs.items()}})

    for family, module, shape in classifiers(args.size):
        if args.only not in family:
            continue
        settle_batch_norms(module, shape)
        parameters = sum(p.numel() for p in module.parameters())
        example = torch.randn(*shape)
        scratch = os.path.join(args.out, "scratch.onnx")
        for opset in OPSETS:
            model = export(module, example, scratch, opset, ["input"], ["output"])
            save(model, "%s_opset%d" % (family, opset), family, "f32", opset, {"input": shape}, parameters)
        calibration = conv_inputs(module, example)
        base = export(module, example, scratch, 13, ["input"], ["output"])
        save(dynamic_int8(onnx.load(scratch)), family + "_int8", family, "int8", 13, {"input": shape}, parameters)
        save(qdq(onnx.load(scratch), calibration), family + "_qdq", family, "qdq", 13, {"input": shape}, parameters)
        save(float16_appended_casts(base), family + "_f16", family, "f16", 13, {"input": shape}, parameters)
        os.remove(scratch)

    wanted = lambda family: args.only in family  # noqa: E731
    vad = VoiceActivity()
    state = torch.zeros(1, 1, 64)
    scratch = os.path.join(args.out, "scratch.onnx")
    if wanted("lstm_vad"):
        model = export(vad, (torch.randn(1, 576), state, state), scratch, 13, ["frame", "h", "c"],
                       ["score", "h_out", "c_out"])
        save(model, "lstm_vad", "lstm_vad", "f32", 13, {"frame": [1, 576], "h": [1, 1, 64], "c": [1, 1, 64]},
             sum(p.numel() for p in vad.parameters()))

    if wanted("unet"):
        side, width = (64, 8) if args.size == "small" else (1024, 32)
        unet = UNet(width)
        shape = [1, 3, side, side]
        model = export(unet, torch.randn(*shape), scratch, 13, ["input"], ["output"])
        parameters = sum(p.numel() for p in unet.parameters())
        save(model, "unet", "unet", "f32", 13, {"input": shape}, parameters)
        save(dynamic_int8(onnx.load(scratch)), "unet_int8", "unet", "int8", 13, {"input": shape}, parameters)
        os.remove(scratch)

    for entry in manifest:
        onnx.checker.check_model(os.path.join(args.out, entry["file"])) if entry["form"] != "f16" else None
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print("make_corpus: %d models in %s" % (len(manifest), args.out))


if __name__ == "__main__":
    sys.exit(main())
