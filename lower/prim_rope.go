package lower

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
)

// rope(x [batch, seq, heads, head_dim], theta, scaling, rotary_dim,
// interleaved, max_position, original_max) → same shape: rotary position
// embedding as HF apply_rotary_pos_emb: out = x·cos + rotate(x)·sin, where
// the angle of frequency i at position p is p·inv_freq[i] computed in f32.
// Layouts: half-split (rotate_half, cos/sin cover [freqs, freqs]; Llama) or,
// with interleaved: true, GPT-J pairs (rotate_half of x[..., 0::2] and
// x[..., 1::2], cos/sin repeat_interleave'd; Cohere, Ernie 4.5). With
// rotary_dim r < head_dim (partial rotary: HF int(head_dim *
// partial_rotary_factor), a float is floored) only x[..., :r] rotates and
// x[..., r:] passes through (Phi-3, StableLM). inv_freq follows HF
// modeling_rope_utils for the scaling dict's rope_type (or legacy "type"):
// default, linear, llama3, yarn, proportional (Gemma 4: the whole head
// rotates with the first int(partial_rotary_factor·d/2) default
// frequencies, the rest 0), and the two that depend on the sequence
// length L a call sees (its last real position + 1, per sequence):
// longrope (short_factor while L <= original_max_position_embeddings, else
// long_factor; attention_factor on cos and sin) and dynamic (NTK: the base
// grows with L beyond max_position, computed in the graph in f32).
// max_position is the config's max_position_embeddings; original_max, when
// given, overrides the dict's original_max_position_embeddings (Phi-3's
// top-level field).
func inferRoPE(n *ir.Node, a *RoPEAttrs) error {
	x := n.Args[0].Type
	axes := 3            // the call's M-RoPE positions (t, h, w)
	if len(n.Args) > 1 { // explicit positions [batch, seq, axes] (an encoder's index table)
		p := n.Args[1].Type
		if len(x.Shape) != 4 || len(p.Shape) != 3 || p.DType != ir.I32 || !p.Shape[:2].Equal(x.Shape[:2]) {
			return fmt.Errorf("positions must be [batch, seq, axes] i32 over x's [batch, seq], got %s for x %s", p, x)
		}
		if a.MropeSection == nil {
			return fmt.Errorf("positions go with mrope_section: one section per axis")
		}
		axes = int(p.Shape[2])
	} else if len(x.Shape) != 4 || x.Shape[0] != ir.Batch || x.Shape[1] != ir.Seq {
		return fmt.Errorf("x must be [batch, seq, heads, head_dim], got %s", x)
	}
	spec, err := ropeParams(a, lastDim(x), axes)
	if err != nil {
		return err
	}
	a.Spec = spec
	n.Type = x
	return nil
}

// ropeTable is the frequency table of one RoPE instance.
type ropeTable struct {
	invFreq []float64 // [rotary_dim/2], each a float32 value
	scale   float64   // attention_scaling applied to cos and sin
	// A sequence whose length L exceeds threshold (> 0) uses long
	// (longrope) or the dynamic NTK table instead of invFreq.
	threshold int64
	long      []float64
	dynamic   *ntkParams
}

// ntkParams is HF _compute_dynamic_ntk_parameters at run time: base =
// theta·(factor·L/max_position - (factor - 1))^(dim/(dim-2)).
type ntkParams struct {
	theta, factor float64
	maxPos, dim   int64
}

// ropeSpec is a rope node's table and layout.
type ropeSpec struct {
	ropeTable
	rotaryDim   int64
	interleaved bool
	// axes, for multimodal RoPE (mrope_section), is the axis of the
	// token's (temporal, height, width) position that turns each
	// frequency, [rotary_dim/2]; nil for plain RoPE (one position).
	axes []int
}

