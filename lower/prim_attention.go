package lower

import (
	"fmt"
	"math"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// maskValue is what masked attention scores are set to: the most negative
// finite f32 (torch.finfo(float32).min, as HF's causal mask), never -inf.
const maskValue = -3.4028234663852886e38

// attention(q [batch, seq, heads, d], k [batch, seq, kv_heads, d], v [batch,
// seq, kv_heads, dv], scale, softcap, window, sinks [heads], kv_layer) →
// [batch, seq, heads·dv]. dv may differ from d (multi-head latent attention: DeepSeek-V2's
// and MiniCPM3's qk_nope_head_dim + qk_rope_head_dim keys, v_head_dim
// values). HF eager_attention_forward with GQA (query head
// h reads kv head h / (heads/kv_heads); with kv_repeat tile, kv head h mod
// kv_heads, JetMoeAttention's k.repeat(1, heads/kv_heads, 1, 1)) and a causal mask over absolute
// positions: scores = q·kᵀ·scale (scale defaults to d^-0.5), masked where
// key position > query position (or, with window W tokens, key position <=
// query position - W; with chunk C, key position < query position −
// (query position mod C): HF's chunked_causal_mask_function, Llama4's
// chunked_attention layers), attention-logit soft-capping cap·tanh(s/cap) before
// the mask (HF Gemma 2), softmax in f32, then ·v. With sinks (the node's
// Module names the tensor itself, GptOssAttention.sinks), head h's logit
// sinks[h] is a last column of the softmax whose probability is dropped
// (GptOss eager_attention_forward): m = max(max_j s_j, sink),
// p_j = exp(s_j - m) / (Σ_j exp(s_j - m) + exp(sink - m)). This call's keys
// and values are first written into the KV cache (see kvcache.go); attention
// then reads the first L positions of each slot's row, L the positions
// this call can see (a dynamic dimension; see readCache).
//
// KV sharing (kv_layer: j; Gemma 4's num_kv_shared_layers). A call that
// names an earlier decoder layer j gives no k and v and owns no cache: it
// attends over the cache of layer j's attention call. The design, in the
// shared state mechanism rather than in any family:
//
//   - the IR: the primitive's row marks kv_layer as its ShareState
//     attribute; dsl's builder links the call to the attention node of
//     layer j that owns a cache (ir.Node.StateFrom, following j's own
//     link if j shares too) before this shape rule runs, which then takes
//     kv_heads, d and dv from that node's declared KVCache states and
//     declares none of its own. The graph's order (layer j's node comes
//     first) is the dataflow's, so the link needs no tensor operand.
//   - the module: the cache layout (kvcache.go) gives entries to the nodes
//     that declare KVCache states only, so a shared call's layer takes no
//     cache memory (KVBytesPerToken shrinks with it) and the runtime sees
//     nothing new: the slot contract, prefix reuse and the engine hold
//     unchanged, since the source's cache is what they already manage.
//   - the lowering: no writeCache; readCache(StateFrom) reads the source's
//     entries from the function's current cache value, which layer j's
//     call has already updated with this call's positions (prefill: the
//     chunk's keys as j computed them, after the cached past; decode: the
//     new token's). Scale, softcap, window, chunk, sinks and kv_repeat are
//     this call's own: HF's shared layer keeps its own sliding_window and
//     mask, which equal its source's because the source is chosen of the
//     same layer type.
//
// This reads what HF's Gemma4TextAttention reads: a kv-shared layer takes
// shared_kv_states[layer_type], the (key, value) states that its source
// layer's cache.update returned, past and present, never its own
// projections.
func inferAttention(n *ir.Node, a *AttentionAttrs) error {
	if err := checkCap("softcap", a.Softcap); err != nil {
		return err
	}
	q := n.Args[0].Type
	if b := attentionBlocks(n); b != nil {
		if !b.Type.Shape.Equal(ir.Shape{ir.Batch, ir.Seq}) {
			return fmt.Errorf("blocks must be [batch, seq] i1 (the tokens compared with an id, e.g. tokens == image_token_id), got %s", b.Type)
		}
	}
	if a.KvLayer != nil {
		if a.IndexTopk != nil {
			return fmt.Errorf("index_topk selects among this call's own cached keys: it cannot be given with kv_layer")
		}
		return inferSharedAttention(n, a, q)
	}
	if len(n.Args)-attentionBlockArgs(n)-attentionIndexArgs(a) != 3 {
		return fmt.Errorf("needs k and v (or kv_layer, to read an earlier layer's KV cache instead)")
	}
	k, v := n.Args[1].Type, n.Args[2].Type
	for _, t := range []ir.Type{q, k, v} {
		if len(t.Shape) != 4 || t.Shape[0] != ir.Batch || t.Shape[1] != ir.Seq {
			return fmt.Errorf("q, k, v must be [batch, seq, heads, head_dim], got %s", t)
		}
	}
	if !k.Shape[:3].Equal(v.Shape[:3]) {
		return fmt.Errorf("k %s and v %s differ in their heads", k, v)
	}
	h, kvh := q.Shape[2], k.Shape[2]
	if q.Shape[3] != k.Shape[3] || h%kvh != 0 {
		return fmt.Errorf("q %s does not fit k %s (heads must be a multiple of kv_heads, head_dim equal)", q, k)
	}
	if err := attentionCommon(n, a, h); err != nil {
		return err
	}
	// The KV cache: per slot and position, the keys and values as attention sees them.
	n.States = []ir.State{
		{Kind: ir.KVCache, Name: "keys", Shape: []int64{int64(kvh), int64(k.Shape[3])}},
		{Kind: ir.KVCache, Name: "values", Shape: []int64{int64(kvh), int64(v.Shape[3])}},
	}
	if err := inferAttentionIndex(n, a); err != nil {
		return err
	}
	n.Type = ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq, h * v.Shape[3]}, DType: ir.F32}
	return nil
}

