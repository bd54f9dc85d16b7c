# Regenerates tests/unit/reparam_fixtures.json for reparam_fixture_test.cpp:
# torch.nn.utils.prune and torch.nn.utils.parametrize(ations) in PyTorch
# 1.13 on fixed weights: the masks each pruning method computes (alone and
# combined as PruningContainer does), the state-dict keys and values, the
# forward output and the gradient that reaches the original; spectral_norm's
# power iteration (the _u/_v buffers after a training call) and outputs;
# weight_norm's values (PyTorch 2's form, computed with torch._weight_norm as
# 1.13 has no parametrized weight_norm). Run with Debian's PyTorch:
#   /usr/bin/python3 tests/unit/reparam_fixtures.py
import json, os
import torch
import torch.nn.utils.prune as prune
import torch.nn.utils.parametrize as P
from torch.nn.utils import parametrizations

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reparam_fixtures.json")
torch.manual_seed(17)


def flat(t):
    return [float(v) for v in t.detach().double().reshape(-1).tolist()]


def state(module):
    return [{"key": k, "shape": list(v.shape), "values": flat(v)} for k, v in module.state_dict().items()]


def make(kind):
    if kind == "linear":
        m = torch.nn.Linear(6, 5)
        x = torch.randn(3, 6)
    elif kind == "conv":
        m = torch.nn.Conv2d(3, 4, 3)
        x = torch.randn(2, 3, 5, 5)
    else:
        m = torch.nn.ConvTranspose2d(3, 4, 3)
        x = torch.randn(2, 3, 4, 4)
    return m, x


def run(module, x):
    y = module(x)
    y.pow(2).sum().backward()
    return y


def prune_case(name, kind, steps, importance=False):
    m, x = make(kind)
    before = state(m)
    scores = torch.randn_like(m.weight) if importance else None
    for step in steps:
        method = step["method"]
        if method == "l1_unstructured":
            prune.l1_unstructured(m, "weight", step["amount"], importance_scores=scores)
        elif method == "ln_structured":
            prune.ln_structured(m, "weight", step["amount"], float(step["n"]), step["dim"], importance_scores=scores)
        elif method == "custom_from_mask":
            mask = (torch.rand_like(m.weight) > 0.5).float()
            step["mask"] = flat(mask)
            prune.custom_from_mask(m, "weight", mask)
        elif method == "identity":
            prune.identity(m, "weight")
    y = run(m, x)
    case = {"name": name, "kind": kind, "before": before, "steps": steps, "x": flat(x), "x_shape": list(x.shape),
            "after": state(m), "y": flat(y), "grad_orig": flat(m.weight_orig.grad), "grad_bias": flat(m.bias.grad)}
    if importance:
        case["importance"] = flat(scores)
    prune.remove(m, "weight")
    case["removed"] = state(m)
    return case


def global_case():
    a, x = make("linear")
    b = torch.nn.Linear(5, 5)
    before = [state(a), state(b)]
    prune.l1_unstructured(b, "weight", 0.2)  # b was pruned before: the global step combines with it
    prune.global_unstructured([(a, "weight"), (b, "weight"), (a, "bias")], pruning_method=prune.L1Unstructured,
                              amount=0.35)
    return {"name": "global_l1", "before": before, "after": [state(a), state(b)]}


class Symmetric(torch.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)


class Scale(torch.nn.Module):
    def forward(self, x):
        return 2 * x

    def right_inverse(self, y):
        return y / 2


def spectral_case(name, kind, mode):
    m, x = make(kind)
    parametrizations.spectral_norm(m)
    m.train(mode == "train")
    registered = state(m)
    y = run(m, x)
    return {"name": name, "kind": kind, "mode": mode, "registered": registered, "x": flat(x), "x_shape": list(x.shape),
            "y": flat(y), "after": state(m), "grad_original": flat(m.parametrizations.weight.original.grad)}


def custom_case():
    m = torch.nn.Linear(4, 4)
    x = torch.randn(3, 4)
    before = state(m)
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale())
    registered = state(m)
    y = run(m, x)
    case = {"name": "symmetric_then_scale", "before": before, "registered": registered, "x": flat(x), "y": flat(y),
            "grad_original": flat(m.parametrizations.weight.original.grad), "repr": repr(m)}
    P.remove_parametrizations(m, "weight", leave_parametrized=True)
    case["removed"] = state(m)
    return case


