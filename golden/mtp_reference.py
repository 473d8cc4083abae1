"""mtp_reference.py — an independent reference for archc's multi-token
prediction (MTP) drafter (the mtp modules of archs/deepseek_v3.arch,
archs/glm4_moe.arch, archs/mimo.arch and archs/qwen3_next.arch; read by
golden/mtp_test.go): the MTP module's logits on the deepseek_v3, glm4_moe,
mimo and qwen3_next fixtures given a random MTP layer, written to
testdata/<fixture>/mtp_reference.json.

transformers has no MTP module, so its wiring is written here in numpy from
the DeepSeek-V3 technical report §2.2 (depth 1) and, for the order of the
concatenation the published eh_proj reads, vLLM's deepseek_mtp.py:

    h'_t = eh_proj [RMSNorm_e(Emb(t_{t+1})) ; RMSNorm_h(h_t)]
    h''  = TransformerBlock(h')            (layer num_hidden_layers)
    p    = lm_head(RMSNorm_shared_head(h''))   → the token at t+2

h_t is the main model's output after its final norm model.norm (the
modeling_deepseek.py shipped with DeepSeek's MTP checkpoints, vLLM and
SGLang pass it; the report leaves it open); MiMo's is the state before it
(vLLM's MiMoModel). The transformer block is HF's decoder layer (DeepseekV3DecoderLayer: MLA,
noaux_tc MoE; Glm4MoeDecoderLayer) run on the MTP layer's weights: the
block the main oracle already checks. GLM-4.5's MTP layer is DeepSeek-V3's
(vLLM's glm4_moe_mtp.py). MiMo's (its remote modeling_mimo.py, vLLM's
mimo_mtp.py) concatenates [hidden; embedding] through input_proj and ends
in final_layernorm before the LM head. Qwen3-Next's (its checkpoints'
mtp.* tensors, vLLM's qwen3_next_mtp.py) is DeepSeek's wiring under other
names: fc over [pre_fc_norm_embedding(Emb); pre_fc_norm_hidden(h_t after
model.norm)], a full-attention decoder layer at mtp.layers.0, then
mtp.norm; its norms scale by (1 + w) (CONVENTIONS). The
embedding and output head are the main model's (shared, as the report says).

The MTP weights are not stored: both sides draw them from one splitmix64
stream (SEED, mtp_test.go's mtpValues), tensor by tensor in name order,
experts stacked [experts, ...]; a norm weight is 1 + u/10, any other 0.2·u,
u uniform in [-1, 1) from a draw's top 53 bits.

Run: cd golden && /tmp/oracle/bin/python -u mtp_reference.py [FIXTURE...]
"""
import json
import os
import re
import shutil
import sys
import tempfile

import numpy as np
import torch
from safetensors import safe_open
from safetensors.numpy import save_file
from transformers import AutoModelForCausalLM

SEED = 31
TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")
FIXTURES = ["deepseek_v3", "glm4_moe", "mimo", "qwen3_next", "qwen3_5", "qwen3_5_moe"]  # mtp_test.go runs qwen3_5_moe under -fixture only
MASK = 2**64 - 1
CHAIN = 3  # chained draft tokens per reference step


def stream(seed):
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        yield (z >> 11) / float(1 << 53) * 2 - 1


# Each family's MTP convention: where the MTP layer's weights are
# (prefix), the decoder layer whose shapes its block takes (src, a layer
# of the same kind), its own tensors (embedding norm e, hidden norm h,
# projection proj, the norm after the block: out), the order of the
# concatenation, and whether h_t is the main model's output after its
# final norm (main_norm: DeepSeek's modeling_deepseek.py, vLLM's and
# SGLang's deepseek MTP) or before it (MiMo: vLLM's MiMoModel returns the
# state before model.norm for its MTP). The block's normed output gives
# the logits.
# layer is where the block's own weights are when not under prefix
# (Qwen3-Next: mtp.fc beside mtp.layers.0); norm_1p, whether every norm
# scales by (1 + w) (Qwen3NextRMSNorm).
# feed is what a chained draft feeds back as the next position's state
# (into the hidden norm, after any main-model norm): the block's output
# before the out norm ("pre": vLLM's DeepSeekMultiTokenPredictorLayer
# returns it, compute_logits norms it) or after ("normed": vLLM's MiMo and
# Qwen3-Next predictors return the normed state).
QWEN3_NEXT = dict(prefix="mtp.", layer="mtp.layers.0.", src=1, e="pre_fc_norm_embedding", h="pre_fc_norm_hidden", proj="fc", order="eh", out="norm", main_norm=True, norm_1p=True, feed="normed")
DEEPSEEK = dict(prefix="model.layers.{n}.", src=1, e="enorm", h="hnorm", proj="eh_proj", order="eh", out="shared_head.norm", main_norm=True, feed="pre")
CONVENTIONS = {
    "deepseek_v3": DEEPSEEK,
    "glm4_moe": DEEPSEEK,
    "mimo": dict(prefix="model.mtp_layers.0.", src=0, e="token_layernorm", h="hidden_layernorm", proj="input_proj", order="he", out="final_layernorm", main_norm=False, feed="normed"),
    "qwen3_next": QWEN3_NEXT,
    "qwen3_5": QWEN3_NEXT,  # Qwen3.5's (vLLM's qwen3_5_mtp.py): Qwen3-Next's wiring, its decoder layer
    "qwen3_5_moe_text": QWEN3_NEXT,
}
HF_TYPE = {"mimo": "qwen2"}  # MiMo is remote code: its layers are Qwen2's