// inferSharedAttention is the shape rule of a call with kv_layer: q
// against the KV cache its source node (n.StateFrom) declares.
func inferSharedAttention(n *ir.Node, a *AttentionAttrs, q ir.Type) error {
	if len(n.Args)-attentionBlockArgs(n) != 1 {
		return fmt.Errorf("kv_layer %d reads that layer's keys and values: give no k and v", *a.KvLayer)
	}
	src := n.StateFrom
	if src == nil || len(src.States) < 2 || src.States[0].Kind != ir.KVCache {
		return fmt.Errorf("kv_layer %d: no attention node with a KV cache is linked (the IR builder links it)", *a.KvLayer)
	}
	if len(q.Shape) != 4 || q.Shape[0] != ir.Batch || q.Shape[1] != ir.Seq {
		return fmt.Errorf("q must be [batch, seq, heads, head_dim], got %s", q)
	}
	kvh, d, dv := ir.Dim(src.States[0].Shape[0]), ir.Dim(src.States[0].Shape[1]), ir.Dim(src.States[1].Shape[1])
	h := q.Shape[2]
	if q.Shape[3] != d || h%kvh != 0 {
		return fmt.Errorf("q %s does not fit layer %d's cached keys [%d kv_heads, %d] (heads must be a multiple of kv_heads, head_dim equal)", q, *a.KvLayer, kvh, d)
	}
	if err := attentionCommon(n, a, h); err != nil {
		return err
	}
	n.States = nil
	n.Type = ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq, h * dv}, DType: ir.F32}
	return nil
}

// attentionBlocks is a call's blocks argument (the one i1 tensor among
// its arguments: q, k and v and the indexer's tensors are f32), or nil.
func attentionBlocks(n *ir.Node) *ir.Node {
	for _, arg := range n.Args[1:] {
		if arg.Type.DType == ir.Bool {
			return arg
		}
	}
	return nil
}

// attentionIndexArgs is the number of the lightning indexer's tensors
// (index_q, index_k, index_w: the call's last arguments) a call gives: 3
// with index_topk, else 0.
func attentionIndexArgs(a *AttentionAttrs) int {
	if a.IndexTopk != nil {
		return 3
	}
	return 0
}

