# archc IREE worker: logit_bias and constrained decoding (grammar masks),
# applied per row before the penalties and warpers of worker.py's choose().
# Embedded in the Go binary and handed to worker.py as its first argument;
# do not run by hand.
#
# A sampling row may carry:
#   "logit_bias": {"id": bias, ...}  added to the logits (OpenAI's logit_bias;
#       -100 bans a token, +100 all but forces it).
#   "grammar": {"key": str, "vocab": path, "lark": str}
#       The row's request decodes under a grammar. "lark" (a Lark grammar in
#       llguidance's dialect, JSON schemas embedded with %json) comes on the
#       request's first row only: it creates the request's matcher, kept
#       under "key" across calls. Every row then masks the logits to the
#       tokens the grammar allows next (others become -inf), and the chosen
#       token advances the matcher (accept()). "vocab" names a JSON file
#       the Go side wrote once per model: {"tokens": [hex bytes per id],
#       "special": [ids], "eos": [ids]}.
#
# Engine: llguidance (Microsoft's guidance-ai/llguidance, Rust, PyPI wheel
# "llguidance"). Chosen over xgrammar and outlines-core because it computes
# masks lazily with an Earley parser over a token trie (no per-schema
# precomputation of every state, so a new schema per request costs
# milliseconds and the mask costs tens of microseconds per token even on
# 262k-token vocabularies), supports JSON Schema (anyOf, enum, const,
# patterns, numeric bounds) and Lark grammars with special tokens in one
# engine (tool calls wrap JSON in model-specific markers), needs neither
# torch nor a Hugging Face tokenizer (archc hands it token bytes), and is
# what llama.cpp, vLLM and SGLang ship as a backend, so it is well kept.
#
# State: matchers live in this process, keyed by request. A worker restart
# loses them; the next row of such a request fails with a message saying so.

import json
from collections import OrderedDict

import numpy as np

_MAX_MATCHERS = 1024  # requests whose matchers are kept (least recently used dropped)


class Grammars:
    def __init__(self):
        self.tokenizers = {}  # vocab path -> (llguidance.LLTokenizer, vocab size)
        self.matchers = OrderedDict()  # key -> llguidance.LLMatcher

    def process(self, logits, row):
        """logits [vocab] f32 after the row's logit_bias and grammar mask
        (a new array), or logits itself when the row has neither."""
        bias = row.get("logit_bias")
        g = row.get("grammar")
        if not bias and not g:
            return logits
        x = logits.astype(np.float32, copy=True)
        if bias:
            ids = np.fromiter((int(k) for k in bias), dtype=np.int64, count=len(bias))
            if len(ids) and (ids.min() < 0 or ids.max() >= len(x)):
                raise ValueError(f"logit_bias token ids must lie in [0, {len(x)})")
            x[ids] += np.fromiter((float(v) for v in bias.values()), dtype=np.float32, count=len(bias))
        if g:
            m, n, eos = self.matcher(g)
            if m.is_stopped():
                keep = np.zeros(len(x), dtype=bool)
                keep[[e for e in eos if e < len(x)]] = True  # the grammar is complete: only an end token
            else:
                bits = np.unpackbits(np.frombuffer(m.compute_bitmask(), dtype=np.uint8), bitorder="little")
                if m.is_error():
                    raise ValueError(f"grammar: {m.get_error()}")
                bits[n:] = 0  # the mask's padding to 32 bits
                if len(bits) < len(x):  # logits wider than the vocabulary (padded embeddings)
                    bits = np.concatenate([bits, np.zeros(len(x) - len(bits), dtype=np.uint8)])
                keep = bits[: len(x)].view(bool)
            if not keep.any():
                raise ValueError("grammar: no token is allowed next (the grammar cannot continue)")
            x = np.where(keep, x, np.float32(-np.inf))  # the fastest of the numpy forms measured
        return x

    def accept(self, row, token):
        """Advances the row's matcher by the chosen token."""
        g = row.get("grammar")
        if not g:
            return
        m = self.matchers.get(g["key"])
        if m is None:
            return
        if m.is_stopped():  # the end token after a complete grammar
            del self.matchers[g["key"]]
            return
        if not m.consume_token(int(token)):
            err = m.get_error()
            del self.matchers[g["key"]]
            raise ValueError(f"grammar: token {token} was not allowed: {err}")
        if int(token) in self.tokenizer(g["vocab"])[2]:
            del self.matchers[g["key"]]  # the request ends here

    def matcher(self, g):
        import llguidance as llg  # only requests with a grammar need it

        key = g["key"]
        tok, n, eos = self.tokenizer(g["vocab"])
        if "lark" in g:
            m = llg.LLMatcher(tok, g["lark"], log_level=0)
            if m.is_error():
                raise ValueError(f"grammar: {m.get_error()}")
            self.matchers[key] = m
            while len(self.matchers) > _MAX_MATCHERS:
                self.matchers.popitem(last=False)
        m = self.matchers.get(key)
        if m is None:
            raise RuntimeError("grammar: this request's matcher is gone (the worker restarted); send the request again")
        self.matchers.move_to_end(key)
        return m, n, eos

    def tokenizer(self, path):
        t = self.tokenizers.get(path)
        if t is not None:
            return t
        try:
            import llguidance as llg
        except ImportError as e:
            raise RuntimeError(f"constrained decoding needs the llguidance package: run scripts/setup.sh ({e})")
        with open(path, encoding="utf-8") as f:
            v = json.load(f)
        tokens = [bytes.fromhex(h) for h in v["tokens"]]
        special = set(v.get("special") or [])
        eos = list(v.get("eos") or [])
        greedy = []  # a first tokenizer, whose greedy longest-match tokenizes for the second

        class Wrapper:
            # The llguidance.TokenizerWrapper protocol. llguidance tokenizes
            # the text a grammar forces (a literal such as "<tool_call>")
            # and allows only that tokenization's tokens, so the answer must
            # look like the model's own: greedy longest-match over the
            # vocabulary (what llguidance's greedy_tokenize does) is close
            # to BPE for such text; one token per byte would force
            # byte-by-byte output.
            is_tokenizer_wrapper = True

            def __init__(self):
                self.eos_token_id = eos[0] if eos else 0
                self.bos_token_id = None
                self.tokens = tokens
                self.special_token_ids = sorted(special)

            def __call__(self, s):
                if not greedy:
                    return []
                text = s.decode("utf-8", "replace") if isinstance(s, (bytes, bytearray)) else s
                return greedy[0].greedy_tokenize(text)

        greedy.append(llg.LLTokenizer(Wrapper(), eos_token=eos or None))
        lt = llg.LLTokenizer(Wrapper(), eos_token=eos or None)
        t = (lt, len(tokens), eos or [lt.eos_token])
        self.tokenizers[path] = t
        return t
