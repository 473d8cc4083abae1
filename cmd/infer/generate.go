package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/dsl"
	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/chat"
	"github.com/archc/archc/rt/vision"
)

type generateCmd struct {
	Model       string   `required:"" help:"Model: a Hugging Face folder (config.json + safetensors + tokenizer) or a .gguf file." type:"path"`
	Prompt      string   `xor:"prompt" help:"Prompt text."`
	PromptIDs   string   `xor:"prompt" name:"prompt-ids" help:"Prompt token ids, comma-separated (e.g. 1,2,3); the output is ids too."`
	Chat        bool     `help:"Wrap the prompt as a user turn with the model's chat template."`
	System      string   `help:"System turn for --chat."`
	Image       []string `name:"image" sep:"none" type:"existingfile" help:"An image file to ask about (JPEG, PNG, GIF, BMP or WebP), repeatable; needs --chat and a vision-language model: a folder (its processor_config.json) or a GGUF text model with its mmproj file. The images go first in the user turn, then the prompt."`
	MMProj      string   `name:"mmproj" type:"existingfile" help:"llama.cpp's mmproj file (the image encoder) of a GGUF text model; with --image and no --mmproj, the one mmproj*.gguf beside the model is used."`
	ChatTmpl    string   `name:"chat-template" help:"Chat template (Jinja, as Hugging Face writes them) for --chat, replacing the model's; a GGUF without one gets a built-in template only for families with one turn format (Gemma)." type:"existingfile"`
	MaxTokens   int      `default:"64" help:"Generate at most this many new tokens."`
	Temperature float64  `default:"0" help:"Sampling temperature; 0 is greedy decoding."`
	TopK        int      `name:"top-k" default:"0" help:"Keep the k most likely tokens (0: off)."`
	TopP        float64  `name:"top-p" default:"1" help:"Keep the smallest set of tokens with probability mass above p (1: off; 0: the most likely token only)."`
	MinP        float64  `name:"min-p" default:"0" help:"Drop tokens below min-p times the top probability (0: off)."`
	Seed        uint64   `default:"0" help:"Random seed for sampling."`
	StopIDs     string   `name:"stop-ids" help:"Extra token ids that end generation, comma-separated."`
	Stop        []string `sep:"none" help:"A string that ends generation (not printed), repeatable; matched across token boundaries."`
	RepPenalty  float64  `name:"repetition-penalty" default:"1" help:"HF repetition penalty over prompt and generated tokens, > 0 (1: off)."`
	FreqPenalty float64  `name:"frequency-penalty" help:"OpenAI frequency penalty over generated tokens, in [-2, 2]."`
	PresPenalty float64  `name:"presence-penalty" help:"OpenAI presence penalty over generated tokens, in [-2, 2]."`
	DRYMult     float64  `name:"dry-multiplier" help:"DRY repetition penalty multiplier (0: off)."`
	DRYBase     float64  `name:"dry-base" default:"${dry_base}" help:"DRY base, >= 1: the penalty grows by this factor per repeated token (1: a flat penalty)."`
	DRYAllowed  int      `name:"dry-allowed-length" default:"${dry_allowed_length}" help:"DRY: repeats up to this length are not penalized (0: every repeat is)."`
	DRYLastN    int      `name:"dry-penalty-last-n" help:"DRY: tokens looked back (0: all)."`
	DRYBreakers []string `name:"dry-sequence-breaker" sep:"none" help:"DRY sequence breaker string, repeatable (default: newline, colon, quote, asterisk)."`
	Logprobs    int      `name:"logprobs" default:"-1" help:"With --json: each token's logprob and this many most likely alternatives (0-20; -1: off)."`
	MaxLen      int64    `help:"KV-cache length in tokens; 0 (the default) means min(4096, max_position_embeddings), lowered to fit a 1 GiB KV cache."`
	Arch        string   `help:"Match the model against the families in this .arch file instead of the built-in ones (the file may extend a built-in family)." type:"existingfile"`
	Device      string   `default:"local-task" enum:"local-task,local-sync,cuda,hip,vulkan" help:"IREE device: local-task (a thread pool), local-sync (one thread), or a GPU: cuda (NVIDIA), hip (AMD), vulkan. The module is compiled for it; on a GPU every weight goes through the plain lowering (no CPU kernels)."`
	ImageSizes  []int64  `name:"image-sizes" sep:"," help:"Patch counts a variable-size image encoder (Qwen2-VL) is compiled for, comma-separated, each an entry point; an image runs padded in the smallest that holds it, and one larger than the largest is refused (default: 256,1024,5120 patches: at 14-pixel patches up to 1003520 pixels, Qwen2VLImageProcessor's default max_pixels, e.g. 1344×672)."`
	Prefill     []int64  `name:"prefill-buckets" sep:"," help:"Prefill chunk lengths in tokens, comma-separated, each an entry point (default: 16,64 on a CPU, with 256 where archc's AVX-512 or AMX kernels run; 16,128,512 on a GPU; the defaults clipped to --max-len, plus one that holds an image's token run where its tokens attend to each other, Gemma 3's 256; given ones must be at most --max-len)."`
	Threads     int      `default:"0" help:"Worker threads of the local-task device (0: one per core)."`
	Kernels     string   `default:"auto" help:"archc's matmul kernels: auto (the best this CPU runs), amx, avx512, avx2, or none (IREE's own matmuls only); a variant the CPU lacks is refused."`
	Precision   string   `default:"f32" enum:"f32,int8" help:"Arithmetic of archc's matmul kernels: f32 (exact products, f32 accumulation; token-exact against the fp32 oracle) or int8 (activations quantized per 32-element block as llama.cpp does, int8 dot products: faster, not exact; needs AVX-512 VNNI)."`
	IREEFlags   []string `name:"iree-flag" sep:"none" help:"Extra iree.runtime flag, repeatable (e.g. --iree-flag=--device_profiling_mode=host-execution --iree-flag=--device_profiling_output=x.ireeprof, then iree-profile statistics x.ireeprof)."`
	Speculative string   `help:"Speculative decoding: ngram (prompt lookup: drafts copied from the prompt and output, no second model) or draft:PATH (a smaller model with the same vocabulary drafts greedily) or mtp (the model's own multi-token-prediction layer drafts one token, DeepSeek-V3, GLM-4.5, MiMo; mtp:K drafts K, the layer run on its own output). Greedy output is unchanged, sampled output keeps its distribution; penalties and grammars decode plainly. CPU devices only."`
	DraftMax    int      `name:"draft-max" default:"0" help:"With --speculative ngram or draft:PATH: tokens drafted per verify step at most, 1 to 64 (0: 8; each step runs draft+1 tokens; a model with a recurrent state drafts an even number). mtp sets its own (mtp:K)."`
	JSON        bool     `name:"json" help:"Print one JSON object at the end instead of streaming."`
	Quiet       bool     `short:"q" help:"No progress output on stderr."`

	gguf *gguf.File // the model's GGUF, opened once (tokenizer, config, weights)
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
	TimeToFirstTokenS float64 `json:"time_to_first_token_s"`    // with --image, the images' encoding included
	ImageEncodeS      float64 `json:"image_encode_s,omitempty"` // --image: decoding, preprocessing and the encoder, every tile
	ImageTiles        int     `json:"image_tiles,omitempty"`
	PrefillTokensPerS float64 `json:"prefill_tokens_per_s"`
	DecodeTokensPerS  float64 `json:"decode_tokens_per_s"`
	FinishReason      string  `json:"finish_reason"` // "stop" or "length"
	// Kernels is the variant of archc's matmul kernels the module runs
	// ("amx", "avx512", "avx2", or "none"); Precision the activations' arithmetic
	// ("f32": exact products, f32 accumulation; "int8": quantized per block).
	Kernels   string `json:"kernels"`
	Precision string `json:"precision"`
	// Speculative decoding (--speculative; absent without it): verify
	// steps run with a draft, tokens drafted, drafted tokens accepted.
	SpecDrafts   *int `json:"spec_drafts,omitempty"`
	SpecDrafted  *int `json:"spec_draft_tokens,omitempty"`
	SpecAccepted *int `json:"spec_accepted_tokens,omitempty"`
	// Logprobs (with --logprobs): per generated token.
	Logprobs []tokenLogprob `json:"logprobs,omitempty"`
}

