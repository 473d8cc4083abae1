"""Writes special.json: the ids llama.cpp gives, with the special tokens
the model adds by default (llama_tokenize with add_special and
parse_special), for a few texts per vocabulary in this folder. Read by
TestGGUFAddSpecial (rt/tokenizer) and cmd/infer's prompt test.

llama.cpp is the reference for GGUF files: it adds BOS/EOS as
tokenizer.ggml.add_bos_token / add_eos_token say, or by its default for the
tokenizer model and pre-tokenizer when they are absent (the Llama 3
vocabulary here has no add_bos_token and gets BOS).

    .venv-bench/bin/python rt/tokenizer/testdata/vocab/gen_special.py

(llama-cpp-python, see scripts/requirements-bench.txt.)
"""

import bz2
import json
import os
import tempfile

import gguf
import llama_cpp

HERE = os.path.dirname(os.path.abspath(__file__))


def special_text(path, key):
    r = gguf.GGUFReader(path)
    f = r.fields.get(key)
    if f is None:
        return None
    toks = r.fields["tokenizer.ggml.tokens"].contents()
    return toks[int(f.contents())]


def main():
    out = {}
    for name in sorted(os.listdir(HERE)):
        if not name.endswith(".gguf.bz2"):
            continue
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, name[:-4])
            with bz2.open(os.path.join(HERE, name)) as src, open(path, "wb") as dst:
                dst.write(src.read())
            bos = special_text(path, "tokenizer.ggml.bos_token_id")
            eos = special_text(path, "tokenizer.ggml.eos_token_id")
            texts = ["Hello world", "", " Hello", "\n\n", "a  b"]
            if bos:
                texts.append(bos + "Hello")
            if eos:
                texts.append("Hello" + eos)
            m = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
            out[name[:-3]] = [{"text": t, "ids": m.tokenize(t.encode(), add_bos=True, special=True)} for t in texts]
            del m
    with open(os.path.join(HERE, "special.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
