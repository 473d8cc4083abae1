package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt/engine"
	"github.com/archc/archc/rt/kernels"
	"github.com/archc/archc/server"
)

type serveCmd struct {
	Model           string        `required:"" help:"Model: a Hugging Face folder or a .gguf file." type:"path"`
	Addr            string        `default:"127.0.0.1:8080" help:"Address to listen on."`
	MaxBatch        int           `name:"max-batch" default:"4" help:"Requests decoded together at most (KV-cache slots); decode entry points are compiled for 1, 2, 4, ... up to it."`
	MaxLen          int64         `help:"KV-cache length per request in tokens; 0 (the default) means min(4096, max_position_embeddings), lowered so all slots fit 1 GiB."`
	Queue           int           `default:"64" help:"Requests waiting for a slot at most; beyond it the server answers 429."`
	APIKey          string        `name:"api-key" env:"ARCHC_API_KEY" help:"Require Authorization: Bearer KEY on /v1/ calls."`
	Name            string        `help:"Model id in the API (default: the model's file or folder name)."`
	Arch            string        `help:"Match the model against the families in this .arch file instead of the built-in ones (the file may extend a built-in family)." type:"existingfile"`
	Device          string        `default:"local-task" enum:"local-task,local-sync" help:"IREE device."`
	Threads         int           `default:"0" help:"Worker threads of the local-task device (0: one per core)."`
	Kernels         string        `default:"auto" help:"archc's matmul kernels: auto (the best this CPU runs), avx512, avx2, or none (IREE's own matmuls only); a variant the CPU lacks is refused."`
	CallTimeout     time.Duration `name:"call-timeout" default:"2m" help:"A model call running longer is killed and the worker restarted."`
	ShutdownTimeout time.Duration `name:"shutdown-timeout" default:"30s" help:"On SIGINT/SIGTERM, let running requests finish for this long, then end them."`
	ChatTemplate    string        `name:"chat-template" help:"Chat template (Jinja, as Hugging Face writes them) replacing the model's; a GGUF without one gets a built-in template only for families with one turn format (Gemma)." type:"existingfile"`
	CORSOrigin      []string      `name:"cors-origin" sep:"none" help:"Let browser pages from this origin call the API (e.g. http://localhost:3000; * for any), repeatable; none: same-origin only."`
	MaxN            int           `name:"max-n" default:"8" help:"Largest n (choices per request) a request may ask for."`
	LogFormat       string        `name:"log-format" default:"text" enum:"text,json" help:"Format of the log lines on stderr (one per request, per worker failure and restart): text (key=value) or json."`
	Quiet           bool          `short:"q" help:"No progress output on stderr."`
}

// decodeBatches returns 1, 2, 4, ... below max, and max.
func decodeBatches(max int) []int64 {
	var out []int64
	for b := 1; b < max; b *= 2 {
		out = append(out, int64(b))
	}
	return append(out, int64(max))
}

func (c *serveCmd) Run(ctx context.Context) error {
	if c.MaxBatch < 1 || c.MaxBatch > 64 {
		return fmt.Errorf("--max-batch %d: give 1 to 64", c.MaxBatch)
	}
	if _, err := os.Stat(c.Model); err != nil {
		return fmt.Errorf("--model: %v", err)
	}
	if _, err := kernels.Select(c.Kernels); err != nil {
		return fmt.Errorf("--%v", err)
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
	var lh slog.Handler = slog.NewTextHandler(os.Stderr, nil)
	if c.LogFormat == "json" {
		lh = slog.NewJSONHandler(os.Stderr, nil)
	}
	log := slog.New(lh)
	srv := server.New(server.Config{Name: name, APIKey: c.APIKey, MaxN: c.MaxN, CORSOrigins: c.CORSOrigin, Log: log})
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("--addr: %v", err)
	}
	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "listening on http://%s (loading %s; /health answers 503 until it is ready)\n", ln.Addr(), c.Model)

	var o launch.Options
	o.Plan.Arch = c.Arch
	o.Plan.Lower.MaxLen = c.MaxLen
	o.Plan.Lower.Slots = int64(c.MaxBatch)
	o.Plan.Lower.DecodeBatches = decodeBatches(c.MaxBatch)
	o.Device, o.Threads, o.Kernels = c.Device, c.Threads, c.Kernels
	o.Phase = phaseReporter(os.Stderr, c.Quiet)
	m, err := launch.Open(ctx, c.Model, o)
	if err != nil {
		httpSrv.Close()
		return err
	}
	defer m.Close()
	if !c.Quiet {
		fmt.Fprintf(os.Stderr, "kernels: %s, precision f32\n", m.Program.Kernels)
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
		from, err := setChatTemplate(text, c.ChatTemplate, m.Program.GGUF)
		if err != nil {
			httpSrv.Close()
			return err
		}
		if from == "" {
			fmt.Fprintf(os.Stderr, "the model has no chat template: /v1/chat/completions is off (give --chat-template FILE)\n")
		} else if !c.Quiet {
			fmt.Fprintf(os.Stderr, "chat template: %s\n", from)
		}
	}
	e, err := engine.New(m, engine.Options{QueueSize: c.Queue, CallTimeout: c.CallTimeout, Log: log})
	if err != nil {
		httpSrv.Close()
		return err
	}
	runCtx, stopEngine := context.WithCancel(context.Background())
	engineDone := make(chan error, 1)
	go func() { engineDone <- e.Run(runCtx) }()
	srv.Attach(m, text, e)
	fmt.Fprintf(os.Stderr, "ready: %s, %d slots of %d tokens, decode batches %v\n", name, c.MaxBatch, m.MaxLen(), o.Plan.Lower.DecodeBatches)
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
