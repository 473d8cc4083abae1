package ggufmap

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/formats/gguf"
)

// transform is what loading does to one tensor: the shared load transforms
// (dsl.GGUFTransforms) a gguf section applies to it, resolved.
type transform struct {
	permuteHeads int // >0: undo llama.cpp's Q/K row permutation with this many heads (rows move whole)
	regroupParts int // >0, with regroupHeads: the file's rows [parts, heads, r] are HF's [heads, parts, r] (rows move whole)
	regroupHeads int
	minusOne     bool    // the file stores 1+w: subtract 1 (values change: the tensor is packed as f32)
	minus        float32 // with hasMinus: the file stores w+minus: subtract it, in float32 (packed as f32)
	hasMinus     bool
	transpose    bool    // the file stores the last two dimensions swapped: swap them back (packed as f32)
	part, parts  int     // parts > 1: this tensor is part `part` of a tensor several GGUF tensors make (packed as f32):
	chunk        bool    // its rows, chunk part of parts along dimension -2 (torch.cat of the parts, which may differ in rows); else HF[..., part::parts] (interleave)
	cols         bool    // with chunk: joined along the last dimension instead (chunk_cols: torch.cat(dim=-1), the parts may differ in columns)
	stack        bool    // with parts: slice part of a new dimension axis of the HF tensor (torch.stack(dim=axis) of equal-shape parts)
	axis         int     // with stack: the new dimension's place in the HF shape, 0 through the parts' rank
	flatten      bool    // the HF tensor is the result with its leading dimensions merged: [a, b, c] → [a·b, c]
	reshape      []int64 // non-nil: the HF tensor is the file's values, in the same order, in this shape (one dimension may be -1)
	logNeg       bool    // the file stores A = -exp(A_log): A_log = log(-A) (values change: packed as f32)
	channelsLast bool    // the file's [O, C, kh, kw] kernel is HF's [O, kh·kw·C] (values move: packed as f32)
	span         []int64 // non-nil: regroup_span's axis, offset, parts, heads, sizes... (applied last; packed as f32 unless whole blocks move: spanBlockMoves)
}

// kind names the grouping transform, for messages.
func (tr transform) kind() string {
	if tr.stack {
		return "stack"
	}
	if tr.cols {
		return "chunk_cols"
	}
	if tr.chunk {
		return "chunk"
	}
	return "interleave"
}

// movesRows reports whether whole rows move (unpermute_qk, regroup): exact
// for any block format, so such a tensor stays packed.
func (tr transform) movesRows() bool { return tr.permuteHeads != 0 || tr.regroupParts != 0 }

