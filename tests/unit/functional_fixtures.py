# Regenerates functional_fixtures.inc for functional_test.cpp: the output of
# each torch.nn.functional call, and the gradient of sum(out * w) with
# respect to its first input, from PyTorch (Debian's python3-torch, 1.13).
# Inputs are exact rationals built the same way on both sides (values()).
# Run with /usr/bin/python3 and redirect to functional_fixtures.inc.
import torch
import torch.nn.functional as F
from pytorch_fixtures import Cases, leaf, values

c = Cases()
add = c.add

x = leaf([4, 5], 1); t = torch.tensor([1, 4, -100, 0]); w = values([5], 2).abs() + 0.5
add("cross_entropy_weight_smoothing", x, F.cross_entropy(x, t, weight=w, label_smoothing=0.1))
x = leaf([4, 5], 1); add("cross_entropy_none", x, F.cross_entropy(x, t, reduction="none", label_smoothing=0.2))
x = leaf([4, 5], 1); add("cross_entropy_sum_weight", x, F.cross_entropy(x, t, weight=w, reduction="sum"))
x = leaf([2, 3, 4], 3); tk = torch.tensor([[0, 2, 1, 1], [2, 2, 0, 1]])
add("cross_entropy_kdim", x, F.cross_entropy(x, tk))
x = leaf([2, 3, 4], 3); add("cross_entropy_kdim_none", x, F.cross_entropy(x, tk, reduction="none"))
x = leaf([3, 4], 4); p = torch.softmax(values([3, 4], 5), 1)
add("cross_entropy_probabilities", x, F.cross_entropy(x, p, label_smoothing=0.2, weight=values([4], 6).abs() + 0.1))
x = leaf([4, 5], 1); add("nll_loss_weight", x, F.nll_loss(x, t, weight=w))
x = leaf([3], 7); add("nll_loss_unbatched", x, F.nll_loss(x, torch.tensor(2)))
x = (torch.sigmoid(values([2, 3], 8))).detach().requires_grad_(); y = torch.sigmoid(values([2, 3], 9))
add("binary_cross_entropy_weight", x, F.binary_cross_entropy(x, y, weight=values([3], 10).abs()))
x = leaf([2, 3], 8)
add("bce_with_logits_pos_weight", x, F.binary_cross_entropy_with_logits(x, y, weight=values([3], 10).abs(), pos_weight=values([3], 11).abs() + 0.5))
x = leaf([2, 3], 8); add("bce_with_logits_none", x, F.binary_cross_entropy_with_logits(x, y, reduction="none"))
x = leaf([2, 3], 8); add("mse_loss_sum", x, F.mse_loss(x, y, reduction="sum"))
x = leaf([2, 3], 8); add("l1_loss", x, F.l1_loss(x, y + 0.01))
for mode in ["reflect", "replicate", "circular", "constant"]:
    x = leaf([1, 2, 3, 4], 12); add("pad_" + mode, x, F.pad(x, (1, 2, 2, 1), mode=mode, value=0.5) if mode == "constant" else F.pad(x, (1, 2, 2, 1), mode=mode))
