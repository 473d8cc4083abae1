#!/usr/bin/env python3
"""Writes a random-weight f16 Hugging Face folder of a real model's shape
for scripts/gpu-check.sh: config.json (no eos_token_id, so generation
runs to max_tokens) and model.safetensors, every tensor 64-byte aligned
(IREE maps aligned regions without copying).

  gpu_bench_model.py SHAPE DIR [--header-only]

SHAPE is llama-3.2-1b or qwen3-8b (the shapes of meta-llama/Llama-3.2-1B
and Qwen/Qwen3-8B's config.json). --header-only writes the safetensors
header and a sparse file of the full size (no weight bytes): enough for
archc to plan and compile the module on a machine without the disk or the
time for the weights; the full file has the same header, so the same
module. Weights are one random block (normal, std 0.02) repeated: the
benchmark reads bytes, their values do not matter. Needs numpy only.
"""
import json
import os
import sys

SHAPES = {
    "llama-3.2-1b": dict(model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=2048,
                         intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                         num_key_value_heads=8, head_dim=64, vocab_size=128256, rms_norm_eps=1e-5,
                         rope_theta=500000.0, max_position_embeddings=131072, tie_word_embeddings=True,
                         rope_scaling={"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                       "original_max_position_embeddings": 8192, "rope_type": "llama3"},
                         hidden_act="silu", attention_bias=False, mlp_bias=False, torch_dtype="float16"),
    "qwen3-8b": dict(model_type="qwen3", architectures=["Qwen3ForCausalLM"], hidden_size=4096,
                     intermediate_size=12288, num_hidden_layers=36, num_attention_heads=32,
                     num_key_value_heads=8, head_dim=128, vocab_size=151936, rms_norm_eps=1e-6,
                     rope_theta=1000000.0, max_position_embeddings=40960, tie_word_embeddings=False,
                     hidden_act="silu", attention_bias=False, torch_dtype="float16"),
}


def tensors(c):
    """(name, shape) of the checkpoint, as HF names them."""
    h, i, d = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    out = [("model.embed_tokens.weight", (c["vocab_size"], h))]
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        out += [(p + "input_layernorm.weight", (h,)), (p + "post_attention_layernorm.weight", (h,)),
                (p + "self_attn.q_proj.weight", (q, h)), (p + "self_attn.k_proj.weight", (kv, h)),
                (p + "self_attn.v_proj.weight", (kv, h)), (p + "self_attn.o_proj.weight", (h, q)),
                (p + "mlp.gate_proj.weight", (i, h)), (p + "mlp.up_proj.weight", (i, h)),
                (p + "mlp.down_proj.weight", (h, i))]
        if c["model_type"] == "qwen3":
            out += [(p + "self_attn.q_norm.weight", (d,)), (p + "self_attn.k_norm.weight", (d,))]
    out.append(("model.norm.weight", (h,)))
    if not c["tie_word_embeddings"]:
        out.append(("lm_head.weight", (c["vocab_size"], h)))
    return out


def align(n, a=64):
    return (n + a - 1) // a * a


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in SHAPES:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(SHAPES)} DIR [--header-only]")
    shape, out, header_only = sys.argv[1], sys.argv[2], "--header-only" in sys.argv[3:]
    c = SHAPES[shape]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
    ts = tensors(c)
    meta, off = {}, 0
    for name, shp in ts:
        n = 2
        for s in shp:
            n *= s
        meta[name] = {"dtype": "F16", "shape": list(shp), "data_offsets": [off, off + n]}
        off = align(off + n)
    hdr = json.dumps(meta, separators=(",", ":")).encode()
    hdr += b" " * (align(8 + len(hdr)) - 8 - len(hdr))  # data starts 64-aligned
    path = os.path.join(out, "model.safetensors")
    with open(path, "wb") as f:
        f.write(len(hdr).to_bytes(8, "little") + hdr)
        if header_only:
            f.truncate(8 + len(hdr) + off)
            return
        import numpy as np
        block = (np.random.default_rng(0).standard_normal(1 << 24, dtype=np.float32) * 0.02).astype(np.float16)
        ones = np.ones(1 << 16, np.float16)
        for name, shp in ts:
            m = meta[name]
            start, end = m["data_offsets"]
            f.seek(8 + len(hdr) + start)
            src = ones if len(shp) == 1 else block  # norms are 1, as HF initialises them
            left = (end - start) // 2
            while left > 0:
                k = min(left, src.size)
                f.write(src[:k].tobytes())
                left -= k
        f.truncate(8 + len(hdr) + off)
    print(f"{path}: {len(ts)} tensors, {off / 1e9:.2f} GB of f16 weights", file=sys.stderr)


if __name__ == "__main__":
    main()
