package driver

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/archc/archc/dsl/ir"
)

// visionTwin returns the text GGUF and mmproj twins of the vision fixture
// name (golden/make_gguf_twins.py writes them), skipping when absent.
func visionTwin(t *testing.T, name string) (dir, text, mmproj string) {
	t.Helper()
	dir = filepath.Join("..", "golden", "testdata", "vision", name)
	text, mmproj = filepath.Join(dir, "model.f32.gguf"), filepath.Join(dir, "mmproj.f32.gguf")
	for _, f := range []string{text, mmproj} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("%s: run golden/make_gguf_twins.py (%v)", f, err)
		}
	}
	return dir, text, mmproj
}

// f32Eps rounds the eps attributes of a formatted graph to float32: a
// GGUF file stores layer_norm_epsilon as a float32 (1e-06 reads back as
// 9.999999974752427e-07), which the f32 graph computes with either way.
func f32Eps(s string) string {
	return regexp.MustCompile(`eps: [0-9.e+-]+`).ReplaceAllStringFunc(s, func(m string) string {
		v, err := strconv.ParseFloat(strings.TrimPrefix(m, "eps: "), 32)
		if err != nil {
			return m
		}
		return "eps: " + strconv.FormatFloat(v, 'g', -1, 32)
	})
}

// TestMMProjPlan: a vision fixture's text GGUF with its mmproj file plans
// the same graph as its safetensors folder: the same family, config and
// emitted module (the weights declared in the GGUF files' storage: F32,
// and Gemma 3's projection F16 as llama.cpp's converter keeps it).
func TestMMProjPlan(t *testing.T) {
	for _, name := range []string{"idefics3", "smolvlm", "gemma3"} {
		t.Run(name, func(t *testing.T) {
			dir, text, mmproj := visionTwin(t, name)
			want, err := NewPlan(dir, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := NewPlan(text, PlanOptions{MMProj: mmproj})
			if err != nil {
				t.Fatal(err)
			}
			if got.Family.Name != want.Family.Name {
				t.Fatalf("family %s, the folder's %s", got.Family.Name, want.Family.Name)
			}
			if len(got.Encoders) != 1 || len(got.Graph.Encoders) != 1 {
				t.Fatalf("encoders %v: want one image encoder", got.Encoders)
			}
			if len(got.Unread) > 0 {
				t.Errorf("unread GGUF tensors: %v", got.Unread)
			}
			gw, gerr := got.Graph.Encoders[0].Format(ir.FormatOptions{})
			ww, werr := want.Graph.Encoders[0].Format(ir.FormatOptions{})
			if gerr != nil || werr != nil {
				t.Fatal(gerr, werr)
			}
			if gw, ww = f32Eps(gw), f32Eps(ww); gw != ww {
				t.Errorf("encoder graph differs from the folder's:\n%s\n---\n%s", gw, ww)
			}
			for _, w := range want.Graph.Weights {
				if g, ok := got.Options.WeightDTypes[w.Name]; !ok || (g != want.Options.WeightDTypes[w.Name] && !strings.Contains(w.Name, "input_projection")) {
					t.Errorf("%s: GGUF storage %q, the folder's %q", w.Name, g, want.Options.WeightDTypes[w.Name])
				}
			}
		})
	}
}
