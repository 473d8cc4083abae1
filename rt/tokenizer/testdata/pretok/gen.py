"""Generates pretok.json.bz2 (bzip2 JSON): how Hugging Face `tokenizers` pre-tokenizes a set
of texts under the pre-tokenizer of every tokenizer.ggml.pre value that
rt/tokenizer supports, and how single Split steps split some texts
(TestPreTokenizersMatchHF and TestSplitMatchesHF read it).

The pre-tokenizer configurations are written out here independently of
the Go code, in tokenizer.json form: the Hugging Face configurations of
those models where known, otherwise a Sequence of Split (Isolated) steps
with the regexes llama.cpp's src/llama-vocab.cpp gives as the originals,
followed by ByteLevel without its regex.

    python3 -m venv /tmp/hf && /tmp/hf/bin/pip install tokenizers==0.23.3
    /tmp/hf/bin/python gen.py            # rewrites pretok.json.bz2 next to it

Texts: the strings of ../vocab/*.inp (llama.cpp's tokenizer test
strings, copied from the project's shared data), plus EXTRA, cases aimed
at the differences between regex engines. pretok.json keeps the texts.
"""

import bz2
import json
import os

from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))

CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN35 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
MINICPM5 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
SEED_CODER = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"
# The original, with possessive quantifiers (Oniguruma has them).
BAILING = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"
EXAONE_MOE = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"
JAIS2 = CONTRACTIONS + (r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)"
                        r"|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}")
