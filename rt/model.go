// Package rt runs archc models: it loads a compiled module (a Program,
// which the compiler side makes: package driver plans and compiles it)
// with its weights as named parameters into an IREE worker process and
// generates tokens with prefill and decode calls; it also holds the
// sampling options, the tokenizer-facing text helpers and stop strings.
// It links none of the compiler (dsl, lower, codegen, driver).
package rt

import (
	"context"
	"fmt"
	"github.com/archc/archc/formats/option"
	"slices"
	"strings"
	"time"

	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/rt/iree"
)

// Program is what the runtime needs of a compiled model: the module and
// its weights, the shapes it was compiled for, and the model facts the
// runtime acts on. The compiler side fills it (driver.Compile's result);
// rt only reads it.
type Program struct {
	Module string           // the compiled .vmfb file
	Params []ireetool.Param // the module's weights as IREE parameters (scope "model")
	// CompilerVersion is `iree-compile --version` of the compiler that
	// built Module; Load refuses a worker whose iree.runtime is another
	// release. "" skips the check.
	CompilerVersion string
	Vocab           int64   // logits width
	EOS             []int32 // end-of-generation token ids
	// The static shapes the module was compiled for: KV-cache slots and
	// their length (tokens), prefill chunk buckets (tokens, ascending) and
	// decode batch sizes (abi.PrefillName, abi.DecodeName), each ascending.
	Slots, MaxLen  int64
	PrefillBuckets []int64
	DecodeBatches  []int64
	// VerifyBuckets are the chunk lengths of the verify entry points
	// (abi.VerifyName; speculative decoding), ascending; none without.
	VerifyBuckets []int64
	// MTPBuckets are the chunk lengths of the multi-token-prediction
	// entry points (abi.MTPName; the mtp drafter, mtp.go), ascending;
	// none for a module without an MTP module.
	MTPBuckets []int64
	// MTPChain: the MTP module keeps its own output for chained drafts
	// (the mtp_K entry points' chain argument), so it drafts more than one
	// token per step.
	MTPChain bool
	// Lengths is the module's length-dependent RoPE policy; the Model asks
	// it whether cached keys serve a sequence (lengths.go).
	Lengths abi.LengthPolicy
	// MRoPE: the module's RoPE is multimodal (Qwen2-VL's M-RoPE): its
	// prefill, decode, verify and mtp entry points take each token's
	// (temporal, height, width) RoPE positions last, rope_positions
	// [3, batch, seq] i32 (package lower's interface; mrope.go).
	MRoPE bool
	// States is the module's per-sequence state table: one row per
	// global (KV caches, conv windows, recurrent states) with its bytes,
	// reset, padding, copy and snapshot rules (abi.StateTable; the
	// compiler side computes it from the module it emits).
	States abi.StateTable
	// Encoders are the module's encoder entry points (abi.Encoder: a
	// vision-language model's image encoder), in the order of the
	// prefill's extra arguments; none for a text-only model.
	Encoders []abi.Encoder
	// Where the tokenizer comes from (Model.Text): the model folder, or
	// the opened GGUF file (its header read once for plan and tokenizer).
	Dir  string
	GGUF *gguf.File
	// Reported, not used: the family's name, the iree-compile wall time
	// (near zero on a cache hit) and whether the module came from the cache.
	Family      string
	CompileTime time.Duration
	Cached      bool
	// Unread names the GGUF tensors the family's graph does not read
	// (llama.cpp's multi-token-prediction layers), left out of Params.
	Unread []string
	// Kernels is the variant of archc's matmul kernels in the module
	// ("amx", "avx512", "avx2"), or "none" (the plain lowering only); Precision
	// their arithmetic ("f32": exact products; "int8": activations
	// quantized per block).
	Kernels, Precision string
	// Target is the compile target Module was built for
	// (ireetool.Target.Name); "" is llvm-cpu. Load runs it only on one of
	// that target's devices.
	Target string
}

// FixedState reports whether the module carries per-sequence state that
// is not indexed by position (a conv window, a recurrent SSM state; its
// state table's abi.StateTable.FixedState). A slot holds that state only
// for the position its held tokens end: a call at start > 0 must continue
// exactly the tokens the slot holds (the engine reuses a prefix only
// then), and a call at position 0 starts from zero state.
func (p *Program) FixedState() bool { return p.States.FixedState() }

