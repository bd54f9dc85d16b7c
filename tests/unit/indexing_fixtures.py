# Regenerates indexing_fixtures.inc for indexing_test.cpp: each indexing
# op's output and the gradient of sum(out * w) with respect to its input,
# from PyTorch (Debian's python3-torch, 1.13). Inputs are exact rationals
# built the same way on both sides (values()). Run with /usr/bin/python3 and
# redirect to indexing_fixtures.inc.
import torch
from pytorch_fixtures import Cases, leaf, values

c = Cases()
add = c.add

x = leaf([4, 5], 1); add("select", x, x.select(1, -2))
x = leaf([4, 5], 1); add("narrow", x, x.narrow(0, 1, 2))
x = leaf([4, 5], 1); add("subscript", x, x[3])
x = leaf([4, 5, 3], 2); add("slice_none_int", x, x[1::2, None, -1])
x = leaf([4, 5, 3], 2); add("ellipsis_int", x, x[..., 1])
x = leaf([4, 5, 3], 2); add("slice_step_stop", x, x[:, 1:4:2, :2])
x = leaf([4, 5], 1); add("int_tensor", x, x[:, torch.tensor([2, 0, -1, 2])])
x = leaf([4, 5], 1); add("int_tensor_2d", x, x[torch.tensor([[0, 3], [1, 1]])])
x = leaf([3, 4], 3); m = values([3, 4], 4) > 0; add("mask_2d", x, x[m])
x = leaf([3, 4], 3); m1 = values([4], 5) > 0; add("mask_1d_after_slice", x, x[:, m1])
x = leaf([3, 4], 3); add("true_index", x, x[True])
x = leaf([3, 4], 3); add("false_index", x, x[False])
x = leaf([3, 4], 3); add("masked_fill", x, x.masked_fill(values([3, 4], 6) > 0.5, -7.5))
x = leaf([4, 5], 1); add("masked_select_broadcast", x, x.masked_select(values([1, 5], 7) > 0))
x = leaf([3, 4], 8); add("nonzero", x, (x * (values([3, 4], 9) > 0)).nonzero())
t = torch.tensor([[3.0, 1.0, 3.0, -2.0, 1.0], [0.5, 0.5, -1.0, 2.0, 0.5]]).requires_grad_()
s = torch.sort(t, dim=1, descending=True, stable=True); add("sort_desc_values", t, s.values)
add("sort_desc_indices", None, s.indices)
t2 = torch.tensor([[3.0, 1.0, 3.0, -2.0, 1.0], [0.5, 0.5, -1.0, 2.0, 0.5]]).requires_grad_()
s2 = torch.sort(t2, dim=0, stable=True); add("sort_dim0_values", t2, s2.values)
add("sort_dim0_indices", None, s2.indices)
x = leaf([4, 5], 10); k = torch.topk(x, 2, dim=0); add("topk_values", x, k.values)
add("topk_indices", None, k.indices)
x = leaf([4, 5], 10); k2 = torch.topk(x, 3, dim=1, largest=False); add("topk_smallest_values", x, k2.values)
add("topk_smallest_indices", None, k2.indices)
x = leaf([3, 7], 11); add("cumsum", x, x.cumsum(1))
x = leaf([5, 2], 11); add("cumsum_dim0", x, x.cumsum(0))
ci = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32).cumsum(1)
add("cumsum_int", None, ci)
y = values([4, 5], 12); y[1:3, ::2] = 9.0; add("index_put_slice", None, y)
y = values([4, 5], 12); y[:, torch.tensor([4, 0])] = values([4, 2], 13); add("index_put_tensor", None, y)
y = values([4, 5], 12); y[values([4, 5], 14) > 0] = -1.0; add("index_put_mask", None, y)

c.emit("indexing_fixtures.py")
