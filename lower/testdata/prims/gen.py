#!/usr/bin/env python3
"""Writes the per-primitive test cases lower/testdata/prims/<case>.txtar.

Read by lower/prims_test.go. Each case applies one primitive of the table in
lower/registry.go to small random inputs. This script owns every section of
a case except `out/mlir` (the StableHLO archc emits for it, refreshed by
`go test ./lower -update`), which it keeps as it finds it:

    (comment)          what the case checks, and the formula
    -- case.json --    primitive, attributes, argument and weight shapes
                       ("batch" and "seq" are the symbolic dimensions),
                       result shape, the calls' batch and seq, tolerance
    -- weight/<name> -- a checkpoint tensor: f32 as decimals, other storage
                       formats as their stored bytes in hex
    -- call<i>/<arg> -- call i's arguments (and positions / slots)
    -- call<i>/want --  call i's expected result, computed here in float64
                       with numpy from the float32 inputs
    -- out/mlir --     the emitted module (written by the Go test)

Calls run in order on one loaded module, so a primitive with state (the
attention KV cache) is checked across calls. The expected values come from
numpy following the Hugging Face definitions, never from archc.

Run with any Python that has numpy: python3 lower/testdata/prims/gen.py
"""

import json
import math
import os
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
f32, f64 = np.float32, np.float64


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def randn(r, shape, scale=1.0):
    """Random float32 values with 3 decimals (short in the txtar)."""
    return np.round(r.standard_normal(shape) * scale, 3).astype(f32)


class Case:
    """One txtar case: a primitive, its signature and a list of calls."""

    def __init__(self, name, prim, doc, args, out, attrs=None,
                 positions=False, cache=None, tol=(1e-5, 1e-5), out_dtype=None, nodes=None, rope_positions=False,
                 score_bytes=None):
        self.name, self.prim, self.doc = name, prim, doc
        self.score_bytes = score_bytes  # lowering option: attention scores above it run in query blocks
        self.nodes = nodes or {}  # argument name -> the IR node kind it stands for ("encoded": an encoder's rows)
        self.out_dtype = out_dtype  # "i1": a mask, returned as f32 0/1
        self.args = args        # [(name, dtype, shape)]
        self.out = out          # shape
        self.attrs = attrs or {}
        self.weights = []       # [(name, dtype, shape, section text)]
        self.positions = positions
        self.rope_positions = rope_positions  # the calls take [3, batch, seq] (t, h, w) RoPE positions
        self.cache = cache      # {"slots": n, "max_len": n} or None
        self.tol = tol
        self.calls = []         # [(batch, seq, {section: text})]

    def weight(self, suffix, values, dtype="f32"):
        """Adds weight <name>.<suffix> (suffix None: <name>, a tensor path
        such as attention's sinks) stored as dtype; returns the float
        values the graph must decode it to."""
        name = self.name if suffix is None else self.name + "." + suffix
        if dtype == "f32":
            values = values.astype(f32)
            text = fmt_floats(values)
        elif dtype == "f16":
            values = values.astype("<f2")
            text = fmt_hex(values.tobytes())
            values = values.astype(f32)
        elif dtype == "bf16":
            bits = values.astype(f32).view("<u4") >> 16
            text = fmt_hex(bits.astype("<u2").tobytes())
            values = (bits.astype("<u4") << 16).view(f32)
        elif dtype == "q8_0":
            text, values = q8_0(values)
        else:
            raise ValueError(dtype)
        self.weights.append((name, dtype, list(values.shape), text))
        return values

    def call(self, batch, seq, inputs, want, positions=None, slots=None, rope_positions=None):
        sec = {}
        for (name, dtype, _), v in zip(self.args, inputs):
            sec[name] = fmt_ints(v) if dtype in ("i32", "i1") else fmt_floats(v)
        if self.positions:
            sec["positions"] = fmt_ints(np.asarray(positions))
        if self.rope_positions:
            sec["rope_positions"] = fmt_ints(np.asarray(rope_positions))
        if self.cache:
            sec["slots"] = fmt_ints(np.asarray(slots))
        sec["want"] = fmt_want(want)
        self.calls.append((batch, seq, sec))

    def spec(self):
        s = {
            "prim": self.prim,
            "attrs": self.attrs,
            "args": [dict({"name": n, "dtype": d, "shape": sh}, **({"node": self.nodes[n]} if n in self.nodes else {}))
                     for n, d, sh in self.args],
            "weights": [{"name": n, "dtype": d, "shape": sh} for n, d, sh, _ in self.weights],
            "out": self.out,
            "positions": self.positions,
        }
        if self.rope_positions:
            s["rope_positions"] = True
        if self.out_dtype:
            s["out_dtype"] = self.out_dtype
        if self.cache:
            s["cache"] = self.cache
        if self.score_bytes:
            s["score_bytes"] = self.score_bytes
        s["calls"] = [{"batch": b, "seq": q} for b, q, _ in self.calls]
        s["tol"] = {"abs": self.tol[0], "rel": self.tol[1]}
        return "{\n" + ",\n".join("  %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in s.items()) + "\n}\n"

    def sections(self):
        out = [("case.json", self.spec())]
        for n, _, _, text in self.weights:
            out.append(("weight/" + n, text))
        for i, (_, _, sec) in enumerate(self.calls):
            for k, text in sec.items():
                out.append(("call%d/%s" % (i, k), text))
        return out


# Formatting: one innermost row per line.

def rows(a):
    a = np.asarray(a)
    if a.ndim == 0:
        return [a.reshape(1)]
    return list(a.reshape(-1, a.shape[-1]))


def fmt_floats(a):
    return "".join(" ".join(str(f32(v)) for v in r) + "\n" for r in rows(a))


def fmt_want(a):
    return "".join(" ".join("%.9g" % float(v) for v in r) + "\n" for r in rows(a))


def fmt_ints(a):
    return "".join(" ".join(str(int(v)) for v in r) + "\n" for r in rows(a))


def fmt_hex(b):
    return "".join(b[i:i + 32].hex() + "\n" for i in range(0, len(b), 32))


