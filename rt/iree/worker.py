# archc IREE worker: runs compiled modules for the Go runtime (package
# github.com/archc/archc/rt/iree). Embedded in the Go binary; do not run by hand.
#
# Protocol on stdin/stdout, one request then one response, in order:
#   message = u32 little-endian header length, JSON header, then the raw
#             payloads of the tensors the header lists, back to back.
#   tensor  = {"dtype": "f32"|"f16"|"bf16"|"i32"|"i64", "shape": [...],
#              "nbytes": N}; payload is N bytes, little-endian, row-major.
# Every header is declared in protocol.json, which Go passes as this
# script's one argument: each request is checked against it (a missing or
# unknown field is an error naming it; no field has a default here). Ops:
#   load: vmfb, device "local-task"|"local-sync"|"cuda"|"hip"|"vulkan",
#       runtime flags, params
#       [{name, file, offset, length}] -> {"functions": [names]}
#   call: fn, args [tensor...] + payloads -> {"results": [tensor...]} +
#       payloads. With "argmax", the first result (logits [rows, vocab]
#       f32) is replaced by its argmax over the last axis, [rows] i32 (the
#       lowest index wins ties, as torch.argmax), computed on the mapped
#       result buffer: the logits never cross the pipe. With "rows" (one
#       row per logits row), it is replaced by the tokens choose() picks.
#       When a row's sequence asks for logprobs, three more results follow
#       the ids: chosen logprobs [rows] f32, top ids [rows, k] i32, top
#       logprobs [rows, k] f32 (k the largest asked).
#   sample: args [logits tensor], rows -> the same on given logits.
#   seq_start: seq, vocab, sampling, prompt -> {}: sequence seq (the
#       caller's id) starts, replacing any state under that id: its
#       sampling parameters and prompt, kept in a Sequence.
#   seq_end: seq -> {}: drops the sequence's state (absent is fine).
#   device: device -> {}: whether this machine has that device (its HAL
#       driver starts and finds one), asked before compiling for a GPU;
#       the device is released at once. A worker that asked loads
#       nothing afterwards (runtime flags must precede the first device).
#   close -> {}, then the worker exits.
# A row is {"seq": id or null, "u", "tokens"}: seq null is plain argmax;
# else tokens (the sequence's tokens since its last row, in decoding the
# token the last row chose) are appended to the sequence, then its
# processors (penalties) and warpers choose, u being a uniform draw in
# [0, 1) made by the caller (which owns the random stream, so a seed
# repeats). A sequence has one row per request, or several that all carry
# no tokens (a verify call's positions: each chooses from the sequence's
# state as it is, which none of them changes).
# Any failure -> {"ok": false, "error": "one line"}; the worker stays usable.
# On start the worker sends {"ok": true, "hello": "archc-iree-worker",
# "protocol": PROTOCOL, "iree": version, "revision": IREE git revision}.
# EOF on stdin makes it exit.

import bisect
import math
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

# IREE's native runtime module, loaded as iree.runtime loads it
# (iree._runtime.libs picks the build that IREE_PY_RUNTIME names), without
# iree.runtime's Python layer: its array interop imports ml_dtypes, which
# took 0.5 s of the 0.7 s every worker spent starting (IREE 3.13.0; 0.16 s
# now). The worker moves raw bytes and needs none of that layer.
from iree._runtime.libs import _runtime as rt  # noqa: E402
from iree._runtime.libs import version as rt_version  # noqa: E402



def request_amx():
    """Asks Linux for this process's permission to use AMX tile data
    (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), which archc's
    "amx" kernels need before their first tile instruction (without it the
    kernel kills the process with SIGILL). Go selects that variant only where
    its own process got the permission. A refusal (no AMX, an older kernel,
    another OS) is not an error here: nothing else uses AMX."""
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall(ctypes.c_long(158), ctypes.c_long(0x1023), ctypes.c_long(18))  # SYS_arch_prctl
    except (OSError, AttributeError):
        pass


request_amx()

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
DEVICES = ("local-task", "local-sync", "cuda", "hip", "vulkan")


