package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/archc/archc/driver/kernels"
	"github.com/archc/archc/internal/clitest"
	"github.com/archc/archc/internal/testmodels"
)

const fixture = "../../golden/testdata/llama-tied"

func TestGenerateErrors(t *testing.T) {
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"bad prompt ids", []string{"generate", "--model", fixture, "--prompt-ids", "1,x"}, `"x" is not a token id`},
		{"no model", []string{"generate", "--model", "/no/such/dir", "--prompt-ids", "1"}, "/no/such/dir"},
		{"token outside vocab", []string{"generate", "--model", fixture, "--prompt-ids", "1,999"}, "token id 999 is outside the vocabulary"},
		{"stop token outside vocab", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--stop-ids", "999999"}, "--stop-ids: token id 999999 is outside the vocabulary"},
		{"too long", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--max-tokens", "5000"}, "exceed the KV-cache length; shorten the prompt, lower --max-tokens or raise --max-len"}, // rt's option.Error in infer's flags
		{"negative max tokens", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--max-tokens=-1"}, "--max-tokens -1"},
		{"threads on local-sync", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--device", "local-sync", "--threads", "2"}, "local-sync device runs on the calling thread"},
		{"threads on a GPU", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--device", "cuda", "--threads", "2"}, "--threads 2: a thread count is for the local-task device, not cuda"},
		{"CPU kernels on a GPU", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--device", "cuda", "--kernels", "avx2"}, "--kernels avx2: archc's matmul kernels are CPU code"},
		{"mtp without MTP layers", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--speculative", "mtp"}, "llama-tied (family llama) has no multi-token-prediction (MTP) layers"},
		// deepseek_v3's fixture declares one MTP layer (num_nextn_predict_layers 1) but its checkpoint carries none, as many published ones.
		{"mtp declared, tensors dropped", []string{"generate", "--model", "../../golden/testdata/deepseek_v3", "--prompt-ids", "1", "--speculative", "mtp"}, "its config declares multi-token-prediction (MTP) layers but the checkpoint has no tensor \"model.layers.3.enorm.weight\""},
		{"unknown device", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--device", "tpu"}, "--device must be one of"},
		{"runtime flag without dashes", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--iree-flag=task_worker_spin_us=1"}, "must start with --"},
		{"image with prompt ids", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--image", "main_test.go"}, "--image need --prompt TEXT"},
		{"image without chat", []string{"generate", "--model", fixture, "--prompt", "hi", "--image", "main_test.go"}, "--image needs --chat"},
		{"image to a text model", []string{"generate", "--model", fixture, "--prompt", "hi", "--chat", "--image", "main_test.go"}, "(family llama) reads text only (it is a text model); send no --image"},
		{"image size past the limit", []string{"generate", "--model", "../../golden/testdata/vision/qwen2_vl", "--prompt", "hi", "--chat", "--image", "../../golden/testdata/vision/qwen2_vl/images/rgb_40x60.png", "--image-sizes", "1000000000"}, "encoder size 1000000000 (infer's --image-sizes) is past the largest archc compiles, 65536 rows"},
		{"image size the encoder cannot take", []string{"generate", "--model", "../../golden/testdata/vision/qwen2_vl", "--prompt", "hi", "--chat", "--image", "../../golden/testdata/vision/qwen2_vl/images/rgb_40x60.png", "--image-sizes", "30"}, "encoder image at size 30 (infer's --image-sizes: each size must suit the encoder"},
		{"image to a text-only VL model", []string{"generate", "--model", "../../golden/testdata/qwen3_vl", "--prompt", "hi", "--chat", "--image", "main_test.go"}, "(family qwen3_vl) reads text only (its config does not meet the match condition of qwen3_vl_vision, which reads images of model_type qwen3_vl"},
		{"a Qwen3-VL mmproj beside a Qwen3.5 text file", []string{"generate", "--model", "../../golden/testdata/vision/qwen3_5/model.f32.gguf", "--mmproj", "../../golden/testdata/vision/qwen3_vl/mmproj.f32.gguf", "--prompt", "hi", "--chat", "--image", "../../golden/testdata/vision/qwen3_vl/images/rgb_40x60.png"}, "vision_config.deepstack_visual_indexes is [0, 1]: Qwen3_5VisionModel has no DeepStack mergers"},
		{"image to a VL config whose tower has no blocks", []string{"generate", "--model", "../../golden/testdata/qwen3_5", "--prompt", "hi", "--chat", "--image", "main_test.go"}, "(family qwen3_5) reads text only (its config does not meet the match condition of qwen3_5_vision, which reads images of model_type qwen3_5"},
		{"missing image file", []string{"generate", "--model", fixture, "--prompt", "hi", "--chat", "--image", "no-such.png"}, "no-such.png"},
		{"mmproj with a folder", []string{"generate", "--model", fixture, "--prompt", "hi", "--mmproj", "main_test.go"}, "main_test.go goes with a text model's .gguf file"},
		{"image to a GGUF without mmproj", []string{"generate", "--model", fixture + "/model.f32.gguf", "--prompt", "hi", "--chat", "--image", "main_test.go"}, "images need its mmproj file"},
		{"one-token drafts on a recurrent model", []string{"generate", "--model", "../../golden/testdata/mamba", "--prompt-ids", "1", "--speculative", "ngram", "--draft-max", "1"}, "golden/testdata/mamba carries a recurrent or convolution state, whose drafts have an even length"},
		// int8 is arithmetic of the kernels: on an f32 checkpoint (no weight they read) it is refused, not ignored (where the CPU has no int8 kernels, Select refuses it first).
		{"int8 on f32 weights", []string{"generate", "--model", fixture, "--prompt-ids", "1", "--precision", "int8"}, "precision int8"},
		{"mmproj of another family", []string{"generate", "--model", "../../golden/testdata/vision/gemma3/model.f32.gguf", "--prompt", "hi", "--chat", "--image", "main_test.go", "--mmproj", visionFixture + "/mmproj.f32.gguf"}, "belongs to family idefics3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.name, "token") || c.name == "too long" || c.name == "runtime flag without dashes" || c.name == "mmproj of another family" {
				testmodels.NeedIREE(t)
			}
			want := c.want
			if c.name == "int8 on f32 weights" {
				if _, err := kernels.Select("auto", kernels.Int8); err == nil {
					want = "so every weight goes through the plain lowering in f32 and the mode would change nothing"
				}
			}
			r := clitest.Run(t, bin, c.args...)
			if r.Code == 0 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "panic") {
				t.Fatalf("code %d, stderr %q; want a non-zero exit mentioning %q", r.Code, r.Stderr, want)
			}
		})
	}
}

func TestGenerateJSON(t *testing.T) {
	testmodels.NeedIREE(t)
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	r := clitest.Run(t, bin, "generate", "--model", fixture, "--prompt-ids", "1,184,106,66,98,250,217", "--max-tokens", "4", "--json")
	if r.Code != 0 {
		t.Fatalf("generate: %q", r.Stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.Stdout)
	}
	for _, k := range []string{"prompt_tokens", "tokens", "load_s", "compile_s", "prefill_tokens_per_s", "decode_tokens_per_s"} {
		if _, ok := out[k]; !ok {
			t.Errorf("--json output lacks %q", k)
		}
	}
	// The oracle's first four tokens for this prompt (golden/testdata/llama-tied/oracle.json).
	if got, _ := json.Marshal(out["tokens"]); string(got) != "[6,92,211,210]" {
		t.Errorf("tokens = %s, want [6,92,211,210]", got)
	}
}

func TestTokenizeVocabOnlyGGUF(t *testing.T) {
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	// First case of rt/tokenizer/testdata/vocab/ggml-vocab-llama-bpe.gguf.inp/.out.
	r := clitest.Run(t, bin, "tokenize", "--model", testmodels.Vocab(t, "ggml-vocab-llama-bpe.gguf"), "--text", "ied 4 ½ months", "--json")
	if r.Code != 0 {
		t.Fatalf("tokenize: %q", r.Stderr)
	}
	var out struct{ IDs []int32 }
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("stdout %q: %v", r.Stdout, err)
	}
	if got, _ := json.Marshal(out.IDs); string(got) != "[1142,220,19,220,27154,4038]" {
		t.Errorf("ids = %s, want [1142,220,19,220,27154,4038]", got)
	}
	if r := clitest.Run(t, bin, "tokenize", "--model", "/no/such.gguf", "--text", "x"); r.Code == 0 || !strings.Contains(r.Stderr, "/no/such.gguf") {
		t.Errorf("missing model: code %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestGenerateControls: stop strings end generation and are not shown,
// logprobs come with --json, a penalty changes the greedy text (Gemma 3
// 270M, in the shape golden's TestRealCheckpoints and the Gemma 3 serve
// test compile, `--max-len 512 --prefill-buckets 16`: one module for the
// three; a SmolLM2 module of its own was 63 s of CPU in a cold CI run).
func TestGenerateControls(t *testing.T) {
	testmodels.NeedIREE(t)
	model := testmodels.GGUF(t, "gemma3")
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	gen := func(args ...string) map[string]any {
		t.Helper()
		r := clitest.Run(t, bin, append([]string{"generate", "--model", model, "--prompt", "1, 2, 3, 4,", "--max-tokens", "16", "--max-len", "512", "--prefill-buckets", "16", "--json", "-q"}, args...)...)
		if r.Code != 0 {
			t.Fatalf("generate %v: %s", args, r.Stderr)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	plain := gen()
	text := plain["text"].(string)
	i := strings.Index(text, " 8")
	if i < 0 {
		t.Fatalf("greedy text %q has no \" 8\" to stop at", text)
	}
	stopped := gen("--stop", " 8")
	if stopped["text"] != text[:i] || stopped["finish_reason"] != "stop" {
		t.Errorf("--stop \" 8\": text %q finish %v, want %q and stop", stopped["text"], stopped["finish_reason"], text[:i])
	}
	lp := gen("--logprobs", "2")
	entries, _ := lp["logprobs"].([]any)
	if len(entries) != len(lp["tokens"].([]any)) {
		t.Fatalf("%d logprob entries for %d tokens", len(entries), len(lp["tokens"].([]any)))
	}
	first := entries[0].(map[string]any)
	if top := first["top_logprobs"].([]any); len(top) != 2 || first["logprob"].(float64) > 0 {
		t.Errorf("logprob entry %v", first)
	}
	if pen := gen("--repetition-penalty", "3"); pen["text"] == text {
		t.Errorf("--repetition-penalty 3 left the greedy text unchanged: %q", text)
	}
}

// TestGenerateNamesUnreadTensors: a GGUF file with tensors the family's
// graph does not read (the glm4_moe twin's multi-token-prediction layer, as
// llama.cpp writes it) generates, and infer says which tensors it left out.
func TestGenerateNamesUnreadTensors(t *testing.T) {
	testmodels.NeedIREE(t)
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	// One 16-token prefill chunk holds the 3 ids: the default 16 and 64 made
	// the module a third larger (722 KB of MLIR, 22 s in a cold CI run).
	r := clitest.Run(t, bin, "generate", "--model", testmodels.GGUFTwin(t, "../../golden/testdata/glm4_moe/model.f32.gguf"), "--prompt-ids", "1,2,3", "--max-tokens", "1", "--prefill-buckets", "16")
	if r.Code != 0 {
		t.Fatalf("generate: %q", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "not read (the graph does not use them") || !strings.Contains(r.Stderr, "blk.") {
		t.Errorf("stderr does not name the unread tensors: %q", r.Stderr)
	}
}