// transforms implements each transform of dsl.GGUFTransforms once, for
// every family that names it, by setting its part of a tensor's transform.
var transforms = map[string]func(tr *transform, args []int64, _ []float64){
	// unpermute_qk(heads): transformers' _reverse_permute_weights (see reversePermute).
	"unpermute_qk": func(tr *transform, args []int64, _ []float64) { tr.permuteHeads = int(args[0]) },
	// regroup(parts, heads): GPTNeoXModel's query_key_value, per-head [q | k | v] rows regrouped as [q | k | v] (see regroupRows).
	"regroup": func(tr *transform, args []int64, _ []float64) {
		tr.regroupParts, tr.regroupHeads = int(args[0]), int(args[1])
	},
	// minus_one(): Gemma2TensorProcessor's "norm.weight" - 1.
	"minus_one": func(tr *transform, _ []int64, _ []float64) { tr.minusOne = true },
	// minus(c): Plamo2Model's norms, stored as w + 1, w + 1/5, w + 1/5^1.5.
	"minus": func(tr *transform, _ []int64, floats []float64) { tr.minus, tr.hasMinus = float32(floats[0]), true },
	// transpose(): GptOssModel's experts, stored [E, out, in] for HF's [E, in, out].
	"transpose": func(tr *transform, _ []int64, _ []float64) { tr.transpose = true },
	// interleave(part, parts): GptOssModel's gate_up_proj split into [..., ::2] and [..., 1::2].
	"interleave": func(tr *transform, args []int64, _ []float64) { tr.part, tr.parts = int(args[0]), int(args[1]) },
	// chunk(part, parts): GraniteMoeModel's input_linear [E, 2I, H] split into its gate rows and up rows.
	"chunk": func(tr *transform, args []int64, _ []float64) {
		tr.part, tr.parts, tr.chunk = int(args[0]), int(args[1]), true
	},
	// chunk_cols(part, parts): Llama4Model's gate_up_proj [E, H, 2I] split into gate and up, each transposed to [E, I, H].
	"chunk_cols": func(tr *transform, args []int64, _ []float64) {
		tr.part, tr.parts, tr.chunk, tr.cols = int(args[0]), int(args[1]), true, true
	},
	// stack(part, parts, axis): Qwen2VLVisionModel's Conv3d patch kernel [O, C, 2, p, p] split into two [O, C, p, p] kernels.
	"stack": func(tr *transform, args []int64, _ []float64) {
		tr.part, tr.parts, tr.stack, tr.axis = int(args[0]), int(args[1]), true, int(args[2])
	},
	// flatten(): DeepseekV2Model's per-head attn_k_b / attn_v_b, which make kv_b_proj [heads·(nope+v), kv_lora].
	"flatten": func(tr *transform, _ []int64, _ []float64) { tr.flatten = true },
	// reshape(dims...): MambaModel's squeezed conv1d [C, K] (HF [C, 1, K]), Mamba2Model's [H, 1] A and D, its per-group norm.
	"reshape": func(tr *transform, args []int64, _ []float64) { tr.reshape = append([]int64{}, args...) },
	// channels_last(): LFM2VLModel's SigLIP2 patch_embedding [O, p·p·3], stored as a Conv2d kernel [O, 3, p, p].
	"channels_last": func(tr *transform, _ []int64, _ []float64) { tr.channelsLast = true },
	// log_neg(): MambaModel's ssm_a, -exp(A_log).
	"log_neg": func(tr *transform, _ []int64, _ []float64) { tr.logNeg = true },
	// regroup_span(axis, offset, parts, heads, sizes...): Qwen3NextModel's in_proj_qkvz, Qwen3.5's tiled value heads (see spanMoves).
	"regroup_span": func(tr *transform, args []int64, _ []float64) { tr.span = append([]int64{}, args...) },
}

// resolveTransforms applies the transform calls a tensor's row gives.
func resolveTransforms(name string, calls []dsl.GGUFTransformCall) (transform, error) {
	var tr transform
	seen := map[string]bool{}
	for _, c := range calls {
		apply, ok := transforms[c.Name]
		if !ok {
			return tr, fmt.Errorf("%s:%d:%d: transform %s has no implementation in driver/ggufmap", c.Pos.Filename, c.Pos.Line, c.Pos.Column, c.Name)
		}
		if seen[c.Name] {
			return tr, fmt.Errorf("%s:%d:%d: transform %s applies to tensor %q twice (two patterns match it)", c.Pos.Filename, c.Pos.Line, c.Pos.Column, c.Name, name)
		}
		seen[c.Name] = true
		if c.Unresolved != "" {
			return tr, fmt.Errorf("%s:%d:%d: transform %s on tensor %q: %s", c.Pos.Filename, c.Pos.Line, c.Pos.Column, c.Name, name, c.Unresolved)
		}
		apply(&tr, c.Args, c.Floats)
	}
	return tr, nil
}

// HFName returns the Hugging Face name the family's gguf section gives the
// GGUF tensor ggufName ("blk.3.attn_q.weight" →
// "model.layers.3.self_attn.q_proj.weight"). ok is false for a name the
// section does not map and for a tensor it skips (rope_freqs.weight).
func (m *Model) HFName(ggufName string) (hf string, ok bool) {
	t, ok := m.reading.Tensor(ggufName)
	if !ok || t.Skip {
		return "", false
	}
	return t.HF, true
}

