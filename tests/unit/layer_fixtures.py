# Regenerates tests/unit/layer_fixtures/*.safetensors for
# layer_fixture_test.cpp: one file per case, holding a PyTorch layer's state
# dict, the arguments of a call, every tensor result, and the gradients of
# sum_j sum(out_j * values(out_j.shape, 99 + j)) with respect to the float
# inputs and the parameters. The metadata says how to build the same layer
# from a model spec and how to call it, so the test needs no per-case code.
# Everything is f64. Run with Debian's PyTorch:
#   /usr/bin/python3 tests/unit/layer_fixtures.py
import json, os, struct, sys
import torch
import torch.nn as nn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_fixtures import values

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layer_fixtures")
DTYPES = {torch.float64: "F64", torch.int64: "I64", torch.bool: "BOOL", torch.float32: "F32"}


def write_safetensors(path, tensors, metadata):
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        data = t.detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def flat(result):
    if result is None or isinstance(result, torch.Tensor):
        return [result]
    out = []
    for r in result:
        out += flat(r)
    return out


def as_called(args):
    return args


def state_pair(args):  # (input, h, c) as PyTorch's LSTM takes it: (input, (h, c))
    return args if len(args) < 3 else [args[0], (args[1], args[2])]


def case(name, spec, module, args, training=False, pack=as_called, gradients=True, repr_text=None, frozen=()):
    """spec: the nnplug model spec (None for PyTorch's None) of the same layer; args: the arguments of
    nnplug's call (tensors, None, bool, int, float, str); pack: PyTorch's
    call from them, where it nests; gradients=False where PyTorch's backward
    is not its forward's derivative (then only results are compared);
    repr_text: the repr expected where 1.13 lacks the layer (a stand-in
    computes it) and a later PyTorch defines it; frozen: indices of float
    arguments PyTorch takes no gradient for (targets)."""
    torch.manual_seed(len(name))
    module.train(training)
    tensors, arg_meta = {}, []
    args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]  # fresh leaves per case
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            if a.dtype.is_floating_point and i not in frozen:
                a.requires_grad_()
            tensors["in.%d" % i] = a
            arg_meta.append({"tensor": "in.%d" % i})
        else:
            arg_meta.append(a)
    state = module.state_dict()
    for k, v in state.items():
        tensors["state." + k] = v.clone()
    outs = flat(module(*pack(args)))
    loss = sum((o * values(list(o.shape), 99 + j)).sum() for j, o in enumerate(outs)
               if o is not None and o.dtype.is_floating_point)
    loss.backward()
    for j, o in enumerate(outs):  # a result that is None has no entry
        if o is not None:
            tensors["out.%d" % j] = o.detach()
    for i, a in enumerate(args):
        if gradients and isinstance(a, torch.Tensor) and a.grad is not None:
            tensors["grad.in.%d" % i] = a.grad
    if training:  # buffers a training call updates (running statistics)
        for k, b in module.named_buffers():
            tensors["after." + k] = b.detach().clone()
    for k, p in module.named_parameters():
        if gradients and p.grad is not None:
            tensors["grad.param." + k] = p.grad
    meta = {"spec": json.dumps(spec), "args": json.dumps(arg_meta), "training": json.dumps(training),
            "state_keys": json.dumps(list(state.keys())), "outputs": str(len(outs)), "repr": repr_text or repr(module)}
    write_safetensors(os.path.join(OUT, name + ".safetensors"), tensors, meta)


