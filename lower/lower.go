// Package lower instantiates an IR graph (package dsl/ir) for each graph
// kind and lowers it to a StableHLO module (package codegen) through the
// shared primitive lowerings in this package, one per primitive (prim_*.go).
//
// The module's interface, which package rt relies on:
//
//	prefill_S(tokens: [1, S] i32, slot: i32, start: i32, len: i32, total: i32[, <encoder>: [1, S, width] f32 ...]) -> logits [1, vocab] f32
//	    runs S tokens of one sequence, held in KV-cache slot `slot`, at
//	    positions start..start+S-1 (tokens past len are padding; start+S
//	    <= max_len), writes their keys and values into the cache and
//	    returns the logits of position start+len-1. S is a static bucket.
//	    total is the sequence's length once its whole prompt is in (the
//	    prompt's last chunk ends there): a length-dependent RoPE (LongRoPE,
//	    dynamic NTK) chooses its table by max(total, start+len), as HF
//	    does for a prompt run in one forward call.
//	    A family with encoders (ir.Graph.Encoders) takes one more argument
//	    per encoder: its rows placed at the chunk's positions, which the
//	    graph's masked_scatter reads where its mask holds.
//	encode_<name>(pixels: [1, C, H, W] f32) -> [N, width] f32
//	    (a family with encoders) one image tile through encoder <name>
//	    (abi.EncodeName): the rows a prefill takes at the tile's
//	    placeholder positions. An encoder holds no state.
//	decode_B(tokens: [B] i32, pos: [B] i32, slot: [B] i32) -> logits [B, vocab] f32
//	    runs one token for each of B sequences, sequence b in cache slot
//	    slot[b] at its own position pos[b] (continuous batching: slots and
//	    positions are ragged).
//	verify_K(tokens: [1, K] i32, slot: i32, start: i32, len: i32) -> logits [K, vocab] f32
//	    (only with Options.VerifyBuckets) prefill_K's chunk with the
//	    logits of every position: speculative decoding's verify step.
//	mtp_K(tokens: [1, K] i32, slot: i32, start: i32, len: i32, chain: i32) -> logits [K, vocab] f32
//	    (only with Options.MTP, for a graph with an MTP module) the
//	    multi-token-prediction module over K positions (mtp.go).
//	A graph whose RoPE is multimodal (MRoPE: Qwen2-VL's M-RoPE) takes
//	one more argument last in prefill_S, decode_B, verify_K and mtp_K:
//	rope_positions [3, 1, S] ([3, B, 1] in decode) i32, each token's
//	(temporal, height, width) RoPE position (HF get_rope_index; all three
//	the token's position plus the sequence's delta for text).
//	copy_cache_C(src: i32, dst: i32, start: i32), copy_state(src: i32, dst: i32)
//	    with more than one slot: copy a block of slot src's KV cache, or
//	    all its windows and recurrent states, into slot dst (copy.go), so
//	    that sequences sharing a prompt prefill it once.
//
// Slot indices must be distinct within a call and in [0, slots).
//
// Attention reads only the filled part of each slot: the first L cache
// positions, L = start+S (prefill) or max(pos)+1 (decode), a dynamic
// dimension of the attention ops (see readCache). So the cost of a call
// follows the tokens the cache holds, not its capacity, with one entry
// point per chunk or batch size.
//
// Per-sequence state. A primitive declares the state it reads and writes
// and its kind in ir.Node.States: attention's KV cache (ir.KVCache: one row
// per position, up to max_len; kvcache.go), a window (ir.Window: a causal
// conv's last k−1 inputs) or a fixed recurrent state (ir.Recurrent: a Mamba
// ssm_state, f32) (state.go). Every kind is held per
// slot and keeps one slot contract, which the runtime relies on:
//
//   - a sequence starting at position 0 starts from a zero state: no call
//     reads what a slot's previous user left (KV rows past a call's
//     context are never read; a window or recurrent state read at
//     position 0 is zeros);
//   - a call at start > 0 continues the state its slot holds after
//     positions 0..start−1, so chunked prefill carries state from chunk to
//     chunk, and a prefill's padding (tokens past len) changes no state;
//   - a call writes only at the positions it runs: a padded decode row
//     placed at the first position its slot does not hold (what the
//     engine does) leaves everything the slot holds unchanged (a window or
//     recurrent state is double-buffered by position parity: state.go);
//   - a window or recurrent state is held for exactly one position, the
//     end of the slot's tokens: a sequence that does not extend all of
//     them must start again at position 0 (rt.Program.FixedState(); the
//     engine reuses a prefix only where that exact state is held). A
//     cancelled or failed request therefore leaves nothing the next user
//     of its slot can read: it starts at 0, or continues exactly the
//     tokens the slot holds.
//
// StateTable (statetable.go) describes every state global the module
// holds, one row each (abi.StateTable: kind, per-slot shape and bytes,
// reset, padding, copy entry point, snapshot policy), read off the same
// layouts Lower emits; the driver budgets memory from it and the runtime
// reads it.
//
// The KV cache is module state: a mutable global (see kvcache.go) updated in
// place with dynamic_update_slice, never copied. Weights are named
// parameters in scope "model" keyed by checkpoint tensor name, declared in
// their stored dtype and converted to f32 in the graph.
package lower