// Minus returns the float32 c a minus_one (1) or minus(c) transform
// subtracts from Hugging Face tensor hf, and whether one does.
func (m *Model) Minus(hf string) (c float32, ok bool) {
	for _, p := range m.plan {
		switch {
		case p.hf != hf:
		case p.tr.minusOne:
			return 1, true
		case p.tr.hasMinus:
			return p.tr.minus, true
		}
	}
	return 0, false
}

// Source is dsl.GGUFReading.Source: the GGUF tensor (and split slice, or
// -1) the section reads Hugging Face tensor hf from.
func (m *Model) Source(hf string) (gguf string, slice int, ok bool) {
	return m.reading.Source(hf)
}

// Transforms returns the names of the load transforms (dsl.GGUFTransforms)
// applied to the GGUF tensor(s) that make the Hugging Face tensor hf,
// sorted, each once; nil for a tensor loaded as stored or not loaded.
// Two do not invert exactly in float32: minus_one ((1 + w) - 1 rounds)
// and log_neg (log(-(-exp(x))) rounds, and exp is not injective on
// float32).
func (m *Model) Transforms(hf string) []string {
	seen := map[string]bool{}
	for _, p := range m.plan {
		if p.hf != hf {
			continue
		}
		for _, q := range append([]planned{p}, p.group...) {
			for _, c := range m.calls[q.t.Name] {
				seen[c] = true
			}
		}
	}
	var out []string
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// makePlan resolves every tensor of the file: its HF name, shape and
// transform (skipped tensors left out). The GGUF tensors that interleave
// into one HF tensor become one plan entry holding them all (group).
func (m *Model) makePlan() error {
	m.calls = map[string][]string{}
	seen := map[string]string{}
	groups := map[string]int{} // HF name → plan index of an interleave group
	for _, whole := range m.Tensors {
		tm, ok := m.reading.Tensor(whole.Name)
		if !ok {
			return fmt.Errorf("gguf: %s: tensor %q has no Hugging Face name in family %s's gguf section: archc does not know this tensor", m.Path, whole.Name, m.Family)
		}
		if tm.Skip {
			continue
		}
		if err := m.CheckType(whole); err != nil {
			return err
		}
		parts, err := m.split(whole, tm)
		if err != nil {
			return err
		}
		for _, part := range parts {
			if err := m.planTensor(part.t, part.hf, tm, seen, groups); err != nil {
				return err
			}
		}
	}
	for _, v := range m.reading.Values { // tensors made from metadata
		if prev, dup := seen[v.HF]; dup {
			return fmt.Errorf("gguf: %s: %s:%d:%d makes %q from metadata, but tensor %q maps to it too: the file is inconsistent", m.Path, v.Pos.Filename, v.Pos.Line, v.Pos.Column, v.HF, prev)
		}
		seen[v.HF] = "(metadata)"
		m.plan = append(m.plan, planned{hf: v.HF, shape: v.Shape, vals: v.Data})
	}
	return m.finishPlan()
}

// slicePart is one Hugging Face tensor a GGUF tensor holds: the whole
// tensor, or for a split row one slice of its first dimension (a tensor
// of the slice's bytes, named "NAME[k]").
type slicePart struct {
	t  gguf.Tensor
	hf string
}

// split returns the tensors GGUF tensor t holds as its row tm maps it: t,
// or for a split row each named slice of its first (row-major) dimension
// as a tensor of its own (dims, offset and bytes: whole blocks, so each
// keeps its format). Errors name the tensor and the row.
func (m *Model) split(t gguf.Tensor, tm dsl.GGUFTensorMap) ([]slicePart, error) {
	if tm.Split == nil {
		return []slicePart{{t, tm.HF}}, nil
	}
	n, shape := len(tm.Split), t.Shape()
	if shape[0] != int64(n) {
		return nil, fmt.Errorf("gguf: %s: tensor %q has shape %v, but %s:%d:%d splits its first dimension into %d tensors (%s): the file does not match its family's gguf section", m.Path, t.Name, shape, tm.Pos.Filename, tm.Pos.Line, tm.Pos.Column, n, strings.Join(splitNames(tm.Split), ", "))
	}
	each := t.Elements() / int64(n)
	if be, _, ok := t.Type.BlockSize(); !ok || each%be != 0 {
		return nil, fmt.Errorf("gguf: %s: tensor %q (%v, shape %v) cannot be split into %d slices: a slice of %d values is not whole blocks of its type", m.Path, t.Name, t.Type, shape, n, each)
	}
	dims := slices.Clone(t.Dims[:len(t.Dims)-1])
	if len(dims) == 0 { // a vector's slices are its elements
		dims = []int64{1}
	}
	var out []slicePart
	for k, hf := range tm.Split {
		if hf == "" {
			continue
		}
		sub := t
		sub.Name = fmt.Sprintf("%s[%d]", t.Name, k)
		sub.Dims = dims
		sub.Size = t.Size / int64(n)
		sub.Offset = t.Offset + int64(k)*sub.Size
		out = append(out, slicePart{sub, hf})
	}
	return out, nil
}

// splitNames are a split row's Hugging Face names for a message, "none"
// for a slice not read.
func splitNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = cmp.Or(n, "none")
	}
	return out
}