// mropeAxes is the axis of each of d2 frequencies under mrope_section
// sections: in order (Qwen2-VL's apply_multimodal_rotary_pos_emb splits
// the frequencies into consecutive sections, section k turned by axis k)
// or interleaved (Qwen3-VL's apply_interleaved_mrope: frequency i takes
// axis 1 when i mod 3 = 1 and i < 3·sections[1], axis 2 when i mod 3 = 2
// and i < 3·sections[2], else axis 0). Errors: not three sections, a
// negative one, or a sum other than d2 (HF's split would fail or leave
// frequencies unturned).
func mropeAxes(sections []int64, interleaved bool, d2 int64, n int) ([]int, error) {
	sum := int64(0)
	for _, s := range sections {
		if s < 0 {
			return nil, fmt.Errorf("mrope_section %v: sections must be non-negative", sections)
		}
		sum += s
	}
	if n == 3 && (len(sections) != 3 || sum != d2) {
		return nil, fmt.Errorf("mrope_section %v must be three sections (temporal, height, width) summing to the rotary half-dimension %d (rotary_dim / 2), got a sum of %d: fix rope_scaling's (rope_parameters') mrope_section", sections, d2, sum)
	}
	if len(sections) != n || sum != d2 {
		return nil, fmt.Errorf("mrope_section %v must be %d sections (one per position axis) summing to the rotary half-dimension %d (rotary_dim / 2), got a sum of %d", sections, n, d2, sum)
	}
	if interleaved && n != 3 {
		return nil, fmt.Errorf("mrope_interleaved takes three sections")
	}
	axes := make([]int, d2)
	if interleaved {
		for i := range axes {
			switch {
			case i%3 == 1 && int64(i) < 3*sections[1]:
				axes[i] = 1
			case i%3 == 2 && int64(i) < 3*sections[2]:
				axes[i] = 2
			}
		}
		return axes, nil
	}
	i := 0
	for k, s := range sections {
		for range s {
			axes[i] = k
			i++
		}
	}
	return axes, nil
}

// ropeLimits are the config lengths some scalings read: the config's
// max_position_embeddings and an original_max_position_embeddings that
// overrides the scaling dict's (0: not given).
type ropeLimits struct{ maxPos, origMax int64 }

// ropeParams computes a rope node's table and layout from its attributes
// and head_dim dim.
func ropeParams(a *RoPEAttrs, dim int64, axes int) (ropeSpec, error) {
	theta := a.Theta
	if dim%2 != 0 || theta <= 0 {
		return ropeSpec{}, fmt.Errorf("needs an even head_dim and theta > 0, got %d and %g", dim, theta)
	}
	rd := dim
	if a.RotaryDim != nil {
		rd = *a.RotaryDim
	}
	if rd%2 != 0 || rd < 2 || rd > dim {
		return ropeSpec{}, fmt.Errorf("rotary_dim must be even and in [2, head_dim=%d], got %d", dim, rd)
	}
	if kind, _ := a.Scaling["rope_type"].(string); kind == "proportional" && rd != dim {
		return ropeSpec{}, fmt.Errorf("rope_type \"proportional\" rotates the whole head (its partial_rotary_factor picks the frequencies that turn): rotary_dim must be head_dim=%d, got %d", dim, rd)
	}
	var lim ropeLimits
	if a.MaxPosition != nil {
		lim.maxPos = *a.MaxPosition
	}
	if a.OriginalMax != nil {
		lim.origMax = *a.OriginalMax
	}
	t, err := ropeFrequencies(theta, rd, a.Scaling, lim)
	if err != nil {
		return ropeSpec{}, err
	}
	spec := ropeSpec{ropeTable: t, rotaryDim: rd, interleaved: a.Interleaved}
	if a.MropeSection == nil {
		if a.MropeInterleaved || a.MropeRestart {
			return ropeSpec{}, fmt.Errorf("mrope_interleaved and mrope_restart need mrope_section")
		}
		return spec, nil
	}
	if t.threshold > 0 {
		return ropeSpec{}, fmt.Errorf("mrope_section with a length-dependent scaling (longrope, dynamic) is not supported")
	}
	if spec.axes, err = mropeAxes(a.MropeSection, a.MropeInterleaved, rd/2, axes); err != nil {
		return ropeSpec{}, err
	}
	if a.MropeStrided { // section k takes the ladder's frequencies k, k + n, k + 2n, ...
		n := int64(len(a.MropeSection))
		if a.MropeInterleaved || a.MropeRestart {
			return ropeSpec{}, fmt.Errorf("mrope_strided takes neither mrope_interleaved nor mrope_restart")
		}
		ladder, i := slices.Clone(spec.invFreq), 0
		for k, s := range a.MropeSection {
			if s != a.MropeSection[0] {
				return ropeSpec{}, fmt.Errorf("mrope_strided needs equal sections, got mrope_section %v", a.MropeSection)
			}
			for j := range s {
				spec.invFreq[i] = ladder[j*n+int64(k)]
				i++
			}
		}
	}
	if a.MropeRestart { // each section its own ladder over 2·section: theta^(-2j / (2·section))
		if a.MropeInterleaved || a.Scaling["rope_type"] != nil && a.Scaling["rope_type"] != "default" {
			return ropeSpec{}, fmt.Errorf("mrope_restart takes neither mrope_interleaved nor a scaling")
		}
		i := 0
		for _, s := range a.MropeSection {
			for j := range s {
				spec.invFreq[i] = f32InvFreq(theta, int(j), 2*s, 1)
				i++
			}
		}
	}
	return spec, nil
}

