package ggufmap

import (
	"github.com/archc/archc/formats/gguf"
	"io/fs"
	"sync"
	"testing"

	"github.com/archc/archc/archs"
	"github.com/archc/archc/dsl"
)

// builtins are the built-in families (archs/*.arch), parsed and resolved,
// as package rt reads them: the gguf sections say how each GGUF file is read.
var builtins = sync.OnceValues(func() ([]*dsl.File, error) {
	names, err := fs.Glob(archs.FS, "*.arch")
	if err != nil {
		return nil, err
	}
	byName := map[string]*dsl.File{}
	var files []*dsl.File
	for _, n := range names {
		src, err := archs.FS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		f, err := dsl.Parse(n, src)
		if err != nil {
			return nil, err
		}
		byName[f.Name] = f
		files = append(files, f)
	}
	for i, f := range files {
		if files[i], err = dsl.Resolve(f, func(name string) (*dsl.File, error) { return byName[name], nil }); err != nil {
			return nil, err
		}
	}
	return files, nil
})

// familyOf returns the built-in family that reads f (dsl.SelectGGUF).
func familyOf(f *gguf.File) (*dsl.File, error) {
	fams, err := builtins()
	if err != nil {
		return nil, err
	}
	return dsl.SelectGGUF(fams, f)
}

// read reads f through the built-in family that claims it.
func read(f *gguf.File) (*Model, error) {
	fam, err := familyOf(f)
	if err != nil {
		return nil, err
	}
	return Read(f, fam)
}

// mustRead is read, failing the test on an error.
func mustRead(t testing.TB, f *gguf.File) *Model {
	t.Helper()
	m, err := read(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
