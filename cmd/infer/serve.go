package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt/engine"
	"github.com/archc/archc/rt/vision"
	"github.com/archc/archc/server"
)

type serveCmd struct {
	Model           string        `required:"" help:"Model: a Hugging Face folder or a .gguf file." type:"path"`
	Addr            string        `default:"127.0.0.1:8080" help:"Address to listen on."`
	MaxBatch        int           `name:"max-batch" default:"0" help:"Requests decoded together at most (KV-cache slots), 1 to 64; 0 (the default): 4 on a CPU, 64 on a GPU. Decode entry points are compiled for 1, 2, 4, ... up to it on a CPU, for 1, 4, 16, 64 up to it on a GPU."`
	DecodeBatches   []int64       `name:"decode-batches" sep:"," help:"Decode batch sizes to compile, comma-separated, instead of the default ladder (each an entry point; the largest is at most --max-batch, and sets it when --max-batch is 0)."`
	ImageSizes      []int64       `name:"image-sizes" sep:"," help:"Patch counts a variable-size image encoder (Qwen2-VL) is compiled for, comma-separated, each an entry point; an image runs padded in the smallest that holds it, and one larger than the largest is refused (default: 256,1024,5120 patches: at 14-pixel patches up to 1003520 pixels, Qwen2VLImageProcessor's default max_pixels, e.g. 1344×672)."`
	Prefill         []int64       `name:"prefill-buckets" sep:"," help:"Prefill chunk lengths in tokens, comma-separated, each an entry point (default: 16,64 on a CPU, with 256 where archc's AVX-512 or AMX kernels run; 16,128,512 on a GPU; the defaults clipped to --max-len, plus one that holds an image's token run where its tokens attend to each other, Gemma 3's 256; given ones must be at most --max-len)."`
	MaxLen          int64         `help:"KV-cache length per request in tokens; 0 (the default) means min(4096, max_position_embeddings), lowered so all slots fit 1 GiB."`
	Queue           int           `default:"64" help:"Requests waiting for a slot at most; beyond it the server answers 429."`
	StateSnapshots  int64         `name:"state-snapshots" default:"2" help:"Models with a recurrent state or conv window (Mamba, hybrids such as Qwen3.5): saved copies of that state per slot, each taken at the end of a prompt, so that a chat's next turn continues after the previous prompt even where the template re-renders the answer (0: none; each costs one more state's memory per slot; other models ignore it)."`
	APIKey          *string       `name:"api-key" env:"ARCHC_API_KEY" help:"Require Authorization: Bearer KEY on /v1/ calls (unset, flag and variable: no key; an empty key is refused)."`
	Name            string        `help:"Model id in the API (default: the model's file or folder name)."`
	Arch            string        `help:"Match the model against the families in this .arch file instead of the built-in ones (the file may extend a built-in family)." type:"existingfile"`
	Device          string        `default:"local-task" enum:"local-task,local-sync,cuda,hip,vulkan" help:"IREE device: local-task, local-sync, or a GPU: cuda, hip, vulkan (the module is compiled for it; no CPU kernels there)."`
	Threads         int           `default:"0" help:"Worker threads of the local-task device (0: one per core)."`
	Kernels         string        `default:"auto" help:"archc's matmul kernels: auto (the best this CPU runs), amx, avx512, avx2, or none (IREE's own matmuls only); a variant the CPU lacks is refused."`
	Precision       string        `default:"f32" enum:"f32,int8" help:"Arithmetic of archc's matmul kernels: f32 (exact products, f32 accumulation; token-exact against the fp32 oracle) or int8 (activations quantized per 32-element block as llama.cpp does, int8 dot products: faster, not exact; needs AVX-512 VNNI)."`
	CallTimeout     time.Duration `name:"call-timeout" default:"2m" help:"A model call running longer is killed and the worker restarted."`
	ShutdownTimeout time.Duration `name:"shutdown-timeout" default:"30s" help:"On SIGINT/SIGTERM, let running requests finish for this long, then end them."`
	ChatTemplate    string        `name:"chat-template" help:"Chat template (Jinja, as Hugging Face writes them) replacing the model's; a GGUF without one gets a built-in template only for families with one turn format (Gemma)." type:"existingfile"`
	CORSOrigin      []string      `name:"cors-origin" sep:"none" help:"Let browser pages from this origin call the API (e.g. http://localhost:3000; * for any), repeatable; none: same-origin only."`
	MaxN            int           `name:"max-n" default:"8" help:"Largest n (choices per request) a request may ask for."`
	LogFormat       string        `name:"log-format" default:"text" enum:"text,json" help:"Format of the log lines on stderr (one per request, per worker failure and restart): text (key=value) or json."`
	Speculative     string        `help:"Speculative decoding for every request that allows it: ngram (prompt lookup) or draft:PATH (a smaller model with the same vocabulary) or mtp[:K] (the model's own multi-token-prediction layer drafts one token, or K: DeepSeek-V3, GLM-4.5, MiMo). Output is unchanged (greedy: the same tokens; sampled: the same distribution); a request opts out with \"speculative\": false; penalties and grammars decode plainly. CPU devices only."`
	DraftMax        int           `name:"draft-max" default:"0" help:"With --speculative ngram or draft:PATH: tokens drafted per verify step at most, 1 to 64 (0: 8). mtp sets its own (mtp:K)."`
	MaxImages       int           `name:"max-images" default:"8" help:"Images one request may send at most (a vision-language model's), 1 or more."`
	MaxImagePixels  int64         `name:"max-image-pixels" default:"0" help:"Largest width × height of an image, checked from its header before decoding (0: Pillow's limit, 178956970); 0 or more."`
	AllowImageURLs  bool          `name:"allow-image-urls" help:"Fetch http(s) image URLs (10 s and 20 MiB at most each); off, only data: URLs (and file: URLs under --image-dir) are taken."`
	ImageDir        string        `name:"image-dir" help:"Take file: image URLs of files under this directory." type:"existingdir"`
	MMProj          string        `name:"mmproj" type:"existingfile" help:"llama.cpp's mmproj file (the image encoder) of a GGUF text model: images on. Without it a GGUF model serves text only."`
	Quiet           bool          `short:"q" help:"No progress output on stderr."`
}