// inferAttentionIndex checks the lightning indexer's tensors of a call
// with index_topk (DeepSeek sparse attention: DeepseekV32Indexer) and
// declares its cached keys, a third per-position KVCache state
// "index_keys" [1, index_dim] beside the keys and values: the indexer
// scores every key the query may see, so its keys are kept for every
// cached position as the attention keys are.
func inferAttentionIndex(n *ir.Node, a *AttentionAttrs) error {
	if a.IndexTopk == nil {
		return nil
	}
	if *a.IndexTopk < 1 {
		return fmt.Errorf("index_topk must be at least 1 (the keys each query keeps), got %d", *a.IndexTopk)
	}
	m := len(n.Args)
	iq, ik, iw := n.Args[m-3].Type, n.Args[m-2].Type, n.Args[m-1].Type
	if len(iq.Shape) != 4 || iq.Shape[0] != ir.Batch || iq.Shape[1] != ir.Seq {
		return fmt.Errorf("index_q must be [batch, seq, index_heads, index_dim], got %s", iq)
	}
	if !ik.Shape.Equal(ir.Shape{ir.Batch, ir.Seq, 1, iq.Shape[3]}) {
		return fmt.Errorf("index_k must be [batch, seq, 1, %d] (one key head of index_q's width), got %s", iq.Shape[3], ik)
	}
	if !iw.Shape.Equal(ir.Shape{ir.Batch, ir.Seq, iq.Shape[2]}) {
		return fmt.Errorf("index_w must be [batch, seq, %d] (one weight per index_q head), got %s", iq.Shape[2], iw)
	}
	n.States = append(n.States, ir.State{Kind: ir.KVCache, Name: "index_keys", Shape: []int64{1, int64(iq.Shape[3])}})
	return nil
}

func attentionBlockArgs(n *ir.Node) int {
	if attentionBlocks(n) != nil {
		return 1
	}
	return 0
}

// attentionCommon checks the window and the chunk and reads the sinks,
// for h query heads.
func attentionCommon(n *ir.Node, a *AttentionAttrs, h ir.Dim) error {
	if w := a.Window; w != nil && *w <= 0 {
		return fmt.Errorf("window must be a positive int (tokens) or none, got %d", *w)
	}
	if c := a.Chunk; c != nil && *c <= 0 {
		return fmt.Errorf("chunk must be a positive int (tokens) or none, got %d", *c)
	}
	if a.Alibi != nil && int64(len(a.Alibi)) != int64(h) {
		return fmt.Errorf("alibi must hold one slope per query head (%d), got %d", h, len(a.Alibi))
	}
	n.Weights = nil
	if n.Module != "" {
		n.Weights = []ir.Weight{{Name: n.Module, Shape: []int64{int64(h)}}}
	}
	return nil
}

