"""Records reference renderings of the templates in this folder (the
tool-call conventions archc parses; see README.md for each one's origin)
for the agent conversations of golden/tokenizer/gen_chat_tools.py: tool
definitions, assistant tool calls, tool results, reasoning history and
template variables, rendered with transformers' own Jinja environment as
apply_chat_template renders (golden/tokenizer/gen_chat.py's render_with).

A render that raises is recorded as {"error": message}; where only the
immutable sandbox refuses it (Kimi K2's templates call list.append on a
tool-call turn), the rendering of jinja2's plain SandboxedEnvironment, the
same in every other respect, is recorded beside it as "mutable_output"
(archc renders such templates; this pins what it renders). Output:
renders.json.bz2 beside this file. Run by hand and commit with its output:

    python rt/chat/testdata/tool-templates/gen.py
"""

import bz2
import json
import os
import sys

import jinja2
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, os.path.join(ROOT, "golden", "tokenizer"))

from gen_chat import render_with  # noqa: E402
from jinja2.sandbox import SandboxedEnvironment, SecurityError  # noqa: E402
from transformers.utils.chat_template_utils import _compile_jinja_template  # noqa: E402
from gen_chat_tools import CONVERSATIONS  # noqa: E402

# bos/eos strings of each template's model (tokenizer_config.json).
SPECIAL = {
    "Apertus-8B-Instruct.jinja": ("<s>", "</s>"),
    "upstage-Solar-Open-100B.jinja": ("<s>", "</s>"),
    "GLM-4.6.jinja": ("", "<|endoftext|>"),
    "GLM-4.7-Flash.jinja": ("", "<|endoftext|>"),
    "Kimi-K2-Instruct.jinja": ("[BOS]", "[EOS]"),
    "LFM2-8B-A1B.jinja": ("<|startoftext|>", "<|im_end|>"),
    "LFM2.5-8B-A1B.jinja": ("<|startoftext|>", "<|im_end|>"),
    "LFM2.5-Instruct.jinja": ("<|startoftext|>", "<|im_end|>"),
    "MiniMax-M2.jinja": ("]~!b[", "[e~["),
    "Kimi-K2-Thinking.jinja": ("[BOS]", "[EOS]"),
    "moonshotai-Kimi-K2.jinja": ("[BOS]", "[EOS]"),
    "NVIDIA-Nemotron-Nano-v2.jinja": ("<SPECIAL_1>", "<SPECIAL_12>"),
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja": ("<s>", "<|im_end|>"),
    "OpenBMB-MiniCPM3-4B-function_call.jinja": ("<s>", "<|im_end|>"),
    "Qwen3.5-4B.jinja": ("", "<|im_end|>"),
    "google-gemma-4-31B-it.jinja": ("<bos>", "<eos>"),
}


def render_mutable(template, c, bos, eos):
    """render_with in an environment whose sandbox allows mutating lists."""
    env = _compile_jinja_template(template).environment
    env.is_safe_attribute = lambda obj, attr, value: SandboxedEnvironment.is_safe_attribute(env, obj, attr, value)
    try:
        return render_with(template, c["messages"], bos, eos, True, tools=c["tools"], **c.get("vars", {}))
    finally:
        del env.is_safe_attribute


def main():
    cases = []
    for name in sorted(SPECIAL):
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            template = f.read()
        bos, eos = SPECIAL[name]
        for conv, c in CONVERSATIONS.items():
            case = {"template": name, "conversation": conv, "bos_token": bos, "eos_token": eos}
            try:
                case["output"] = render_with(template, c["messages"], bos, eos, True, tools=c["tools"], **c.get("vars", {}))
            except (jinja2.exceptions.TemplateError, TypeError, AttributeError) as e:
                case["error"] = f"{type(e).__name__}: {e}"
                if isinstance(e, SecurityError):
                    case["mutable_output"] = render_mutable(template, c, bos, eos)
            cases.append(case)
    out = {
        "transformers_version": transformers.__version__,
        "jinja2_version": jinja2.__version__,
        "conversations": CONVERSATIONS,
        "cases": cases,
    }
    dst = os.path.join(HERE, "renders.json.bz2")  # bzip2: a tenth of the JSON's size (the tracked tree's 64 MiB)
    with bz2.open(dst, "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errs = sum("error" in c for c in cases)
    print(f"wrote {dst}: {len(cases)} renderings ({errs} raise)")


if __name__ == "__main__":
    main()