// decodeBatches returns the sizes of ladder below max, and max; a nil
// ladder is 1, 2, 4, ... (a CPU's).
func decodeBatches(max int, ladder []int64) []int64 {
	var out []int64
	if ladder == nil {
		for b := 1; b < max; b *= 2 {
			ladder = append(ladder, int64(b))
		}
	}
	for _, b := range ladder {
		if b < int64(max) {
			out = append(out, b)
		}
	}
	return append(out, int64(max))
}

// shapes returns the KV-cache slots and decode batch sizes of the
// command's flags on a device (gpu: a GPU's defaults).
func (c *serveCmd) shapes(gpu bool) (int, []int64, error) {
	batches, err := buckets("--decode-batches", c.DecodeBatches)
	if err != nil {
		return 0, nil, err
	}
	slots := c.MaxBatch
	switch {
	case slots == 0 && len(batches) > 0:
		slots = int(slices.Max(batches))
	case slots == 0 && gpu:
		slots = 64
	case slots == 0:
		slots = 4
	}
	if slots < 1 || slots > 64 {
		if c.MaxBatch == 0 { // set by the largest --decode-batches
			return 0, nil, fmt.Errorf("--decode-batches %v: batch %d is past the 64 slots a server holds at most", batches, slots)
		}
		return 0, nil, fmt.Errorf("--max-batch %d: give 1 to 64", slots)
	}
	if len(batches) == 0 {
		var ladder []int64
		if gpu {
			ladder = driver.GPUDecodeBatches
		}
		batches = decodeBatches(slots, ladder)
	}
	if m := slices.Max(batches); m > int64(slots) {
		return 0, nil, fmt.Errorf("--decode-batches %v: batch %d exceeds --max-batch %d", batches, m, slots)
	}
	return slots, batches, nil
}