import (
	"fmt"
	"sort"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
)

// Options fixes the static shapes of one compiled module.
type Options struct {
	PrefillBuckets []int64 // chunk lengths S (tokens) with a prefill_S entry point
	// VerifyBuckets are the chunk lengths K (tokens) with a verify_K entry
	// point (speculative decoding; abi.VerifyName): like prefill_K, but
	// the logits of every position. None unless asked: each costs compile
	// time and module size.
	VerifyBuckets []int64
	DecodeBatches []int64 // batch sizes B with a decode_B entry point
	// EncoderSizes are the sizes a variable-size encoder (.arch
	// `encoder image[patches]`: Qwen2-VL's patches) has an entry point for
	// (abi.EncodeSizeName), ascending; nil: DefaultEncoderSizes. An input
	// of n rows runs in the smallest size >= n, padded. driver.NewGraph
	// builds the encoder at each.
	EncoderSizes []int64
	// MTP lowers the graph's multi-token-prediction module (ir.Graph.MTP;
	// speculative decoding's mtp drafter, mtp.go): prefill, decode and
	// verify keep the target's hidden state per position, and an mtp_K
	// entry point (abi.MTPName) per prefill and verify bucket runs the
	// module. Off, driver.NewGraph drops the module and its weights.
	MTP    bool
	MaxLen int64 // KV cache length per slot (tokens); positions must stay below it
	// StateSnapshots is the number of saved buffers per slot of every
	// window and recurrent state beyond the parity pair (state.go): the
	// runtime keeps the state after a prompt's last token there, so a later
	// sequence sharing that prefix (a chat's next turn whose template
	// re-renders the answer) continues from it instead of from position 0.
	// With any, the module exports abi.SnapshotStateName (copy.go). 0:
	// none; a model without such state ignores it.
	StateSnapshots int64
	Slots          int64 // sequences with a KV cache; >= every decode batch
	// WeightDTypes gives each checkpoint tensor's storage format: a float
	// dtype ("f32", "f16", "bf16") or a GGUF block format ("q8_0", "q4_0",
	// "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k"; see storage.go and
	// StorageFormats); a tensor not listed is f32. The global holds the
	// stored bytes; the graph decodes them.
	WeightDTypes map[string]string
	// Kernels, when set, are hand-written matmul kernels for some storage
	// formats (see kernel.go); linear layers over such weights call them
	// instead of the plain lowering.
	Kernels *Kernels
	// GPU lowers for one of IREE's GPU targets (cuda, hip, vulkan): where
	// the GPU pipelines of IREE 3.13 fail on a form the CPU pipeline
	// compiles, the lowering takes another of equal value (see gpuForms).
	// The CPU module (GPU false) is unchanged by it.
	GPU bool
	// ScoreBytes bounds an encoder's attention scores: bidirectional
	// attention whose score matrix [batch, heads, n, n] f32 is larger
	// computes it a block of query rows per loop trip (at most 64 rows,
	// [batch, heads, rows, n] each), so memory grows with n, not n².
	// 0: DefaultScoreBytes.
	ScoreBytes int64
}

