"""Drives /v1/responses and /v1/messages with the official openai and
anthropic clients: python sdk_apis.py URL KEY. Exits non-zero with a
message on the first check that fails; prints a summary line on success.
The checks compare answers with each other (greedy, same prompt), never
with expected text."""

import json
import sys
from typing import Literal

import anthropic
import openai
import pydantic

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

# Function tools (one call at a time: with parallel calls, a model this
# small keeps adding calls until max_output_tokens): a required call is a function_call item with valid
# arguments, streamed the same; its output goes back as a
# function_call_output item (with the whole history, or after
# previous_response_id); a named choice calls that function; hosted tools
# are refused by name.
weather = {"type": "function", "name": "get_weather", "description": "Get the weather in a city.", "strict": True,
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "London", "Tokyo"]}},
                          "required": ["city"], "additionalProperties": False}}
clock = {"type": "function", "name": "get_time", "description": "Get the time in a city.",
         "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}}, "required": ["city"]}}
ask = [{"role": "user", "content": "What is the weather in Paris?"}]
rt = oc.responses.create(model="m", input=ask, tools=[weather, clock], tool_choice="required", parallel_tool_calls=False, max_output_tokens=60, temperature=0)
fcs = [o for o in rt.output if o.type == "function_call"]
check(rt.status == "completed" and fcs and all(f.name in ("get_weather", "get_time") for f in fcs), f"required tool call: {rt.output}")
args = json.loads(fcs[0].arguments)
check(fcs[0].call_id and fcs[0].id.startswith("fc_") and isinstance(args.get("city"), str), f"function_call {fcs[0]}")
with oc.responses.stream(model="m", input=ask, tools=[weather, clock], tool_choice="required", parallel_tool_calls=False, max_output_tokens=60, temperature=0) as s:
    arg_deltas = "".join(ev.delta for ev in s if ev.type == "response.function_call_arguments.delta")
    st = s.get_final_response()
sfcs = [o for o in st.output if o.type == "function_call"]
check([(f.name, f.arguments) for f in sfcs] == [(f.name, f.arguments) for f in fcs] and arg_deltas == "".join(f.arguments for f in fcs),
      f"streamed calls {sfcs} vs {fcs}")
results = [{"type": "function_call_output", "call_id": f.call_id, "output": "18 degrees and sunny."} for f in fcs]
history = ask + [o.model_dump(exclude_none=True) for o in rt.output] + results
r3 = oc.responses.create(model="m", input=history, tools=[weather, clock], max_output_tokens=30, temperature=0)
check(r3.status in ("completed", "incomplete") and r3.usage.input_tokens > rt.usage.input_tokens, f"after the call's output: {r3.status} {r3.usage}")
r4 = oc.responses.create(model="m", previous_response_id=rt.id, input=results, tools=[weather, clock], max_output_tokens=30, temperature=0)
check(r4.usage.input_tokens == r3.usage.input_tokens, f"previous_response_id with function_call_output: {r4.usage} vs {r3.usage}")
rn = oc.responses.create(model="m", input=ask, tools=[weather, clock], tool_choice={"type": "function", "name": "get_time"}, max_output_tokens=60, temperature=0)
check([o.name for o in rn.output if o.type == "function_call"] == ["get_time"], f"named tool_choice: {rn.output}")
try:
    oc.responses.create(model="m", input="x", tools=[{"type": "web_search"}])
    check(False, "a hosted tool was accepted")
except openai.BadRequestError as e:
    check("tools[0].type" in str(e), f"hosted tool refusal: {e}")

# Structured output: text.format through responses.parse with a Pydantic model.
class City(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=20)
    country: Literal["France", "Japan", "UK"]

rp = oc.responses.parse(model="m", input="Name a city.", text_format=City, max_output_tokens=60, temperature=0)
check(isinstance(rp.output_parsed, City), f"responses.parse: {rp.output_text!r}")

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

# Tools: tool_choice any gives a tool_use block (stop_reason tool_use),
# streamed as input_json_delta to the same input; the tool_result goes
# back; count_tokens counts the tools; a named tool is called.
atools = [{"name": w["name"], "description": w["description"], "input_schema": w["parameters"]} for w in (weather, clock)]
mt = ac.messages.create(model="m", max_tokens=60, messages=ask, tools=atools, tool_choice={"type": "any", "disable_parallel_tool_use": True}, extra_body=greedy)
tus = [b for b in mt.content if b.type == "tool_use"]
check(mt.stop_reason == "tool_use" and tus and tus[0].name in ("get_weather", "get_time") and isinstance(tus[0].input.get("city"), str), f"tool_use: {mt}")
with ac.messages.stream(model="m", max_tokens=60, messages=ask, tools=atools, tool_choice={"type": "any", "disable_parallel_tool_use": True}, extra_body=greedy) as st:
    partial = "".join(ev.delta.partial_json for ev in st if ev.type == "content_block_delta" and ev.delta.type == "input_json_delta")
    fmt = st.get_final_message()
check([(b.name, b.input) for b in fmt.content if b.type == "tool_use"] == [(b.name, b.input) for b in tus] and fmt.stop_reason == "tool_use",
      f"streamed tool_use {fmt.content} vs {tus}")
check(len(tus) != 1 or json.loads(partial or "null") == tus[0].input, f"input_json_delta {partial!r} vs {tus[0].input}")
turn2 = ask + [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in mt.content]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": b.id, "content": "18 degrees and sunny."} for b in tus]}]
m2 = ac.messages.create(model="m", max_tokens=30, messages=turn2, tools=atools, extra_body=greedy)
check(m2.stop_reason in ("end_turn", "max_tokens", "tool_use") and m2.usage.input_tokens > mt.usage.input_tokens, f"after tool_result: {m2}")
nt = ac.messages.count_tokens(model="m", messages=ask, tools=atools).input_tokens
check(nt == mt.usage.input_tokens and nt > ac.messages.count_tokens(model="m", messages=ask).input_tokens, f"count_tokens with tools {nt} vs {mt.usage}")
mn = ac.messages.create(model="m", max_tokens=60, messages=ask, tools=atools, tool_choice={"type": "tool", "name": "get_time"}, extra_body=greedy)
check([b.name for b in mn.content if b.type == "tool_use"] == ["get_time"], f"named tool: {mn.content}")
try:
    ac.messages.create(model="m", max_tokens=8, messages=msgs, tools=[{"type": "web_search_20250305", "name": "web_search"}])
    check(False, "a server tool was accepted")
except anthropic.BadRequestError as e:
    check("tools[0].type" in e.body["error"]["message"], f"server tool refusal: {e.body}")
try:
    anthropic.Anthropic(base_url=url, api_key="wrong", max_retries=0).messages.create(model="m", max_tokens=8, messages=msgs)
    check(False, "a wrong key was accepted")
except anthropic.AuthenticationError as e:
    check(e.body["type"] == "error", f"auth error body {e.body}")

print(f"ok: responses ({r.usage.output_tokens} tokens, {len(types)} stream events, previous_response_id, calls {[f.name for f in fcs]}, parse {rp.output_parsed}), "
      f"messages ({m.usage.output_tokens} tokens, count_tokens {n}, stream, stop_sequence {stop!r}, tool_use {[b.name for b in tus]}), errors")
