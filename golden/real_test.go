package golden

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/chat"

	"github.com/archc/archc/internal/testmodels"
)

// realOracle is golden/<model>/oracle.json as written by gen_oracle.py:
// transformers fp32 greedy generation on the same GGUF.
type realOracle struct {
	Messages     [][]chat.Message `json:"messages"`
	Prompts      [][]int32        `json:"prompts"`
	Tokens       [][]int32        `json:"tokens"`
	MaxNewTokens int              `json:"max_new_tokens"`
	EOS          []int32          `json:"eos_token_id"`
	ChatTemplate string           `json:"chat_template"` // "gguf" when the GGUF's own template made the prompts
}

// TestRealCheckpoints is the real-checkpoint tier: archc's greedy ids on
// SmolLM2-135M-Instruct (Q4_1) and Gemma-3-270M (Q4_K_M) GGUFs equal
// transformers' fp32 ids on the same files, for 3 chat prompts × 32 tokens.
// (Gemma 3 compiles the one prefill bucket its 16-token prompts use.)
// For SmolLM2 the prompt ids also come from archc's tokenizer and the GGUF's
// chat template and must equal the oracle's.
func TestRealCheckpoints(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	for _, name := range []string{"smollm2", "gemma3"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			paths := []string{testmodels.GGUF(t, name)}
			data, err := os.ReadFile(filepath.Join(name, "oracle.json"))
			if err != nil {
				t.Fatal(err)
			}
			var o realOracle
			if err := json.Unmarshal(data, &o); err != nil {
				t.Fatal(err)
			}
			if o.ChatTemplate == "gguf" {
				text, err := rt.LoadText(paths[0])
				if err != nil {
					t.Fatal(err)
				}
				for i, msgs := range o.Messages {
					var system, user string
					for _, m := range msgs {
						switch m.Role {
						case "system":
							system = m.Content
						case "user":
							user = m.Content
						}
					}
					ids, err := text.EncodePrompt(user, true, system)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(o.Prompts[i], ids); diff != "" {
						t.Errorf("prompt %d: chat-templated ids differ from transformers' (-oracle +archc):\n%s", i, diff)
					}
				}
			}
			ctx := context.Background()
			var opts launch.Options
			if name == "gemma3" {
				// Its prompts are 16 tokens: prefill_16 and decode_1 are
				// the entry points it calls; prefill_64 (a default bucket)
				// would be compiled for nothing. 512 positions: the shape of
				// cmd/infer's Gemma 3 serve test (`--max-batch 1 --max-len 512
				// --prefill-buckets 16`), which shares the compiled module.
				opts.Plan.Lower.PrefillBuckets = []int64{16}
				opts.Plan.Lower.MaxLen = 512
			}
			if name == "smollm2" {
				// The serving shape `infer serve --max-batch 4 --max-len 1024`
				// compiles (cmd/infer's serve test shares the compiled module).
				opts.Plan.Lower.Slots, opts.Plan.Lower.MaxLen = 4, 1024
				opts.Plan.Lower.DecodeBatches = []int64{1, 2, 4}
			}
			m, err := launch.Open(ctx, paths[0], opts)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for i, prompt := range o.Prompts {
				g, err := m.Generate(ctx, prompt, rt.GenerateOptions{MaxTokens: o.MaxNewTokens, StopTokens: o.EOS})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(o.Tokens[i], g.Tokens); diff != "" {
					t.Errorf("prompt %d: greedy ids differ from transformers fp32 (-oracle +archc):\n%s", i, diff)
				}
			}
			if name == "smollm2" {
				t.Run("engine", func(t *testing.T) { checkEngine(t, m, o.Prompts, o.Tokens, o.MaxNewTokens, o.EOS) })
			}
		})
	}
}
