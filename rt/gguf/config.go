package gguf

import (
	"crypto/sha256"
	"fmt"
	"math"

	"github.com/archc/archc/dsl"
)

// A GGUF file knows nothing of model families: the family's .arch file
// says, in its gguf section, how its metadata becomes config.json fields,
// which tensor is which and how each was stored (dsl.EvalGGUF). File is the
// section's source of metadata and tensor names (dsl.GGUFSource); Model is
// the file read through a family's section.

// Name returns the file's path; with Architecture, Meta and TensorShape it
// makes File a dsl.GGUFSource.
func (f *File) Name() string { return f.Path }

// Architecture returns general.architecture.
func (f *File) Architecture() string { return f.Arch }

// Meta returns the metadata value under key as a config-time value:
// int64 for any integer, float64 (a float32 widened exactly), bool,
// string, or []any of those for an array (arrays of arrays nest). ok is
// false when the key is absent; an unsigned value beyond int64 is an error.
func (f *File) Meta(key string) (v any, ok bool, err error) {
	raw, ok := f.Value(key)
	if !ok {
		return nil, false, nil
	}
	if v, err = configValue(raw); err != nil {
		return nil, true, fmt.Errorf("metadata %s: %v", key, err)
	}
	return v, true, nil
}

// configValue converts a Value to a config-time value.
func configValue(v any) (any, error) {
	switch x := v.(type) {
	case uint64:
		if x > math.MaxInt64 {
			return nil, fmt.Errorf("%d is out of range", x)
		}
		return int64(x), nil
	case int64, float64, bool, string:
		return x, nil
	case ArrayInfo:
		out := make([]any, len(x.Values))
		for i, e := range x.Values {
			c, err := configValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// TensorShape returns the row-major (Hugging Face) shape of the tensor
// called name, and whether the file has it.
func (f *File) TensorShape(name string) ([]int64, bool) {
	t, ok := f.Lookup(name)
	if !ok {
		return nil, false
	}
	return t.Shape(), true
}

// Model is a GGUF file read through a family's gguf section: its
// config.json equivalent and its tensors under their Hugging Face names,
// each with the transforms that undo how llama.cpp stored it. Pack, Formats,
// Materialize and ReadTensor work on it.
type Model struct {
	*File
	Family string         // the family whose gguf section read the file
	Config map[string]any // the config.json equivalent (dsl.GGUFReading.Config)

	reading *dsl.GGUFReading
	plan    []planned
	planSum []byte // sha256 of the plan: part of the cache file names
}

// Read reads f through the gguf section of family fam (a resolved .arch
// file; dsl.SelectGGUF picks the one that claims the file): the metadata
// becomes the config (dsl.EvalGGUF) and every tensor gets its Hugging Face
// name and transforms. Errors: those of the section's evaluation (with its
// .arch position), a tensor no row of the section maps or of a type archc
// cannot read, two tensors with one Hugging Face name, a transform that
// does not fit its tensor.
func (f *File) Read(fam *dsl.File) (*Model, error) {
	r, err := dsl.EvalGGUF(fam, f)
	if err != nil {
		return nil, err
	}
	m := &Model{File: f, Family: r.Family, Config: r.Config, reading: r}
	if err := m.makePlan(); err != nil {
		return nil, err
	}
	h := sha256.New()
	for _, p := range m.plan {
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00%v\x00", p.t.Name, p.hf, p.tr.permuteHeads, p.tr.minusOne)
		if p.tr.transpose || p.tr.parts > 1 { // (only then, so that other files keep their cache names)
			fmt.Fprintf(h, "%v\x00%d\x00%d\x00", p.tr.transpose, p.tr.part, p.tr.parts)
			if p.tr.chunk {
				h.Write([]byte("chunk\x00"))
			}
			if p.tr.flatten {
				h.Write([]byte("flatten\x00"))
			}
			for _, q := range p.group {
				fmt.Fprintf(h, "%s\x00", q.t.Name)
			}
		}
	}
	m.planSum = h.Sum(nil)
	return m, nil
}