func lowerAttention(f *fn, n *ir.Node, a *AttentionAttrs) codegen.Value {
	q := f.arg(n, 0)
	B, S, H, D := q.Type.Shape[0], q.Type.Shape[1], q.Type.Shape[2], q.Type.Shape[3]
	scale := 1 / math.Sqrt(float64(D))
	if a.Scale != nil {
		scale = *a.Scale
	}

	var keys, values codegen.Value
	if n.StateFrom != nil { // kv_layer: the source layer's cache, this call's positions already written
		keys, values = f.readCache(n.StateFrom)
	} else {
		if a.IndexTopk != nil {
			m := len(n.Args)
			f.writeCache(n, f.arg(n, 1), f.arg(n, 2), f.arg(n, m-2))
		} else {
			f.writeCache(n, f.arg(n, 1), f.arg(n, 2))
		}
		keys, values = f.readCache(n) // [B,1,L,KVH,D] and [B,1,L,KVH,DV], L dynamic: the positions visible to this call
	}
	KVH, DV := keys.Type.Shape[3], values.Type.Shape[4]
	G := H / KVH

	// q [B,S,H,D] → [B,KVH,G·S,D]: query head h = kv·G + g (HF repeat_kv),
	// or with kv_repeat tile h = g·KVH + kv (JetMoE's k.repeat).
	tile := a.KvRepeat == AttentionKvRepeatTile
	var qg codegen.Value
	if tile {
		qg = f.transpose(f.reshape(q, B, S, G, KVH, D), 0, 3, 2, 1, 4)
	} else {
		qg = f.transpose(f.reshape(q, B, S, KVH, G, D), 0, 2, 3, 1, 4)
	}
	qg = f.reshape(qg, B, KVH, G*S, D)
	if a.Alibi != nil {
		// ALiBi, folded into the score product: each query row gains the
		// column slope_h / scale (query head h = kv·G + g, tile g·KVH + kv)
		// and each cached key the column j, its position, so that the
		// product times scale is q·k·scale + slope_h·j. (Added to the scores
		// as a [.., L] term instead, IREE 3.13 fuses it into the KV-cache
		// write's dispatch, which its CPU backend fails to compile.)
		sl := make([]float64, len(a.Alibi))
		for i, v := range a.Alibi {
			sl[i] = v / scale
		}
		slopes := f.reshape(f.constF32s(sl), KVH, G)
		if tile {
			slopes = f.transpose(f.reshape(f.constF32s(sl), G, KVH), 1, 0)
		}
		col := f.reshape(f.broadcastDims(slopes, codegen.T("f32", B, KVH, G, S), 1, 2), B, KVH, G*S, 1)
		qg = f.concat(3, qg, col)
		kt := keys.Type.WithElem("i32")
		kt.Shape = append(append([]int64{}, kt.Shape[:4]...), 1)
		kpos := f.convert(f.broadcastDims(f.iota(codegen.T("i32", kt.Shape[2]), 0), kt, 2), "f32") // [B,1,L,KVH,1]
		keys = f.concat(4, keys, kpos)
	}
	scores := f.dot(qg, keys, []int64{0, 1}, []int64{0, 3}, []int64{3}, []int64{4}) // [B,KVH,G·S,1,L]
	scores = f.mul(scores, f.splat(scale, scores.Type))
	if a.Softcap != nil {
		scores = f.softcap(scores, *a.Softcap)
	}

	// Causal mask over absolute positions: key j is visible to a query at p
	// iff j <= p, and with a sliding window W also p - j < W (HF
	// sliding_window_overlay: kv_idx > q_idx - W). Row g·S+s of the scores
	// is query position positions[b, s].
	it := scores.Type.WithElem("i32")
	L := scores.Type.Shape[4]
	keyPos := f.broadcastDims(f.iota(codegen.T("i32", L), 0), it, 4)
	rowPos := f.reshape(f.broadcastDims(f.positions, codegen.T("i32", B, G, S), 0, 2), B, G*S)
	rowLim := rowPos
	if blocks := attentionBlocks(n); blocks != nil && S > 1 && !f.allRows {
		key := fmt.Sprintf("blockEnds:%d", blocks.ID) // once per function: every layer's call reads the same mask
		ends, ok := f.memo[key]
		if !ok {
			ends = f.blockEnds(f.val(blocks))
			f.memo[key] = ends
		}
		rowLim = f.reshape(f.broadcastDims(ends, codegen.T("i32", B, G, S), 0, 2), B, G*S)
	}
	visible := f.compare("LE", keyPos, f.broadcastDims(f.barrier(rowLim), it, 0, 2))
	if a.Window != nil {
		w := *a.Window
		// The window's lower bound is computed on the static rows and kept
		// apart by an optimization barrier: IREE 3.13 otherwise fuses it into
		// the first layer's softmax dispatch as a second result, which its
		// CPU backend fails to compile on a dynamic length.
		low := f.barrier(f.sub(rowPos, f.broadcast(f.constI32(w), rowPos.Type)))
		inWindow := f.compare("GT", keyPos, f.broadcastDims(low, it, 0, 2))
		visible = f.Op("stablehlo.and", visible.Type, nil, visible, inWindow)
	}
	if a.Chunk != nil {
		// Chunked attention: key j is visible to a query at p iff also
		// j >= p - p mod C, the first position of p's chunk (positions are
		// non-negative, so stablehlo.remainder is Python's %). Kept apart
		// by a barrier as the window's bound is.
		c := f.broadcast(f.constI32(*a.Chunk), rowPos.Type)
		first := f.barrier(f.sub(rowPos, f.binary("stablehlo.remainder", rowPos, c)))
		inChunk := f.compare("GE", keyPos, f.broadcastDims(first, it, 0, 2))
		visible = f.Op("stablehlo.and", visible.Type, nil, visible, inChunk)
	}
	if a.IndexTopk != nil {
		// DeepSeek sparse attention: only the keys the indexer selects stay
		// visible. Row g·S+s of the scores is query s (either kv_repeat):
		// the [B,1,S,1,L] choice is repeated G times along the rows and
		// broadcast to the KVH heads.
		sel := f.indexSelect(n, a) // [B,1,S,1,L]
		if G > 1 {
			parts := make([]codegen.Value, G)
			for g := range parts {
				parts[g] = sel
			}
			sel = f.concat(2, parts...)
		}
		if KVH > 1 {
			sel = f.broadcastDims(sel, visible.Type, 0, 1, 2, 3, 4)
		}
		visible = f.Op("stablehlo.and", visible.Type, nil, visible, sel)
	}
	scores = f.selectOp(visible, scores, f.splat(maskValue, scores.Type))

	var probs codegen.Value
	if n.Module == "" {
		probs = f.softmaxLast(scores)
	} else {
		// The sink of query head h = kv·G + g (tile: g·KVH + kv), as a
		// [B,KVH,G·S,1] column.
		sink := f.reshape(f.weight(n.Weights[0].Name), KVH, G)
		if tile {
			sink = f.transpose(f.reshape(f.weight(n.Weights[0].Name), G, KVH), 1, 0)
		}
		sink = f.reshape(f.broadcastDims(sink, codegen.T("f32", B, KVH, G, S), 1, 2), B, KVH, G*S, 1)
		probs = f.softmaxSink(scores, sink)
	}
	out := f.dot(probs, values, []int64{0, 1}, []int64{0, 3}, []int64{3, 4}, []int64{1, 2}) // [B,KVH,G·S,DV]
	if tile {
		out = f.transpose(f.reshape(out, B, KVH, G, S, DV), 0, 3, 2, 1, 4) // [B,S,G,KVH,DV]
		return f.reshape(out, B, S, H*DV)
	}
	out = f.transpose(f.reshape(out, B, KVH, G, S, DV), 0, 3, 1, 2, 4) // [B,S,KVH,G,DV]
	return f.reshape(out, B, S, H*DV)
}

