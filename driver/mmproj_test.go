package driver

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/internal/testmodels"
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
	for _, name := range []string{"idefics3", "smolvlm", "gemma3", "llava"} {
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
				// (llama.cpp's converters store some tensors F16 whatever the
				// outtype: Gemma 3's projection, LLaVA's patch kernel and projector)
				if g, ok := got.Options.WeightDTypes[w.Name]; !ok || (g != want.Options.WeightDTypes[w.Name] && g != "f16") {
					t.Errorf("%s: GGUF storage %q, the folder's %q", w.Name, g, want.Options.WeightDTypes[w.Name])
				}
			}
		})
	}
}

// TestMMProjErrors: a bad mmproj file is an error naming the file, the
// key or tensor, and what to do, never a garbled model.
func TestMMProjErrors(t *testing.T) {
	_, text, mmproj := visionTwin(t, "idefics3")
	_, gemmaText, gemmaMMProj := visionTwin(t, "gemma3")
	tmp := t.TempDir()
	edited := func(name string, edit func(e *testmodels.GGUFEdit)) string {
		path := filepath.Join(tmp, name)
		testmodels.RewriteGGUF(t, mmproj, path, edit)
		return path
	}
	cases := []struct {
		name         string
		text, mmproj string
		want         []string
	}{
		{"unknown projector type", text, edited("pixtral.gguf", func(e *testmodels.GGUFEdit) { e.Set("clip.projector_type", "pixtral") }),
			[]string{`clip.projector_type "pixtral": no family reads this mmproj file`, "gemma3_vision", "idefics3"}},
		{"no projector type", text, edited("untyped.gguf", func(e *testmodels.GGUFEdit) { e.Drop("clip.projector_type") }),
			[]string{"clip.projector_type (absent): no family reads this mmproj file"}},
		{"projector of another family", text, gemmaMMProj,
			[]string{`model.f32.gguf: general.architecture "llama"`, "belongs to family gemma3_vision, whose text model is a gemma3 file"}},
		{"text file of another family", gemmaText, mmproj,
			[]string{`model.f32.gguf: general.architecture "gemma3"`, "belongs to family idefics3, whose text model is a llama file"}},
		{"missing tensor", text, edited("missing.gguf", func(e *testmodels.GGUFEdit) { e.Drop("v.blk.1.attn_q.weight") }),
			[]string{"idefics3.arch:", "missing.gguf: missing tensor \"model.vision_model.encoder.layers.1.self_attn.q_proj.weight\"", "image encoder"}},
		{"missing key", text, edited("nokey.gguf", func(e *testmodels.GGUFEdit) { e.Drop("clip.vision.block_count") }),
			[]string{"idefics3.arch:", `has no metadata "clip.vision.block_count"`}},
		{"unknown tensor", text, edited("extra.gguf", func(e *testmodels.GGUFEdit) {
			t := e.Tensors[0]
			t.Name = "v.blk.0.attn_qkv.weight"
			e.Tensors = append(e.Tensors, t)
		}), []string{`tensor "v.blk.0.attn_qkv.weight" has no Hugging Face name in family idefics3's gguf section`}},
		{"a text file as mmproj", text, text,
			[]string{`general.architecture "llama" is not an mmproj file's`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPlan(c.text, PlanOptions{MMProj: c.mmproj})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	dir, _, _ := visionTwin(t, "idefics3")
	if _, err := NewPlan(dir, PlanOptions{MMProj: mmproj}); err == nil || !strings.Contains(err.Error(), "goes with a text model's GGUF file") {
		t.Errorf("--mmproj with a folder: %v", err)
	}
}