def mtp_shapes(main, cfg, conv):
    """The MTP layer's tensors, named as the family's .arch reads them
    (experts stacked), its block's from the fixture's layer src."""
    n, h = cfg["num_hidden_layers"], cfg["hidden_size"]
    pre, src = conv["prefix"].format(n=n), f"model.layers.{conv['src']}."
    lay = conv.get("layer", pre)
    out = {}
    for k in main:
        if not k.startswith(src):
            continue
        rest = k[len(src):]
        shape = list(main[k].shape)
        m = re.match(r"mlp\.experts\.(\d+)\.(.*)", rest)
        if m:
            out[f"{lay}mlp.experts.{m.group(2)}"] = [cfg.get("n_routed_experts") or cfg["num_experts"]] + shape
        else:
            out[lay + rest] = shape
    for name in (conv["e"], conv["h"], conv["out"]):
        out[f"{pre}{name}.weight"] = [h]
    out[f"{pre}{conv['proj']}.weight"] = [h, 2 * h]
    return out


def mtp_values(shapes):
    g = stream(SEED)
    vals = {}
    for name in sorted(shapes):
        size = int(np.prod(shapes[name]))
        u = np.array([next(g) for _ in range(size)], dtype=np.float64)
        v = 1 + u / 10 if "norm" in name else 0.2 * u
        vals[name] = v.astype(np.float32).reshape(shapes[name])
    return vals


def rms(x, w, eps):
    x = x.astype(np.float32)
    return (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)) * w


def rms_1p(x, w, eps):  # Qwen3NextRMSNorm: the weight scales by (1 + w)
    return rms(x, 1 + w, eps)


def main():
    for name in sys.argv[1:] or FIXTURES:
        reference(os.path.join(TESTDATA, name))