// DefaultScoreBytes is the largest score matrix (bytes) an encoder's
// attention computes at once unless Options.ScoreBytes says otherwise:
// 16 MiB, [16, 256, 256] f32 (the heads of a SigLIP-sized tower over 256
// patches). Measured on a 2-thread AVX-512 Xeon with IREE 3.13, 16 heads
// of 72, one layer's attention: 256 rows 4.1 ms at once or in two blocks;
// 1024 rows 95 ms at once, 55 ms in blocks; 5120 rows (in archc's
// [batch, n, heads, d] layout) 4.4 s and 3.4 GB at once, 1.7 s and 240 MB
// in blocks of 64 rows.
const DefaultScoreBytes = 16 << 20

// DefaultOptions are the shapes archc uses unless told otherwise.
func DefaultOptions() Options {
	return Options{PrefillBuckets: []int64{16, 64}, DecodeBatches: []int64{1}, MaxLen: 4096, Slots: 1}
}

// Lower builds the module for g: kernels (if any), weight and KV-cache
// globals, then one prefill function per chunk bucket and one decode
// function per batch size, and with more than one slot the copy of a
// slot's state (copy.go); then it type-checks the module (codegen's
// Module.Verify), so that an ill-typed module is an error, never output.
// It returns the first error met, naming the .arch position of the node
// (or weight) at fault when there is one. A graph without a decoder-layer
// loop is an error: prefill and decode lower the nodes after the loop for
// the returned position only, and a graph without one has no such split.
func Lower(g *ir.Graph, opts Options) (*codegen.Module, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if g.Tokens == nil || g.Logits == nil {
		return nil, fmt.Errorf("lower: graph %s has no tokens input or no logits", g.Arch)
	}
	if g.HeadStart == 0 {
		return nil, fmt.Errorf("%s: arch %s has no decoder-layer loop (`for i in range(num_hidden_layers) scope model.layers.{i} { ... }`); prefill and decode need one", g.Tokens.Pos, g.Arch)
	}
	if !opts.MTP {
		g = g.WithoutMTP()
	}
	m := &codegen.Module{Name: g.Arch}
	globals := map[string]codegen.Global{}
	for _, w := range g.Weights {
		st, err := opts.storageOf(w.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", w.Pos, err)
		}
		t, err := st.globalType(w.Shape)
		if err != nil {
			return nil, fmt.Errorf("%s: weight %s: %v", w.Pos, w.Name, err)
		}
		gl := codegen.Global{Name: w.Name, Type: t, Param: w.Name}
		m.AddGlobal(gl)
		globals[w.Name] = gl
	}
	cache := newCacheLayout(g, opts)
	for _, grp := range cache.groups {
		for _, gl := range grp.globals {
			m.AddGlobal(gl)
		}
	}
	for _, grp := range cache.states.groups {
		for _, gl := range grp.globals {
			m.AddGlobal(gl)
		}
	}
	if g.MTP != nil {
		m.AddGlobal(mtpHiddenGlobal(g, opts))
		if g.MTP.Next != nil {
			m.AddGlobal(mtpChainGlobal(g, opts))
		}
	}
	for _, s := range opts.PrefillBuckets {
		if err := lowerPrefill(m, g, opts, globals, cache, s); err != nil {
			return nil, err
		}
	}
	for _, e := range g.Encoders {
		if err := lowerEncoder(m, e, opts, globals); err != nil {
			return nil, err
		}
	}
	for _, k := range opts.VerifyBuckets {
		if err := lowerVerify(m, g, opts, globals, cache, k); err != nil {
			return nil, err
		}
	}
	for _, b := range opts.DecodeBatches {
		if err := lowerDecode(m, g, opts, globals, cache, b); err != nil {
			return nil, err
		}
	}
	if g.MTP != nil {
		for _, k := range MTPBuckets(opts) {
			if err := lowerMTP(m, g, opts, globals, cache, k); err != nil {
				return nil, err
			}
		}
	}
	if err := lowerCopies(m, g, opts, globals, cache); err != nil {
		return nil, err
	}
	addKernels(m, opts.Kernels.usedBy(g, opts))
	if err := m.Verify(); err != nil {
		return nil, err
	}
	return m, nil
}