// f32InvFreq is HF's 1 / (base ** (arange(0, dim, 2) / dim)) in f32 for
// frequency i, each factor of the denominator (factor * base**e) rounded
// to f32 as torch computes it.
func f32InvFreq(base float64, i int, dim int64, factor float64) float64 {
	e := float32(float32(2*i) / float32(dim))
	den := float32(math.Pow(base, float64(e)))
	if factor != 1 {
		den = float32(factor) * den
	}
	return float64(float32(1 / den))
}

// ropeFrequencies computes inv_freq like HF: the default table
// 1 / theta^(2i/dim) in f32, then the adjustment of the scaling dict's
// rope_type (ropeScalings).
func ropeFrequencies(theta float64, dim int64, scaling map[string]any, lim ropeLimits) (ropeTable, error) {
	inv := make([]float64, dim/2)
	for i := range inv {
		inv[i] = f32InvFreq(theta, i, dim, 1)
	}
	t := ropeTable{invFreq: inv, scale: 1}
	kind := "default"
	for _, key := range []string{"type", "rope_type"} { // rope_type wins, as in HF's standardize_rope_params
		switch v := scaling[key].(type) {
		case nil:
		case string:
			if v != "" {
				kind = v
			}
		default:
			return t, fmt.Errorf("rope_scaling (rope_parameters) %q must be a string, got %s", key, showValue(v))
		}
	}
	adjust, ok := ropeScalings[kind]
	if !ok {
		return t, fmt.Errorf("rope_scaling (rope_parameters) type %q is not supported (supported: %s)", kind, strings.Join(slices.Sorted(maps.Keys(ropeScalings)), ", "))
	}
	return t, adjust(&ropeScaling{kind: kind, dict: scaling, theta: theta, dim: dim, lim: lim}, &t)
}

// ropeScalings are HF modeling_rope_utils' ROPE_INIT_FUNCTIONS, one row
// per rope_type: each adjusts the default table t.invFreq (and sets
// t.scale, the length-dependent tables) from the scaling dict r.
var ropeScalings = map[string]func(r *ropeScaling, t *ropeTable) error{
	"default":      func(*ropeScaling, *ropeTable) error { return nil },
	"linear":       ropeLinear,       // inv / factor
	"llama3":       ropeLlama3,       // _compute_llama3_parameters
	"yarn":         ropeYarn,         // _compute_yarn_parameters
	"longrope":     ropeLongRoPE,     // _compute_longrope_parameters, longrope_frequency_update
	"proportional": ropeProportional, // _compute_proportional_rope_parameters (Gemma 4)
	"dynamic":      ropeDynamic,      // _compute_dynamic_ntk_parameters, dynamic_frequency_update
}

