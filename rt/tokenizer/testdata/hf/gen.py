"""Writes hf.json.gz: Hugging Face tokenizer.json configurations covering the
normalizer, pre-tokenizer, added-token and post-processor types of decoder
LLMs, and the ids Hugging Face `tokenizers` gives for a set of texts under
each (add_special_tokens false and true). Read by TestHFKinds (rt/tokenizer).

Two small BPE models are trained here on CORPUS: "bytelevel" (GPT-2 style)
and "text" (SentencePiece style: "▁" for spaces, <0xXX> byte fallback).
Each case is a base model plus the tokenizer.json fields it sets; the Go
test assembles the same tokenizer.json.

    .venv-bench/bin/python rt/tokenizer/testdata/hf/gen.py
"""

import gzip
import json
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))

CORPUS = [
    "The quick brown fox jumps over the lazy dog.", "Hello world! Hello, world. hello there, HELLO.",
    "Tokenizers split text into words and words into pieces.", "A word, some words, wordy prose.",
    "Numbers: 1234567, 3.14159, 2024-05-17.", "def f(x):\n    return x * 2  # comment\n",
    "Émile, Zoë and the naïve café in Zürich.", "Привет, мир. Γειά σου κόσμε. 你好，世界。こんにちは。",
    "snake_case and kebab-case and CamelCase.", "tabs\tand\nnewlines\r\n and   spaces",
]

TEXTS = [
    "Hello world", " Hello  world ", "HELLO there <mask> x", "a <mask>b", "a word b words wordy word_x (word)",
    "</tag>  next", "<s>Hi</s>", "x<|endoftext|>y", "a  b   c    d", "  lead", "trail   ",
    "Ünïcödé ﬁ Ⅻ ΟΔΟΣ İstanbul", "tabs\tand\nnewlines\r\n", "中文字符 and かなカナ", "3.14159 12345",
    "snake-case-words", "   ", "", "naïve café e\u0301", "\u0000ctrl\u0085\u200b\u000bx", "hello HELLO Hello",
    "the quick brown fox", "wordword word", "x—y…z ¿a? «b»",
]

SPECIALS = [{"id": None, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True} for c in ["<s>", "</s>", "<unk>", "<|endoftext|>"]]


def added(content, **kw):
    d = {"id": None, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": False}
    d.update(kw)
    return d


def train_bytelevel():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS * 3, trainers.BpeTrainer(vocab_size=420, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                             show_progress=False))
    return json.loads(tok.to_str())


def train_text():
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.train_from_iterator(CORPUS * 3, trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>"], show_progress=False))
    j = json.loads(tok.to_str())
    vocab = j["model"]["vocab"]
    for b in range(256):
        vocab.setdefault("<0x%02X>" % b, len(vocab))
    j["model"]["byte_fallback"] = True
    return j


def split(pattern, behavior="Isolated", invert=False, string=False):
    return {"type": "Split", "pattern": {"String" if string else "Regex": pattern}, "behavior": behavior, "invert": invert}


BL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
BL_NOREGEX = dict(BL, use_regex=False)
BL_POST = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}


def seq(*pre):
    return {"type": "Sequence", "pretokenizers": list(pre)}


def nseq(*n):
    return {"type": "Sequence", "normalizers": list(n)}


def template(single, tokens):
    return {"type": "TemplateProcessing", "single": single, "pair": single,
            "special_tokens": {t: {"id": t, "ids": [None], "tokens": [t]} for t in tokens}}


SPACE = "\u2581"
META_NORM = {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}

