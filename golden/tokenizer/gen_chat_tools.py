"""Records reference renderings of the chat templates in
rt/chat/testdata/templates/ for agent conversations: tool definitions
(tools=...), assistant turns with tool_calls, role "tool" results with
tool_call_id, reasoning_content in history, and template variables
(enable_thinking, reasoning_effort), rendered as apply_chat_template does
with transformers' own Jinja environment (see gen_chat.py, whose render
setup this shares). Message dicts carry exactly the keys rt/chat gives the
template, in the same order: role, content ("" for an assistant turn
with tool calls and no text: OpenAI's null content; None breaks Qwen3's,
Granite's and gpt-oss's templates, which test `'x' in content` or
concatenate it), reasoning_content, tool_calls [{id, type,
function: {name, arguments (a dict)}}], tool_call_id, name.

A render that raises is recorded as {"error": message}. Output:
chat_tools.json.bz2. Run by hand and commit with its output:

    /work/oracle-venv/bin/python golden/tokenizer/gen_chat_tools.py
"""

import bz2
import json
import os

import jinja2
import transformers

from gen_chat import HERE, SPECIAL, TEMPLATES, render_with

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
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
            "properties": {"tz": {"type": "string", "description": "IANA zone such as Europe/Paris"}},
            "required": ["tz"],
        },
    },
}
TOOLS = [WEATHER, TIME]

USER = "What's the weather in Paris, and the time there?"


def call(id, name, args):
    return {"id": id, "type": "function", "function": {"name": name, "arguments": args}}


CONVERSATIONS = {
    "tools_user": {"messages": [{"role": "user", "content": USER}], "tools": TOOLS},
    "tools_system_user": {
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": USER},
        ],
        "tools": TOOLS,
    },
    "tool_result": {
        "messages": [
            {"role": "user", "content": USER},
            {"role": "assistant", "content": "", "tool_calls": [call("abc123XYZ", "get_weather", {"city": "Paris", "unit": "celsius"})]},
            {"role": "tool", "content": '{"temperature": 18, "sky": "clear"}', "tool_call_id": "abc123XYZ", "name": "get_weather"},
        ],
        "tools": TOOLS,
    },
    "parallel_results": {
        "messages": [
            {"role": "user", "content": USER},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    call("abc123XYZ", "get_weather", {"city": "Paris"}),
                    call("def456UVW", "get_time", {"tz": "Europe/Paris"}),
                ],
            },
            {"role": "tool", "content": "18 C, clear", "tool_call_id": "abc123XYZ", "name": "get_weather"},
            {"role": "tool", "content": "10:30", "tool_call_id": "def456UVW", "name": "get_time"},
            {"role": "assistant", "content": "It is 18 C and clear in Paris, and 10:30."},
            {"role": "user", "content": "Thanks!"},
        ],
        "tools": TOOLS,
    },
    "reasoning_history": {
        "messages": [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "4", "reasoning_content": "Two plus two is four."},
            {"role": "user", "content": "3+3?"},
        ],
        "tools": None,
    },
    "no_thinking": {
        "messages": [{"role": "user", "content": "2+2?"}],
        "tools": None,
        "vars": {"enable_thinking": False},
    },
    "effort_high": {
        "messages": [{"role": "user", "content": "2+2?"}],
        "tools": None,
        "vars": {"reasoning_effort": "high"},
    },
}


def main():
    cases = []
    for name in sorted(os.listdir(TEMPLATES)):
        if not name.endswith(".jinja"):
            continue
        with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
            template = f.read()
        bos, eos = SPECIAL[name]
        for conv, c in CONVERSATIONS.items():
            case = {"template": name, "conversation": conv, "bos_token": bos, "eos_token": eos}
            try:
                case["output"] = render_with(template, c["messages"], bos, eos, True, tools=c["tools"], **c.get("vars", {}))
            except (jinja2.exceptions.TemplateError, TypeError) as e:
                # TypeError: a template that tests `x in message.content`
                # on a tool-call turn whose content is None.
                case["error"] = f"{type(e).__name__}: {e}"
            cases.append(case)
    out = {
        "transformers_version": transformers.__version__,
        "jinja2_version": jinja2.__version__,
        "conversations": CONVERSATIONS,
        "cases": cases,
    }
    dst = os.path.join(HERE, "chat_tools.json.bz2")  # bzip2: a tenth of the JSON's size (the tracked tree's 64 MiB)
    with bz2.open(dst, "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errs = sum("error" in c for c in cases)
    print(f"wrote {dst}: {len(cases)} renderings ({errs} raise)")


if __name__ == "__main__":
    main()
