package gguf

import (
	"fmt"
	"math"
	"slices"
)

// A GGUF file knows nothing of model families: the family's .arch file
// says, in its gguf section, how its metadata becomes config.json fields,
// which tensor is which and how each was stored (dsl.EvalGGUF). File is the
// section's source of metadata and tensor names (the methods below make it
// a dsl.GGUFSource, without this package importing dsl); the file read
// through a family's section is driver/ggufmap's Model.

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

// HeaderSum returns the sha256 of the file's header bytes (up to the end
// of the tensor infos): with Size and ModTime, what names a cache file
// derived from this version of the file.
func (f *File) HeaderSum() []byte { return slices.Clone(f.hdrSum) }
