package driver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/driver/kernels"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/internal/testckpt"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/lower"
)

func TestPlanErrors(t *testing.T) {
	const norm = "model.layers.1.input_layernorm.weight"
	for _, c := range []struct {
		name    string
		edit    func(map[string]testckpt.STTensor)
		editCfg func(map[string]any)
		want    []string // substrings of the error
	}{
		{"unknown model_type", nil, func(c map[string]any) { c["model_type"] = "frobnicator" }, []string{`unsupported model_type "frobnicator"`, "llama"}},
		{"no model_type", nil, func(c map[string]any) { delete(c, "model_type") }, []string{"no model_type"}},
		{"unsupported family", nil, func(c map[string]any) { c["model_type"] = "bert" }, []string{`unsupported model_type "bert"`}},
		{"mixture of experts without experts", nil, func(c map[string]any) { c["model_type"] = "qwen2_moe" }, []string{`lacks required field "num_experts"`, "qwen2_moe.arch:"}},
		{"missing config field", nil, func(c map[string]any) { delete(c, "hidden_size") }, []string{`lacks required field "hidden_size"`, "llama.arch:"}},
		{"config field of wrong type", nil, func(c map[string]any) { c["num_hidden_layers"] = "two" }, []string{`"num_hidden_layers"`, "want int"}},
		{"missing tensor", func(ts map[string]testckpt.STTensor) { delete(ts, norm) }, nil, []string{`missing tensor "` + norm + `"`}},
		{"wrong shape", func(ts map[string]testckpt.STTensor) {
			ts[norm] = testckpt.STTensor{DType: "F32", Shape: []int64{32}, Data: make([]byte, 32*4)}
		}, nil, []string{norm, "shape [32]", "[64]"}},
		{"unsupported dtype", func(ts map[string]testckpt.STTensor) {
			ts[norm] = testckpt.STTensor{DType: "I8", Shape: []int64{64}, Data: make([]byte, 64)}
		}, nil, []string{norm, "I8"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testckpt.FixtureCopy(t, c.edit, c.editCfg)
			_, err := NewPlan(dir, PlanOptions{})
			if err == nil {
				t.Fatal("NewPlan succeeded on bad input")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestPlanWeightsFile: a checkpoint's weights file given as the model is
// refused naming its folder (it was read as config.json: "invalid JSON").
func TestPlanWeightsFile(t *testing.T) {
	dir := testckpt.FixtureCopy(t, nil, nil)
	_, err := NewPlan(filepath.Join(dir, "model.safetensors"), PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "not a model folder, a config.json or a GGUF file") || !strings.Contains(err.Error(), "give its folder ("+dir+")") {
		t.Errorf("NewPlan on model.safetensors: %v", err)
	}
}

func TestPlanBadArch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.arch")
	src := "arch bad {\n  match model_type \"llama\"\n  x = rms_nrom(tokens)\n  logits = x\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewPlan(fixture, PlanOptions{Arch: path})
	if err == nil || !strings.Contains(err.Error(), path+":3:7: unknown primitive \"rms_nrom\" (did you mean rms_norm?)") {
		t.Fatalf("got %v, want a positioned unknown-primitive error", err)
	}
}

// fixture is the tiny llama oracle fixture.
var fixture = testmodels.Fixture("llama-tied")

// TestNewGraph: NewGraph is NewPlan up to the IR, the one path from a model
// to its graph (archc ir uses it): the same family and graph, from a
// folder, a config.json or a GGUF file, without reading weights (a folder
// whose checkpoint lacks a tensor still gives its graph, which NewPlan
// refuses) or lowering.
func TestNewGraph(t *testing.T) {
	const norm = "model.layers.1.input_layernorm.weight"
	dir := testckpt.FixtureCopy(t, func(ts map[string]testckpt.STTensor) { delete(ts, norm) }, nil)
	p, err := NewGraph(dir, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Family.Name != "llama" || p.Dir != dir || p.GGUF != nil || p.Graph == nil || p.Config["hidden_size"] != int64(64) {
		t.Errorf("folder: family %s, dir %q, gguf %v, config hidden_size %v", p.Family.Name, p.Dir, p.GGUF, p.Config["hidden_size"])
	}
	if p.Module != nil || p.MLIR != nil || p.Weights != nil {
		t.Error("NewGraph lowered the graph or read the weights")
	}
	if _, err := NewPlan(dir, PlanOptions{}); err == nil || !strings.Contains(err.Error(), norm) {
		t.Errorf("NewPlan on the same folder: %v, want the missing tensor %s", err, norm)
	}
	want, err := p.Graph.Format(ir.FormatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NewGraph(filepath.Join(dir, "config.json"), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := cfg.Graph.Format(ir.FormatOptions{}); got != want || cfg.Dir != "" {
		t.Errorf("config.json: dir %q, same graph as the folder's: %v", cfg.Dir, got == want)
	}
	g, err := NewGraph(testmodels.GGUFTwin(t, filepath.Join(fixture, "model.f32.gguf")), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.GGUF == nil || g.Family.Name != "llama" || g.Dir != "" || len(g.Graph.Weights) != len(p.Graph.Weights) {
		t.Errorf("gguf: family %s, dir %q, %d weights (folder: %d)", g.Family.Name, g.Dir, len(g.Graph.Weights), len(p.Graph.Weights))
	}
	if _, err := NewGraph(filepath.Join(t.TempDir(), "none"), PlanOptions{}); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("missing model: %v", err)
	}
}

// TestGPUPlanDefaults: a plan for a GPU takes the GPU batch and chunk
// defaults (clipped to the KV-cache length), as many slots as its largest
// decode batch and the GPU KV budget; explicit shapes win; CPU kernels are
// refused.
func TestGPUPlanDefaults(t *testing.T) {
	gpu, err := fitOptions(lower.Options{}, 4096, 1024, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gpu.DecodeBatches, GPUDecodeBatches) || !slices.Equal(gpu.PrefillBuckets, GPUPrefillBuckets) || gpu.Slots != 64 || gpu.MaxLen != 4096 {
		t.Errorf("GPU defaults: %+v", gpu)
	}
	// 64 slots of 64 KiB per token fit 16 GiB at 4096 tokens, 1 GiB at 256.
	if o, _ := fitOptions(lower.Options{}, 0, 64<<10, 0, true); o.MaxLen != 4096 {
		t.Errorf("GPU budget: max_len %d, want 4096", o.MaxLen)
	}
	if o, _ := fitOptions(lower.Options{Slots: 64, DecodeBatches: []int64{64}}, 0, 64<<10, 0, false); o.MaxLen != 256 {
		t.Errorf("CPU budget: max_len %d, want 256", o.MaxLen)
	}
	o, _ := fitOptions(lower.Options{DecodeBatches: []int64{1, 8}}, 300, 1024, 0, true)
	if o.Slots != 8 || !slices.Equal(o.PrefillBuckets, []int64{16, 128}) || o.MaxLen != 300 {
		t.Errorf("GPU with decode 1,8 and max_len 300: %+v; want 8 slots, chunks 16,128", o)
	}
	// A state-space model's states count: 340 MB per slot (a
	// Mamba2-2.7B shape) halves the GPU's 64 default slots to 16 (5.4 GB,
	// under half the 16 GiB), with the decode batches past them dropped.
	ssm, _ := fitOptions(lower.Options{}, 0, 0, 340<<20, true)
	if ssm.Slots != 16 || !slices.Equal(ssm.DecodeBatches, []int64{1, 4, 16}) {
		t.Errorf("GPU defaults for 340 MB of state per slot: %d slots, batches %v; want 16, [1 4 16]", ssm.Slots, ssm.DecodeBatches)
	}
	// With KV too, the default length shrinks to fit both in the budget:
	// 1 GiB less 4 × 200 MiB of state leaves 224 MiB, 896 tokens of
	// 4 × 64 KiB, stepped down to 768.
	if o, _ := fitOptions(lower.Options{Slots: 4, DecodeBatches: []int64{1}}, 0, 64<<10, 200<<20, false); o.MaxLen != 768 {
		t.Errorf("CPU budget with 200 MiB of state per slot: max_len %d, want 768", o.MaxLen)
	}
	cpu, _ := fitOptions(lower.Options{}, 4096, 1024, 0, false)
	if !slices.Equal(cpu.DecodeBatches, []int64{1}) || cpu.Slots != 1 {
		t.Errorf("CPU defaults changed: %+v", cpu)
	}
	_, err = NewPlan("../golden/testdata/llama-tied", PlanOptions{GPU: true, Lower: lower.Options{Kernels: &lower.Kernels{Variant: "avx2"}}})
	if err == nil || !strings.Contains(err.Error(), "CPU code") {
		t.Errorf("GPU plan with kernels: %v", err)
	}
}

// TestBlockBuckets: a default plan gets a prefill bucket that holds an
// encoder's placeholder run when the run is an attention block (Gemma 3's
// 256 image tokens, past the CPU defaults 16 and 64), and no other.
func TestBlockBuckets(t *testing.T) {
	gemma := []abi.Encoder{{Name: "image", Rows: 256, Blocks: true}}
	for _, tc := range []struct {
		name    string
		buckets []int64
		encs    []abi.Encoder
		maxLen  int64
		want    []int64
	}{
		{"gemma3's 256 tokens", []int64{16, 64}, gemma, 4096, []int64{16, 64, 256}},
		{"a run of 200 rounds to 256", []int64{16, 64}, []abi.Encoder{{Rows: 200, Blocks: true}}, 4096, []int64{16, 64, 256}},
		{"a bucket already holds it", []int64{16, 512}, gemma, 4096, []int64{16, 512}},
		{"runs that are no blocks (SmolVLM)", []int64{16, 64}, []abi.Encoder{{Rows: 64 * 13}}, 4096, []int64{16, 64}},
		{"a cache shorter than the run", []int64{16, 64}, gemma, 200, []int64{16, 64}},
		{"a cache of the run's length", []int64{16, 64}, []abi.Encoder{{Rows: 250, Blocks: true}}, 250, []int64{16, 64, 250}},
		{"no encoder", []int64{16, 64}, nil, 4096, []int64{16, 64}},
	} {
		if got := blockBuckets(tc.buckets, tc.encs, tc.maxLen); !slices.Equal(got, tc.want) {
			t.Errorf("%s: buckets %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestKernelBuckets: a default plan whose kernels ask for a long prefill
// chunk (the AMX and AVX-512 builds) gets it, within the KV-cache length;
// kernels without one, and a plan at a shorter length, keep the defaults.
func TestKernelBuckets(t *testing.T) {
	long := &lower.Kernels{PrefillBucket: 256}
	for _, c := range []struct {
		k      *lower.Kernels
		maxLen int64
		want   []int64
	}{
		{long, 4096, []int64{16, 64, 256}},
		{long, 256, []int64{16, 64, 256}},
		{long, 255, []int64{16, 64}},
		{&lower.Kernels{PrefillBucket: 32}, 4096, []int64{16, 64}},
		{&lower.Kernels{}, 4096, []int64{16, 64}},
		{nil, 4096, []int64{16, 64}},
	} {
		in := []int64{16, 64}
		if got := kernelBuckets(in, c.k, c.maxLen); !slices.Equal(got, c.want) || !slices.Equal(in, []int64{16, 64}) {
			t.Errorf("kernelBuckets(%v, bucket %v, max len %d) = %v (input now %v), want %v", in, c.k, c.maxLen, got, in, c.want)
		}
	}
	for _, v := range kernels.Variants {
		if want := map[string]int64{"amx": kernels.LongPrefill, "avx512": kernels.LongPrefill}[v.Name]; v.PrefillBucket != want {
			t.Errorf("variant %s (%s): prefill bucket %d, want %d", v.Name, v.Precision, v.PrefillBucket, want)
		}
	}
}
