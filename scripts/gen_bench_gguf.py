#!/usr/bin/env python3
"""Writes a random-weight GGUF of a real model's shape for scripts/bench.sh,
so that archc and llama.cpp are measured at the sizes people run (issue 35).

  gen_bench_gguf.py SHAPE FORMAT OUT.gguf --tokenizer TOKENIZER.gguf

SHAPE is the body of a published model (its config.json's sizes):
  llama-3.2-1b, llama-3.2-3b, qwen3-4b, llama-3.1-8b, qwen3-8b  dense
      (GGUF architectures llama and qwen3)
  qwen3.5-2b      Qwen3.5-2B's hybrid text model (GGUF qwen35): 24 layers,
      hidden 2048, every 4th layer gated full attention (8 query heads of
      256, 2 KV heads, q_proj yielding query and gate, partial RoPE over 64
      of the 256), the other 18 Gated DeltaNet linear attention (16 key and
      16 value heads of 128, a causal conv of 4 over q, k, v), a SwiGLU MLP
      of 6144 on every layer, tied head
  qwen3-30b-a3b   Qwen3-30B-A3B's MoE (GGUF qwen3moe): 48 layers, hidden
      2048, 32 query / 4 KV heads of 128, 128 SwiGLU experts of 768 per
      layer, 8 routed per token, no shared expert, untied head. Its Q4_0
      file is about 17 GB: the writer streams (below), but check the disk
      and the memory of the engines that load it
  olmoe-1b-7b     OLMoE-1B-7B's MoE (GGUF olmoe), a smaller real MoE: 16
      layers, hidden 2048, 16 heads of 128 (no GQA) with q/k RMSNorm over
      the whole projection, 64 SwiGLU experts of 1024, 8 routed per token
      (not renormalized), untied head; 4.0 GB in Q4_0
The vocabulary is TOKENIZER.gguf's (every tokenizer.* key is copied, so both
engines tokenize the bench's prompt as that model does): with SmolLM2's
49152 tokens the embedding and the head are smaller than the real model's,
the layers are the real ones. FORMAT is the storage of the layers'
matrices (experts included): f16, q8_0, q4_0, q4_1, q5_0, q4_k or q6_k.
The token embedding is q8_0 (f16 for an f16 file), as the issue's Q4_0 file
had it; an untied output matrix is q6_k for the K-quants (as llama.cpp's
Q4_K_M has it) and q8_0 otherwise; norms are f32 ones. The small tensors
stay f32 as llama.cpp's converter writes them: a MoE router (ffn_gate_inp),
the DeltaNet's conv1d, A (ssm_a), dt bias, gated norm (ssm_norm) and its
beta/alpha projections (ssm_beta, ssm_alpha: 16 rows).

The weights are random, written directly as blocks of the format: random
quant bytes and fixed, small scales (a decode reads every byte of them as
it would a trained model's; their values only have to keep the activations
finite: each matrix's outputs have a standard deviation near 1 for inputs
of unit RMS, every block normalized by an RMSNorm; DeltaNet's q and k are
L2-normalized, its decay A * softplus(a + dt_bias) is negative with A in
[-16, -1], as HF initializes A_log). Nothing is quantized, so a 8B file takes
a minute, not an hour, and the writer needs numpy and gguf-py only
(scripts/requirements-bench.txt has both). The file is written in two
passes: every tensor's name, shape and type first (the GGUF header), then
each tensor's data, made and written one at a time, so memory holds one
tensor (a 128-expert Q4_0 stack: 113 MB), not the file (the 17 GB Q4_0
qwen3-30b-a3b takes a few minutes, numpy's random bytes at about 250 MB/s
on one core). Prints the bytes a
decode step reads (every matrix, the token embedding only where it is the
tied head, a MoE's experts only used/count of them).

GGUF keys and tensor names are the ones both llama.cpp (llama-cpp-python
0.3.36's libllama) and archc (archs/*.arch gguf sections) read: for qwen35
the ssm.* sizes (conv_kernel, state_size = the key head dim, group_count =
key heads, time_step_rank = value heads, inner_size = value heads x value
head dim), full_attention_interval, rope.dimension_sections (required by
llama.cpp: Qwen3.5's mrope_section [11, 11, 10] and 0; for text every axis
is the position, so it is plain partial RoPE), the norms stored as 1 + w
(ones here: HF weight 0, scale 1), attn_qkv / attn_gate / ssm_beta /
ssm_alpha for the separate DeltaNet projections, post_attention_norm; for
qwen3moe expert_count, expert_used_count, expert_feed_forward_length and
ffn_{gate,up,down}_exps stacks [experts, rows, cols].
"""
import argparse
import sys

