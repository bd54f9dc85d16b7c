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


def case(name, spec, module, args, training=False, pack=as_called):
    """spec: the nnplug model spec of the same layer; args: the arguments of
    nnplug's call (tensors, None, bool, int, float, str); pack: PyTorch's
    call from them, where it nests."""
    torch.manual_seed(len(name))
    module.train(training)
    tensors, arg_meta = {}, []
    args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]  # fresh leaves per case
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            if a.dtype.is_floating_point:
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
        if isinstance(a, torch.Tensor) and a.grad is not None:
            tensors["grad.in.%d" % i] = a.grad
    for k, p in module.named_parameters():
        if p.grad is not None:
            tensors["grad.param." + k] = p.grad
    meta = {"spec": json.dumps(spec), "args": json.dumps(arg_meta), "training": json.dumps(training),
            "state_keys": json.dumps(list(state.keys())), "outputs": str(len(outs))}
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


if __name__ == "__main__":
    main()
