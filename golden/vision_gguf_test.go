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

// visionGGUFFixtures are the vision fixtures' GGUF + mmproj twins with the
// tolerances of their encoder rows and first-step logits.
var visionGGUFFixtures = []struct {
	name              string
	rowsTol, logitTol float64
	f32               bool // the mmproj rewritten with its F16 tensors F32, the checkpoint's values (f16Tensors)
}{
	{"idefics3", logitsTolerance, logitsTolerance, false},
	{"smolvlm", logitsTolerance, logitsTolerance, false},
	// llama.cpp stores Gemma 3's mm_input_projection F16 whatever the outtype.
	{"gemma3", 2e-3, 1e-3, false},
	// The same twin with that one tensor F32: HF's numbers again.
	{"gemma3", logitsTolerance, logitsTolerance, true},
	// Its legacy LLaVA converter stores the patch kernel and projector F16.
	{"llava", 3e-2, 5e-3, false},
	{"llava", logitsTolerance, logitsTolerance, true},
	// Qwen2VLVisionModel writes every tensor F32 (its patch kernel split in
	// two, stacked back): HF's numbers.
	{"qwen2_vl", logitsTolerance, logitsTolerance, false},
	// Qwen3VLVisionModel (Qwen3.5's tower) likewise, attn_qkv whole.
	{"qwen3_5", logitsTolerance, logitsTolerance, false},
	// The same tower beside a qwen35moe file: the mmproj goes to qwen3_5_moe_vision.
	{"qwen3_5_moe", logitsTolerance, logitsTolerance, false},
	// Qwen3-VL's tower with its DeepStack mergers (v.deepstack.{block},
	// renumbered to the mergers' order) beside a qwen3vl file, whose
	// n_deepstack_layers says how many decoder layers take their rows; and
	// beside a qwen3vlmoe file (the experts split and transposed back).
	// Qwen2.5-VL's tower (projector qwen2.5vl_merger) beside a qwen2vl
	// file: its window attention from n_wa_pattern and the window size
	// (the fixture's 16 pixels written as an extension key).
	{"qwen2_5_vl", logitsTolerance, logitsTolerance, false},
	// Pixtral's tower (LlavaVisionModel: q/k rows permuted) beside a llama
	// file named mistral (Pixtral-12B's LLaVA), and with Mistral 3's
	// projector (mm.input_norm, mm.patch_merger) beside a mistral3 file.
	{"pixtral", logitsTolerance, logitsTolerance, false},
	{"mistral3", logitsTolerance, logitsTolerance, false},
	{"qwen3_vl", logitsTolerance, logitsTolerance, false},
	{"qwen3_vl_moe", logitsTolerance, logitsTolerance, false},
	// LFM2-VL's SigLIP2 tower (LFM2VLModel: the patch embedding as a
	// Conv2d kernel, the projector's LayerNorm as mm.input_norm) beside an
	// lfm2 file.
	{"lfm2_vl", logitsTolerance, logitsTolerance, false},
}

// f16Tensors are the tensors llama.cpp's converters store F16 in an F32
// mmproj file, by fixture: GGUF name -> the checkpoint's name.
var f16Tensors = map[string]map[string]string{
	"gemma3": {"mm.input_projection.weight": "multi_modal_projector.mm_input_projection_weight"},
	"llava": {
		"v.patch_embd.weight": "vision_tower.embeddings.patch_embedding.weight",
		"mm.0.weight":         "multi_modal_projector.linear_1.weight",
		"mm.2.weight":         "multi_modal_projector.linear_2.weight",
	},
}

// TestVisionGGUF: each vision fixture's text GGUF with its mmproj
// (driver.PlanOptions.MMProj) runs its cases as the folder does, tokens
// equal to the HF oracle's, the engine too (one slot: requests wait for
// it).
func TestVisionGGUF(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	for _, fx := range visionGGUFFixtures {
		name := fx.name
		if fx.f32 {
			name += "_f32"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("testdata", "vision", fx.name)
			text := testmodels.GGUFTwin(t, filepath.Join(dir, "model.f32.gguf"))
			mmproj := testmodels.GGUFTwin(t, filepath.Join(dir, "mmproj.f32.gguf"))
			if fx.f32 {
				mmproj = f32Tensors(t, dir, mmproj, f16Tensors[fx.name])
			}
			want := readVisionOracle(t, dir)
			// One slot: the GGUF pair differs from the folder in where its
			// weights come from, not in the lowering that TestVisionExecution
			// runs batched in two slots (this saves each pair's decode of two
			// sequences and slot copies, about a third of its text compile).
			opts := execOptions(t, dir)
			opts.Plan.Lower.Slots, opts.Plan.Lower.DecodeBatches = 1, []int64{1}
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

// f32Tensors writes a copy of an mmproj twin with tensors (GGUF name ->
// checkpoint name) F32, the checkpoint's values.
func f32Tensors(t *testing.T, dir, mmproj string, tensors map[string]string) string {
	t.Helper()
	ts, err := weights.OpenFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "mmproj.all-f32.gguf")
	testmodels.RewriteGGUF(t, mmproj, out, func(e *testmodels.GGUFEdit) {
		for i := range e.Tensors {
			hf, ok := tensors[e.Tensors[i].Name]
			if !ok {
				continue
			}
			w, err := ts[hf].Read()
			if err != nil {
				t.Fatal(err)
			}
			e.Tensors[i].Type, e.Tensors[i].Data = gguf.F32, w.Data
		}
	})
	return out
}