// BucketError is Lower's error for a prefill or verify bucket outside
// [1, MaxLen]; front ends name their flags from it.
type BucketError struct {
	Kind         string // "prefill" or "verify"
	Size, MaxLen int64
}

func (e *BucketError) Error() string {
	return fmt.Sprintf("lower: %s bucket %d must be in [1, max_len=%d]", e.Kind, e.Size, e.MaxLen)
}

func (o Options) validate() error {
	if o.StateSnapshots < 0 {
		return fmt.Errorf("lower: %d state snapshots: want 0 or more", o.StateSnapshots)
	}
	if len(o.PrefillBuckets) == 0 || len(o.DecodeBatches) == 0 {
		return fmt.Errorf("lower: need at least one prefill bucket and one decode batch size")
	}
	if !sort.SliceIsSorted(o.PrefillBuckets, func(i, j int) bool { return o.PrefillBuckets[i] < o.PrefillBuckets[j] }) {
		return fmt.Errorf("lower: prefill buckets %v must be sorted", o.PrefillBuckets)
	}
	for _, s := range o.PrefillBuckets {
		if s <= 0 || s > o.MaxLen {
			return &BucketError{Kind: "prefill", Size: s, MaxLen: o.MaxLen}
		}
	}
	for _, k := range o.VerifyBuckets {
		if k <= 0 || k > o.MaxLen {
			return &BucketError{Kind: "verify", Size: k, MaxLen: o.MaxLen}
		}
	}
	if !sort.SliceIsSorted(o.VerifyBuckets, func(i, j int) bool { return o.VerifyBuckets[i] < o.VerifyBuckets[j] }) {
		return fmt.Errorf("lower: verify buckets %v must be sorted", o.VerifyBuckets)
	}
	for _, b := range o.DecodeBatches {
		if b <= 0 || b > o.Slots {
			return fmt.Errorf("lower: decode batch %d must be in [1, slots=%d]", b, o.Slots)
		}
	}
	return nil
}

// PrefillName is the entry point name for chunk bucket s (tokens;
// abi.PrefillName, the runtime's side of the interface).
func PrefillName(s int64) string { return abi.PrefillName(s) }

// DecodeName is the entry point name for decode batch size b
// (abi.DecodeName).
func DecodeName(b int64) string { return abi.DecodeName(b) }

func lowerPrefill(m *codegen.Module, g *ir.Graph, opts Options, globals map[string]codegen.Global, cache *cacheLayout, s int64) error {
	args := []codegen.Type{codegen.T("i32", 1, s), codegen.T("i32"), codegen.T("i32"), codegen.T("i32"), codegen.T("i32")}
	for _, in := range g.Inputs {
		args = append(args, codegen.T("f32", 1, s, int64(in.Type.Shape[2])))
	}
	mrope := MRoPE(g)
	if mrope {
		args = append(args, codegen.T("i32", 3, 1, s))
	}
	fn := m.NewFunc(PrefillName(s), args...)
	f := newFn(fn, g, opts, globals, cache, 1, s)
	tokens, slot, start, length, total := fn.Args[0], fn.Args[1], fn.Args[2], fn.Args[3], fn.Args[4]
	for i, in := range g.Inputs {
		f.vals[in] = fn.Args[5+i]
	}
	if mrope {
		f.ropePositions = fn.Args[len(fn.Args)-1]
	}
	f.context = f.add(start, f.constI32(s))
	f.slots = []codegen.Value{slot}
	iota := fn.Op("stablehlo.iota", codegen.T("i32", 1, s), codegen.Attrs{codegen.A("iota_dimension", codegen.Int{V: 1, Type: "i64"})})
	f.positions = f.add(iota, f.broadcast(start, codegen.T("i32", 1, s)))
	f.starts = []codegen.Value{start}
	f.last, f.hasLast = f.sub(length, f.constI32(1)), true
	f.length = length
	f.mkSeqLens = func() codegen.Value { return f.reshape(f.binary("stablehlo.maximum", f.add(start, length), total), 1) }
	logits := f.run(tokens)
	if err := fn.Err(); err != nil {
		return err
	}
	fn.Return(f.reshape(logits, 1, logits.Type.Shape[2]))
	return fn.Err()
}