// checkFlags reports the first numeric flag out of range, naming the flag
// and what it takes, before anything is read or compiled. The sampling
// ranges are those rt.SamplingOptions.Validate checks again for every
// caller (it names options, not flags).
func (c *generateCmd) checkFlags() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	for _, f := range []struct {
		flag  string
		value any
		ok    bool
		want  string
	}{
		{"--max-tokens", c.MaxTokens, c.MaxTokens >= 0, "0 or more new tokens"},
		{"--temperature", c.Temperature, finite(c.Temperature) && c.Temperature >= 0, "a number >= 0 (0: greedy decoding)"},
		{"--top-k", c.TopK, c.TopK >= 0, "a count >= 0 (0: off)"},
		{"--top-p", c.TopP, c.TopP >= 0 && c.TopP <= 1, "a number in [0, 1] (1: off; 0: the most likely token only)"},
		{"--min-p", c.MinP, c.MinP >= 0 && c.MinP <= 1, "a number in [0, 1] (0: off)"},
		{"--repetition-penalty", c.RepPenalty, finite(c.RepPenalty) && c.RepPenalty > 0, "a number > 0 (1: off)"},
		{"--frequency-penalty", c.FreqPenalty, c.FreqPenalty >= -2 && c.FreqPenalty <= 2, "a number in [-2, 2]"},
		{"--presence-penalty", c.PresPenalty, c.PresPenalty >= -2 && c.PresPenalty <= 2, "a number in [-2, 2]"},
		{"--dry-multiplier", c.DRYMult, finite(c.DRYMult) && c.DRYMult >= 0, "a number >= 0 (0: off)"},
		{"--dry-base", c.DRYBase, finite(c.DRYBase) && c.DRYBase >= 1, "a number >= 1 (1: a flat penalty; to turn DRY off, --dry-multiplier 0)"},
		{"--dry-allowed-length", c.DRYAllowed, c.DRYAllowed >= 0, "a length >= 0"},
		{"--dry-penalty-last-n", c.DRYLastN, c.DRYLastN >= 0, "a count >= 0 (0: all)"},
		{"--logprobs", c.Logprobs, c.Logprobs >= -1 && c.Logprobs <= 20, "0 to 20 alternatives, or -1 for no logprobs"},
		{"--max-len", c.MaxLen, c.MaxLen >= 0, "a length in tokens, or 0 for the default"},
		{"--threads", c.Threads, c.Threads >= 0, "a positive count, or 0 for one per core"},
		{"--draft-max", c.DraftMax, c.DraftMax >= 0 && c.DraftMax <= 64, "1 to 64 tokens, or 0 for the default (8)"},
	} {
		if !f.ok {
			return fmt.Errorf("%s %v: out of range; give %s", f.flag, f.value, f.want)
		}
	}
	if c.Logprobs >= 0 && !c.JSON {
		return fmt.Errorf("--logprobs %d: logprobs are printed only with --json; add --json", c.Logprobs)
	}
	return nil
}

