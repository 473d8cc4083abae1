"""A tool-calling agent loop with the OpenAI Agents SDK (openai-agents)
against `infer serve`, to completion, twice: over chat completions and over
the Responses API (the SDK's default model). The agent must call its tool
(the first turn forces a call; the SDK then resets tool_choice to auto),
get the result back (a role "tool" turn; a function_call_output item), and
finish with a text answer.

Usage: python agents_client.py URL API_KEY (prints one line; exits non-zero
on failure). Run by cmd/infer's TestServeTools.
"""

import sys
from typing import Literal

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

url, key = sys.argv[1], sys.argv[2]
set_tracing_disabled(True)
calls = []


@function_tool
def get_weather(city: Literal["Paris", "London", "Tokyo"]) -> str:
    """Get the current weather in a city."""
    calls.append(city)
    return f"It is 18 degrees and sunny in {city}."


client = AsyncOpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
done = []
for name, model in [("chat completions", OpenAIChatCompletionsModel(model="m", openai_client=client)),
                    ("responses", OpenAIResponsesModel(model="m", openai_client=client))]:
    calls.clear()
    agent = Agent(
        name="weather",
        instructions="You answer questions about the weather using the get_weather tool.",
        tools=[get_weather],
        model=model,
        # One call at a time, and room for the answer: the Responses API
        # ends an answer cut by max_tokens as incomplete, which the SDK
        # raises on.
        model_settings=ModelSettings(tool_choice="required", parallel_tool_calls=False, temperature=0, max_tokens=256),
    )
    result = Runner.run_sync(agent, "What is the weather in Paris?", max_turns=6)
    out = result.final_output
    if not calls or not isinstance(out, str) or not out.strip():
        print(f"FAILED ({name}): tool calls {calls}, final output {out!r}")
        sys.exit(1)
    done.append(f"{name}: called get_weather{calls} and answered {out[:40]!r}")
print("ok: agent " + "; ".join(done))
