#!/usr/bin/env python3
"""Agreement of archc's precision modes and of llama.cpp with transformers fp32 (issue 19's gate for --precision int8).

For one GGUF model, the reference is Hugging Face transformers in fp32 loading the same GGUF (its weights
dequantized to fp32, eager attention). Two measures, each for archc --precision f32, archc --precision int8 and
llama.cpp (llama-cpp-python, same GGUF, same threads):

  top-1 agreement  transformers greedily generates --steps tokens (512) after a prompt; each engine is then run
                   teacher-forced along that sequence, and the measure is the fraction of steps whose argmax is
                   transformers' token (llama.cpp's "same top p" of llama-perplexity --kl-divergence);
  mean KL          the mean over the positions of a held text (a second, fixed English paragraph) of
                   KL(p_hf || p_engine) of the next-token distributions, in nats (also the 99th percentile).

archc runs `infer logits` (one prefill of the first token, then the decode entry point token by token, as
generation runs); llama.cpp evaluates the sequence with logits_all=True.

Usage (in .venv-bench, which scripts/bench.sh builds, after go build -o bin/ ./cmd/infer):
  python scripts/agreement.py MODEL.gguf --infer bin/infer [--steps 512] [--threads 2] [--json OUT]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

PROMPT = (
    "The lighthouse stood on a rock at the mouth of the harbour, and for more than a hundred years its keepers had "
    "climbed the spiral stair each evening to light the lamp."
)
HELD = (
    "Bread is one of the oldest prepared foods. Evidence from thirty thousand years ago in Europe shows starch "
    "residue on rocks used for pounding plants, and it is possible that during this time starch extract from the "
    "roots of plants such as cattails and ferns was spread on a flat rock, placed over a fire and cooked into a "
    "primitive form of flatbread. Around ten thousand years ago, with the dawn of agriculture, grains became the "
    "mainstay of making bread. Yeast spores occur everywhere, including on the surface of cereal grains, so any "
    "dough left to rest will become naturally leavened. There were multiple sources of leavening available for "
    "early bread, and airborne yeasts could be harnessed by leaving uncooked dough exposed to air for some time "
    "before cooking. Pliny the Elder reported that the Gauls and Iberians used the foam skimmed from beer to "
    "produce a lighter kind of bread than other peoples, and parts of the ancient world that drank wine instead of "
    "beer used a paste composed of grape juice and flour that was allowed to begin fermenting, or wheat bran "
    "steeped in wine, as a source for yeast."
)


def log_softmax(x):
    x = x.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def tokenize(infer, model, text):
    out = subprocess.run([infer, "tokenize", "--model", model, "--text", text, "--json", "--add-special"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["ids"]


def hf_reference(model, prompt, held, steps, threads):
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(threads)
    folder, name = os.path.split(os.path.abspath(model))
    m = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32, attn_implementation="eager")
    m.eval()
    with torch.no_grad():
        ids = torch.tensor([prompt])
        gen = m.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=steps,
                         min_new_tokens=steps, pad_token_id=0)
        seq = gen[0].tolist()
        held_logits = m(torch.tensor([held])).logits[0].float().numpy()
    return seq, held_logits


def archc_logits(infer, model, ids, precision, threads, path):
    subprocess.run([infer, "logits", "-q", "--model", model, "--prompt-ids", ",".join(map(str, ids)),
                    "--precision", precision, "--threads", str(threads), "--out", path], check=True)
    return np.load(path)


def llamacpp_logits(model, ids, threads):
    from llama_cpp import Llama

    llm = Llama(model_path=model, n_ctx=max(1024, len(ids) + 8), n_batch=512, n_threads=threads,
                n_threads_batch=threads, logits_all=True, verbose=False)
    llm.eval(ids)
    out = np.array(llm.scores[: len(ids)], dtype=np.float32)
    llm.close()
    return out


def measures(seq, n_prompt, held_ref, seq_logits, held_logits):
    """top-1 agreement along seq (rows of seq_logits: positions 0..len-1) and KL stats on the held text."""
    steps = len(seq) - n_prompt
    pred = seq_logits[n_prompt - 1 : len(seq) - 1].argmax(axis=-1)
    top1 = float((pred == np.array(seq[n_prompt:])).mean())
    lp, lq = log_softmax(held_ref[:-1]), log_softmax(held_logits[:-1])
    kl = (np.exp(lp) * (lp - lq)).sum(axis=-1)
    return {"top1_agreement": top1, "steps": steps, "mean_kl": float(kl.mean()), "p99_kl": float(np.percentile(kl, 99)),
            "held_positions": int(len(kl))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--infer", default="bin/infer")
    ap.add_argument("--steps", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--engines", default="archc-f32,archc-int8,llama.cpp")
    ap.add_argument("--json")
    a = ap.parse_args()
    prompt = tokenize(a.infer, a.model, PROMPT)
    held = tokenize(a.infer, a.model, HELD)
    print(f"agreement.py: {os.path.basename(a.model)}: transformers fp32 greedy {a.steps} steps after {len(prompt)} "
          f"prompt tokens; held text {len(held)} tokens", file=sys.stderr)
    seq, held_ref = hf_reference(a.model, prompt, held, a.steps, a.threads)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for e in a.engines.split(","):
            print(f"agreement.py: {e}", file=sys.stderr)
            if e.startswith("archc-"):
                p = e.removeprefix("archc-")
                s = archc_logits(a.infer, a.model, seq, p, a.threads, os.path.join(tmp, "s.npy"))
                h = archc_logits(a.infer, a.model, held, p, a.threads, os.path.join(tmp, "h.npy"))
            elif e == "llama.cpp":
                s, h = llamacpp_logits(a.model, seq, a.threads), llamacpp_logits(a.model, held, a.threads)
            else:
                sys.exit(f"agreement.py: unknown engine {e!r} (archc-f32, archc-int8, llama.cpp)")
            results[e] = measures(seq, len(prompt), held_ref, s, h)
    report = {"model": os.path.basename(a.model), "reference": "transformers fp32 (GGUF dequantized)", "results": results}
    print(f"\n{report['model']}: against {report['reference']}")
    print(f"  {'engine':<12} {'top-1 agreement':>16} {'mean KL (nats)':>15} {'p99 KL':>10}")
    for e, r in results.items():
        print(f"  {e:<12} {r['top1_agreement']:>10.4f} ({r['steps']}) {r['mean_kl']:>15.6f} {r['p99_kl']:>10.5f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