x = leaf([1, 2, 3, 4], 12); add("pad_negative", x, F.pad(x, (-1, 2)))
x = leaf([3, 4], 13); add("normalize", x, F.normalize(x))
x = leaf([3, 4], 13); add("normalize_p1_dim0", x, F.normalize(x, p=1.0, dim=0))
x = leaf([2, 4, 5, 5], 14); cw = values([6, 2, 3, 2], 15); cb = values([6], 16)
add("conv2d", x, F.conv2d(x, cw, cb, stride=(2, 1), padding=1, dilation=(1, 2), groups=2))
x = leaf([2, 4, 7], 17); add("conv1d", x, F.conv1d(x, values([3, 4, 3], 18), None, stride=2, padding=1))
x = leaf([2, 3, 5, 6], 19); add("max_pool2d", x, F.max_pool2d(x, 3, stride=2, padding=1))
x = leaf([2, 3, 5, 6], 19); add("avg_pool2d", x, F.avg_pool2d(x, (2, 3), stride=(1, 2)))
x = leaf([2, 3, 7], 20); add("max_pool1d", x, F.max_pool1d(x, 2))
x = leaf([2, 3, 7], 20); add("avg_pool1d", x, F.avg_pool1d(x, 3, stride=2, padding=1))
x = leaf([2, 3, 5, 7], 21); add("adaptive_avg_pool2d", x, F.adaptive_avg_pool2d(x, (2, 3)))
x = leaf([2, 3, 4], 22); add("layer_norm", x, F.layer_norm(x, [3, 4], values([3, 4], 23), values([3, 4], 24)))
x = leaf([4, 3, 2], 25); rm = values([3], 26); rv = values([3], 27).abs() + 0.5
add("batch_norm_training", x, F.batch_norm(x, rm, rv, values([3], 28), values([3], 29), training=True, momentum=0.3))
add("batch_norm_running_mean", None, rm)
add("batch_norm_running_var", None, rv)
x = leaf([4, 3, 2], 25); add("batch_norm_eval", x, F.batch_norm(x, values([3], 26), values([3], 27).abs() + 0.5, training=False))
x = leaf([2, 5], 30); add("gelu_tanh", x, F.gelu(x, approximate="tanh"))
x = leaf([2, 5], 30); add("leaky_relu", x, F.leaky_relu(x, 0.2))
x = leaf([2, 5], 30); add("log_softmax", x, F.log_softmax(x, 0))
x = leaf([2, 5], 30); add("softmax", x, F.softmax(x, 1))
ew = leaf([5, 3], 31); add("embedding_padding", ew, F.embedding(torch.tensor([[1, 2], [2, 4]]), ew, padding_idx=2))
x = leaf([3, 4], 32); add("linear", x, F.linear(x, values([2, 4], 33), values([2], 34)))

# Activations (x scaled where a function's bends lie outside the inputs' range).
x = leaf([3, 4], 40); add("elu", x, F.elu(x * 2, alpha=0.7))
x = leaf([3, 4], 40); add("selu", x, F.selu(x * 2))
x = leaf([3, 4], 40); add("celu", x, F.celu(x * 2, alpha=1.5))
x = leaf([2, 6], 41); add("glu", x, F.glu(x, dim=1))
x = leaf([4, 3], 41); add("glu_dim0", x, F.glu(x, dim=0))
x = leaf([3, 4], 40); add("hardtanh", x, F.hardtanh(x * 2, -1.5, 2.5))
x = leaf([3, 4], 40); add("relu6", x, F.relu6(x * 3))
x = leaf([3, 4], 40); add("hardswish", x, F.hardswish(x * 2))
# PyTorch's vectorised hardsigmoid multiplies by 1/6 rounded to float (its
# scalar tail divides exactly): one element at a time takes the exact path.
x = leaf([3, 4], 40); add("hardsigmoid", x, torch.stack([F.hardsigmoid(v) for v in (x * 2).flatten()]).reshape(3, 4))
x = leaf([3, 4], 40); add("hardshrink", x, F.hardshrink(x, 0.6))
x = leaf([3, 4], 40); add("softshrink", x, F.softshrink(x, 0.6))
x = leaf([3, 4], 40); add("tanhshrink", x, F.tanhshrink(x))
x = leaf([3, 4], 40); add("softsign", x, F.softsign(x))
x = leaf([3, 4], 40); add("softplus", x, F.softplus(x * 4, beta=2, threshold=5))
x = leaf([3, 4], 40); add("logsigmoid", x, F.logsigmoid(x * 10))
x = leaf([3, 4], 40); add("mish", x, F.mish(x * 2))
x = leaf([3, 4], 40); add("threshold", x, F.threshold(x, 0.3, -7.0))
x = leaf([2, 3, 4], 42); add("prelu_channels", x, F.prelu(x, torch.tensor([0.1, -0.2, 0.3])))
x = leaf([2, 3, 4], 42); add("prelu_one", x, F.prelu(x, torch.tensor([0.25])))
x = leaf([3, 4], 40); add("rrelu_eval", x, F.rrelu(x, 0.1, 0.3, training=False))
x = leaf([3, 4], 40); add("softmin", x, F.softmin(x, 1))
x = leaf([2, 3, 2, 2], 43); add("softmax2d", x, torch.nn.Softmax2d()(x))