// checkDevice: device runs modules of target ("" for either is
// llvm-cpu's local-task).
func checkDevice(target, device string) error {
	t, err := ireetool.LookupTarget(target)
	if err != nil {
		return fmt.Errorf("program: %w", err)
	}
	d, err := ireetool.LookupTarget(device)
	if err != nil {
		return fmt.Errorf("device %q: use one of %s", device, strings.Join(ireetool.Devices(), ", "))
	}
	if d.Name != t.Name {
		return fmt.Errorf("device %s runs %s modules, and this module was compiled for %s: compile it for %s (or run it on %s)", device, d.Name, t.Name, d.Name, strings.Join(t.Devices, " or "))
	}
	return nil
}

// check rejects a Program the runtime cannot call: no module, no
// buckets, shapes out of range.
func (p *Program) check() error {
	switch {
	case p.Module == "":
		return fmt.Errorf("program: no compiled module")
	case p.Vocab <= 0:
		return fmt.Errorf("program: vocabulary size %d", p.Vocab)
	case p.Slots <= 0 || p.MaxLen <= 0:
		return fmt.Errorf("program: %d KV-cache slots of %d tokens", p.Slots, p.MaxLen)
	case len(p.PrefillBuckets) == 0:
		return fmt.Errorf("program: no prefill buckets")
	case len(p.DecodeBatches) == 0:
		return fmt.Errorf("program: no decode batch sizes")
	}
	return nil
}

// Options configures Load: how the IREE worker runs the module.
type Options struct {
	// Device is the IREE HAL device: "local-task" (default), "local-sync",
	// or a GPU's ("cuda", "hip", "vulkan"); it must run Program.Target.
	Device  string
	Threads int // local-task worker threads; 0: one per core
	// RuntimeFlags are extra iree.runtime flags (iree.RuntimeOptions.Extra).
	RuntimeFlags []string
	// Phase, if set, is called when a slow phase starts ("load") and
	// returns a function called when it ends. Used for progress output.
	Phase func(name string) (done func())
}

// Model is a compiled model loaded into an IREE worker, ready for prefill
// and decode calls on slot 0. Its methods are not safe for concurrent use.
type Model struct {
	Program *Program
	Vocab   int64   // logits width (Program.Vocab)
	EOS     []int32 // end-of-generation token ids (Program.EOS)
	// LoadTime is the time to load the module and its weights.
	LoadTime time.Duration
	// CompileTime is the iree-compile wall time (near zero on a cache hit).
	CompileTime time.Duration
	Cached      bool // the compiled module came from the cache
	worker      *iree.Worker
	runtime     iree.RuntimeOptions
	// slots records what each slot holds, for every kind of state
	// (slots.go).
	slots slotTable
	// copies counts per slot the CopySlot calls that gave it another
	// slot's state: a drafter that keeps rows in the target's slots (the
	// MTP drafter) forgets what it recorded of a slot when it changes.
	copies map[int]int
	// restarts counts Restart calls: every slot's contents are gone.
	restarts int
	// encodes caches encoder rows by tile content (images.go).
	encodes encodeCache
}

// Load starts a new IREE worker and loads prog's module with its weights.
// Errors name the cause: a malformed Program, a missing IREE install
// (ireetool.ErrNotFound), an iree.runtime of another release than the
// compiler's, or the worker failing to load.
func Load(ctx context.Context, prog *Program, opts Options) (*Model, error) {
	if err := prog.check(); err != nil {
		return nil, err
	}
	if err := checkDevice(prog.Target, opts.Device); err != nil {
		return nil, err
	}
	start := time.Now()
	phase := opts.Phase
	if phase == nil {
		phase = func(string) func() { return func() {} }
	}
	m := &Model{Program: prog, Vocab: prog.Vocab, EOS: slices.Clone(prog.EOS), CompileTime: prog.CompileTime, Cached: prog.Cached}
	done := phase("load")
	defer done()
	w, err := iree.Start(ctx, iree.Options{})
	if err != nil {
		return nil, err
	}
	if err := checkVersions(w, prog.CompilerVersion); err != nil {
		w.Close()
		return nil, err
	}
	m.runtime = iree.RuntimeOptions{Device: opts.Device, Threads: opts.Threads, Extra: opts.RuntimeFlags}
	if err := w.LoadWith(ctx, prog.Module, prog.Params, m.runtime); err != nil {
		w.Close()
		return nil, err
	}
	m.worker, m.slots = w, newSlotTable(prog)
	m.LoadTime = time.Since(start)
	return m, nil
}

