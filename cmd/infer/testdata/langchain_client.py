"""LangChain's ChatOpenAI (langchain-openai) against `infer serve`: a
tool-calling loop (a forced call to a @tool, the tool run, its result sent
back as a ToolMessage, a final answer), the same call streamed as tool-call
chunks, with_structured_output with a Pydantic model (json_schema, strict),
and a tool call over the Responses API (use_responses_api).

Usage: python langchain_client.py URL API_KEY (prints one line; exits
non-zero on failure). Run by cmd/infer's TestServeTools.
"""

import sys
from typing import Literal

from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

url, key = sys.argv[1], sys.argv[2]
CITIES = ("Paris", "London", "Tokyo")


def check(cond, what):
    if not cond:
        raise SystemExit("FAILED: " + what)


@tool
def get_weather(city: Literal["Paris", "London", "Tokyo"]) -> str:
    """Get the current weather in a city."""
    return f"It is 18 degrees and sunny in {city}."


llm = ChatOpenAI(base_url=url + "/v1", api_key=key, model="m", temperature=0, max_tokens=60, max_retries=0)
forced = llm.bind_tools([get_weather], tool_choice="get_weather")
msgs = [HumanMessage("What is the weather in Paris?")]
ai = forced.invoke(msgs)
check(len(ai.tool_calls) == 1 and ai.tool_calls[0]["name"] == "get_weather" and ai.tool_calls[0]["args"].get("city") in CITIES, f"forced call: {ai}")
call = ai.tool_calls[0]
msgs += [ai, ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"])]
final = llm.bind_tools([get_weather]).invoke(msgs)
check(isinstance(final.content, str) and (final.content.strip() or final.tool_calls), f"final answer: {final}")

streamed = None
for chunk in forced.stream(msgs[:1]):
    streamed = chunk if streamed is None else streamed + chunk
check([(c["name"], c["args"]) for c in streamed.tool_calls] == [(call["name"], call["args"])], f"streamed calls {streamed.tool_calls} vs {call}")


class City(BaseModel):
    name: str = Field(max_length=20)
    country: Literal["France", "Japan", "UK"]


city = llm.with_structured_output(City, method="json_schema", strict=True).invoke("Name a city and its country.")
check(isinstance(city, City), f"structured output: {city!r}")

rllm = ChatOpenAI(base_url=url + "/v1", api_key=key, model="m", temperature=0, max_tokens=60, max_retries=0, use_responses_api=True)
rai = rllm.bind_tools([get_weather], tool_choice="get_weather").invoke("What is the weather in Tokyo?")
check(len(rai.tool_calls) == 1 and rai.tool_calls[0]["args"].get("city") in CITIES, f"responses call: {rai}")

print(f"ok: langchain called get_weather({call['args']['city']}), answered {final.content[:40]!r}, streamed the call, "
      f"structured {city}, responses call get_weather({rai.tool_calls[0]['args']['city']})")