// planTensor adds GGUF tensor t (or a slice), which row tm maps to hf, to
// the plan, or to the group that makes hf (seen, groups: the HF names so far).
func (m *Model) planTensor(t gguf.Tensor, hf string, tm dsl.GGUFTensorMap, seen map[string]string, groups map[string]int) error {
	tr, err := resolveTransforms(t.Name, tm.Transforms)
	if err != nil {
		return err
	}
	for _, c := range tm.Transforms {
		m.calls[t.Name] = append(m.calls[t.Name], c.Name)
	}
	p := planned{t: t, hf: hf, shape: t.Shape(), tr: tr}
	if tr.chunk && len(p.shape) == 1 { // a vector (the bias of a split projection): chunk joins along its one dimension
		p.tr.cols = true
	}
	if err := m.checkTransform(p); err != nil {
		return err
	}
	if tr.transpose {
		n := len(p.shape)
		p.shape[n-2], p.shape[n-1] = p.shape[n-1], p.shape[n-2]
	}
	if tr.channelsLast { // [O, C, kh, kw] → [O, kh·kw·C]
		p.shape = []int64{p.shape[0], p.shape[1] * p.shape[2] * p.shape[3]}
	}
	if tr.reshape != nil {
		if p.shape, err = reshaped(p.shape, tr.reshape); err != nil {
			return fmt.Errorf("gguf: %s: tensor %q: %v: the file does not match its family's gguf section", m.Path, t.Name, err)
		}
	}
	if gi, ok := groups[hf]; ok && tr.parts > 1 {
		g := &m.plan[gi]
		if err := g.join(p); err != nil {
			return fmt.Errorf("gguf: %s: %v: the file does not match its family's gguf section", m.Path, err)
		}
		return nil
	}
	if prev, dup := seen[hf]; dup {
		return fmt.Errorf("gguf: %s: tensors %q and %q both map to %q: the file is inconsistent", m.Path, prev, t.Name, hf)
	}
	seen[hf] = t.Name
	if tr.parts > 1 {
		p.group = make([]planned, tr.parts)
		p.group[tr.part] = p
		p.shape = append([]int64(nil), p.shape...)
		switch {
		case tr.stack: // a new dimension of parts at axis
			p.shape = slices.Insert(p.shape, tr.axis, int64(tr.parts))
		case !tr.chunk: // interleave: equal parts; chunk: each part's rows added as it joins
			p.shape[len(p.shape)-1] *= int64(tr.parts)
		}
		groups[hf] = len(m.plan)
	}
	m.plan = append(m.plan, p)
	return nil
}

