#!/usr/bin/env python3
"""Writes a random-weight GGUF of a real model's shape for scripts/bench.sh,
so that archc and llama.cpp are measured at the sizes people run (issue 35).

  gen_bench_gguf.py SHAPE FORMAT OUT.gguf --tokenizer TOKENIZER.gguf

SHAPE is the body of a published model (its config.json's sizes):
llama-3.2-1b, llama-3.2-3b, qwen3-4b, llama-3.1-8b, qwen3-8b. The
vocabulary is TOKENIZER.gguf's (every tokenizer.* key is copied, so both
engines tokenize the bench's prompt as that model does): with SmolLM2's
49152 tokens the embedding and the head are smaller than the real model's,
the layers are the real ones. FORMAT is the storage of the layers'
matrices: f16, q8_0, q4_0, q4_1, q5_0, q4_k or q6_k. The token embedding
is q8_0 (f16 for an f16 file), as the issue's Q4_0 file had it; an untied
output matrix is q6_k for the K-quants (as llama.cpp's Q4_K_M has it) and
q8_0 otherwise; norms are f32 ones.

The weights are random, written directly as blocks of the format: random
quant bytes and fixed, small scales (a decode reads every byte of them as
it would a trained model's; their values only have to keep the activations
finite). Nothing is quantized, so a 8B file takes a minute, not an hour,
and the writer needs numpy and gguf-py only (scripts/requirements-bench.txt
has both). Prints the bytes a decode step reads (every matrix, and the
token embedding only where it is the tied head).
"""
import argparse
import sys

import numpy as np
import gguf

# name: (architecture, hidden, layers, ffn, heads, kv_heads, head_dim, tied,
#        rope_theta, rms_eps, q/k norm)
SHAPES = {
    "llama-3.2-1b": ("llama", 2048, 16, 8192, 32, 8, 64, True, 500000.0, 1e-5, False),
    "llama-3.2-3b": ("llama", 3072, 28, 8192, 24, 8, 128, True, 500000.0, 1e-5, False),
    "qwen3-4b": ("qwen3", 2560, 36, 9728, 32, 8, 128, True, 1000000.0, 1e-6, True),
    "llama-3.1-8b": ("llama", 4096, 32, 14336, 32, 8, 128, False, 500000.0, 1e-5, False),
    "qwen3-8b": ("qwen3", 4096, 36, 12288, 32, 8, 128, False, 1000000.0, 1e-6, True),
}

Q = gguf.GGMLQuantizationType
# format: (ggml type, elements per block, bytes per block, [(offset of an
# f16 scale in the block, its value)])
FORMATS = {
    "q8_0": (Q.Q8_0, 32, 34, [(0, 0.0005)]),
    "q4_0": (Q.Q4_0, 32, 18, [(0, 0.004)]),
    "q4_1": (Q.Q4_1, 32, 20, [(0, 0.004), (2, -0.03)]),
    "q5_0": (Q.Q5_0, 32, 22, [(0, 0.002)]),
    "q4_k": (Q.Q4_K, 256, 144, [(0, 0.0002), (2, 0.0002)]),
    "q6_k": (Q.Q6_K, 256, 210, [(208, 0.00005)]),
}


def blocks(rng, fmt, rows, cols):
    """Random blocks of fmt for a [rows, cols] matrix: uint8 [rows, bytes]."""
    _, per, nbytes, scales = FORMATS[fmt]
    if cols % per:
        sys.exit(f"{cols} columns are not a multiple of {fmt}'s block of {per}")
    data = rng.integers(0, 256, size=(rows, cols // per, nbytes), dtype=np.uint8)
    for off, val in scales:
        data[:, :, off:off + 2] = np.frombuffer(np.float16(val).tobytes(), dtype=np.uint8)
    return data.reshape(rows, -1), FORMATS[fmt][0]


def matrix(w, rng, name, fmt, rows, cols):
    if fmt == "f16":
        w.add_tensor(name, (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16))
        return rows * cols * 2
    data, qtype = blocks(rng, fmt, rows, cols)
    w.add_tensor(name, data, raw_dtype=qtype)
    return data.nbytes


def copy_tokenizer(w, path):
    r = gguf.GGUFReader(path)
    vocab = None
    for key, f in r.fields.items():
        if not key.startswith("tokenizer."):
            continue
        vt = f.types[0]
        sub = f.types[1] if vt == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(key, f.contents(), vt, sub_type=sub)
        if key == "tokenizer.ggml.tokens":
            vocab = len(f.contents())
    if vocab is None:
        sys.exit(f"{path}: no tokenizer.ggml.tokens")
    return vocab


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("format", choices=["f16"] + sorted(FORMATS))
    ap.add_argument("out")
    ap.add_argument("--tokenizer", required=True, help="a GGUF whose tokenizer.* keys the file takes (e.g. SmolLM2's)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    arch, hidden, layers, ffn, heads, kv, hd, tied, theta, eps, qknorm = SHAPES[a.shape]
    rng = np.random.default_rng(a.seed)
    w = gguf.GGUFWriter(a.out, arch)
    w.add_name(f"random-weight {a.shape} body ({a.format}) for archc's scripts/bench.sh")
    vocab = copy_tokenizer(w, a.tokenizer)
    w.add_context_length(8192)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(hd)
    w.add_rope_freq_base(theta)
    w.add_layer_norm_rms_eps(eps)
    w.add_vocab_size(vocab)
    embed_fmt = "f16" if a.format == "f16" else "q8_0"
    head_fmt = "f16" if a.format == "f16" else ("q6_k" if a.format.endswith("_k") else "q8_0")
    ones = lambda n: np.ones(n, dtype=np.float32)
    read = 0  # bytes a decode step reads
    embed = matrix(w, rng, "token_embd.weight", embed_fmt, vocab, hidden)
    for i in range(layers):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", ones(hidden))
        read += matrix(w, rng, b + "attn_q.weight", a.format, heads * hd, hidden)
        read += matrix(w, rng, b + "attn_k.weight", a.format, kv * hd, hidden)
        read += matrix(w, rng, b + "attn_v.weight", a.format, kv * hd, hidden)
        if qknorm:
            w.add_tensor(b + "attn_q_norm.weight", ones(hd))
            w.add_tensor(b + "attn_k_norm.weight", ones(hd))
        read += matrix(w, rng, b + "attn_output.weight", a.format, hidden, heads * hd)
        w.add_tensor(b + "ffn_norm.weight", ones(hidden))
        read += matrix(w, rng, b + "ffn_gate.weight", a.format, ffn, hidden)
        read += matrix(w, rng, b + "ffn_up.weight", a.format, ffn, hidden)
        read += matrix(w, rng, b + "ffn_down.weight", a.format, hidden, ffn)
    w.add_tensor("output_norm.weight", ones(hidden))
    if tied:
        read += embed
    else:
        read += matrix(w, rng, "output.weight", head_fmt, vocab, hidden)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"{a.out}: {a.shape} body, {a.format}, vocabulary {vocab}; a decode step reads {read / 1e9:.3f} GB of weights")


if __name__ == "__main__":
    main()
