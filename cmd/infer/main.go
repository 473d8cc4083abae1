// Command infer runs archc models.
//
//	infer generate --model PATH (--prompt TEXT [--chat] [--system TEXT] | --prompt-ids 1,2,3)
//	               [--max-tokens N] [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--seed S] [--json]
//	infer tokenize --model PATH [--text TEXT] [--json] [--add-special]
//	infer serve --model PATH [--addr 127.0.0.1:8080] [--max-batch N] [--max-len L] [--api-key KEY]
//	infer logits --model PATH --prompt-ids 1,2,3 --out FILE.npy [--prefix N] [--precision f32|int8]
//
// PATH is a Hugging Face folder or a .gguf file.
package main

import (
	"context"
	"fmt"
	"github.com/archc/archc/formats/option"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/archc/archc/rt"
)

type cli struct {
	Generate generateCmd `cmd:"" help:"Generate text (or token ids) from a prompt."`
	Tokenize tokenizeCmd `cmd:"" help:"Print the token ids of a text (--text or standard input)."`
	Serve    serveCmd    `cmd:"" help:"Serve the model over an OpenAI-compatible HTTP API with continuous batching."`
	Logits   logitsCmd   `cmd:"" help:"Write the next-token logits at every position of a token sequence (teacher forcing) as a .npy array."`
}

// options are the command line's kong options (main's, and the tests').
func options(ctx context.Context) []kong.Option {
	return []kong.Option{kong.Name("infer"),
		kong.Description("infer: run archc models."),
		kong.BindTo(ctx, (*context.Context)(nil)),
		// DRY's defaults have one home, rt.
		kong.Vars{"dry_base": strconv.FormatFloat(rt.DefaultDRYBase, 'g', -1, 64), "dry_allowed_length": strconv.Itoa(rt.DefaultDRYAllowedLength)},
		signedNumbers()}
}

// signedNumbers lets a numeric flag take a negative value as its own
// argument (--frequency-penalty -1, --logprobs -1): kong reads any argument
// that starts with "-" as a flag, and would ask for --frequency-penalty=-1.
// Only an argument that parses as a number is taken as the value, so a flag
// that lacks its value (--temperature --json) is still an error; kong's own
// decoder then reads it. (kong.WithHyphenPrefixedParameters would do this
// for every flag, and let --prompt --json take "--json" as the prompt.)
func signedNumbers() kong.Option {
	return kong.OptionFunc(func(k *kong.Kong) error {
		defaults := kong.NewRegistry().RegisterDefaults()
		for _, typ := range []reflect.Type{reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](),
			reflect.TypeFor[uint](), reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](),
			reflect.TypeFor[float32](), reflect.TypeFor[float64]()} {
			decode := defaults.ForType(typ)
			mapper := kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
				if t := ctx.Scan.Peek(); t.Type == kong.UntypedToken {
					if v, ok := t.Value.(string); ok && strings.HasPrefix(v, "-") {
						if _, err := strconv.ParseFloat(v, 64); err == nil {
							ctx.Scan.Pop()
							ctx.Scan.PushTyped(v, kong.FlagValueToken)
						}
					}
				}
				return decode.Decode(ctx, target)
			})
			if err := kong.KindMapper(typ.Kind(), mapper).Apply(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// flagNames are infer's flags for the library parameters an
// option.Error names (rt's GenerateOptions, Text.EncodePrompt, the
// model's KV-cache length).
var flagNames = map[string]string{
	"MaxTokens": "--max-tokens",
	"MaxLen":    "--max-len",
	"System":    "--system",
	"Chat":      "--chat",
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var c cli
	k := kong.Parse(&c, options(ctx)...)
	if err := k.Run(); err != nil {
		if ctx.Err() != nil { // Ctrl-C: the worker was stopped on purpose
			fmt.Fprintln(os.Stderr, "infer: interrupted")
			os.Exit(130)
		}
		fmt.Fprintln(os.Stderr, "infer:", option.Rename(err, flagNames))
		os.Exit(1)
	}
}