// finishPlan checks and completes the groups (flatten, regroup_span).
func (m *Model) finishPlan() error {
	for i := range m.plan {
		p := &m.plan[i]
		for k, q := range p.group {
			if q.hf == "" {
				return fmt.Errorf("gguf: %s: %q is made of %d %s tensors, but the file has no part %d (only %q)", m.Path, p.hf, len(p.group), map[string]string{"interleave": "interleaved", "chunk": "chunked", "chunk_cols": "chunked", "stack": "stacked"}[p.tr.kind()], k, p.t.Name)
			}
		}
		if p.tr.flatten { // [a, b, ..., c] → [a·b·..., c]
			rows := int64(1)
			for _, d := range p.shape[:len(p.shape)-1] {
				rows *= d
			}
			p.shape = []int64{rows, p.shape[len(p.shape)-1]}
		}
		if p.tr.span != nil {
			if _, err := spanMoves(p.tr.span, p.shape); err != nil {
				return fmt.Errorf("gguf: %s: %q: %v: the file does not match its family's gguf section", m.Path, p.hf, err)
			}
		}
	}
	return nil
}

// checkTransform checks that a tensor's transforms fit its shape.
func (m *Model) checkTransform(p planned) error {
	tr := p.tr
	switch {
	case tr.permuteHeads != 0 && (tr.permuteHeads < 0 || int(p.shape[0])%(2*tr.permuteHeads) != 0):
		return fmt.Errorf("gguf: %s: tensor %q has %d rows, not divisible into %d heads of row pairs: the file does not match its config", m.Path, p.t.Name, p.shape[0], tr.permuteHeads)
	case tr.permuteHeads != 0 && (tr.transpose || (tr.parts > 1 && (!tr.chunk || tr.cols)) || tr.regroupParts != 0):
		return fmt.Errorf("gguf: %s: tensor %q: unpermute_qk does not combine with transpose, interleave, chunk_cols or regroup", m.Path, p.t.Name)
	case tr.regroupParts != 0 && (tr.regroupParts < 1 || tr.regroupHeads < 1 || int(p.shape[0])%(tr.regroupParts*tr.regroupHeads) != 0):
		return fmt.Errorf("gguf: %s: tensor %q has %d rows, not divisible into %d parts of %d heads: the file does not match its config", m.Path, p.t.Name, p.shape[0], tr.regroupParts, tr.regroupHeads)
	case tr.regroupParts != 0 && (tr.transpose || tr.parts > 1):
		return fmt.Errorf("gguf: %s: tensor %q: regroup does not combine with transpose or interleave", m.Path, p.t.Name)
	case tr.transpose && len(p.shape) < 2:
		return fmt.Errorf("gguf: %s: tensor %q has %d dimension(s): transpose needs two", m.Path, p.t.Name, len(p.shape))
	case tr.parts != 0 && (tr.parts < 2 || tr.part < 0 || tr.part >= tr.parts):
		return fmt.Errorf("gguf: %s: tensor %q: %s(%d, %d) needs 0 <= part < parts and parts >= 2", m.Path, p.t.Name, tr.kind(), tr.part, tr.parts)
	case tr.stack && (tr.axis < 0 || tr.axis > len(p.shape) || tr.transpose):
		return fmt.Errorf("gguf: %s: tensor %q has %d dimension(s): stack(%d, %d, %d) needs 0 <= axis <= %d, without transpose", m.Path, p.t.Name, len(p.shape), tr.part, tr.parts, tr.axis, len(p.shape))
	case tr.chunk && len(p.shape) < 1:
		return fmt.Errorf("gguf: %s: tensor %q is a scalar: chunk joins rows (a vector's elements), it needs a dimension", m.Path, p.t.Name)
	case tr.channelsLast && (len(p.shape) != 4 || tr.permuteHeads != 0 || tr.regroupParts != 0 || tr.transpose || tr.parts > 1 || tr.flatten || tr.reshape != nil || tr.minusOne || tr.hasMinus || tr.logNeg):
		return fmt.Errorf("gguf: %s: tensor %q of shape %v: channels_last reads a 4-dimensional Conv2d kernel and combines with no other transform", m.Path, p.t.Name, p.shape)
	case tr.reshape != nil && (tr.permuteHeads != 0 || tr.regroupParts != 0 || tr.transpose || tr.parts > 1 || tr.flatten):
		return fmt.Errorf("gguf: %s: tensor %q: reshape does not combine with unpermute_qk, regroup, transpose, interleave, chunk or flatten", m.Path, p.t.Name)
	}
	return nil
}

