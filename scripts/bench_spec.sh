#!/usr/bin/env bash
# Benchmarks speculative decoding by prompt lookup on copy-heavy tasks
# (issue 31): archc's plain decode against archc's `--speculative ngram`,
# and llama.cpp's plain decode against llama.cpp's prompt-lookup decoding
# (llama-cpp-python's LlamaPromptLookupDecoding), on the same GGUF files,
# the same prompt token ids, the same thread count and greedy decoding.
#
# Two prompts, built here (no downloads), each wrapped as a user turn of
# SmolLM2's chat template (ChatML with its default system turn) and
# tokenized by archc (`infer tokenize --add-special`); every engine gets
# those ids:
#   code  a 299-line Python file (small functions over one identifier,
#         `ledger`), then "Rename ledger to journal and print the whole file.";
#         the assistant's answer is begun with the fence and the file's first
#         characters (```python and """): without them SmolLM2-135M writes a
#         new class instead of the file (BENCH_CODE_PREFILL=0 leaves them out)
#   json  a 30-field JSON record, then "Print the same JSON with the field
#         'status' changed to 'done'."
# For each model and prompt the table gives decode tokens/s of each run, the
# speedup of speculation over its engine's plain decode, accepted/drafted
# tokens, whether archc's speculative ids equal its plain ids (they must:
# greedy speculation changes speed, never output) and whether llama.cpp's
# ids equal archc's (reported only: llama.cpp quantizes activations), and
# archc's speculative decode over llama.cpp's prompt lookup.
#
# archc stops at an end-of-generation token (it has no ignore-eos); the
# other three runs generate exactly as many tokens as archc's plain run did,
# so all time the same number of tokens. On random-weight models (SHAPE:FORMAT)
# the text is noise: acceptance says nothing about real copy tasks there,
# only the cost of a verify step; the report says so.
#
# Usage: scripts/bench_spec.sh [MODEL ...]
#   MODEL: smollm2, gemma3, SHAPE:FORMAT (a random-weight GGUF of a real
#   model's body, scripts/gen_bench_gguf.py) or a .gguf path, resolved as
#   scripts/bench.sh does (scripts/bench_lib.sh). Default: BENCH_MODELS, else
#   "smollm2 llama-3.2-1b:q4_0". The prompts use SmolLM2's chat template, so
#   models with another vocabulary (gemma3) get them as plain ChatML text.
#
# Environment:
#   BENCH_MODELS        models when none are given ("smollm2 llama-3.2-1b:q4_0")
#   BENCH_THREADS       threads for every engine (2)
#   BENCH_MAX_TOKENS    new tokens per run (default 256, 64 for SHAPE:FORMAT models)
#   BENCH_DRAFT_MAX     archc --draft-max and llama.cpp's num_pred_tokens (8)
#   BENCH_NGRAM         llama.cpp's max_ngram_size (2, LlamaPromptLookupDecoding's
#                       default; archc's prompt lookup tries 3, 2, then 1)
#   BENCH_CODE_PREFILL  1: begin the code prompt's answer with ```python and
#                       """ (the default); 0: the bare chat prompt
#   BENCH_SKIP_LLAMACPP=1  skip llama.cpp
#   BENCH_PYTHON        interpreter for the llama.cpp peers; else .venv-bench,
#                       given llama-cpp-python (built from source, 10 to 30
#                       minutes on 2 cores, once), numpy and gguf at the
#                       pins of scripts/requirements-bench.txt when it lacks
#                       them (bench_lib.sh; CMAKE_ARGS as in bench.sh)
#   BENCH_INFER         a prebuilt bin/infer to run (default: go build it)
#   BENCH_OUT           folder for the prompts and raw JSON reports
#                       (.cache/bench/spec-<time>)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

die() {
  echo "bench_spec.sh: $*" >&2
  exit 1
}
note() { echo "bench_spec.sh: $*" >&2; }

threads="${BENCH_THREADS:-2}"
draft_max="${BENCH_DRAFT_MAX:-8}"
ngram="${BENCH_NGRAM:-2}"
prefill="${BENCH_CODE_PREFILL:-1}"
skip_llama="${BENCH_SKIP_LLAMACPP:-0}"
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS='$threads': want a positive integer"
[[ "$draft_max" =~ ^[1-9][0-9]*$ ]] || die "BENCH_DRAFT_MAX='$draft_max': want a positive integer"
[[ "$ngram" =~ ^[1-9][0-9]*$ ]] || die "BENCH_NGRAM='$ngram': want a positive integer"
[[ "$prefill" == 0 || "$prefill" == 1 ]] || die "BENCH_CODE_PREFILL='$prefill': want 0 or 1"
[[ -z "${BENCH_MAX_TOKENS:-}" || "${BENCH_MAX_TOKENS}" =~ ^[1-9][0-9]*$ ]] || die "BENCH_MAX_TOKENS='$BENCH_MAX_TOKENS': want a positive integer"