// ropeScaling is one rope_scaling (rope_parameters) dict read as a table
// row reads it: typed numbers by key, with the errors naming the key.
type ropeScaling struct {
	kind  string
	dict  map[string]any
	theta float64
	dim   int64 // rotary_dim
	lim   ropeLimits
}

// num is the number under key; factor, original_max_position_embeddings,
// low_freq_factor and high_freq_factor must be > 0 (divisors and scales:
// zero or negative gives NaN or inf frequencies).
func (r *ropeScaling) num(key string) (float64, error) {
	var v float64
	switch x := r.dict[key].(type) {
	case float64:
		v = x
	case int64:
		v = float64(x)
	default:
		return 0, fmt.Errorf("rope_scaling (rope_parameters) of type %q needs numeric %q, got %s", r.kind, key, showValue(r.dict[key]))
	}
	switch key {
	case "factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor":
		if !(v > 0) {
			return 0, fmt.Errorf("rope_scaling (rope_parameters) of type %q needs %q > 0, got %g", r.kind, key, v)
		}
	}
	return v, nil
}

// opt is the number under key, or def when it is absent, not a number or 0.
func (r *ropeScaling) opt(key string, def float64) float64 {
	if v, err := r.num(key); err == nil && v != 0 {
		return v
	}
	return def
}

// optional is the number under key, or def when the key is absent (a
// present non-number is an error).
func (r *ropeScaling) optional(key string, def float64) (float64, error) {
	if _, ok := r.dict[key]; !ok {
		return def, nil
	}
	return r.num(key)
}

// originalMax is original_max_position_embeddings: rope's override, else
// the dict's, else max_position (HF standardize_rope_params).
func (r *ropeScaling) originalMax() (float64, error) {
	if r.lim.origMax > 0 {
		return float64(r.lim.origMax), nil
	}
	v, err := r.num("original_max_position_embeddings")
	switch {
	case err == nil:
		return v, nil
	case r.lim.maxPos > 0:
		return float64(r.lim.maxPos), nil
	}
	return 0, err
}

// factors is the list of rotary_dim/2 numbers under key (longrope's).
func (r *ropeScaling) factors(key string, n int) ([]float64, error) {
	l, ok := r.dict[key].([]any)
	if !ok || len(l) != n {
		return nil, fmt.Errorf("rope_scaling (rope_parameters) of type %q needs %q, a list of rotary_dim/2 = %d numbers, got %s", r.kind, key, n, showValue(r.dict[key]))
	}
	out := make([]float64, len(l))
	for i, v := range l {
		switch x := v.(type) {
		case float64:
			out[i] = x
		case int64:
			out[i] = float64(x)
		default:
			return nil, fmt.Errorf("rope_scaling (rope_parameters) of type %q: %s[%d] must be a number, got %s", r.kind, key, i, showValue(v))
		}
	}
	return out, nil
}

// ropeLinear: every frequency divided by factor.
func ropeLinear(r *ropeScaling, t *ropeTable) error {
	factor, err := r.num("factor")
	if err != nil {
		return err
	}
	for i, f := range t.invFreq {
		t.invFreq[i] = float64(float32(f / factor))
	}
	return nil
}

// ropeLlama3: wavelengths below original/high_freq_factor kept, above
// original/low_freq_factor divided by factor, smoothed between.
func ropeLlama3(r *ropeScaling, t *ropeTable) error {
	var p [3]float64
	for i, k := range []string{"factor", "low_freq_factor", "high_freq_factor"} {
		v, err := r.num(k)
		if err != nil {
			return err
		}
		p[i] = v
	}
	old, err := r.originalMax()
	if err != nil {
		return err
	}
	factor, low, high := p[0], p[1], p[2]
	lowWavelen, highWavelen := old/low, old/high
	for i, f := range t.invFreq {
		wavelen := 2 * math.Pi / f
		switch {
		case wavelen < highWavelen:
		case wavelen > lowWavelen:
			t.invFreq[i] = float64(float32(f / factor))
		default:
			smooth := (old/wavelen - low) / (high - low)
			t.invFreq[i] = float64(float32((1-smooth)*f/factor + smooth*f))
		}
	}
	return nil
}