def create_device(name):
    """The default device of IREE's HAL driver name. A driver that does
    not start (its library missing) or finds no device raises
    DeviceUnavailable with IREE's reason, one line, "no usable device"
    (Go names what was looked for)."""
    try:
        return rt.get_cached_hal_driver(name).create_default_device()
    except (RuntimeError, ValueError) as e:
        # IREE's message is "file.c:line: UNAVAILABLE; reason" lines; keep
        # the first reason.
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if "; " in reason:
            reason = reason.split("; ", 1)[1]
        raise DeviceUnavailable(f"no usable device {name}: {reason}") from None


class DeviceUnavailable(RuntimeError):
    pass


def to_host(device, bv):
    """The bytes of result buffer view bv as a flat uint8 array: mapped when
    the buffer is host-visible (CPU devices), else copied from the device
    into host memory (a GPU's device-local results)."""
    n = bv.byte_length
    if n == 0:
        return np.zeros(0, np.dtype("u1"))
    buf = bv.get_buffer()
    if buf.memory_type() & int(rt.MemoryType.HOST_VISIBLE) and buf.allowed_usage() & int(rt.BufferUsage.MAPPING_SCOPED):
        return bv.map().asarray([n], np.dtype("u1"))
    host = np.empty(n, np.dtype("u1"))
    alloc = device.allocator
    mem = int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE)
    usage = int(rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED)
    staging = alloc.allocate_buffer(memory_type=mem, allowed_usage=usage, allocation_size=n)
    sem = device.create_semaphore(0)
    device.queue_copy(buf, staging, wait_semaphores=rt.HalFence.create_at(sem, 0), signal_semaphores=rt.HalFence.create_at(sem, 1))
    rt.HalFence.create_at(sem, 1).wait()
    host[:] = staging.map().asarray([n], np.dtype("u1"))
    return host

# The protocol version this script implements; protocol.json's "version"
# must equal it (Go checks the hello against its own copy).
PROTOCOL = 4


class ProtocolError(ValueError):
    pass