if (($# > 0)); then
  models=("$@")
else
  read -r -a models <<<"${BENCH_MODELS:-smollm2 llama-3.2-1b:q4_0}"
fi
((${#models[@]} > 0)) || die "no models: give smollm2, SHAPE:FORMAT or .gguf paths"

source scripts/bench_lib.sh
bench_resolve_models "${models[@]}"
bench_peers "$skip_llama"
py="$bench_py"
bench_write_synth

if [[ -n "${BENCH_INFER:-}" ]]; then
  infer="$BENCH_INFER"
  [[ -x "$infer" ]] || die "BENCH_INFER=$infer: not an executable"
else
  scripts/setup.sh >/dev/null || die "scripts/setup.sh failed"
  mkdir -p bin
  go build -o bin/ ./cmd/infer || die "go build ./cmd/infer failed"
  infer=bin/infer
fi
help="$("$infer" generate --help 2>/dev/null || true)" # read whole: `| grep -q` under pipefail races
grep -q -- --speculative <<<"$help" || die "$infer has no --speculative flag"

load_start="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$load_start" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
  note "the machine is busy (load average $load_start on $(nproc) cores): the figures will be noisy"
fi
out="${BENCH_OUT:-$root/.cache/bench/spec-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"

# The prompts: $out/code.txt and $out/json.txt, chat-wrapped text.
python3 - "$out" "$prefill" <<'PY' || die "could not write the prompts"
import json, sys

out, prefill = sys.argv[1], sys.argv[2] == "1"
FIELDS = ["price", "quantity", "discount", "tax", "weight", "stock", "rating", "views",
          "returns", "margin", "shipping", "refund", "bonus", "deposit", "fee", "credit"]
TEMPLATES = [
    ('def total_{f}(ledger):\n'
     '    """Sum of {f} over every entry of the ledger."""\n'
     '    return sum(entry["{f}"] for entry in ledger)\n'),
    ('def max_{f}(ledger):\n'
     '    """Largest {f} in the ledger, or 0 when the ledger is empty."""\n'
     '    values = [entry["{f}"] for entry in ledger]\n'
     '    return max(values) if values else 0\n'),
    ('def count_{f}(ledger, threshold={n}):\n'
     '    """How many entries of the ledger have a {f} above threshold."""\n'
     '    return sum(1 for entry in ledger if entry["{f}"] > threshold)\n'),
    ('def average_{f}(ledger):\n'
     '    """Mean {f} of the ledger\'s entries (0.0 for an empty ledger)."""\n'
     '    if not ledger:\n'
     '        return 0.0\n'
     '    return total_{f}(ledger) / len(ledger)\n'),
]
parts = ['"""Helpers over a shop\'s ledger: a list of entries, one dict per sale."""\n\n'
         'import math\n\n\n'
         'def new_ledger():\n'
         '    """An empty ledger."""\n'
         '    return []\n']
i = 0
while "\n\n".join(parts).count("\n") < 295:  # about 300 lines
    parts.append(TEMPLATES[(i // len(FIELDS)) % len(TEMPLATES)].format(f=FIELDS[i % len(FIELDS)], n=10 + 5 * (i % 7)))
    i += 1
code = "\n\n".join(parts)

record = {
    "id": 48213, "title": "Replace the pump seals in building C", "status": "open",
    "priority": "high", "owner": "m.okafor", "reporter": "l.brandt", "team": "facilities",
    "created": "2024-03-18T09:41:07Z", "updated": "2024-03-21T16:02:55Z", "due": "2024-03-29",
    "estimate_hours": 6.5, "spent_hours": 2.0, "building": "C", "floor": 2, "room": "C-214",
    "asset_tag": "PMP-00731", "vendor": "Hydra Seals Ltd", "po_number": "PO-2024-1187",
    "cost_eur": 412.8, "currency": "EUR", "approved": True, "approver": "r.nakamura",
    "labels": ["plumbing", "preventive", "q1"], "watchers": 4, "comments": 7,
    "parent": 48190, "sla": "72h", "escalated": False, "location": {"lat": 52.5163, "lon": 13.3777},
    "notes": "Seal kit arrived on Tuesday; the pump must be drained before the work starts.",
}
assert len(record) == 30


def chat(user):  # SmolLM2-Instruct's chat template with its default system turn
    return ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n")


with open(f"{out}/code.txt", "w") as f:
    f.write(chat(f"```python\n{code}```\n\nRename ledger to journal and print the whole file.")
            + ('```python\n"""' if prefill else ""))
with open(f"{out}/json.txt", "w") as f:
    f.write(chat(f"```json\n{json.dumps(record, indent=2)}\n```\n\nPrint the same JSON with the field 'status' changed to 'done'."))
PY
prompts=(code json)

ids_of() { # ids_of TOKENIZE_JSON: the ids, comma-separated
  python3 -c 'import json, sys; print(",".join(map(str, json.load(open(sys.argv[1]))["ids"])))' "$1"
}
field() { # field JSON KEY: the report's KEY
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$1" "$2"
}
run_archc() { # run_archc NAME IDS MAX_TOKENS MAX_LEN [ARGS...]: archc JSON in $out/NAME.json
  local name="$1" ids="$2" n="$3" len="$4"
  shift 4
  "$infer" generate --model "$model" --prompt-ids "$ids" --max-tokens "$n" --max-len "$len" --threads "$threads" \
    --json -q "$@" >"$out/$name.json" 2>"$out/$name.log" || {
    tail -n 20 "$out/$name.log" >&2
    die "archc run $name failed (log: $out/$name.log)"
  }
}
measure_archc() { # as run_archc, again if the run compiled (the compile cache was emptied meanwhile)
  run_archc "$@"
  if [[ "$(field "$out/$1.json" compile_cached)" != True ]]; then
    note "$1 compiled (compile cache emptied by someone else?): running it again"
    run_archc "$@"
  fi
}
run_peer() { # run_peer NAME SCRIPT ARGS...: JSON in $out/NAME.json
  local name="$1" script="$2"
  shift 2
  "$py" "$script" "$@" >"$out/$name.json" 2>"$out/$name.log" || {
    tail -n 20 "$out/$name.log" >&2
    die "$script failed (log: $out/$name.log)"
  }
}

rows=() # TAG PROMPT RANDOM triples for the report
for i in "${!bench_paths[@]}"; do
  model="${bench_paths[i]}" spec="${models[i]}"
  tag="$(basename "$model" .gguf)"
  random=0
  if [[ "$spec" == *:* && ! -f "$spec" ]]; then random=1; fi
  if [[ -n "${BENCH_MAX_TOKENS:-}" ]]; then
    max="$BENCH_MAX_TOKENS"
  elif ((random)); then
    max=64
  else
    max=256
  fi
  rm -f "$out/$tag".* # a reused BENCH_OUT: no stale reports
  longest=0
  for p in "${prompts[@]}"; do
    "$infer" tokenize --model "$model" --json --add-special <"$out/$p.txt" >"$out/$tag.$p.tok.json" ||
      die "$infer tokenize --model $model failed"
    declare "ids_$p=$(ids_of "$out/$tag.$p.tok.json")"
    n="$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["ids"]))' "$out/$tag.$p.tok.json")"
    if ((n > longest)); then longest=$n; fi
  done
  # One context capacity per model (one compiled module per mode): the
  # longest prompt, the new tokens and a draft, rounded up to 256.
  maxlen=$(((longest + max + draft_max + 255) / 256 * 256))
  warm="$(cut -d, -f1-16 <<<"$ids_json")"
  note "$tag: archc warm-up, plain and speculative, --max-len $maxlen (each compiles on its first run: minutes)"
  run_archc "$tag.warmup" "$warm" 1 "$maxlen"
  run_archc "$tag.warmup-spec" "$warm" 1 "$maxlen" --speculative ngram --draft-max "$draft_max"
  for p in "${prompts[@]}"; do
    v="ids_$p"
    ids="${!v}"
    note "$tag: $p prompt: archc plain"
    measure_archc "$tag.$p.archc" "$ids" "$max" "$maxlen"
    n="$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["tokens"]))' "$out/$tag.$p.archc.json")"
    ((n > 0)) || die "$tag: archc generated no tokens"
    note "$tag: $p prompt: archc --speculative ngram"
    measure_archc "$tag.$p.archc-spec" "$ids" "$max" "$maxlen" --speculative ngram --draft-max "$draft_max"
    if [[ "$skip_llama" != 1 ]]; then
      note "$tag: $p prompt: llama.cpp plain ($n tokens)"
      run_peer "$tag.$p.llamacpp" scripts/bench_llamacpp.py "$model" --prompt-ids "$ids" --max-tokens "$n" \
        --threads "$threads" --n-ctx "$maxlen" --ignore-eos
      note "$tag: $p prompt: llama.cpp prompt lookup ($n tokens)"
      run_peer "$tag.$p.llamacpp-lookup" scripts/bench_llamacpp_lookup.py "$model" --prompt-ids "$ids" --max-tokens "$n" \
        --threads "$threads" --n-ctx "$maxlen" --num-pred-tokens "$draft_max" --max-ngram-size "$ngram"
    fi
    rows+=("$tag" "$p" "$random")
  done
done

loadavg="load average $load_start at the start, $(cut -d' ' -f1 /proc/loadavg) at the end, $(nproc) cores"
cpu="$(lscpu 2>/dev/null | grep -E 'Model name|Flags' || grep -m2 -E '^(model name|flags)' /proc/cpuinfo)"
python3 - "$out" "$threads" "$draft_max" "$ngram" "$loadavg" "$cpu" "$prefill" "${rows[@]}" <<'PY'
import json, os, sys

out, threads, draft_max, ngram, loadavg, cpu, prefill = sys.argv[1:8]
rest = sys.argv[8:]
rows = [rest[i:i + 3] for i in range(0, len(rest), 3)]


def load(name):
    path = os.path.join(out, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None


def fmt(v, nd):
    return "-" if v is None else f"{v:.{nd}f}"


def ratio(a, b):
    return None if a is None or b is None or not b else a / b


def rate(r):
    if r is None:
        return "-"
    d, a = r.get("spec_draft_tokens", 0), r.get("spec_accepted_tokens", 0)
    return f"{a}/{d} {100 * a / d:.0f}%" if d else "0/0"


def same(a, b):
    if a is None or b is None:
        return "-"
    x, y = a["tokens"], b["tokens"]
    if x == y:
        return "yes"
    i = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    return f"no@{i}"  # index of the first differing token


def dec(r):
    return r.get("decode_tokens_per_s") if r else None


print()
print(f"prompt-lookup speculative decoding on copy-heavy prompts | greedy, same prompt ids, threads {threads}, "
      f"draft {draft_max} tokens at most (archc --draft-max, llama.cpp num_pred_tokens; "
      f"llama.cpp max_ngram_size {ngram}, archc n-grams 3..1)")
print(loadavg)
for line in cpu.splitlines():
    print(" ".join(line.split()))
first = load(f"{rows[0][0]}.{rows[0][1]}.archc") if rows else None
if first:
    print(f"archc: kernels {first.get('kernels')}, precision {first.get('precision')}")
lk = next((r for r in (load(f"{t}.{p}.llamacpp") for t, p, _ in rows) if r), None)
if lk:
    print(f"llama.cpp: llama-cpp-python {lk.get('llama_cpp_python')}, built with: {lk.get('system_info')}")
print()
cols = ["model", "prompt", "prompt", "gen", "archc", "archc", "spec/", "archc", "spec ids",
        "llama", "llama", "lookup/", "llama", "llama ids = archc", "archc spec/"]
cols2 = ["", "", "tokens", "tokens", "plain t/s", "spec t/s", "plain", "accepted/drafted", "= plain",
         "plain t/s", "lookup t/s", "plain", "accepted/drafted", "plain/lookup", "llama lookup"]
table = []
for tag, p, random in rows:
    a, s, l, lu = (load(f"{tag}.{p}.{e}") for e in ("archc", "archc-spec", "llamacpp", "llamacpp-lookup"))
    table.append([tag + (" *" if random == "1" else ""), p, str(len(a["prompt_tokens"])), str(len(a["tokens"])),
                  fmt(dec(a), 2), fmt(dec(s), 2), fmt(ratio(dec(s), dec(a)), 2), rate(s), same(a, s),
                  fmt(dec(l), 2), fmt(dec(lu), 2), fmt(ratio(dec(lu), dec(l)), 2), rate(lu) if lu else "-",
                  f"{same(a, l)}/{same(a, lu)}" if l else "-", fmt(ratio(dec(s), dec(lu)), 2)])
widths = [max(len(r[i]) for r in table + [cols, cols2]) for i in range(len(cols))]
for r in (cols, cols2):
    print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
for r in table:
    print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
print()
print("t/s: decode tokens/s after the first token (higher is better); spec/plain, lookup/plain: speedup over the same "
      "engine's plain decode; accepted/drafted: drafted tokens the model kept.")
print("gen tokens: what archc's plain run generated (it stops at an end token); every other run generates as many.")
print("spec ids = plain: archc's speculative ids equal its plain ids (they must); llama ids = archc: llama.cpp's "
      "plain/lookup ids equal archc's (reported only: llama.cpp quantizes activations; no@i: first difference at i).")
print("code: a 299-line Python file + \"Rename ledger to journal and print the whole file.\"" +
      ("; the answer begun with ```python and \"\"\" (BENCH_CODE_PREFILL=0: bare)" if prefill == "1" else " (bare prompt)") +
      "; json: a 30-field record + \"Print the same JSON with the field 'status' changed to 'done'.\"; "
      "both in SmolLM2's chat template")
if any(r == "1" for _, _, r in rows):
    print("* random weights: the text is noise (often one token repeated), so acceptance and speedup say nothing "
          "about real copy tasks; these rows show what verify steps cost on this shape.")
print(f"prompts and raw reports: {out}")
PY
