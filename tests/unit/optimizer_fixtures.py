# Regenerates tests/unit/optimizer_fixtures/*.safetensors for
# optimizer_fixture_test.cpp: each optimizer of torch.optim takes 20 steps on
# the same small problem, loss = mean((tanh(x w^T + b) - y)^2), from the same
# start; the file holds the start, x and y, and w and b after every step.
# The metadata gives the optimizer's kind and nnplug's options (PyTorch's
# tuples as lists, or as beta1/beta2, etaminus/etaplus, step_size_min/max).
# f64 throughout.
# Run with Debian's PyTorch:
#   /usr/bin/python3 tests/unit/optimizer_fixtures.py
import json, os, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_fixtures import values
from layer_fixtures import write_safetensors

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimizer_fixtures")
STEPS = 20


def case(name, kind, options, torch_options):
    w0, b0 = values([3, 4], 201) / 2, values([3], 202) / 2
    x, y = values([5, 4], 203), values([5, 3], 204) / 3
    w, b = w0.clone().requires_grad_(), b0.clone().requires_grad_()
    opt = getattr(torch.optim, kind)([w, b], **torch_options)
    tensors = {"start.w": w0, "start.b": b0, "x": x, "y": y}
    def closure():
        opt.zero_grad()
        loss = ((torch.tanh(x @ w.T + b) - y) ** 2).mean()
        loss.backward()
        return loss
    for step in range(STEPS):
        if kind == "LBFGS":  # several evaluations per step
            opt.step(closure)
        else:
            closure()
            opt.step()
        tensors["step%d.w" % step] = w.detach().clone()
        tensors["step%d.b" % step] = b.detach().clone()
    write_safetensors(os.path.join(OUT, name + ".safetensors"), tensors,
                      {"kind": kind, "options": json.dumps(options), "steps": str(STEPS)})


def main():
    torch.set_default_dtype(torch.float64)
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".safetensors"):
            os.remove(os.path.join(OUT, f))
    case("sgd_nesterov_weight_decay", "SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
         {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01})
    case("sgd_dampening_maximize", "SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.3, "maximize": True},
         {"lr": 0.05, "momentum": 0.5, "dampening": 0.3, "maximize": True})
    case("adam_amsgrad", "Adam", {"lr": 0.05, "betas": [0.8, 0.99], "amsgrad": True, "weight_decay": 0.1},
         {"lr": 0.05, "betas": (0.8, 0.99), "amsgrad": True, "weight_decay": 0.1})
    case("adamw", "AdamW", {"lr": 0.05}, {"lr": 0.05})
    case("adagrad", "Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1},
         {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1})
    case("adadelta", "Adadelta", {"lr": 1.0, "rho": 0.8, "weight_decay": 0.01},
         {"lr": 1.0, "rho": 0.8, "weight_decay": 0.01})
    case("rmsprop_centered_momentum", "RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True},
         {"lr": 0.01, "momentum": 0.5, "centered": True})
    case("adamax", "Adamax", {"lr": 0.05, "weight_decay": 0.01}, {"lr": 0.05, "weight_decay": 0.01})
    case("adamax_maximize", "Adamax", {"beta1": 0.7, "beta2": 0.9, "maximize": True},
         {"betas": (0.7, 0.9), "maximize": True})
    case("nadam", "NAdam", {"lr": 0.05}, {"lr": 0.05})
    case("nadam_decay", "NAdam", {"lr": 0.02, "momentum_decay": 0.1, "weight_decay": 0.01, "beta2": 0.9},
         {"lr": 0.02, "momentum_decay": 0.1, "weight_decay": 0.01, "betas": (0.9, 0.9)})
    case("radam", "RAdam", {"lr": 0.05}, {"lr": 0.05})  # rho_t > 5 from step 6
    case("radam_weight_decay", "RAdam", {"lr": 0.01, "beta2": 0.9, "weight_decay": 0.1},
         {"lr": 0.01, "betas": (0.9, 0.9), "weight_decay": 0.1})
    case("asgd", "ASGD", {"lr": 0.1, "t0": 5, "lambd": 0.01}, {"lr": 0.1, "t0": 5, "lambd": 0.01})
    case("asgd_weight_decay_maximize", "ASGD", {"lr": 0.05, "weight_decay": 0.1, "maximize": True, "alpha": 0.5},
         {"lr": 0.05, "weight_decay": 0.1, "maximize": True, "alpha": 0.5})
    case("rprop", "Rprop", {"lr": 0.01}, {"lr": 0.01})
    case("rprop_bounds", "Rprop", {"lr": 0.05, "etas": [0.3, 1.5], "step_sizes": [0.01, 0.08]},
         {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (0.01, 0.08)})
    # LBFGS takes a closure; each of its steps runs up to max_iter iterations.
    # Its curvature pairs are differences of nearby gradients, so rounding
    # grows faster than in the other optimizers: the test allows 1e-8.
    case("lbfgs", "LBFGS", {"lr": 0.1, "max_iter": 3, "history_size": 4},
         {"lr": 0.1, "max_iter": 3, "history_size": 4})
    case("lbfgs_strong_wolfe", "LBFGS", {"max_iter": 2, "line_search_fn": "strong_wolfe", "history_size": 5},
         {"max_iter": 2, "line_search_fn": "strong_wolfe", "history_size": 5})
    case("lbfgs_max_eval_tolerance", "LBFGS", {"lr": 0.8, "max_iter": 10, "max_eval": 4, "tolerance_grad": 1e-3},
         {"lr": 0.8, "max_iter": 10, "max_eval": 4, "tolerance_grad": 1e-3})


if __name__ == "__main__":
    main()
