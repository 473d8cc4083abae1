package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/archc/archc/rt"
)

type generateCmd struct {
	Model       string   `required:"" help:"Model: a Hugging Face folder (config.json + safetensors + tokenizer) or a .gguf file." type:"path"`
	Prompt      string   `xor:"prompt" help:"Prompt text."`
	PromptIDs   string   `xor:"prompt" name:"prompt-ids" help:"Prompt token ids, comma-separated (e.g. 1,2,3); the output is ids too."`
	Chat        bool     `help:"Wrap the prompt as a user turn with the model's chat template."`
	System      string   `help:"System turn for --chat."`
	MaxTokens   int      `default:"64" help:"Generate at most this many new tokens."`
	Temperature float64  `default:"0" help:"Sampling temperature; 0 is greedy decoding."`
	TopK        int      `name:"top-k" default:"0" help:"Keep the k most likely tokens (0: off)."`
	TopP        float64  `name:"top-p" default:"0" help:"Keep the smallest set of tokens with probability mass above p (0: off)."`
	MinP        float64  `name:"min-p" default:"0" help:"Drop tokens below min-p times the top probability (0: off)."`
	Seed        uint64   `default:"0" help:"Random seed for sampling."`
	StopIDs     string   `name:"stop-ids" help:"Extra token ids that end generation, comma-separated."`
	MaxLen      int64    `help:"KV-cache length in tokens; 0 (the default) means min(4096, max_position_embeddings), lowered to fit a 1 GiB KV cache."`
	Arch        string   `help:"Use this .arch file instead of the built-in families." type:"existingfile"`
	Device      string   `default:"local-task" enum:"local-task,local-sync" help:"IREE device: local-task (a thread pool) or local-sync (one thread)."`
	Threads     int      `default:"0" help:"Worker threads of the local-task device (0: one per core)."`
	IREEFlags   []string `name:"iree-flag" sep:"none" help:"Extra iree.runtime flag, repeatable (e.g. --iree-flag=--device_profiling_mode=host-execution --iree-flag=--device_profiling_output=x.ireeprof, then iree-profile statistics x.ireeprof)."`
	JSON        bool     `name:"json" help:"Print one JSON object at the end instead of streaming."`
	Quiet       bool     `short:"q" help:"No progress output on stderr."`
}

// report is the --json output.
type report struct {
	Family            string  `json:"family"`
	PromptTokens      []int32 `json:"prompt_tokens"`
	Tokens            []int32 `json:"tokens"`
	Text              *string `json:"text,omitempty"` // decoded tokens, without a final EOS or stop token
	LoadS             float64 `json:"load_s"`
	CompileS          float64 `json:"compile_s"`
	CompileCached     bool    `json:"compile_cached"`
	TimeToFirstTokenS float64 `json:"time_to_first_token_s"`
	PrefillTokensPerS float64 `json:"prefill_tokens_per_s"`
	DecodeTokensPerS  float64 `json:"decode_tokens_per_s"`
}

