# archc IREE worker: logit_bias and constrained decoding (grammar masks),
# as per-sequence logit processors of worker.py (see its Sequence and
# PROCESSORS). Embedded in the Go binary and handed to worker.py as its
# second argument; do not run by hand.
#
# A sequence's sampling (seq_start) carries:
#   "logit_bias": [{"id", "bias"}, ...]  added to the logits (OpenAI's
#       logit_bias; -100 bans a token, +100 all but forces it).
#   "grammar": {"vocab": path, "lark": str} or null
#       The sequence decodes under a grammar: "lark" (a Lark grammar in
#       llguidance's dialect, JSON schemas embedded with %json) builds the
#       sequence's matcher at seq_start; every step masks the scores to the
#       tokens the grammar allows next (others become -inf), and each
#       generated token the sequence's rows bring advances the matcher. A
#       complete grammar allows only an end token. "vocab" names a JSON
#       file the Go side wrote once per model: {"tokens": [hex bytes per
#       id], "special": [ids], "eos": [ids]}.
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
# State: a matcher lives in its Sequence, from seq_start to seq_end; a
# worker restart drops every sequence (the engine restarts them).

import json

TOKENIZERS = {}  # vocab path -> (llguidance.LLTokenizer, vocab size, eos ids)


def processors(sampling, vocab):
    """The processors sampling asks for, in order: logit_bias, then the
    grammar mask."""
    procs = []
    if sampling["logit_bias"]:
        procs.append(LogitBias(sampling["logit_bias"], vocab))
    if sampling["grammar"] is not None:
        procs.append(GrammarMask(sampling["grammar"]))
    return procs


class LogitBias:
    def __init__(self, entries, vocab):
        self.ids = np.array([int(e["id"]) for e in entries], dtype=np.int64)
        self.bias = np.array([float(e["bias"]) for e in entries], dtype=np.float64)
        if len(self.ids) and (self.ids.min() < 0 or self.ids.max() >= vocab):
            raise ValueError(f"sampling.logit_bias: token ids must lie in [0, {vocab})")

    def extend(self, tokens, generated):
        pass

    def apply(self, scores):
        np.add.at(scores, self.ids, self.bias)


class GrammarMask:
    def __init__(self, g):
        import llguidance as llg  # only sequences with a grammar need it

        self.tok, self.n, self.eos = tokenizer(g["vocab"])
        self.m = llg.LLMatcher(self.tok, g["lark"], log_level=0)
        if self.m.is_error():
            raise ValueError(f"grammar: {self.m.get_error()}")
        self.done = False

    def extend(self, tokens, generated):
        if not generated or self.done:
            return  # the prompt is not the grammar's
        for t in tokens:
            if self.m.is_stopped() or int(t) in self.eos:
                self.done = True  # the end token after a complete grammar: the sequence ends here
                return
            if not self.m.consume_token(int(t)):
                raise ValueError(f"grammar: token {t} was not allowed: {self.m.get_error()}")

    def apply(self, scores):
        if self.m.is_stopped():
            keep = np.zeros(len(scores), dtype=bool)
            keep[[e for e in self.eos if e < len(scores)]] = True  # the grammar is complete: only an end token
        else:
            bits = np.unpackbits(np.frombuffer(self.m.compute_bitmask(), dtype=np.uint8), bitorder="little")
            if self.m.is_error():
                raise ValueError(f"grammar: {self.m.get_error()}")
            bits[self.n:] = 0  # the mask's padding to 32 bits
            if len(bits) < len(scores):  # logits wider than the vocabulary (padded embeddings)
                bits = np.concatenate([bits, np.zeros(len(scores) - len(bits), dtype=np.uint8)])
            keep = bits[: len(scores)].view(bool)
        if not keep.any():
            raise ValueError("grammar: no token is allowed next (the grammar cannot continue)")
        scores[~keep] = -np.inf


def tokenizer(path):
    t = TOKENIZERS.get(path)
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
    TOKENIZERS[path] = t
    return t
