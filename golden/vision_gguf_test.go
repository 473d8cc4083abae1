package golden

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/archc/archc/driver/weights"
	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testmodels"
)

// visionGGUFFixtures are the vision fixtures with GGUF + mmproj twins
// (gguf_convert.py VISION_TWINS, listed in testdata/gguf.sha256), with the
// tolerances of their encoder rows against HF's image features and of
// their first-step logits against the oracle's. LLaVA's CLIP tower has no
// mmproj converter in llama.cpp's convert_hf_to_gguf.py, so no twin.
var visionGGUFFixtures = []struct {
	name              string
	rowsTol, logitTol float64
	f32Projection     bool // the mmproj rewritten with Gemma 3's projection in F32, the checkpoint's values
}{
	{"idefics3", logitsTolerance, logitsTolerance, false},
	{"smolvlm", logitsTolerance, logitsTolerance, false},
	// llama.cpp's converter stores Gemma 3's mm_input_projection F16
	// whatever the outtype (Gemma3VisionModel.tensor_force_quant): the
	// rows are HF's with the projection rounded to half precision
	// (relative error 2⁻¹¹ per weight), and the logits move with them.
	{"gemma3", 2e-3, 1e-3, false},
	// The same twin with that one tensor F32: HF's numbers again.
	{"gemma3", logitsTolerance, logitsTolerance, true},
}

// TestVisionGGUF: each vision fixture's text GGUF twin with its mmproj
// twin (driver.PlanOptions.MMProj, infer's --mmproj) runs as the
// safetensors folder does: encoder rows within tolerance of HF's image
// features, greedy tokens equal to the HF fp32 oracle with the images,
// first-step logits within tolerance, and the engine (image requests
// batched beside text ones) token-exact.
func TestVisionGGUF(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	for _, fx := range visionGGUFFixtures {
		name := fx.name
		if fx.f32Projection {
			name += "_f32_projection"
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "vision", fx.name)
			text := testmodels.GGUFTwin(t, filepath.Join(dir, "model.f32.gguf"))
			mmproj := testmodels.GGUFTwin(t, filepath.Join(dir, "mmproj.f32.gguf"))
			if fx.f32Projection {
				mmproj = f32Projection(t, dir, mmproj)
			}
			want := readVisionOracle(t, dir)
			opts := execOptions()
			opts.Plan.MMProj = mmproj
			m, err := launch.Open(context.Background(), text, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			encoded := checkVisionCases(t, m, dir, want, fx.rowsTol, fx.logitTol)
			t.Run("engine", func(t *testing.T) { checkVisionEngine(t, m, want, encoded) })
		})
	}
}

// f32Projection writes a copy of Gemma 3's mmproj twin whose
// mm.input_projection.weight is F32, the checkpoint's values (HF's
// [vision width, text width] is the file's row-major layout).
func f32Projection(t *testing.T, dir, mmproj string) string {
	t.Helper()
	ts, err := weights.OpenFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := ts["multi_modal_projector.mm_input_projection_weight"].Read()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "mmproj.f32-projection.gguf")
	testmodels.RewriteGGUF(t, mmproj, out, func(e *testmodels.GGUFEdit) {
		for i := range e.Tensors {
			if e.Tensors[i].Name == "mm.input_projection.weight" {
				e.Tensors[i].Type, e.Tensors[i].Data = gguf.F32, w.Data
			}
		}
	})
	return out
}
