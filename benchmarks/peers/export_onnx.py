#!/usr/bin/python3
"""Exports a ModernBERT sequence classifier directory (config.json +
model.safetensors, as `semroute make-model` writes it) to ONNX.

The module follows Hugging Face's ModernBertForSequenceClassification with
eager attention: every layer computes full S x S scores, and local layers
mask those outside the window (|q - k| <= local_attention / 2) with an
additive mask. That is what an ONNX export of the HF model runs.

    export_onnx.py MODEL_DIR OUT.onnx [--opset 17] [--check-length 64]
"""
import argparse
import json
import struct
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def read_safetensors(path):
    """name -> float32 tensor. Parsed directly: no safetensors package on Debian."""
    data = Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] == "BF16":
            begin, end = info["data_offsets"]
            raw = np.frombuffer(data, dtype=np.uint16, count=(end - begin) // 2, offset=base + begin)
            array = (raw.astype(np.uint32) << 16).view(np.float32)
        else:
            dtype = np.dtype(DTYPES[info["dtype"]])
            begin, end = info["data_offsets"]
            array = np.frombuffer(data, dtype=dtype, count=(end - begin) // dtype.itemsize, offset=base + begin)
        out[name] = torch.from_numpy(array.astype(np.float32).reshape(info["shape"]).copy())
    return out


def activation(name):
    if name == "gelu":
        return lambda x: F.gelu(x)
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return lambda x: F.gelu(x, approximate="tanh")
    if name == "relu":
        return F.relu
    if name in ("silu", "swish"):
        return F.silu
    raise SystemExit(f"unsupported activation {name!r}")


def rotate_half(x, half):
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class ModernBertClassifier(torch.nn.Module):
    def __init__(self, config, weights, rope_rows=8192):
        super().__init__()
        c = config
        self.hidden = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.head_dim = self.hidden // self.heads
        self.inter = c["intermediate_size"]
        self.layers = c["num_hidden_layers"]
        self.eps = c.get("norm_eps", 1e-5)
        self.window = c.get("local_attention", 128) // 2
        self.act = activation(c.get("hidden_activation", "gelu"))
        self.head_act = activation(c.get("classifier_activation", "gelu"))
        self.pooling = c.get("classifier_pooling", "cls")
        every = c.get("global_attn_every_n_layers", 3)
        if "layer_types" in c and c["layer_types"]:
            self.global_layer = [t == "full_attention" for t in c["layer_types"]]
        else:
            self.global_layer = [i % every == 0 for i in range(self.layers)]
        for key in ("rope_scaling", "rope_parameters"):
            if c.get(key):
                raise SystemExit(f"{key} is not supported by this exporter (default RoPE only)")

        # HF's checkpoints name the encoder's weights "model.*"; bare names also load.
        def get(name, required=True):
            for key in ("model." + name, name):
                if key in weights:
                    return torch.nn.Parameter(weights[key], requires_grad=False)
            if required:
                raise SystemExit(f"missing weight {name}")
            return None

        # A norm without bias gets an explicit zero one: ONNX Runtime 1.30's
        # fusions crash on a LayerNormalization whose optional bias is absent.
        def norm(name):
            weight = get(name + ".weight")
            bias = get(name + ".bias", required=False)
            if bias is None:
                bias = torch.nn.Parameter(torch.zeros_like(weight), requires_grad=False)
            return (weight, bias)

        self.tok = get("embeddings.tok_embeddings.weight")
        self.params = torch.nn.ParameterDict()

        def keep(name, p):
            if p is not None:
                self.params[name.replace(".", "_")] = p
            return p

        self.emb_norm = tuple(keep(f"emb_norm{i}", p) for i, p in enumerate(norm("embeddings.norm")))
        self.blocks = []
        for i in range(self.layers):
            p = f"layers.{i}."
            block = {
                "attn_norm": tuple(keep(f"{p}an{j}", t) for j, t in enumerate(norm(p + "attn_norm"))) if i else None,
                "wqkv": (keep(p + "wqkv", get(p + "attn.Wqkv.weight")), keep(p + "wqkv_b", get(p + "attn.Wqkv.bias", False))),
                "wo": (keep(p + "wo", get(p + "attn.Wo.weight")), keep(p + "wo_b", get(p + "attn.Wo.bias", False))),
                "mlp_norm": tuple(keep(f"{p}mn{j}", t) for j, t in enumerate(norm(p + "mlp_norm"))),
                "wi": (keep(p + "wi", get(p + "mlp.Wi.weight")), keep(p + "wi_b", get(p + "mlp.Wi.bias", False))),
                "mlp_wo": (keep(p + "mwo", get(p + "mlp.Wo.weight")), keep(p + "mwo_b", get(p + "mlp.Wo.bias", False))),
            }
            self.blocks.append(block)
        self.final_norm = tuple(keep(f"final_norm{i}", p) for i, p in enumerate(norm("final_norm")))
        self.head_dense = (keep("head_dense", get("head.dense.weight")), keep("head_dense_b", get("head.dense.bias", False)))
        self.head_norm = tuple(keep(f"head_norm{i}", p) for i, p in enumerate(norm("head.norm")))
        self.classifier = (keep("cls_w", get("classifier.weight")), keep("cls_b", get("classifier.bias", False)))

        # cos/sin tables, sliced to the input length in the graph.
        rows = min(rope_rows, c.get("max_position_embeddings", 8192))
        for kind, theta in (("global", c.get("global_rope_theta", 160000.0)),
                            ("local", c.get("local_rope_theta", 10000.0) or c.get("global_rope_theta", 160000.0))):
            inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.int64).float() / self.head_dim))
            freqs = torch.outer(torch.arange(rows, dtype=torch.float32), inv_freq)
            angles = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer(f"cos_{kind}", angles.cos(), persistent=False)
            self.register_buffer(f"sin_{kind}", angles.sin(), persistent=False)

    def layer_norm(self, x, wb):
        return F.layer_norm(x, (self.hidden,), wb[0], wb[1], self.eps)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.shape[1]
        x = self.layer_norm(F.embedding(input_ids, self.tok), self.emb_norm)
        keys = attention_mask[:, None, None, :].bool()  # [B, 1, 1, S]
        positions = torch.arange(seq, device=input_ids.device)
        distance = (positions[None, :] - positions[:, None]).abs()
        in_window = (distance <= self.window)[None, None]  # [1, 1, S, S]
        lowest = torch.finfo(torch.float32).min
        zero = torch.zeros((), dtype=torch.float32)
        global_bias = torch.where(keys, zero, torch.tensor(lowest))
        local_bias = torch.where(keys & in_window, zero, torch.tensor(lowest))
        rope = {
            "global": (self.cos_global[:seq], self.sin_global[:seq]),
            "local": (self.cos_local[:seq], self.sin_local[:seq]),
        }
        batch = input_ids.shape[0]
        for i, block in enumerate(self.blocks):
            kind = "global" if self.global_layer[i] else "local"
            normed = self.layer_norm(x, block["attn_norm"]) if block["attn_norm"] is not None else x
            qkv = F.linear(normed, *block["wqkv"]).view(batch, seq, 3, self.heads, self.head_dim)
            q, k, v = qkv.transpose(3, 1).unbind(dim=2)  # [B, H, S, D] each
            cos, sin = rope[kind]
            q = q * cos + rotate_half(q, self.head_dim // 2) * sin
            k = k * cos + rotate_half(k, self.head_dim // 2) * sin
            scores = torch.matmul(q, k.transpose(2, 3)) * (self.head_dim ** -0.5)
            scores = scores + (global_bias if kind == "global" else local_bias)
            probs = torch.softmax(scores, dim=-1)
            attn = torch.matmul(probs, v).transpose(1, 2).reshape(batch, seq, self.hidden)
            x = x + F.linear(attn, *block["wo"])
            # Split with constant sizes (chunk traces to shape arithmetic).
            inp, gate = F.linear(self.layer_norm(x, block["mlp_norm"]), *block["wi"]).split(self.inter, dim=-1)
            x = x + F.linear(self.act(inp) * gate, *block["mlp_wo"])
        x = self.layer_norm(x, self.final_norm)
        if self.pooling == "cls":
            pooled = x[:, 0]
        else:
            m = attention_mask.unsqueeze(-1).to(x.dtype)
            pooled = (x * m).sum(dim=1) / m.sum(dim=1)
        pooled = self.layer_norm(self.head_act(F.linear(pooled, *self.head_dense)), self.head_norm)
        return F.linear(pooled, *self.classifier)


def load(model_dir):
    model_dir = Path(model_dir)
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("model_type") not in ("modernbert", None):
        raise SystemExit(f"{model_dir}: model_type {config.get('model_type')!r} is not modernbert")
    weights = read_safetensors(model_dir / "model.safetensors")
    return config, ModernBertClassifier(config, weights).eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--check-length", type=int, default=64)
    args = ap.parse_args()

    config, model = load(args.model_dir)
    vocab = config["vocab_size"]
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(min(1000, vocab - 1), min(50000, vocab), (1, args.check_length), generator=gen)
    mask = torch.ones_like(ids)
    with torch.no_grad():
        logits = model(ids, mask)
        # Sanity before export: finite logits, and a padded copy pooling to the same values.
        if not torch.isfinite(logits).all():
            raise SystemExit("torch module produced non-finite logits")
        padded_ids = torch.cat([ids, torch.full((1, 5), config.get("pad_token_id", 0))], dim=1)
        padded_mask = torch.cat([mask, torch.zeros((1, 5), dtype=mask.dtype)], dim=1)
        padded = model(padded_ids, padded_mask)
    print(f"torch logits at {args.check_length} tokens: {[round(v, 5) for v in logits[0].tolist()]}; "
          f"padded copy max abs diff {float((padded - logits).abs().max()):.2e}", file=sys.stderr)

    torch.onnx.export(
        model, (ids, mask), args.out,
        input_names=["input_ids", "attention_mask"], output_names=["logits"],
        dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
                      "logits": {0: "batch"}},
        opset_version=args.opset, do_constant_folding=True)
    print(f"wrote {args.out} (opset {args.opset}, torch {torch.__version__})", file=sys.stderr)


if __name__ == "__main__":
    main()