// lowerVerify emits verify_K (abi.VerifyName): prefill_K's chunk of one
// sequence, with the nodes after the decoder layers (final norm, LM head)
// run on every position, so the logits of all K positions come back,
// [K, vocab]. A length-dependent RoPE reads start+len as the sequence's
// length, as a decode step at the chunk's last token would (the runtime
// does not speculate past such a RoPE's threshold, where one table per
// call would not equal one per step).
func lowerVerify(m *codegen.Module, g *ir.Graph, opts Options, globals map[string]codegen.Global, cache *cacheLayout, k int64) error {
	args := []codegen.Type{codegen.T("i32", 1, k), codegen.T("i32"), codegen.T("i32"), codegen.T("i32")}
	mrope := MRoPE(g)
	if mrope {
		args = append(args, codegen.T("i32", 3, 1, k))
	}
	fn := m.NewFunc(abi.VerifyName(k), args...)
	f := newFn(fn, g, opts, globals, cache, 1, k)
	tokens, slot, start, length := fn.Args[0], fn.Args[1], fn.Args[2], fn.Args[3]
	if mrope {
		f.ropePositions = fn.Args[4]
	}
	f.context = f.add(start, f.constI32(k))
	f.slots = []codegen.Value{slot}
	iota := fn.Op("stablehlo.iota", codegen.T("i32", 1, k), codegen.Attrs{codegen.A("iota_dimension", codegen.Int{V: 1, Type: "i64"})})
	f.positions = f.add(iota, f.broadcast(start, codegen.T("i32", 1, k)))
	f.starts = []codegen.Value{start}
	f.allRows = true
	f.length = length
	f.mkSeqLens = func() codegen.Value { return f.reshape(f.add(start, length), 1) }
	logits := f.run(tokens)
	if err := fn.Err(); err != nil {
		return err
	}
	fn.Return(f.reshape(logits, k, logits.Type.Shape[2]))
	return fn.Err()
}

func lowerDecode(m *codegen.Module, g *ir.Graph, opts Options, globals map[string]codegen.Global, cache *cacheLayout, b int64) error {
	args := []codegen.Type{codegen.T("i32", b), codegen.T("i32", b), codegen.T("i32", b)}
	mrope := MRoPE(g)
	if mrope {
		args = append(args, codegen.T("i32", 3, b, 1))
	}
	fn := m.NewFunc(DecodeName(b), args...)
	f := newFn(fn, g, opts, globals, cache, b, 1)
	tokens, pos, slots := fn.Args[0], fn.Args[1], fn.Args[2]
	if mrope {
		f.ropePositions = fn.Args[3]
	}
	f.context = f.add(f.Reduce(pos, f.constI32(-1), "stablehlo.maximum", 0), f.constI32(1))
	f.positions = f.reshape(pos, b, 1)
	f.mkSeqLens = func() codegen.Value { return f.add(pos, f.broadcast(f.constI32(1), pos.Type)) }
	for i := int64(0); i < b; i++ {
		f.starts = append(f.starts, f.reshape(f.slice(pos, []int64{i}, []int64{i + 1}), []int64{}...))
		f.slots = append(f.slots, f.reshape(f.slice(slots, []int64{i}, []int64{i + 1}), []int64{}...))
	}
	logits := f.run(f.reshape(tokens, b, 1))
	if err := fn.Err(); err != nil {
		return err
	}
	fn.Return(f.reshape(logits, b, logits.Type.Shape[2]))
	return fn.Err()
}
