// Command infer runs archc models.
//
//	infer generate --model PATH (--prompt TEXT [--chat] [--system TEXT] | --prompt-ids 1,2,3)
//	               [--max-tokens N] [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--seed S] [--json]
//	infer tokenize --model PATH [--text TEXT] [--json] [--add-special]
//	infer serve --model PATH [--addr 127.0.0.1:8080] [--max-batch N] [--max-len L] [--api-key KEY]
//
// PATH is a Hugging Face folder or a .gguf file.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/alecthomas/kong"
)

type cli struct {
	Generate generateCmd `cmd:"" help:"Generate text (or token ids) from a prompt."`
	Tokenize tokenizeCmd `cmd:"" help:"Print the token ids of a text (--text or standard input)."`
	Serve    serveCmd    `cmd:"" help:"Serve the model over an OpenAI-compatible HTTP API with continuous batching."`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var c cli
	k := kong.Parse(&c, kong.Name("infer"),
		kong.Description("infer: run archc models."),
		kong.BindTo(ctx, (*context.Context)(nil)))
	if err := k.Run(); err != nil {
		if ctx.Err() != nil { // Ctrl-C: the worker was stopped on purpose
			fmt.Fprintln(os.Stderr, "infer: interrupted")
			os.Exit(130)
		}
		fmt.Fprintln(os.Stderr, "infer:", err)
		os.Exit(1)
	}
}
