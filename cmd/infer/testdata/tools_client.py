"""Agent-style checks of `infer serve` with the official openai client:
tool calls (required, named, auto, streamed, a tool-result turn),
structured output (json_object, json_schema strict on 20 schemas, greedy and
sampled, checked with jsonschema; chat.completions.parse with a Pydantic
model), logit_bias, and 400s that name the bad field.

Usage: python tools_client.py URL API_KEY  (prints one summary line; exits
non-zero with the failures listed). Run by cmd/infer's TestServeTools
against SmolLM2-135M-Instruct, whose template renders no tools, so the
server uses its generic (Hermes-shaped) convention.
"""

import json
import sys

import jsonschema
import openai

import structured_client

url, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
failures = []
counts = {}


def check(name, cond, detail=""):
    counts[name] = counts.get(name, 0) + 1
    if not cond:
        failures.append(f"{name}: {detail}")


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "maxLength": 20},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the local time in a time zone.",
        "parameters": {
            "type": "object",
            "properties": {"tz": {"type": "string", "pattern": "^[A-Z][a-z]{1,12}/[A-Z][a-z]{1,12}$"}},
            "required": ["tz"],
            "additionalProperties": False,
        },
    },
}
TOOLS = [WEATHER, TIME]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
USER = [{"role": "user", "content": "What is the weather in Paris?"}]


def valid_call(name, tc, want=None):
    check(name + " type", tc.type == "function", tc.type)
    check(name + " id", bool(tc.id), tc.id)
    fn = tc.function
    check(name + " function", fn.name in SCHEMAS and (want is None or fn.name == want), fn.name)
    try:
        args = json.loads(fn.arguments)
        jsonschema.validate(args, SCHEMAS.get(fn.name, {}))
        check(name + " arguments", True)
    except Exception as e:  # noqa: BLE001
        check(name + " arguments", False, f"{fn.arguments!r}: {e}")


# tool_choice "required", greedy and sampled: a well-formed call even from
# a 135M model. (With parallel calls allowed, a model this small keeps
# adding calls until max_tokens; those are checked separately below.)
for temp in (0, 0.9):
    r = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, temperature=temp, seed=3, max_tokens=120)
    c = r.choices[0]
    check("required finish", c.finish_reason == "tool_calls", c.finish_reason)
    check("required calls", bool(c.message.tool_calls), c.message)
    for tc in c.message.tool_calls or []:
        valid_call("required", tc)

# Parallel calls allowed: every complete call is well formed.
r = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, tool_choice="required", temperature=0, max_tokens=150)
calls = r.choices[0].message.tool_calls or []
check("parallel calls", len(calls) >= 1, r.choices[0].message)
for tc in calls:
    valid_call("parallel", tc)

# A named function.
r = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "get_time"}}, temperature=0, max_tokens=120)
calls = r.choices[0].message.tool_calls or []
check("named one call", len(calls) == 1, calls)
for tc in calls:
    valid_call("named", tc, want="get_time")

# Streamed: OpenAI's delta shape (index, id, name, then arguments chunks).
stream = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, temperature=0, max_tokens=120, stream=True)
acc, finish = {}, None
for chunk in stream:
    if not chunk.choices:
        continue
    ch = chunk.choices[0]
    finish = ch.finish_reason or finish
    for d in ch.delta.tool_calls or []:
        a = acc.setdefault(d.index, {"id": None, "name": "", "arguments": ""})
        if d.id:
            a["id"] = d.id
        if d.function and d.function.name:
            a["name"] += d.function.name
        if d.function and d.function.arguments:
            a["arguments"] += d.function.arguments
check("stream finish", finish == "tool_calls", finish)
check("stream calls", len(acc) >= 1, acc)
for i, a in acc.items():
    check("stream id", bool(a["id"]), a)
    try:
        jsonschema.validate(json.loads(a["arguments"]), SCHEMAS[a["name"]])
        check("stream arguments", True)
    except Exception as e:  # noqa: BLE001
        check("stream arguments", False, f"{a}: {e}")

# The second turn of an agent loop: the call and its result go back.
first = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, temperature=0, max_tokens=120)
msg = first.choices[0].message
turns = USER + [msg.model_dump(exclude_none=True)]
for tc in msg.tool_calls or []:
    turns.append({"role": "tool", "tool_call_id": tc.id, "content": json.dumps({"temperature": 18, "sky": "clear"})})
r = client.chat.completions.create(model="m", messages=turns, tools=TOOLS, tool_choice="none", temperature=0, max_tokens=30)
check("tool result turn", r.choices[0].message.content is not None and r.choices[0].message.tool_calls is None, r.choices[0].message)
check("tool result prompt grew", r.usage.prompt_tokens > first.usage.prompt_tokens, (r.usage, first.usage))

# tool_choice "auto" returns either text or well-formed calls.
r = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, temperature=0, max_tokens=60)
for tc in r.choices[0].message.tool_calls or []:
    valid_call("auto", tc)

# Structured output: 20 schemas, greedy and sampled; json_object; parse.
structured_client.run(client, check)

# logit_bias: +100 on one token makes greedy decoding repeat it.
tok = 28  # a byte-level token of SmolLM2's vocabulary
r = client.chat.completions.create(model="m", messages=USER, logit_bias={str(tok): 100}, temperature=0, max_tokens=4)
check("logit_bias", r.choices[0].token_ids[:4] == [tok] * 4 if hasattr(r.choices[0], "token_ids") else True, r.choices[0])
raw = client.chat.completions.with_raw_response.create(model="m", messages=USER, logit_bias={str(tok): 100}, temperature=0, max_tokens=4)
ids = json.loads(raw.text)["choices"][0]["token_ids"]
check("logit_bias ids", ids == [tok] * 4, ids)

# Bad input: 400 naming the field.
bad = [
    (dict(tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "objekt"}}}]), "tools[0].function.parameters"),
    (dict(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}}), "tool_choice"),
    (dict(response_format={"type": "xml"}), "response_format.type"),
    (dict(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": 7}}}), "response_format.json_schema.schema"),
    (dict(logit_bias={"99999999": 1}), "logit_bias"),
]
for kwargs, param in bad:
    try:
        client.chat.completions.create(model="m", messages=USER, max_tokens=2, **kwargs)
        check("400 " + param, False, "accepted")
    except openai.BadRequestError as e:
        check("400 " + param, e.body.get("param") == param, e.body)

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print(f"ok: {sum(counts.values())} checks ({', '.join(f'{k} x{v}' for k, v in sorted(counts.items()))})")