func (c *serveCmd) Run(ctx context.Context) error {
	if err := checkDevice(c.Device, c.Threads, c.Kernels, c.Precision); err != nil {
		return err
	}
	target, _ := ireetool.LookupTarget(c.Device)
	slots, batches, err := c.shapes(target.GPU)
	if err != nil {
		return err
	}
	imageSizes, err := buckets("--image-sizes", c.ImageSizes)
	if err != nil {
		return err
	}
	prefill, err := buckets("--prefill-buckets", c.Prefill)
	if err != nil {
		return err
	}
	if _, err := os.Stat(c.Model); err != nil {
		return fmt.Errorf("--model: %v", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	name := c.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(c.Model), filepath.Ext(c.Model))
	}
	if c.MaxN < 1 {
		return fmt.Errorf("--max-n %d: give at least 1", c.MaxN)
	}
	if c.Queue < 1 {
		return fmt.Errorf("--queue %d: give at least 1 (requests waiting for a slot)", c.Queue)
	}
	if c.StateSnapshots < 0 || c.StateSnapshots > 64 {
		return fmt.Errorf("--state-snapshots %d: give 0 to 64 (saved recurrent states per slot)", c.StateSnapshots)
	}
	if c.CallTimeout <= 0 {
		return fmt.Errorf("--call-timeout %v: give a positive duration (e.g. 2m)", c.CallTimeout)
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("--shutdown-timeout %v: give a duration of 0 or more", c.ShutdownTimeout)
	}
	if c.DraftMax < 0 || c.DraftMax > 64 {
		return fmt.Errorf("--draft-max %d: out of range; give 1 to 64 tokens, or 0 for the default (8)", c.DraftMax)
	}
	specFlags, err := parseSpeculative(c.Speculative, c.DraftMax, c.Device)
	if err != nil {
		return err
	}
	if err := c.checkFlags(prefill); err != nil {
		return err
	}
	tmpl, err := readChatTemplate(c.ChatTemplate)
	if err != nil {
		return err
	}
	apiKey := ""
	if c.APIKey != nil {
		apiKey = *c.APIKey
	}
	var lh slog.Handler = slog.NewTextHandler(os.Stderr, nil)
	if c.LogFormat == "json" {
		lh = slog.NewJSONHandler(os.Stderr, nil)
	}
	log := slog.New(lh)
	images := server.ImageConfig{MaxImages: c.MaxImages, MaxPixels: c.MaxImagePixels, FetchURLs: c.AllowImageURLs, FileDir: c.ImageDir}
	if c.MMProj, err = findMMProj(c.Model, c.MMProj, false); err != nil {
		return err
	}
	switch {
	case c.MMProj != "":
		if images.Processor, err = mmprojProcessor(c.MMProj); err != nil {
			return fmt.Errorf("--mmproj: %w", err)
		}
	case hasProcessorConfig(c.Model):
		var err error
		if images.Processor, err = vision.LoadProcessor(c.Model); err != nil {
			fmt.Fprintf(os.Stderr, "images are off: %v\n", err)
		}
	}
	var o launch.Options
	o.Plan.Arch = c.Arch
	o.Plan.MMProj = c.MMProj
	o.Plan.Lower.MaxLen = c.MaxLen
	o.Plan.Lower.Slots = int64(slots)
	o.Plan.Lower.DecodeBatches = batches
	o.Plan.Lower.PrefillBuckets = prefill
	o.Plan.Lower.EncoderSizes = imageSizes
	o.Plan.Lower.StateSnapshots = c.StateSnapshots
	specFlags.setLower(&o.Plan.Lower)
	o.Device, o.Threads, o.Kernels, o.Precision = c.Device, c.Threads, c.Kernels, c.Precision
	o.Phase = phaseReporter(os.Stderr, c.Quiet)
	if err := specFlags.check(c.Model, o.Plan); err != nil { // before listening: a refusal, not a server that never gets ready
		return err
	}
	srv := server.New(server.Config{Name: name, APIKey: apiKey, MaxN: c.MaxN, CORSOrigins: c.CORSOrigin, Log: log, Images: images})
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("--addr: %v", err)
	}
	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "listening on http://%s (loading %s; /health answers 503 until it is ready)\n", ln.Addr(), c.Model)

	m, err := launch.Open(ctx, c.Model, o)
	if err != nil {
		httpSrv.Close()
		return bucketFlagError(specFlags.openError(err), c.MaxLen)
	}
	defer m.Close()
	if !c.Quiet {
		reportDevice(m.Program, c.Device)
	}
	text, err := m.Text() // a GGUF's header, read by the plan, serves the tokenizer too
	if err != nil {
		if c.ChatTemplate != "" {
			httpSrv.Close()
			return fmt.Errorf("--chat-template: the model has no tokenizer (%v)", err)
		}
		fmt.Fprintf(os.Stderr, "no tokenizer (%v): prompts must be token ids and chat is off\n", err)
		text = nil
	} else {
		from := c.ChatTemplate
		if tmpl != "" { // read and checked before listening
			text.ChatTemplate = tmpl
		} else if from, err = setChatTemplate(text, "", m.Program.GGUF); err != nil {
			httpSrv.Close()
			return err
		}
		if from == "" {
			fmt.Fprintf(os.Stderr, "the model has no chat template: /v1/chat/completions is off (give --chat-template FILE)\n")
		} else if !c.Quiet {
			fmt.Fprintf(os.Stderr, "chat template: %s\n", from)
		}
	}
	spec, closeSpec, err := specFlags.open(ctx, m, o)
	if err != nil {
		httpSrv.Close()
		return err
	}
	defer closeSpec()
	e, err := engine.New(m, engine.Options{QueueSize: c.Queue, CallTimeout: c.CallTimeout, Log: log, Speculative: spec})
	if err != nil {
		httpSrv.Close()
		return err
	}
	runCtx, stopEngine := context.WithCancel(context.Background())
	engineDone := make(chan error, 1)
	go func() { engineDone <- e.Run(runCtx) }()
	srv.Attach(m, text, e)
	fmt.Fprintf(os.Stderr, "ready: %s, %d slots of %d tokens, decode batches %v\n", name, slots, m.MaxLen(), batches)
	if conv := server.ChatConventions(text); conv != "" {
		fmt.Fprintf(os.Stderr, "chat: %s\n", conv)
	}

	select {
	case err := <-serveErr:
		stopEngine()
		<-engineDone
		return err
	case <-ctx.Done():
	}
	// Graceful shutdown: stop accepting, let running requests finish up
	// to the deadline, then end them (finish reason "cancelled").
	fmt.Fprintf(os.Stderr, "shutting down: waiting up to %s for running requests\n", c.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	err = httpSrv.Shutdown(sctx)
	stopEngine()
	<-engineDone
	if errors.Is(err, context.DeadlineExceeded) {
		httpSrv.Close()
	}
	return nil
}