def assign_case():
    m = torch.nn.Linear(4, 4)
    before = state(m)
    P.register_parametrization(m, "weight", Scale())
    registered = state(m)
    with torch.no_grad():
        m.weight = torch.eye(4) * 3
    assigned = state(m)
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    return {"name": "scale_assign", "before": before, "registered": registered, "assigned": assigned,
            "removed": state(m)}


def orthogonal_case(name, in_features, out_features, orthogonal_map=None, use_trivialization=True):
    m = torch.nn.Linear(in_features, out_features)
    x = torch.randn(3, in_features)
    before = state(m)
    parametrizations.orthogonal(m, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    registered = state(m)
    with torch.no_grad():  # a step away from the registration point
        m.parametrizations.weight.original.add_(0.1 * torch.randn_like(m.parametrizations.weight.original))
    moved = state(m)
    y = run(m, x)
    return {"name": name, "in": in_features, "out": out_features, "map": orthogonal_map or "",
            "trivialization": use_trivialization, "before": before, "registered": registered, "moved": moved,
            "x": flat(x), "y": flat(y), "grad_original": flat(m.parametrizations.weight.original.grad)}


def weight_norm_case():
    m, x = make("conv")
    w = m.weight.detach().clone()
    g = torch.norm_except_dim(w, 2, 0)
    y = torch.nn.functional.conv2d(x, torch._weight_norm(w, g, 0), m.bias)
    # PyTorch 1.13's own weight_norm (hook-based) saves weight_g and weight_v;
    # a parametrized weight_norm loads them (PyTorch 2's compatibility hook).
    legacy, _ = make("conv")
    torch.nn.utils.weight_norm(legacy, "weight", 0)
    with torch.no_grad():
        legacy.weight_g.mul_(1.5)
    legacy_y = legacy(x)
    return {"name": "weight_norm_conv", "before": state(m), "x": flat(x), "x_shape": list(x.shape), "g": flat(g),
            "g_shape": list(g.shape), "y": flat(y), "legacy_state": state(legacy), "legacy_y": flat(legacy_y)}


def main():
    cases = {
        "prune": [
            prune_case("l1_fraction", "linear", [{"method": "l1_unstructured", "amount": 0.3}]),
            prune_case("l1_count_then_fraction", "linear",
                       [{"method": "l1_unstructured", "amount": 7}, {"method": "l1_unstructured", "amount": 0.5}]),
            prune_case("l1_importance", "linear", [{"method": "l1_unstructured", "amount": 0.4}], importance=True),
            prune_case("ln2_dim0", "conv", [{"method": "ln_structured", "amount": 0.5, "n": 2, "dim": 0}]),
            prune_case("ln1_dim1_count", "conv", [{"method": "ln_structured", "amount": 1, "n": 1, "dim": 1}]),
            prune_case("lninf_dim_minus1", "conv", [{"method": "ln_structured", "amount": 0.34, "n": "inf",
                                                     "dim": -1}]),
            prune_case("l1_then_ln", "linear",
                       [{"method": "l1_unstructured", "amount": 0.25},
                        {"method": "ln_structured", "amount": 2, "n": 2, "dim": 0}]),
            prune_case("ln_then_l1", "conv",
                       [{"method": "ln_structured", "amount": 1, "n": 2, "dim": 0},
                        {"method": "l1_unstructured", "amount": 0.5}]),
            prune_case("custom_then_identity", "linear",
                       [{"method": "custom_from_mask"}, {"method": "identity"}]),
        ],
        "global": [global_case()],
        "spectral": [spectral_case("linear_train", "linear", "train"), spectral_case("conv_eval", "conv", "eval"),
                     spectral_case("convtranspose_train", "convtranspose", "train")],
        "custom": [custom_case()],
        "assign": [assign_case()],
        "weight_norm": [weight_norm_case()],
        "orthogonal": [orthogonal_case("square_matrix_exp", 5, 5), orthogonal_case("wide_householder", 6, 4),
                       orthogonal_case("tall_householder_no_trivialization", 4, 6, "householder", False),
                       orthogonal_case("tall_matrix_exp", 3, 5, "matrix_exp")],
    }
    with open(OUT, "w") as f:
        json.dump(cases, f, indent=None, separators=(",", ":"), allow_nan=False)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
