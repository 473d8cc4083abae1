// Command infer runs archc models.
//
//	infer generate --model DIR --prompt-ids 1,2,3 [--max-tokens N] [--json]
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/archc/archc/rt"
)

type cli struct {
	Generate generateCmd `cmd:"" help:"Generate tokens greedily from a prompt."`
	Tokenize tokenizeCmd `cmd:"" help:"Print the token ids of a text (--text or standard input)."`
}

type generateCmd struct {
	Model     string `required:"" help:"Model folder (Hugging Face layout: config.json + safetensors)." type:"existingdir"`
	PromptIDs string `name:"prompt-ids" required:"" help:"Prompt token ids, comma-separated (e.g. 1,2,3)."`
	MaxTokens int    `default:"32" help:"Generate at most this many new tokens."`
	MaxLen    int64  `help:"KV-cache length in tokens (default: min(512, max_position_embeddings))."`
	Arch      string `help:"Use this .arch file instead of the built-in families." type:"existingfile"`
	Device    string `default:"local-task" enum:"local-task,local-sync" help:"IREE device."`
	JSON      bool   `name:"json" help:"Print one JSON object instead of the ids as they are generated."`
	Quiet     bool   `short:"q" help:"No progress output on stderr."`
}

// report is the --json output.
type report struct {
	PromptTokens      []int32 `json:"prompt_tokens"`
	Tokens            []int32 `json:"tokens"`
	LoadS             float64 `json:"load_s"`
	CompileS          float64 `json:"compile_s"`
	CompileCached     bool    `json:"compile_cached"`
	PrefillTokensPerS float64 `json:"prefill_tokens_per_s"`
	DecodeTokensPerS  float64 `json:"decode_tokens_per_s"`
	TimeToFirstTokenS float64 `json:"time_to_first_token_s"`
	Family            string  `json:"family"`
}

func (c *generateCmd) Run(ctx context.Context) error {
	prompt, err := parseIDs(c.PromptIDs)
	if err != nil {
		return err
	}
	opts := rt.Options{Device: c.Device, Phase: phaseReporter(os.Stderr, c.Quiet)}
	opts.Plan.Arch = c.Arch
	opts.Plan.Lower.MaxLen = c.MaxLen
	m, err := rt.Open(ctx, c.Model, opts)
	if err != nil {
		return err
	}
	defer m.Close()
	gopts := rt.GenerateOptions{MaxTokens: c.MaxTokens}
	if !c.JSON {
		first := true
		gopts.OnToken = func(id int32) {
			if !first {
				fmt.Print(",")
			}
			first = false
			fmt.Print(id)
		}
	}
	g, err := m.Generate(ctx, prompt, gopts)
	if err != nil {
		return err
	}
	if !c.JSON {
		fmt.Println()
		return nil
	}
	r := report{
		PromptTokens: g.PromptTokens, Tokens: g.Tokens, Family: m.Plan.Family.Name,
		LoadS: m.LoadTime.Seconds(), CompileS: m.CompileTime.Seconds(), CompileCached: m.Cached,
		TimeToFirstTokenS: g.PrefillTime.Seconds(),
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
	return enc.Encode(r)
}

func parseIDs(s string) ([]int32, error) {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("--prompt-ids: %q is not a token id (want non-negative integers separated by commas)", f)
		}
		out = append(out, int32(v))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--prompt-ids: no token ids given")
	}
	return out, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var c cli
	k := kong.Parse(&c, kong.Name("infer"),
		kong.Description("infer: run archc models."),
		kong.BindTo(ctx, (*context.Context)(nil)))
	if err := k.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "infer:", err)
		os.Exit(1)
	}
}