func (c *generateCmd) Run(ctx context.Context) error {
	if err := c.checkFlags(); err != nil {
		return err
	}
	if c.Prompt == "" && c.PromptIDs == "" {
		return fmt.Errorf("give a prompt: --prompt TEXT or --prompt-ids 1,2,3")
	}
	if c.Model == "" {
		return fmt.Errorf("--model: give a model folder or a .gguf file")
	}
	if _, err := os.Stat(c.Model); err != nil {
		return fmt.Errorf("--model: %v", err)
	}
	sampling := rt.SamplingOptions{Temperature: c.Temperature, TopK: c.TopK, TopP: c.TopP, MinP: c.MinP, Seed: c.Seed,
		RepetitionPenalty: c.RepPenalty, FrequencyPenalty: c.FreqPenalty, PresencePenalty: c.PresPenalty,
		DRY: rt.DRYOptions{Multiplier: c.DRYMult, Base: c.DRYBase, AllowedLength: &c.DRYAllowed, Range: c.DRYLastN}}
	switch c.TopP {
	case 1:
		sampling.TopP = 0 // off
	case 0: // the most likely token only, as llama.cpp's min_keep 1
		if c.TopK != 1 {
			sampling.TopK = 1
		}
	}
	if c.Logprobs >= 0 {
		sampling.Logprobs, sampling.TopLogprobs = true, c.Logprobs
	}
	if err := sampling.Validate(); err != nil {
		return err
	}
	stop, err := parseIDs(c.StopIDs, "--stop-ids", true)
	if err != nil {
		return err
	}
	var proc *vision.Processor
	if len(c.Image) > 0 { // before the tokenizer and the compile: what is missing fails at once
		switch {
		case c.PromptIDs != "":
			return fmt.Errorf("--chat, --system and --image need --prompt TEXT")
		case !c.Chat:
			return fmt.Errorf("--image needs --chat: the chat template places each image's tokens")
		}
	}
	given := c.MMProj
	if c.MMProj, err = findMMProj(c.Model, c.MMProj, len(c.Image) > 0); err != nil {
		return err
	}
	if given == "" && c.MMProj != "" && !c.Quiet {
		fmt.Fprintf(os.Stderr, "mmproj: %s (the one beside the model; --mmproj FILE picks another)\n", c.MMProj)
	}
	if len(c.Image) > 0 {
		if c.MMProj != "" {
			if proc, err = mmprojProcessor(c.MMProj); err != nil {
				return fmt.Errorf("--image: %w", err)
			}
		} else if err = textOnly(c.Model, c.Arch); err != nil {
			return err
		} else if proc, err = vision.LoadProcessor(c.Model); err != nil {
			return fmt.Errorf("--image: %w (a vision-language model folder holds its processor's config)", err)
		}
	}
	if gguf.IsFile(c.Model) {
		if c.gguf, err = gguf.Open(c.Model); err != nil {
			return err
		}
	}
	prompt, text, err := c.promptTokens()
	if err != nil {
		return err
	}

	if text == nil && (len(c.Stop) > 0 || c.DRYMult != 0) {
		return fmt.Errorf("--stop and --dry-multiplier need the model's tokenizer (give --prompt, not --prompt-ids)")
	}
	if text != nil && c.DRYMult != 0 {
		breakers := c.DRYBreakers
		if breakers == nil {
			breakers = rt.DefaultDRYBreakers()
		}
		for _, b := range breakers {
			ids, err := text.Tokenizer.Encode(b, false)
			if err != nil {
				return fmt.Errorf("--dry-sequence-breaker %q: %v", b, err)
			}
			sampling.DRY.Breakers = append(sampling.DRY.Breakers, ids...)
		}
	}

	if err := checkDevice(c.Device, c.Threads, c.Kernels, c.Precision); err != nil {
		return err
	}
	opts := launch.Options{Device: c.Device, Threads: c.Threads, RuntimeFlags: c.IREEFlags, Phase: phaseReporter(os.Stderr, c.Quiet), Kernels: c.Kernels, Precision: c.Precision}
	opts.Plan.Arch = c.Arch
	opts.Plan.Lower.MaxLen = c.MaxLen
	opts.Plan.GGUF = c.gguf
	opts.Plan.MMProj = c.MMProj
	// One sequence: one slot and decode of one row, on any device.
	opts.Plan.Lower.Slots, opts.Plan.Lower.DecodeBatches = 1, []int64{1}
	if opts.Plan.Lower.PrefillBuckets, err = buckets("--prefill-buckets", c.Prefill); err != nil {
		return err
	}
	if opts.Plan.Lower.EncoderSizes, err = buckets("--image-sizes", c.ImageSizes); err != nil {
		return err
	}
	specFlags, err := parseSpeculative(c.Speculative, c.DraftMax, c.Device)
	if err != nil {
		return err
	}
	specFlags.setLower(&opts.Plan.Lower)
	if err := specFlags.check(c.Model, opts.Plan); err != nil {
		return err
	}
	m, err := launch.Open(ctx, c.Model, opts)
	if err != nil {
		return bucketFlagError(specFlags.openError(err), c.MaxLen)
	}
	defer m.Close()
	spec, closeSpec, err := specFlags.open(ctx, m, opts)
	if err != nil {
		return err
	}
	defer closeSpec()
	if !c.Quiet {
		reportDevice(m.Program, c.Device)
	}

	for _, id := range stop {
		if int64(id) >= m.Vocab {
			return fmt.Errorf("--stop-ids: token id %d is outside the vocabulary [0, %d)", id, m.Vocab)
		}
	}
	gopts := rt.GenerateOptions{MaxTokens: c.MaxTokens, Sampling: sampling, StopTokens: stop, Speculative: spec}
	var encodeTime time.Duration
	var tiles int
	if len(c.Image) > 0 {
		t0 := time.Now()
		if prompt, gopts.Encoded, tiles, err = c.imagePrompt(ctx, m, proc, text); err != nil {
			return err
		}
		encodeTime = time.Since(t0)
	}
	out := &output{text: text, end: append(slices.Clone(m.EOS), stop...), stops: rt.StopStrings{Stops: c.Stop}, print: !c.JSON}
	if text != nil {
		out.stream = text.Tokenizer.NewStream()
	}
	gopts.OnToken = out.token
	g, err := m.Generate(ctx, prompt, gopts)
	if err != nil {
		return err
	}
	out.finish()
	if !c.JSON {
		fmt.Println()
		return nil
	}
	r := report{
		Family: m.Program.Family, PromptTokens: g.PromptTokens, Tokens: g.Tokens,
		LoadS: m.LoadTime.Seconds(), CompileS: m.CompileTime.Seconds(), CompileCached: m.Cached,
		TimeToFirstTokenS: (encodeTime + g.PrefillTime).Seconds(), Kernels: m.Program.Kernels, Precision: m.Program.Precision,
		ImageEncodeS: encodeTime.Seconds(), ImageTiles: tiles,
	}
	r.FinishReason = g.FinishReason
	if specFlags != nil { // all three, zeros included
		r.SpecDrafts, r.SpecDrafted, r.SpecAccepted = &g.Spec.Drafts, &g.Spec.Drafted, &g.Spec.Accepted
	}
	if text != nil {
		// As streamed: without end or stop tokens, cut before a stop string.
		s := out.shown.String()
		r.Text = &s
	}
	if sampling.Logprobs {
		for _, ch := range g.Choices {
			lp := tokenLogprob{ID: ch.ID, Logprob: ch.Logprob}
			for i, id := range ch.TopIDs {
				alt := tokenAlt{ID: id, Logprob: ch.TopProbs[i]}
				if text != nil {
					alt.Text = text.Tokenizer.Decode([]int32{id})
				}
				lp.Top = append(lp.Top, alt)
			}
			if text != nil {
				lp.Text = text.Tokenizer.Decode([]int32{ch.ID})
			}
			r.Logprobs = append(r.Logprobs, lp)
		}
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

// output turns generated tokens into what generate shows: decoded text
// (never a split multi-byte character; end tokens are not text; stop
// strings cut the text and end generation) printed as it comes, or the
// comma-separated ids without a tokenizer.
type output struct {
	text   *rt.Text
	stream interface {
		Add(int32) string
		Flush() string
	}
	end   []int32
	stops rt.StopStrings
	print bool
	ids   int
	shown strings.Builder // the text shown (for --json)
}

// token takes one generated id; true means a stop string ended the text.
func (o *output) token(id int32) bool {
	if o.text == nil {
		if o.print {
			if o.ids > 0 {
				fmt.Print(",")
			}
			fmt.Print(id)
		}
		o.ids++
		return false
	}
	if slices.Contains(o.end, id) {
		return false
	}
	piece, stopped := o.stops.Push(o.stream.Add(id))
	o.show(piece)
	return stopped
}

// finish shows what was held back.
func (o *output) finish() {
	if o.text == nil || o.stops.Stopped() {
		return
	}
	piece, _ := o.stops.Push(o.stream.Flush())
	o.show(piece + o.stops.Flush())
}

func (o *output) show(s string) {
	o.shown.WriteString(s)
	if o.print && s != "" {
		fmt.Print(s)
		os.Stdout.Sync()
	}
}

// tokenLogprob is one generated token in --json's logprobs.
type tokenLogprob struct {
	ID      int32      `json:"id"`
	Text    string     `json:"text,omitempty"`
	Logprob float32    `json:"logprob"`
	Top     []tokenAlt `json:"top_logprobs,omitempty"`
}

type tokenAlt struct {
	ID      int32   `json:"id"`
	Text    string  `json:"text,omitempty"`
	Logprob float32 `json:"logprob"`
}

// promptTokens returns the prompt's token ids: --prompt-ids as given, or
// --prompt tokenized with the model's tokenizer (with the special tokens
// the model adds by default, such as BOS; as a chat with --chat), and the
// tokenizer (nil for --prompt-ids).
func (c *generateCmd) promptTokens() ([]int32, *rt.Text, error) {
	if c.PromptIDs != "" {
		if c.Chat || c.System != "" || len(c.Image) > 0 {
			return nil, nil, fmt.Errorf("--chat, --system and --image need --prompt TEXT")
		}
		ids, err := parseIDs(c.PromptIDs, "--prompt-ids", false)
		return ids, nil, err
	}
	var text *rt.Text
	var err error
	if c.gguf != nil {
		text, err = rt.TextFromGGUF(c.gguf)
	} else {
		text, err = rt.LoadText(c.Model)
	}
	if err != nil {
		return nil, nil, err
	}
	if _, err := setChatTemplate(text, c.ChatTmpl, c.gguf); err != nil {
		return nil, nil, err
	}
	if len(c.Image) > 0 { // tokenized once the images are encoded (imagePrompt)
		if !c.Chat {
			return nil, nil, fmt.Errorf("--image needs --chat: the chat template places each image's tokens")
		}
		return nil, text, nil
	}
	ids, err := text.EncodePrompt(c.Prompt, c.Chat, c.System)
	if err != nil {
		return nil, nil, err
	}
	return ids, text, nil
}

func parseIDs(s, flag string, allowEmpty bool) ([]int32, error) {
	if strings.TrimSpace(s) == "" {
		if !allowEmpty {
			return nil, fmt.Errorf("%s: no token ids given", flag)
		}
		return nil, nil
	}
	var out []int32
	fields := strings.Split(s, ",")
	for i, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("%s %q: entry %d of the %d between commas is empty (want non-negative integers separated by single commas)", flag, s, i+1, len(fields))
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s: %q is not a token id (want non-negative integers separated by commas)", flag, f)
		}
		out = append(out, int32(v))
	}
	return out, nil
}