# name: (base, fields)
CASES = {
    # GPT-NeoX / MPT: NFC, ByteLevel, added tokens for runs of spaces
    # (normalized, not special).
    "neox": ("bytelevel", {"normalizer": {"type": "NFC"}, "pre_tokenizer": BL, "post_processor": BL_POST,
                           "added_tokens": [added(" " * n, normalized=True) for n in range(2, 6)]}),
    # Added-token flags, under a lowercasing normalizer.
    "flags": ("bytelevel", {"normalizer": {"type": "Lowercase"}, "pre_tokenizer": BL,
                            "added_tokens": [added("<mask>", lstrip=True, special=True), added("</tag>", rstrip=True),
                                             added("word", single_word=True), added("HELLO", normalized=True),
                                             added("<S>", normalized=True, special=True),
                                             added("  ", lstrip=True, rstrip=True)]}),
    "template": ("bytelevel", {"pre_tokenizer": BL, "post_processor": template(
        [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
         {"SpecialToken": {"id": "</s>", "type_id": 0}}], ["<s>", "</s>"])}),
    "roberta": ("bytelevel", {"pre_tokenizer": dict(BL, add_prefix_space=True), "post_processor": {
        "type": "RobertaProcessing", "sep": ["</s>", None], "cls": ["<s>", None], "trim_offsets": True, "add_prefix_space": True}}),
    "bert_post": ("bytelevel", {"pre_tokenizer": BL, "post_processor": {"type": "BertProcessing", "sep": ["</s>", None], "cls": ["<s>", None]}}),
    # Normalizers (with ByteLevel).
    "nfd": ("bytelevel", {"normalizer": {"type": "NFD"}, "pre_tokenizer": BL}),
    "nfkc": ("bytelevel", {"normalizer": {"type": "NFKC"}, "pre_tokenizer": BL}),
    "nfkd": ("bytelevel", {"normalizer": {"type": "NFKD"}, "pre_tokenizer": BL}),
    "strip": ("bytelevel", {"normalizer": {"type": "Strip", "strip_left": True, "strip_right": True}, "pre_tokenizer": BL}),
    "strip_left": ("bytelevel", {"normalizer": {"type": "Strip", "strip_left": True, "strip_right": False}, "pre_tokenizer": BL}),
    "strip_accents": ("bytelevel", {"normalizer": nseq({"type": "NFD"}, {"type": "StripAccents"}), "pre_tokenizer": BL}),
    "replace_regex": ("bytelevel", {"normalizer": {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "}, "pre_tokenizer": BL}),
    "prepend": ("bytelevel", {"normalizer": {"type": "Prepend", "prepend": "> "}, "pre_tokenizer": BL}),
    "nmt": ("bytelevel", {"normalizer": {"type": "Nmt"}, "pre_tokenizer": BL}),
    "bert_norm": ("bytelevel", {"normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                               "strip_accents": None, "lowercase": True}, "pre_tokenizer": BL}),
    "bytelevel_norm": ("bytelevel", {"normalizer": {"type": "ByteLevel"}, "pre_tokenizer": split(" ", "MergedWithNext", string=True)}),
    # Pre-tokenizers (then ByteLevel without its regex).
    "whitespace": ("bytelevel", {"pre_tokenizer": seq({"type": "Whitespace"}, BL_NOREGEX)}),
    "whitespace_split": ("bytelevel", {"pre_tokenizer": seq({"type": "WhitespaceSplit"}, BL_NOREGEX)}),
    "bert_pre": ("bytelevel", {"pre_tokenizer": seq({"type": "BertPreTokenizer"}, BL_NOREGEX)}),
    "char_delimiter": ("bytelevel", {"pre_tokenizer": seq({"type": "CharDelimiterSplit", "delimiter": "-"}, BL_NOREGEX)}),
    "fixed_length": ("bytelevel", {"pre_tokenizer": seq({"type": "FixedLength", "length": 3}, BL_NOREGEX)}),
    "unicode_scripts": ("bytelevel", {"pre_tokenizer": seq({"type": "UnicodeScripts"}, BL_NOREGEX)}),
    "punctuation": ("bytelevel", {"pre_tokenizer": seq({"type": "Punctuation", "behavior": "MergedWithPrevious"}, BL_NOREGEX)}),
    "digits": ("bytelevel", {"pre_tokenizer": seq({"type": "Digits", "individual_digits": False}, BL)}),
    "split_string": ("bytelevel", {"pre_tokenizer": seq(split("o", "MergedWithNext", string=True), BL_NOREGEX)}),
    # SentencePiece-style BPE over the text.
    "llama2": ("text", {"normalizer": nseq({"type": "Prepend", "prepend": SPACE}, META_NORM),
                        "added_tokens": SPECIALS[:3],
                        "post_processor": template([{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                    {"Sequence": {"id": "A", "type_id": 0}}], ["<s>"])}),
    "gemma": ("text", {"normalizer": META_NORM, "added_tokens": SPECIALS[:3]}),
    "metaspace_first": ("text", {"pre_tokenizer": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False},
                                 "added_tokens": SPECIALS[:3]}),
    "metaspace_always": ("text", {"pre_tokenizer": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True},
                                  "added_tokens": SPECIALS[:3]}),
    "metaspace_never": ("text", {"pre_tokenizer": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "never", "split": True}}),
    "fuse_unk": ("text", {"normalizer": META_NORM, "model": {"byte_fallback": False, "fuse_unk": True}}),
    "unk": ("text", {"normalizer": META_NORM, "model": {"byte_fallback": False}}),
}


def assemble(base, fields):
    j = json.loads(json.dumps(base))
    vocab = j["model"]["vocab"]
    for k, v in fields.items():
        if k == "model":
            j["model"].update(v)
        elif k == "added_tokens":
            toks = []
            for a in v:
                a = dict(a)
                if a["content"] not in vocab:
                    vocab[a["content"]] = len(vocab)
                a["id"] = vocab[a["content"]]
                toks.append(a)
            j["added_tokens"] = toks
        else:
            j[k] = v
    # Resolve special token ids of processors.
    pp = j.get("post_processor")
    for name in ("sep", "cls"):
        if pp and name in pp:
            t = pp[name][0]
            vocab.setdefault(t, len(vocab))
            pp[name] = [t, vocab[t]]
    if pp and pp.get("type") == "TemplateProcessing":
        for t, st in pp["special_tokens"].items():
            vocab.setdefault(t, len(vocab))
            st["ids"] = [vocab[t]]
    return j


def main():
    bases = {"bytelevel": train_bytelevel(), "text": train_text()}
    cases = []
    for name, (base, fields) in CASES.items():
        tj = assemble(bases[base], fields)
        tok = Tokenizer.from_str(json.dumps(tj))
        cases.append({"name": name, "tokenizer": tj,
                      "ids": [tok.encode(t, add_special_tokens=False).ids for t in TEXTS],
                      "ids_special": [tok.encode(t, add_special_tokens=True).ids for t in TEXTS]})
    data = json.dumps({"texts": TEXTS, "cases": cases}, ensure_ascii=False, separators=(",", ":")) + "\n"
    with open(os.path.join(HERE, "hf.json.gz"), "wb") as f:
        f.write(gzip.compress(data.encode("utf-8"), compresslevel=9, mtime=0))


if __name__ == "__main__":
    main()
