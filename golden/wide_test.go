package golden

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/lower"
)

// TestWideHiddenCompiles compiles a one-layer Llama of hidden size 4096
// (Llama-3-8B's width; f32, no checkpoint needed) with a 512-token prefill
// bucket for the host CPU. IREE 3.13 fused the embedding's gather into the
// first norm's reduction and put an 8-row tile of it on the stack (128 KiB
// at this width), which the CPU backend refuses past 32 KiB: every model of
// hidden size 2048 or more failed to compile until lower's embedding ended
// in an optimization barrier.
func TestWideHiddenCompiles(t *testing.T) {
	testmodels.NeedIREE(t)
	t.Parallel() // compileHeavy
	dir := t.TempDir()
	cfg, err := json.Marshal(map[string]any{
		"model_type": "llama", "vocab_size": 1000, "hidden_size": 4096, "intermediate_size": 256,
		"num_hidden_layers": 1, "num_attention_heads": 32, "num_key_value_heads": 8,
		"max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "tie_word_embeddings": false,
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	o := lower.DefaultOptions()
	o.MaxLen, o.PrefillBuckets, o.DecodeBatches = 1024, []int64{512}, []int64{1}
	p, err := driver.NewPlan(path, driver.PlanOptions{Lower: o})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if _, _, err := ireetool.Compile(ctx, p.MLIR, ireetool.CompileOptions{}); err != nil {
		t.Fatal(err)
	}
}