// ropeYarn: frequencies interpolated by a linear ramp between the
// beta_fast and beta_slow correction dims; cos and sin scaled by
// attention_factor, else mscale's ratio, else 0.1·ln(factor) + 1.
func ropeYarn(r *ropeScaling, t *ropeTable) error {
	factor, err := r.num("factor")
	if err != nil {
		return err
	}
	orig, err := r.originalMax()
	if err != nil {
		return err
	}
	mscale := func(scale, m float64) float64 {
		if scale <= 1 {
			return 1
		}
		return 0.1*m*math.Log(scale) + 1
	}
	if af, err := r.num("attention_factor"); err == nil {
		t.scale = af
	} else if m, mAll := r.opt("mscale", 0), r.opt("mscale_all_dim", 0); m != 0 && mAll != 0 {
		t.scale = mscale(factor, m) / mscale(factor, mAll)
	} else {
		t.scale = mscale(factor, 1)
	}
	betaFast, betaSlow := r.opt("beta_fast", 32), r.opt("beta_slow", 1)
	d := float64(r.dim)
	corr := func(rot float64) float64 { return d * math.Log(orig/(rot*2*math.Pi)) / (2 * math.Log(r.theta)) }
	low, high := corr(betaFast), corr(betaSlow)
	if truncate, ok := r.dict["truncate"].(bool); !ok || truncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low, high = math.Max(low, 0), math.Min(high, d-1)
	if low == high {
		high += 0.001
	}
	for i, f := range t.invFreq {
		ramp := math.Min(math.Max((float64(i)-low)/(high-low), 0), 1)
		extrapolation := 1 - ramp
		t.invFreq[i] = float64(float32(f/factor*(1-extrapolation) + f*extrapolation))
	}
	return nil
}

// ropeLongRoPE: short_factor while the sequence fits
// original_max_position_embeddings, long_factor past it; cos and sin
// scaled by attention_factor, else sqrt(1 + ln(factor)/ln(original)).
func ropeLongRoPE(r *ropeScaling, t *ropeTable) error {
	orig, err := r.originalMax()
	if err != nil {
		return err
	}
	short, err := r.factors("short_factor", len(t.invFreq))
	if err != nil {
		return err
	}
	long, err := r.factors("long_factor", len(t.invFreq))
	if err != nil {
		return err
	}
	factor, err := r.num("factor")
	if err != nil {
		if r.lim.maxPos <= 0 {
			return fmt.Errorf("rope_scaling (rope_parameters) of type \"longrope\" without \"factor\" needs rope's max_position (the factor is max_position_embeddings / original_max_position_embeddings)")
		}
		factor = float64(r.lim.maxPos) / orig
	}
	if af, err := r.num("attention_factor"); err == nil {
		t.scale = af
	} else if factor > 1 {
		t.scale = math.Sqrt(1 + math.Log(factor)/math.Log(orig))
	}
	t.long = make([]float64, len(t.invFreq))
	for i := range t.invFreq {
		t.invFreq[i] = f32InvFreq(r.theta, i, r.dim, short[i])
		t.long[i] = f32InvFreq(r.theta, i, r.dim, long[i])
	}
	t.threshold = int64(orig)
	return nil
}

// ropeProportional (Gemma 4's full-attention layers): the table spans the
// whole head (rotate_half pairs x[i] with x[i + dim/2]); only its first
// int(partial_rotary_factor·dim // 2) frequencies rotate, theta^(-2i/dim)
// as the default table's, and the rest are 0 (cos 1, sin 0: those pairs
// pass through); then every frequency is divided by factor (default 1).
func ropeProportional(r *ropeScaling, t *ropeTable) error {
	p, err := r.optional("partial_rotary_factor", 1)
	if err != nil {
		return err
	}
	if !(p >= 0 && p <= 1) {
		return fmt.Errorf("rope_scaling (rope_parameters) of type \"proportional\" needs partial_rotary_factor in [0, 1], got %g", p)
	}
	factor, err := r.optional("factor", 1)
	if err != nil {
		return err
	}
	angles := int(math.Floor(p * float64(r.dim) / 2)) // Python's int(p * dim // 2)
	for i, f := range t.invFreq {
		if i >= angles {
			f = 0
		}
		t.invFreq[i] = float64(float32(f / factor))
	}
	return nil
}

