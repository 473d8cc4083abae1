"""Trains tiny SentencePiece BPE models like those of older Llama, Mistral
and Gemma uploads (tokenizer.model without tokenizer.json) and records the
ids the sentencepiece library gives for a set of texts (spm.json). Read by
TestSentencePieceModels (rt/tokenizer).

    .venv-bench/bin/python rt/tokenizer/testdata/spm/gen.py

(sentencepiece, see scripts/requirements-bench.txt.) Models:

  llama.model  add_dummy_prefix, byte fallback, identity normalization,
               extra whitespace kept (as Llama 2's tokenizer.model);
  gemma.model  no dummy prefix, byte fallback, user-defined symbols
               (as Gemma's);
  trim.model   remove_extra_whitespaces on, no byte fallback (unknown
               characters give <unk>).
"""

import io
import json
import os

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))

CORPUS = """The quick brown fox jumps over the lazy dog.
Hello world! Hello, world. How are you today?
Tokenizers split text into pieces; models read the pieces as ids.
Numbers like 1234567 and 3.14159 appear in text, and so do dates: 2024-05-17.
Code: def f(x): return x * 2  # a comment
    indented lines keep their spaces
Émile and Zoë visited Zürich; naïve café owners said "bonjour".
Привет, мир. Γειά σου κόσμε. 你好，世界。 こんにちは世界。
Llamas and alpacas live in the Andes, where the air is thin.
She sells sea shells by the sea shore, and the shells she sells are surely sea shells.
"""


def corpus_lines():
    lines = CORPUS.strip().split("\n")
    for i in range(40):
        for l in lines:
            yield l if i % 2 == 0 else l.lower()


MODELS = {
    "llama": dict(vocab_size=640, byte_fallback=True, normalization_rule_name="identity",
                  add_dummy_prefix=True, remove_extra_whitespaces=False),
    "gemma": dict(vocab_size=640, byte_fallback=True, normalization_rule_name="identity",
                  add_dummy_prefix=False, remove_extra_whitespaces=False,
                  user_defined_symbols=["<start_of_turn>", "<end_of_turn>", "\n\n"]),
    "trim": dict(vocab_size=250, byte_fallback=False, normalization_rule_name="identity",
                 add_dummy_prefix=True, remove_extra_whitespaces=True),
}

TEXTS = [
    "Hello world", " Hello world", "Hello  world ", "  leading and trailing  ", "", " ", "\n", "a\n\nb",
    "The quick brown fox", "Zürich café naïve", "你好，世界", "🦙 llama emoji", "1234567 3.14",
    "tabs\tand\nnewlines", "<start_of_turn>user\nHi<end_of_turn>", "<s>Hello</s>", "ſ ﬁ Ⅻ",
    "x" * 50, "unseen: ǅ ꙮ ✓", "Llamas and alpacas live in the Andes where the air is thin " * 3,
    "<unk><s></s>", "a<s> b",
]


def encode(sp, text):
    # Control pieces written in the text (<s>, </s>, <unk>) are matched first
    # and each stretch of text between them is encoded on its own, as
    # transformers' slow Llama tokenizer does (legacy mode) and llama.cpp
    # does for SentencePiece vocabularies; the sentencepiece library itself
    # reads them as plain text.
    specials = sorted((sp.id_to_piece(i) for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i)),
                      key=len, reverse=True)
    ids, start, i = [], 0, 0
    while i < len(text):
        m = next((p for p in specials if text.startswith(p, i)), None)
        if m is None:
            i += 1
            continue
        ids += sp.encode(text[start:i]) + [sp.piece_to_id(m)]
        i += len(m)
        start = i
    return ids + sp.encode(text[start:])


def main():
    out = {}
    for name, opts in MODELS.items():
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=corpus_lines(), model_writer=buf, model_type="bpe",
                                       character_coverage=1.0, minloglevel=2, **opts)
        data = buf.getvalue()
        with open(os.path.join(HERE, name + ".model"), "wb") as f:
            f.write(data)
        sp = spm.SentencePieceProcessor(model_proto=data)
        out[name] = {"bos": sp.bos_id(), "eos": sp.eos_id(), "unk": sp.unk_id(),
                     "cases": [{"text": t, "ids": encode(sp, t), "decoded": sp.decode(encode(sp, t))} for t in TEXTS]}
    with open(os.path.join(HERE, "spm.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