def reference(FIXTURE):
    top = json.load(open(os.path.join(FIXTURE, "config.json")))
    conv = CONVENTIONS[top["model_type"]]
    # A vision-language checkpoint (Qwen3.5): its text model's config and
    # tensors (model.language_model.* read as model.*), its LM head; the
    # reference runs the text model alone.
    c = dict(top["text_config"], tie_word_embeddings=top.get("tie_word_embeddings", False)) if "text_config" in top else top
    n, eps = c["num_hidden_layers"], c["rms_norm_eps"]
    st = safe_open(os.path.join(FIXTURE, "model.safetensors"), "np")
    main = {}
    for k in st.keys():
        if k.startswith("model.language_model."):
            main["model." + k[len("model.language_model."):]] = st.get_tensor(k)
        elif not k.startswith(("model.visual.", "mtp.")):
            main[k] = st.get_tensor(k)
    shapes = mtp_shapes(main, c, conv)
    vals = mtp_values(shapes)
    pre = conv["prefix"].format(n=n)
    lay = conv.get("layer", pre)
    norm = rms_1p if conv.get("norm_1p") else rms
    own = {conv[k] for k in ("e", "h", "proj", "out")}
    # A model of n+1 layers whose last is the MTP layer's block: HF loads
    # its weights (per expert, as the published checkpoints store them).
    tensors = dict(main)
    for name, v in vals.items():
        if not name.startswith(lay) or lay == pre and any(name[len(pre):].startswith(o + ".") for o in own):
            continue  # the module's own tensors (projection, norms)
        rest = name[len(lay):]
        m = re.match(r"mlp\.experts\.(.*)", rest)
        if m:
            for j in range(v.shape[0]):
                tensors[f"model.layers.{n}.mlp.experts.{j}.{m.group(1)}"] = np.ascontiguousarray(v[j])
        else:
            tensors[f"model.layers.{n}.{rest}"] = v
    tmp = tempfile.mkdtemp()
    try:
        save_file(tensors, os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
        c2 = dict(c, num_hidden_layers=n + 1, model_type=HF_TYPE.get(c["model_type"], c["model_type"]))
        if "layer_types" in c2:  # the MTP block is a full-attention layer
            c2["layer_types"] = c2["layer_types"] + ["full_attention"]
        json.dump(c2, open(os.path.join(tmp, "config.json"), "w"))
        model = AutoModelForCausalLM.from_pretrained(tmp, dtype=torch.float32, attn_implementation="eager")
    finally:
        shutil.rmtree(tmp)
    model.eval()
    sd = model.state_dict()  # HF read the MTP block's weights (a missing one would be random)
    for part in ("self_attn.o_proj.weight", "input_layernorm.weight"):
        assert np.array_equal(sd[f"model.layers.{n}.{part}"].numpy(), vals[lay + part]), part
    oracle = json.load(open(os.path.join(FIXTURE, "oracle.json")))
    seq = oracle["prompts"][2] + oracle["tokens"][2]  # the oracle's third sequence
    ids = torch.tensor([seq])
    got = {}
    hook = model.model.layers[n - 1].register_forward_hook(lambda mod, i, o: got.__setitem__("h", o[0] if isinstance(o, tuple) else o))
    with torch.no_grad():
        model(ids)
    hook.remove()
    h = got["h"][0].numpy()  # [S, hidden]: the last layer's output
    if conv["main_norm"]:  # h_t after the main model's final norm
        h = norm(h, main["model.norm.weight"], eps)
    emb = main["model.embed_tokens.weight"]
    head = main["model.embed_tokens.weight" if c.get("tie_word_embeddings") else "lm_head.weight"]
    nxt = np.array(seq[1:])  # position t reads token t+1
    S = len(nxt)

    def proj(e_ids, hs):  # eh_proj [enorm(Emb(t+1)); hnorm(h_t)] (MiMo: input_proj [hnorm; enorm])
        e = norm(emb[e_ids], vals[pre + conv["e"] + ".weight"], eps)
        hh = norm(hs, vals[pre + conv["h"] + ".weight"], eps)
        return np.concatenate([e, hh] if conv["order"] == "eh" else [hh, e], axis=-1) @ vals[pre + conv["proj"] + ".weight"].T

    def block(x):  # the MTP layer's decoder block over rows 0..len(x)-1 (causal)
        T = len(x)
        pos = torch.arange(T)[None]
        xt = torch.from_numpy(np.asarray(x, dtype=np.float32)[None])
        mask = torch.triu(torch.full((T, T), torch.finfo(torch.float32).min), 1)[None, None]
        with torch.no_grad():
            pe = model.model.rotary_emb(xt, pos)
            y = model.model.layers[n](xt, attention_mask=mask, position_ids=pos, position_embeddings=pe)
        return (y[0] if isinstance(y, tuple) else y)[0].numpy()

    def out(y):  # the block's output → (its normed state; logits)
        y = norm(y, vals[pre + conv["out"] + ".weight"], eps)
        return y, y @ head.T

    def feed(raw, normed):  # the state a chained draft feeds back (conv's feed)
        return raw if conv["feed"] == "pre" else normed

    x = proj(nxt, h[:S])
    raw = block(x)
    y, logits = out(raw)
    # Chained drafts (vLLM's use of one MTP layer for k tokens): with the
    # sequence known through position p and the target's h_0..h_{p-1},
    # the first draft is the module at p-1; the next runs the module at p
    # on that draft token with the module's own output at p-1 for h_p, and
    # so on, each row kept in the module's context.
    chains = []
    for p in (S // 3, 2 * S // 3):
        rows, g, d = list(x[:p]), feed(raw, y)[p - 1], int(logits[p - 1].argmax())
        drafts = [d]
        for _ in range(CHAIN - 1):
            rows.append(proj(np.array([d]), g[None])[0])
            last = block(np.stack(rows))[-1:]
            yn, lg = out(last)
            g, d = feed(last, yn)[0], int(lg[0].argmax())
            drafts.append(d)
        chains.append({"pos": p, "drafts": drafts})
    ROWS = [0, S // 3, 2 * S // 3, S - 1]  # positions whose MTP logits are kept
    out = {"sequence": seq, "rows": ROWS, "logits": [[round(float(v), 6) for v in logits[r]] for r in ROWS],
           "argmax": [int(a) for a in logits.argmax(-1)], "chains": chains}
    with open(os.path.join(FIXTURE, "mtp_reference.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", os.path.join(FIXTURE, "mtp_reference.json"), "rows", ROWS, "of", S)


if __name__ == "__main__":
    main()