// ropeDynamic (NTK): the base grows with the sequence length L past
// max_position, theta·(factor·L/max_position − (factor − 1))^(dim/(dim−2)),
// computed in the graph (ntkParams); the static table is L = max_position's.
func ropeDynamic(r *ropeScaling, t *ropeTable) error {
	factor, err := r.num("factor")
	if err != nil {
		return err
	}
	if r.lim.maxPos <= 0 || r.dim <= 2 {
		return fmt.Errorf("rope_scaling (rope_parameters) of type \"dynamic\" needs rope's max_position (the config's max_position_embeddings) and rotary_dim > 2")
	}
	mp := float64(r.lim.maxPos)
	base := float64(float32(r.theta * math.Pow(factor*mp/mp-(factor-1), float64(r.dim)/float64(r.dim-2))))
	for i := range t.invFreq {
		t.invFreq[i] = f32InvFreq(base, i, r.dim, 1)
	}
	t.threshold = r.lim.maxPos
	t.dynamic = &ntkParams{theta: r.theta, factor: factor, maxPos: r.lim.maxPos, dim: r.dim}
	return nil
}

func lowerRoPE(f *fn, n *ir.Node, a *RoPEAttrs) codegen.Value {
	x := f.arg(n, 0)
	spec := a.Spec
	var cos, sin codegen.Value
	if len(n.Args) > 1 { // explicit positions [B, S, axes] → [axes, B, S]
		p := f.transpose(f.arg(n, 1), 2, 0, 1)
		cos, sin = f.cosSin(fmt.Sprint("rope", n.Args[1].ID, spec.invFreq, spec.axes), f.mropeFreqs(p, spec.invFreq, spec.axes), 1, false)
	} else {
		cos, sin = f.ropeCosSin(spec.ropeTable, spec.interleaved, spec.axes)
	}
	B, S, H, D := x.Type.Shape[0], x.Type.Shape[1], x.Type.Shape[2], x.Type.Shape[3]
	r := spec.rotaryDim
	xr := x
	if r < D {
		xr = f.sliceDim(x, 3, 0, r)
	}
	var rot codegen.Value
	if spec.interleaved { // pairs (x[2i], x[2i+1]) → (-x[2i+1], x[2i])
		pairs := f.reshape(xr, B, S, H, r/2, 2)
		even, odd := f.sliceDim(pairs, 4, 0, 1), f.sliceDim(pairs, 4, 1, 2)
		rot = f.reshape(f.concat(4, f.unary("stablehlo.negate", odd), even), B, S, H, r)
	} else { // rotate_half: [x1, x2] → [-x2, x1]
		x1 := f.sliceDim(xr, 3, 0, r/2)
		x2 := f.sliceDim(xr, 3, r/2, r)
		rot = f.concat(3, f.unary("stablehlo.negate", x2), x1)
	}
	cb := f.broadcastDims(cos, xr.Type, 0, 1, 3)
	sb := f.broadcastDims(sin, xr.Type, 0, 1, 3)
	out := f.add(f.mul(xr, cb), f.mul(rot, sb))
	if r < D {
		out = f.concat(3, out, f.sliceDim(x, 3, r, D))
	}
	return out
}

