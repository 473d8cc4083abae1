package driver

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/internal/testmodels"
)

// visionTwin returns a vision fixture's folder and its text and mmproj twins.
func visionTwin(t *testing.T, name string) (dir, text, mmproj string) {
	dir = filepath.Join("..", "golden", "testdata", "vision", name)
	return dir, testmodels.GGUFTwin(t, filepath.Join(dir, "model.f32.gguf")), testmodels.GGUFTwin(t, filepath.Join(dir, "mmproj.f32.gguf"))
}

// f32Eps rounds eps attributes to float32, as GGUF stores them.
func f32Eps(s string) string {
	return regexp.MustCompile(`eps: [0-9.e+-]+`).ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.ParseFloat(m[5:], 32)
		return "eps: " + strconv.FormatFloat(v, 'g', -1, 32)
	})
}

// TestMMProjPlan: a vision fixture's text GGUF with its mmproj file plans
// its folder's family and encoder graph, every weight present.
func TestMMProjPlan(t *testing.T) {
	for _, name := range []string{"idefics3", "smolvlm", "gemma3", "llava", "qwen2_vl"} {
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
			if got.Family.Name != want.Family.Name || len(got.Graph.Encoders) != 1 || len(got.Unread) > 0 {
				t.Fatalf("family %s (the folder's %s), %d encoders, unread %v", got.Family.Name, want.Family.Name, len(got.Graph.Encoders), got.Unread)
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
				// (llama.cpp keeps some F16 in F32 files: Gemma 3's projection, LLaVA's patch kernel and projector;
				// --outtype f32 widens a bf16 checkpoint, Qwen2-VL's fixture, exactly)
				if g, ok := got.Options.WeightDTypes[w.Name]; !ok || (g != want.Options.WeightDTypes[w.Name] && g != "f16" && (g != "f32" || want.Options.WeightDTypes[w.Name] != "bf16")) {
					t.Errorf("%s: GGUF storage %q, the folder's %q", w.Name, g, want.Options.WeightDTypes[w.Name])
				}
			}
		})
	}
}

// TestMMProjErrors: a bad mmproj file is an error naming the file and the key or tensor.
func TestMMProjErrors(t *testing.T) {
	_, text, mmproj := visionTwin(t, "idefics3")
	_, gemmaText, gemmaMMProj := visionTwin(t, "gemma3")
	_, qwenText, qwenMMProj := visionTwin(t, "qwen2_vl")
	tmp := t.TempDir()
	editedFrom := func(src, name string, edit func(e *testmodels.GGUFEdit)) string {
		path := filepath.Join(tmp, name)
		testmodels.RewriteGGUF(t, src, path, edit)
		return path
	}
	edited := func(name string, edit func(e *testmodels.GGUFEdit)) string { return editedFrom(mmproj, name, edit) }
	cases := []struct {
		name         string
		text, mmproj string
		want         []string
	}{
		{"unknown projector type", text, edited("cogvlm.gguf", func(e *testmodels.GGUFEdit) { e.Set("clip.projector_type", "cogvlm") }),
			[]string{`clip.projector_type "cogvlm": no family reads this mmproj file`, "gemma3_vision", "idefics3"}},
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
		{"qwen2vl: a fourth M-RoPE section", editedFrom(qwenText, "sections.gguf", func(e *testmodels.GGUFEdit) {
			e.Set("qwen2vl.rope.dimension_sections", []int32{2, 3, 2, 1})
		}), qwenMMProj, []string{"qwen2_vl.arch:", "qwen2vl.rope.dimension_sections is [2, 3, 2, 1]: Qwen2-VL's M-RoPE has three sections"}},
		{"qwen2vl: one patch kernel", qwenText, editedFrom(qwenMMProj, "kernel.gguf", func(e *testmodels.GGUFEdit) { e.Drop("v.patch_embd.weight.1") }),
			[]string{`"visual.patch_embed.proj.weight" is made of 2 stacked tensors, but the file has no part 1`}},
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
