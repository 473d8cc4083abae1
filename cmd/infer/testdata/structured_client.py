"""Structured output checks of `infer serve` with the official openai
client: json_schema (strict) on 20 schemas (nested objects, arrays, enums,
anyOf, bounded numbers, string patterns), greedy and sampled, each answer
validated with jsonschema; json_object; chat.completions.parse with a
Pydantic model.

Usage: python structured_client.py URL API_KEY (prints one summary line;
exits non-zero with the failures listed). Run by cmd/infer's
TestServeStructuredGemma against Gemma-3-270M; tools_client.py runs the
same checks (run) against SmolLM2.
"""

import json
import sys

import jsonschema
import openai
from pydantic import BaseModel, Field


def run(client, check, skip=()):
    """Runs the checks with client, reporting each through check(name, ok, detail);
    skip names checks to leave out (json_object)."""
    S = lambda **p: {"type": "object", "properties": p, "required": list(p), "additionalProperties": False}  # noqa: E731
    short = {"type": "string", "maxLength": 12}
    STRUCTURED = {
        "person": S(name=short, age={"type": "integer", "minimum": 0, "maximum": 120}),
        "nested": S(user=S(name=short, address=S(city=short, zip={"type": "string", "pattern": "^[0-9]{5}$"}))),
        "tags": S(tags={"type": "array", "items": short, "minItems": 1, "maxItems": 3}),
        "enum": S(color={"enum": ["red", "green", "blue"]}),
        "anyof": S(value={"anyOf": [{"type": "integer", "minimum": 0, "maximum": 9}, {"type": "string", "maxLength": 5}]}),
        "bounded number": S(score={"type": "number", "minimum": 0, "maximum": 10, "multipleOf": 0.01}),
        "bounded integer": S(stars={"type": "integer", "minimum": 1, "maximum": 5}),
        "pattern": S(code={"type": "string", "pattern": "^[A-Z]{3}$"}),
        "boolean": S(ok={"type": "boolean"}),
        "array of objects": S(items={"type": "array", "items": S(id={"type": "integer", "minimum": 0, "maximum": 99}, label=short), "minItems": 1, "maxItems": 2}),
        "matrix": S(m={"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "minItems": 2, "maxItems": 2}, "minItems": 2, "maxItems": 2}),
        "const": S(version={"const": "v1"}, n={"type": "integer", "minimum": 0, "maximum": 3}),
        "optional": {"type": "object", "properties": {"a": short, "b": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["a"], "additionalProperties": False},
        "max length": S(title={"type": "string", "minLength": 1, "maxLength": 10}),
        "three fields": S(x={"type": "integer", "minimum": -5, "maximum": 5}, y={"type": "integer", "minimum": -5, "maximum": 5}, z={"type": "integer", "minimum": -5, "maximum": 5}),
        "nullable": S(note={"type": ["string", "null"], "maxLength": 8}),
        "anyof objects": S(pet={"anyOf": [S(kind={"const": "cat"}, lives={"type": "integer", "minimum": 1, "maximum": 9}), S(kind={"const": "dog"}, good={"type": "boolean"})]}),
        "date": S(date={"type": "string", "pattern": "^20[0-9]{2}-[01][0-9]-[0-3][0-9]$"}),
        "number enum": S(level={"enum": [1, 2, 3]}, unit={"enum": ["m", "km"]}),
        "deep": S(a=S(b=S(c=S(d={"type": "integer", "minimum": 0, "maximum": 9})))),
    }
    check("twenty schemas", len(STRUCTURED) == 20, len(STRUCTURED))
    for name, schema in STRUCTURED.items():
        for temp in (0, 0.8):
            r = client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": f"Give an example {name} as JSON."}],
                response_format={"type": "json_schema", "json_schema": {"name": name.replace(" ", "_"), "schema": schema, "strict": True}},
                temperature=temp, seed=11, max_tokens=200,
            )
            text = r.choices[0].message.content
            try:
                jsonschema.validate(json.loads(text), schema)
                check("schema", r.choices[0].finish_reason == "stop", f"{name} T={temp}: finish {r.choices[0].finish_reason}")
            except Exception as e:  # noqa: BLE001
                check("schema", False, f"{name} T={temp}: {text!r}: {e}")

    if "json_object" not in skip:
        r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Reply in JSON: an object with the keys name and age of a person."}], response_format={"type": "json_object"}, temperature=0, max_tokens=200)
        try:
            check("json_object", isinstance(json.loads(r.choices[0].message.content), dict), r.choices[0].message.content)
        except ValueError as e:
            check("json_object", False, f"{r.choices[0].message.content!r}: {e}")

    # Bounded: with a bare int the grammar allows any number of digits, and
    # Gemma-3-270M greedily writes "celsius": 1000000... until max_tokens
    # (the bounds are enforced by the grammar too).
    class Weather(BaseModel):
        city: str
        celsius: int = Field(ge=-90, le=60)

    r = client.chat.completions.parse(model="m", messages=[{"role": "user", "content": "Weather in Paris as JSON."}], response_format=Weather, temperature=0, max_tokens=100)
    check("parse pydantic", isinstance(r.choices[0].message.parsed, Weather), r.choices[0].message)


if __name__ == "__main__":
    url, key = sys.argv[1], sys.argv[2]
    skip = sys.argv[4:] if sys.argv[3:4] == ["--skip"] else ()
    failures, counts = [], {}

    def check(name, cond, detail=""):
        counts[name] = counts.get(name, 0) + 1
        if not cond:
            failures.append(f"{name}: {detail}")

    run(openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0), check, skip)
    if failures:
        print("FAILED:\n" + "\n".join(failures))
        sys.exit(1)
    print(f"ok: {sum(counts.values())} checks ({', '.join(f'{k} x{v}' for k, v in sorted(counts.items()))})")