UFAKZEKA = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
TEKKEN = (r"[^\r\n\p{L}\p{N}]?" + UPPER + "*" + LOWER + r"+|[^\r\n\p{L}\p{N}]?" + UPPER + "+" + LOWER +
          r"*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT4O = (r"[^\r\n\p{L}\p{N}]?" + UPPER + "*" + LOWER + "+" + CONTRACTIONS + r"?|[^\r\n\p{L}\p{N}]?" + UPPER + "+" + LOWER +
         "*" + CONTRACTIONS + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
YOUTU = GPT4O.replace(r"\p{N}{1,3}", r"\p{N}")
ASCII_PUNCT = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]"
DEEPSEEK3 = ASCII_PUNCT + r"[A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
SPARK = ASCII_PUNCT + r"[A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+"
CJK = "[一-龥぀-ゟ゠-ヿ]+"
CJK_HANGUL = "[一-龥ࠀ-一가-\ud7ff]+"
YOUTU_CJK = "[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+"
# Cased letters as DeepSeek LLM's tokenizer.json lists them (code points,
# so that no editor normalizes the singletons Ω, K, ώ, ι, ΐ, Ί away).
DS_RANGES = [
    (0x41, 0x5A), (0x61, 0x7A), (0xB5, 0xB5), (0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0x1BA), (0x1BC, 0x1BF), (0x1C4, 0x293),
    (0x295, 0x2AF), (0x370, 0x373), (0x376, 0x377), (0x37B, 0x37D), (0x37F, 0x37F), (0x386, 0x386), (0x388, 0x38A),
    (0x38C, 0x38C), (0x38E, 0x3A1), (0x3A3, 0x3F5), (0x3F7, 0x481), (0x48A, 0x52F), (0x531, 0x556), (0x10A0, 0x10C5),
    (0x13A0, 0x13F5), (0x13F8, 0x13FD), (0x1C90, 0x1CBA), (0x1CBD, 0x1CBF), (0x1D00, 0x1D2B), (0x1D6B, 0x1D77),
    (0x1D79, 0x1D9A), (0x1E00, 0x1F15), (0x1F18, 0x1F1D), (0x1F20, 0x1F45), (0x1F48, 0x1F4D), (0x1F50, 0x1F57),
    (0x1F59, 0x1F59), (0x1F5B, 0x1F5B), (0x1F5D, 0x1F5D), (0x1F5F, 0x1F7D), (0x1F80, 0x1FB4), (0x1FB6, 0x1FBC),
    (0x1FBE, 0x1FBE), (0x1FC2, 0x1FC4), (0x1FC6, 0x1FCC), (0x1FD0, 0x1FD3), (0x1FD6, 0x1FDB), (0x1FE0, 0x1FEC),
    (0x1FF2, 0x1FF4), (0x1FF6, 0x1FFC), (0x2102, 0x2102), (0x2107, 0x2107), (0x210A, 0x2113), (0x2115, 0x2115),
    (0x2119, 0x211D), (0x2124, 0x2124), (0x2126, 0x2126), (0x2128, 0x2128), (0x212A, 0x212D), (0x212F, 0x2134),
    (0x2139, 0x2139), (0x213C, 0x213F), (0x2145, 0x2149), (0x214E, 0x214E), (0x2183, 0x2184), (0x2C00, 0x2C7B),
    (0x2C7E, 0x2CE4), (0x2CEB, 0x2CEE), (0x2CF2, 0x2CF3), (0xA640, 0xA66D), (0xA680, 0xA69B), (0xA722, 0xA76F),
    (0xA771, 0xA787), (0xA78B, 0xA78E), (0xAB70, 0xABBF), (0xFB00, 0xFB06), (0xFB13, 0xFB17), (0xFF21, 0xFF3A),
    (0xFF41, 0xFF5A), (0x10400, 0x1044F), (0x104B0, 0x104D3), (0x104D8, 0x104FB), (0x10C80, 0x10CB2),
    (0x10CC0, 0x10CF2), (0x118A0, 0x118DF), (0x1E900, 0x1E943),
]
DS_LETTERS = r"\s?[" + "".join(chr(a) if a == b else chr(a) + "-" + chr(b) for a, b in DS_RANGES) + "]+"
DS_PUNCT = r"\s?[!-/:-~！-／：-～‘-‟　-。]+"
BLOOM = r" ?[^(\s|[.,!?…。，、।۔،])]+"  # BLOOM's tokenizer.json (a nested class)
CHAMELEON_PUNCT = r"[\p{P}!-/:-@\[-`{-~]"
# llama.cpp's default set for a missing or "default" tokenizer.ggml.pre.
LLAMACPP_DEFAULT = [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"]
# llama.cpp's rewrite of GPT-4o's pattern for Granite Embedding multilingual (97M).
GRANITE_MULTI = (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
                 r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
                 r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# Kimi K2's tiktoken pattern (tokenization_kimi.py), with Oniguruma's class
# intersection as written there.
KIMI_K2 = ("[\p{Han}]+"
           r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
           r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
           r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# AFMoE (llama.cpp): runs of digits in threes from the right, CJK and
# Southeast Asian scripts (code points, so that no editor normalizes the
# compatibility ideograph U+F900 away), then DeepSeek-V3's pattern.
AFMOE_DIGITS = r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))"
AFMOE_CJK = "[" + "".join("%c-%c" % r for r in [
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0xF900, 0xFAFF), (0x3040, 0x309F), (0x30A0, 0x30FF), (0xFF65, 0xFF9F),
    (0x2F00, 0x2FDF), (0x0E40, 0x0E7F), (0x0E80, 0x0EFF), (0x1780, 0x17FF), (0x1000, 0x109F), (0xAA60, 0xAA7F),
    (0xA9E0, 0xA9FF), (0xAC00, 0xD7AF), (0x1100, 0x11FF)]) + "]+"


def split(pattern):
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


def byte_level(use_regex):
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": use_regex}


def splits(*patterns):
    return {"type": "Sequence", "pretokenizers": [split(p) for p in patterns] + [byte_level(False)]}


def raw_splits(*patterns):
    # Pre-tokenizers of BPE over the text itself (llama.cpp's byte_encode
    # false): no ByteLevel step.
    return {"type": "Sequence", "pretokenizers": [split(p) for p in patterns]}


METASPACE_NORM = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}