// indexSelect is the lightning indexer's choice for a call with
// index_topk (DeepseekV32Indexer): [B, 1, S, 1, L] i1, true at the index_topk
// keys of highest index score among those query s may see (causal: the
// indexer's scores are masked by the causal mask before its topk),
//
//	score[s, t] = Σ_h index_w[s, h] · relu(index_scale · index_q[s, h] · index_k[t]),
//
// index_k read from the node's index_keys cache entry, which writeCache
// has just filled at this call's positions.
func (f *fn) indexSelect(n *ir.Node, a *AttentionAttrs) codegen.Value {
	m := len(n.Args)
	iq, iw := f.arg(n, m-3), f.arg(n, m-1) // [B,S,IH,ID], [B,S,IH]
	ik := f.readCacheEntry(n, 2)           // [B,1,L,1,ID]
	B, S, IH, ID := iq.Type.Shape[0], iq.Type.Shape[1], iq.Type.Shape[2], iq.Type.Shape[3]
	scale := 1 / math.Sqrt(float64(ID))
	if a.IndexScale != nil {
		scale = *a.IndexScale
	}
	iq = f.reshape(iq, B, 1, S, IH, ID)
	dots := f.dot(iq, ik, []int64{0, 1}, []int64{0, 3}, []int64{4}, []int64{4}) // [B,1,S,IH,1,L]
	dots = f.relu(f.mul(dots, f.splat(scale, dots.Type)))
	dots = f.mul(dots, f.broadcastDims(iw, dots.Type, 0, 2, 3))
	score := f.Reduce(dots, f.constF32(0), "stablehlo.add", 3) // [B,1,S,1,L]
	it := score.Type.WithElem("i32")
	keyPos := f.iota(it, 4)
	causal := f.compare("LE", keyPos, f.broadcastDims(f.barrier(f.positions), it, 0, 2))
	score = f.selectOp(causal, score, f.splat(maskValue, score.Type))
	return f.topkMask(score, *a.IndexTopk)
}

