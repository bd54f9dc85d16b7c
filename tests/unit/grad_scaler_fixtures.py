# Regenerates tests/unit/grad_scaler_fixtures.json for grad_scaler_test.cpp:
# PyTorch 1.13's own GradScaler (torch.cuda.amp.grad_scaler) driving SGD on a
# Linear(3, 2) for 14 iterations, with inf or NaN put into a gradient at
# some of them; after each, the scale, the growth tracker and whether the
# optimizer stepped, and at the end the weights and the state dict.
# Debian's torch 1.13 has no GPU: its GradScaler's two CUDA kernels are
# stood in for by their CPU equivalents below (the arithmetic of
# aten/src/ATen/native/cuda/AmpKernels.cu), its device checks let through,
# and scale() done as its body does (outputs * _scale). Run with:
#   /usr/bin/python3 tests/unit/grad_scaler_fixtures.py
import json, math, os
import torch
import torch.cuda.amp.grad_scaler as gs


def check_and_unscale(grads, found_inf, inv_scale):
    for g in grads:
        if not torch.isfinite(g).all():
            found_inf.fill_(1.0)
        g.mul_(inv_scale)


def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    if found_inf.item():
        scale.fill_(float(torch.tensor(scale.item() * backoff_factor, dtype=torch.float32)))
        growth_tracker.fill_(0)
    else:
        successful = growth_tracker.item() + 1
        if successful == growth_interval:
            grown = torch.tensor(scale.item() * growth_factor, dtype=torch.float32)
            if torch.isfinite(grown):
                scale.fill_(float(grown))
            growth_tracker.fill_(0)
        else:
            growth_tracker.fill_(successful)
    return scale


torch._amp_foreach_non_finite_check_and_unscale_ = check_and_unscale
torch._amp_update_scale_ = update_scale
gs._MultiDeviceReplicator.__init__ = lambda self, master: (setattr(self, "master", master),
                                                           setattr(self, "_per_device_tensors", {}))[0]

w = torch.tensor([[0.5, -0.25, 0.125], [0.75, 0.0625, -0.5]], requires_grad=True)
b = torch.tensor([0.25, -0.125], requires_grad=True)
x = torch.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 0.25], [-1.5, 1.0, 2.0], [0.0, 0.75, -0.25]])
opt = torch.optim.SGD([w, b], lr=0.0625)
scaler = gs.GradScaler(init_scale=1024.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
# Without CUDA its __init__ turns it off before setting its fields: set them
# as an enabled __init__ does.
scaler._enabled = True
scaler._init_scale, scaler._scale = 1024.0, None
scaler._growth_factor, scaler._backoff_factor, scaler._growth_interval = 2.0, 0.5, 3
scaler._init_growth_tracker, scaler._growth_tracker = 0, None
scaler._per_optimizer_states = gs.defaultdict(gs._refresh_per_optimizer_state)

# iteration -> what to put into a gradient after backward
inject = {2: ("w", math.inf), 5: ("b", math.nan), 6: ("w", -math.inf), 11: ("b", math.inf)}
manual_unscale = {4, 9}  # unscale_ first (as before clipping), then step
history = []
for it in range(14):
    opt.zero_grad()
    loss = ((x @ w.T + b) ** 2).mean()
    if scaler._scale is None:
        scaler._lazy_init_scale_growth_tracker(loss.device)
    (loss * scaler._scale).backward()
    if it in inject:
        name, value = inject[it]
        (w if name == "w" else b).grad.view(-1)[1] = value
    if it in manual_unscale:
        scaler.unscale_(opt)
    before = w.detach().clone()
    scaler.step(opt)
    stepped = not torch.equal(before, w.detach())
    scaler.update()
    history.append({"scale": scaler.get_scale(), "growth_tracker": scaler._get_growth_tracker(),
                    "stepped": stepped, "loss": loss.item()})

out = {
    "torch": torch.__version__,
    "init_scale": 1024.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 3, "lr": 0.0625,
    "w": w.detach().flatten().tolist(), "b": b.detach().tolist(), "x": x.flatten().tolist(),
    "w0": [0.5, -0.25, 0.125, 0.75, 0.0625, -0.5], "b0": [0.25, -0.125],
    "inject": {str(k): [v[0], "inf" if v[1] == math.inf else "-inf" if v[1] == -math.inf else "nan"]
               for k, v in inject.items()},
    "manual_unscale": sorted(manual_unscale),
    "history": history,
    "state_dict": scaler.state_dict(),
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grad_scaler_fixtures.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print(json.dumps(history))
print(scaler.state_dict())
