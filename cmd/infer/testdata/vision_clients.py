"""Sends an image to `infer serve` through the official clients: OpenAI
chat completions (an image_url part with a data: URL), OpenAI Responses
(an input_image part) and Anthropic Messages (an image block with a base64
source): python vision_clients.py URL KEY IMAGE PROMPT. Greedy, 16 tokens
each. Prints one JSON object: each API's answer text and its usage's
prompt tokens; the Go test compares them with the HF oracle's."""

import base64
import json
import sys

import anthropic
import openai

url, key, image, prompt = sys.argv[1:5]
with open(image, "rb") as f:
    data = base64.b64encode(f.read()).decode()
data_url = "data:image/png;base64," + data

oc = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
chat = oc.chat.completions.create(
    model="m", max_tokens=16, temperature=0,
    messages=[{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": data_url}},
        {"type": "text", "text": prompt}]}])
resp = oc.responses.create(
    model="m", max_output_tokens=16, temperature=0,
    input=[{"role": "user", "content": [
        {"type": "input_image", "image_url": data_url},
        {"type": "input_text", "text": prompt}]}])
ac = anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)
msg = ac.messages.create(
    model="m", max_tokens=16, extra_body={"temperature": 0},
    messages=[{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
        {"type": "text", "text": prompt}]}])
print(json.dumps({
    "chat": chat.choices[0].message.content, "chat_prompt_tokens": chat.usage.prompt_tokens,
    "responses": resp.output_text, "responses_prompt_tokens": resp.usage.input_tokens,
    "messages": "".join(b.text for b in msg.content if b.type == "text"), "messages_prompt_tokens": msg.usage.input_tokens,
}))