// blockEnds gives, for a chunk's blocks mask m [B, S] i1 (true at the
// tokens of blocks: each run of consecutive true tokens is one block), the
// last position each query may see: for a token of a block, the position
// of its block's last token (get_block_sequence_ids_for_mask's group and
// blockwise_overlay: a block's tokens see each other, later ones too);
// for any other token, its own position (causal). [B, S] i32. A block
// runs to its last token within the chunk: the runtime keeps each block in
// one prefill chunk (rt: Model.prefillChunk). Computed as a min over the
// chunk's [S, S] pairs: the end of s's run is the first t >= s whose token
// is a block's last (m[t] and not m[t+1]).
func (f *fn) blockEnds(m codegen.Value) codegen.Value {
	B, S := m.Type.Shape[0], m.Type.Shape[1]
	mi := f.convert(m, "i32")
	next := f.concat(1, f.sliceDim(mi, 1, 1, S), f.broadcast(f.constI32(0), codegen.T("i32", B, 1)))
	last := f.compare("GT", mi, next)    // m[t] and not m[t+1]
	pos := f.convert(f.positions, "f32") // exact below 2^24, as far is
	const far = 1 << 24
	t3 := codegen.T("i32", B, S, S)
	after := f.compare("GE", f.iota(t3, 2), f.iota(t3, 1)) // [b, s, t]: t >= s
	cand := f.Op("stablehlo.and", after.Type, nil, after, f.broadcastDims(last, t3.WithElem("i1"), 0, 2))
	ends := f.selectOp(cand, f.broadcastDims(pos, t3.WithElem("f32"), 0, 2), f.splat(far, t3.WithElem("f32")))
	end := f.convert(f.Reduce(ends, f.constF32(far), "stablehlo.minimum", 2), "i32") // [B, S]
	return f.selectOp(m, end, f.positions)
}

// softmaxLast is softmax over the innermost dimension in f32:
// exp(x - max) / sum(exp(x - max)), as torch.softmax.
func (f *fn) softmaxLast(x codegen.Value) codegen.Value {
	m := f.reduceLast(x, "stablehlo.maximum", maskValue)
	e := f.unary("stablehlo.exponential", f.sub(x, f.broadcastLeading(m, x.Type)))
	s := f.reduceLast(e, "stablehlo.add", 0)
	return f.div(e, f.broadcastLeading(s, x.Type))
}

// softmaxSink is softmax over the innermost dimension of x [..., L] joined
// by one more logit per row, sink [...] (x's shape without L), whose
// probability is dropped: HF GptOss eager_attention_forward's
// softmax(cat([x, sink]) - max)[..., :-1], in f32.
func (f *fn) softmaxSink(x, sink codegen.Value) codegen.Value {
	m := f.Op("stablehlo.maximum", sink.Type, nil, f.reduceLast(x, "stablehlo.maximum", maskValue), sink)
	e := f.unary("stablehlo.exponential", f.sub(x, f.broadcastLeading(m, x.Type)))
	s := f.add(f.reduceLast(e, "stablehlo.add", 0), f.unary("stablehlo.exponential", f.sub(sink, m)))
	return f.div(e, f.broadcastLeading(s, x.Type))
}