// imagePrompt encodes --image files through the model's image encoder
// (rt.Model.EncodeImages with the model folder's processor, proc) and returns
// the chat's token ids, the user turn holding the images then the prompt,
// the images' rows for prefill and the number of tiles encoded.
func (c *generateCmd) imagePrompt(ctx context.Context, m *rt.Model, proc *vision.Processor, text *rt.Text) ([]int32, *rt.Encoded, int, error) {
	var images [][]byte
	for _, f := range c.Image {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("--image: %w", err)
		}
		images = append(images, b)
	}
	im, err := m.EncodeImages(ctx, proc, images, vision.Limits{})
	if err != nil {
		var ie *rt.ImageError
		if errors.As(err, &ie) {
			return nil, nil, 0, fmt.Errorf("--image %s: %w", c.Image[ie.Index], ie.Err)
		}
		return nil, nil, 0, fmt.Errorf("--image: %w", err)
	}
	var msgs []chat.Message
	if c.System != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: c.System})
	}
	user := chat.Message{Role: "user"}
	for range c.Image {
		user.Parts = append(user.Parts, chat.Part{Type: chat.PartImage})
	}
	user.Parts = append(user.Parts, chat.Part{Type: chat.PartText, Text: c.Prompt})
	ids, err := text.EncodeChatImages(append(msgs, user), proc, im.Grids)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--image: %w", err)
	}
	if err := m.ImagePositions(ids, im.Encoded, im.Grids, proc, text); err != nil {
		return nil, nil, 0, fmt.Errorf("--image: %w", err)
	}
	return ids, im.Encoded, im.Tiles, nil
}