import numpy as np
import gguf

# name: (architecture, hidden, layers, ffn, heads, kv_heads, head_dim, tied,
#        rope_theta, rms_eps, q/k norm, extra)
# extra: hybrid (qwen35) or MoE (qwen3moe) sizes, None for a dense model.
SHAPES = {
    "llama-3.2-1b": ("llama", 2048, 16, 8192, 32, 8, 64, True, 500000.0, 1e-5, False, None),
    "llama-3.2-3b": ("llama", 3072, 28, 8192, 24, 8, 128, True, 500000.0, 1e-5, False, None),
    "qwen3-4b": ("qwen3", 2560, 36, 9728, 32, 8, 128, True, 1000000.0, 1e-6, True, None),
    "llama-3.1-8b": ("llama", 4096, 32, 14336, 32, 8, 128, False, 500000.0, 1e-5, False, None),
    "qwen3-8b": ("qwen3", 4096, 36, 12288, 32, 8, 128, False, 1000000.0, 1e-6, True, None),
    # Qwen/Qwen3.5-2B text_config: hidden_size 2048, num_hidden_layers 24,
    # intermediate_size 6144, num_attention_heads 8, num_key_value_heads 2,
    # head_dim 256, linear_num_key_heads 16, linear_num_value_heads 16,
    # linear_key_head_dim 128, linear_value_head_dim 128,
    # linear_conv_kernel_dim 4, full_attention_interval 4, rope_theta 1e7,
    # partial_rotary_factor 0.25, mrope_section [11, 11, 10],
    # rms_norm_eps 1e-6, tie_word_embeddings true.
    "qwen3.5-2b": ("qwen35", 2048, 24, 6144, 8, 2, 256, True, 10000000.0, 1e-6, True,
                   dict(hybrid=True, interval=4, rotary=64, sections=[11, 11, 10, 0],
                        conv=4, k_heads=16, v_heads=16, k_dim=128, v_dim=128)),
    # Qwen/Qwen3-30B-A3B: hidden_size 2048, num_hidden_layers 48,
    # num_attention_heads 32, num_key_value_heads 4, head_dim 128,
    # intermediate_size 6144 (unused: every layer is sparse),
    # moe_intermediate_size 768, num_experts 128, num_experts_per_tok 8,
    # norm_topk_prob true, rope_theta 1e6, rms_norm_eps 1e-6, untied.
    "qwen3-30b-a3b": ("qwen3moe", 2048, 48, 6144, 32, 4, 128, False, 1000000.0, 1e-6, True,
                      dict(experts=128, used=8, expert_ffn=768, norm_topk=True)),
    # allenai/OLMoE-1B-7B-0924: hidden_size 2048, num_hidden_layers 16,
    # num_attention_heads 16, num_key_value_heads 16 (head_dim 128),
    # intermediate_size 1024 (each expert's), num_experts 64,
    # num_experts_per_tok 8, norm_topk_prob false, q/k RMSNorm over the
    # whole projection, rope_theta 10000, rms_norm_eps 1e-5, untied.
    "olmoe-1b-7b": ("olmoe", 2048, 16, 1024, 16, 16, 128, False, 10000.0, 1e-5, True,
                    dict(experts=64, used=8, expert_ffn=1024, norm_topk=False, qk_full=True)),
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

class Tensor:
    """One tensor of the plan: its name, GGUF storage and how to make it."""

    def __init__(self, name, fmt, shape, fill=None, weight=1.0):
        self.name, self.fmt, self.shape, self.fill = name, fmt, tuple(shape), fill
        self.weight = weight  # the fraction a decode step reads: used / count for experts
        cols = self.shape[-1]
        lead = int(np.prod(self.shape[:-1]))
        if fmt in ("f32", "f16"):
            self.dtype = np.float32 if fmt == "f32" else np.float16
            self.raw = None
            self.store = self.shape
            self.nbytes = lead * cols * np.dtype(self.dtype).itemsize
        else:
            qtype, per, nbytes, _ = FORMATS[fmt]
            if cols % per:
                sys.exit(f"{name}: {cols} columns are not a multiple of {fmt}'s block of {per}")
            self.dtype, self.raw = np.uint8, qtype
            self.store = self.shape[:-1] + (cols // per * nbytes,)
            self.nbytes = lead * (cols // per) * nbytes

    def make(self, rng):
        if self.fill is not None:
            return self.fill(rng, self.shape).astype(self.dtype)
        if self.fmt == "f16":
            return (rng.standard_normal(self.shape, dtype=np.float32) * 0.02).astype(np.float16)
        _, per, nbytes, scales = FORMATS[self.fmt]
        data = rng.integers(0, 256, size=(self.nbytes // nbytes, nbytes), dtype=np.uint8)
        for off, val in scales:
            data[:, off:off + 2] = np.frombuffer(np.float16(val).tobytes(), dtype=np.uint8)
        return data.reshape(self.store)


def ones(rng, shape):
    return np.ones(shape, dtype=np.float32)


def normal(scale):
    return lambda rng, shape: rng.standard_normal(shape, dtype=np.float32) * scale


def uniform(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, size=shape).astype(np.float32)


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


def plan(shape, fmt, vocab):
    """The file's tensors in order, and the bytes a decode step reads."""
    arch, hidden, layers, ffn, heads, kv, hd, tied, _, _, qknorm, x = SHAPES[shape]
    x = x or {}
    embed_fmt = "f16" if fmt == "f16" else "q8_0"
    head_fmt = "f16" if fmt == "f16" else ("q6_k" if fmt.endswith("_k") else "q8_0")
    t = []

    def add(name, f, dims, fill=None, weight=1.0):
        t.append(Tensor(name, f, dims, fill, weight))

    t.append(Tensor("token_embd.weight", embed_fmt, (vocab, hidden)))
    for i in range(layers):
        b = f"blk.{i}."
        t.append(Tensor(b + "attn_norm.weight", "f32", (hidden,), ones))
        if x.get("hybrid") and (i + 1) % x["interval"]:
            # Gated DeltaNet (llama.cpp's qwen35 tensors, [rows, cols] here).
            kd, vd = x["k_heads"] * x["k_dim"], x["v_heads"] * x["v_dim"]
            add(b + "attn_qkv.weight", fmt, (2 * kd + vd, hidden))
            add(b + "attn_gate.weight", fmt, (vd, hidden))
            add(b + "ssm_conv1d.weight", "f32", (2 * kd + vd, x["conv"]), normal(0.5))
            add(b + "ssm_dt.bias", "f32", (x["v_heads"],), ones)
            add(b + "ssm_a", "f32", (x["v_heads"],), uniform(-16.0, -1.0))
            add(b + "ssm_beta.weight", "f32", (x["v_heads"], hidden), normal(0.02))
            add(b + "ssm_alpha.weight", "f32", (x["v_heads"], hidden), normal(0.02))
            add(b + "ssm_norm.weight", "f32", (x["v_dim"],), ones)
            add(b + "ssm_out.weight", fmt, (hidden, vd))
        else:
            gate = 2 if x.get("hybrid") else 1  # qwen35: q_proj yields query and gate
            add(b + "attn_q.weight", fmt, (gate * heads * hd, hidden))
            add(b + "attn_k.weight", fmt, (kv * hd, hidden))
            add(b + "attn_v.weight", fmt, (kv * hd, hidden))
            if qknorm:  # per head, or (OLMoE) over the whole projection
                full = x.get("qk_full")
                t.append(Tensor(b + "attn_q_norm.weight", "f32", (heads * hd if full else hd,), ones))
                t.append(Tensor(b + "attn_k_norm.weight", "f32", (kv * hd if full else hd,), ones))
            add(b + "attn_output.weight", fmt, (hidden, heads * hd))
        post = "post_attention_norm" if x.get("hybrid") else "ffn_norm"
        t.append(Tensor(b + post + ".weight", "f32", (hidden,), ones))
        if "experts" in x:
            n, e, used = x["experts"], x["expert_ffn"], x["used"]
            add(b + "ffn_gate_inp.weight", "f32", (n, hidden), normal(0.02))
            add(b + "ffn_gate_exps.weight", fmt, (n, e, hidden), weight=used / n)
            add(b + "ffn_up_exps.weight", fmt, (n, e, hidden), weight=used / n)
            add(b + "ffn_down_exps.weight", fmt, (n, hidden, e), weight=used / n)
        else:
            add(b + "ffn_gate.weight", fmt, (ffn, hidden))
            add(b + "ffn_up.weight", fmt, (ffn, hidden))
            add(b + "ffn_down.weight", fmt, (hidden, ffn))
    t.append(Tensor("output_norm.weight", "f32", (hidden,), ones))
    if not tied:
        add("output.weight", head_fmt, (vocab, hidden))
    # Every tensor but the token embedding, which is read whole only as the
    # tied head (one row otherwise), as scripts/bench.sh counts.
    read = sum(x.nbytes * x.weight for x in t[1:]) + (t[0].nbytes if tied else 0)
    return t, read


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("format", choices=["f16"] + sorted(FORMATS))
    ap.add_argument("out")
    ap.add_argument("--tokenizer", required=True, help="a GGUF whose tokenizer.* keys the file takes (e.g. SmolLM2's)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    arch, hidden, layers, ffn, heads, kv, hd, tied, theta, eps, qknorm, x = SHAPES[a.shape]
    x = x or {}
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
    w.add_rope_dimension_count(x.get("rotary", hd))
    w.add_rope_freq_base(theta)
    w.add_layer_norm_rms_eps(eps)
    w.add_vocab_size(vocab)
    if x.get("hybrid"):
        w.add_rope_dimension_sections(x["sections"])
        w.add_full_attention_interval(x["interval"])
        w.add_ssm_conv_kernel(x["conv"])
        w.add_ssm_state_size(x["k_dim"])
        w.add_ssm_group_count(x["k_heads"])
        w.add_ssm_time_step_rank(x["v_heads"])
        w.add_ssm_inner_size(x["v_heads"] * x["v_dim"])
    if "experts" in x:
        w.add_expert_count(x["experts"])
        w.add_expert_used_count(x["used"])
        w.add_expert_feed_forward_length(x["expert_ffn"])
        w.add_expert_weights_norm(x["norm_topk"])
    tensors, read = plan(a.shape, a.format, vocab)
    for t in tensors:
        w.add_tensor_info(t.name, t.store, np.dtype(t.dtype), t.nbytes, raw_dtype=t.raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    total = 0
    for t in tensors:
        data = t.make(rng)
        assert data.nbytes == t.nbytes, t.name
        w.write_tensor_data(data)
        total += t.nbytes
    w.close()
    print(f"{a.out}: {a.shape} body, {a.format}, vocabulary {vocab}, {total / 1e9:.3f} GB of tensors; "
          f"a decode step reads {read / 1e9:.3f} GB of weights")


if __name__ == "__main__":
    main()