func (c *generateCmd) Run(ctx context.Context) error {
	if c.Prompt == "" && c.PromptIDs == "" {
		return fmt.Errorf("give a prompt: --prompt TEXT or --prompt-ids 1,2,3")
	}
	if c.Model == "" {
		return fmt.Errorf("--model: give a model folder or a .gguf file")
	}
	if _, err := os.Stat(c.Model); err != nil {
		return fmt.Errorf("--model: %v", err)
	}
	sampling := rt.SamplingOptions{Temperature: c.Temperature, TopK: c.TopK, TopP: c.TopP, MinP: c.MinP, Seed: c.Seed}
	if err := sampling.Validate(); err != nil {
		return err
	}
	stop, err := parseIDs(c.StopIDs, "--stop-ids", true)
	if err != nil {
		return err
	}
	prompt, text, err := c.promptTokens()
	if err != nil {
		return err
	}

	if c.Threads < 0 {
		return fmt.Errorf("--threads %d: give a positive count, or 0 for one per core", c.Threads)
	}
	if c.Threads > 0 && c.Device == "local-sync" {
		return fmt.Errorf("--threads %d: the local-sync device runs on the calling thread only; use --device local-task to set a thread count", c.Threads)
	}
	opts := rt.Options{Device: c.Device, Threads: c.Threads, RuntimeFlags: c.IREEFlags, Phase: phaseReporter(os.Stderr, c.Quiet)}
	opts.Plan.Arch = c.Arch
	opts.Plan.Lower.MaxLen = c.MaxLen
	m, err := rt.Open(ctx, c.Model, opts)
	if err != nil {
		return err
	}
	defer m.Close()

	gopts := rt.GenerateOptions{MaxTokens: c.MaxTokens, Sampling: sampling, StopTokens: stop}
	flush := func() string { return "" }
	if !c.JSON {
		gopts.OnToken, flush = streamer(text, append(m.EOS, stop...))
	}
	g, err := m.Generate(ctx, prompt, gopts)
	if err != nil {
		return err
	}
	if !c.JSON {
		fmt.Println(flush())
		return nil
	}
	r := report{
		Family: m.Plan.Family.Name, PromptTokens: g.PromptTokens, Tokens: g.Tokens,
		LoadS: m.LoadTime.Seconds(), CompileS: m.CompileTime.Seconds(), CompileCached: m.Cached,
		TimeToFirstTokenS: g.PrefillTime.Seconds(),
	}
	if text != nil {
		// As streamed: without a final end-of-sequence or stop token.
		shown := g.Tokens
		if n := len(shown); n > 0 && (slices.Contains(m.EOS, shown[n-1]) || slices.Contains(stop, shown[n-1])) {
			shown = shown[:n-1]
		}
		s := text.Tokenizer.Decode(shown)
		r.Text = &s
	}
	if s := g.PrefillTime.Seconds(); s > 0 {
		r.PrefillTokensPerS = float64(len(g.PromptTokens)) / s
	}
	if s := g.DecodeTime.Seconds(); s > 0 && len(g.Tokens) > 1 {
		r.DecodeTokensPerS = float64(len(g.Tokens)-1) / s
	}
	if r.Tokens == nil {
		r.Tokens = []int32{}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// streamer prints each generated token as it comes: decoded text (never a
// split multi-byte character; end tokens are not printed) with a tokenizer,
// else comma-separated ids. flush returns what is left to print at the end.
func streamer(text *rt.Text, end []int32) (onToken func(int32), flush func() string) {
	if text == nil {
		first := true
		return func(id int32) {
			if !first {
				fmt.Print(",")
			}
			first = false
			fmt.Print(id)
		}, func() string { return "" }
	}
	s := text.Tokenizer.NewStream()
	return func(id int32) {
		if slices.Contains(end, id) {
			return
		}
		fmt.Print(s.Add(id))
		os.Stdout.Sync()
	}, s.Flush
}

// promptTokens returns the prompt's token ids: --prompt-ids as given, or
// --prompt tokenized with the model's tokenizer (with the special tokens
// the model adds by default, such as BOS; as a chat with --chat), and the
// tokenizer (nil for --prompt-ids).
func (c *generateCmd) promptTokens() ([]int32, *rt.Text, error) {
	if c.PromptIDs != "" {
		if c.Chat || c.System != "" {
			return nil, nil, fmt.Errorf("--chat and --system need --prompt TEXT")
		}
		ids, err := parseIDs(c.PromptIDs, "--prompt-ids", false)
		return ids, nil, err
	}
	text, err := rt.LoadText(c.Model)
	if err != nil {
		return nil, nil, err
	}
	ids, err := text.EncodePrompt(c.Prompt, c.Chat, c.System)
	if err != nil {
		return nil, nil, err
	}
	return ids, text, nil
}

// parseIDs reads comma-separated token ids. An empty or blank s is no ids
// (an error unless allowEmpty); every field between commas must be a
// non-negative integer, so "1,,2" and "1,2," are errors.
func parseIDs(s, flag string, allowEmpty bool) ([]int32, error) {
	if strings.TrimSpace(s) == "" {
		if !allowEmpty {
			return nil, fmt.Errorf("%s: no token ids given", flag)
		}
		return nil, nil
	}
	var out []int32
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("%s %q: id %d is empty (want non-negative integers separated by single commas)", flag, s, i+1)
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s: %q is not a token id (want non-negative integers separated by commas)", flag, f)
		}
		out = append(out, int32(v))
	}
	return out, nil
}