// checkFlags refuses, before the server listens, the flags no model is
// needed to judge: an empty API key (set but empty: an unset variable
// expanded by a shell is the usual cause; unset means no key), a negative
// --max-len, prefill buckets past an explicit --max-len, image limits out
// of range, a CORS origin that is not "*" or an http(s) origin.
func (c *serveCmd) checkFlags(prefill []int64) error {
	if c.APIKey != nil && strings.TrimSpace(*c.APIKey) == "" {
		return fmt.Errorf("--api-key (or $ARCHC_API_KEY) is set but empty: give a key, or leave both unset to serve without one (an unset shell variable expands to an empty key)")
	}
	if c.MaxLen < 0 {
		return fmt.Errorf("--max-len %d: the KV-cache length must be a positive number of tokens (0: the default)", c.MaxLen)
	}
	if c.MaxLen > 0 && len(prefill) > 0 && prefill[len(prefill)-1] > c.MaxLen {
		return fmt.Errorf("--prefill-buckets %v: bucket %d is longer than --max-len %d; give buckets of at most %d tokens, or a larger --max-len", prefill, prefill[len(prefill)-1], c.MaxLen, c.MaxLen)
	}
	if c.MaxImages < 1 {
		return fmt.Errorf("--max-images %d: give 1 or more (images one request may send)", c.MaxImages)
	}
	if c.MaxImagePixels < 0 {
		return fmt.Errorf("--max-image-pixels %d: give 0 (Pillow's limit) or more pixels", c.MaxImagePixels)
	}
	for _, o := range c.CORSOrigin {
		if err := checkOrigin(o); err != nil {
			return fmt.Errorf("--cors-origin %q: %v", o, err)
		}
	}
	return nil
}

// checkOrigin accepts "*" and a browser origin: http or https, a host,
// an optional port, nothing after (as browsers send Origin; rs/cors also
// takes one "*" wildcard in the host, e.g. https://*.example.com).
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("not an origin: give scheme and host, e.g. http://localhost:3000, or * for any")
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("an origin is a scheme and host (and port) only, e.g. http://localhost:3000; no path")
	case strings.Count(u.Host, "*") > 1:
		return fmt.Errorf("at most one * wildcard in the host")
	}
	return nil
}

// hasProcessorConfig reports whether a model folder holds a Hugging Face
// processor config (a vision-language model's image processor settings).
func hasProcessorConfig(dir string) bool {
	for _, f := range []string{"processor_config.json", "preprocessor_config.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}
