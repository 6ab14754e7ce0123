#!/usr/bin/env python3
"""Reference sentence embeddings computed without candle, for the embed integration tests.

A plain numpy implementation of the BERT encoder forward pass (float64), reading
model.safetensors directly (an 8-byte little-endian header length, a JSON header, then raw
little-endian arrays), tokenizing with the Python `tokenizers` package (padding off, truncation
to the checkpoint's max_seq_length, keeping [SEP]), then mean or CLS pooling and L2
normalization as sentence-transformers does. It shares no code with the Rust embedder.

Writes codeoid-core/tests/fixtures/embed/minilm_reference.json, which the Rust test compares
against at 1e-4. Regenerate after changing the texts:

    python3 -m pip install numpy tokenizers
    python3 codeoid-core/tests/support/embed_reference.py "$(./scripts/fetch-test-model.sh)"
"""

import hashlib
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

TEXTS = [
    "",
    "The quick brown fox jumps over the lazy dog.",
    "fn record_turn(&mut self, turn: Turn) -> Result<EpisodeId>",
    "error[E0599]: no method named `unwrap_or_default` found for enum `Option` in the current scope",
    "Ünïcödé — 日本語のテキスト and an emoji 🚀 in one line",
    # Longer than max_seq_length (256): checks truncation keeps [SEP] at position 255.
    " ".join(f"line {i}: cargo test --workspace passed in {i}.{i % 7}s" for i in range(60)),
]

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "F16": np.float16}


def read_safetensors(path):
    raw = Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(raw[base + start : base + end], dtype=DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"]).astype(np.float64)
    return tensors, hashlib.sha256(raw).hexdigest()


_erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def linear(x, w, name):
    return x @ w[name + ".weight"].T + w[name + ".bias"]


def bert_forward(ids, w, config):
    """Last hidden state [len, hidden] of one unpadded sequence (no mask needed)."""
    n = len(ids)
    heads = config["num_attention_heads"]
    hidden = config["hidden_size"]
    head_dim = hidden // heads
    eps = config.get("layer_norm_eps", 1e-12)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        q = linear(x, w, p + "attention.self.query").reshape(n, heads, head_dim).transpose(1, 0, 2)
        k = linear(x, w, p + "attention.self.key").reshape(n, heads, head_dim).transpose(1, 0, 2)
        v = linear(x, w, p + "attention.self.value").reshape(n, heads, head_dim).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(head_dim)
        scores -= scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
        attn = linear(context, w, p + "attention.output.dense")
        x = layer_norm(attn + x, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
        inter = gelu(linear(x, w, p + "intermediate.dense"))
        out = linear(inter, w, p + "output.dense")
        x = layer_norm(out + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return x


def normalize(v):
    return v / max(np.linalg.norm(v), 1e-12)


def main():
    model_dir = Path(sys.argv[1])
    config = json.loads((model_dir / "config.json").read_text())
    max_len = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_len)
    weights, digest = read_safetensors(model_dir / "model.safetensors")

    cases = []
    for text in TEXTS:
        ids = tokenizer.encode(text).ids
        hidden = bert_forward(np.array(ids), weights, config)
        cases.append(
            {
                "text": text,
                "ids": ids,
                "mean": [round(float(v), 7) for v in normalize(hidden.mean(axis=0))],
                "cls": [round(float(v), 7) for v in normalize(hidden[0])],
            }
        )
    fixture = {
        "model": "all-MiniLM-L6-v2",
        "weights_sha256": digest,
        "max_seq_length": max_len,
        "generator": "codeoid-core/tests/support/embed_reference.py (numpy float64 BERT forward)",
        "cases": cases,
    }
    out = Path(__file__).resolve().parent.parent / "fixtures" / "embed" / "minilm_reference.json"
    out.write_text(json.dumps(fixture, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
