package lower

import (
	"fmt"
	"math"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// rope(x [batch, seq, heads, head_dim], theta, scaling) → same shape:
// rotary position embedding in the half-split (rotate_half) layout, as HF
// apply_rotary_pos_emb: out = x·cos + rotate_half(x)·sin, where the angle of
// frequency i at position p is p·inv_freq[i] computed in f32 and cos/sin
// cover [freqs, freqs]. inv_freq follows HF modeling_rope_utils for the
// scaling dict's rope_type (or legacy "type").
func inferRoPE(n *ir.Node) error {
	x := n.Args[0].Type
	if len(x.Shape) != 4 || x.Shape[0] != ir.Batch || x.Shape[1] != ir.Seq {
		return fmt.Errorf("x must be [batch, seq, heads, head_dim], got %s", x)
	}
	if _, err := ropeParams(n); err != nil {
		return err
	}
	n.Type = x
	return nil
}

// ropeTable is the frequency table of one RoPE instance.
type ropeTable struct {
	invFreq []float64 // [head_dim/2], each a float32 value
	scale   float64   // attention_scaling applied to cos and sin
}

func ropeParams(n *ir.Node) (ropeTable, error) {
	theta, err := floatAttr(n, "theta", 0)
	if err != nil {
		return ropeTable{}, err
	}
	dim := lastDim(n.Args[0].Type)
	if dim%2 != 0 || theta <= 0 {
		return ropeTable{}, fmt.Errorf("needs an even head_dim and theta > 0, got %d and %g", dim, theta)
	}
	var scaling map[string]any
	switch s := n.Attrs["scaling"].(type) {
	case nil:
	case map[string]any:
		scaling = s
	default:
		return ropeTable{}, fmt.Errorf("scaling must be a dict or none, got %v", s)
	}
	return ropeFrequencies(theta, dim, scaling)
}

// ropeFrequencies computes inv_freq like HF: the default table
// 1 / theta^(2i/dim) in f32, then the scaling variant's adjustment.
func ropeFrequencies(theta float64, dim int64, scaling map[string]any) (ropeTable, error) {
	inv := make([]float64, dim/2)
	for i := range inv {
		e := float32(float32(2*i) / float32(dim))
		inv[i] = float64(float32(1 / float32(math.Pow(theta, float64(e)))))
	}
	t := ropeTable{invFreq: inv, scale: 1}
	kind, _ := scaling["rope_type"].(string)
	if kind == "" {
		kind, _ = scaling["type"].(string)
	}
	num := func(key string) (float64, error) {
		switch v := scaling[key].(type) {
		case float64:
			return v, nil
		case int64:
			return float64(v), nil
		}
		return 0, fmt.Errorf("rope scaling %q needs numeric %q, got %v", kind, key, scaling[key])
	}
	switch kind {
	case "", "default":
	case "linear":
		factor, err := num("factor")
		if err != nil {
			return t, err
		}
		for i := range inv {
			inv[i] = float64(float32(inv[i] / factor))
		}
	case "llama3": // HF _compute_llama3_parameters
		var p [4]float64
		for i, k := range []string{"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"} {
			v, err := num(k)
			if err != nil {
				return t, err
			}
			p[i] = v
		}
		factor, low, high, old := p[0], p[1], p[2], p[3]
		lowWavelen, highWavelen := old/low, old/high
		for i, f := range inv {
			wavelen := 2 * math.Pi / f
			switch {
			case wavelen < highWavelen:
			case wavelen > lowWavelen:
				inv[i] = float64(float32(f / factor))
			default:
				smooth := (old/wavelen - low) / (high - low)
				inv[i] = float64(float32((1-smooth)*f/factor + smooth*f))
			}
		}
	case "yarn": // HF _compute_yarn_parameters
		factor, err := num("factor")
		if err != nil {
			return t, err
		}
		orig, err := num("original_max_position_embeddings")
		if err != nil {
			return t, err
		}
		opt := func(key string, def float64) float64 {
			if v, err := num(key); err == nil && v != 0 {
				return v
			}
			return def
		}
		mscale := func(scale, m float64) float64 {
			if scale <= 1 {
				return 1
			}
			return 0.1*m*math.Log(scale) + 1
		}
		if af, err := num("attention_factor"); err == nil {
			t.scale = af
		} else if m, mAll := opt("mscale", 0), opt("mscale_all_dim", 0); m != 0 && mAll != 0 {
			t.scale = mscale(factor, m) / mscale(factor, mAll)
		} else {
			t.scale = mscale(factor, 1)
		}
		betaFast, betaSlow := opt("beta_fast", 32), opt("beta_slow", 1)
		d := float64(dim)
		corr := func(rot float64) float64 { return d * math.Log(orig/(rot*2*math.Pi)) / (2 * math.Log(theta)) }
		low, high := corr(betaFast), corr(betaSlow)
		if truncate, ok := scaling["truncate"].(bool); !ok || truncate {
			low, high = math.Floor(low), math.Ceil(high)
		}
		low, high = math.Max(low, 0), math.Min(high, d-1)
		if low == high {
			high += 0.001
		}
		for i, f := range inv {
			ramp := math.Min(math.Max((float64(i)-low)/(high-low), 0), 1)
			extrapolation := 1 - ramp
			inv[i] = float64(float32(f/factor*(1-extrapolation) + f*extrapolation))
		}
	default:
		return t, fmt.Errorf("RoPE scaling type %q is not supported (supported: default, linear, llama3, yarn)", kind)
	}
	return t, nil
}

func lowerRoPE(f *fn, n *ir.Node) codegen.Value {
	x := f.arg(n, 0)
	tab, _ := ropeParams(n)
	cos, sin := f.ropeCosSin(tab)
	half := x.Type.Shape[3] / 2
	x1 := f.sliceDim(x, 3, 0, half)
	x2 := f.sliceDim(x, 3, half, 2*half)
	rot := f.concat(3, f.unary("stablehlo.negate", x2), x1)
	cb := f.broadcastDims(cos, x.Type, 0, 1, 3)
	sb := f.broadcastDims(sin, x.Type, 0, 1, 3)
	return f.add(f.mul(x, cb), f.mul(rot, sb))
}

// ropeCosSin returns cos and sin [batch, seq, head_dim] for this call's
// positions, shared by every rope node with the same table.
func (f *fn) ropeCosSin(t ropeTable) (codegen.Value, codegen.Value) {
	key := fmt.Sprint("rope", t.invFreq, t.scale)
	if c, ok := f.memo[key+"cos"]; ok {
		return c, f.memo[key+"sin"]
	}
	pos := f.convert(f.positions, "f32")
	d2 := int64(len(t.invFreq))
	shape := append(append([]int64{}, pos.Type.Shape...), d2)
	ft := codegen.T("f32", shape...)
	freqs := f.mul(f.broadcastDims(pos, ft, 0, 1), f.broadcastDims(f.constF32s(t.invFreq), ft, 2))
	emb := f.concat(2, freqs, freqs)
	cos := f.unary("stablehlo.cosine", emb)
	sin := f.unary("stablehlo.sine", emb)
	if t.scale != 1 {
		cos = f.mul(cos, f.splat(t.scale, cos.Type))
		sin = f.mul(sin, f.splat(t.scale, sin.Type))
	}
	f.memo[key+"cos"], f.memo[key+"sin"] = cos, sin
	return cos, sin
}