// Text loads the model's tokenizer and chat template from where the
// Program says they are (its GGUF file, else its folder; LoadText), with
// PartsContent set when the model reads images.
func (m *Model) Text() (*Text, error) {
	var t *Text
	var err error
	switch {
	case m.Program.GGUF != nil:
		t, err = TextFromGGUF(m.Program.GGUF)
	case m.Program.Dir == "":
		return nil, fmt.Errorf("the model has no folder to read tokenizer.json from")
	default:
		t, err = LoadText(m.Program.Dir)
	}
	if err != nil {
		return nil, err
	}
	t.PartsContent = len(m.Program.Encoders) > 0
	return t, nil
}

// checkVersions refuses a worker whose iree.runtime is not the release
// (and revision) of the iree-compile that built the module: IREE's
// runtime only promises to load bytecode from its own compiler.
func checkVersions(w *iree.Worker, cv string) error {
	if cv == "" {
		return nil
	}
	if !strings.Contains(cv, " "+w.IREEVersion+" ") || (w.IREERevision != "" && !strings.Contains(cv, w.IREERevision)) {
		return fmt.Errorf("iree.runtime %s (%s) is not the release of iree-compile (%s): install matching iree-base-compiler and iree-base-runtime (scripts/setup.sh)",
			w.IREEVersion, w.IREERevision, strings.Join(strings.Fields(cv), " "))
	}
	return nil
}

// Restart replaces the IREE worker by a new one with the module loaded
// again (after a worker died or was killed for a hung call). Every
// KV-cache slot starts empty, and no slot holds a recurrent state. Errors: the new worker failing to start or
// load.
func (m *Model) Restart(ctx context.Context) error {
	if m.worker != nil {
		m.worker.Close()
		m.worker = nil
	}
	w, err := iree.Start(ctx, iree.Options{})
	if err != nil {
		return err
	}
	if err := w.LoadWith(ctx, m.Program.Module, m.Program.Params, m.runtime); err != nil {
		w.Close()
		return err
	}
	m.worker, m.slots = w, newSlotTable(m.Program)
	m.restarts++
	return nil
}

// WorkerPid returns the IREE worker's process id (0 when none runs).
func (m *Model) WorkerPid() int {
	if m.worker == nil {
		return 0
	}
	return m.worker.Pid()
}

// Close stops the worker.
func (m *Model) Close() error {
	if m.worker == nil {
		return nil
	}
	return m.worker.Close()
}

// MaxLen is the KV-cache length in tokens: positions must stay below it.
func (m *Model) MaxLen() int { return int(m.Program.MaxLen) }

// Prefill is PrefillSlot on slot 0.
func (m *Model) Prefill(ctx context.Context, tokens []int32, start int) ([]float32, error) {
	return m.PrefillSlot(ctx, 0, tokens, start)
}

// PrefillSlot runs one sequence's tokens, kept in KV-cache slot `slot`, at
// positions start.. through the model in chunks of the compiled prefill
// buckets (the last chunk padded), writing the cache, and returns the logits
// of the last token, [vocab] f32. tokens are the rest of the sequence's
// prompt: start+len(tokens) is its length, which a length-dependent RoPE
// reads (and cached keys of positions before start computed for another
// length are recomputed first; see lengths.go). Errors: empty input, a slot outside
// [0, Slots), a token id outside [0, vocab), positions past MaxLen, or a
// worker failure.
func (m *Model) PrefillSlot(ctx context.Context, slot int, tokens []int32, start int) ([]float32, error) {
	return m.PrefillEncoded(ctx, slot, tokens, start, nil)
}

// PrefillEncoded is PrefillSlot for a prompt with images: enc holds the
// encoders' rows of the placeholder tokens among tokens (Encoded; nil: no
// images). Errors as PrefillSlot's, and rows that do not match the
// placeholders one to one.
func (m *Model) PrefillEncoded(ctx context.Context, slot int, tokens []int32, start int, enc *Encoded) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("prefill: no tokens")
	}
	if err := m.checkTokens(tokens, start); err != nil {
		return nil, err
	}
	if err := m.checkSlots([]int{slot}); err != nil {
		return nil, err
	}
	rows, err := m.placeRows(enc, tokens)
	if err != nil {
		return nil, err
	}
	total := start + len(tokens)
	if err := m.refresh(ctx, slot, start, total); err != nil {
		return nil, err
	}
	var logits []float32
	for len(tokens) > 0 {
		l, n, err := m.prefillChunk(ctx, slot, tokens, start, total, rows)
		if err != nil {
			return nil, err
		}
		logits, tokens, start = l, tokens[n:], start+n
	}
	return logits, nil
}

