# archc IREE worker: runs compiled modules for the Go runtime (package
# github.com/archc/archc/rt/iree). Embedded in the Go binary; do not run by hand.
#
# Protocol on stdin/stdout, one request then one response, in order:
#   message = u32 little-endian header length, JSON header, then the raw
#             payloads of the tensors the header lists, back to back.
#   tensor  = {"dtype": "f32"|"f16"|"bf16"|"i32"|"i64", "shape": [...],
#              "nbytes": N}; payload is N bytes, little-endian, row-major.
# Requests:
#   {"op": "load", "vmfb": path, "device": "local-task"|"local-sync",
#    "flags": ["--task_topology_group_count=2", ...],
#    "params": [{"name", "file", "offset", "length"}]}
#       -> {"ok": true, "functions": [names]}
#   {"op": "call", "fn": name, "args": [tensor...], "argmax": bool} + payloads
#       -> {"ok": true, "results": [tensor...]} + payloads
#       With "argmax", the first result (logits [rows, vocab] f32) is
#       replaced by its argmax over the last axis, [rows] i32 (the lowest
#       index wins ties, as torch.argmax), computed on the mapped result
#       buffer: the logits never cross the pipe.
#   {"op": "call", ..., "sample": [row...]} + payloads
#       As "argmax", but each row of logits is replaced by the token that
#       choose() picks for it: row = {"temperature", "top_k", "top_p",
#       "min_p", "u", penalties (see penalize) with "context" and
#       "generated", "logprobs": k}, u a uniform draw in [0, 1) made by
#       the caller (which owns the random stream, so a seed repeats);
#       temperature 0 is argmax; "logit_bias" and "grammar" (grammar.py)
#       come before the penalties. When a row asks for logprobs, three more
#       results follow the ids: chosen logprobs [rows] f32, top ids
#       [rows, k] i32, top logprobs [rows, k] f32 (k the largest asked).
#   {"op": "sample", "args": [logits tensor], "sample": [row...]} + payload
#       -> {"ok": true, "results": [ids tensor]}: the same on given logits.
#   {"op": "close"} -> {"ok": true}, then the worker exits.
# Any failure -> {"ok": false, "error": "one line"}; the worker stays usable.
# On start the worker sends {"ok": true, "hello": "archc-iree-worker",
# "iree": version, "revision": IREE git revision}. EOF on stdin makes it exit.

import json
import mmap
import os
import struct
import sys

# The protocol owns fd 1. Anything else that writes to stdout (print, C
# libraries) is redirected to stderr so it cannot corrupt the stream.
_out = os.fdopen(os.dup(1), "wb", buffering=0)
os.dup2(2, 1)
sys.stdout = sys.stderr
_in = sys.stdin.buffer

import numpy as np  # noqa: E402
import iree.runtime as rt  # noqa: E402
import iree.runtime.version as rt_version  # noqa: E402

# logit_bias and grammar masks (grammar.py, embedded in Go and passed as the
# first argument): GRAMMARS.process(logits, row) before the penalties,
# GRAMMARS.accept(row, token) after the choice. See grammar.py.
_grammar = {"__name__": "grammar"}
if len(sys.argv) > 1:
    exec(compile(sys.argv[1], "grammar.py", "exec"), _grammar)
GRAMMARS = _grammar["Grammars"]() if "Grammars" in _grammar else None

DTYPES = {
    "f32": rt.HalElementType.FLOAT_32,
    "f16": rt.HalElementType.FLOAT_16,
    "bf16": rt.HalElementType.BFLOAT_16,
    "i32": rt.HalElementType.SINT_32,
    "i64": rt.HalElementType.SINT_64,
}
# Results come back with whatever integer signedness the compiler chose.
RESULT_DTYPES = {int(v): k for k, v in DTYPES.items()}
RESULT_DTYPES[int(rt.HalElementType.INT_32)] = "i32"
RESULT_DTYPES[int(rt.HalElementType.INT_64)] = "i64"
RESULT_DTYPES[int(rt.HalElementType.UINT_32)] = "i32"
RESULT_DTYPES[int(rt.HalElementType.UINT_64)] = "i64"
DEVICES = ("local-task", "local-sync")


class Eof(Exception):
    pass