class Schema:
    """protocol.json: checks requests against their declaration."""

    def __init__(self, text):
        d = json.loads(text)
        self.version = d["version"]
        self.types = d["types"]
        self.requests = d["requests"]
        self.responses = d["responses"]

    def check_request(self, req):
        if not isinstance(req, dict):
            raise ProtocolError(f"request: {kind(req)}, want an object")
        op = req.get("op")
        fields = self.requests.get(op) if isinstance(op, str) else None
        if fields is None:
            raise ProtocolError(f"unknown op {op!r}: the protocol has {', '.join(self.requests)}")
        self.check_object(req, fields, "")

    def check_object(self, v, fields, where):
        if not isinstance(v, dict):
            raise ProtocolError(f"{where or 'message'}: {kind(v)}, want an object")
        pre = f"{where}: " if where else ""
        for k in v:
            if k not in fields:
                raise ProtocolError(f"{pre}unknown field {k!r} (the protocol has {', '.join(fields)})")
        for k, t in fields.items():
            if k not in v:
                raise ProtocolError(f"{pre}missing field {k!r}")
            self.check_value(v[k], t, f"{where}.{k}" if where else k)

    def check_value(self, v, t, where):
        if t.endswith("?"):
            if v is None:
                return
            t = t[:-1]
        if t.startswith("["):
            if not isinstance(v, list):
                raise ProtocolError(f"{where}: {kind(v)}, want {t}")
            inner = t[1:-1]
            if inner == "int":  # the long lists (prompts): one pass
                if not all(type(x) is int for x in v):
                    i = next(i for i, x in enumerate(v) if type(x) is not int)
                    raise ProtocolError(f"{where}[{i}]: {kind(v[i])}, want int")
                return
            for i, x in enumerate(v):
                self.check_value(x, inner, f"{where}[{i}]")
            return
        ok = {
            "str": lambda: isinstance(v, str),
            "bool": lambda: isinstance(v, bool),
            "int": lambda: type(v) is int,
            "float": lambda: type(v) in (int, float),
        }.get(t)
        if ok is None:
            self.check_object(v, self.types[t], where)
        elif not ok():
            raise ProtocolError(f"{where}: {kind(v)}, want {t}")


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"bool {v}"
    if isinstance(v, (int, float)):
        return f"number {v}"
    if isinstance(v, str):
        return f"string {v!r}"
    if isinstance(v, list):
        return "a list"
    return "an object"


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
        self.seqs = {}  # seq id -> Sequence
        self.probed = False  # a device request was answered: no load after it

    def load(self, req, payloads):
        if self.ctx is not None:
            raise RuntimeError("a module is already loaded: start a new worker to load another")
        if self.probed:
            raise RuntimeError("this worker answered a device request: start a new worker to load a module (runtime flags must precede the first device)")
        try:
            return self._load(req), []
        except BaseException:
            self.close()  # leave no half-loaded state behind
            raise

    def _load(self, req):
        dev_name = req["device"]
        if dev_name not in DEVICES:
            raise ValueError(f"unknown device {dev_name!r}: use one of {', '.join(DEVICES)}")
        flags = req["flags"]
        if flags:
            # Runtime flags (task topology, worker spin) are process-wide and
            # must be set before the first device is created.
            rt.parse_flags(*flags)
        self.instance = rt.VmInstance()
        self.device = create_device(dev_name)
        modules = []
        # The io_parameters module is always registered, so a module whose
        # parameter is missing fails with IREE's "not found" for that key
        # rather than with a missing-module error.
        self.index = self.parameter_index(req["params"])
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
        if req["argmax"] and req["rows"] is not None:
            raise ValueError("a call takes argmax or rows, not both")
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
        for i, (desc, data) in enumerate(zip(req["args"], payloads)):
            et = DTYPES.get(desc["dtype"])
            if et is None:
                raise ValueError(f"args[{i}].dtype {desc['dtype']!r}: use one of {', '.join(DTYPES)}")
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
            if i == 0 and (req["argmax"] or req["rows"] is not None):
                if dtype != "f32" or len(shape) != 2:
                    raise TypeError(f"argmax and sampling need a [rows, vocab] f32 first result, got {dtype} {shape}")
                chosen = choose(to_host(self.device, bv).view("<f4").reshape(shape), req["rows"], self.seqs)
                add_choice(descs, outs, chosen)
                continue
            n = bv.byte_length
            raw = to_host(self.device, bv).tobytes()
            descs.append({"dtype": dtype, "shape": shape, "nbytes": n})
            outs.append(raw)
        return {"ok": True, "results": descs}, outs

    def sample(self, req, payloads):
        args = req["args"]
        if len(args) != 1 or args[0]["dtype"] != "f32" or len(args[0]["shape"]) != 2:
            raise TypeError(f"sample needs one [rows, vocab] f32 tensor, got {args}")
        logits = np.frombuffer(payloads[0], dtype="<f4").reshape(args[0]["shape"])
        descs, outs = [], []
        add_choice(descs, outs, choose(logits, req["rows"], self.seqs))
        return {"ok": True, "results": descs}, outs

    def seq_start(self, req, payloads):
        self.seqs.pop(req["seq"], None)
        self.seqs[req["seq"]] = Sequence(req["sampling"], req["vocab"], req["prompt"])
        return {"ok": True}, []

    def check_device(self, req, payloads):
        name = req["device"]
        if name not in DEVICES:
            raise ValueError(f"unknown device {name!r}: use one of {', '.join(DEVICES)}")
        self.probed = True
        create_device(name)
        return {"ok": True}, []

    def seq_end(self, req, payloads):
        self.seqs.pop(req["seq"], None)
        return {"ok": True}, []

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