// PrefillChunk is one step of PrefillSlot: it runs the first chunk of
// tokens (the largest compiled prefill bucket's worth, or one decode step
// where no bucket fits before the end of the cache) at positions start..,
// writing the cache of slot, and returns the logits of the chunk's last
// token, [vocab] f32, and the number of tokens consumed. A scheduler
// interleaves chunks of a long prompt with other sequences' decode steps.
// Errors as PrefillSlot.
func (m *Model) PrefillChunk(ctx context.Context, slot int, tokens []int32, start int) ([]float32, int, error) {
	return m.PrefillChunkEncoded(ctx, slot, tokens, start, nil)
}

// prefillChunk runs one chunk of checked input (see PrefillChunk) of a
// sequence whose length is total once its prompt is in; rows, when set,
// places encoder rows at the chunk's placeholder tokens (placeRows).
func (m *Model) prefillChunk(ctx context.Context, slot int, tokens []int32, start, total int, rows *placed) ([]float32, int, error) {
	bucket := m.bucket(len(tokens), start)
	if bucket == 0 { // no bucket fits before the end of the cache: one token at a time
		if rows != nil && rows.holds(m.Program.Encoders, tokens[0]) {
			return nil, 0, fmt.Errorf("prefill: an image placeholder at position %d, past the last prefill chunk that fits the KV cache (%d): image rows enter through prefill chunks only; shorten the prompt or raise the KV-cache length", start, m.MaxLen())
		}
		if m.Program.MRoPE { // decode's positions: a text token's three axes agree
			var d int64
			if p := rows.positions(1); p[0] != nil {
				d = int64(p[0][0]) - int64(start)
			}
			m.slots.setRoPEDelta(slot, d)
		}
		l, err := m.DecodeBatch(ctx, []int32{tokens[0]}, []int{start}, []int{slot})
		if err != nil {
			return nil, 0, err
		}
		m.endPrompt(slot, start+1, total, rows)
		return l[0], 1, nil
	}
	n, err := m.blockCut(tokens, start, min(bucket, len(tokens)))
	if err != nil {
		return nil, 0, err
	}
	if err := m.held(ctx, slot, start); err != nil {
		return nil, 0, err
	}
	chunk := make([]int32, bucket)
	copy(chunk, tokens[:n])
	ids, err := tensor.FromI32([]int64{1, int64(bucket)}, chunk)
	if err != nil {
		return nil, 0, err
	}
	fn := abi.PrefillName(int64(bucket))
	args := []tensor.Tensor{ids, tensor.ScalarI32(int32(slot)), tensor.ScalarI32(int32(start)), tensor.ScalarI32(int32(n)), tensor.ScalarI32(int32(total))}
	if len(m.Program.Encoders) > 0 {
		extra, err := rows.args(m.Program.Encoders, chunk[:n], bucket)
		if err != nil {
			return nil, 0, err
		}
		args = append(args, extra...)
	}
	rp, err := m.ropeArg(start, bucket, 0, rows.positions(n))
	if err != nil {
		return nil, 0, err
	}
	if rp != nil {
		args = append(args, *rp)
	}
	out, err := m.worker.Call(ctx, fn, args)
	if err != nil {
		return nil, 0, err
	}
	m.slots.wrote(slot, start, tokens[:n], max(total, start+n))
	m.endPrompt(slot, start+n, total, rows)
	if start+n == total { // the prompt's end: a later sequence sharing the prompt continues here
		if err := m.saveState(ctx, slot, total); err != nil {
			return nil, 0, err
		}
	}
	logits, err := m.logits(out, 1)
	if err != nil {
		return nil, 0, err
	}
	return logits[0], n, nil
}