// reshaped returns the shape dims (one may be -1, the rest of the
// elements) of a tensor of shape from; an error when the element counts
// differ.
func reshaped(from, dims []int64) ([]int64, error) {
	n := int64(1)
	for _, d := range from {
		n *= d
	}
	out, known, free := append([]int64{}, dims...), int64(1), -1
	for i, d := range dims {
		switch {
		case d == -1 && free < 0:
			free = i
		case d < 1:
			return nil, fmt.Errorf("reshape%v: a dimension is at least 1 (or one -1)", dims)
		default:
			known *= d
		}
	}
	if free >= 0 && known > 0 && n%known == 0 {
		out[free] = n / known
		known = n
	}
	if known != n {
		return nil, fmt.Errorf("%v holds %d values, not reshape%v", from, n, dims)
	}
	return out, nil
}

// join adds part q to the interleave group p.
func (p *planned) join(q planned) error {
	part := p.group[p.tr.part] // the part that made the group
	switch {
	case q.tr.kind() != p.tr.kind():
		return fmt.Errorf("tensor %q (%s) and tensor %q (%s) cannot make %q together", q.t.Name, q.tr.kind(), p.t.Name, p.tr.kind(), p.hf)
	case q.tr.parts != len(p.group):
		return fmt.Errorf("tensor %q is part of %d of %q, tensor %q part of %d", q.t.Name, q.tr.parts, p.hf, p.t.Name, len(p.group))
	case p.group[q.tr.part].hf != "":
		return fmt.Errorf("tensors %q and %q are both part %d of %q", p.group[q.tr.part].t.Name, q.t.Name, q.tr.part, p.hf)
	case q.tr.stack && (q.tr.axis != p.tr.axis || fmt.Sprint(q.shape) != fmt.Sprint(part.shape)):
		return fmt.Errorf("tensor %q %v and tensor %q %v stack into %q but differ in shape or axis", q.t.Name, q.shape, part.t.Name, part.shape, p.hf)
	case q.tr.chunk && !q.tr.cols && (len(q.shape) != len(part.shape) || fmt.Sprint(q.shape[:len(q.shape)-2]) != fmt.Sprint(part.shape[:len(part.shape)-2]) || q.shape[len(q.shape)-1] != part.shape[len(part.shape)-1]):
		return fmt.Errorf("tensor %q %v and tensor %q %v make %q but differ in more than their rows", q.t.Name, q.shape, part.t.Name, part.shape, p.hf)
	case q.tr.cols && (len(q.shape) != len(part.shape) || fmt.Sprint(q.shape[:len(q.shape)-1]) != fmt.Sprint(part.shape[:len(part.shape)-1])):
		return fmt.Errorf("tensor %q %v and tensor %q %v make %q but differ in more than their columns", q.t.Name, q.shape, part.t.Name, part.shape, p.hf)
	case !q.tr.chunk && fmt.Sprint(q.shape) != fmt.Sprint(part.shape):
		return fmt.Errorf("tensor %q %v and tensor %q %v make %q but differ in shape", q.t.Name, q.shape, part.t.Name, part.shape, p.hf)
	}
	p.group[q.tr.part] = q
	switch {
	case q.tr.cols:
		p.shape[len(p.shape)-1] += q.shape[len(q.shape)-1]
	case q.tr.chunk:
		p.shape[len(p.shape)-2] += q.shape[len(q.shape)-2]
	}
	return nil
}