def choose(logits, rows, seqs):
    """Token ids [rows] i32 for logits [rows, vocab] f32, and the logprob
    results when a row's sequence asks for them (else None). rows None is
    argmax for all (the lowest index on ties, as torch.argmax); else per
    row: a row without a sequence is argmax; a row of sequence s first
    appends its tokens to s, then takes s's scores (its processors: the
    penalties), then argmax where s's temperature is 0, else a draw by
    warp_row. Logprobs are log_softmax of the raw logits (the model's
    distribution, before penalties and warpers). Logits that are NaN or
    +inf in some row are an error (FloatingPointError): no token can be
    chosen from them. Every row is checked before any sequence changes, so
    a failed request leaves the sequences as they were."""
    top = logits.max(axis=-1)  # NaN if a row holds one, +inf if it does
    if not np.isfinite(top).all():
        r = int(np.flatnonzero(~np.isfinite(top))[0])
        raise FloatingPointError(
            f"the model computed non-finite logits ({top[r]} in row {r} of {logits.shape[0]}): its weights "
            "or config give NaN or inf (check the checkpoint for NaN/inf values and config.json for "
            "values such as a rope factor of 0 or a negative rms_norm_eps)")
    ids = np.argmax(logits, axis=-1).astype("<i4")
    if rows is None:
        return ids, None
    if len(rows) != logits.shape[0]:
        raise ValueError(f"{len(rows)} sampling rows for {logits.shape[0]} rows of logits")
    used = [None] * len(rows)
    for r, row in enumerate(rows):
        if row["seq"] is None:
            if row["tokens"]:
                raise ValueError(f"rows[{r}]: tokens without a sequence")
            continue
        s = seqs.get(row["seq"])
        if s is None:
            raise KeyError(f"rows[{r}]: sequence {row['seq']} was not started (seq_start) or has ended")
        if s in used and (row["tokens"] or any(rows[q]["tokens"] for q in range(r) if used[q] is s)):
            raise ValueError(f"rows[{r}]: sequence {row['seq']} has two rows in one request, not all without tokens")
        if s.vocab != logits.shape[1]:
            raise ValueError(f"rows[{r}]: sequence {row['seq']} was started for vocabulary {s.vocab}, the logits have {logits.shape[1]}")
        s.check(row["tokens"], f"rows[{r}].tokens")
        used[r] = s
    for r, (row, s) in enumerate(zip(rows, used)):
        if s is None:
            continue
        s.extend(row["tokens"])
        x = logits[r]
        scores = s.scores(x)
        if s.temperature > 0:
            ids[r] = draw(warp_row(scores, s.sampling), row["u"])
        elif scores is not x:
            ids[r] = int(np.argmax(scores))
    k = max((s.logprobs for s in used if s is not None and s.logprobs is not None), default=-1)
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


class Sequence:
    """One sequence's sampling state, from seq_start to seq_end: its
    sampling parameters, its tokens (prompt, then generated) and its logit
    processors, each an object with extend(tokens, generated) (new tokens
    of the sequence) and apply(scores) (scores [vocab] f64, changed in
    place), run in list order on the raw logits before the warpers.
    PROCESSORS builds them at seq_start; another per-sequence module (a grammar matcher
    for structured output) adds its factory there."""

    def __init__(self, sampling, vocab, prompt):
        self.sampling = sampling
        self.vocab = vocab
        self.temperature = float(sampling["temperature"])
        self.logprobs = sampling["logprobs"]
        self.processors = [p for f in PROCESSORS for p in f(sampling, vocab)]
        self.check(prompt, "prompt")
        for p in self.processors:
            p.extend(prompt, False)

    def check(self, tokens, where):
        bad = [t for t in tokens if not 0 <= t < self.vocab]
        if bad:
            raise ValueError(f"{where}: token id {bad[0]} is outside the vocabulary [0, {self.vocab})")

    def extend(self, tokens):
        """Appends generated tokens."""
        if tokens:
            for p in self.processors:
                p.extend(tokens, True)

    def scores(self, logits):
        """Scores [vocab] f64 after the processors, or logits itself when
        the sequence has none."""
        if not self.processors:
            return logits
        scores = logits.astype(np.float64)
        for p in self.processors:
            p.apply(scores)
        return scores


class IntList:
    """A growable int64 array (amortised O(1) append)."""

    def __init__(self, n=64):
        self.a = np.empty(n, dtype=np.int64)
        self.n = 0

    def extend(self, xs):
        need = self.n + len(xs)
        if need > len(self.a):
            b = np.empty(max(need, 2 * len(self.a)), dtype=np.int64)
            b[: self.n] = self.a[: self.n]
            self.a = b
        self.a[self.n : need] = xs
        self.n = need

    def view(self):
        return self.a[: self.n]


