package gguf

import (
	"fmt"

	"github.com/archc/archc/dsl"
)

// transform is what loading does to one tensor: the shared load transforms
// (dsl.GGUFTransforms) a gguf section applies to it, resolved.
type transform struct {
	permuteHeads int  // >0: undo llama.cpp's Q/K row permutation with this many heads (rows move whole)
	minusOne     bool // the file stores 1+w: subtract 1 (values change: the tensor is packed as f32)
}

// transforms implements each transform of dsl.GGUFTransforms once, for
// every family that names it, by setting its part of a tensor's transform.
var transforms = map[string]func(tr *transform, args []int64){
	// unpermute_qk(heads): transformers' _reverse_permute_weights (see reversePermute).
	"unpermute_qk": func(tr *transform, args []int64) { tr.permuteHeads = int(args[0]) },
	// minus_one(): Gemma2TensorProcessor's "norm.weight" - 1.
	"minus_one": func(tr *transform, _ []int64) { tr.minusOne = true },
}

// resolveTransforms applies the transform calls a tensor's row gives.
func resolveTransforms(name string, calls []dsl.GGUFTransformCall) (transform, error) {
	var tr transform
	seen := map[string]bool{}
	for _, c := range calls {
		apply, ok := transforms[c.Name]
		if !ok {
			return tr, fmt.Errorf("%s:%d:%d: transform %s has no implementation in rt/gguf", c.Pos.Filename, c.Pos.Line, c.Pos.Column, c.Name)
		}
		if seen[c.Name] {
			return tr, fmt.Errorf("%s:%d:%d: transform %s applies to tensor %q twice (two patterns match it)", c.Pos.Filename, c.Pos.Line, c.Pos.Column, c.Name, name)
		}
		seen[c.Name] = true
		apply(&tr, c.Args)
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

// makePlan resolves every tensor of the file: its HF name, shape and
// transform (skipped tensors left out).
func (m *Model) makePlan() error {
	seen := map[string]string{}
	for _, t := range m.Tensors {
		tm, ok := m.reading.Tensor(t.Name)
		if !ok {
			return fmt.Errorf("gguf: %s: tensor %q has no Hugging Face name in family %s's gguf section: archc does not know this tensor", m.Path, t.Name, m.Family)
		}
		if tm.Skip {
			continue
		}
		if prev, dup := seen[tm.HF]; dup {
			return fmt.Errorf("gguf: %s: tensors %q and %q both map to %q: the file is inconsistent", m.Path, prev, t.Name, tm.HF)
		}
		seen[tm.HF] = t.Name
		if err := m.CheckType(t); err != nil {
			return err
		}
		tr, err := resolveTransforms(t.Name, tm.Transforms)
		if err != nil {
			return err
		}
		p := planned{t: t, hf: tm.HF, shape: t.Shape(), tr: tr}
		if tr.permuteHeads != 0 {
			rows := int(p.shape[0])
			if tr.permuteHeads < 0 || rows%(2*tr.permuteHeads) != 0 {
				return fmt.Errorf("gguf: %s: tensor %q has %d rows, not divisible into %d heads of row pairs: the file does not match its config", m.Path, t.Name, rows, tr.permuteHeads)
			}
		}
		m.plan = append(m.plan, p)
	}
	return nil
}