// visionFamilies names the built-in families with an image encoder that
// match modelType (under a condition the config did not meet).
func visionFamilies(modelType any) []string {
	fams, err := driver.BuiltinFamilies()
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range fams {
		if len(dsl.Encoders(f.File)) == 0 {
			continue
		}
		for _, mt := range dsl.ModelTypes(f.File) {
			if strings.TrimSuffix(mt, " (conditional)") == fmt.Sprint(modelType) {
				out = append(out, f.Name)
				break
			}
		}
	}
	return out
}

// textOnly refuses --image for a model whose family declares no image
// encoder, naming the model and the family, before the processor and the
// compile: a text model, or a vision-language checkpoint (a vision_config
// in config.json) whose text model archc runs but not yet its images
// (qwen2_vl, qwen3_vl, ...). A model whose graph does not build is left
// to the compile's error.
func textOnly(model, arch string) error {
	p, err := driver.NewGraph(model, driver.PlanOptions{Arch: arch})
	if err != nil || len(p.Graph.Encoders) > 0 {
		return nil
	}
	why := "it is a text model"
	if p.Raw["vision_config"] != nil {
		why = "archc runs its text model only: images for family " + p.Family.Name + " are not supported yet"
		if v := visionFamilies(p.Raw["model_type"]); len(v) > 0 {
			why = fmt.Sprintf("its config does not meet the match condition of %s, which reads images of model_type %v (see its .arch's match clause: a vision tower with blocks, vision_config.depth > 0 for the Qwen ones)", strings.Join(v, ", "), p.Raw["model_type"])
		}
	}
	return fmt.Errorf("--image: model %s (family %s) reads text only (%s); send no --image", model, p.Family.Name, why)
}
