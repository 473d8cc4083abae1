// Command archc turns .arch family files and Hugging Face configs into
// StableHLO MLIR and IREE modules.
//
//	archc emit <model dir | config.json> [--arch FILE] [-o FILE]
//	archc compile <model dir | config.json> -o FILE.vmfb [--arch FILE]
//	archc check FILE.arch...
//	archc list
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/iree"
	"github.com/archc/archc/rt/kernels"
)

type cli struct {
	Emit    emitCmd    `cmd:"" help:"Print the StableHLO module for a model."`
	Compile compileCmd `cmd:"" help:"Compile a model's module to an IREE .vmfb with iree-compile."`
	Check   checkCmd   `cmd:"" help:"Parse and check .arch files."`
	List    listCmd    `cmd:"" help:"List the built-in families and the model_type values each matches."`
}

type planFlags struct {
	Model     string `arg:"" help:"Model folder (config.json, optional safetensors) or a config.json file."`
	Arch      string `help:"Use this .arch file instead of the built-in families." type:"existingfile"`
	MaxLen    int64  `help:"KV-cache length in tokens; 0 (the default) means min(4096, max_position_embeddings), lowered to fit a 1 GiB KV cache."`
	NoKernels bool   `name:"no-kernels" help:"Leave archc's hand-written matmul kernels out: every weight is decoded in the graph (the plain lowering)."`
}

func (p planFlags) plan(ctx context.Context) (*rt.Plan, error) {
	opts := rt.PlanOptions{Arch: p.Arch}
	opts.Lower.MaxLen = p.MaxLen
	if !p.NoKernels {
		dir, err := iree.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		if opts.Lower.Kernels, err = kernels.Build(ctx, dir); err != nil {
			return nil, err
		}
	}
	return rt.NewPlan(p.Model, opts)
}

type emitCmd struct {
	planFlags
	Output string `short:"o" help:"Write the module here instead of stdout."`
}

func (c *emitCmd) Run(ctx context.Context) error {
	p, err := c.plan(ctx)
	if err != nil {
		return err
	}
	if c.Output == "" {
		_, err = os.Stdout.Write(p.MLIR)
		return err
	}
	return os.WriteFile(c.Output, p.MLIR, 0o644)
}

type compileCmd struct {
	planFlags
	Output string `short:"o" required:"" help:"Output .vmfb path."`
}

func (c *compileCmd) Run(ctx context.Context) error {
	p, err := c.plan(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "compiling %s (%d bytes of MLIR) with iree-compile...\n", p.Family.Name, len(p.MLIR))
	path, cached, err := iree.Compile(ctx, p.MLIR, iree.CompileOptions{})
	if err != nil {
		return err
	}
	if cached {
		fmt.Fprintln(os.Stderr, "(from the compile cache)")
	}
	return copyFile(path, c.Output)
}

type checkCmd struct {
	Files []string `arg:"" help:".arch files to check." type:"existingfile"`
}

func (c *checkCmd) Run() error {
	var failed bool
	for _, f := range c.Files {
		fam, err := rt.LoadFamily(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
			continue
		}
		fmt.Printf("%s: ok (arch %s, matches %s)\n", f, fam.Name, strings.Join(fam.ModelTypes(), ", "))
	}
	if failed {
		return fmt.Errorf("check failed")
	}
	return nil
}

type listCmd struct{}

func (listCmd) Run() error {
	fams, err := rt.BuiltinFamilies()
	if err != nil {
		return err
	}
	for _, f := range fams {
		fmt.Printf("%-10s %-14s %s\n", f.Name, f.Path, strings.Join(f.ModelTypes(), ", "))
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var c cli
	k := kong.Parse(&c, kong.Name("archc"),
		kong.Description("archc: declarative LLM architectures compiled to StableHLO and IREE."),
		kong.BindTo(ctx, (*context.Context)(nil)))
	if err := k.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "archc:", err)
		os.Exit(1)
	}
}
