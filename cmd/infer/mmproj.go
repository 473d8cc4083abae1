package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/rt/vision"
)

// findMMProj is the mmproj file of a GGUF text model, as llama.cpp users
// keep them (ggml-org's repositories: model.gguf beside mmproj-*.gguf):
// explicit (--mmproj) when given, else, only when images are asked for
// (auto), the one file named mmproj*.gguf in the model's folder; "" when
// there is none to use. Errors: --mmproj without a GGUF model, several
// candidates (named, to pick one with --mmproj).
func findMMProj(model, explicit string, auto bool) (string, error) {
	if explicit != "" {
		if !gguf.IsFile(model) {
			return "", fmt.Errorf("--mmproj %s goes with a text model's .gguf file; %s is a folder or config (its checkpoint holds the vision tower)", explicit, model)
		}
		return explicit, nil
	}
	if !auto || !gguf.IsFile(model) {
		return "", nil
	}
	found, _ := filepath.Glob(filepath.Join(filepath.Dir(model), "mmproj*.gguf"))
	sort.Strings(found)
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s is a GGUF text model: images need its mmproj file (llama.cpp's image encoder, mmproj-*.gguf); give it with --mmproj FILE or put it beside the model", model)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s: several mmproj files beside the model (%s): pick one with --mmproj FILE", model, strings.Join(found, ", "))
}

// mmprojProcessor is the image processor of a GGUF model's mmproj file
// (vision.ProcessorFromMMProj over its metadata).
func mmprojProcessor(path string) (*vision.Processor, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	p, err := vision.ProcessorFromMMProj(f.Value, func(key string) ([]float64, bool) {
		a, ok := f.Array(key)
		fs, isF := a.([]float64)
		return fs, ok && isF
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
