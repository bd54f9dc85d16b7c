# Regenerates tests/unit/lr_scheduler_fixtures.json for
# lr_scheduler_fixture_test.cpp: each torch.optim.lr_scheduler of PyTorch
# 1.13, on an optimizer of two parameter groups (lr 0.1 and 0.05), records
# the groups' learning rates (and momentum or beta1 where the scheduler
# cycles them) after construction and after each of 25 steps. The test builds
# the same schedulers by case name. Run with Debian's PyTorch:
#   /usr/bin/python3 tests/unit/lr_scheduler_fixtures.py
import json, os
import torch
from torch.optim import lr_scheduler as S

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lr_scheduler_fixtures.json")
STEPS = 25
METRICS = [5.0, 4.0, 4.0, 3.95, 3.9, 3.9, 3.0, 3.1, 3.2, 3.3, 3.4, 2.0, 2.5, 2.6, 2.7, 2.8, 2.9, 1.0, 1.2, 1.3,
           1.4, 1.5, 1.6, 1.7, 1.8]


def optimizer(kind="SGD", **extra):
    groups = [{"params": [torch.zeros(1, requires_grad=True)]},
              {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.05}]
    return getattr(torch.optim, kind)(groups, lr=0.1, **extra)


def record(opt, momentum):
    row = {"lr": [g["lr"] for g in opt.param_groups]}
    if momentum == "momentum":
        row["momentum"] = [g["momentum"] for g in opt.param_groups]
    elif momentum == "beta1":
        row["momentum"] = [g["betas"][0] for g in opt.param_groups]
    return row


def run(opt, step, momentum=None):
    rows = [record(opt, momentum)]
    for i in range(STEPS):
        opt.step()
        step(i)
        rows.append(record(opt, momentum))
    return {"lr": [r["lr"] for r in rows], "momentum": [r.get("momentum") for r in rows] if momentum else None}


def plain(make, **kw):
    opt = optimizer(**kw)
    s = make(opt)
    return run(opt, lambda i: s.step())


def main():
    cases = {}
    cases["lambda"] = plain(lambda o: S.LambdaLR(o, lambda e: 0.95 ** e))
    cases["lambda_per_group"] = plain(lambda o: S.LambdaLR(o, [lambda e: 1.0 / (e + 1), lambda e: 0.9 ** e]))
    cases["multiplicative"] = plain(lambda o: S.MultiplicativeLR(o, lambda e: 0.9))
    cases["step"] = plain(lambda o: S.StepLR(o, 3, 0.5))
    cases["multi_step"] = plain(lambda o: S.MultiStepLR(o, [2, 5, 5, 9], 0.5))
    cases["constant"] = plain(lambda o: S.ConstantLR(o, 0.25, 4))
    cases["linear"] = plain(lambda o: S.LinearLR(o, 0.2, 0.9, 6))
    cases["exponential"] = plain(lambda o: S.ExponentialLR(o, 0.9))
    cases["polynomial"] = plain(lambda o: S.PolynomialLR(o, 8, 2.0))
    cases["cosine_annealing"] = plain(lambda o: S.CosineAnnealingLR(o, 5, 0.001))
    cases["sequential"] = plain(lambda o: S.SequentialLR(
        o, [S.ConstantLR(o, 0.5, 2), S.StepLR(o, 2, 0.5), S.CosineAnnealingLR(o, 4)], [4, 10]))
    cases["sequential_linear_exponential"] = plain(lambda o: S.SequentialLR(
        o, [S.LinearLR(o, 0.1, total_iters=3), S.ExponentialLR(o, 0.9)], [3]))
    cases["chained"] = plain(lambda o: S.ChainedScheduler([S.ConstantLR(o, 0.5, 4), S.ExponentialLR(o, 0.9)]))

    opt = optimizer(momentum=0.9)
    s = S.CyclicLR(opt, 0.01, 0.1, step_size_up=3, step_size_down=2, mode="triangular2")
    cases["cyclic_triangular2"] = run(opt, lambda i: s.step(), "momentum")
    opt = optimizer()
    s = S.CyclicLR(opt, 0.01, 0.1, step_size_up=4, mode="exp_range", gamma=0.95, cycle_momentum=False)
    cases["cyclic_exp_range"] = run(opt, lambda i: s.step())
    opt = optimizer(momentum=0.9)
    s = S.OneCycleLR(opt, 0.5, total_steps=STEPS)
    cases["one_cycle"] = run(opt, lambda i: s.step(), "momentum")
    opt = optimizer("Adam")
    s = S.OneCycleLR(opt, 0.3, epochs=3, steps_per_epoch=9, three_phase=True, anneal_strategy="linear")
    cases["one_cycle_three_phase_adam"] = run(opt, lambda i: s.step(), "beta1")
    cases["warm_restarts"] = plain(lambda o: S.CosineAnnealingWarmRestarts(o, 3, 2, 0.001))
    opt = optimizer()
    s = S.CosineAnnealingWarmRestarts(opt, 4)
    cases["warm_restarts_fractional"] = run(opt, lambda i: s.step(1.5 + i * 0.75))
    opt = optimizer()
    s = S.ReduceLROnPlateau(opt, factor=0.5, patience=2, threshold=0.1, cooldown=1, min_lr=[0.01, 0.02])
    cases["plateau"] = run(opt, lambda i: s.step(METRICS[i]))
    opt = optimizer()
    s = S.ReduceLROnPlateau(opt, mode="max", factor=0.3, patience=1, threshold=0.5, threshold_mode="abs")
    cases["plateau_max_abs"] = run(opt, lambda i: s.step(-METRICS[i]))
    with open(OUT, "w") as f:
        json.dump({"steps": STEPS, "metrics": METRICS, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