def read_exact(n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = _in.readinto(view[got:])
        if not k:
            raise Eof()
        got += k
    return buf


def read_msg():
    (n,) = struct.unpack("<I", read_exact(4))
    return json.loads(read_exact(n))


def write_msg(header, payloads=()):
    h = json.dumps(header).encode()
    _out.write(struct.pack("<I", len(h)) + h)
    for p in payloads:
        _out.write(p)


def one_line(e):
    msg = " ".join(str(e).split())
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


class Session:
    def __init__(self):
        self.instance = None
        self.device = None
        self.ctx = None
        self.module = None
        self.functions = {}
        self.maps = []  # (fd, mmap) of parameter files, kept open while loaded
        self.index = None

    def load(self, req):
        if self.ctx is not None:
            raise RuntimeError("a module is already loaded: start a new worker to load another")
        try:
            return self._load(req)
        except BaseException:
            self.close()  # leave no half-loaded state behind
            raise

    def _load(self, req):
        dev_name = req.get("device") or "local-task"
        if dev_name not in DEVICES:
            raise ValueError(f"unknown device {dev_name!r}: use one of {', '.join(DEVICES)}")
        flags = req.get("flags") or []
        if flags:
            # Runtime flags (task topology, worker spin) are process-wide and
            # must be set before the first device is created.
            rt.flags.parse_flags(*flags)
        self.instance = rt.VmInstance()
        self.device = rt.get_driver(dev_name).create_default_device()
        modules = []
        # The io_parameters module is always registered, so a module whose
        # parameter is missing fails with IREE's "not found" for that key
        # rather than with a missing-module error.
        self.index = self.parameter_index(req.get("params") or [])
        provider = self.index.create_provider(scope="model")
        modules.append(rt.create_io_parameters_module(self.instance, provider))
        modules.append(rt.create_hal_module(self.instance, self.device))
        self.module = rt.VmModule.mmap(self.instance, req["vmfb"])
        modules.append(self.module)
        self.ctx = rt.VmContext(self.instance, modules)
        names = [n for n in self.module.function_names if not n.startswith("__")]
        return {"ok": True, "functions": names}

    def parameter_index(self, params):
        """An index of the named file regions params, mapped (not read)."""
        index = rt.ParameterIndex()
        handles = {}
        for p in params:
            path = p["file"]
            if path not in handles:
                fd = os.open(path, os.O_RDONLY)
                size = os.fstat(fd).st_size
                if size == 0:
                    os.close(fd)
                    raise ValueError(f"parameter file {path} is empty")
                # mmap + wrap_memory: IREE reads the page cache directly;
                # nothing is copied into Python memory.
                mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
                self.maps.append((fd, mm))
                handles[path] = (rt.FileHandle.wrap_memory(mm, readable=True, writable=False), size)
            fh, size = handles[path]
            off, length = int(p["offset"]), int(p["length"])
            if off < 0 or length < 0 or off + length > size:
                raise ValueError(
                    f"parameter {p['name']!r}: bytes [{off},{off + length}) lie outside {path} ({size} bytes)"
                )
            index.add_from_file_handle(p["name"], fh, length, offset=off)
        return index

    def call(self, req, payloads):
        if self.ctx is None:
            raise RuntimeError("no module loaded: call Load first")
        name = req["fn"]
        fn = self.functions.get(name)
        if fn is None:
            fn = self.module.lookup_function(name)
            if fn is None:
                avail = ", ".join(n for n in self.module.function_names if not n.startswith("__"))
                raise KeyError(f"module has no function {name!r}; it exports: {avail}")
            self.functions[name] = fn
        args = rt.VmVariantList(len(payloads))
        alloc = self.device.allocator
        for desc, data in zip(req.get("args") or [], payloads):
            et = DTYPES[desc["dtype"]]
            if len(data) == 0:
                buf = alloc.allocate_buffer(rt.MemoryType.DEVICE_LOCAL, rt.BufferUsage.DEFAULT, 0)
            else:
                buf = alloc.allocate_buffer_copy(
                    memory_type=rt.MemoryType.DEVICE_LOCAL,
                    allowed_usage=rt.BufferUsage.DEFAULT,
                    device=self.device,
                    buffer=data,
                )
            args.push_ref(rt.HalBufferView(buf, desc["shape"], et).ref)
        results = rt.VmVariantList(4)
        self.ctx.invoke(fn, args, results)
        descs, outs = [], []
        for i in range(len(results)):
            bv = results.get_as_object(i, rt.HalBufferView)
            dtype = RESULT_DTYPES.get(int(bv.element_type))
            if dtype is None:
                raise TypeError(f"result {i} has element type {bv.element_type}, which archc does not transfer")
            shape = list(bv.shape)
            if i == 0 and (req.get("argmax") or req.get("sample")):
                if dtype != "f32" or len(shape) != 2:
                    raise TypeError(f"argmax and sampling need a [rows, vocab] f32 first result, got {dtype} {shape}")
                chosen = choose(bv.map().asarray(shape, np.dtype("<f4")), req.get("sample"))
                add_choice(descs, outs, chosen)
                continue
            n = bv.byte_length
            raw = bv.map().asarray([n], np.dtype("u1")).tobytes() if n else b""
            descs.append({"dtype": dtype, "shape": shape, "nbytes": n})
            outs.append(raw)
        return {"ok": True, "results": descs}, outs

    def sample(self, req, payloads):
        args = req.get("args") or []
        if len(args) != 1 or args[0]["dtype"] != "f32" or len(args[0]["shape"]) != 2:
            raise TypeError(f"sample needs one [rows, vocab] f32 tensor, got {args}")
        logits = np.frombuffer(payloads[0], dtype="<f4").reshape(args[0]["shape"])
        descs, outs = [], []
        add_choice(descs, outs, choose(logits, req.get("sample") or []))
        return {"ok": True, "results": descs}, outs

    def close(self):
        # Drop IREE objects before unmapping the files they point into.
        self.functions.clear()
        self.ctx = self.module = self.index = self.device = self.instance = None
        for fd, mm in self.maps:
            try:
                mm.close()
            except BufferError:
                pass  # still referenced (e.g. by a traceback); GC unmaps it
            os.close(fd)
        self.maps = []


def add_choice(descs, outs, chosen):
    """Appends choose's results: ids [rows] i32, then with logprobs the
    chosen tokens' logprobs [rows] f32, top ids [rows, k] i32 and top
    logprobs [rows, k] f32."""
    ids, lp = chosen
    arrays = [ids] + (list(lp) if lp is not None else [])
    for a in arrays:
        dt = "i32" if a.dtype.kind == "i" else "f32"
        descs.append({"dtype": dt, "shape": list(a.shape), "nbytes": a.nbytes})
        outs.append(a.tobytes())


def choose(logits, rows):
    """Token ids [rows] i32 for logits [rows, vocab] f32, and the logprob
    results when a row asks for them (else None). Per row: penalize (when
    the row carries penalties), then argmax (the lowest index on ties, as
    torch.argmax) where rows is None or the row's temperature is 0, else a
    draw by warp_row. Logprobs are log_softmax of the raw logits (the
    model's distribution, before penalties and warpers). Logits that are NaN
    or +inf in some row are an error (FloatingPointError): no token can be
    chosen from them."""
    top = logits.max(axis=-1)  # NaN if a row holds one, +inf if it does
    if not np.isfinite(top).all():
        r = int(np.flatnonzero(~np.isfinite(top))[0])
        raise FloatingPointError(
            f"the model computed non-finite logits ({top[r]} in row {r} of {logits.shape[0]}): its weights "
            "or config give NaN or inf (check the checkpoint for NaN/inf values and config.json for "
            "values such as a rope factor of 0 or a negative rms_norm_eps)")
    ids = np.argmax(logits, axis=-1).astype("<i4")
    if not rows:
        return ids, None
    if len(rows) != logits.shape[0]:
        raise ValueError(f"{len(rows)} sampling rows for {logits.shape[0]} rows of logits")
    for r, row in enumerate(rows):
        raw = logits[r]
        x = GRAMMARS.process(raw, row) if GRAMMARS else raw
        scores = penalize(x, row)
        if row.get("temperature", 0) > 0:
            ids[r] = draw(warp_row(scores, row), row["u"])
        elif scores is not raw:
            ids[r] = int(np.argmax(scores))
        if GRAMMARS:
            GRAMMARS.accept(row, ids[r])
    k = max((int(row["logprobs"]) for row in rows if row.get("logprobs") is not None), default=-1)
    if k < 0:
        return ids, None
    chosen = np.zeros(len(rows), dtype="<f4")
    top_ids = np.zeros((len(rows), k), dtype="<i4")
    top_lp = np.zeros((len(rows), k), dtype="<f4")
    for r in range(len(rows)):
        x = logits[r].astype(np.float64)
        lp = x - (x.max() + np.log(np.exp(x - x.max()).sum()))
        chosen[r] = lp[ids[r]]
        if k > 0:
            # Highest first; equal logprobs in id order.
            order = np.lexsort((np.arange(len(lp)), -lp))[:k]
            top_ids[r], top_lp[r] = order, lp[order]
    return ids, (chosen, top_ids, top_lp)


def penalize(logits, row):
    """Scores [vocab] f64 after the row's penalties, in this order, over
    row["context"] (the sequence so far, prompt then generated; its last
    row["generated"] tokens were generated):
    repetition_penalty as transformers' RepetitionPenaltyLogitsProcessor
    (each token present anywhere in the context: divided when positive,
    multiplied when negative); frequency_penalty and presence_penalty as
    OpenAI defines them (minus count x frequency, minus presence once,
    over the generated tokens only); DRY (p-e-w's reference, as
    text-generation-webui's DRYLogitsProcessor: for each token t that
    followed an earlier occurrence of the context's last token, the length
    n of the longest context suffix repeated just before that occurrence,
    stopping at sequence breakers and looking back at most dry_range
    tokens (0: all); if n >= dry_allowed_length, t loses dry_multiplier x
    dry_base ^ (n - dry_allowed_length)). Returns the logits themselves
    when the row has no penalty."""
    rep = float(row.get("repetition_penalty") or 1)
    freq = float(row.get("frequency_penalty") or 0)
    pres = float(row.get("presence_penalty") or 0)
    dry = float(row.get("dry_multiplier") or 0)
    if rep == 1 and freq == 0 and pres == 0 and dry == 0:
        return logits
    ctx = np.asarray(row.get("context") or [], dtype=np.int64)
    scores = logits.astype(np.float64)
    if rep != 1 and len(ctx):
        seen = np.unique(ctx)
        s = scores[seen]
        scores[seen] = np.where(s > 0, s / rep, s * rep)
    gen = int(row.get("generated") or 0)
    if (freq or pres) and gen > 0:
        toks, counts = np.unique(ctx[len(ctx) - gen:], return_counts=True)
        scores[toks] -= counts * freq + pres
    if dry:
        dry_penalty(scores, ctx, row)
    return scores


def dry_penalty(scores, ctx, row):
    base = float(row.get("dry_base") or 1.75)
    allowed = int(row.get("dry_allowed_length") or 2)
    last_n = int(row.get("dry_range") or 0)
    breakers = set(int(t) for t in row.get("dry_breakers") or [])
    if last_n > 0:
        ctx = ctx[-last_n:]
    n = len(ctx)
    if n < 2 or int(ctx[-1]) in breakers:
        return
    best = {}
    for i in np.flatnonzero(ctx[:-1] == ctx[-1]):
        nxt = int(ctx[i + 1])
        if nxt in breakers:
            continue
        length = 1
        while True:
            j = i - length
            if j < 0 or ctx[j] != ctx[n - 1 - length] or int(ctx[j]) in breakers:
                break
            length += 1
        best[nxt] = max(best.get(nxt, 0), length)
    mult = float(row["dry_multiplier"])
    for tok, length in best.items():
        if length >= allowed:
            scores[tok] -= mult * base ** (length - allowed)


def warp_row(logits, row):
    """Probabilities [vocab] f64 after Hugging Face generate's warpers, in
    its order (transformers generation/logits_process.py):
    TemperatureLogitsWarper, TopKLogitsWarper (keep scores >= the k-th
    largest), TopPLogitsWarper (sort ascending, drop the prefix whose
    cumulative probability is <= 1 - top_p, always keep the top token),
    MinPLogitsWarper (drop probability < min_p x the top probability),
    then softmax."""
    scores = logits.astype(np.float64) / row["temperature"]
    n = scores.shape[0]
    k = int(row.get("top_k") or 0)
    if 0 < k < n:
        kth = np.partition(scores, n - k)[n - k]
        scores[scores < kth] = -np.inf
    p = float(row.get("top_p") or 0)
    if 0 < p < 1:
        order = np.argsort(scores, kind="stable")
        cum = np.cumsum(softmax(scores)[order])
        drop = cum <= 1 - p
        drop[-1] = False
        scores[order[drop]] = -np.inf
    m = float(row.get("min_p") or 0)
    if m > 0:
        probs = softmax(scores)
        scores[probs < m * probs.max()] = -np.inf
    return softmax(scores)


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def draw(probs, u):
    """The token whose cumulative-probability interval holds u (inverse
    CDF over probs in index order); never a token of probability 0."""
    # The first i with cum[i] > u has probs[i] > 0; past the end (u above
    # the rounded total) the last possible token is taken.
    i = int(np.searchsorted(np.cumsum(probs), u, side="right"))
    if i >= len(probs):
        i = int(np.flatnonzero(probs)[-1])
    return i


def main():
    s = Session()
    revision = (getattr(rt_version, "REVISIONS", None) or {}).get("IREE", "")
    write_msg({"ok": True, "hello": "archc-iree-worker", "iree": rt_version.VERSION, "revision": revision})
    while True:
        try:
            req = read_msg()
        except Eof:
            break
        op = req.get("op")
        # Payloads are always consumed, so a failed request leaves the
        # stream in sync.
        payloads = [read_exact(int(a["nbytes"])) for a in req.get("args", [])]
        try:
            if op == "load":
                write_msg(s.load(req))
            elif op == "call":
                h, outs = s.call(req, payloads)
                write_msg(h, outs)
            elif op == "sample":
                h, outs = s.sample(req, payloads)
                write_msg(h, outs)
            elif op == "close":
                s.close()
                write_msg({"ok": True})
                break
            else:
                raise ValueError(f"unknown op {op!r}")
        except Eof:
            raise
        except Exception as e:  # reported to Go; the worker stays usable
            write_msg({"ok": False, "error": one_line(e)})
    s.close()
    _out.flush()
    # Skip interpreter teardown: IREE's native objects have no guaranteed
    # destruction order at exit, and we have already released them.
    os._exit(0)


if __name__ == "__main__":
    main()