class RepetitionPenalty:
    """transformers' RepetitionPenaltyLogitsProcessor over every token of
    the sequence (prompt included): a token present anywhere is divided by
    the penalty when positive, multiplied when negative. State: which ids
    were seen, so a step costs O(distinct ids seen), not O(length)."""

    def __init__(self, penalty, vocab):
        self.penalty = penalty
        self.seen = np.zeros(vocab, dtype=bool)
        self.ids = IntList()

    def extend(self, tokens, generated):
        new = [t for t in dict.fromkeys(tokens) if not self.seen[t]]
        if new:
            self.seen[new] = True
            self.ids.extend(new)

    def apply(self, scores):
        seen = self.ids.view()
        if len(seen):
            s = scores[seen]
            scores[seen] = np.where(s > 0, s / self.penalty, s * self.penalty)


class FrequencyPresencePenalty:
    """OpenAI's frequency and presence penalties over the generated tokens:
    a token generated c times loses c x frequency + presence. State: the
    counts and the penalty per id, kept as a dense [vocab] vector updated
    per new token, so a step costs one add over the vocabulary whatever
    the sequence's length (x + -(c·f + p) is x - (c·f + p) exactly)."""

    def __init__(self, freq, pres, vocab):
        self.freq, self.pres = freq, pres
        self.count = {}  # id -> times generated
        self.bias = np.zeros(vocab, dtype=np.float64)
        self.any = False

    def extend(self, tokens, generated):
        if not generated:
            return
        for t in tokens:
            c = self.count.get(t, 0) + 1
            self.count[t] = c
            # As protocol 1's int64 counts x float: float64(c) * freq.
            self.bias[t] = -(np.int64(c) * self.freq + self.pres)
            self.any = True

    def apply(self, scores):
        if self.any:
            scores += self.bias


# float32's largest finite value and its natural log: DRYPenalty caps its
# power there.
FLOAT32_MAX = float(np.finfo(np.float32).max)
FLOAT32_MAX_LOG = math.log(FLOAT32_MAX)


class DRYPenalty:
    """DRY (p-e-w's reference, as text-generation-webui's
    DRYLogitsProcessor): for each token t that followed an earlier
    occurrence of the sequence's last token, the length n of the longest
    suffix of the sequence repeated just before that occurrence, stopping
    at sequence breakers and looking back at most dry_range tokens (0:
    all); if n >= dry_allowed_length, t loses dry_multiplier x dry_base ^
    (n - dry_allowed_length). State: the tokens and, per id, the positions
    where it occurs, so a step visits only the occurrences of the last
    token."""

    def __init__(self, sampling):
        self.mult = float(sampling["dry_multiplier"])
        self.base = float(sampling["dry_base"])
        self.allowed = int(sampling["dry_allowed_length"])
        self.last_n = int(sampling["dry_range"])
        self.breakers = set(sampling["dry_breakers"])
        # log |base|: how fast the penalty grows with the repeat's length
        # (0 for a base of magnitude at most 1, which never overflows).
        self.log_base = math.log(abs(self.base)) if abs(self.base) > 1 else 0.0
        self.ctx = []
        self.where = {}  # id -> ascending positions in ctx

    def extend(self, tokens, generated):
        for t in tokens:
            self.where.setdefault(t, []).append(len(self.ctx))
            self.ctx.append(t)

    def apply(self, scores):
        ctx, total = self.ctx, len(self.ctx)
        start = max(0, total - self.last_n) if self.last_n > 0 else 0
        if total - start < 2 or ctx[-1] in self.breakers:
            return
        last = total - 1
        occ = self.where[ctx[-1]]
        best = {}
        for i in occ[bisect.bisect_left(occ, start) : -1]:
            nxt = ctx[i + 1]
            if nxt in self.breakers:
                continue
            length = 1
            while True:
                j = i - length
                if j < start or ctx[j] != ctx[last - length] or ctx[j] in self.breakers:
                    break
                length += 1
            best[nxt] = max(best.get(nxt, 0), length)
        for tok, length in best.items():
            if length >= self.allowed:
                # Where base ** exponent would pass float32's largest value
                # the power is capped there (llama.cpp's dry sampler caps
                # its exponent the same way): a long repeat then costs
                # mult x ~3.4e38, which takes the token out as surely, where
                # Python's float power raised OverflowError (1.75 ** ~1270).
                exponent = length - self.allowed
                if exponent * self.log_base > FLOAT32_MAX_LOG:
                    scores[tok] -= self.mult * FLOAT32_MAX
                else:
                    scores[tok] -= self.mult * self.base ** exponent