GPT2_PRE = byte_level(True)
STARCODER = {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}, byte_level(True)]}
DEEPSEEK3_PRE = splits(r"\p{N}{1,3}", CJK, DEEPSEEK3)
TINY_AYA = splits(r"\d{1,3}(?=(?:\d{3})*\b)", GPT4O)

# (names, pre_tokenizer, normalizer)
CONFIGS = [
    (["default"], splits(*LLAMACPP_DEFAULT), None),
    (["gpt-2", "gpt2", "phi-2", "mpt", "olmo", "jais", "jina-es", "jina-de", "jina-v2-es", "jina-v2-de",
      "jina-v1-en", "jina-v2-code", "roberta-bpe", "gigachat", "a.x-4.0", "mellum", "modern-bert", "exaone4",
      "trillion", "granite-docling"], GPT2_PRE, None),
    (["granite-embed-multi-97m"], splits(GRANITE_MULTI), None),
    (["kimi-k2"], splits(KIMI_K2), None),
    (["afmoe"], splits(AFMOE_DIGITS, AFMOE_CJK, DEEPSEEK3), None),
    # SentencePiece-style BPE over the text: spaces become U+2581 and
    # llama.cpp cuts only at runs of newlines.
    (["gemma4", "granite-embed-multi-311m", "sarvam-moe"], raw_splits(r"[^\n]+|[\n]+"), METASPACE_NORM),
    (["whitespace"], raw_splits(r"\S+"), None),
    (["starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"], STARCODER, None),
    (["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano",
      "dbrx", "smaug-bpe", "chatglm-bpe", "glm4", "granite"], splits(LLAMA3), None),
    (["jais-2"], splits(JAIS2), None),
    (["qwen2"], splits(QWEN2), {"type": "NFC"}),
    (["stablelm2", "deepseek-r1-qwen", "deepseek-r1", "kormo", "f2llmv2", "megrez", "hunyuan", "solar-open", "grok-2"],
     splits(QWEN2), None),
    (["qwen35"], splits(QWEN35), None),
    (["seed-coder"], splits(SEED_CODER), None),
    (["ufakzeka"], splits(UFAKZEKA), None),
    (["exaone-moe"], splits(EXAONE_MOE), None),
    (["bailingmoe", "bailingmoe2", "llada-moe"], splits(BAILING), None),
    (["minicpm5"], splits(r"\p{N}{1,3}", MINICPM5), None),
    (["laguna"], splits(r"[^\n]+|[\n]+", QWEN2), None),
    (["tekken"], splits(TEKKEN), None),
    (["gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"], splits(GPT4O), None),
    (["tiny_aya", "cohere2moe"], TINY_AYA, None),
    (["youtu"], splits(YOUTU_CJK, YOUTU), None),
    (["deepseek-llm"], splits(r"[\r\n]", DS_LETTERS, DS_PUNCT, r"\s+$", CJK_HANGUL, r"\p{N}+"), None),
    (["deepseek-coder"], splits(r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", CJK_HANGUL, r"\p{N}"), None),
    (["deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"], DEEPSEEK3_PRE, None),
    (["spark2_5"], splits(r"\p{N}{1,3}", CJK, SPARK, r"\p{N}"), None),
    # tiiuae/falcon-7b's tokenizer.json.
    (["falcon"], {"type": "Sequence", "pretokenizers": [
        {"type": "Punctuation", "behavior": "Contiguous"}, byte_level(True),
        {"type": "Digits", "individual_digits": False}, split("[0-9][0-9][0-9]")]}, None),
    (["bloom", "gpt3-finnish", "poro-chat"], splits(BLOOM), None),
    (["viking"], splits(BLOOM, r"\p{N}"), None),
    (["superbpe"], splits(r"\p{N}+", r"(?=(\d{3})+(?!\d))"), None),
    (["chameleon"], {"type": "Sequence", "pretokenizers": [
        split(r"<sentinel:[0-9]+>"), split(r"(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z"), split(r"([\t\n]|    |  )"),
        split(r"\p{N}"), split(CHAMELEON_PUNCT), byte_level(True)]}, None),
]

EXTRA = [
    "'S 'T 'RE 'VE 'M 'LL 'D 's't", "don't DON'T We'Ve it'Ll", "'ſ 'ſt K Kelvin ΩK", "x'sY",
    "½ ¼ ¾ ² ³ ¹ 2½", "٣٤٥ ١٢ ３４５ ⅻ Ⅻ 𝟙𝟚", "1234567 12345678901 1,234,567.89 0.5", "abc123def 9x 12ab3",
    "é e\u0301 a\u0300\u0300 \u0301x न\u093f\u0937\u0947\u0927", "ﬁ ﬀ ǅ ǈ ᾈ ΐ ΐ ώ ώ", "Ⅻ ⅰ ʰ ˢ ǂ",
    "a\r\nb\rc\n\rd", "  \r\n  x", "x\u00a0y\u2028z\u0085w\u3000v\u200bu", "\t\tx\t \ty", "a \u00a0b",
    "    x", "x    ", "a\n\n\n", "\n\n", " \n \n ", "x" + " " * 40 + "y", " " * 600 + "z",
    "$+<=>^~|`", "¡¿«»‹›—–‐", "a...b!!?c", "snake_case_word __init__", "http://example.com/a/b?c=d#e",
    "foo/bar/baz\n", "x/\n\ny", "C++ C# F#", "<sentinel:12>IMGIMGABZ<sentinel:>IMGIMGJZ",
    "こんにちは世界 カタカナ ｶﾀｶﾅ 한국어 텍스트 ㄱㄴ ㄅㄆ", "。，、！？：；“”‘’…—", "中文，标点。English",
    "Ελληνικά Русский Հայերեն ქართული", "ᏣᎳᎩ ⰀⰁ 𐐀𐐨", "\U0001F600\U0001F44D\U0001F3FD \u200d",
    "word's words' 'quoted'", "I'M YOU'RE", "a'b'c", "'", "''", "' '", "\u2019s \u2019t",
    "ABCdef ABC DEF abcDEF HTTPServer iPhone", "ǅungla Ǉ", "x\u0308\u0308y",
    "中文English混合text 東京タワーです 々〇 ⺀ 𠀀x", "a12345b 1234 99 abc1 1abc ٣٤٥٦ x１２３４y",
    "ภาษาไทย ລາວ ខ្មែរ မြန်မာ ꩠ 가나 ᄀᄁ ｱｲ ⼀", "Hello\n\n\nworld \n  x\n",
]


# Single Split steps: (pattern, behavior, invert, texts), for the
# Oniguruma features fromOniguruma rewrites and the split behaviors.
SPLITS = [
    (",", "Removed", False, ["a,b c,½", ",,a,", ""]),
    (",", "Removed", True, ["a,b c,½"]),
    (",", "Isolated", True, ["a,b c,½"]),
    (",", "Contiguous", False, ["a,,b", ",,a,b,,", "a,b,,,"]),
    (",", "MergedWithPrevious", False, ["a,,b,", ",a,,b", ",,"]),
    (",", "MergedWithNext", False, [",a,,b", "a,,b,", ",,"]),
    (r"a$", "Isolated", False, ["xa\nya\r\nza", "a\n", "aa"]),
    (r"^x", "Isolated", False, ["xa\nxb\r\nxc"]),
    (r"\s+$", "Isolated", False, ["a  \nb  ", " \n \n"]),
    (r"a{1,2}+", "Isolated", False, ["aaaa", "aaa b a"]),
    (r"a?+ab", "Isolated", False, ["aab ab"]),
    (r"[a-c]*+c", "Isolated", False, ["abc c"]),
    (r"(?:ab)++b", "Isolated", False, ["ababb abab"]),
    (r"[a[bc]]+", "Isolated", False, ["abcd"]),
    (r"[^x[yz]]+", "Isolated", False, ["axyzb"]),
    (r"\h+", "Isolated", False, ["0fz AFg"]),
    (r"[\h-]+", "Isolated", False, ["0f-z"]),
    (r"\w+", "Isolated", False, ["½²Ⅻ_\u0301\u0903 Ⓐ \u200c\u09f4x ǅ٣"]),
    (r"\W+", "Isolated", False, ["a½ ,b"]),
    (r"[\w.]+", "Isolated", False, ["a.b½ c"]),
    (r"\b", "Isolated", False, ["2½ 2- x\u0301y Ⅻ!"]),
    (r"\B", "Isolated", False, ["ab ½c"]),
    (r"\x{41}+|\x{1F600}", "Isolated", False, ["AAB\U0001F600"]),
    (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)", "Isolated", False, ["'ſ 'ſt 'Ｓ 'S 'LL 'Re 'rE 'K"]),
    (r"[]a]+", "Isolated", False, ["]a]b"]),
    (r"'(?i:[sdmt]|ll|ve|re)", "Isolated", False, ["'ſ 'S 'T 'LL 'k"]),
    (r"(?i:[a-z])+", "Isolated", False, ["ſK x"]),
    (r"(?i:x)s|(?i)x(?-i)s", "Isolated", False, ["xs xS xſ XS Xſ"]),
    (r"a(?i)s|b", "Isolated", False, ["aſ aS bB"]),
    (r"(?i:k)", "Isolated", False, ["K k K"]),
    (r"[a-z&&[^aeiou]]+", "Isolated", False, ["strength queue rhythm"]),
    (r"[\p{L}&&[^\p{Latin}\p{Han}]]+|\p{Han}+", "Isolated", False, ["abcαβγ中文ひらがなКириллица々〇"]),
    (r"\p{Hiragana}+|\P{Latin}", "Isolated", False, ["ab ひらがな!"]),
]


def load_inp():
    texts = []
    d = os.path.join(HERE, "..", "vocab")
    for name in sorted(os.listdir(d)):
        if name.endswith(".inp"):
            with open(os.path.join(d, name), encoding="utf-8") as f:
                for t in f.read().split("\n__ggml_vocab_test__\n"):
                    if t and t not in texts:
                        texts.append(t)
    return texts


def main():
    texts = load_inp() + EXTRA
    cases = []
    for names, pre, norm in CONFIGS:
        pt = _build(pre)
        nz = _build_norm(norm)
        pieces = []
        for t in texts:
            s = nz.normalize_str(t) if nz else t
            pieces.append([p for p, _ in pt.pre_tokenize_str(s)])
        cases.append({"names": names, "normalizer": norm, "pre_tokenizer": pre, "pieces": pieces})
    splits = []
    for pat, behavior, invert, ts in SPLITS:
        pt = _build(dict(split(pat), behavior=behavior, invert=invert))
        splits.append({"pattern": pat, "behavior": behavior, "invert": invert, "texts": ts,
                       "pieces": [[p for p, _ in pt.pre_tokenize_str(t)] for t in ts]})
    out = {"texts": texts, "cases": cases, "splits": splits}
    # bzip2 (level 9, deterministic): 272 KB of JSON is 13 KB, and the
    # repository's tracked tree stays under 64 MiB.
    data = json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with open(os.path.join(HERE, "pretok.json.bz2"), "wb") as f:
        f.write(bz2.compress(data, 9))
        f.write("\n")


def _build(cfg):
    # A PreTokenizer from its tokenizer.json form, through a minimal
    # tokenizer.json (as transformers loads one).
    tj = {"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": cfg}
    return Tokenizer.from_str(json.dumps(tj)).pre_tokenizer


def _build_norm(cfg):
    if cfg is None:
        return None
    tj = {"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}, "normalizer": cfg}
    return Tokenizer.from_str(json.dumps(tj)).normalizer


if __name__ == "__main__":
    main()