// ropeCosSin returns cos and sin [batch, seq, rotary_dim] for this call's
// positions, shared by every rope node with the same table and layout.
// A table with a threshold picks, per sequence, the long or dynamic
// frequencies when the sequence's length exceeds it. With axes
// (multimodal RoPE) frequency i turns by axis axes[i] of the call's 3-D
// positions (fn.ropePositions) instead.
func (f *fn) ropeCosSin(t ropeTable, interleaved bool, axes []int) (codegen.Value, codegen.Value) {
	key := fmt.Sprint("rope", t.invFreq, t.scale)
	if t.threshold > 0 || interleaved || axes != nil {
		key += fmt.Sprint(t.threshold, t.long, t.dynamic != nil, interleaved, axes)
	}
	if c, ok := f.memo[key+"cos"]; ok {
		return c, f.memo[key+"sin"]
	}
	d2 := int64(len(t.invFreq))
	shape := append(append([]int64{}, f.positions.Type.Shape...), d2)
	ft := codegen.T("f32", shape...)
	if axes != nil {
		rp := f.ropePositions
		if rp.Type.Elem == "" {
			f.Errorf("multimodal RoPE (mrope_section) needs 3-D positions, which this function does not take (give rope positions: in an encoder)")
			return f.splat(0, ft), f.splat(0, ft)
		}
		return f.cosSin(key, f.mropeFreqs(rp, t.invFreq, axes), t.scale, interleaved)
	}
	pos := f.convert(f.positions, "f32")
	pb := f.broadcastDims(pos, ft, 0, 1)
	freqs := f.mul(pb, f.broadcastDims(f.constF32s(t.invFreq), ft, 2))
	if t.threshold > 0 {
		lens := f.seqLengths() // [batch] i32
		var alt codegen.Value
		if t.dynamic != nil {
			alt = f.mul(pb, f.broadcastDims(f.ntkInvFreq(*t.dynamic, lens), ft, 0, 2))
		} else {
			alt = f.mul(pb, f.broadcastDims(f.constF32s(t.long), ft, 2))
		}
		beyond := f.compare("GT", lens, f.broadcast(f.constI32(t.threshold), lens.Type))
		freqs = f.selectOp(f.broadcastDims(beyond, ft.WithElem("i1"), 0), alt, freqs)
	}
	return f.cosSin(key, freqs, t.scale, interleaved)
}

// cosSin is cos and sin [batch, seq, rotary_dim] of the angles freqs
// [batch, seq, rotary_dim/2] (each frequency's twice: the halves, or
// repeat_interleave'd pairs), times scale; memoized under key.
func (f *fn) cosSin(key string, freqs codegen.Value, scale float64, interleaved bool) (codegen.Value, codegen.Value) {
	shape := freqs.Type.Shape
	d2 := shape[2]
	var emb codegen.Value
	if interleaved { // repeat_interleave(freqs, 2)
		pair := codegen.T("f32", append(append([]int64{}, shape...), 2)...)
		emb = f.reshape(f.broadcastDims(freqs, pair, 0, 1, 2), shape[0], shape[1], 2*d2)
	} else {
		emb = f.concat(2, freqs, freqs)
	}
	cos := f.unary("stablehlo.cosine", emb)
	sin := f.unary("stablehlo.sine", emb)
	if scale != 1 {
		cos = f.mul(cos, f.splat(scale, cos.Type))
		sin = f.mul(sin, f.splat(scale, sin.Type))
	}
	f.memo[key+"cos"], f.memo[key+"sin"] = cos, sin
	return cos, sin
}

// mropeFreqs is the angle of each frequency [batch, seq, d2] f32 under
// multimodal RoPE: position axis axes[i] of rp ([axes, batch, seq] i32:
// the call's 3-D positions, fn.ropePositions, or a rope's explicit ones)
// times invFreq[i], as HF's rotary embedding computes every axis's
// angles (inv_freq · position in f32) and the sections then pick one
// axis per frequency: a sum over the axes of position × (invFreq where
// the axis turns it, else 0), exact.
func (f *fn) mropeFreqs(rp codegen.Value, invFreq []float64, axes []int) codegen.Value {
	B, S := rp.Type.Shape[1], rp.Type.Shape[2]
	ft := codegen.T("f32", B, S, int64(len(invFreq)))
	var freqs codegen.Value
	for k := range int(rp.Type.Shape[0]) {
		inv := make([]float64, len(invFreq))
		used := false
		for i, a := range axes {
			if a == k {
				inv[i], used = invFreq[i], true
			}
		}
		if !used {
			continue
		}
		p := f.convert(f.reshape(f.sliceDim(rp, 0, int64(k), int64(k)+1), B, S), "f32")
		term := f.mul(f.broadcastDims(p, ft, 0, 1), f.broadcastDims(f.constF32s(inv), ft, 2))
		if freqs.Type.Elem == "" {
			freqs = term
		} else {
			freqs = f.add(freqs, term)
		}
	}
	return freqs
}

