#!/usr/bin/env python3
"""HF fp32 oracle for Gemma-3-270M (GGUF Q4_K_M, from scripts/fetch-gemma3.sh).

Same procedure and oracle.json keys as golden/smollm2/gen_oracle.py (see its
docstring), with two Gemma-specific choices:
  - the GGUF carries no chat template, so prompts are rendered in the Gemma
    chat format by hand ("chat_template": "gemma"):
    <bos><start_of_turn>user\\n{content}<end_of_turn>\\n<start_of_turn>model\\n
  - generation stops on [1, 106] (<eos>, <end_of_turn>), as the model's
    generation_config.json on the Hub does; the GGUF itself names only 1.

    /path/to/venv/bin/python golden/gemma3/gen_oracle.py [--gguf PATH]
"""
import os
import runpy
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
mod = runpy.run_path(os.path.join(root, "golden", "smollm2", "gen_oracle.py"))
mod["main"](sys.argv[1:], defaults={
    "gguf": os.path.join(root, ".cache/models/gemma3/gemma-3-270m-q4_k_m.gguf"),
    "out": os.path.join(here, "oracle.json"),
    "chat": "gemma",
    "eos": "1,106",
})