def q8_0(w):
    """GGML Q8_0 blocks of 32 along each row: f16 scale d = max|x|/127 and
    int8 q = round(x/d); returns (hex of the stored rows, d·q as float32)."""
    rows_, cols = w.shape
    blocks = w.astype(f32).reshape(rows_, cols // 32, 32)
    d = (np.abs(blocks).max(axis=-1) / 127).astype("<f2")
    q = np.round(blocks / np.where(d == 0, 1, d.astype(f32))[..., None]).clip(-127, 127).astype("i1")
    raw = b"".join(d[i, j].tobytes() + q[i, j].tobytes() for i in range(rows_) for j in range(cols // 32))
    return fmt_hex(raw), (d.astype(f32)[..., None] * q.astype(f32)).reshape(rows_, cols)


# References (float64 on the float32 inputs), after Hugging Face transformers.

def rms_norm(x, w, eps, one_plus=False):
    x = x.astype(f64)
    w = w.astype(f64) + (1 if one_plus else 0)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def silu(x):
    x = x.astype(f64)
    return x / (1 + np.exp(-x))


def gelu_erf(x):
    """torch.nn.functional.gelu (exact, erf), in float64."""
    x = x.astype(f64)
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def gelu_tanh(x):
    x = x.astype(f64)
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def route_ref(logits, attrs, bias=None):
    """HF TopKRouter: softmax (f64 from the f32 logits) before or after
    torch.topk, whose ties keep the lower index (a stable sort of -p);
    then norm_topk_prob (the sum at least norm_min) and the scale. With
    bias (Ernie4_5_MoeTopKRouter): the top k of p + bias, keeping p. Dense
    [..., E], zero elsewhere."""
    k = attrs["top_k"]
    x = logits.astype(f64).reshape(-1, logits.shape[-1])
    out = np.zeros_like(x)
    for i, row in enumerate(x):
        p = row if attrs.get("softmax") == "after" else np.exp(row - row.max()) / np.exp(row - row.max()).sum()
        if attrs.get("scoring") == "sigmoid" and attrs.get("softmax") != "after":
            p = 1 / (1 + np.exp(-row))
        choice = p if bias is None else p + bias.astype(f64).reshape(-1)
        if attrs.get("topk_method") == "noaux_tc":
            # DeepseekV3TopkRouter: groups scored by the sum of their two
            # largest choice scores, the best topk_group kept (ties: lower
            # group), the others' choice scores -inf; p is kept.
            g = choice.reshape(attrs["n_group"], -1)
            two = -np.sort(-g, axis=-1)[:, :2].sum(-1)
            keep = np.argsort(-two, kind="stable")[:attrs["topk_group"]]
            mask = np.zeros_like(g)
            mask[keep] = 1
            choice = np.where(mask.reshape(-1) > 0, choice, -np.inf)
        if attrs.get("topk_method") == "group_limited_greedy":
            # DeepseekV2TopkRouter: groups scored by their max p, the best
            # topk_group kept (ties: lower group), p = 0 outside them.
            g = p.reshape(attrs["n_group"], -1)
            keep = np.argsort(-g.max(-1), kind="stable")[:attrs["topk_group"]]
            mask = np.zeros_like(g)
            mask[keep] = 1
            p = np.where(mask.reshape(-1) > 0, p, 0.0)
            choice = p
        idx = np.argsort(-choice, kind="stable")[:k]
        v = p[idx]
        if attrs.get("softmax") == "after" and attrs.get("scoring") == "sigmoid":
            v = 1 / (1 + np.exp(-v))  # Llama4Router: sigmoid of the top-k logits
        elif attrs.get("softmax") == "after":
            v = np.exp(v - v.max()) / np.exp(v - v.max()).sum()
        if attrs.get("norm") and attrs.get("norm_p"):
            v = v / (np.abs(v) ** attrs["norm_p"]).sum() ** (1 / attrs["norm_p"])  # torch.norm(v, p) (DbrxFFN)
        elif attrs.get("norm"):
            v = v / max(v.sum(), attrs.get("norm_min", 0.0))
        out[i, idx] = v * attrs.get("scale", 1.0)
    return out.reshape(logits.shape)


def sparsemixer_ref(logits, k, eps):
    """PhimoeTopKRouter's sparsemixer at inference (models/phimoe), in f64 on
    the f32 logits: k rounds, each taking the best untaken expert (ties: the
    lower index) at its softmax over the untaken experts whose gap
    (m - s) / max(|s|, m) is at most 2·eps (0/0 keeps an expert, as torch's
    NaN comparison does). Dense [..., E], zero elsewhere."""
    x = logits.astype(f64).reshape(-1, logits.shape[-1])
    out = np.zeros_like(x)
    band = f64(f32(2 * eps))
    for r, s in enumerate(x):
        untaken = s.copy()
        for _ in range(k):
            m = untaken.max()
            i = int(np.argmax(untaken))
            with np.errstate(invalid="ignore", divide="ignore"):
                gap = (m - s) / np.maximum(np.abs(s), m)
            g = np.where(gap > band, -np.inf, untaken)
            g = np.exp(g - g.max()) / np.exp(g - g.max()).sum()
            out[r, i] = g[i]
            untaken[i] = -np.inf
    return out.reshape(logits.shape)


def softcap(x, cap):
    return cap * np.tanh(x.astype(f64) / cap)


def inv_freq_default(theta, dim):
    """HF _compute_default_rope_parameters: 1 / theta^(2i/dim) in float32."""
    e = np.arange(0, dim, 2).astype(f32) / f32(dim)
    return (f32(1) / np.power(f64(theta), e.astype(f64)).astype(f32)).astype(f32)


def inv_freq_llama3(theta, dim, factor, low, high, old):
    """HF _compute_llama3_parameters."""
    inv = inv_freq_default(theta, dim).astype(f64)
    low_wl, high_wl = old / low, old / high
    out = []
    for f in inv:
        wl = 2 * math.pi / f
        if wl < high_wl:
            out.append(f)
        elif wl > low_wl:
            out.append(f / factor)
        else:
            s = (old / wl - low) / (high - low)
            out.append((1 - s) * f / factor + s * f)
    return np.array(out).astype(f32)


def inv_freq_yarn(theta, dim, factor, orig, beta_fast=32, beta_slow=1):
    """HF _compute_yarn_parameters (truncate, no mscale): inv_freq and
    attention_factor."""
    pos_freqs = np.power(f64(theta), np.arange(0, dim, 2).astype(f64) / dim)
    extra, inter = 1 / pos_freqs, 1 / (factor * pos_freqs)

    def corr(rot):
        return dim * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(theta))
    low, high = max(math.floor(corr(beta_fast)), 0), min(math.ceil(corr(beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2) - low) / (high - low), 0, 1)
    ext_factor = 1 - ramp
    inv = inter * (1 - ext_factor) + extra * ext_factor
    return inv.astype(f32), 0.1 * math.log(factor) + 1


def rope(x, positions, inv, scale=1.0, interleaved=False):
    """HF apply_rotary_pos_emb: angles p·inv_freq in float32, cos/sin
    scaled by attention_factor, x·cos + rotate(x)·sin. inv is [D'/2] or,
    per sequence, [B, D'/2]; only x[..., :D'] rotates (partial rotary).
    Half-split layout (rotate_half, emb = [freqs, freqs]) or, interleaved,
    GPT-J pairs (Cohere: rotate_half of x[..., 0::2], x[..., 1::2] and
    repeat_interleave'd freqs)."""
    inv = np.asarray(inv)
    if inv.ndim == 1:
        inv = np.broadcast_to(inv, (x.shape[0],) + inv.shape)
    ang = (positions.astype(f32)[..., None] * inv[:, None, :]).astype(f32).astype(f64)
    if interleaved:
        emb = np.repeat(ang, 2, -1)[:, :, None, :]
    else:
        emb = np.concatenate([ang, ang], -1)[:, :, None, :]    # [B, S, 1, D']
    cos, sin = np.cos(emb) * scale, np.sin(emb) * scale
    x = x.astype(f64)
    r = emb.shape[-1]
    xr, xp = x[..., :r], x[..., r:]
    if interleaved:
        rot = np.stack([-xr[..., 1::2], xr[..., 0::2]], -1).reshape(xr.shape)
    else:
        rot = np.concatenate([-xr[..., r // 2:], xr[..., :r // 2]], -1)
    return np.concatenate([xr * cos + rot * sin, xp], -1)


def inv_freq_longrope(theta, dim, factors):
    """HF _compute_longrope_parameters: 1 / (ext_factor · theta^(2i/dim)) in float32."""
    e = np.arange(0, dim, 2).astype(f32) / f32(dim)
    return (f32(1) / (np.asarray(factors, f32) * np.power(f64(theta), e.astype(f64)).astype(f32))).astype(f32)


def inv_freq_dynamic(theta, dim, factor, max_pos, seq_len):
    """HF _compute_dynamic_ntk_parameters at seq_len > max_pos (float32 ops
    on a tensor seq_len)."""
    s = (f32(factor) * f32(seq_len)) / f32(max_pos) - f32(factor - 1)
    base = f32(theta) * f32(np.power(f64(s), f64(f32(dim / (dim - 2)))))
    e = np.arange(0, dim, 2).astype(f32) / f32(dim)
    return (f32(1) / np.power(f64(base), e.astype(f64)).astype(f32)).astype(f32)


def layer_norm(x, w, b, eps):
    """(x - mean) · rsqrt(var + eps) · w + b over the last dimension (nn.LayerNorm)."""
    x = x.astype(f64)
    c = x - x.mean(-1, keepdims=True)
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + eps) * w + b


class KVCache:
    """The keys and values written so far, per slot and position."""

    def __init__(self):
        self.k, self.v = {}, {}

    def attend(self, q, k, v, positions, slots, scale=None, cap=0.0, window=None, sinks=None, chunk=None, tile=False,
               alibi=None, blocks=None):
        """Writes this call's k [B, S, KVH, D] and v [B, S, KVH, DV], then HF
        eager_attention_forward: per query at position p, keys at positions
        j <= p (and p - j < window; with chunk, j >= p - p % chunk: HF's
        chunked_causal_mask_function), GQA head h -> kv head h // (H/KVH), or
        with tile h % KVH (JetMoeAttention's k.repeat); with alibi, head h's
        scaled scores plus alibi[h]·j (BLOOM's build_alibi_tensor); with
        blocks [B, S] 0/1 (a prefill chunk), a query in a run of consecutive
        1s also sees the keys up to its run's last position (HF's
        blockwise_overlay over get_block_sequence_ids_for_mask: or(causal,
        block), then and(window))."""
        B, S, H, D = q.shape
        G = H // k.shape[2]
        scale = D ** -0.5 if scale is None else scale
        for b in range(B):
            for s in range(S):
                key = (int(slots[b]), int(positions[b][s]))
                self.k[key], self.v[key] = k[b, s].astype(f64), v[b, s].astype(f64)
        DV = v.shape[3]
        out = np.zeros((B, S, H, DV))
        for b in range(B):
            for s in range(S):
                p = int(positions[b][s])
                lim = p
                if blocks is not None and blocks[b][s]:
                    e = s
                    while e + 1 < S and blocks[b][e + 1]:
                        e += 1
                    lim = int(positions[b][e])
                js = [j for j in range(lim + 1) if (window is None or p - j < window)
                      and (chunk is None or j >= p - p % chunk)]
                keys = np.stack([self.k[(int(slots[b]), j)] for j in js])   # [J, KVH, D]
                vals = np.stack([self.v[(int(slots[b]), j)] for j in js])
                for h in range(H):
                    kvh = h % k.shape[2] if tile else h // G
                    sc = keys[:, kvh] @ q[b, s, h].astype(f64) * scale
                    if alibi is not None:
                        sc = sc + alibi[h] * np.array(js, f64)
                    if cap:
                        sc = cap * np.tanh(sc / cap)
                    if sinks is None:
                        e = np.exp(sc - sc.max())
                        out[b, s, h] = (e / e.sum()) @ vals[:, kvh]
                    else:
                        # GptOss eager_attention_forward: softmax over [scores, sink]
                        # (max-subtracted), the sink's column dropped.
                        comb = np.append(sc, f64(sinks[h]))
                        e = np.exp(comb - comb.max())
                        out[b, s, h] = (e[:-1] / e.sum()) @ vals[:, kvh]
        return out.reshape(B, S, H * DV)


# The cases.

def softplus(x):
    """torch.nn.functional.softplus (beta 1, threshold 20), in float64."""
    x = x.astype(f64)
    return np.where(x > 20, x, np.log1p(np.exp(x)))


class SlotState:
    """Per-slot state for the stateful cases: zeros for a row at position
    0, else what the slot holds after its previous real call. A padded row
    (pad=True) computes its output from the held state and keeps nothing:
    the slot contract of lower.go."""

    def __init__(self, zero):
        self.zero, self.held = zero, {}

    def get(self, slot, pos):
        return self.zero() if pos == 0 else self.held[slot]

    def put(self, slot, st, pad=False):
        if not pad:
            self.held[slot] = st


def conv1d_ref(x, w, b, act, window):
    """MambaMixer.slow_forward's depthwise causal conv of one row x [S, C]
    after the carried window [k-1, C]; returns (out [S, C], new window)."""
    k = w.shape[-1]
    full = np.concatenate([window, x.astype(f64)], 0)
    out = np.stack([(full[t:t + k] * w[:, 0, :].T.astype(f64)).sum(0) for t in range(x.shape[0])])
    if b is not None:
        out = out + b.astype(f64)
    return (act(out) if act else out), full[full.shape[0] - (k - 1):]


def scan_ref(x, dt, bm, cm, a_log, d, h):
    """MambaMixer.slow_forward's selective scan of one row: x, dt [S, D],
    b, c [S, N], from state h [D, N]; returns (y [S, D], new h)."""
    A = -np.exp(a_log.astype(f64))
    ys = []
    for t in range(x.shape[0]):
        dA = np.exp(A * dt[t, :, None])
        dBu = dt[t, :, None] * bm[t][None, :] * x[t, :, None]
        h = dA * h + dBu
        ys.append(h @ cm[t] + d * x[t])
    return np.stack(ys), h


def ssd_ref(x, dt, bm, cm, a_log, d, dt_bias, h, groups, limit=None):
    """Mamba2's scan of one row as its recurrence (mamba2_selective_state_update,
    token by token; the chunked prefill computes the same): x [S, H*P],
    dt [S, H] (before softplus), b, c [S, G*N], state h [H, P, N]; limit
    (lo, hi) clamps dt as mamba2_chunk_scan does. Returns (y [S, H*P], h)."""
    H, P, N = h.shape
    A = -np.exp(a_log.astype(f64))
    sp = softplus(dt.astype(f64) + dt_bias.astype(f64))
    if limit is not None:
        sp = np.clip(sp, limit[0], limit[1])
    ys = []
    for t in range(x.shape[0]):
        xt = x[t].astype(f64).reshape(H, P)
        bt = np.repeat(bm[t].astype(f64).reshape(groups, N), H // groups, axis=0)  # [H, N]
        ct = np.repeat(cm[t].astype(f64).reshape(groups, N), H // groups, axis=0)
        h = np.exp(sp[t] * A)[:, None, None] * h + (sp[t][:, None] * bt)[:, None, :] * xt[:, :, None]
        ys.append((np.einsum("hpn,hn->hp", h, ct) + d.astype(f64)[:, None] * xt).reshape(-1))
    return np.stack(ys), h


def lightning_ref(x, dt, bm, cm, decay, h, groups):
    """MiniMaxLightningAttention's recurrence (its per-token path; the block
    path computes the same) as ssd_scan with decay: x [S, H*P] the values,
    dt [S, H] taken as given, b, c [S, G*N] the keys and queries, decay [H]
    the slope rates: h_t = exp(-dt·decay)·h + dt·b_t ⊗ x_t, y_t = h_t·c_t, no
    skip. Returns (y [S, H*P], h)."""
    H, P, N = h.shape
    A = -np.asarray(decay, f64)
    ys = []
    for t in range(x.shape[0]):
        xt = x[t].astype(f64).reshape(H, P)
        bt = np.repeat(bm[t].astype(f64).reshape(groups, N), H // groups, axis=0)  # [H, N]
        ct = np.repeat(cm[t].astype(f64).reshape(groups, N), H // groups, axis=0)
        d = dt[t].astype(f64)
        h = np.exp(d * A)[:, None, None] * h + (d[:, None] * bt)[:, None, :] * xt[:, :, None]
        ys.append(np.einsum("hpn,hn->hp", h, ct).reshape(-1))
    return np.stack(ys), h


def gdn_ref(q, k, v, a, b, a_log, dt_bias, h):
    """torch_recurrent_gated_delta_rule (use_qk_l2norm_in_kernel) of one row,
    token by token (torch_chunk_gated_delta_rule computes the same), with
    Qwen3NextGatedDeltaNet's g and beta: q, k [S, Hk, Dk], v [S, Hv, Dv],
    a, b [S, Hv], state h [Hv, Dk, Dv]. Returns (out [S, Hv*Dv], h)."""
    Hv, Dk, _ = h.shape
    R = Hv // q.shape[1]

    def l2(x):
        x = x.astype(f64)
        return x / np.sqrt((x * x).sum(-1, keepdims=True) + 1e-6)
    q = np.repeat(l2(q), R, axis=1) / np.sqrt(Dk)  # repeat_interleave over the heads
    k = np.repeat(l2(k), R, axis=1)
    g = -np.exp(a_log.astype(f64)) * softplus(a.astype(f64) + dt_bias.astype(f64))
    beta = 1 / (1 + np.exp(-b.astype(f64)))
    ys = []
    for t in range(q.shape[0]):
        h = h * np.exp(g[t])[:, None, None]
        mem = np.einsum("hkv,hk->hv", h, k[t])
        delta = (v[t].astype(f64) - mem) * beta[t][:, None]
        h = h + k[t][:, :, None] * delta[:, None, :]
        ys.append(np.einsum("hkv,hk->hv", h, q[t]).reshape(-1))
    return np.stack(ys), h


def dplr_ref(r, lw, k, v, a, b, h):
    """mlx-lm rwkv7.py's _wkv7_step_ops of one row, token by token, decay
    w = exp(lw): r, lw,
    k, a, b [S, H, Dk], v [S, H, Dv], from state h [H, Dk, Dv] (the
    transpose of mlx-lm's [H, Dv, Dk]). Returns (out [S, H, Dv], new h)."""
    st = np.swapaxes(h, 1, 2)  # mlx-lm's state [H, Dv, Dk]
    ys = []
    for t in range(r.shape[0]):
        rt, lt, kt, vt, at, bt = (x[t].astype(f64) for x in (r, lw, k, v, a, b))
        wt = np.exp(lt)
        sab = np.einsum("hvk,hk->hv", st, at)[:, :, None] * bt[:, None, :]
        st = st * wt[:, None, :] + vt[:, :, None] * kt[:, None, :] + sab
        ys.append(np.einsum("hvk,hk->hv", st, rt))
    return np.stack(ys), np.swapaxes(st, 1, 2)


def token_shift_ref(x, prev):
    """RWKV's time shift of one row x [S, C] after the carried token prev
    [1, C]: (out [S, C], new window [1, C])."""
    full = np.concatenate([prev, x.astype(f64)], 0)
    return full[:-1], full[-1:]


def rglru_ref(x, pos0, param, wi, bi, wr, br, h):
    """RecurrentGemmaRglru.forward and _rnn_scan of one row x [S, W] from
    state h [W], the row's first token at position pos0 (reset where the
    position is 0); gates per head block (baddbmm: x_h @ W_h + b_h).
    Returns (out [S, W], new h)."""
    S, W = x.shape
    H, bw, _ = wi.shape
    x = x.astype(f64)
    xh = x.reshape(S, H, bw)
    gi = 1 / (1 + np.exp(-(np.einsum("shi,hij->shj", xh, wi.astype(f64)) + bi.astype(f64)).reshape(S, W)))
    gr = 1 / (1 + np.exp(-(np.einsum("shi,hij->shj", xh, wr.astype(f64)) + br.astype(f64)).reshape(S, W)))
    log_a = -8.0 * gr * softplus(param)
    a = np.exp(log_a)
    mult = np.sqrt(1 - np.exp(2 * log_a))
    reset = (pos0 + np.arange(S) == 0)[:, None]
    mult = np.where(reset, 1.0, mult)
    a = np.where(reset, 0.0, a)
    ys = []
    for t in range(S):
        h = a[t] * h + x[t] * gi[t] * mult[t]
        ys.append(h)
    return np.stack(ys), h


def kda_ref(q, k, v, a, b, a_log, dt_bias, h):
    """recurrent_kimi_delta_attention (use_qk_l2norm_in_kernel) of one row,
    token by token (chunk_kimi_delta_attention computes the same), with
    KimiLinearForgetGate's per-channel g: q, k [S, Hk, Dk], v [S, Hv, Dv],
    a [S, Hv, Dk] (before dt_bias), b [S, Hv], A_log [1, 1, Hv, 1],
    dt_bias [Hv*Dk], state h [Hv, Dk, Dv]. Returns (out [S, Hv*Dv], h)."""
    Hv, Dk, _ = h.shape
    R = Hv // q.shape[1]

    def l2(x):
        x = x.astype(f64)
        return x / np.sqrt((x * x).sum(-1, keepdims=True) + 1e-6)
    q = np.repeat(l2(q), R, axis=1) / np.sqrt(Dk)
    k = np.repeat(l2(k), R, axis=1)
    g = -np.exp(a_log.astype(f64).reshape(Hv, 1)) * softplus(a.astype(f64) + dt_bias.astype(f64).reshape(Hv, Dk))
    beta = 1 / (1 + np.exp(-b.astype(f64)))
    ys = []
    for t in range(q.shape[0]):
        h = h * np.exp(g[t])[:, :, None]
        mem = np.einsum("hkv,hk->hv", h, k[t])
        delta = (v[t].astype(f64) - mem) * beta[t][:, None]
        h = h + k[t][:, :, None] * delta[:, None, :]
        ys.append(np.einsum("hkv,hk->hv", h, q[t]).reshape(-1))
    return np.stack(ys), h


def rms_norm_gated_ref(x, g, w, groups, eps, before):
    x, g = x.astype(f64), g.astype(f64)
    if not before:
        x = x * silu(g)
    sh = x.shape
    xg = x.reshape(sh[:-1] + (groups, sh[-1] // groups))
    y = (xg / np.sqrt((xg * xg).mean(-1, keepdims=True) + eps)).reshape(sh) * w.astype(f64)
    return y * silu(g) if before else y


def cases():
    out = []

    def add(c):
        out.append(c)
        return c

    B, S = "batch", "seq"

    # embedding
    for name, dtype, dim in [("embedding", "f32", 6), ("embedding_f16", "f16", 6), ("embedding_q8_0", "q8_0", 64)]:
        r = rng(name)
        c = add(Case(name, "embedding", "out[b, s] = weight[ids[b, s]] (nn.Embedding); weight stored as %s." % dtype,
                     [("ids", "i32", [B, S])], [B, S, dim], attrs={"num_embeddings": 10, "embedding_dim": dim}))
        w = c.weight("weight", randn(r, (10, dim)), dtype)
        for b, s in [(2, 3), (1, 1)]:
            ids = r.integers(0, 10, (b, s)).astype(np.int32)
            c.call(b, s, [ids], w.astype(f64)[ids])

    # norms
    for name, prim, shape, eps in [("rms_norm", "rms_norm", [B, S, 8], 1e-5),
                                   ("rms_norm_heads", "rms_norm", [B, S, 2, 8], 1e-6),
                                   ("rms_norm_1p", "rms_norm_1p", [B, S, 8], 1e-6)]:
        r = rng(name)
        one_plus = prim == "rms_norm_1p"
        doc = "out = x·rsqrt(mean(x²) + eps)·%s over the last dimension (HF %s)." % (
            "(1 + w)" if one_plus else "w", "GemmaRMSNorm" if one_plus else "LlamaRMSNorm")
        c = add(Case(name, prim, doc, [("x", "f32", shape)], shape, attrs={"eps": eps}))
        w = c.weight("weight", randn(r, (shape[-1],), 0.5) + (0 if one_plus else 1))
        for b, s in [(1, 3), (2, 1)]:
            x = randn(r, [b, s] + shape[2:])
            c.call(b, s, [x], rms_norm(x, w, eps, one_plus))

    name = "rms_normalize"
    r = rng(name)
    c = add(Case(name, "rms_normalize", "out = x·rsqrt(mean(x²) + eps), no weight (HF FalconMambaWeightlessRMSNorm).",
                 [("x", "f32", [B, S, 8])], [B, S, 8], attrs={"eps": 1e-6}))
    for b, s in [(1, 3), (2, 1)]:
        x = randn(r, [b, s, 8])
        c.call(b, s, [x], rms_norm(x, np.ones(8, f32), 1e-6))

    # attn_temperature: Llama 4's query temperature on NoPE layers, per
    # position; floor_scale 2 so that it steps every other position.
    name = "attn_temperature"
    r = rng(name)
    attrs = {"floor_scale": 2.0, "attn_scale": 0.5}
    c = add(Case(name, "attn_temperature", "out = x·(log1p(floor((p + 1)/2))·0.5 + 1), p the token's position "
                 "(Llama4TextAttention's attention temperature tuning, floor_scale 2, attn_scale 0.5).",
                 [("x", "f32", [B, S, 2, 4])], [B, S, 2, 4], attrs=attrs, positions=True, tol=(1e-6, 1e-6)))
    for b, s, pos in [(1, 3, [[0, 1, 2]]), (2, 1, [[3], [9]]), (1, 3, [[4, 5, 6]])]:
        x = randn(r, (b, s, 2, 4))
        p = np.array(pos, np.int32)
        t = np.log1p(np.floor((p.astype(f64) + 1) / 2.0)) * 0.5 + 1
        c.call(b, s, [x], x.astype(f64) * t[:, :, None, None], positions=p)

    # attn_temperature with offset 0: Ministral 3's get_llama_4_attn_scale,
    # 1 + beta·log(1 + floor(p / original_max_position_embeddings)).
    name = "attn_temperature_offset0"
    r = rng(name)
    attrs = {"floor_scale": 2.0, "attn_scale": 0.5, "offset": 0.0}
    c = add(Case(name, "attn_temperature", "out = x·(log1p(floor(p/2))·0.5 + 1), p the token's position "
                 "(Ministral3Attention's get_llama_4_attn_scale, original_max_position_embeddings 2, beta 0.5).",
                 [("x", "f32", [B, S, 2, 4])], [B, S, 2, 4], attrs=attrs, positions=True, tol=(1e-6, 1e-6)))
    for b, s, pos in [(1, 3, [[0, 1, 2]]), (2, 1, [[3], [9]]), (1, 3, [[4, 5, 6]])]:
        x = randn(r, (b, s, 2, 4))
        p = np.array(pos, np.int32)
        t = np.log1p(np.floor(p.astype(f64) / 2.0)) * 0.5 + 1
        c.call(b, s, [x], x.astype(f64) * t[:, :, None, None], positions=p)

    # layer norms: [d] with and without bias, per head as one [heads, d]
    # tensor, per head as a module list
    for name, shape, bias, per_head in [("layer_norm", [B, S, 8], True, None),
                                        ("layer_norm_nobias", [B, S, 8], False, None),
                                        ("layer_norm_heads", [B, S, 3, 8], False, True),
                                        ("layer_norm_head_list", [B, S, 2, 8], True, "norms")]:
        r = rng(name)
        attrs = {"eps": 1e-5, "bias": bias}
        what = "[d]"
        if per_head is not None:
            attrs["per_head"] = per_head
            what = "per head, one [heads, d] tensor (CohereLayerNorm)" if per_head is True else \
                "per head, a module list <m>.norms.<h> (StableLmLayerNormPerHead)"
        c = add(Case(name, "layer_norm", "out = (x - mean)·rsqrt(var + eps)·w%s over the last dimension; weights %s." % (
            " + b" if bias else "", what), [("x", "f32", shape)], shape, attrs=attrs))
        wshape = (shape[2], 8) if per_head is True else (8,)
        if per_head == "norms":
            ws, bs = [], []
            for h in range(shape[2]):
                ws.append(c.weight("norms.%d.weight" % h, randn(r, (8,), 0.5) + 1))
                bs.append(c.weight("norms.%d.bias" % h, randn(r, (8,), 0.5)))
            w, bv = np.stack(ws), np.stack(bs)
        else:
            w = c.weight("weight", randn(r, wshape, 0.5) + 1)
            bv = c.weight("bias", randn(r, wshape, 0.5)) if bias else np.zeros(wshape, f32)
        for b, s in [(1, 3), (2, 1)]:
            x = randn(r, [b, s] + shape[2:], 2) + 0.5
            c.call(b, s, [x], layer_norm(x, w.astype(f64), bv.astype(f64), 1e-5))

    # linear
    for name, bias, dtype in [("linear", False, "f32"), ("linear_bias", True, "f32"),
                              ("linear_f16", True, "f16"), ("linear_bf16", False, "bf16")]:
        r = rng(name)
        c = add(Case(name, "linear", "out = x·Wᵀ%s (nn.Linear); W stored as %s." % (" + b" if bias else "", dtype),
                     [("x", "f32", [B, S, 8])], [B, S, 5], attrs={"out": 5, "bias": bias}))
        w = c.weight("weight", randn(r, (5, 8), 0.5), dtype)
        bv = c.weight("bias", randn(r, (5,)), dtype) if bias else np.zeros(5, f32)
        for b, s in [(1, 4), (3, 1)]:
            x = randn(r, (b, s, 8))
            c.call(b, s, [x], x.astype(f64) @ w.astype(f64).T + bv)

    # linear with layout "transposed": GPT-2's Conv1D, weight [in, out]
    r = rng("linear_transposed")
    c = add(Case("linear_transposed", "linear", "out = x·W + b with W [in, out] (transformers Conv1D, layout transposed).",
                 [("x", "f32", [B, S, 8])], [B, S, 5], attrs={"out": 5, "bias": True, "layout": "transposed"}))
    w = c.weight("weight", randn(r, (8, 5), 0.5))
    bv = c.weight("bias", randn(r, (5,)))
    for b, s in [(1, 4), (3, 1)]:
        x = randn(r, (b, s, 8))
        c.call(b, s, [x], x.astype(f64) @ w.astype(f64) + bv)

    # linear with layout "parameter": the tensor at the path itself, [in, out]
    # (Gemma3MultiModalProjector's torch.matmul(x, mm_input_projection_weight))
    r = rng("linear_parameter")
    c = add(Case("linear_parameter", "linear", "out = x·W with W [in, out] the tensor at the path itself "
                 "(torch.matmul(x, mm_input_projection_weight), layout parameter).",
                 [("x", "f32", [B, S, 8])], [B, S, 5], attrs={"out": 5, "layout": "parameter"}))
    w = c.weight(None, randn(r, (8, 5), 0.5))
    for b, s in [(1, 4), (3, 1)]:
        x = randn(r, (b, s, 8))
        c.call(b, s, [x], x.astype(f64) @ w.astype(f64))

    # position_embedding: the rows of each token's absolute position (GPT-2's wpe)
    r = rng("position_embedding")
    c = add(Case("position_embedding", "position_embedding", "out[b, s] = weight[positions[b, s]] (GPT2Model's wpe(position_ids)).",
                 [("ids", "i32", [B, S])], [B, S, 6], attrs={"num_positions": 10, "embedding_dim": 6}, positions=True))
    w = c.weight("weight", randn(r, (10, 6)))
    for b, s, pos in [(1, 4, [[0, 1, 2, 3]]), (3, 1, [[5], [0], [9]])]:
        ids = r.integers(0, 10, (b, s)).astype(np.int32)
        pos = np.array(pos, np.int32)
        c.call(b, s, [ids], w.astype(f64)[pos], positions=pos)

    # slice: a fused projection's part
    r = rng("slice")
    c = add(Case("slice", "slice", "out = x[..., start:stop] (a part of a fused projection).",
                 [("x", "f32", [B, S, 10])], [B, S, 4], attrs={"start": 3, "stop": 7}))
    for b, s in [(1, 2), (2, 1)]:
        x = randn(r, (b, s, 10))
        c.call(b, s, [x], x[..., 3:7].astype(f64))

    # concat: MLA's q_nope | q_rot, and k_nope | k_rot with k_rot's one head
    # stretched to every head (torch expand, then cat)
    r = rng("concat")
    c = add(Case("concat", "concat", "out = cat(x, y) on the last dimension; y's single head stretches to x's 3 "
                 "(MLA's k_nope | k_rot).",
                 [("x", "f32", [B, S, 3, 5]), ("y", "f32", [B, S, 1, 2])], [B, S, 3, 7]))
    for b, s in [(1, 2), (2, 1)]:
        x, y = randn(r, (b, s, 3, 5)), randn(r, (b, s, 1, 2))
        c.call(b, s, [x, y], np.concatenate([x, np.broadcast_to(y, (b, s, 3, 2))], -1).astype(f64))

    # heads
    r = rng("heads")
    c = add(Case("heads", "heads", "[..., n·d] → [..., n, d]: the last dimension split into n heads.",
                 [("x", "f32", [B, S, 12])], [B, S, 3, 4], attrs={"n": 3}))
    for b, s in [(1, 2), (2, 1)]:
        x = randn(r, (b, s, 12))
        c.call(b, s, [x], x.reshape(b, s, 3, 4))

    # rope
    ropes = [
        ("rope", {"theta": 10000.0}, inv_freq_default(10000.0, 8), 1.0, "default"),
        ("rope_linear", {"theta": 10000.0, "scaling": {"rope_type": "linear", "factor": 4.0}},
         (inv_freq_default(10000.0, 8).astype(f64) / 4).astype(f32), 1.0, "linear, factor 4"),
        ("rope_llama3", {"theta": 500000.0, "scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                        "high_freq_factor": 4.0, "original_max_position_embeddings": 64}},
         inv_freq_llama3(500000.0, 16, 8.0, 1.0, 4.0, 64), 1.0, "llama3"),
    ]
    yinv, yscale = inv_freq_yarn(10000.0, 16, 4.0, 32)
    ropes.append(("rope_yarn", {"theta": 10000.0, "scaling": {"rope_type": "yarn", "factor": 4.0,
                                                               "original_max_position_embeddings": 32}},
                  yinv, yscale, "yarn, factor 4, attention_factor 0.1·ln(4) + 1"))
    # proportional (Gemma 4's full-attention layers): the whole head
    # rotates, only its first int(0.25·16 // 2) = 2 frequencies turn (the
    # default table's over head_dim), the others are 0; all / factor 2.
    pinv = inv_freq_default(1000000.0, 16).copy()
    pinv[2:] = 0
    pinv = (pinv / f32(2)).astype(f32)
    ropes.append(("rope_proportional", {"theta": 1000000.0, "scaling": {"rope_type": "proportional",
                                                                         "partial_rotary_factor": 0.25, "factor": 2.0}},
                  pinv, 1.0, "proportional, partial_rotary_factor 0.25, factor 2"))
    for name, attrs, inv, scale, what in ropes:
        r = rng(name)
        d = 2 * len(inv)
        c = add(Case(name, "rope", "RoPE (%s scaling), half-split: out = x·cos + rotate_half(x)·sin, "
                     "angle p·inv_freq in f32 (HF apply_rotary_pos_emb)." % what,
                     [("x", "f32", [B, S, 2, d])], [B, S, 2, d], attrs=attrs, positions=True, tol=(2e-5, 1e-5)))
        for b, s, pos in [(1, 3, [[0, 1, 2]]), (2, 1, [[7], [130]])]:
            x = randn(r, (b, s, 2, d))
            pos = np.array(pos, np.int32)
            c.call(b, s, [x], rope(x, pos, inv, scale), positions=pos)

    # rope layouts: partial rotary (Phi-3, StableLM), GPT-J interleaved
    # pairs (Cohere, Ernie 4.5), both
    for name, d, rd, inter, what in [("rope_partial", 16, 6, False, "partial: rotary_dim 6 of head_dim 16, half-split"),
                                     ("rope_interleaved", 8, None, True, "interleaved GPT-J pairs"),
                                     ("rope_interleaved_partial", 12, 8, True, "interleaved pairs, rotary_dim 8 of 12")]:
        r = rng(name)
        attrs = {"theta": 10000.0}
        if rd is not None:
            attrs["rotary_dim"] = rd
        if inter:
            attrs["interleaved"] = True
        c = add(Case(name, "rope", "RoPE, %s: only x[..., :rotary_dim] rotates, the rest passes through "
                     "(HF apply_rotary_pos_emb of Phi3 / Cohere)." % what,
                     [("x", "f32", [B, S, 2, d])], [B, S, 2, d], attrs=attrs, positions=True, tol=(2e-5, 1e-5)))
        inv = inv_freq_default(10000.0, rd or d)
        for b, s, pos in [(1, 3, [[0, 1, 2]]), (2, 1, [[7], [130]])]:
            x = randn(r, (b, s, 2, d))
            pos = np.array(pos, np.int32)
            c.call(b, s, [x], rope(x, pos, inv, interleaved=inter), positions=pos)

    # multimodal RoPE (Qwen2-VL, Qwen3-VL): each frequency turns by one axis
    # of the token's (t, h, w) position. The reference follows HF: every
    # axis's angles p·inv_freq in f32, emb = [freqs, freqs] per axis, then
    # apply_multimodal_rotary_pos_emb's split of the head into
    # mrope_section·2 chunks, chunk i from axis i mod 3; or Qwen3-VL's
    # apply_interleaved_mrope on the freqs before emb.
    for name, sec, inter in [("rope_mrope", [1, 3, 2], False), ("rope_mrope_interleaved", [2, 2, 2], True)]:
        r = rng(name)
        d = 12
        attrs = {"theta": 10000.0, "mrope_section": sec}
        if inter:
            attrs["mrope_interleaved"] = True
        c = add(Case(name, "rope", "multimodal RoPE, mrope_section %s%s: frequency i turns by one axis of the token's "
                     "(temporal, height, width) position (HF %s)." % (sec, ", interleaved" if inter else "",
                     "apply_interleaved_mrope" if inter else "apply_multimodal_rotary_pos_emb"),
                     [("x", "f32", [B, S, 2, d])], [B, S, 2, d], attrs=attrs, positions=True, rope_positions=True,
                     tol=(2e-5, 1e-5)))
        inv = inv_freq_default(10000.0, d)
        for b, s_, pos3 in [(1, 4, [[[0, 3, 3, 5]], [[0, 3, 4, 5]], [[0, 3, 3, 9]]]),
                            (2, 1, [[[7], [130]], [[9], [130]], [[11], [2]]])]:
            x = randn(r, (b, s_, 2, d))
            pos3 = np.array(pos3, np.int32)                       # [3, B, S]
            ang = (pos3.astype(f32)[..., None] * inv).astype(f32)  # [3, B, S, d/2]
            if inter:
                fr = ang[0].copy()
                for ax in (1, 2):
                    idx = slice(ax, sec[ax] * 3, 3)
                    fr[..., idx] = ang[ax][..., idx]
                emb = np.concatenate([fr, fr], -1).astype(f64)
            else:
                full = np.concatenate([ang, ang], -1).astype(f64)  # [3, B, S, d]
                chunks, at = [], 0
                for i, w in enumerate(sec * 2):
                    chunks.append(full[i % 3][..., at:at + w])
                    at += w
                emb = np.concatenate(chunks, -1)
            emb = emb[:, :, None, :]
            xf = x.astype(f64)
            rot = np.concatenate([-xf[..., d // 2:], xf[..., :d // 2]], -1)
            want = xf * np.cos(emb) + rot * np.sin(emb)
            c.call(b, s_, [x], want, positions=pos3[0], rope_positions=pos3)

    # rope tables chosen per sequence by its length L (last position + 1):
    # longrope (short factors while L <= original max, else long) and
    # dynamic NTK (the base grows with L beyond max_position).
    short, long_ = [1.0, 1.5, 2.0, 3.0], [2.0, 4.0, 8.0, 16.0]
    r = rng("rope_longrope")
    c = add(Case("rope_longrope", "rope", "RoPE longrope (Phi-3): short_factor while the sequence length L <= "
                 "original_max_position_embeddings (4), else long_factor; factor max_position / original = 4, "
                 "attention_factor sqrt(1 + ln 4 / ln 4) on cos and sin.",
                 [("x", "f32", [B, S, 2, 8])], [B, S, 2, 8],
                 attrs={"theta": 10000.0, "max_position": 16,
                        "scaling": {"rope_type": "longrope", "short_factor": short, "long_factor": long_,
                                    "original_max_position_embeddings": 4}},
                 positions=True, tol=(2e-5, 1e-5)))
    scale = math.sqrt(1 + math.log(4) / math.log(4))
    tabs = {False: inv_freq_longrope(10000.0, 8, short), True: inv_freq_longrope(10000.0, 8, long_)}
    for b, s, pos in [(1, 3, [[0, 1, 2]]), (2, 1, [[3], [9]]), (1, 3, [[4, 5, 6]])]:
        x = randn(r, (b, s, 2, 8))
        pos = np.array(pos, np.int32)
        inv = np.stack([tabs[int(p.max()) + 1 > 4] for p in pos])
        c.call(b, s, [x], rope(x, pos, inv, scale), positions=pos)

    r = rng("rope_dynamic")
    c = add(Case("rope_dynamic", "rope", "RoPE dynamic NTK, factor 2, max_position 4: the default table while "
                 "L <= 4, else base theta·(2L/4 - 1)^(8/6) (HF dynamic_rope_update).",
                 [("x", "f32", [B, S, 2, 8])], [B, S, 2, 8],
                 attrs={"theta": 10000.0, "max_position": 4, "scaling": {"rope_type": "dynamic", "factor": 2.0}},
                 positions=True, tol=(2e-5, 1e-5)))
    for b, s, pos in [(1, 3, [[0, 1, 2]]), (2, 1, [[3], [9]]), (1, 3, [[4, 5, 6]])]:
        x = randn(r, (b, s, 2, 8))
        pos = np.array(pos, np.int32)
        inv = np.stack([inv_freq_dynamic(10000.0, 8, 2.0, 4, int(p.max()) + 1) if int(p.max()) + 1 > 4
                        else inv_freq_default(10000.0, 8) for p in pos])
        c.call(b, s, [x], rope(x, pos, inv), positions=pos)

    # attention: each call writes its keys and values to the KV cache and
    # attends over everything its sequence (slot) holds.
    # (Cache sizes differ so that all cases fit one module: see primModules
    # in prims_test.go.)
    atts = [
        ("attention", 4, 2, 8, {}, "GQA 4 query heads on 2 kv heads, default scale d^-0.5"),
        ("attention_mqa_softcap", 2, 1, 8, {"scale": 0.5, "softcap": 2.0},
         "MQA, scale 0.5, soft-cap 2 (Gemma 2)"),
        ("attention_window", 2, 2, 6, {"window": 2}, "MHA, sliding window of 2 tokens"),
        ("attention_sinks", 4, 2, 7, {"window": 2, "sinks": True},
         "GQA 4 on 2, sliding window of 2 tokens, per-head sinks (GptOss)"),
        ("attention_chunk", 4, 2, 9, {"chunk": 2},
         "GQA 4 on 2, chunks of 2 positions (Llama 4's chunked attention: position 3 sees 2 and 3, position 2 "
         "only itself)"),
        ("attention_tile", 6, 2, 10, {"kv_repeat": "tile"},
         "6 query heads on 2 kv heads tiled: query head h reads kv head h mod 2 (JetMoeAttention's k.repeat)"),
        ("attention_alibi", 4, 2, 11, {"alibi": [0.5, 0.25, 0.125, 0.1875]},
         "GQA 4 on 2, ALiBi slopes 0.5, 0.25, 0.125, 0.1875 on the key positions (BLOOM's build_alibi_tensor)"),
    ]
    for name, H, KVH, max_len, attrs, what in atts:
        r = rng(name)
        D = 8
        c = add(Case(name, "attention", "softmax(softcap(q·kᵀ·scale) + causal mask)·v with the KV cache (%s); "
                     "calls: prefill of slot 0, prefill of slot 1, ragged decode of both." % what,
                     [("q", "f32", [B, S, H, D]), ("k", "f32", [B, S, KVH, D]), ("v", "f32", [B, S, KVH, D])],
                     [B, S, H * D], attrs=attrs, positions=True, cache={"slots": 2, "max_len": max_len},
                     tol=(2e-5, 1e-5)))
        sinks = None
        if attrs.pop("sinks", False):
            # One logit per query head, large enough to take real mass, and
            # one above every score (its max is the sink's) to test the
            # max-subtraction.
            sinks = c.weight(None, np.array([0.5, -1.0, 2.0, 9.0], f32)[:H])
        kv = KVCache()
        for b, s, pos, slots in [(1, 3, [[0, 1, 2]], [0]), (1, 2, [[0, 1]], [1]), (2, 1, [[3], [2]], [0, 1])]:
            q, k, v = randn(r, (b, s, H, D)), randn(r, (b, s, KVH, D)), randn(r, (b, s, KVH, D))
            want = kv.attend(q, k, v, pos, slots, attrs.get("scale"), attrs.get("softcap", 0.0), attrs.get("window"), sinks,
                             attrs.get("chunk"), attrs.get("kv_repeat") == "tile", attrs.get("alibi"))
            c.call(b, s, [q, k, v], want, positions=np.array(pos, np.int32), slots=np.array(slots, np.int32))

    # blocks (Gemma 3's image tokens): a query in a run of 1s of the mask
    # sees its run's later keys in a prefill; decode steps stay causal.
    for name, max_len, attrs, what in [
            ("attention_blocks", 12, {}, "blocks: runs 1-3 and 5 of slot 0's first chunk, 0-1 of slot 1's"),
            ("attention_blocks_window", 13, {"window": 2},
             "blocks and a sliding window of 2: a block's later keys, within the window's lower bound")]:
        r = rng(name)
        H, KVH, D = 4, 2, 8
        c = add(Case(name, "attention", "softmax(q·kᵀ·scale + mask)·v with the KV cache, the mask causal or, for a "
                     "query of a block (a run of consecutive 1s of blocks), its block's later keys too (%s); calls: "
                     "prefill of slot 0, prefill of slot 1, slot 0's second chunk, ragged decode of both (causal)." % what,
                     [("q", "f32", [B, S, H, D]), ("k", "f32", [B, S, KVH, D]), ("v", "f32", [B, S, KVH, D]),
                      ("blocks", "i1", [B, S])],
                     [B, S, H * D], attrs=attrs, positions=True, cache={"slots": 2, "max_len": max_len},
                     tol=(2e-5, 1e-5)))
        kv = KVCache()
        for b, s, pos, slots, m in [(1, 6, [[0, 1, 2, 3, 4, 5]], [0], [[0, 1, 1, 1, 0, 1]]),
                                    (1, 3, [[0, 1, 2]], [1], [[1, 1, 0]]),
                                    (1, 4, [[6, 7, 8, 9]], [0], [[1, 1, 0, 1]]),
                                    (2, 1, [[10], [3]], [0, 1], [[1], [1]])]:
            q, k, v = randn(r, (b, s, H, D)), randn(r, (b, s, KVH, D)), randn(r, (b, s, KVH, D))
            m = np.array(m, np.int32)
            want = kv.attend(q, k, v, pos, slots, window=attrs.get("window"), blocks=m)
            c.call(b, s, [q, k, v, m], want, positions=np.array(pos, np.int32), slots=np.array(slots, np.int32))

    # MLA (DeepSeek-V2, MiniCPM3): keys of qk_nope + qk_rope = 6 + 4 dims,
    # values of v_head_dim 6, in two cache globals of their own widths.
    name, H, D, DV = "attention_mla", 3, 10, 6
    r = rng(name)
    attrs = {"scale": 10 ** -0.5 * 1.25}
    c = add(Case(name, "attention", "softmax(q·kᵀ·scale + causal mask)·v with the KV cache, MLA: keys of width 10, "
                 "values of width 6 (v_head_dim), 3 heads, scale 10^-0.5·1.25; "
                 "calls: prefill of slot 0, prefill of slot 1, ragged decode of both.",
                 [("q", "f32", [B, S, H, D]), ("k", "f32", [B, S, H, D]), ("v", "f32", [B, S, H, DV])],
                 [B, S, H * DV], attrs=attrs, positions=True, cache={"slots": 2, "max_len": 5},
                 tol=(2e-5, 1e-5)))
    kv = KVCache()
    for b, s, pos, slots in [(1, 3, [[0, 1, 2]], [0]), (1, 2, [[0, 1]], [1]), (2, 1, [[3], [2]], [0, 1])]:
        q, k, v = randn(r, (b, s, H, D)), randn(r, (b, s, H, D)), randn(r, (b, s, H, DV))
        want = kv.attend(q, k, v, pos, slots, attrs["scale"])
        c.call(b, s, [q, k, v], want, positions=np.array(pos, np.int32), slots=np.array(slots, np.int32))

    # State-space primitives (a window, a recurrent state; state.go): the
    # calls check the slot contract. Slot 0 prefills 6 tokens; slot 1
    # decodes the same 6 tokens one by one (prefill == decode: both within
    # 5e-6 of numpy); a batch of both at position 6; a batch where slot 1
    # is a padded row (its state must stay), then slot 1's real step 7; a
    # new sequence at position 0 in slot 0 (zero state, not slot 0's
    # leftovers), then its second chunk (state carried chunk to chunk).
    def state_calls(c, r, row_inputs, step):
        """row_inputs(b, s) -> list of input arrays [b, s, ...]; step(slot,
        pos, inputs of one row [s, ...], pad) -> output [s, ...]."""
        first = row_inputs(1, 6)
        plan = [(1, 6, [[0, 1, 2, 3, 4, 5]], [0], [False], first)]
        for t in range(6):
            plan.append((1, 1, [[t]], [1], [False], [v[:, t:t + 1] for v in first]))
        both = row_inputs(1, 1)
        plan.append((2, 1, [[6], [6]], [0, 1], [False, False], [np.concatenate([v, v], 0) for v in both]))
        plan.append((2, 1, [[7], [7]], [0, 1], [False, True], row_inputs(2, 1)))
        plan.append((1, 1, [[7]], [1], [False], row_inputs(1, 1)))
        plan.append((1, 3, [[0, 1, 2]], [0], [False], row_inputs(1, 3)))
        plan.append((1, 3, [[3, 4, 5]], [0], [False], row_inputs(1, 3)))
        for b, s, pos, slots, pads, ins in plan:
            want = np.stack([step(slots[i], pos[i][0], [v[i] for v in ins], pads[i]) for i in range(b)])
            c.call(b, s, ins, want, positions=np.array(pos, np.int32), slots=np.array(slots, np.int32))

    name, K, C = "conv1d", 4, 3
    r = rng(name)
    c = add(Case(name, "conv1d", "causal depthwise conv, kernel 4 over 3 channels, bias, act silu, window state "
                 "[3, 3]; calls: prefill == decode, batched, a padded row, a new sequence, chunked prefill.",
                 [("x", "f32", [B, S, C])], [B, S, C], attrs={"kernel": K, "bias": True, "act": "silu"},
                 positions=True, cache={"slots": 2, "max_len": 16}, tol=(5e-6, 0)))
    cw = c.weight("weight", randn(r, (C, 1, K), 0.5))
    cb = c.weight("bias", randn(r, (C,), 0.5))
    win = SlotState(lambda: np.zeros((K - 1, C)))

    def conv_step(slot, pos, ins, pad):
        out, w2 = conv1d_ref(ins[0], cw, cb, silu, win.get(slot, pos))
        win.put(slot, w2, pad)
        return out
    state_calls(c, r, lambda b, s: [randn(r, (b, s, C))], conv_step)

    name, D, N = "selective_scan", 4, 3
    r = rng(name)
    c = add(Case(name, "selective_scan", "Mamba1 selective scan, d 4, state 3, A = -exp(A_log), D skip, state [4, 3] "
                 "f32; calls: prefill == decode, batched, a padded row, a new sequence, chunked prefill.",
                 [("x", "f32", [B, S, D]), ("dt", "f32", [B, S, D]), ("b", "f32", [B, S, N]), ("c", "f32", [B, S, N])],
                 [B, S, D], positions=True, cache={"slots": 2, "max_len": 16}, tol=(5e-6, 0)))
    a_log = c.weight("A_log", np.log(np.tile(np.arange(1, N + 1, dtype=f32), (D, 1)) * (1 + 0.1 * randn(r, (D, N)) ** 2)))
    dsk = c.weight("D", randn(r, (D,), 0.5))
    hs = SlotState(lambda: np.zeros((D, N)))

    def scan_step(slot, pos, ins, pad):
        x, dt, bm, cm = (v.astype(f64) for v in ins)
        y, h2 = scan_ref(x, dt, bm, cm, a_log, dsk.astype(f64), hs.get(slot, pos))
        hs.put(slot, h2, pad)
        return y

    def scan_inputs(b, s):
        dt = softplus(randn(r, (b, s, D)) - 1).astype(f32)
        return [randn(r, (b, s, D)), dt, randn(r, (b, s, N)), randn(r, (b, s, N))]
    state_calls(c, r, scan_inputs, scan_step)

    # The Mamba2 SSD scan: 4 heads of head_dim 2 in 2 groups (heads 2h, 2h+1
    # share group h's B and C), state 3, chunk 4: the 6-token prefill is two
    # chunks, the second padded; the 3-token chunks one padded chunk each.
    name, H, P, G, N = "ssd_scan", 4, 2, 2, 3
    r = rng(name)
    c = add(Case(name, "ssd_scan", "Mamba2 SSD scan, 4 heads × head_dim 2, 2 groups, state 3, chunk 4, "
                 "A = -exp(A_log) per head, dt = softplus(dt + dt_bias), D skip, state [4, 2, 3] f32; calls: "
                 "prefill == decode, batched, a padded row, a new sequence, chunked prefill.",
                 [("x", "f32", [B, S, H * P]), ("dt", "f32", [B, S, H]), ("b", "f32", [B, S, G * N]),
                  ("c", "f32", [B, S, G * N])], [B, S, H * P],
                 attrs={"heads": H, "groups": G, "chunk": 4, "dt_min": 0.0},
                 positions=True, cache={"slots": 2, "max_len": 16}, tol=(5e-6, 0)))
    a_log = c.weight("A_log", np.log(np.arange(1, H + 1, dtype=f32) * (1 + 0.1 * randn(r, (H,)) ** 2)))
    dsk = c.weight("D", randn(r, (H,), 0.5))
    dtb = c.weight("dt_bias", randn(r, (H,), 0.5))
    hs2 = SlotState(lambda: np.zeros((H, P, N)))

    def ssd_step(slot, pos, ins, pad):
        y, h2 = ssd_ref(*ins, a_log, dsk, dtb, hs2.get(slot, pos), G)
        hs2.put(slot, h2, pad)
        return y

    def ssd_inputs(b, s):
        return [randn(r, (b, s, H * P)), randn(r, (b, s, H)), randn(r, (b, s, G * N)), randn(r, (b, s, G * N))]
    state_calls(c, r, ssd_inputs, ssd_step)

    # The prefill's dt clamp (time_step_limit), binding: one group, chunk 2
    # (a 5-token call is three chunks), two prefills carrying the state.
    name, H, P, G, N = "ssd_scan_clamp", 2, 2, 1, 2
    r = rng(name)
    c = add(Case(name, "ssd_scan", "Mamba2 SSD scan prefill with dt clamped to [0.3, 0.8] (time_step_limit), "
                 "2 heads × head_dim 2, 1 group, state 2, chunk 2; a 5-token prefill, then 3 more tokens.",
                 [("x", "f32", [B, S, H * P]), ("dt", "f32", [B, S, H]), ("b", "f32", [B, S, G * N]),
                  ("c", "f32", [B, S, G * N])], [B, S, H * P],
                 attrs={"heads": H, "groups": G, "chunk": 2, "dt_min": 0.3, "dt_max": 0.8},
                 positions=True, cache={"slots": 1, "max_len": 16}, tol=(5e-6, 0)))
    a_log = c.weight("A_log", np.log(np.arange(1, H + 1, dtype=f32)))
    dsk = c.weight("D", randn(r, (H,), 0.5))
    dtb = c.weight("dt_bias", randn(r, (H,), 0.5))
    h = np.zeros((H, P, N))
    for pos, s_ in [(0, 5), (5, 3)]:
        ins = [randn(r, (1, s_, H * P)), randn(r, (1, s_, H)) * 2, randn(r, (1, s_, G * N)), randn(r, (1, s_, G * N))]
        y, h = ssd_ref(*(v[0] for v in ins), a_log, dsk, dtb, h, G, limit=(f32(0.3), f32(0.8)))
        c.call(1, s_, ins, y[None], positions=np.arange(pos, pos + s_, dtype=np.int32)[None], slots=np.array([0], np.int32))

    # Lightning attention (MiniMax) as ssd_scan with decay: 3 heads, each its
    # own group (keys b and queries c per head), head_dim 2, state 2, chunk 4,
    # the rates given (MiniMax's slope_rate), dt 1 as MiniMax feeds it (and
    # one call with other dt), no weights, no skip.
    name, H, P, G, N = "ssd_scan_decay", 3, 2, 3, 2
    r = rng(name)
    decay = [0.5, 0.125, 0.03125 * 0.7]
    c = add(Case(name, "ssd_scan", "lightning attention: the SSD scan with decay [0.5, 0.125, 0.021875] given in "
                 "the call (A = -decay, dt as given, no D, no weights), 3 heads × head_dim 2, 3 groups, state 2, "
                 "chunk 4, state [3, 2, 2] f32; calls: prefill == decode, batched, a padded row, a new sequence, "
                 "chunked prefill.",
                 [("x", "f32", [B, S, H * P]), ("dt", "f32", [B, S, H]), ("b", "f32", [B, S, G * N]),
                  ("c", "f32", [B, S, G * N])], [B, S, H * P],
                 attrs={"heads": H, "groups": G, "chunk": 4, "decay": decay},
                 positions=True, cache={"slots": 2, "max_len": 16}, tol=(5e-6, 0)))
    hs3 = SlotState(lambda: np.zeros((H, P, N)))
    dec32 = np.asarray(decay, f32)

    def lightning_step(slot, pos, ins, pad):
        y, h2 = lightning_ref(*ins, dec32, hs3.get(slot, pos), G)
        hs3.put(slot, h2, pad)
        return y

    def lightning_inputs(b, s):
        dt = np.ones((b, s, H), f32) if s > 1 or b > 1 else np.round(1 + 0.5 * r.random((b, s, H)), 3).astype(f32)
        return [randn(r, (b, s, H * P)), dt, randn(r, (b, s, G * N)), randn(r, (b, s, G * N))]
    state_calls(c, r, lightning_inputs, lightning_step)

    # The gated delta rule: 2 key heads of d_k 3 serving 4 value heads of d_v 2
    # (value heads 0, 1 read key head 0), chunk 4: the 6-token prefill is two
    # chunks, the second padded; the 3-token chunks one padded chunk each.
    name, HK, HV, DK, DV = "gated_delta_rule", 2, 4, 3, 2
    r = rng(name)
    c = add(Case(name, "gated_delta_rule", "gated delta rule, 2 key heads × d_k 3, 4 value heads × d_v 2, chunk 4, "
                 "q and k L2-normalised, g = -exp(A_log)·softplus(a + dt_bias), beta = sigmoid(b), state [4, 3, 2] "
                 "f32; calls: prefill == decode, batched, a padded row, a new sequence, chunked prefill.",
                 [("q", "f32", [B, S, HK, DK]), ("k", "f32", [B, S, HK, DK]), ("v", "f32", [B, S, HV, DV]),
                  ("a", "f32", [B, S, HV]), ("b", "f32", [B, S, HV])], [B, S, HV * DV],
                 attrs={"chunk": 4}, positions=True, cache={"slots": 2, "max_len": 16}, tol=(1e-5, 0)))
    a_log = c.weight("A_log", np.log(np.arange(1, HV + 1, dtype=f32) * (1 + 0.1 * randn(r, (HV,)) ** 2)))
    dtb = c.weight("dt_bias", randn(r, (HV,), 0.5))
    hs3 = SlotState(lambda: np.zeros((HV, DK, DV)))

    def gdn_step(slot, pos, ins, pad):
        y, h2 = gdn_ref(*ins, a_log, dtb, hs3.get(slot, pos))
        hs3.put(slot, h2, pad)
        return y

    def gdn_inputs(b, s):
        return [randn(r, (b, s, HK, DK)), randn(r, (b, s, HK, DK)), randn(r, (b, s, HV, DV)),
                randn(r, (b, s, HV)), randn(r, (b, s, HV))]
    state_calls(c, r, gdn_inputs, gdn_step)

    # Kimi Delta Attention: the gated delta rule with one decay per key
    # channel (decay "channel"), 2 heads × d_k 3, d_v 2, chunk 4, A_log and
    # dt_bias as KimiLinearForgetGate stores them ([1, 1, 2, 1], [6]).
    name, HK, HV, DK, DV = "gated_delta_rule_channel", 2, 2, 3, 2
    r = rng(name)
    c = add(Case(name, "gated_delta_rule", "Kimi Delta Attention: gated delta rule with per-channel decay, 2 heads × "
                 "d_k 3, d_v 2, chunk 4, g = -exp(A_log_h)·softplus(a + dt_bias) per key channel, beta = sigmoid(b), "
                 "state [2, 3, 2] f32; calls: prefill == decode, batched, a padded row, a new sequence, chunked prefill.",
                 [("q", "f32", [B, S, HK, DK]), ("k", "f32", [B, S, HK, DK]), ("v", "f32", [B, S, HV, DV]),
                  ("a", "f32", [B, S, HV, DK]), ("b", "f32", [B, S, HV])], [B, S, HV * DV],
                 attrs={"chunk": 4, "decay": "channel"}, positions=True, cache={"slots": 2, "max_len": 16}, tol=(1e-5, 0)))
    a_log_c = c.weight("A_log", np.log(np.array([0.5, 2.0], f32) * (1 + 0.1 * randn(r, (HV,)) ** 2)).reshape(1, 1, HV, 1))
    dtb_c = c.weight("dt_bias", randn(r, (HV * DK,), 0.5))
    hs5 = SlotState(lambda: np.zeros((HV, DK, DV)))

    def kda_step(slot, pos, ins, pad):
        y, h2 = kda_ref(*ins, a_log_c, dtb_c, hs5.get(slot, pos))
        hs5.put(slot, h2, pad)
        return y

    def kda_inputs(b, s):
        return [randn(r, (b, s, HK, DK)), randn(r, (b, s, HK, DK)), randn(r, (b, s, HV, DV)),
                randn(r, (b, s, HV, DK)), randn(r, (b, s, HV))]
    state_calls(c, r, kda_inputs, kda_step)

    # Long chunks: one key head for 2 value heads, chunk 8 (the triangular
    # solve takes 3 squarings): a 19-token prefill (three chunks, the last
    # padded), a 13-token prefill carrying its state, then two decode steps.
    name, HK, HV, DK, DV = "gated_delta_rule_long", 1, 2, 4, 3
    r = rng(name)
    c = add(Case(name, "gated_delta_rule", "gated delta rule, 1 key head × d_k 4, 2 value heads × d_v 3, chunk 8; "
                 "a 19-token prefill (3 chunks), a 13-token prefill carrying the state, two decode steps.",
                 [("q", "f32", [B, S, HK, DK]), ("k", "f32", [B, S, HK, DK]), ("v", "f32", [B, S, HV, DV]),
                  ("a", "f32", [B, S, HV]), ("b", "f32", [B, S, HV])], [B, S, HV * DV],
                 attrs={"chunk": 8}, positions=True, cache={"slots": 1, "max_len": 40}, tol=(1e-5, 0)))
    a_log = c.weight("A_log", np.log(np.array([0.05, 0.6], f32)))
    dtb = c.weight("dt_bias", randn(r, (HV,), 0.5))
    h = np.zeros((HV, DK, DV))
    pos = 0
    for s_ in (19, 13, 1, 1):
        ins = [randn(r, (1, s_, HK, DK)), randn(r, (1, s_, HK, DK)), randn(r, (1, s_, HV, DV)),
               randn(r, (1, s_, HV)), randn(r, (1, s_, HV)) + 1]
        y, h = gdn_ref(*(v[0] for v in ins), a_log, dtb, h)
        c.call(1, s_, ins, y[None], positions=np.arange(pos, pos + s_, dtype=np.int32)[None], slots=np.array([0], np.int32))
        pos += s_

    # RWKV's token shift: the previous token, a window of one.
    name, C = "token_shift", 3
    r = rng(name)
    c = add(Case(name, "token_shift", "RWKV time shift over 3 channels, window state [1, 3]; calls: prefill == "
                 "decode, batched, a padded row, a new sequence, chunked prefill.",
                 [("x", "f32", [B, S, C])], [B, S, C], positions=True, cache={"slots": 2, "max_len": 16}, tol=(1e-6, 0)))
    sw = SlotState(lambda: np.zeros((1, C)))

    def shift_step(slot, pos, ins, pad):
        out, w2 = token_shift_ref(ins[0], sw.get(slot, pos))
        sw.put(slot, w2, pad)
        return out
    state_calls(c, r, lambda b, s: [randn(r, (b, s, C))], shift_step)

    # RWKV-7's wkv7: 2 heads, d_k 3, d_v 2, chunk 4 (the 6-token prefill is
    # two chunks, the second padded); a and b independent (RWKV-7 has a =
    # -kk, b = kk·iclr), log decays in (-0.61, 0) as -0.606531·sigmoid(·).
    def dplr_inputs(r, H, DK, DV):
        def make(b, s):
            wv = (-0.606531 / (1 + np.exp(-randn(r, (b, s, H, DK), 2.0).astype(f64)))).astype(f32)
            return [randn(r, (b, s, H, DK)), wv, randn(r, (b, s, H, DK), 0.5), randn(r, (b, s, H, DV)),
                    randn(r, (b, s, H, DK), 0.4), randn(r, (b, s, H, DK), 0.4)]
        return make
    name, H, DK, DV = "dplr_delta_rule", 2, 3, 2
    r = rng(name)
    c = add(Case(name, "dplr_delta_rule", "RWKV-7 wkv7 (generalized delta rule, diagonal-plus-low-rank transition), "
                 "2 heads × d_k 3, d_v 2, chunk 4, state [2, 3, 2] f32; calls: prefill == decode, batched, a padded "
                 "row, a new sequence, chunked prefill.",
                 [("r", "f32", [B, S, H, DK]), ("log_w", "f32", [B, S, H, DK]), ("k", "f32", [B, S, H, DK]),
                  ("v", "f32", [B, S, H, DV]), ("a", "f32", [B, S, H, DK]), ("b", "f32", [B, S, H, DK])],
                 [B, S, H, DV], attrs={"chunk": 4}, positions=True, cache={"slots": 2, "max_len": 16}, tol=(1e-5, 0)))
    hs6 = SlotState(lambda: np.zeros((H, DK, DV)))

    def dplr_step(slot, pos, ins, pad):
        y, h2 = dplr_ref(*ins, hs6.get(slot, pos))
        hs6.put(slot, h2, pad)
        return y
    state_calls(c, r, dplr_inputs(r, H, DK, DV), dplr_step)

    # Long chunks: 1 head, d_k 4, d_v 3, chunk 8 (3 squarings): a 19-token
    # prefill (three chunks, the last padded), a 13-token prefill carrying
    # the state, then two decode steps.
    name, H, DK, DV = "dplr_delta_rule_long", 1, 4, 3
    r = rng(name)
    c = add(Case(name, "dplr_delta_rule", "RWKV-7 wkv7, 1 head × d_k 4, d_v 3, chunk 8; a 19-token prefill (3 chunks), "
                 "a 13-token prefill carrying the state, two decode steps.",
                 [("r", "f32", [B, S, H, DK]), ("log_w", "f32", [B, S, H, DK]), ("k", "f32", [B, S, H, DK]),
                  ("v", "f32", [B, S, H, DV]), ("a", "f32", [B, S, H, DK]), ("b", "f32", [B, S, H, DK])],
                 [B, S, H, DV], attrs={"chunk": 8}, positions=True, cache={"slots": 1, "max_len": 40}, tol=(1e-5, 0)))
    make = dplr_inputs(r, H, DK, DV)
    h = np.zeros((H, DK, DV))
    pos = 0
    for s_ in (19, 13, 1, 1):
        ins = make(1, s_)
        y, h = dplr_ref(*(v[0] for v in ins), h)
        c.call(1, s_, ins, y[None], positions=np.arange(pos, pos + s_, dtype=np.int32)[None], slots=np.array([0], np.int32))
        pos += s_

    # The RG-LRU: width 6 in 2 head blocks of 3 (block-diagonal gates), a
    # recurrent_param spread so that decays range from fast to slow; the
    # 6-token prefill takes three scan rounds, the chunked prefill's second
    # chunk carries the state, and the new sequence resets at position 0.
    name, H, BW = "rg_lru", 2, 3
    W = H * BW
    r = rng(name)
    c = add(Case(name, "rg_lru", "RG-LRU, width 6 in 2 head blocks of 3, gates sigmoid(x_h·W_h + b_h), "
                 "log a = -8·r·softplus(recurrent_param), h = a·h + sqrt(1 - a²)·i·x (a = 0, factor 1 at position 0), "
                 "state [6] f32; calls: prefill == decode, batched, a padded row, a new sequence, chunked prefill.",
                 [("x", "f32", [B, S, W])], [B, S, W], attrs={"heads": H},
                 positions=True, cache={"slots": 2, "max_len": 16}, tol=(5e-6, 0)))
    rp = c.weight("recurrent_param", np.linspace(-4.0, 1.0, W) + 0.1 * randn(r, (W,)))
    wi = c.weight("input_gate_weight", randn(r, (H, BW, BW), 0.7))
    bi = c.weight("input_gate_bias", randn(r, (H, BW), 0.3))
    wr = c.weight("recurrent_gate_weight", randn(r, (H, BW, BW), 0.7))
    br = c.weight("recurrent_gate_bias", randn(r, (H, BW), 0.3))
    hs4 = SlotState(lambda: np.zeros(W))

    def rglru_step(slot, pos, ins, pad):
        y, h2 = rglru_ref(ins[0], pos, rp, wi, bi, wr, br, hs4.get(slot, pos))
        hs4.put(slot, h2, pad)
        return y
    state_calls(c, r, lambda b, s: [randn(r, (b, s, W))], rglru_step)

    # merge_heads
    r = rng("merge_heads")
    c = add(Case("merge_heads", "merge_heads", "[..., n, d] → [..., n·d]: heads undone.",
                 [("x", "f32", [B, S, 3, 4])], [B, S, 12]))
    for b, s_ in [(1, 2), (2, 1)]:
        x = randn(r, (b, s_, 3, 4))
        c.call(b, s_, [x], x.reshape(b, s_, 12))

    # Gated RMSNorm per group: MambaRMSNormGated (gate first) and
    # FalconH1RMSNormGated's norm_before_gate.
    for name, before in [("rms_norm_gated", False), ("rms_norm_gated_before", True)]:
        r = rng(name)
        attrs = {"groups": 2, "eps": 1e-5}
        if before:
            attrs["norm_before_gate"] = True
        c = add(Case(name, "rms_norm_gated", ("out = w · rmsnorm(x) · silu(gate)" if before else
                                              "out = w · rmsnorm(x · silu(gate))") +
                     ", the RMS over each of 2 groups of 4.", [("x", "f32", [B, S, 8]), ("gate", "f32", [B, S, 8])],
                     [B, S, 8], attrs=attrs))
        w = c.weight("weight", 1 + randn(r, (8,), 0.2))
        for b, s_ in [(1, 3), (2, 1)]:
            x, g = randn(r, (b, s_, 8)), randn(r, (b, s_, 8))
            c.call(b, s_, [x, g], rms_norm_gated_ref(x, g, w, 2, 1e-5, before))

    # pointwise
    unary = [
        ("silu", "silu", {}, silu, "out = x·sigmoid(x)"),
        ("gelu_tanh", "gelu_tanh", {}, gelu_tanh, "out = x/2·(1 + tanh(√(2/π)·(x + 0.044715x³)))"),
        ("activation_silu", "activation", {"name": "silu"}, silu, "HF ACT2FN[\"silu\"]"),
        ("activation_softplus", "activation", {"name": "softplus"}, softplus,
         "torch softplus: log1p(exp(x)), x past 20 (MambaMixer's dt)"),
        ("activation_gelu_pytorch_tanh", "activation", {"name": "gelu_pytorch_tanh"}, gelu_tanh,
         "HF ACT2FN[\"gelu_pytorch_tanh\"]"),
        ("activation_relu2", "activation", {"name": "relu2"}, lambda x: np.maximum(x.astype(f64), 0) ** 2,
         "HF ACT2FN[\"relu2\"]: relu(x)²"),
        ("activation_gelu_fast", "activation", {"name": "gelu_fast"},
         lambda x: 0.5 * x.astype(f64) * (1 + np.tanh(x.astype(f64) * 0.7978845608 * (1 + 0.044715 * x.astype(f64) ** 2))),
         "HF ACT2FN[\"gelu_fast\"]"),
        ("activation_quick_gelu", "activation", {"name": "quick_gelu"}, lambda x: x.astype(f64) / (1 + np.exp(-1.702 * x.astype(f64))),
         "HF ACT2FN[\"quick_gelu\"]: x·sigmoid(1.702x)"),
        ("activation_gelu", "activation", {"name": "gelu"}, gelu_erf, "HF ACT2FN[\"gelu\"]: x/2·(1 + erf(x/√2))"),
        ("activation_gelu_10", "activation", {"name": "gelu_10"}, lambda x: np.clip(gelu_erf(x), -10, 10),
         "HF ACT2FN[\"gelu_10\"]: gelu clipped to [-10, 10]"),
        ("activation_relu6", "activation", {"name": "relu6"}, lambda x: np.clip(x.astype(f64), 0, 6), "HF ACT2FN[\"relu6\"]"),
        ("activation_leaky_relu", "activation", {"name": "leaky_relu"},
         lambda x: np.where(x > 0, x.astype(f64), 0.01 * x.astype(f64)), "HF ACT2FN[\"leaky_relu\"]: slope 0.01"),
        ("activation_mish", "activation", {"name": "mish"},
         lambda x: x.astype(f64) * np.tanh(np.where(x > 20, x.astype(f64), np.log1p(np.exp(x.astype(f64))))),
         "HF ACT2FN[\"mish\"]: x·tanh(softplus(x))"),
        ("softcap", "softcap", {"cap": 2.0}, lambda x: softcap(x, 2.0), "out = cap·tanh(x/cap), cap 2"),
        ("softcap_none", "softcap", {"cap": None}, lambda x: x.astype(f64), "cap none: out = x"),
        ("scale", "scale", {"factor": 1 / math.sqrt(3)}, lambda x: x.astype(f64) * f64(f32(1 / math.sqrt(3))),
         "out = x·factor, factor 1/√3 rounded to f32"),
        ("divide", "divide", {"divisor": 0.3}, lambda x: x.astype(f64) / f64(f32(0.3)),
         "out = x / divisor, divisor 0.3 rounded to f32 (torch tensor / float)"),
    ]
    for name, prim, attrs, ref, doc in unary:
        r = rng(name)
        c = add(Case(name, prim, doc + ".", [("x", "f32", [B, S, 6])], [B, S, 6], attrs=attrs))
        for b, s in [(2, 3), (1, 1)]:
            x = randn(r, (b, s, 6), 3)
            c.call(b, s, [x], ref(x))

    # xielu: Apertus's activation, with its two learned scalars
    r = rng("xielu")
    c = add(Case("xielu", "xielu", "xIELU (XIELUActivation._xielu_python): a_p = softplus(alpha_p), a_n = beta + "
                 "softplus(alpha_n); x > 0: a_p·x·x + beta·x, else (expm1(min(x, eps)) - x)·a_n + beta·x; beta 0.5, "
                 "eps -1e-6.", [("x", "f32", [B, S, 6])], [B, S, 6], attrs={"beta": 0.5, "eps": -1e-6}, tol=(1e-6, 1e-6)))
    ap = softplus(c.weight("alpha_p", np.array([0.37], f32)))
    an = 0.5 + softplus(c.weight("alpha_n", np.array([-0.21], f32)))
    for b, s_ in [(2, 3), (1, 1)]:
        x = randn(r, (b, s_, 6), 2)
        x[0, 0, :2] = [0.0, -5e-7]  # x = 0 takes the negative branch; a tiny negative x meets the eps cap
        xd = x.astype(f64)
        want = np.where(xd > 0, ap * xd * xd + 0.5 * xd, (np.expm1(np.minimum(xd, f64(f32(-1e-6)))) - xd) * an + 0.5 * xd)
        c.call(b, s_, [x], want)

    r = rng("mul_broadcast")
    c = add(Case("mul_broadcast", "mul", "out = x * y with y's size-1 last dimension stretched (torch broadcasting: "
                 "a [..., 1] gate times [..., d]).",
                 [("x", "f32", [B, S, 4]), ("y", "f32", [B, S, 1])], [B, S, 4], tol=(1e-6, 1e-6)))
    for b, s_ in [(2, 3), (1, 1)]:
        x, y = randn(r, (b, s_, 4)), randn(r, (b, s_, 1))
        c.call(b, s_, [x, y], x.astype(f64) * y.astype(f64))

    for name, fn, sym in [("add", np.add, "+"), ("sub", np.subtract, "-"), ("mul", np.multiply, "*")]:
        r = rng(name)
        c = add(Case(name, name, "out = x %s y, elementwise." % sym,
                     [("x", "f32", [B, S, 4]), ("y", "f32", [B, S, 4])], [B, S, 4], tol=(1e-6, 1e-6)))
        for b, s in [(2, 3), (1, 1)]:
            x, y = randn(r, (b, s, 4)), randn(r, (b, s, 4))
            c.call(b, s, [x, y], fn(x.astype(f64), y.astype(f64)))

    # route: router logits → dense routing weights (torch.topk, ties to the
    # lower index). Rows with deliberate ties: equal logits inside the top k
    # and across its boundary.
    ties = np.array([[1.5, 1.5, 0.25, 1.5, -1.0, 0.0],
                     [0.5, 2.0, 0.5, 0.5, 2.0, -3.0],
                     [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]], dtype=f32)
    for name, attrs, doc in [
        ("route", {"top_k": 2, "norm": True},
         "softmax over the experts, top 2, renormalised (MixtralTopKRouter); rows with tied logits, inside and "
         "across the top-k boundary: torch.topk keeps the lower index first"),
        ("route_after", {"top_k": 3, "softmax": "after", "scale": 2.5},
         "top 3 of the logits, softmax over them (GraniteMoeTopKRouter), times scale 2.5; ties as torch.topk"),
        ("route_no_norm", {"top_k": 2},
         "softmax over the experts, top 2, not renormalised (OlmoeTopKRouter, norm_topk_prob false)"),
        ("route_sigmoid_after", {"top_k": 2, "softmax": "after", "scoring": "sigmoid"},
         "top 2 of the logits, each replaced by its sigmoid, the others 0 (Llama4Router); ties as torch.topk"),
        ("route_pnorm", {"top_k": 3, "norm": True, "norm_p": 3.0},
         "softmax over the experts, top 3, divided by their 3-norm (Σ v³)^(1/3) (DbrxFFN's "
         "moe_normalize_expert_weights 3); ties as torch.topk"),
    ]:
        r = rng(name)
        c = add(Case(name, "route", doc + ".", [("logits", "f32", [B, S, 6])], [B, S, 6], attrs=attrs,
                     tol=(1e-6, 1e-6)))
        for b, s_ in [(1, 3), (2, 2)]:
            x = randn(r, (b, s_, 6), 2)
            x.reshape(-1, 6)[:3] = ties[: min(3, b * s_)]
            c.call(b, s_, [x], route_ref(x, attrs))

    # route with group-limited top-k (DeepSeek-V2): 8 experts in 4 groups of
    # 2, the best 2 groups, top 3 inside them, times routed_scaling_factor.
    # Tie rows: two groups with equal maxima competing for the second place
    # (the lower group wins), equal experts across the kept groups, all equal.
    gties = np.array([[2.0, 0.0, 1.0, 0.5, 1.0, 0.9, -1.0, 0.0],
                      [0.5, 1.5, 1.5, 0.5, -2.0, 1.5, 0.0, 0.0],
                      [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]], dtype=f32)
    name = "route_groups"
    attrs = {"top_k": 3, "scale": 1.5, "topk_method": "group_limited_greedy", "n_group": 4, "topk_group": 2}
    r = rng(name)
    c = add(Case(name, "route", "softmax over 8 experts, then DeepseekV2TopkRouter's group_limited_greedy: 4 groups "
                 "of 2 scored by their max, the best 2 kept, the others' p set to 0, top 3 of the rest, times 1.5; "
                 "rows with tied group maxima and tied experts: the lower index first.",
                 [("logits", "f32", [B, S, 8])], [B, S, 8], attrs=attrs, tol=(1e-6, 1e-6)))
    for b, s_ in [(1, 3), (2, 2)]:
        x = randn(r, (b, s_, 8), 2)
        x.reshape(-1, 8)[:3] = gties[: min(3, b * s_)]
        c.call(b, s_, [x], route_ref(x, attrs))

    # route with a selection bias (Ernie 4.5 MoE's e_score_correction_bias,
    # stored [1, E]): the top 3 of p + bias keep p, renormalised with the
    # sum clamped to norm_min. The bias outweighs p's differences, so the
    # choice differs from p's own top 3; a row of equal logits ties the
    # biased scores of experts 1 and 4 (the lower first); norm_min 0.6 is
    # above some rows' kept sum, so the clamp is exercised.
    name = "route_bias"
    attrs = {"top_k": 3, "norm": True, "norm_min": 0.6, "bias_shape": [1, 6]}
    r = rng(name)
    c = add(Case(name, "route", "softmax over 6 experts, the top 3 of p + bias (Ernie4_5_MoeTopKRouter's "
                 "e_score_correction_bias, stored [1, 6]) keeping p, divided by max(sum, norm_min 0.6); "
                 "a row of equal logits ties the biased scores of experts 1 and 4: the lower first.",
                 [("logits", "f32", [B, S, 6])], [B, S, 6], attrs=attrs, tol=(1e-6, 1e-6)))
    bias = c.weight(None, np.array([[0.0, 0.25, -0.5, 0.1, 0.25, -0.25]], f32))
    for b, s_ in [(1, 3), (2, 2)]:
        x = randn(r, (b, s_, 6), 1)
        x.reshape(-1, 6)[0] = 0.0
        c.call(b, s_, [x], route_ref(x, attrs, bias))

    # route as DeepSeek-V3 / GLM-4.5 (DeepseekV3TopkRouter): sigmoid scores,
    # e_score_correction_bias [E] added for the choice, noaux_tc over 4
    # groups of 2 (a group's score: its two choice scores summed), the best
    # 2 groups, top 3 inside them keeping the sigmoid p, renormalised, times
    # 2.5. The bias moves experts across the group and top-k boundaries.
    name = "route_noaux"
    attrs = {"top_k": 3, "norm": True, "scale": 2.5, "scoring": "sigmoid", "topk_method": "noaux_tc",
             "n_group": 4, "topk_group": 2}
    r = rng(name)
    c = add(Case(name, "route", "sigmoid over 8 experts, the choice p + bias, DeepseekV3TopkRouter's noaux_tc: 4 groups "
                 "of 2 scored by the sum of their two choice scores, the best 2 kept, the others -inf, top 3 of "
                 "the choice keeping p, renormalised, times 2.5.",
                 [("logits", "f32", [B, S, 8])], [B, S, 8], attrs=attrs, tol=(1e-6, 1e-6)))
    bias = c.weight(None, np.array([0.3, -0.2, 0.0, 0.45, -0.4, 0.1, 0.2, -0.1], f32))
    for b, s_ in [(1, 3), (2, 2)]:
        x = randn(r, (b, s_, 8), 1.5)
        c.call(b, s_, [x], route_ref(x, attrs, bias))

    # route as PhiMoE (PhimoeTopKRouter's sparsemixer, jitter 0.3): two
    # rounds of masked softmaxes. Rows: tied maxima (the lower index first),
    # all zeros (0/0 gaps keep every expert), and random logits whose
    # relative band keeps some experts and drops others.
    name = "route_sparsemixer"
    attrs = {"top_k": 2, "topk_method": "sparsemixer", "jitter_eps": 0.3}
    r = rng(name)
    c = add(Case(name, "route", "PhimoeTopKRouter's sparsemixer over 6 experts, jitter_eps 0.3: two rounds, each the "
                 "best untaken expert at its softmax over the untaken experts within a relative gap of 0.6; rows "
                 "with tied maxima and all-zero logits.",
                 [("logits", "f32", [B, S, 6])], [B, S, 6], attrs=attrs, tol=(1e-6, 1e-6)))
    for b, s_ in [(1, 3), (2, 2)]:
        x = randn(r, (b, s_, 6), 2)
        x.reshape(-1, 6)[:2] = ties[1:3][: min(2, b * s_)]
        c.call(b, s_, [x], sparsemixer_ref(x, 2, 0.3))

    # experts: Σ_e w[e]·down_e(act(gate_e x)·up_e x); the (1, 1) call takes
    # the sparse path (T·top_k < E), the others the dense one.
    for name, fused, param in [("experts", False, False), ("experts_gate_up", True, False),
                               ("experts_parameter", True, True)]:
        r = rng(name)
        E, H, I, K = 4, 8, 6, 1 if not fused else 2
        attrs = {"intermediate": I, "top_k": K}
        if fused:
            attrs.update({"gate_up": "gate_up_proj", "act": "gelu_pytorch_tanh"})
        if param:
            attrs["layout"] = "parameter"
        sfx = "" if param else ".weight"
        doc = ("out = Σ_e w[e]·down_e(%s(gate_e x)·up_e x) over %d experts, top %d; the 1-token call takes the "
               "sparse (gathered) path, the others the dense one%s%s" %
               ("gelu_tanh" if fused else "silu", E, K, "; gate and up fused in one tensor, gate rows first"
                if fused else "", "; the stacked parameters themselves, [E, out, in] without .weight "
                "(Gemma4TextExperts)" if param else ""))
        c = add(Case(name, "experts", doc + ".", [("x", "f32", [B, S, H]), ("weights", "f32", [B, S, E])],
                     [B, S, H], attrs=attrs, tol=(1e-5, 1e-5)))
        if fused:
            gu = c.weight("gate_up_proj" + sfx, randn(r, (E, 2 * I, H), 0.5))
            g, u = gu[:, :I], gu[:, I:]
        else:
            g = c.weight("gate_proj" + sfx, randn(r, (E, I, H), 0.5))
            u = c.weight("up_proj" + sfx, randn(r, (E, I, H), 0.5))
        d = c.weight("down_proj" + sfx, randn(r, (E, H, I), 0.5))
        act = gelu_tanh if fused else silu
        for b, s_ in [(1, 1), (2, 3)]:
            x = randn(r, (b, s_, H))
            logits = randn(r, (b, s_, E), 2)
            w = route_ref(logits, {"top_k": K, "norm": True}).astype(f32)
            want = np.zeros((b, s_, H))
            for e in range(E):
                y = (act(x.astype(f64) @ g[e].T.astype(f64)) * (x.astype(f64) @ u[e].T.astype(f64))) @ d[e].T.astype(f64)
                want += w[..., e:e + 1].astype(f64) * y
            c.call(b, s_, [x, w], want)

    # experts without a gate projection (NemotronHExperts, has_gate=False):
    # Σ_e w[e]·down_e(relu2(up_e x)), sigmoid routing weights renormalised
    # over the top 2; the (1, 1) call takes the sparse path.
    name = "experts_ungated"
    r = rng(name)
    E, H, I, K = 4, 8, 6, 2
    c = add(Case(name, "experts", "NemotronHExperts (has_gate=False): out = Σ_e w[e]·down_e(relu2(up_e x)) over %d "
                 "experts, top %d; the 1-token call takes the sparse (gathered) path, the other the dense one." % (E, K),
                 [("x", "f32", [B, S, H]), ("weights", "f32", [B, S, E])], [B, S, H],
                 attrs={"intermediate": I, "top_k": K, "gated": False, "act": "relu2"}, tol=(1e-5, 1e-5)))
    u = c.weight("up_proj.weight", randn(r, (E, I, H), 0.5))
    d = c.weight("down_proj.weight", randn(r, (E, H, I), 0.5))
    for b, s_ in [(1, 1), (2, 3)]:
        x = randn(r, (b, s_, H))
        logits = randn(r, (b, s_, E), 2)
        w = route_ref(logits, {"top_k": K, "norm": True, "scoring": "sigmoid"}).astype(f32)
        want = np.zeros((b, s_, H))
        for e in range(E):
            y = np.maximum(x.astype(f64) @ u[e].T.astype(f64), 0) ** 2 @ d[e].T.astype(f64)
            want += w[..., e:e + 1].astype(f64) * y
        c.call(b, s_, [x, w], want)

    # experts as GptOssExperts stores and applies them: stacked parameters
    # [E, in, out] (x · W) with biases, gate and up interleaved in one
    # tensor, the clamped SwiGLU; a small limit so that the clamps cut.
    name = "experts_gpt_oss"
    r = rng(name)
    E, H, I, K, alpha, limit = 4, 8, 6, 2, 1.702, 1.5
    attrs = {"intermediate": I, "top_k": K, "gate_up": "gate_up_proj", "layout": "transposed", "bias": True,
             "interleaved": True, "act": "clamped_swiglu", "alpha": alpha, "limit": limit}
    c = add(Case(name, "experts", "GptOssExperts: gate_up = x·W + b [E, H, 2I] with gate = [..., ::2], up = "
                 "[..., 1::2]; (clamp(up, ±1.5) + 1)·g·sigmoid(1.702·g), g = min(gate, 1.5); then ·D + b; over %d "
                 "experts, top %d; the 1-token call takes the sparse (gathered) path, the other the dense one." % (E, K),
                 [("x", "f32", [B, S, H]), ("weights", "f32", [B, S, E])], [B, S, H], attrs=attrs, tol=(1e-5, 1e-5)))
    gu = c.weight("gate_up_proj", randn(r, (E, H, 2 * I), 0.7))
    d = c.weight("down_proj", randn(r, (E, I, H), 0.5))
    gub = c.weight("gate_up_proj_bias", randn(r, (E, 2 * I), 0.3))
    db = c.weight("down_proj_bias", randn(r, (E, H), 0.3))
    for b, s_ in [(1, 1), (2, 3)]:
        x = randn(r, (b, s_, H))
        logits = randn(r, (b, s_, E), 2)
        w = route_ref(logits, {"top_k": K, "softmax": "after"}).astype(f32)
        want = np.zeros((b, s_, H))
        for e in range(E):
            h = x.astype(f64) @ gu[e].astype(f64) + gub[e].astype(f64)
            g, u = np.minimum(h[..., ::2], limit), np.clip(h[..., 1::2], -limit, limit)
            y = ((u + 1) * g / (1 + np.exp(-alpha * g))) @ d[e].astype(f64) + db[e].astype(f64)
            want += w[..., e:e + 1].astype(f64) * y
        c.call(b, s_, [x, w], want)

    # experts with Step3p5MoE's ClampedSwiGLU: min(silu(gate), limit) ·
    # clamp(up, ±limit); a small limit so that both clamps cut.
    name = "experts_step3p5"
    r = rng(name)
    E, H, I, K, limit = 4, 8, 6, 2, 0.8
    c = add(Case(name, "experts", "Step3p5MoE's ClampedSwiGLU: out = Σ_e w[e]·down_e(min(silu(gate_e x), 0.8)·"
                 "clamp(up_e x, ±0.8)) over %d experts, top %d; the 1-token call takes the sparse (gathered) path, "
                 "the other the dense one." % (E, K),
                 [("x", "f32", [B, S, H]), ("weights", "f32", [B, S, E])], [B, S, H],
                 attrs={"intermediate": I, "top_k": K, "limit": limit}, tol=(1e-5, 1e-5)))
    g = c.weight("gate_proj.weight", randn(r, (E, I, H), 0.7))
    u = c.weight("up_proj.weight", randn(r, (E, I, H), 0.7))
    d = c.weight("down_proj.weight", randn(r, (E, H, I), 0.5))
    for b, s_ in [(1, 1), (2, 3)]:
        x = randn(r, (b, s_, H))
        logits = randn(r, (b, s_, E), 2)
        w = route_ref(logits, {"top_k": K, "norm": True, "scoring": "sigmoid"}).astype(f32)
        want = np.zeros((b, s_, H))
        for e in range(E):
            xd = x.astype(f64)
            y = (np.minimum(silu(xd @ g[e].T.astype(f64)), limit) * np.clip(xd @ u[e].T.astype(f64), -limit, limit)) @ d[e].T.astype(f64)
            want += w[..., e:e + 1].astype(f64) * y
        c.call(b, s_, [x, w], want)

    # experts as DbrxExperts stores and applies them: w1, v1, w2 each one
    # parameter [E·I, H] (viewed [E, I, H]), gate = x·w1ᵀ, up = x·v1ᵀ,
    # down = (silu(gate)·up)·w2 (w2 not transposed).
    name = "experts_dbrx"
    r = rng(name)
    E, H, I, K = 4, 8, 6, 2
    attrs = {"intermediate": I, "top_k": K, "gate": "w1", "up": "v1", "down": "w2", "layout": "flat"}
    c = add(Case(name, "experts", "DbrxExperts: out = Σ_e w[e]·(silu(x·w1_eᵀ)·(x·v1_eᵀ))·w2_e with w1, v1, w2 stored as "
                 "[E·I, H] = [%d, %d] each (DbrxExpertGLU); over %d experts, top %d; the 1-token call takes the "
                 "sparse (gathered) path, the other the dense one." % (E * I, H, E, K),
                 [("x", "f32", [B, S, H]), ("weights", "f32", [B, S, E])], [B, S, H], attrs=attrs, tol=(1e-5, 1e-5)))
    w1 = c.weight("w1", randn(r, (E * I, H), 0.5)).reshape(E, I, H)
    v1 = c.weight("v1", randn(r, (E * I, H), 0.5)).reshape(E, I, H)
    w2 = c.weight("w2", randn(r, (E * I, H), 0.5)).reshape(E, I, H)
    for b, s_ in [(1, 1), (2, 3)]:
        x = randn(r, (b, s_, H))
        logits = randn(r, (b, s_, E), 2)
        w = route_ref(logits, {"top_k": K, "norm": True, "norm_p": 2.0}).astype(f32)
        want = np.zeros((b, s_, H))
        for e in range(E):
            xd = x.astype(f64)
            y = (silu(xd @ w1[e].T.astype(f64)) * (xd @ v1[e].T.astype(f64))) @ w2[e].astype(f64)
            want += w[..., e:e + 1].astype(f64) * y
        c.call(b, s_, [x, w], want)

    # expert_linear: JetMoE's mixture of attention heads. map: each slot
    # (a token's used experts in index order) projects x with its expert's
    # [out, in] matrix; reduce: each slot's own input projected, weighted
    # and summed. The 1-token calls take the gathered path (T·k < E), the
    # others the dense one.
    for name, red in [("expert_linear_map", False), ("expert_linear_reduce", True)]:
        r = rng(name)
        E, IN, OUT, K = 5, 6, 4, 2
        attrs = {"out": OUT, "top_k": K, "reduce": red}
        xin = K * IN if red else IN
        outw = OUT if red else K * OUT
        doc = ("JetMoeMoA.%s: %s over %d experts, top %d; the 1-token call takes the gathered path, the other the "
               "dense one." % ("reduce" if red else "map",
                               "out = Σ_j w[e_j]·W_{e_j}·x_j, x holding one input per slot" if red else
                               "slot j = W_{e_j}·x, the slots side by side (e_j the j-th used expert by index)",
                               E, K))
        c = add(Case(name, "expert_linear", doc, [("x", "f32", [B, S, xin]), ("weights", "f32", [B, S, E])],
                     [B, S, outw], attrs=attrs, tol=(1e-5, 1e-5)))
        W = c.weight("weight", randn(r, (E, OUT, IN), 0.5))
        for b, s_ in [(1, 1), (2, 3)]:
            x = randn(r, (b, s_, xin))
            w = route_ref(randn(r, (b, s_, E), 2), {"top_k": K, "softmax": "after"}).astype(f32)
            want = np.zeros((b, s_, outw))
            for bi in range(b):
                for si in range(s_):
                    used = [e for e in range(E) if w[bi, si, e] != 0]
                    for j, e in enumerate(used):
                        if red:
                            xj = x[bi, si, j * IN:(j + 1) * IN].astype(f64)
                            want[bi, si] += w[bi, si, e].astype(f64) * (W[e].astype(f64) @ xj)
                        else:
                            want[bi, si, j * OUT:(j + 1) * OUT] = W[e].astype(f64) @ x[bi, si].astype(f64)
            c.call(b, s_, [x, w], want)

    # add_bias: a bare bias parameter (JetMoE's layer_output + self.bias).
    name = "add_bias"
    r = rng(name)
    c = add(Case(name, "add_bias", "out = x + b, b the tensor at the path itself (JetMoeMoE's bias).",
                 [("x", "f32", [B, S, 6])], [B, S, 6], tol=(1e-6, 1e-6)))
    bb = c.weight(None, randn(r, (6,), 0.5))
    for b, s_ in [(1, 3), (2, 1)]:
        x = randn(r, (b, s_, 6))
        c.call(b, s_, [x], x.astype(f64) + bb.astype(f64))

    # experts as Llama4TextMoe applies them: the routing weight scales each
    # expert's input (routed_in = x · score), Llama4TextExperts' stacked
    # parameters gate_up_proj [E, H, 2I] (gate columns first) and down_proj
    # [E, I, H], applied as x · W; the router's sigmoid weights.
    name = "experts_llama4"
    r = rng(name)
    E, H, I, K = 4, 8, 6, 2
    attrs = {"intermediate": I, "top_k": K, "gate_up": "gate_up_proj", "layout": "transposed", "weighting": "input"}
    c = add(Case(name, "experts", "Llama4TextMoe: out = Σ_e down_e(silu(gate_e(w_e·x))·up_e(w_e·x)), gate_up [E, H, 2I] "
                 "(gate columns first) and down [E, I, H] applied as x·W; over %d experts, top %d (sigmoid weights); "
                 "the 1-token call takes the sparse (gathered) path, the other the dense one." % (E, K),
                 [("x", "f32", [B, S, H]), ("weights", "f32", [B, S, E])], [B, S, H], attrs=attrs, tol=(1e-5, 1e-5)))
    gu = c.weight("gate_up_proj", randn(r, (E, H, 2 * I), 0.7))
    d = c.weight("down_proj", randn(r, (E, I, H), 0.5))
    for b, s_ in [(1, 1), (2, 3)]:
        x = randn(r, (b, s_, H))
        logits = randn(r, (b, s_, E), 2)
        w = route_ref(logits, {"top_k": K, "softmax": "after", "scoring": "sigmoid"}).astype(f32)
        want = np.zeros((b, s_, H))
        for e in range(E):
            xe = x.astype(f64) * w[..., e:e + 1].astype(f64)
            h = xe @ gu[e].astype(f64)
            want += (silu(h[..., :I]) * h[..., I:]) @ d[e].astype(f64)
        c.call(b, s_, [x, w], want)
    # Exact results: "want" holds 9 significant digits, within 5e-9 (relative)
    # of the float32 value; a one-ulp difference is 6e-8 or more.
    EXACT = (0, 1e-8)

    def pair(r, b, s):
        """x and y with some equal elements (where == and <= differ from <)."""
        x, y = randn(r, (b, s, 4)), randn(r, (b, s, 4))
        same = r.random((b, s, 4)) < 0.3
        return x, np.where(same, x, y).astype(f32)

    for name, fn, doc in [("maximum", np.maximum, "out = max(x, y) (torch.maximum)"),
                          ("minimum", np.minimum, "out = min(x, y) (torch.minimum)")]:
        r = rng(name)
        c = add(Case(name, name, doc + ", elementwise.",
                     [("x", "f32", [B, S, 4]), ("y", "f32", [B, S, 4])], [B, S, 4], tol=EXACT))
        for b, s in [(2, 3), (1, 1)]:
            x, y = pair(r, b, s)
            c.call(b, s, [x, y], fn(x.astype(f64), y.astype(f64)))

    for name, fn, sym in [("lt", np.less, "<"), ("le", np.less_equal, "<="), ("gt", np.greater, ">"),
                          ("ge", np.greater_equal, ">="), ("eq", np.equal, "=="), ("ne", np.not_equal, "!=")]:
        r = rng(name)
        c = add(Case(name, name, "out = x %s y, a mask (torch.%s); the case returns it as f32 0/1." % (sym, name),
                     [("x", "f32", [B, S, 4]), ("y", "f32", [B, S, 4])], [B, S, 4], tol=EXACT, out_dtype="i1"))
        for b, s in [(2, 3), (1, 1)]:
            x, y = pair(r, b, s)
            c.call(b, s, [x, y], fn(x, y).astype(f64))

    # topk_mask: the k = 4 largest of each row of 9, by torch.topk's values
    # (every entry tied with the 4th kept); rows mix signs, a masked entry
    # at torch.finfo(float32).min, and one row with a tie at the 4th.
    r = rng("topk_mask")
    c = add(Case("topk_mask", "topk_mask", "out = x >= the 4th largest of its row (torch.topk(x, 4) as a mask; "
                 "ties at the 4th all kept); the case returns it as f32 0/1.",
                 [("x", "f32", [B, S, 9])], [B, S, 9], attrs={"k": 4}, tol=EXACT, out_dtype="i1"))
    for b, s in [(2, 3), (1, 1)]:
        x = randn(r, (b, s, 9))
        x[0, 0, 2] = f32(-3.4028234663852886e38)
        x[0, 0, 5] = -x[0, 0, 5]
        if s > 1:
            x[0, 1, :] = np.array([0.5, -1, 0.25, 0.5, 2, -0.0, 0.25, 0.0, -7], f32)  # 4th largest 0.25, tied
        kth = -np.sort(-x.astype(f64), axis=-1)[..., 3:4]
        c.call(b, s, [x], (x.astype(f64) >= kth).astype(f64))

    r = rng("where")
    c = add(Case("where", "where", "out = cond ? x : y (torch.where); cond is a mask, given as 0/1.",
                 [("cond", "i1", [B, S, 4]), ("x", "f32", [B, S, 4]), ("y", "f32", [B, S, 4])], [B, S, 4], tol=EXACT))
    for b, s in [(2, 3), (1, 1)]:
        m = (r.random((b, s, 4)) < 0.5).astype(np.int32)
        x, y = randn(r, (b, s, 4)), randn(r, (b, s, 4))
        c.call(b, s, [m, x, y], np.where(m != 0, x, y).astype(f64))

    r = rng("full_like")
    c = add(Case("full_like", "full_like", "out = value at x's shape (torch.full_like), value 0.1 rounded to f32.",
                 [("x", "f32", [B, S, 4])], [B, S, 4], attrs={"value": 0.1}, tol=EXACT))
    for b, s in [(2, 3), (1, 1)]:
        c.call(b, s, [randn(r, (b, s, 4))], np.full((b, s, 4), f32(0.1), f64))

    r = rng("parameter")
    c = add(Case("parameter", "parameter", "out = the tensor at the weight path itself, [3] stored, as [1, 1, 3] "
                 "(a module's nn.Parameter or buffer in arithmetic: Gemma4TextDecoderLayer.layer_scalar).",
                 [], [1, 1, 3], attrs={"shape": [3]}, tol=EXACT))
    w = c.weight(None, randn(r, (3,)))
    c.call(1, 1, [], w.reshape(1, 1, 3).astype(f64))

    for name, attrs, lo, hi in [("clamp", {"min": -0.5, "max": 0.75}, -0.5, 0.75),
                                ("clamp_min", {"min": 0.0}, 0.0, None)]:
        r = rng(name)
        c = add(Case(name, "clamp", "out = torch.clamp(x, %s, %s), bounds rounded to f32." % (lo, hi),
                     [("x", "f32", [B, S, 6])], [B, S, 6], attrs=attrs, tol=EXACT))
        for b, s in [(2, 3), (1, 1)]:
            x = randn(r, (b, s, 6))
            c.call(b, s, [x], np.clip(x, None if lo is None else f32(lo), None if hi is None else f32(hi)).astype(f64))

    for n in (2, 3):
        name = "pow_%d" % n
        r = rng(name)
        c = add(Case(name, "pow", ("out = x ** %d as torch.pow computes it in f32: %s, each product rounded to "
                                   "f32 (the reference too), so the match is exact.") % (n, "·".join(["x"] * n)),
                     [("x", "f32", [B, S, 6])], [B, S, 6], attrs={"exponent": n}, tol=EXACT))
        for b, s in [(2, 3), (1, 1)]:
            x = randn(r, (b, s, 6), 3)
            want = x * x if n == 2 else (x * x) * x  # float32 products, as torch's pow kernel
            c.call(b, s, [x], want.astype(f64))
    out.extend(vision_cases(B, S))
    out.extend(norm_part_cases(B, S))
    return out


def vision_cases(B, S):
    """An image encoder's primitives (concrete shapes, one tile [1, ...])
    and the decoder's merge, masked_scatter."""
    out = []
    EXACT = (0, 1e-8)  # a rearrangement or a select: the values themselves, up to the txtar's decimals

    name = "patch_embed"
    r = rng(name)
    c = Case(name, "patch_embed", "out[0, py·3 + px, o] = Σ W[o, c, i, j]·pixels[0, c, 4py + i, 4px + j] + b[o]: "
             "nn.Conv2d(3, 5, kernel_size=4, stride=4) on an 8×12 tile, flatten(2).transpose(1, 2) "
             "(SiglipVisionEmbeddings.patch_embedding).",
             [("pixels", "f32", [1, 3, 8, 12])], [1, 6, 5], attrs={"patch": 4, "out": 5, "bias": True})
    w = c.weight("weight", randn(r, (5, 3, 4, 4), 0.5))
    bias = c.weight("bias", randn(r, (5,), 0.5))
    x = randn(r, (1, 3, 8, 12))
    want = np.zeros((1, 2, 3, 5))
    for py in range(2):
        for px in range(3):
            patch = x[0, :, 4 * py:4 * py + 4, 4 * px:4 * px + 4].astype(f64)
            want[0, py, px] = np.tensordot(w.astype(f64), patch, axes=([1, 2, 3], [0, 1, 2])) + bias
    c.call(1, 1, [x], want.reshape(1, 6, 5))
    out.append(c)

    name = "patch_embed_temporal"
    r = rng(name)
    c = Case(name, "patch_embed", "out[0, n, o] = Σ W[o, c, t, i, j]·patch_n[c, t, i, j] + b[o]: nn.Conv3d(3, 5, "
             "kernel_size = stride = (2, 2, 2)) on each of 6 patches the processor cut and flattened as "
             "[C, T, p, p] (Qwen2VLVisionPatchEmbed: view(-1, C, T, p, p), conv, view(-1, out)).",
             [("pixels", "f32", [1, 6, 24])], [1, 6, 5], attrs={"patch": 2, "out": 5, "bias": True, "temporal": 2})
    w = c.weight("weight", randn(r, (5, 3, 2, 2, 2), 0.5))
    bias = c.weight("bias", randn(r, (5,), 0.5))
    x = randn(r, (1, 6, 24))
    want = np.zeros((1, 6, 5))
    for n in range(6):
        clip = x[0, n].astype(f64).reshape(3, 2, 2, 2)  # one [C, T, p, p] volume, the conv's one output position
        for o in range(5):
            want[0, n, o] = sum(w[o, ch, t, i, j] * clip[ch, t, i, j]
                                for ch in range(3) for t in range(2) for i in range(2) for j in range(2)) + bias[o]
    c.call(1, 1, [x], want)
    out.append(c)

    name = "patch_embed_rows"
    r = rng(name)
    c = Case(name, "patch_embed", "out[0, n, o] = Σ W[o, c, i, j]·patch_n[c, i, j]: nn.Conv2d(3, 5, kernel_size = "
             "stride = 2, bias=False) on each of 6 patches the processor cut and flattened as [C, p, p] "
             "(PixtralVisionModel.patch_conv over the processor's patch rows).",
             [("pixels", "f32", [1, 6, 12])], [1, 6, 5], attrs={"patch": 2, "out": 5})
    w = c.weight("weight", randn(r, (5, 3, 2, 2), 0.5))
    x = randn(r, (1, 6, 12))
    want = np.einsum("ocij,ncij->no", w.astype(f64), x[0].astype(f64).reshape(6, 3, 2, 2))[None]
    c.call(1, 1, [x], want)
    out.append(c)

    name = "merge_rows"
    r = rng(name)
    c = Case(name, "merge_rows", "Qwen2VLPatchMerger's view(-1, hidden·4): 8 rows of 3 as 2 rows of 12, each "
             "four consecutive rows concatenated.", [("x", "f32", [1, 8, 3])], [1, 2, 12], attrs={"factor": 4}, tol=EXACT)
    x = randn(r, (1, 8, 3))
    c.call(1, 1, [x], np.concatenate([x[:, 0:4].reshape(1, 1, 12), x[:, 4:8].reshape(1, 1, 12)], 1).astype(f64))
    out.append(c)

    # Mistral3PatchMerger: F.unfold of the [d, h, w] grid, kernel 2: each
    # window's values channel by channel (the processor orders each
    # window's patches consecutively).
    name = "merge_rows_channel_major"
    r = rng(name)
    c = Case(name, "merge_rows", "Mistral3PatchMerger's unfold: 8 rows of 3 as 2 rows of 12, row r's column "
             "c*4 + k = x[4r + k, c] ((channel, kernel position) order).", [("x", "f32", [1, 8, 3])], [1, 2, 12],
             attrs={"factor": 4, "channel_major": True}, tol=EXACT)
    x = randn(r, (1, 8, 3))
    c.call(1, 1, [x], x.reshape(1, 2, 4, 3).transpose(0, 1, 3, 2).reshape(1, 2, 12).astype(f64))
    out.append(c)

    # Qwen2-VL's vision RoPE: VisionRotaryEmbedding(head_dim / 2) gives
    # head_dim / 4 frequencies; a patch's angles are those of its row then
    # those of its column, emb = cat(rotary, rotary), applied by
    # apply_rotary_pos_emb_vision (rotate_half).
    name = "rope_positions"
    r = rng(name)
    d = 8
    c = Case(name, "rope", "Qwen2-VL's vision RoPE (mrope_section [2, 2], mrope_restart): patch n's angles are "
             "pos[n, 0]·inv and pos[n, 1]·inv, inv = 1/10000^(arange(0, 4, 2)/4) (VisionRotaryEmbedding(4)), "
             "out = x·cos + rotate_half(x)·sin over head_dim 8 (apply_rotary_pos_emb_vision).",
             [("x", "f32", [1, 6, 2, d]), ("positions", "i32", [1, 6, 2])], [1, 6, 2, d],
             attrs={"theta": 10000.0, "mrope_section": [2, 2], "mrope_restart": True}, tol=(2e-5, 1e-5))
    x = randn(r, (1, 6, 2, d))
    pos = np.array([[[0, 0], [0, 1], [1, 0], [1, 1], [2, 3], [5, 4]]], np.int32)
    inv = (1.0 / (10000.0 ** (np.arange(0, 4, 2, dtype=f32) / f32(4)))).astype(f32)
    table = np.outer(np.arange(8, dtype=f32), inv).astype(f32)                    # rotary_pos_emb_full
    rot = np.concatenate([table[pos[0, :, 0]], table[pos[0, :, 1]]], -1)         # [6, 4]
    emb = np.concatenate([rot, rot], -1).astype(f64)[None, :, None, :]            # [1, 6, 1, 8]
    xf = x.astype(f64)
    want = xf * np.cos(emb) + np.concatenate([-xf[..., d // 2:], xf[..., :d // 2]], -1) * np.sin(emb)
    c.call(1, 1, [x, pos], want)
    out.append(c)

    # Pixtral's 2-D RoPE: one ladder inv = 1/10000^(arange(0, 8, 2)/8) over
    # head_dim 8; rows turn by inv[0::2], columns by inv[1::2]
    # (PixtralVisionRotaryEmbedding: inv_freq_2d, recomposition H-W-H-W).
    name = "rope_positions_strided"
    r = rng(name)
    c = Case(name, "rope", "Pixtral's 2-D RoPE (mrope_section [2, 2], mrope_strided): patch n's angles are "
             "pos[n, 0]·inv[0::2] then pos[n, 1]·inv[1::2], inv = 1/10000^(arange(0, 8, 2)/8), "
             "out = x·cos + rotate_half(x)·sin over head_dim 8.",
             [("x", "f32", [1, 6, 2, d]), ("positions", "i32", [1, 6, 2])], [1, 6, 2, d],
             attrs={"theta": 10000.0, "mrope_section": [2, 2], "mrope_strided": True}, tol=(2e-5, 1e-5))
    x = randn(r, (1, 6, 2, d))
    inv = (1.0 / (10000.0 ** (np.arange(0, d, 2, dtype=f32) / f32(d)))).astype(f32)
    rot = np.concatenate([np.outer(pos[0, :, 0].astype(f32), inv[0::2]), np.outer(pos[0, :, 1].astype(f32), inv[1::2])], -1)
    emb = np.concatenate([rot, rot], -1).astype(f64)[None, :, None, :]
    xf = x.astype(f64)
    want = xf * np.cos(emb) + np.concatenate([-xf[..., d // 2:], xf[..., :d // 2]], -1) * np.sin(emb)
    c.call(1, 1, [x, pos], want)
    out.append(c)

    for name, attrs, scale, budget in [("bidirectional_attention", {}, 0.5, None),
                                       ("bidirectional_attention_scale", {"scale": 0.3}, 0.3, None),
                                       ("bidirectional_attention_query_blocks", {}, 0.5, 80)]:
        r = rng(name)
        blocked = (" Scores over 80 bytes run in query blocks: 2 rows a trip ([1, 2, 2, 5] f32 = 80 bytes), "
                   "three trips, the last at rows 3–4 overlapping the second.") if budget else ""
        c = Case(name, "bidirectional_attention", "out = softmax(q·kᵀ·%s)·v per head, no mask and no cache "
                 "(SiglipAttention's eager_attention_forward); q, k, v [1, 5, 2, 4].%s" % (scale, blocked),
                 [("q", "f32", [1, 5, 2, 4]), ("k", "f32", [1, 5, 2, 4]), ("v", "f32", [1, 5, 2, 4])], [1, 5, 8], attrs=attrs,
                 score_bytes=budget)
        q, k, v = randn(r, (1, 5, 2, 4)), randn(r, (1, 5, 2, 4)), randn(r, (1, 5, 2, 4))
        qh, kh, vh = (a.astype(f64).transpose(0, 2, 1, 3) for a in (q, k, v))
        sc = qh @ kh.transpose(0, 1, 3, 2) * f32(scale)
        p = np.exp(sc - sc.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        c.call(1, 1, [q, k, v], (p @ vh).transpose(0, 2, 1, 3).reshape(1, 5, 8))
        out.append(c)

    # Qwen2.5-VL's window attention: the attention of each window of the
    # patch grid alone (HF: cu_window_seqlens over reordered patches).
    for name, budget in [("bidirectional_attention_blocks", None), ("bidirectional_attention_blocks_query_blocks", 192)]:
        r = rng(name)
        blocked = (" Scores over 192 bytes run in query blocks: 3 rows a trip ([1, 2, 3, 8] f32 = 192 bytes), "
                   "three trips, the last at rows 5–7 overlapping the second.") if budget else ""
        c = Case(name, "bidirectional_attention", "out = softmax(q·kᵀ·0.5 + mask)·v per head, key j visible to query i "
                 "only when blocks[i] // 2 == blocks[j] // 2 in both columns: 8 positions of a 2×4 grid (row, column), "
                 "listed out of order, in windows of 2×2 (Qwen2_5_VLVisionAttention over cu_window_seqlens); q, k, v "
                 "[1, 8, 2, 4].%s" % blocked, [("q", "f32", [1, 8, 2, 4]), ("k", "f32", [1, 8, 2, 4]), ("v", "f32", [1, 8, 2, 4]),
                                             ("blocks", "i32", [1, 8, 2])], [1, 8, 8], attrs={"block_size": 2},
                 score_bytes=budget)
        q, k, v = randn(r, (1, 8, 2, 4)), randn(r, (1, 8, 2, 4)), randn(r, (1, 8, 2, 4))
        blocks = np.array([[[0, 0], [0, 1], [1, 0], [1, 1], [0, 2], [1, 3], [0, 3], [1, 2]]], np.int32)
        win = blocks[0] // 2
        same = (win[:, None, :] == win[None, :, :]).all(-1)  # [8, 8]
        qh, kh, vh = (a.astype(f64).transpose(0, 2, 1, 3) for a in (q, k, v))
        sc = np.where(same, qh @ kh.transpose(0, 1, 3, 2) * f32(0.5), -np.inf)
        p = np.exp(sc - sc.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        c.call(1, 1, [q, k, v, blocks], (p @ vh).transpose(0, 2, 1, 3).reshape(1, 8, 8))
        out.append(c)

    name = "pixel_shuffle"
    r = rng(name)
    c = Case(name, "pixel_shuffle", "Idefics3Connector.pixel_shuffle with scale factor 2 on a 4×4 grid of rows of 3: "
             "view [4, 2, 6], permute, reshape [2, 2, 12], permute, reshape [4, 12].",
             [("x", "f32", [1, 16, 3])], [1, 4, 12], attrs={"factor": 2}, tol=EXACT)
    x = randn(r, (1, 16, 3))
    y = x.reshape(1, 4, 4, 3).reshape(1, 4, 2, 6).transpose(0, 2, 1, 3).reshape(1, 2, 2, 12).transpose(0, 2, 1, 3).reshape(1, 4, 12)
    c.call(1, 1, [x], y.astype(f64))
    out.append(c)

    name = "avg_pool"
    r = rng(name)
    c = Case(name, "avg_pool", "Gemma3MultiModalProjector's pooling: 16 rows of 3, a 4×4 grid, viewed [3, 4, 4], "
             "nn.AvgPool2d(2, 2), flattened back: 4 rows, each the mean of a 2×2 block.",
             [("x", "f32", [1, 16, 3])], [1, 4, 3], attrs={"kernel": 2})
    x = randn(r, (1, 16, 3))
    g = x.astype(f64).reshape(4, 4, 3)
    y = np.stack([g[2 * py:2 * py + 2, 2 * px:2 * px + 2].mean((0, 1)) for py in range(2) for px in range(2)])
    c.call(1, 1, [x], y.reshape(1, 4, 3))
    out.append(c)

    name = "class_embedding"
    r = rng(name)
    c = Case(name, "class_embedding", "out = cat([class_embedding, x], rows): CLIPVisionEmbeddings's learned class "
             "row before 4 patch rows of 3 (torch.cat([class_embeds, patch_embeds], dim=1)).",
             [("x", "f32", [1, 4, 3])], [1, 5, 3], tol=EXACT)
    cls = c.weight(None, randn(r, (3,)))
    x = randn(r, (1, 4, 3))
    c.call(1, 1, [x], np.concatenate([cls.reshape(1, 1, 3), x], 1).astype(f64))
    out.append(c)

    for name, attrs, lo, hi in [("slice_rows", {"start": 1}, 1, 5), ("slice_rows_stop", {"start": 1, "stop": 3}, 1, 3)]:
        r = rng(name)
        c = Case(name, "slice_rows", "out = x[:, %d:%d] of 5 rows of 3 (LlavaModel.get_image_features's "
                 "selected_image_feature[:, 1:], the CLS row dropped)." % (lo, hi),
                 [("x", "f32", [1, 5, 3])], [1, hi - lo, 3], attrs=attrs, tol=EXACT)
        x = randn(r, (1, 5, 3))
        c.call(1, 1, [x], x[:, lo:hi].astype(f64))
        out.append(c)

    name = "masked_scatter"
    r = rng(name)
    c = Case(name, "masked_scatter", "out[b, s] = mask[b, s] ? rows[b, s] : x[b, s] in a prefill, rows an encoder's "
             "(inputs_embeds.masked_scatter(image_mask, image_features), with the runtime placing the rows at the masked "
             "positions); mask given as 0/1.",
             [("x", "f32", [B, S, 4]), ("mask", "i1", [B, S]), ("rows", "f32", [B, S, 4])], [B, S, 4],
             tol=EXACT, nodes={"rows": "encoded"})
    for b, s in [(1, 5), (2, 3)]:
        x, rows = randn(r, (b, s, 4)), randn(r, (b, s, 4))
        m = (r.random((b, s)) < 0.5).astype(np.int32)
        c.call(b, s, [x, m, rows], np.where(m[:, :, None] != 0, rows, x).astype(f64))
    out.append(c)

    # Qwen3-VL's deepstack: rows 3 sets of 4 wide side by side, the second
    # set added to x at the image tokens (_deepstack_process).
    name = "masked_scatter_offset_add"
    r = rng(name)
    c = Case(name, "masked_scatter", "out[b, s] = mask[b, s] ? x[b, s] + rows[b, s, 4:8] : x[b, s] "
             "(Qwen3VLTextModel._deepstack_process: deepstack features, the encoder's columns 4:8, added at the "
             "image tokens); mask given as 0/1.",
             [("x", "f32", [B, S, 4]), ("mask", "i1", [B, S]), ("rows", "f32", [B, S, 12])], [B, S, 4],
             attrs={"offset": 4, "add": True}, tol=EXACT, nodes={"rows": "encoded"})
    for b, s in [(1, 5), (2, 3)]:
        x, rows = randn(r, (b, s, 4)), randn(r, (b, s, 12))
        m = (r.random((b, s)) < 0.5).astype(np.int32)
        c.call(b, s, [x, m, rows], np.where(m[:, :, None] != 0, x + rows[:, :, 4:8], x).astype(f64))  # f32 sums, as the module adds
    out.append(c)

    # Qwen3-VL / Qwen3.5's learned positions: a 4×4 table resampled to a
    # 4×6 grid (merge-window patch order, as the processor gives it) by
    # F.interpolate(mode="bilinear", align_corners=True), each patch
    # reading its cell.
    name = "interpolated_position_embedding"
    r = rng(name)
    side, dim, h, w = 4, 3, 4, 6
    c = Case(name, "interpolated_position_embedding", "Qwen3VLVisionModel.fast_pos_embed_interpolate: the 4x4 "
             "table bilinearly resampled (align_corners) to the image's 4x6 patch grid, patch n reading cell "
             "grid[n] (patches in 2x2 merge-window order).",
             [("grid", "i32", [1, h * w, 2])], [1, h * w, dim], attrs={"num_positions": side * side, "embedding_dim": dim})
    table = c.weight("weight", randn(r, (side * side, dim), 0.5)).astype(f64).reshape(side, side, dim)
    cells = [(2 * by + i, 2 * bx + j) for by in range(h // 2) for bx in range(w // 2) for i in range(2) for j in range(2)]
    grid = np.array([cells], np.int32)

    def resample(extent, t):  # align_corners: target t of extent samples source t·(side−1)/(extent−1)
        src = t * (side - 1) / max(extent - 1, 1)
        lo = min(int(math.floor(src)), side - 1)
        hi = min(lo + 1, side - 1)
        return lo, hi, src - math.floor(src)

    want = np.zeros((1, h * w, dim))
    for n, (y, x) in enumerate(cells):
        y0, y1, fy = resample(h, y)
        x0, x1, fx = resample(w, x)
        want[0, n] = ((1 - fy) * ((1 - fx) * table[y0, x0] + fx * table[y0, x1])
                      + fy * ((1 - fx) * table[y1, x0] + fx * table[y1, x1]))
    c.call(1, 1, [grid], want)
    out.append(c)

    # SigLIP2 NaFlex's learned positions (LFM2-VL's tower): a 3×3 table
    # resized to a 2×4 grid (rows shrink: the antialiased filter's wider
    # support; columns grow: plain bilinear, edges clamped) by
    # F.interpolate(mode="bilinear", align_corners=False, antialias=True),
    # patches in 2×2 merge-window order.
    name = "interpolated_position_embedding_antialias"
    r = rng(name)
    side, dim, h, w = 3, 3, 2, 4
    c = Case(name, "interpolated_position_embedding", "Siglip2VisionEmbeddings.resize_positional_embeddings: the "
             "3x3 table resized to the image's 2x4 patch grid by antialiased bilinear interpolation "
             "(align_corners=False), patch n reading cell grid[n] (2x2 merge-window order).",
             [("grid", "i32", [1, h * w, 2])], [1, h * w, dim],
             attrs={"num_positions": side * side, "embedding_dim": dim, "antialias": True})
    table = c.weight("weight", randn(r, (side * side, dim), 0.5)).astype(f64).reshape(side, side, dim)
    cells = [(2 * by + i, 2 * bx + j) for by in range(h // 2) for bx in range(w // 2) for i in range(2) for j in range(2)]
    grid = np.array([cells], np.int32)

    def aa_weights(extent, t):  # torch's antialiased bilinear (triangle) filter, normalised
        scale = side / extent
        support = max(scale, 1.0)
        centre = (t + 0.5) * scale - 0.5
        wts = np.array([max(1 - abs(s - centre) / support, 0.0) for s in range(side)])
        return wts / wts.sum()

    want = np.zeros((1, h * w, dim))
    for n, (y, x) in enumerate(cells):
        want[0, n] = np.einsum("s,t,std->d", aa_weights(h, y), aa_weights(w, x), table)
    c.call(1, 1, [grid], want)
    out.append(c)
    return out


def norm_part_cases(B, S):
    """The pieces a norm is written from in .arch: div, mean, rsqrt, sqrt,
    affine (lower/prim_normparts.go)."""
    out = []
    r = rng("div")
    c = Case("div", "div", "out = x / y with y's size-1 last dimension stretched (torch broadcasting: "
             "a [..., d] tensor over a [..., 1] one, as x / sqrt(var)).",
             [("x", "f32", [B, S, 4]), ("y", "f32", [B, S, 1])], [B, S, 4])
    for b, s in [(2, 3), (1, 1)]:
        x, y = randn(r, (b, s, 4)), (np.abs(randn(r, (b, s, 1))) + 0.5).astype(f32)
        c.call(b, s, [x, y], x.astype(f64) / y.astype(f64))
    out.append(c)
    r = rng("mean")
    c = Case("mean", "mean", "out = mean(x) over the last axis, kept as size 1 (torch.mean(x, -1, keepdim=True)).",
             [("x", "f32", [B, S, 6])], [B, S, 1], attrs={"axis": -1})
    for b, s in [(2, 3), (1, 1)]:
        x = randn(r, (b, s, 6), 3)
        c.call(b, s, [x], x.astype(f64).mean(-1, keepdims=True))
    out.append(c)
    for name, ref in [("rsqrt", lambda x: 1 / np.sqrt(x)), ("sqrt", np.sqrt)]:
        r = rng(name)
        c = Case(name, name, "out = %s, elementwise (torch.%s), on positive x." % (
            "1/√x" if name == "rsqrt" else "√x", name), [("x", "f32", [B, S, 6])], [B, S, 6])
        for b, s in [(2, 3), (1, 1)]:
            x = (np.abs(randn(r, (b, s, 6), 3)) + 0.01).astype(f32)
            c.call(b, s, [x], ref(x.astype(f64)))
        out.append(c)
    for name, attrs in [("affine", {}), ("affine_1p_bias", {"offset": 1.0, "bias": True})]:
        r = rng(name)
        offset, bias = attrs.get("offset", 0.0), attrs.get("bias", False)
        c = Case(name, "affine", "out = x·(w + %g)%s over the last dimension (a norm's affine; offset 1 with a "
                 "bias: NemotronLayerNorm1p's weight + 1 and bias)." % (offset, " + b" if bias else ""),
                 [("x", "f32", [B, S, 8])], [B, S, 8], attrs=attrs)
        w = c.weight("weight", randn(r, (8,), 0.5))
        bv = c.weight("bias", randn(r, (8,), 0.5)) if bias else None
        for b, s in [(1, 3), (2, 1)]:
            x = randn(r, (b, s, 8))
            want = x.astype(f64) * (w.astype(f64) + f64(f32(offset)))
            if bias:
                want = want + bv.astype(f64)
            c.call(b, s, [x], want)
        out.append(c)
    return out


# txtar I/O: keep the out/mlir section the Go test writes.

def read_sections(path):
    if not os.path.exists(path):
        return {}
    secs, name = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("-- ") and line.rstrip("\n").endswith(" --"):
                name = line.rstrip("\n")[3:-3]
                secs[name] = ""
            elif name is not None:
                secs[name] += line
    return secs


def main():
    names = set()
    for c in cases():
        path = os.path.join(HERE, c.name + ".txtar")
        kept = read_sections(path).get("out/mlir")
        text = "%s: %s\nWritten by gen.py (numpy); out/mlir by go test ./lower -update.\n" % (c.prim, c.doc)
        for sec, body in c.sections():
            text += "-- %s --\n%s" % (sec, body)
        if kept is not None:
            text += "-- out/mlir --\n" + kept
        with open(path, "w") as f:
            f.write(text)
        names.add(c.name + ".txtar")
    for stale in sorted(set(p for p in os.listdir(HERE) if p.endswith(".txtar")) - names):
        print("not written by gen.py (remove it?):", stale)
    print("wrote %d cases to %s" % (len(names), HERE))


if __name__ == "__main__":
    main()
