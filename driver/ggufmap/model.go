// Package ggufmap reads a GGUF file through a family's gguf section (the
// .arch file's table of metadata keys, tensor names and load transforms,
// evaluated by dsl.EvalGGUF): the file's config.json equivalent, its
// tensors under their Hugging Face names with the transforms that undo how
// llama.cpp stored them, and the packed (Pack) or dequantized
// (Materialize) weight files the runtime maps. It is the compiler side of
// GGUF: the container reader and dequantization, which know nothing of
// families, are package formats/gguf.
package ggufmap

import (
	"crypto/sha256"
	"fmt"
	"math"
	"sort"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/formats/gguf"
)

// Model is a GGUF file read through a family's gguf section: its
// config.json equivalent and its tensors under their Hugging Face names,
// each with the transforms that undo how llama.cpp stored it. Pack, Formats,
// Materialize and ReadTensor work on it.
type Model struct {
	*gguf.File
	Family string         // the family whose gguf section read the file
	Config map[string]any // the config.json equivalent (dsl.GGUFReading.Config)

	reading *dsl.GGUFReading
	plan    []planned
	calls   map[string][]string // GGUF tensor name → the transforms its row gives (Transforms)
	planSum []byte              // sha256 of the plan: part of the cache file names
}

// Read reads GGUF file f through the gguf section of family fam (a resolved .arch
// file; dsl.SelectGGUF picks the one that claims the file): the metadata
// becomes the config (dsl.EvalGGUF) and every tensor gets its Hugging Face
// name and transforms. Errors: those of the section's evaluation (with its
// .arch position), a tensor no row of the section maps or of a type archc
// cannot read, two tensors with one Hugging Face name, a transform that
// does not fit its tensor.
func Read(f *gguf.File, fam *dsl.File) (*Model, error) {
	r, err := dsl.EvalGGUF(fam, f)
	if err != nil {
		return nil, err
	}
	m := &Model{File: f, Family: r.Family, Config: r.Config, reading: r}
	if err := m.makePlan(); err != nil {
		return nil, err
	}
	m.sum()
	return m, nil
}

// Keep leaves out of the model's tensors (Pack, Materialize, Formats) those
// whose Hugging Face names are not in read, the tensors the graph reads: a
// GGUF file may hold more (llama.cpp writes a model's multi-token-prediction
// layers as extra blocks, which transformers does not load either). It
// returns the GGUF names of the tensors left out, sorted.
func (m *Model) Keep(read map[string]bool) []string {
	var kept []planned
	var out []string
	for _, p := range m.plan {
		if read[p.hf] {
			kept = append(kept, p)
			continue
		}
		switch {
		case p.vals != nil:
			out = append(out, p.hf+" (from metadata)")
		case p.group != nil:
			for _, q := range p.group {
				out = append(out, q.t.Name)
			}
		default:
			out = append(out, p.t.Name)
		}
	}
	if len(out) > 0 {
		m.plan = kept
		m.sum()
	}
	sort.Strings(out)
	return out
}

// sum sets planSum, the hash of the plan in the cache file names.
func (m *Model) sum() {
	h := sha256.New()
	for _, p := range m.plan {
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00%v\x00", p.t.Name, p.hf, p.tr.permuteHeads, p.tr.minusOne)
		if p.tr.regroupParts != 0 { // (only then, so that other files keep their cache names)
			fmt.Fprintf(h, "regroup\x00%d\x00%d\x00", p.tr.regroupParts, p.tr.regroupHeads)
		}
		if p.tr.transpose || p.tr.parts > 1 { // (only then, so that other files keep their cache names)
			fmt.Fprintf(h, "%v\x00%d\x00%d\x00", p.tr.transpose, p.tr.part, p.tr.parts)
			if p.tr.chunk {
				h.Write([]byte("chunk\x00"))
			}
			if p.tr.cols {
				h.Write([]byte("cols\x00"))
			}
			if p.tr.flatten {
				h.Write([]byte("flatten\x00"))
			}
			for _, q := range p.group {
				fmt.Fprintf(h, "%s\x00", q.t.Name)
				if q.tr.permuteHeads != 0 { // a chunk un-permuted (only then, so that other files keep their cache names)
					fmt.Fprintf(h, "unpermute\x00%d\x00", q.tr.permuteHeads)
				}
			}
		}
		if p.tr.channelsLast { // (only then, so that other files keep their cache names)
			h.Write([]byte("channels_last\x00"))
		}
		if p.tr.reshape != nil || p.tr.logNeg { // (only then, so that other files keep their cache names)
			fmt.Fprintf(h, "reshape\x00%v\x00log_neg\x00%v\x00", p.tr.reshape, p.tr.logNeg)
		}
		if p.vals != nil {
			fmt.Fprintf(h, "values\x00%v\x00", p.vals)
		}
		if p.tr.hasMinus { // (only then, so that other files keep their cache names)
			fmt.Fprintf(h, "minus\x00%v\x00", math.Float32bits(p.tr.minus))
		}
	}
	m.planSum = h.Sum(nil)
}
