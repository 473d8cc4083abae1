package ggufmap

import (
	"github.com/archc/archc/formats/gguf"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead feeds corrupt files that formats/gguf's Open accepts to Read and
// ReadTensor: they must return errors, never panic or allocate without
// bound (formats/gguf's FuzzOpen covers Open itself).
func FuzzRead(f *testing.F) {
	kvs, ts := tinyLlama()
	f.Add(buildGGUF(kvs, ts))
	f.Add(buildGGUF(kvs[:3], ts[:2]))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.gguf")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := gguf.Open(p)
		if err != nil {
			return
		}
		m, err := read(g)
		if err != nil {
			return
		}
		for _, tt := range g.Tensors {
			m.ReadTensor(tt.Name)
		}
	})
}