// ntkInvFreq is the dynamic NTK inv_freq [batch, dim/2] of sequences of
// lengths lens ([batch] i32), in f32 ops as torch runs
// _compute_dynamic_ntk_parameters on a tensor seq_len:
// base = theta·((factor·L/max_position) - (factor - 1))^(dim/(dim-2)),
// inv_freq = 1 / base^(arange(0, dim, 2)/dim).
func (f *fn) ntkInvFreq(p ntkParams, lens codegen.Value) codegen.Value {
	L := f.convert(lens, "f32")
	c := func(v float64) codegen.Value { return f.splat(v, L.Type) }
	s := f.sub(f.div(f.mul(L, c(p.factor)), c(float64(p.maxPos))), c(p.factor-1))
	base := f.mul(c(float64(float32(p.theta))), f.binary("stablehlo.power", s, c(float64(p.dim)/float64(p.dim-2))))
	exps := make([]float64, p.dim/2)
	for i := range exps {
		exps[i] = float64(float32(float32(2*i) / float32(p.dim)))
	}
	bt := codegen.T("f32", L.Type.Shape[0], p.dim/2)
	den := f.binary("stablehlo.power", f.broadcastDims(base, bt, 0), f.broadcastDims(f.constF32s(exps), bt, 1))
	return f.div(f.splat(1, bt), den)
}

// seqLengths returns, per sequence of the call, [batch] i32, the length HF
// sees for it: its last real position + 1 (once per function).
func (f *fn) seqLengths() codegen.Value {
	if v, ok := f.memo["seq_lengths"]; ok {
		return v
	}
	if f.mkSeqLens == nil {
		f.Errorf("this function has no sequence lengths (a length-dependent RoPE needs them)")
		return codegen.Value{Type: codegen.T("i32", f.batch)}
	}
	v := f.mkSeqLens()
	f.memo["seq_lengths"] = v
	return v
}

// showValue formats a config value for an error message (none for nil).
func showValue(v any) string {
	if v == nil {
		return "none"
	}
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// MRoPE reports whether g's RoPE is multimodal (a rope node with
// mrope_section): every entry point that runs tokens then takes the
// tokens' 3-D positions as its last argument, rope_positions [3, batch,
// seq] i32 (the package comment; abi.Program.MRoPE on the runtime's side).
func MRoPE(g *ir.Graph) bool {
	for _, n := range g.Nodes {
		if n.Prim != "rope" {
			continue
		}
		if a, ok := n.Decoded.(*RoPEAttrs); ok && a.Spec.axes != nil {
			return true
		}
	}
	return false
}

// LengthDependence returns g's length policy (abi.LengthPolicy, which
// the runtime asks whether a slot's cached keys still serve a sequence),
// from its rope nodes (the smallest threshold among them; every
// length-dependent family today has one).
func LengthDependence(g *ir.Graph) abi.LengthPolicy {
	var r abi.LengthPolicy
	for _, n := range g.Nodes {
		if n.Prim != "rope" {
			continue
		}
		a, ok := n.Decoded.(*RoPEAttrs)
		if !ok || a.Spec.threshold <= 0 {
			continue
		}
		spec := a.Spec
		if r.Threshold == 0 || spec.threshold < r.Threshold {
			r.Threshold = spec.threshold
		}
		r.PerLength = r.PerLength || spec.dynamic != nil
		r.Recompute = r.Recompute || (spec.dynamic == nil && a.Recompute)
	}
	return r
}