// blockCut shortens a chunk of n of tokens so that no run of an encoder's
// placeholders whose tokens attend to each other (abi.Encoder.Blocks:
// Gemma 3's image tokens, bidirectional within an image in a prefill)
// crosses its end: the chunk then ends before the run, whose later keys
// would otherwise not yet be in the cache. Errors: a run from the chunk's
// first token longer than the chunk (no compiled prefill bucket holds
// it).
func (m *Model) blockCut(tokens []int32, start, n int) (int, error) {
	if n >= len(tokens) {
		return n, nil
	}
	for _, e := range m.Program.Encoders {
		ph := e.Placeholder
		if !e.Blocks || tokens[n-1] != ph || tokens[n] != ph {
			continue
		}
		at := n - 1
		for at > 0 && tokens[at-1] == ph {
			at--
		}
		if at == 0 {
			end := n
			for end < len(tokens) && tokens[end] == ph {
				end++
			}
			return 0, fmt.Errorf("prefill: %d image tokens (id %d) from position %d attend to each other and must lie in one prefill chunk, but the largest prefill bucket that fits holds %d: compile a larger prefill bucket (or shorten the image's token count)", end, ph, start, n)
		}
		return at, nil
	}
	return n, nil
}

// bucket picks the prefill chunk length for n remaining tokens at position
// start: the smallest bucket holding them all, else the largest; 0 if no
// bucket fits below MaxLen.
func (m *Model) bucket(n, start int) int {
	best := 0
	for _, b := range m.Program.PrefillBuckets {
		if start+int(b) > m.MaxLen() {
			break
		}
		best = int(b)
		if int(b) >= n {
			break
		}
	}
	return best
}

// Decode runs one token of the sequence in slot 0 at position pos and
// returns its logits, [vocab] f32.
func (m *Model) Decode(ctx context.Context, token int32, pos int) ([]float32, error) {
	l, err := m.DecodeBatch(ctx, []int32{token}, []int{pos}, []int{0})
	if err != nil {
		return nil, err
	}
	return l[0], nil
}

// DecodeBatch runs one token for each of len(tokens) sequences — sequence b
// in KV-cache slot slots[b] at position pos[b] — in one call of the compiled
// decode entry point for that batch size, and returns their logits,
// [batch][vocab] f32. Errors: a batch size without an entry point, repeated
// or out-of-range slots, bad token ids or positions, or a worker failure.
func (m *Model) DecodeBatch(ctx context.Context, tokens []int32, pos, slots []int) ([][]float32, error) {
	fn, args, err := m.decodeCall(ctx, tokens, pos, slots)
	if err != nil {
		return nil, err
	}
	out, err := m.worker.Call(ctx, fn, args)
	if err != nil {
		return nil, err
	}
	m.recordDecode(tokens, pos, slots)
	return m.logits(out, len(tokens))
}