def main():
    torch.set_default_dtype(torch.float64)
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".safetensors"):
            os.remove(os.path.join(OUT, f))

    # Recurrent layers.
    x = values([5, 2, 3], 1)
    case("rnn_tanh", {"type": "nn.RNN", "input_size": 3, "hidden_size": 4}, nn.RNN(3, 4), [x])
    case("rnn_relu_two_layers_h0", {"type": "nn.RNN", "input_size": 3, "hidden_size": 4, "num_layers": 2,
                                    "nonlinearity": "relu"},
         nn.RNN(3, 4, num_layers=2, nonlinearity="relu"), [values([5, 2, 3], 1), values([2, 2, 4], 2) / 4])
    case("rnn_bidirectional_batch_first_no_bias",
         {"type": "nn.RNN", "input_size": 3, "hidden_size": 4, "bias": False, "batch_first": True,
          "bidirectional": True}, nn.RNN(3, 4, bias=False, batch_first=True, bidirectional=True),
         [values([2, 5, 3], 3)])
    case("rnn_unbatched", {"type": "nn.RNN", "input_size": 3, "hidden_size": 4},
         nn.RNN(3, 4), [values([5, 3], 4), values([1, 4], 5) / 4])
    case("lstm", {"type": "nn.LSTM", "input_size": 3, "hidden_size": 4}, nn.LSTM(3, 4), [values([5, 2, 3], 6)])
    case("lstm_two_layers_bidirectional_states",
         {"type": "nn.LSTM", "input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True},
         nn.LSTM(3, 4, num_layers=2, bidirectional=True),
         [values([5, 2, 3], 7), values([4, 2, 4], 8) / 4, values([4, 2, 4], 9) / 4], pack=state_pair)
    case("lstm_proj_batch_first", {"type": "nn.LSTM", "input_size": 3, "hidden_size": 5, "proj_size": 2,
                                   "batch_first": True, "num_layers": 2},
         nn.LSTM(3, 5, proj_size=2, batch_first=True, num_layers=2), [values([2, 4, 3], 10)])
    case("lstm_unbatched_proj_bidirectional", {"type": "nn.LSTM", "input_size": 3, "hidden_size": 5,
                                               "proj_size": 2, "bidirectional": True},
         nn.LSTM(3, 5, proj_size=2, bidirectional=True),
         [values([4, 3], 11), values([2, 2], 12) / 4, values([2, 5], 13) / 4], pack=state_pair)
    case("gru", {"type": "nn.GRU", "input_size": 3, "hidden_size": 4}, nn.GRU(3, 4), [values([5, 2, 3], 14)])
    case("gru_bidirectional_two_layers_batch_first_h0",
         {"type": "nn.GRU", "input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True,
          "batch_first": True}, nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True),
         [values([2, 5, 3], 15), values([4, 2, 4], 16) / 4])
    case("rnn_cell", {"type": "nn.RNNCell", "input_size": 3, "hidden_size": 4}, nn.RNNCell(3, 4),
         [values([2, 3], 17), values([2, 4], 18) / 4])
    case("rnn_cell_relu_unbatched", {"type": "nn.RNNCell", "input_size": 3, "hidden_size": 4,
                                     "nonlinearity": "relu", "bias": False},
         nn.RNNCell(3, 4, nonlinearity="relu", bias=False), [values([3], 19)])
    h, c = values([2, 4], 21) / 4, values([2, 4], 22) / 4
    case("lstm_cell", {"type": "nn.LSTMCell", "input_size": 3, "hidden_size": 4}, nn.LSTMCell(3, 4),
         [values([2, 3], 20), h, c], pack=state_pair)
    case("lstm_cell_zeros", {"type": "nn.LSTMCell", "input_size": 3, "hidden_size": 4}, nn.LSTMCell(3, 4),
         [values([2, 3], 20)])
    case("gru_cell", {"type": "nn.GRUCell", "input_size": 3, "hidden_size": 4}, nn.GRUCell(3, 4),
         [values([2, 3], 23), values([2, 4], 24) / 4])

    # Attention.
    q, k, v = values([3, 2, 4], 30), values([5, 2, 4], 31), values([5, 2, 4], 32)
    case("mha", {"type": "nn.MultiheadAttention", "embed_dim": 4, "num_heads": 2}, nn.MultiheadAttention(4, 2),
         [q, k, v])
    kpm = torch.tensor([[False, False, True, False, False], [False, False, False, False, True]])
    case("mha_batch_first_masks_per_head",
         {"type": "nn.MultiheadAttention", "embed_dim": 4, "num_heads": 2, "batch_first": True},
         nn.MultiheadAttention(4, 2, batch_first=True),
         [values([2, 3, 4], 33), values([2, 5, 4], 34), values([2, 5, 4], 35), kpm, True, values([3, 5], 36) / 4,
          False])
    case("mha_kdim_vdim_bias_kv_zero_attn",
         {"type": "nn.MultiheadAttention", "embed_dim": 4, "num_heads": 2, "kdim": 3, "vdim": 5,
          "add_bias_kv": True, "add_zero_attn": True},
         nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True),
         [q, values([5, 2, 3], 37), values([5, 2, 5], 38), kpm, True,
          torch.tensor([[False, True, False, False, False]] * 3)])
    case("mha_unbatched_no_bias_no_weights",
         {"type": "nn.MultiheadAttention", "embed_dim": 4, "num_heads": 1, "bias": False},
         nn.MultiheadAttention(4, 1, bias=False),
         [values([3, 4], 39), values([5, 4], 40), values([5, 4], 41), None, False])
    case("mha_3d_mask", {"type": "nn.MultiheadAttention", "embed_dim": 4, "num_heads": 2},
         nn.MultiheadAttention(4, 2), [q, k, v, None, True, values([4, 3, 5], 42) / 4])

    # Transformers (training mode with dropout 0: PyTorch's eval fast paths
    # are the same arithmetic, but its nested-tensor path zeroes padding).
    def settings(**kw):
        base = {"d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0}
        base.update(kw)
        return base
    causal = nn.Transformer.generate_square_subsequent_mask(5)
    src, pad = values([5, 2, 8], 50), torch.tensor([[False] * 4 + [True], [False] * 5])
    case("encoder_layer", dict(type="nn.TransformerEncoderLayer", **settings()),
         nn.TransformerEncoderLayer(**settings()), [src, causal, pad], training=True)
    case("encoder_layer_norm_first_gelu_batch_first",
         dict(type="nn.TransformerEncoderLayer", **settings(norm_first=True, activation="gelu", batch_first=True)),
         nn.TransformerEncoderLayer(**settings(norm_first=True, activation="gelu", batch_first=True)),
         [values([2, 5, 8], 51)], training=True)
    tgt, memory = values([4, 2, 8], 52), values([5, 2, 8], 53)
    case("decoder_layer", dict(type="nn.TransformerDecoderLayer", **settings()),
         nn.TransformerDecoderLayer(**settings()),
         [tgt, memory, nn.Transformer.generate_square_subsequent_mask(4), None, None, pad], training=True)
    case("decoder_layer_norm_first", dict(type="nn.TransformerDecoderLayer", **settings(norm_first=True)),
         nn.TransformerDecoderLayer(**settings(norm_first=True)), [tgt, memory], training=True)
    case("encoder_two_layers_norm", dict(type="nn.TransformerEncoder", num_layers=2, norm=True, **settings()),
         nn.TransformerEncoder(nn.TransformerEncoderLayer(**settings()), 2, norm=nn.LayerNorm(8)),
         [src, None, pad], training=True)
    case("decoder_two_layers", dict(type="nn.TransformerDecoder", num_layers=2, **settings()),
         nn.TransformerDecoder(nn.TransformerDecoderLayer(**settings()), 2), [tgt, memory], training=True)
    case("transformer", dict(type="nn.Transformer", num_encoder_layers=2, num_decoder_layers=1, **settings()),
         nn.Transformer(num_encoder_layers=2, num_decoder_layers=1, **settings()),
         [src, tgt, None, nn.Transformer.generate_square_subsequent_mask(4)], training=True)

    # Padding (CircularPad and ZeroPad1d/3d are PyTorch 2's: F.pad is their definition).
    class Pad(nn.Module):
        def __init__(self, padding, mode):
            super().__init__()
            self.padding, self.mode = padding, mode
        def forward(self, x):
            return torch.nn.functional.pad(x, self.padding, mode=self.mode)
    x1, x2, x3 = values([2, 3, 5], 70), values([2, 3, 4, 5], 71), values([1, 2, 3, 4, 5], 72)
    case("reflection_pad1d", {"type": "nn.ReflectionPad1d", "padding": [2, 1]}, nn.ReflectionPad1d((2, 1)), [x1])
    case("reflection_pad2d", {"type": "nn.ReflectionPad2d", "padding": 2}, nn.ReflectionPad2d(2), [x2])
    case("reflection_pad3d_unbatched", {"type": "nn.ReflectionPad3d", "padding": [1, 0, 2, 1, 1, 1]},
         nn.ReflectionPad3d((1, 0, 2, 1, 1, 1)), [x3[0]])
    case("replication_pad1d", {"type": "nn.ReplicationPad1d", "padding": 3}, nn.ReplicationPad1d(3), [x1])
    case("replication_pad2d", {"type": "nn.ReplicationPad2d", "padding": [1, 2, 0, 3]},
         nn.ReplicationPad2d((1, 2, 0, 3)), [x2])
    case("replication_pad3d", {"type": "nn.ReplicationPad3d", "padding": 1}, nn.ReplicationPad3d(1), [x3])
    case("circular_pad1d", {"type": "nn.CircularPad1d", "padding": [2, 1]}, Pad((2, 1), "circular"), [x1],
         repr_text="CircularPad1d((2, 1))")
    case("circular_pad2d", {"type": "nn.CircularPad2d", "padding": 1}, Pad((1, 1, 1, 1), "circular"), [x2],
         repr_text="CircularPad2d((1, 1, 1, 1))")
    case("circular_pad3d", {"type": "nn.CircularPad3d", "padding": [1, 0, 0, 2, 1, 1]},
         Pad((1, 0, 0, 2, 1, 1), "circular"), [x3], repr_text="CircularPad3d((1, 0, 0, 2, 1, 1))")
    case("zero_pad1d", {"type": "nn.ZeroPad1d", "padding": 2}, Pad((2, 2), "constant"), [x1],
         repr_text="ZeroPad1d((2, 2))")
    case("zero_pad2d", {"type": "nn.ZeroPad2d", "padding": [1, 0, 2, -1]}, nn.ZeroPad2d((1, 0, 2, -1)), [x2])
    case("zero_pad3d", {"type": "nn.ZeroPad3d", "padding": 1}, Pad((1,) * 6, "constant"), [x3],
         repr_text="ZeroPad3d((1, 1, 1, 1, 1, 1))")
    case("constant_pad1d", {"type": "nn.ConstantPad1d", "padding": [1, 2], "value": 3.5}, nn.ConstantPad1d((1, 2), 3.5),
         [x1])
    case("constant_pad2d", {"type": "nn.ConstantPad2d", "padding": 1, "value": -1.0}, nn.ConstantPad2d(1, -1.0), [x2])
    case("constant_pad3d", {"type": "nn.ConstantPad3d", "padding": [0, 1, 1, 0, 2, 0], "value": 0.5},
         nn.ConstantPad3d((0, 1, 1, 0, 2, 0), 0.5), [x3])

    # Rearrangements, distances, Bilinear.
    case("pixel_shuffle", {"type": "nn.PixelShuffle", "upscale_factor": 2}, nn.PixelShuffle(2), [values([2, 8, 2, 3], 73)])
    case("pixel_unshuffle", {"type": "nn.PixelUnshuffle", "downscale_factor": 2}, nn.PixelUnshuffle(2),
         [values([2, 3, 4, 6], 74)])
    class Shuffle(nn.Module):  # 1.13's ChannelShuffle has no backward; the same rearrangement has
        def forward(self, x):
            out = x.reshape(2, 3, 2, 2, 2).transpose(1, 2).reshape(x.shape)
            assert torch.equal(out, nn.ChannelShuffle(3)(x.detach()))
            return out
    case("channel_shuffle", {"type": "nn.ChannelShuffle", "groups": 3}, Shuffle(), [values([2, 6, 2, 2], 75)],
         repr_text="ChannelShuffle(groups=3)")
    case("cosine_similarity", {"type": "nn.CosineSimilarity", "dim": 2}, nn.CosineSimilarity(dim=2),
         [values([2, 3, 4], 76), values([2, 3, 4], 77)])
    case("cosine_similarity_broadcast", {"type": "nn.CosineSimilarity"}, nn.CosineSimilarity(),
         [values([3, 4], 78), values([1, 4], 79)])
    case("pairwise_distance", {"type": "nn.PairwiseDistance"}, nn.PairwiseDistance(),
         [values([3, 4], 80), values([3, 4], 81)])
    case("pairwise_distance_p1_keepdim", {"type": "nn.PairwiseDistance", "p": 1.0, "keepdim": True},
         nn.PairwiseDistance(p=1.0, keepdim=True), [values([3, 4], 80), values([3, 4], 81)])
    case("pairwise_distance_p3", {"type": "nn.PairwiseDistance", "p": 3.0, "eps": 0.0},
         nn.PairwiseDistance(p=3.0, eps=0.0), [values([3, 4], 80), values([3, 4], 81)])
    case("bilinear", {"type": "nn.Bilinear", "in1_features": 3, "in2_features": 4, "out_features": 5},
         nn.Bilinear(3, 4, 5), [values([2, 3], 82), values([2, 4], 83)])
    case("bilinear_no_bias_leading", {"type": "nn.Bilinear", "in1_features": 3, "in2_features": 2, "out_features": 2,
                                      "bias": False},
         nn.Bilinear(3, 2, 2, bias=False), [values([2, 2, 3], 84), values([2, 2, 2], 85)])

    # Normalization.
    def randomize(m):  # affine parameters and running statistics away from 1 and 0
        with torch.no_grad():
            for k, t in m.state_dict().items():
                if t.dtype.is_floating_point:
                    t.copy_(values(list(t.shape), len(k)).abs() / 2 + 0.25)
        return m
    case("batch_norm3d", {"type": "nn.BatchNorm3d", "num_features": 2}, randomize(nn.BatchNorm3d(2)),
         [values([2, 2, 2, 3, 2], 86)], training=True)
    case("batch_norm1d_cumulative_average", {"type": "nn.BatchNorm1d", "num_features": 3, "momentum": None},
         randomize(nn.BatchNorm1d(3, momentum=None)), [values([4, 3, 2], 89)], training=True)
    case("group_norm", {"type": "nn.GroupNorm", "num_groups": 2, "num_channels": 4}, randomize(nn.GroupNorm(2, 4)),
         [values([2, 4, 3], 87)])
    case("group_norm_no_affine", {"type": "nn.GroupNorm", "num_groups": 3, "num_channels": 3, "affine": False},
         nn.GroupNorm(3, 3, affine=False), [values([2, 3, 2, 2], 88)])
    case("instance_norm1d", {"type": "nn.InstanceNorm1d", "num_features": 3}, nn.InstanceNorm1d(3),
         [values([2, 3, 5], 89)])
    case("instance_norm2d_affine_tracking",
         {"type": "nn.InstanceNorm2d", "num_features": 3, "affine": True, "track_running_stats": True},
         randomize(nn.InstanceNorm2d(3, affine=True, track_running_stats=True)), [values([2, 3, 2, 3], 90)],
         training=True)
    case("instance_norm2d_eval_running",
         {"type": "nn.InstanceNorm2d", "num_features": 3, "track_running_stats": True},
         randomize(nn.InstanceNorm2d(3, track_running_stats=True)), [values([2, 3, 2, 3], 91)])
    case("instance_norm3d_unbatched", {"type": "nn.InstanceNorm3d", "num_features": 2}, nn.InstanceNorm3d(2),
         [values([2, 2, 3, 2], 92)])
    case("local_response_norm", {"type": "nn.LocalResponseNorm", "size": 3, "alpha": 0.1, "k": 2.0},
         nn.LocalResponseNorm(3, alpha=0.1, k=2.0), [values([2, 5, 3], 93)])
    case("local_response_norm_4d_even", {"type": "nn.LocalResponseNorm", "size": 2, "beta": 0.5},
         nn.LocalResponseNorm(2, beta=0.5), [values([2, 4, 2, 3], 94)])
    # CrossMapLRN2d's hand-written backward fails PyTorch's own gradcheck;
    # nnplug differentiates the forward (gradcheck_test checks it).
    case("cross_map_lrn2d", {"type": "nn.CrossMapLRN2d", "size": 3, "alpha": 0.2, "k": 1.5},
         nn.CrossMapLRN2d(3, alpha=0.2, k=1.5), [values([2, 6, 2, 2], 95)], gradients=False)

    # Losses of more than (input, target), and the margin losses.
    sign = torch.sign(values([4], 100) + 0.01)
    case("cosine_embedding_loss", {"type": "nn.CosineEmbeddingLoss", "margin": 0.2},
         nn.CosineEmbeddingLoss(margin=0.2), [values([4, 3], 101), values([4, 3], 102), sign])
    case("cosine_embedding_loss_none_1d", {"type": "nn.CosineEmbeddingLoss", "reduction": "none"},
         nn.CosineEmbeddingLoss(reduction="none"), [values([3], 103), values([3], 104), torch.tensor(-1.0)])
    classes = torch.tensor([2, 0, 3])
    case("multi_margin_loss", {"type": "nn.MultiMarginLoss"}, nn.MultiMarginLoss(), [values([3, 4], 105), classes])
    case("multi_margin_loss_p2_sum", {"type": "nn.MultiMarginLoss", "p": 2, "margin": 0.5, "reduction": "sum"},
         nn.MultiMarginLoss(p=2, margin=0.5, reduction="sum"), [values([3, 4], 105), classes])
    # The adaptive softmax: targets in the shortlist and in both clusters.
    case("adaptive_log_softmax_with_loss",
         {"type": "nn.AdaptiveLogSoftmaxWithLoss", "in_features": 8, "n_classes": 10, "cutoffs": [3, 6],
          "div_value": 2.0},
         nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0),
         [values([5, 8], 116), torch.tensor([0, 4, 9, 2, 7])])
    case("adaptive_log_softmax_with_loss_head_bias_unbatched",
         {"type": "nn.AdaptiveLogSoftmaxWithLoss", "in_features": 6, "n_classes": 5, "cutoffs": [2],
          "head_bias": True},
         nn.AdaptiveLogSoftmaxWithLoss(6, 5, [2], head_bias=True), [values([6], 117), torch.tensor(4)])
    # Class weights: PyTorch's _WeightedLoss buffer "weight" (and BCEWithLogits' pos_weight).
    w4 = [0.5, 2.0, 1.0, 1.5]
    tw4 = torch.tensor(w4)
    case("multi_margin_loss_weight", {"type": "nn.MultiMarginLoss", "weight": w4},
         nn.MultiMarginLoss(weight=tw4), [values([3, 4], 105), classes])
    case("cross_entropy_loss_weight_ignore_smoothing",
         {"type": "nn.CrossEntropyLoss", "weight": w4, "ignore_index": 1, "label_smoothing": 0.1},
         nn.CrossEntropyLoss(weight=tw4, ignore_index=1, label_smoothing=0.1),
         [values([5, 4, 2], 106), torch.tensor([[0, 1], [3, 2], [1, 1], [2, 0], [3, 3]])])
    case("cross_entropy_loss_weight_probabilities", {"type": "nn.CrossEntropyLoss", "weight": w4, "reduction": "sum"},
         nn.CrossEntropyLoss(weight=tw4, reduction="sum"), [values([3, 4], 107), torch.softmax(values([3, 4], 108), 1)])
    case("nll_loss_weight", {"type": "nn.NLLLoss", "weight": w4},
         nn.NLLLoss(weight=tw4), [torch.log_softmax(values([3, 4], 109), 1), classes])
    case("bce_loss_weight", {"type": "nn.BCELoss", "weight": w4},
         nn.BCELoss(weight=tw4), [torch.sigmoid(values([3, 4], 110)), torch.sigmoid(values([3, 4], 111))])
    case("bce_with_logits_loss_weight_pos_weight",
         {"type": "nn.BCEWithLogitsLoss", "weight": w4, "pos_weight": [3, 0.25, 1, 2], "reduction": "sum"},
         nn.BCEWithLogitsLoss(weight=tw4, pos_weight=torch.tensor([3, 0.25, 1, 2]), reduction="sum"),
         [values([3, 4], 112), torch.sigmoid(values([3, 4], 113))])
    case("multilabel_soft_margin_loss_weight", {"type": "nn.MultiLabelSoftMarginLoss", "weight": w4},
         nn.MultiLabelSoftMarginLoss(weight=tw4), [values([3, 4], 114), (values([3, 4], 115) > 0).double()])
    labels = torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 2, 0, 1]])
    case("multilabel_margin_loss", {"type": "nn.MultiLabelMarginLoss"}, nn.MultiLabelMarginLoss(),
         [values([3, 4], 106), labels])
    case("multilabel_margin_loss_none_1d", {"type": "nn.MultiLabelMarginLoss", "reduction": "none"},
         nn.MultiLabelMarginLoss(reduction="none"), [values([4], 107), torch.tensor([2, -1, 0, 1])])
    a, p_, n_ = values([3, 4], 108), values([3, 4], 109), values([3, 4], 110)
    case("triplet_margin_loss", {"type": "nn.TripletMarginLoss"}, nn.TripletMarginLoss(), [a, p_, n_])
    case("triplet_margin_loss_swap_p1", {"type": "nn.TripletMarginLoss", "p": 1.0, "swap": True, "margin": 2.0},
         nn.TripletMarginLoss(p=1.0, swap=True, margin=2.0), [a, p_, n_])
    case("triplet_margin_with_distance_loss", {"type": "nn.TripletMarginWithDistanceLoss", "swap": True},
         nn.TripletMarginWithDistanceLoss(swap=True), [a, p_, n_])
    case("gaussian_nll_loss", {"type": "nn.GaussianNLLLoss"}, nn.GaussianNLLLoss(),
         [values([3, 4], 111), values([3, 4], 112), values([3, 4], 113).abs() + 0.1])
    case("gaussian_nll_loss_full_shared_var", {"type": "nn.GaussianNLLLoss", "full": True, "reduction": "sum"},
         nn.GaussianNLLLoss(full=True, reduction="sum"),
         [values([3, 4], 111), values([3, 4], 112), values([3, 1], 114).abs()])
    # CTC: PyTorch's backward for log_probs assumes they come from a
    # log_softmax, so the gradients are compared through one
    # (functional_fixtures' ctc cases); here the values.
    lp = torch.log_softmax(values([6, 2, 4], 115), 2)
    case("ctc_loss", {"type": "nn.CTCLoss"}, nn.CTCLoss(),
         [lp, torch.tensor([[1, 2, 2], [3, 1, 0]]), torch.tensor([6, 5]), torch.tensor([3, 2])], gradients=False)
    case("ctc_loss_concatenated_blank_sum", {"type": "nn.CTCLoss", "blank": 3, "reduction": "sum"},
         nn.CTCLoss(blank=3, reduction="sum"),
         [lp, torch.tensor([1, 1, 0, 2]), torch.tensor([6, 6]), torch.tensor([2, 2])], gradients=False)
    case("ctc_loss_impossible_zero_infinity", {"type": "nn.CTCLoss", "reduction": "none", "zero_infinity": True},
         nn.CTCLoss(reduction="none", zero_infinity=True),
         [lp, torch.tensor([[1, 1, 1, 1], [2, 0, 0, 0]]), torch.tensor([4, 6]), torch.tensor([4, 1])], gradients=False)

    # Pooling in 1 and 3 dimensions, adaptive and power-average pooling.
    x1, x3 = values([2, 3, 7], 120), values([2, 2, 4, 5, 6], 121)
    case("max_pool1d", {"type": "nn.MaxPool1d", "kernel_size": 3, "stride": 2, "padding": 1},
         nn.MaxPool1d(3, stride=2, padding=1), [x1])
    case("max_pool1d_unbatched_dilation", {"type": "nn.MaxPool1d", "kernel_size": 2, "dilation": 2},
         nn.MaxPool1d(2, dilation=2), [x1[0]])
    case("max_pool3d", {"type": "nn.MaxPool3d", "kernel_size": 2}, nn.MaxPool3d(2), [x3])
    case("max_pool3d_mixed", {"type": "nn.MaxPool3d", "kernel_size": [2, 3, 2], "stride": [1, 2, 2],
                              "padding": [1, 1, 0], "dilation": [1, 1, 2]},
         nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), dilation=(1, 1, 2)), [x3])
    case("avg_pool1d", {"type": "nn.AvgPool1d", "kernel_size": 3, "stride": 2, "padding": 1},
         nn.AvgPool1d(3, stride=2, padding=1), [x1])
    case("avg_pool3d", {"type": "nn.AvgPool3d", "kernel_size": [2, 2, 3], "padding": [1, 0, 1]},
         nn.AvgPool3d((2, 2, 3), padding=(1, 0, 1)), [x3])
    case("avg_pool3d_unbatched", {"type": "nn.AvgPool3d", "kernel_size": 2, "stride": 1},
         nn.AvgPool3d(2, stride=1), [x3[0]])
    case("adaptive_avg_pool1d", {"type": "nn.AdaptiveAvgPool1d", "output_size": 3}, nn.AdaptiveAvgPool1d(3), [x1])
    case("adaptive_avg_pool3d", {"type": "nn.AdaptiveAvgPool3d", "output_size": [3, 2, 4]},
         nn.AdaptiveAvgPool3d((3, 2, 4)), [x3])
    case("adaptive_max_pool1d", {"type": "nn.AdaptiveMaxPool1d", "output_size": 4}, nn.AdaptiveMaxPool1d(4), [x1])
    case("adaptive_max_pool2d", {"type": "nn.AdaptiveMaxPool2d", "output_size": [3, 2]}, nn.AdaptiveMaxPool2d((3, 2)),
         [values([2, 3, 5, 7], 122)])
    case("adaptive_max_pool3d_unbatched", {"type": "nn.AdaptiveMaxPool3d", "output_size": 2},
         nn.AdaptiveMaxPool3d(2), [x3[0]])
    case("lp_pool1d", {"type": "nn.LPPool1d", "norm_type": 2, "kernel_size": 3, "stride": 2},
         nn.LPPool1d(2, 3, stride=2), [x1])
    case("lp_pool2d", {"type": "nn.LPPool2d", "norm_type": 3, "kernel_size": [2, 3]},
         nn.LPPool2d(3, (2, 3)), [values([2, 3, 4, 6], 123).abs() + 0.1])
    # Fractional max pooling with the windows' samples given, as PyTorch's
    # _random_samples (a call argument in nnplug, a constructor one in PyTorch).
    class Fractional(nn.Module):
        def __init__(self, pool):
            super().__init__()
            self.pool = pool

        def forward(self, x, samples):
            p = self.pool
            return getattr(torch.nn.functional, "fractional_max_pool%dd" % samples.shape[-1])(
                x, p.kernel_size, p.output_size, p.output_ratio, p.return_indices, _random_samples=samples.detach())
    x2f = values([2, 3, 7, 9], 126)
    u2 = values([2, 3, 2], 127).abs() / 4 % 1
    case("fractional_max_pool2d_size_indices",
         {"type": "nn.FractionalMaxPool2d", "kernel_size": 2, "output_size": [4, 5], "return_indices": True},
         Fractional(nn.FractionalMaxPool2d(2, output_size=(4, 5), return_indices=True)), [x2f, u2],
         repr_text="FractionalMaxPool2d()")
    case("fractional_max_pool2d_ratio_unbatched",
         {"type": "nn.FractionalMaxPool2d", "kernel_size": [3, 2], "output_ratio": [0.5, 0.7]},
         Fractional(nn.FractionalMaxPool2d((3, 2), output_ratio=(0.5, 0.7))), [x2f[0], u2[:1]],
         repr_text="FractionalMaxPool2d()")
    case("fractional_max_pool3d_indices",
         {"type": "nn.FractionalMaxPool3d", "kernel_size": [2, 2, 3], "output_size": [2, 2, 3], "return_indices": True},
         Fractional(nn.FractionalMaxPool3d((2, 2, 3), output_size=(2, 2, 3), return_indices=True)),
         [x3, values([2, 2, 3], 128).abs() / 4 % 1], repr_text="FractionalMaxPool3d()")
    # ceil_mode (the last window may run past the padding), count_include_pad=False,
    # divisor_override and return_indices.
    x2p = values([2, 3, 7, 8], 124)
    case("max_pool2d_ceil_padded_indices",
         {"type": "nn.MaxPool2d", "kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
          "return_indices": True},
         nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True, return_indices=True), [x2p])
    case("max_pool2d_unbatched_ceil_dilation", {"type": "nn.MaxPool2d", "kernel_size": [2, 3], "stride": [2, 3],
                                                 "dilation": [1, 2], "ceil_mode": True},
         nn.MaxPool2d((2, 3), stride=(2, 3), dilation=(1, 2), ceil_mode=True), [x2p[0]])
    case("max_pool1d_ceil_indices", {"type": "nn.MaxPool1d", "kernel_size": 2, "stride": 2, "ceil_mode": True,
                                     "return_indices": True},
         nn.MaxPool1d(2, stride=2, ceil_mode=True, return_indices=True), [x1])
    case("max_pool3d_ceil_indices", {"type": "nn.MaxPool3d", "kernel_size": [2, 3, 2], "stride": 2, "padding": [1, 1, 0],
                                     "ceil_mode": True, "return_indices": True},
         nn.MaxPool3d((2, 3, 2), stride=2, padding=(1, 1, 0), ceil_mode=True, return_indices=True), [x3])
    case("avg_pool2d_ceil_exclude_pad",
         {"type": "nn.AvgPool2d", "kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
          "count_include_pad": False},
         nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), [x2p])
    case("avg_pool2d_ceil_include_pad", {"type": "nn.AvgPool2d", "kernel_size": [3, 2], "stride": [2, 3],
                                         "padding": 1, "ceil_mode": True},
         nn.AvgPool2d((3, 2), stride=(2, 3), padding=1, ceil_mode=True), [x2p])
    case("avg_pool2d_divisor_override", {"type": "nn.AvgPool2d", "kernel_size": 2, "padding": 1, "divisor_override": 3},
         nn.AvgPool2d(2, padding=1, divisor_override=3), [x2p])
    case("avg_pool1d_ceil_exclude_pad", {"type": "nn.AvgPool1d", "kernel_size": 4, "stride": 3, "padding": 2,
                                         "ceil_mode": True, "count_include_pad": False},
         nn.AvgPool1d(4, stride=3, padding=2, ceil_mode=True, count_include_pad=False), [x1])
    case("avg_pool3d_ceil_exclude_pad", {"type": "nn.AvgPool3d", "kernel_size": [2, 3, 4], "stride": [2, 2, 3],
                                         "padding": [1, 1, 2], "ceil_mode": True, "count_include_pad": False},
         nn.AvgPool3d((2, 3, 4), stride=(2, 2, 3), padding=(1, 1, 2), ceil_mode=True, count_include_pad=False), [x3])
    case("avg_pool3d_divisor_override", {"type": "nn.AvgPool3d", "kernel_size": 2, "ceil_mode": True,
                                         "divisor_override": 5},
         nn.AvgPool3d(2, ceil_mode=True, divisor_override=5), [x3])
    case("lp_pool2d_ceil", {"type": "nn.LPPool2d", "norm_type": 2, "kernel_size": 3, "stride": 2, "ceil_mode": True},
         nn.LPPool2d(2, 3, stride=2, ceil_mode=True), [values([2, 3, 7, 8], 125).abs() + 0.1])

    # Convolutions in 1 to 3 dimensions, transposed convolutions, fold and unfold.
    def conv(name, kind, args, kwargs, x):
        spec = {"type": "nn." + kind.__name__, "in_channels": args[0], "out_channels": args[1],
                "kernel_size": args[2]}
        spec.update(kwargs)
        torch_kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        case(name, spec, kind(*[tuple(a) if isinstance(a, list) else a for a in args], **torch_kwargs), [x])

    c1, c2, c3 = values([2, 4, 9], 130), values([2, 4, 6, 7], 131), values([2, 4, 4, 5, 6], 132)
    conv("conv1d", nn.Conv1d, [4, 6, 3], {"stride": 2, "padding": 1}, c1)
    conv("conv1d_same_reflect_groups", nn.Conv1d, [4, 6, 4], {"padding": "same", "padding_mode": "reflect",
                                                              "groups": 2, "dilation": 2}, c1)
    conv("conv1d_valid_unbatched_no_bias", nn.Conv1d, [4, 3, 2], {"padding": "valid", "bias": False}, c1[0])
    conv("conv2d_same_dilation", nn.Conv2d, [4, 3, [2, 3]], {"padding": "same", "dilation": [2, 1]}, c2)
    conv("conv2d_same_odd_total", nn.Conv2d, [4, 3, [2, 4]], {"padding": "same"}, c2)
    conv("conv2d_circular", nn.Conv2d, [4, 2, 3], {"padding": [1, 2], "padding_mode": "circular",
                                                   "stride": [2, 1]}, c2)
    conv("conv2d_replicate_groups", nn.Conv2d, [4, 4, 3], {"padding": 1, "padding_mode": "replicate",
                                                           "groups": 4}, c2)
    conv("conv3d", nn.Conv3d, [4, 3, 2], {}, c3)
    conv("conv3d_strided_padded_groups", nn.Conv3d, [4, 6, [2, 3, 2]], {"stride": [1, 2, 2], "padding": [1, 0, 1],
                                                                        "dilation": [1, 1, 2], "groups": 2}, c3)
    conv("conv3d_same_replicate_unbatched", nn.Conv3d, [4, 2, 3], {"padding": "same", "padding_mode": "replicate"},
         c3[0])
    conv("conv_transpose1d", nn.ConvTranspose1d, [4, 3, 3], {"stride": 2, "padding": 1, "output_padding": 1}, c1)
    conv("conv_transpose1d_groups_dilation_unbatched", nn.ConvTranspose1d, [4, 6, 2],
         {"groups": 2, "dilation": 3, "bias": False}, c1[0])
    conv("conv_transpose2d", nn.ConvTranspose2d, [4, 2, [3, 2]], {"stride": [2, 3], "padding": [1, 0],
                                                                   "output_padding": [0, 2]}, c2)
    conv("conv_transpose2d_groups", nn.ConvTranspose2d, [4, 4, 3], {"groups": 4, "padding": 2}, c2)
    conv("conv_transpose3d", nn.ConvTranspose3d, [4, 2, 2], {"stride": 2}, c3)
    conv("conv_transpose3d_mixed", nn.ConvTranspose3d, [4, 6, [3, 2, 2]],
         {"stride": [1, 2, 1], "padding": [1, 1, 0], "dilation": [1, 1, 2], "groups": 2, "output_padding": [0, 1, 1]},
         c3)
    # forward(input, output_size): the output padding it implies (sizes as a tensor in nnplug's call).
    sized = lambda a: [a[0], a[1].tolist()]
    case("conv_transpose2d_output_size", {"type": "nn.ConvTranspose2d", "in_channels": 4, "out_channels": 2,
                                          "kernel_size": 3, "stride": [2, 3], "padding": [1, 0]},
         nn.ConvTranspose2d(4, 2, 3, stride=(2, 3), padding=(1, 0)), [c2, torch.tensor([12, 21])], pack=sized)
    case("conv_transpose1d_output_size_unbatched_full", {"type": "nn.ConvTranspose1d", "in_channels": 4,
                                                         "out_channels": 3, "kernel_size": 3, "stride": 3},
         nn.ConvTranspose1d(4, 3, 3, stride=3), [c1[0], torch.tensor([3, 29])], pack=sized)
    case("unfold", {"type": "nn.Unfold", "kernel_size": [2, 3]}, nn.Unfold((2, 3)), [c2])
    case("unfold_strided_padded_dilated", {"type": "nn.Unfold", "kernel_size": 2, "dilation": [1, 2], "padding": 1,
                                           "stride": [2, 1]},
         nn.Unfold(2, dilation=(1, 2), padding=1, stride=(2, 1)), [c2])
    case("fold", {"type": "nn.Fold", "output_size": [4, 5], "kernel_size": 2}, nn.Fold((4, 5), 2),
         [values([2, 12, 12], 133)])
    case("fold_strided_padded", {"type": "nn.Fold", "output_size": [5, 6], "kernel_size": [2, 3], "padding": 1,
                                 "stride": 2, "dilation": [1, 2]},
         nn.Fold((5, 6), (2, 3), padding=1, stride=2, dilation=(1, 2)), [values([2, 18, 6], 134)])

    # Embedding options and EmbeddingBag.
    idx = torch.tensor([[1, 4, 2], [0, 4, 4]])
    case("embedding_padding_scale_grad", {"type": "nn.Embedding", "num_embeddings": 6, "embedding_dim": 3,
                                          "padding_idx": 4, "scale_grad_by_freq": True},
         nn.Embedding(6, 3, padding_idx=4, scale_grad_by_freq=True), [idx])
    case("embedding_max_norm", {"type": "nn.Embedding", "num_embeddings": 6, "embedding_dim": 3, "max_norm": 1.5,
                                "norm_type": 1.0}, nn.Embedding(6, 3, max_norm=1.5, norm_type=1.0), [idx])
    case("embedding_bag_mean_2d", {"type": "nn.EmbeddingBag", "num_embeddings": 6, "embedding_dim": 3},
         nn.EmbeddingBag(6, 3), [idx])
    flat_idx, offs = torch.tensor([1, 2, 4, 5, 4, 3, 3, 0]), torch.tensor([0, 2, 2, 5])
    case("embedding_bag_sum_offsets_weights", {"type": "nn.EmbeddingBag", "num_embeddings": 6, "embedding_dim": 3,
                                               "mode": "sum"},
         nn.EmbeddingBag(6, 3, mode="sum"), [flat_idx, offs, values([8], 135)])
    case("embedding_bag_max_padding", {"type": "nn.EmbeddingBag", "num_embeddings": 6, "embedding_dim": 3,
                                       "mode": "max", "padding_idx": 4},
         nn.EmbeddingBag(6, 3, mode="max", padding_idx=4), [flat_idx, offs])
    case("embedding_bag_mean_last_offset_padding", {"type": "nn.EmbeddingBag", "num_embeddings": 6,
                                                    "embedding_dim": 3, "include_last_offset": True,
                                                    "padding_idx": 3, "max_norm": 1.0},
         nn.EmbeddingBag(6, 3, include_last_offset=True, padding_idx=3, max_norm=1.0),
         [flat_idx, torch.tensor([0, 3, 3, 8])])

    # Max unpooling of max pooling's indices; upsampling in every mode.
    import torch.nn.functional as F
    p1, i1 = F.max_pool1d(values([2, 3, 8], 140), 2, return_indices=True)
    case("max_unpool1d", {"type": "nn.MaxUnpool1d", "kernel_size": 2}, nn.MaxUnpool1d(2), [p1, i1])
    p2, i2 = F.max_pool2d(values([2, 3, 7, 5], 141), 3, stride=2, padding=1, return_indices=True)
    case("max_unpool2d_strided_padded", {"type": "nn.MaxUnpool2d", "kernel_size": 3, "stride": 2, "padding": 1},
         nn.MaxUnpool2d(3, stride=2, padding=1), [p2, i2])
    p3, i3 = F.max_pool3d(values([3, 4, 4, 6], 142), (2, 2, 3), return_indices=True)
    case("max_unpool3d_unbatched", {"type": "nn.MaxUnpool3d", "kernel_size": [2, 2, 3]}, nn.MaxUnpool3d((2, 2, 3)),
         [p3, i3])
    u1, u2, u3 = values([2, 3, 5], 143), values([2, 2, 4, 5], 144), values([1, 2, 3, 4, 3], 145)
    case("upsample_nearest_scale", {"type": "nn.Upsample", "scale_factor": 2.0}, nn.Upsample(scale_factor=2.0), [u2])
    case("upsample_nearest_size_3d", {"type": "nn.Upsample", "size": [5, 7, 4]}, nn.Upsample(size=(5, 7, 4)), [u3])
    case("upsample_nearest_exact_fractional", {"type": "nn.Upsample", "scale_factor": 1.7, "mode": "nearest-exact"},
         nn.Upsample(scale_factor=1.7, mode="nearest-exact"), [u1])
    case("upsample_linear", {"type": "nn.Upsample", "scale_factor": 2.5, "mode": "linear"},
         nn.Upsample(scale_factor=2.5, mode="linear"), [u1])
    case("upsample_linear_align_corners_down", {"type": "nn.Upsample", "size": 3, "mode": "linear",
                                                "align_corners": True},
         nn.Upsample(size=3, mode="linear", align_corners=True), [u1])
    case("upsample_bilinear", {"type": "nn.Upsample", "size": [7, 9], "mode": "bilinear"},
         nn.Upsample(size=(7, 9), mode="bilinear"), [u2])
    case("upsample_bilinear_recompute", {"type": "nn.Upsample", "scale_factor": 1.6, "mode": "bilinear",
                                         "recompute_scale_factor": True},
         nn.Upsample(scale_factor=1.6, mode="bilinear", recompute_scale_factor=True), [u2])
    case("upsample_bicubic", {"type": "nn.Upsample", "scale_factor": 2.0, "mode": "bicubic"},
         nn.Upsample(scale_factor=2.0, mode="bicubic"), [u2])
    case("upsample_bicubic_align_corners", {"type": "nn.Upsample", "size": [6, 3], "mode": "bicubic",
                                            "align_corners": True},
         nn.Upsample(size=(6, 3), mode="bicubic", align_corners=True), [u2])
    case("upsample_trilinear", {"type": "nn.Upsample", "scale_factor": 1.5, "mode": "trilinear"},
         nn.Upsample(scale_factor=1.5, mode="trilinear"), [u3])
    case("upsampling_nearest2d", {"type": "nn.UpsamplingNearest2d", "scale_factor": 3.0},
         nn.UpsamplingNearest2d(scale_factor=3.0), [u2])
    case("upsampling_bilinear2d", {"type": "nn.UpsamplingBilinear2d", "size": [6, 8]},
         nn.UpsamplingBilinear2d(size=(6, 8)), [u2])

    # The first layers (checked elsewhere against F's functions) as layers too:
    # state dict, repr, results and gradients. Random layers run in eval mode.
    a2, t2 = values([3, 4], 140), values([3, 4], 141)
    a4 = values([2, 3, 4, 5], 142)
    simple = [
        ("linear", {"type": "nn.Linear", "in_features": 4, "out_features": 3}, nn.Linear(4, 3), [a2]),
        ("linear_no_bias", {"type": "nn.Linear", "in_features": 4, "out_features": 2, "bias": False},
         nn.Linear(4, 2, bias=False), [a2]),
        ("non_dynamically_quantizable_linear",
         {"type": "nn.NonDynamicallyQuantizableLinear", "in_features": 4, "out_features": 2},
         nn.modules.linear.NonDynamicallyQuantizableLinear(4, 2), [a2]),
        ("identity", {"type": "nn.Identity"}, nn.Identity(), [a2]),
        ("flatten", {"type": "nn.Flatten"}, nn.Flatten(), [a4]),
        ("flatten_dims", {"type": "nn.Flatten", "start_dim": 0, "end_dim": 2}, nn.Flatten(0, 2), [a4]),
        ("unflatten", {"type": "nn.Unflatten", "dim": 1, "unflattened_size": [2, 2]}, nn.Unflatten(1, (2, 2)), [a2]),
        ("layer_norm", {"type": "nn.LayerNorm", "normalized_shape": [4, 5]}, randomize(nn.LayerNorm((4, 5))), [a4]),
        ("batch_norm2d", {"type": "nn.BatchNorm2d", "num_features": 3, "momentum": 0.3},
         randomize(nn.BatchNorm2d(3, momentum=0.3)), [a4], True),
        ("batch_norm2d_eval", {"type": "nn.BatchNorm2d", "num_features": 3}, randomize(nn.BatchNorm2d(3)), [a4]),
        ("adaptive_avg_pool2d", {"type": "nn.AdaptiveAvgPool2d", "output_size": [3, 2]},
         nn.AdaptiveAvgPool2d((3, 2)), [a4]),
        ("relu", {"type": "nn.ReLU"}, nn.ReLU(), [a2]),
        ("relu6", {"type": "nn.ReLU6"}, nn.ReLU6(), [a2 * 4]),
        ("leaky_relu", {"type": "nn.LeakyReLU", "negative_slope": 0.2}, nn.LeakyReLU(0.2), [a2]),
        ("elu", {"type": "nn.ELU", "alpha": 0.5}, nn.ELU(0.5), [a2]),
        ("selu", {"type": "nn.SELU"}, nn.SELU(), [a2]),
        ("celu", {"type": "nn.CELU", "alpha": 2.0}, nn.CELU(2.0), [a2]),
        ("gelu", {"type": "nn.GELU"}, nn.GELU(), [a2]),
        ("gelu_tanh", {"type": "nn.GELU", "approximate": "tanh"}, nn.GELU(approximate="tanh"), [a2]),
        ("silu", {"type": "nn.SiLU"}, nn.SiLU(), [a2]),
        ("mish", {"type": "nn.Mish"}, nn.Mish(), [a2]),
        ("sigmoid", {"type": "nn.Sigmoid"}, nn.Sigmoid(), [a2]),
        ("tanh", {"type": "nn.Tanh"}, nn.Tanh(), [a2]),
        ("glu", {"type": "nn.GLU", "dim": 1}, nn.GLU(1), [a2]),
        ("hardtanh", {"type": "nn.Hardtanh", "min_val": -0.5, "max_val": 0.7}, nn.Hardtanh(-0.5, 0.7), [a2]),
        ("hardswish", {"type": "nn.Hardswish"}, nn.Hardswish(), [a2 * 4]),
        ("hardshrink", {"type": "nn.Hardshrink", "lambd": 0.3}, nn.Hardshrink(0.3), [a2]),
        ("softshrink", {"type": "nn.Softshrink", "lambd": 0.3}, nn.Softshrink(0.3), [a2]),
        ("tanhshrink", {"type": "nn.Tanhshrink"}, nn.Tanhshrink(), [a2]),
        ("softplus", {"type": "nn.Softplus", "beta": 2, "threshold": 1}, nn.Softplus(2, 1), [a2]),
        ("softsign", {"type": "nn.Softsign"}, nn.Softsign(), [a2]),
        ("log_sigmoid", {"type": "nn.LogSigmoid"}, nn.LogSigmoid(), [a2]),
        ("threshold", {"type": "nn.Threshold", "threshold": 0.1, "value": -2}, nn.Threshold(0.1, -2), [a2]),
        ("prelu", {"type": "nn.PReLU", "num_parameters": 3, "init": 0.1}, nn.PReLU(3, 0.1), [a4]),
        ("rrelu_eval", {"type": "nn.RReLU", "lower": 0.1, "upper": 0.3}, nn.RReLU(0.1, 0.3), [a2]),
        ("softmax", {"type": "nn.Softmax", "dim": 1}, nn.Softmax(1), [a2]),
        ("log_softmax", {"type": "nn.LogSoftmax", "dim": 0}, nn.LogSoftmax(0), [a2]),
        ("softmin", {"type": "nn.Softmin", "dim": 1}, nn.Softmin(1), [a2]),
        ("softmax2d", {"type": "nn.Softmax2d"}, nn.Softmax2d(), [a4]),
        ("dropout_eval", {"type": "nn.Dropout", "p": 0.3}, nn.Dropout(0.3), [a2]),
        ("alpha_dropout_eval", {"type": "nn.AlphaDropout", "p": 0.2}, nn.AlphaDropout(0.2), [a2]),
        ("feature_alpha_dropout_eval", {"type": "nn.FeatureAlphaDropout"}, nn.FeatureAlphaDropout(), [a4]),
        ("dropout2d_eval", {"type": "nn.Dropout2d", "p": 0.1}, nn.Dropout2d(0.1), [a4]),
        ("dropout3d_eval", {"type": "nn.Dropout3d"}, nn.Dropout3d(), [values([2, 3, 2, 2, 2], 143)]),
        ("mse_loss", {"type": "nn.MSELoss"}, nn.MSELoss(), [a2, t2]),
        ("l1_loss_sum", {"type": "nn.L1Loss", "reduction": "sum"}, nn.L1Loss(reduction="sum"), [a2, t2]),
        ("smooth_l1_loss", {"type": "nn.SmoothL1Loss", "beta": 0.5}, nn.SmoothL1Loss(beta=0.5), [a2, t2]),
        ("huber_loss_none", {"type": "nn.HuberLoss", "delta": 0.4, "reduction": "none"},
         nn.HuberLoss(reduction="none", delta=0.4), [a2, t2]),
        ("soft_margin_loss", {"type": "nn.SoftMarginLoss"}, nn.SoftMarginLoss(), [a2, torch.sign(t2)]),
        ("kl_div_loss_batchmean_log_target", {"type": "nn.KLDivLoss", "reduction": "batchmean", "log_target": True},
         nn.KLDivLoss(reduction="batchmean", log_target=True),
         [torch.log_softmax(a2, 1), torch.log_softmax(t2, 1)]),
        ("hinge_embedding_loss", {"type": "nn.HingeEmbeddingLoss", "margin": 0.5}, nn.HingeEmbeddingLoss(0.5),
         [a2, torch.sign(t2)]),
        ("poisson_nll_loss_full", {"type": "nn.PoissonNLLLoss", "log_input": False, "full": True},
         nn.PoissonNLLLoss(log_input=False, full=True), [a2.abs() + 0.1, t2.abs() * 3]),
        ("margin_ranking_loss", {"type": "nn.MarginRankingLoss", "margin": 0.1}, nn.MarginRankingLoss(0.1),
         [values([5], 144), values([5], 145), torch.sign(values([5], 146) + 0.01)]),
    ]
    targets_frozen = {"soft_margin_loss": (1,), "hinge_embedding_loss": (1,), "margin_ranking_loss": (2,)}
    for entry in simple:
        name, spec, module, args = entry[:4]
        case(name, spec, module, args, training=len(entry) > 4 and entry[4], frozen=targets_frozen.get(name, ()))
    # PyTorch's hardsigmoid backward multiplies by 1.0f / 6.0f, a float even
    # in f64 (3e-8 off): the values are compared, the derivative by gradcheck.
    case("hardsigmoid", {"type": "nn.Hardsigmoid"}, nn.Hardsigmoid(), [a2 * 4], gradients=False)
    # Dropout1d is later than 1.13: a stand-in with its repr and eval behaviour.
    case("dropout1d_eval", {"type": "nn.Dropout1d", "p": 0.4}, nn.Identity(), [values([2, 3, 5], 147)],
         repr_text="Dropout1d(p=0.4, inplace=False)")


if __name__ == "__main__":
    main()
