"""Drives `infer serve` with the official openai Python client (pinned in
scripts/requirements-test.txt) and checks what a client sees. Run by
cmd/infer/serve_test.go: python openai_client.py BASE_URL API_KEY.
Exits non-zero with a message on the first failed check."""
import sys

import openai
from openai import OpenAI

base, key = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base + "/v1", api_key=key, max_retries=0, timeout=300)
model = client.models.list().data[0].id


def check(cond, msg):
    if not cond:
        print("FAIL:", msg, file=sys.stderr)
        sys.exit(1)


# Completions, greedy: a repeat gives the same text.
a = client.completions.create(model=model, prompt="The capital of France is", max_tokens=12, temperature=0)
b = client.completions.create(model=model, prompt="The capital of France is", max_tokens=12, temperature=0)
check(a.choices[0].text == b.choices[0].text and a.choices[0].text, f"greedy completions differ: {a.choices[0].text!r} {b.choices[0].text!r}")
check(a.choices[0].finish_reason in ("length", "stop"), f"finish_reason {a.choices[0].finish_reason}")
check(a.usage.completion_tokens <= 12 and a.usage.prompt_tokens > 0, f"usage {a.usage}")

# A seed repeats sampled output.
s1 = client.completions.create(model=model, prompt="Once upon a time", max_tokens=16, temperature=1.0, seed=1234)
s2 = client.completions.create(model=model, prompt="Once upon a time", max_tokens=16, temperature=1.0, seed=1234)
check(s1.choices[0].text == s2.choices[0].text, f"seed 1234 gave {s1.choices[0].text!r} then {s2.choices[0].text!r}")

# Chat, non-streamed and streamed, agree (greedy).
msgs = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Name three colors."}]
c = client.chat.completions.create(model=model, messages=msgs, max_tokens=24, temperature=0)
text = c.choices[0].message.content
check(c.choices[0].message.role == "assistant" and text, f"chat answer {c.choices[0].message}")
parts, finish, usage = [], None, None
for chunk in client.chat.completions.create(model=model, messages=msgs, max_tokens=24, temperature=0, stream=True, stream_options={"include_usage": True}):
    if chunk.usage:
        usage = chunk.usage
    for ch in chunk.choices:
        if ch.delta.content:
            parts.append(ch.delta.content)
        if ch.finish_reason:
            finish = ch.finish_reason
check("".join(parts) == text, f"streamed chat {''.join(parts)!r} differs from {text!r}")
check(finish in ("stop", "length") and usage and usage.completion_tokens == c.usage.completion_tokens, f"stream end: {finish} {usage}")

# Multi-turn: the previous answer as an assistant turn.
c2 = client.chat.completions.create(model=model, messages=msgs + [{"role": "assistant", "content": text}, {"role": "user", "content": "And one more?"}], max_tokens=8, temperature=0)
check(c2.choices[0].message.content, "multi-turn answer is empty")

# Stop strings: the greedy text cut right before the first occurrence, the
# stop string itself never sent, streamed or not.
full = client.completions.create(model=model, prompt="1, 2, 3, 4,", max_tokens=20, temperature=0).choices[0].text
stop = full.strip()[:2] if len(full.strip()) >= 2 else None
if stop:
    want = full[: full.index(stop)]
    got = client.completions.create(model=model, prompt="1, 2, 3, 4,", max_tokens=20, temperature=0, stop=[stop])
    check(got.choices[0].text == want and got.choices[0].finish_reason == "stop", f"stop {stop!r}: {got.choices[0].text!r}, want {want!r}")
    streamed = "".join(ch.choices[0].text for ch in client.completions.create(model=model, prompt="1, 2, 3, 4,", max_tokens=20, temperature=0, stop=[stop], stream=True) if ch.choices)
    check(streamed == want, f"streamed stop {stop!r}: {streamed!r}, want {want!r}")

# Logprobs (chat): one entry per token, top alternatives sorted.
lp = client.chat.completions.create(model=model, messages=msgs, max_tokens=4, temperature=0, logprobs=True, top_logprobs=3)
content = lp.choices[0].logprobs.content
check(len(content) == lp.usage.completion_tokens, f"{len(content)} logprob entries for {lp.usage.completion_tokens} tokens")
for e in content:
    check(e.logprob <= 0 and len(e.top_logprobs) == 3, f"logprob entry {e}")
    tops = [t.logprob for t in e.top_logprobs]
    check(tops == sorted(tops, reverse=True) and abs(tops[0] - e.logprob) < 1e-5, f"greedy token is not the top alternative: {e}")

# Errors: wrong key -> 401; bad type -> 400 naming the field.
bad = OpenAI(base_url=base + "/v1", api_key="wrong", max_retries=0)
try:
    bad.models.list()
    check(False, "a wrong API key was accepted")
except openai.AuthenticationError:
    pass
try:
    client.completions.create(model=model, prompt="x", max_tokens=-3)
    check(False, "max_tokens -3 was accepted")
except openai.BadRequestError as e:
    check("max_tokens" in str(e), f"error does not name max_tokens: {e}")
print("ok")