# More losses.
y = values([3, 4], 44); sgn = torch.sign(values([3, 4], 45) + 0.01)
x = leaf([3, 4], 40); add("smooth_l1_loss", x, F.smooth_l1_loss(x, y, beta=0.7))
x = leaf([3, 4], 40); add("smooth_l1_loss_none", x, F.smooth_l1_loss(x, y, reduction="none"))
x = leaf([3, 4], 40); add("huber_loss", x, F.huber_loss(x, y, delta=0.6, reduction="sum"))
x = leaf([3, 4], 40); add("soft_margin_loss", x, F.soft_margin_loss(x * 5, sgn))
p = torch.softmax(values([3, 4], 46), 1); p[0, 1] = 0
x = leaf([3, 4], 40); add("kl_div_batchmean", x, F.kl_div(x, p, reduction="batchmean"))
x = leaf([3, 4], 40); add("kl_div_log_target", x, F.kl_div(x, torch.log_softmax(values([3, 4], 46), 1), reduction="sum", log_target=True))
x = leaf([3, 4], 40); add("hinge_embedding_loss", x, F.hinge_embedding_loss(x, sgn, margin=0.8))
x = leaf([3, 4], 40); counts = torch.tensor([0., 1, 2, 3, 0, 5, 1, 2, 4, 0, 3, 1]).reshape(3, 4)
add("poisson_nll_loss", x, F.poisson_nll_loss(x, counts, full=True))
x = leaf([3, 4], 40); add("poisson_nll_loss_rate", x, F.poisson_nll_loss(x.abs() + 0.1, counts, log_input=False, reduction="none"))
x = leaf([3, 4], 40); labels = (values([3, 4], 48) > 0).double()
add("multilabel_soft_margin_loss", x, F.multilabel_soft_margin_loss(x * 3, labels, weight=values([4], 49).abs()))
x = leaf([6], 50); add("margin_ranking_loss", x, F.margin_ranking_loss(x, values([6], 51), torch.sign(values([6], 52) + 0.01), margin=0.3))

# scaled_dot_product_attention as PyTorch 2 defines it (1.13 has no public
# one): softmax(q k^T * scale + mask) v, a boolean mask true where allowed.
def sdpa(q, k, v, mask=None, causal=False, scale=None):
    scores = q @ k.transpose(-2, -1) * (scale if scale is not None else q.size(-1) ** -0.5)
    if causal:
        mask = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).tril()
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
    return torch.softmax(scores, -1) @ v
x = leaf([2, 3, 4], 60); add("sdpa", x, sdpa(x, values([2, 5, 4], 61), values([2, 5, 3], 62)))
x = leaf([2, 4, 4], 60); add("sdpa_causal", x, sdpa(x, values([2, 4, 4], 61), values([2, 4, 3], 62), causal=True))
x = leaf([2, 3, 4], 60); allowed = values([3, 5], 63) > -2
add("sdpa_bool_mask_scale", x, sdpa(x, values([2, 5, 4], 61), values([2, 5, 3], 62), mask=allowed, scale=0.3))
x = leaf([2, 3, 4], 60); add("sdpa_float_mask", x, sdpa(x, values([2, 5, 4], 61), values([2, 5, 3], 62), mask=values([2, 3, 5], 64)))

# CTC through log_softmax (PyTorch's backward assumes one).
x = leaf([6, 2, 4], 115); add("ctc_loss", x, F.ctc_loss(torch.log_softmax(x, 2), torch.tensor([[1, 2, 2], [3, 1, 0]]), torch.tensor([6, 5]), torch.tensor([3, 2])))
x = leaf([5, 3], 116); add("ctc_loss_unbatched_none", x, F.ctc_loss(torch.log_softmax(x, 1), torch.tensor([1, 2]), torch.tensor(5), torch.tensor(2), reduction="none"))

c.emit("functional_fixtures.py")
