"""Records reference renderings of the chat templates in
rt/chat/testdata/templates/ (copied from ../shared/data/chat-templates) with transformers' own Jinja environment
(transformers.utils.chat_template_utils._compile_jinja_template: sandboxed
jinja2, trim_blocks, lstrip_blocks, loopcontrols, its tojson filter,
raise_exception, strftime_now, dict and namespace globals), rendered the way
apply_chat_template does: messages, tools=None, documents=None,
add_generation_prompt, bos_token, eos_token. strftime_now is pinned to
2025-01-15 10:30:00 so the output does not depend on the day.

A render that raises is recorded as {"error": message}; the Go side must fail
on the same case. Output: chat.json.bz2. Run by hand and commit with its output:

    /work/oracle-venv/bin/python golden/tokenizer/gen_chat.py
"""

import bz2
import datetime
import json
import os

import jinja2
import transformers
from transformers.utils.chat_template_utils import _compile_jinja_template

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEMPLATES = os.path.join(ROOT, "rt", "chat", "testdata", "templates")

FIXED_NOW = datetime.datetime(2025, 1, 15, 10, 30, 0)

# bos/eos strings of each template's model (tokenizer_config.json).
SPECIAL = {
    "ByteDance-Seed-OSS.jinja": ("<seed:bos>", "<seed:eos>"),
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": ("<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    "HuggingFaceTB-SmolLM3-3B.jinja": ("<|im_start|>", "<|im_end|>"),
    "Qwen-Qwen2.5-7B-Instruct.jinja": ("", "<|im_end|>"),
    "Qwen-Qwen3-0.6B.jinja": ("", "<|im_end|>"),
    "google-gemma-2-2b-it.jinja": ("<bos>", "<eos>"),
    "ibm-granite-granite-3.3-2B-Instruct.jinja": ("<|end_of_text|>", "<|end_of_text|>"),
    "meta-llama-Llama-3.1-8B-Instruct.jinja": ("<|begin_of_text|>", "<|eot_id|>"),
    "meta-llama-Llama-3.2-3B-Instruct.jinja": ("<|begin_of_text|>", "<|eot_id|>"),
    "microsoft-Phi-3.5-mini-instruct.jinja": ("<s>", "<|endoftext|>"),
    "mistralai-Mistral-Nemo-Instruct-2407.jinja": ("<s>", "</s>"),
    "openai-gpt-oss-120b.jinja": ("<|startoftext|>", "<|return|>"),
}

SYSTEM = "You are a helpful assistant. Answer briefly."
USER1 = 'What is 2+2? Answer with <b>one</b> word & "quotes" — ünïcödé 你好 🦙'
ASSISTANT = "Four.\n\nThat's it."
USER2 = "  And 3+3?  \n"

CONVERSATIONS = {
    "system_user": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER1},
    ],
    "user": [{"role": "user", "content": USER1}],
    "user_assistant_user": [
        {"role": "user", "content": USER1},
        {"role": "assistant", "content": ASSISTANT},
        {"role": "user", "content": USER2},
    ],
    "system_user_assistant": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER1},
        {"role": "assistant", "content": ASSISTANT},
    ],
}


def render(template, messages, bos, eos, add_generation_prompt):
    return render_with(template, messages, bos, eos, add_generation_prompt)


def render_with(template, messages, bos, eos, add_generation_prompt, tools=None, **kwargs):
    """As apply_chat_template renders: tools, documents=None, and extra
    template variables (chat_template_kwargs) as keyword arguments."""
    compiled = _compile_jinja_template(template)
    compiled.globals["strftime_now"] = lambda fmt: FIXED_NOW.strftime(fmt)
    return compiled.render(
        messages=messages,
        tools=tools,
        documents=None,
        add_generation_prompt=add_generation_prompt,
        bos_token=bos,
        eos_token=eos,
        **kwargs,
    )


def main():
    cases = []
    for name in sorted(os.listdir(TEMPLATES)):
        if not name.endswith(".jinja"):
            continue
        with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
            template = f.read()
        bos, eos = SPECIAL[name]
        for conv, messages in CONVERSATIONS.items():
            for agp in (False, True):
                case = {
                    "template": name,
                    "conversation": conv,
                    "add_generation_prompt": agp,
                    "bos_token": bos,
                    "eos_token": eos,
                }
                try:
                    case["output"] = render(template, messages, bos, eos, agp)
                except jinja2.exceptions.TemplateError as e:
                    case["error"] = str(e)
                cases.append(case)
    out = {
        "transformers_version": transformers.__version__,
        "jinja2_version": jinja2.__version__,
        "strftime_now": FIXED_NOW.isoformat(),
        "conversations": CONVERSATIONS,
        "cases": cases,
    }
    dst = os.path.join(HERE, "chat.json.bz2")  # bzip2: a tenth of the JSON's size (the tracked tree's 64 MiB)
    with bz2.open(dst, "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errs = sum("error" in c for c in cases)
    print(f"wrote {dst}: {len(cases)} renderings ({errs} raise)")


if __name__ == "__main__":
    main()