// DecodeGreedy is DecodeBatch followed by argmax (the lowest id on ties,
// as torch.argmax), done in the worker on the logits buffer: it returns the
// next token of each sequence, [batch] ids, and no logits cross the pipe.
// Errors as DecodeBatch.
func (m *Model) DecodeGreedy(ctx context.Context, tokens []int32, pos, slots []int) ([]int32, error) {
	cs, err := m.DecodeSample(ctx, tokens, pos, slots, nil)
	if err != nil {
		return nil, err
	}
	ids := make([]int32, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids, nil
}

// DecodeSample is DecodeBatch followed by choosing each sequence's next
// token in the worker by rows[b] (iree.SampleRow: sampling, penalties,
// logprobs; nil rows: argmax for all): it returns [batch] choices, and no
// logits cross the pipe. Errors as DecodeBatch, plus len(rows) other than
// the batch.
func (m *Model) DecodeSample(ctx context.Context, tokens []int32, pos, slots []int, rows []iree.SampleRow) ([]iree.Choice, error) {
	if rows != nil && len(rows) != len(tokens) {
		return nil, fmt.Errorf("decode: %d sampling rows for a batch of %d", len(rows), len(tokens))
	}
	fn, args, err := m.decodeCall(ctx, tokens, pos, slots)
	if err != nil {
		return nil, err
	}
	var out []tensor.Tensor
	if rows == nil {
		out, err = m.worker.CallArgmax(ctx, fn, args)
	} else {
		out, err = m.worker.CallSample(ctx, fn, args, rows)
	}
	if err != nil {
		return nil, err
	}
	m.recordDecode(tokens, pos, slots)
	return iree.Choices(out, int64(len(tokens)))
}

// Sample chooses a token from logits [vocab] held on the Go side (e.g.
// prefill's) by row, with the worker's sampling code (iree.SampleRow).
// Errors: logits of the wrong width, a worker failure.
func (m *Model) Sample(ctx context.Context, logits []float32, row iree.SampleRow) (iree.Choice, error) {
	if int64(len(logits)) != m.Vocab {
		return iree.Choice{}, fmt.Errorf("sample: %d logits, the model's vocabulary has %d", len(logits), m.Vocab)
	}
	t, err := tensor.FromF32([]int64{1, m.Vocab}, logits)
	if err != nil {
		return iree.Choice{}, err
	}
	cs, err := m.worker.Sample(ctx, t, []iree.SampleRow{row})
	if err != nil {
		return iree.Choice{}, err
	}
	return cs[0], nil
}

// recordDecode notes a decode batch's writes in the slot table.
func (m *Model) recordDecode(tokens []int32, pos, slots []int) {
	for b := range tokens {
		m.slots.wrote(slots[b], pos[b], tokens[b:b+1], pos[b]+1)
	}
}

// decodeCall checks a decode batch, recomputes the cached keys a
// length-dependent RoPE makes stale (refreshDecode), and returns the entry
// point and its arguments.
func (m *Model) decodeCall(ctx context.Context, tokens []int32, pos, slots []int) (string, []tensor.Tensor, error) {
	B := len(tokens)
	if len(pos) != B || len(slots) != B {
		return "", nil, fmt.Errorf("decode: %d tokens, %d positions, %d slots", B, len(pos), len(slots))
	}
	if !slices.Contains(m.Program.DecodeBatches, int64(B)) {
		return "", nil, fmt.Errorf("decode: no entry point for batch size %d (compiled: %v)", B, m.Program.DecodeBatches)
	}
	if err := m.checkSlots(slots); err != nil {
		return "", nil, err
	}
	p32 := make([]int32, B)
	s32 := make([]int32, B)
	for b := range tokens {
		if err := m.checkTokens(tokens[b:b+1], pos[b]); err != nil {
			return "", nil, err
		}
		if err := m.held(ctx, slots[b], pos[b]); err != nil {
			return "", nil, err
		}
		p32[b], s32[b] = int32(pos[b]), int32(slots[b])
	}
	if err := m.refreshDecode(ctx, pos, slots); err != nil {
		return "", nil, err
	}
	var args []tensor.Tensor
	for _, xs := range [][]int32{tokens, p32, s32} {
		t, err := tensor.FromI32([]int64{int64(B)}, xs)
		if err != nil {
			return "", nil, err
		}
		args = append(args, t)
	}
	rp, err := m.ropeDecodeArg(pos, slots)
	if err != nil {
		return "", nil, err
	}
	if rp != nil {
		args = append(args, *rp)
	}
	return abi.DecodeName(int64(B)), args, nil
}

// checkSlots rejects slots outside [0, Slots) and repeated slots.
func (m *Model) checkSlots(slots []int) error {
	for i, s := range slots {
		if s < 0 || int64(s) >= m.Program.Slots {
			return fmt.Errorf("KV-cache slot %d is outside [0, %d)", s, m.Program.Slots)
		}
		if slices.Contains(slots[:i], s) {
			return fmt.Errorf("KV-cache slot %d used twice in one batch", s)
		}
	}
	return nil
}

func (m *Model) checkTokens(tokens []int32, start int) error {
	for _, t := range tokens {
		if t < 0 || int64(t) >= m.Vocab {
			return fmt.Errorf("token id %d is outside the vocabulary [0, %d)", t, m.Vocab)
		}
	}
	if start < 0 || start+len(tokens) > m.MaxLen() {
		return option.Errorf("MaxLen", m.MaxLen(), "positions %d..%d exceed the KV-cache length; use a shorter prompt or fewer tokens (or a larger {MaxLen})", start, start+len(tokens)-1)
	}
	return nil
}

// logits splits the worker's one result, [rows, vocab] f32, into rows.
func (m *Model) logits(out []tensor.Tensor, rows int) ([][]float32, error) {
	if len(out) != 1 {
		return nil, fmt.Errorf("worker returned %d results, want 1 (logits)", len(out))
	}
	l, err := out[0].F32()
	if err != nil {
		return nil, err
	}
	if int64(len(l)) != int64(rows)*m.Vocab {
		return nil, fmt.Errorf("worker returned logits %v, want [%d %d]", out[0].Shape, rows, m.Vocab)
	}
	res := make([][]float32, rows)
	for r := range res {
		res[r] = l[int64(r)*m.Vocab : int64(r+1)*m.Vocab]
	}
	return res, nil
}
