"""Drives /v1/responses and /v1/messages with the official openai and
anthropic clients: python sdk_apis.py URL KEY. Exits non-zero with a
message on the first check that fails; prints a summary line on success.
The checks compare answers with each other (greedy, same prompt), never
with expected text."""

import sys

import anthropic
import openai

url, key = sys.argv[1], sys.argv[2]


def check(cond, what):
    if not cond:
        raise SystemExit("FAILED: " + what)


oc = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)

# Responses: text in, text out, instructions, usage.
r = oc.responses.create(model="m", input="Say hi.", instructions="Answer briefly.", max_output_tokens=8, temperature=0)
check(r.object == "response" and r.status in ("completed", "incomplete"), f"responses.create: {r}")
check(r.usage.output_tokens > 0 and r.usage.input_tokens > 0, f"usage {r.usage}")
check(r.output[0].type == "message" and r.output[0].role == "assistant", f"output {r.output}")
text = r.output_text
check(isinstance(text, str), "output_text")

# The same request streamed: the deltas make the same text; events in order.
# (The SDK's stream helper wants response.completed; a response cut by
# max_output_tokens ends with response.incomplete, as OpenAI's does.)
types, deltas = [], []
with oc.responses.create(model="m", input="Say hi.", instructions="Answer briefly.", max_output_tokens=8, temperature=0, stream=True) as s:
    for ev in s:
        types.append(ev.type)
        if ev.type == "response.output_text.delta":
            deltas.append(ev.delta)
        if ev.type in ("response.completed", "response.incomplete"):
            final = ev.response
with oc.responses.stream(model="m", input="Say hi.", max_output_tokens=200, temperature=0) as s:
    streamed = "".join(ev.delta for ev in s if ev.type == "response.output_text.delta")
    full = s.get_final_response()
check(full.status == "completed" and full.output_text == streamed, f"stream helper: {full.status} {full.output_text!r} vs {streamed!r}")
check("".join(deltas) == text == final.output_text, f"streamed {''.join(deltas)!r} / final {final.output_text!r} vs {text!r}")
check(types[0] == "response.created" and types[-1] in ("response.completed", "response.incomplete"), f"event types {types}")
check("response.output_item.added" in types and "response.output_text.done" in types, f"event types {types}")

# previous_response_id continues the conversation (its turns come first);
# retrieve returns a stored response.
r2 = oc.responses.create(model="m", input=[{"role": "user", "content": [{"type": "input_text", "text": "And again?"}]}],
                         previous_response_id=r.id, max_output_tokens=4, temperature=0)
check(r2.previous_response_id == r.id and r2.usage.input_tokens > r.usage.input_tokens - 1, f"previous_response_id: {r2.usage} after {r.usage}")
check(oc.responses.retrieve(r.id).output_text == text, "retrieve")

# Refused by name: tools, an unknown previous response.
try:
    oc.responses.create(model="m", input="x", tools=[{"type": "function", "name": "f", "parameters": {"type": "object"}}])
    check(False, "tools were accepted")
except openai.BadRequestError as e:
    check("tools" in str(e), f"tools refusal: {e}")
try:
    oc.responses.create(model="m", input="x", previous_response_id="resp_nope")
    check(False, "an unknown previous_response_id was accepted")
except openai.BadRequestError as e:
    check("previous_response_id" in str(e), f"previous_response_id refusal: {e}")

ac = anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)
msgs = [{"role": "user", "content": "Say hi."}]
greedy = {"temperature": 0}  # this client no longer has the parameter; the server still takes it

# Messages: text, usage equal to count_tokens, the stream equal to the answer.
m = ac.messages.create(model="m", max_tokens=8, system="Answer briefly.", messages=msgs, extra_body=greedy)
check(m.type == "message" and m.role == "assistant" and m.content[0].type == "text", f"messages.create: {m}")
check(m.stop_reason in ("end_turn", "max_tokens"), f"stop_reason {m.stop_reason}")
n = ac.messages.count_tokens(model="m", system="Answer briefly.", messages=msgs).input_tokens
check(m.usage.input_tokens == n and n > 0, f"usage {m.usage} vs count_tokens {n}")
with ac.messages.stream(model="m", max_tokens=8, system="Answer briefly.", messages=msgs, extra_body=greedy) as st:
    streamed = "".join(st.text_stream)
    fm = st.get_final_message()
mtext = m.content[0].text
check(streamed == mtext == fm.content[0].text, f"streamed {streamed!r} / final {fm.content[0].text!r} vs {mtext!r}")
check(fm.stop_reason == m.stop_reason and fm.usage.output_tokens == m.usage.output_tokens, f"stream end {fm.stop_reason} {fm.usage}")

# A stop sequence taken from the answer ends it there.
stop = next((c for c in mtext[1:] if c.isalnum()), None)
if stop:
    ms = ac.messages.create(model="m", max_tokens=8, system="Answer briefly.", messages=msgs, extra_body=greedy, stop_sequences=[stop])
    check(ms.stop_reason == "stop_sequence" and ms.stop_sequence == stop and ms.content[0].text == mtext[:mtext.index(stop)],
          f"stop_sequences [{stop!r}]: {ms.stop_reason} {ms.stop_sequence!r} {ms.content[0].text!r} (answer {mtext!r})")

# Errors in Anthropic's shape.
try:
    ac.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "http://x/y.png"}}]}])
    check(False, "an image block was accepted")
except anthropic.BadRequestError as e:
    check(e.body["error"]["type"] == "invalid_request_error" and "messages[0].content[0]" in e.body["error"]["message"], f"image refusal: {e.body}")
try:
    ac.messages.create(model="m", max_tokens=8, messages=msgs, tools=[{"name": "f", "input_schema": {"type": "object"}}])
    check(False, "tools were accepted")
except anthropic.BadRequestError as e:
    check("tools" in e.body["error"]["message"], f"tools refusal: {e.body}")
try:
    anthropic.Anthropic(base_url=url, api_key="wrong", max_retries=0).messages.create(model="m", max_tokens=8, messages=msgs)
    check(False, "a wrong key was accepted")
except anthropic.AuthenticationError as e:
    check(e.body["type"] == "error", f"auth error body {e.body}")

print(f"ok: responses ({r.usage.output_tokens} tokens, {len(types)} stream events, previous_response_id), "
      f"messages ({m.usage.output_tokens} tokens, count_tokens {n}, stream, stop_sequence {stop!r}), errors")