def penalties(sampling, vocab):
    """The penalty processors sampling asks for, in transformers' order:
    repetition, then frequency/presence, then DRY."""
    procs = []
    rep = float(sampling["repetition_penalty"])
    if rep <= 0:
        raise ValueError(f"sampling.repetition_penalty {rep}: must be > 0 (1: off)")
    if rep != 1:
        procs.append(RepetitionPenalty(rep, vocab))
    freq, pres = float(sampling["frequency_penalty"]), float(sampling["presence_penalty"])
    if freq or pres:
        procs.append(FrequencyPresencePenalty(freq, pres, vocab))
    if float(sampling["dry_multiplier"]):
        procs.append(DRYPenalty(sampling))
    return procs


# Factories of per-sequence logit processors, called as f(sampling, vocab)
# at seq_start; each returns a list of processors (see Sequence). Their
# order is the order they run in. A new kind of per-sequence state (a
# grammar matcher for structured output, logit_bias) is one more factory:
# declare its fields in protocol.json's "sampling" (bumping "version" and
# PROTOCOL), set them in iree.Sampling, and return a processor whose
# extend advances its state by the sequence's new tokens and whose apply
# edits the scores (a matcher sets disallowed ids to -inf).
PROCESSORS = [penalties]

# logit_bias and grammar masks (grammar.py, embedded in Go and passed as the
# second argument): its factory runs first, so both come before the
# penalties, as OpenAI's logit_bias and constrained decoding do.
_grammar = {"__name__": "grammar", "np": np}
if len(sys.argv) > 2:
    exec(compile(sys.argv[2], "grammar.py", "exec"), _grammar)
    PROCESSORS.insert(0, _grammar["processors"])


def warp_row(logits, sampling):
    """Probabilities [vocab] f64 after Hugging Face generate's warpers, in
    its order (transformers generation/logits_process.py):
    TemperatureLogitsWarper, TopKLogitsWarper (keep scores >= the k-th
    largest), TopPLogitsWarper (sort ascending, drop the prefix whose
    cumulative probability is <= 1 - top_p, always keep the top token),
    MinPLogitsWarper (drop probability < min_p x the top probability),
    then softmax."""
    scores = logits.astype(np.float64) / sampling["temperature"]
    n = scores.shape[0]
    k = int(sampling["top_k"])
    if 0 < k < n:
        kth = np.partition(scores, n - k)[n - k]
        scores[scores < kth] = -np.inf
    p = float(sampling["top_p"])
    if 0 < p < 1:
        order = np.argsort(scores, kind="stable")
        cum = np.cumsum(softmax(scores)[order])
        drop = cum <= 1 - p
        drop[-1] = False
        scores[order[drop]] = -np.inf
    m = float(sampling["min_p"])
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
    schema = Schema(sys.argv[1])
    if schema.version != PROTOCOL:
        # Greet anyway: Go reports both versions.
        print(f"archc worker: protocol.json is version {schema.version}, this script speaks {PROTOCOL}", file=sys.stderr)
    s = Session()
    handlers = {"load": s.load, "call": s.call, "sample": s.sample, "seq_start": s.seq_start, "seq_end": s.seq_end, "device": s.check_device}
    missing = set(schema.requests) - set(handlers) - {"close"}
    if missing:
        raise SystemExit(f"archc worker: protocol.json declares ops this script lacks: {sorted(missing)}")
    revision = (getattr(rt_version, "REVISIONS", None) or {}).get("IREE", "")
    write_msg({"ok": True, "hello": "archc-iree-worker", "protocol": PROTOCOL, "iree": rt_version.VERSION, "revision": revision})
    while True:
        try:
            req = read_msg()
        except Eof:
            break
        # Payloads are always consumed (as far as the header can be read),
        # so a failed request leaves the stream in sync.
        try:
            payloads = [read_exact(int(a["nbytes"])) for a in req.get("args", [])]
        except Eof:
            raise
        except Exception:
            payloads = []
        try:
            schema.check_request(req)
            op = req["op"]
            if op == "close":
                s.close()
                write_msg({"ok": True})
                break
            h, outs = handlers[op](req, payloads)
            write_msg(h, outs)
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
