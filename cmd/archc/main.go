// Command archc turns .arch family files and Hugging Face configs into
// StableHLO MLIR and IREE modules.
//
//	archc emit <model dir | config.json | .gguf> [--arch FILE] [-o FILE]
//	archc compile <model dir | config.json | .gguf> -o FILE.vmfb [--irpa FILE] [--arch FILE] [--target llvm-cpu|cuda|hip|vulkan]
//	archc check FILE.arch...
//	archc fmt [-w] [-l] FILE.arch|DIR...
//	archc ir <model dir | config.json | .gguf> [--arch FILE] [--graph prefill|decode]
//	archc new NAME --extends PARENT --model-type TYPE
//	archc list
package main

import (
	"context"
	"fmt"
	"github.com/archc/archc/driver"
	"github.com/archc/archc/driver/kernels"
	"github.com/archc/archc/dsl"
	"github.com/archc/archc/formats/ireetool"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/alecthomas/kong"
)

type cli struct {
	Emit    emitCmd    `cmd:"" help:"Print the StableHLO module for a model."`
	Compile compileCmd `cmd:"" help:"Compile a model's module to an IREE .vmfb with iree-compile."`
	Check   checkCmd   `cmd:"" help:"Parse and check .arch files."`
	List    listCmd    `cmd:"" help:"List the built-in families, the model_type values each matches and the GGUF architectures each reads."`
	Fmt     fmtCmd     `cmd:"" help:"Lay .arch files out in the canonical layout (gofmt for .arch; comments kept)."`
	IR      irCmd      `cmd:"" name:"ir" help:"Print a model's typed IR: nodes with names, shapes and .arch positions, and the weights they read."`
	New     newCmd     `cmd:"" help:"Start a new family: write DIR/NAME.arch extending PARENT and a fixture entry in the fixture generator."`
}

type planFlags struct {
	Model     string  `arg:"" help:"Model folder (config.json, optional safetensors), a config.json file or a .gguf file."`
	Arch      string  `help:"Match the model against the families in this .arch file instead of the built-in ones (the file may extend a built-in family)." type:"existingfile"`
	MMProj    string  `name:"mmproj" help:"llama.cpp's mmproj file (a vision-language model's image encoder) beside a .gguf text model." type:"existingfile"`
	MaxLen    int64   `help:"KV-cache length in tokens; 0 (the default) means min(4096, max_position_embeddings), lowered to fit a 1 GiB KV cache."`
	NoKernels bool    `name:"no-kernels" help:"Leave archc's hand-written matmul kernels out: every weight is decoded in the graph (the plain lowering); as --kernels none."`
	Kernels   string  `default:"auto" help:"archc's matmul kernels: auto (the best this CPU runs), amx, avx512, avx2, or none; a variant the CPU lacks is refused."`
	Precision string  `default:"f32" enum:"f32,int8" help:"Arithmetic of archc's matmul kernels: f32 (exact products, f32 accumulation; token-exact against the fp32 oracle) or int8 (activations quantized per 32-element block as llama.cpp does, int8 dot products: faster, not exact; needs AVX-512 VNNI)."`
	Target    string  `default:"llvm-cpu" enum:"llvm-cpu,cuda,hip,vulkan" help:"Compile target: llvm-cpu (this host's CPU), or a GPU: cuda (sm_80 PTX, which Hopper runs), hip (gfx942), vulkan. A GPU target plans with GPU shapes and without archc's CPU kernels (every weight through the plain lowering)."`
	Prefill   []int64 `name:"prefill-buckets" sep:"," help:"Prefill chunk lengths in tokens, comma-separated (default: 16,64 on a CPU, with 256 where the kernels run on AMX; 16,128,512 on a GPU; the defaults clipped to --max-len, plus one that holds an image's token run where its tokens attend to each other, Gemma 3's 256; given ones must be at most --max-len)."`
	Decode    []int64 `name:"decode-batches" sep:"," help:"Decode batch sizes, comma-separated (default: 1 on a CPU, 1,4,16,64 on a GPU); the KV cache has as many slots as the largest."`
	Images    []int64 `name:"image-sizes" sep:"," help:"Patch counts a variable-size image encoder (the Qwen-VL and Qwen3.5 towers) is compiled for, comma-separated, one entry point each (default: 256,1024,5120; as infer's --image-sizes, which must match to run the module)."`
}

func (p planFlags) plan(ctx context.Context) (*driver.Plan, error) {
	target, err := ireetool.LookupTarget(p.Target)
	if err != nil {
		return nil, fmt.Errorf("--target: %v", err)
	}
	opts := driver.PlanOptions{Arch: p.Arch, GPU: target.GPU, MMProj: p.MMProj}
	opts.Lower.MaxLen = p.MaxLen
	for _, b := range [][]int64{p.Prefill, p.Decode, p.Images} {
		for _, s := range b {
			if s < 1 {
				return nil, fmt.Errorf("--prefill-buckets %v, --decode-batches %v, --image-sizes %v: each size must be at least 1", p.Prefill, p.Decode, p.Images)
			}
		}
	}
	opts.Lower.EncoderSizes = sortedSizes(p.Images)
	opts.Lower.PrefillBuckets = sortedSizes(p.Prefill)
	if opts.Lower.DecodeBatches = sortedSizes(p.Decode); len(opts.Lower.DecodeBatches) > 0 {
		opts.Lower.Slots = slices.Max(opts.Lower.DecodeBatches)
	}
	if target.GPU && p.Kernels != "auto" && p.Kernels != "none" {
		return nil, fmt.Errorf("--kernels %s: archc's matmul kernels are CPU code; for --target %s every weight goes through the plain lowering (leave --kernels out)", p.Kernels, target.Name)
	}
	if target.GPU && p.Precision != kernels.F32 {
		return nil, fmt.Errorf("--precision %s: the int8 mode is archc's CPU kernels; for --target %s every weight goes through the plain lowering in f32 (leave --precision out)", p.Precision, target.Name)
	}
	if p.NoKernels && p.Precision != kernels.F32 {
		return nil, fmt.Errorf("--precision %s needs archc's kernels; --no-kernels is the plain lowering, which is f32 only", p.Precision)
	}
	if p.Arch != "" {
		// The file's own errors (file:line:col) come before anything the
		// kernels need (the venv's zig): a broken .arch is the news.
		if _, err := driver.LoadFamily(p.Arch); err != nil {
			return nil, err
		}
	}
	v, err := kernels.Select(p.Kernels, p.Precision)
	if err != nil && !target.GPU {
		return nil, fmt.Errorf("--%v", err)
	}
	if v != nil && !p.NoKernels && !target.GPU {
		dir, err := ireetool.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		if opts.Lower.Kernels, err = driver.KernelsVariant(ctx, dir, v); err != nil {
			return nil, err
		}
	}
	plan, err := driver.NewPlan(p.Model, opts)
	if err != nil {
		return nil, err // one line naming the problem; no report before it
	}
	if k := opts.Lower.Kernels; k != nil {
		fmt.Fprintf(os.Stderr, "kernels: %s, precision %s (%s)\n", k.Variant, k.Precision, k.Target)
	} else {
		fmt.Fprintf(os.Stderr, "kernels: none (every weight through the plain lowering)\n")
	}
	return plan, nil
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
	IRPA   string `name:"irpa" help:"Also write the model's weights (as the module reads them) to this IREE parameter archive, for iree-run-module / iree-benchmark-module --parameters=model=FILE."`
}

func (c *compileCmd) Run(ctx context.Context) error {
	for _, out := range []string{c.Output, c.IRPA} {
		if out == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
			return fmt.Errorf("cannot write %s: folder %s does not exist", out, filepath.Dir(out))
		}
	}
	p, err := c.plan(ctx)
	if err != nil {
		return err
	}
	if c.IRPA != "" {
		if err := writeArchive(ctx, p, c.IRPA); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "compiling %s (%d bytes of MLIR) with iree-compile...\n", p.Family.Name, len(p.MLIR))
	fmt.Fprintf(os.Stderr, "target %s\n", c.Target)
	target, _ := ireetool.LookupTarget(c.Target) // plan checked it
	path, cached, err := ireetool.Compile(ctx, p.MLIR, ireetool.CompileOptions{Target: target.Name, Flags: driver.TargetFlags(p, target)})
	if err != nil {
		return err
	}
	if cached {
		fmt.Fprintln(os.Stderr, "(from the compile cache)")
	}
	return copyFile(path, c.Output)
}

// writeArchive packs the plan's weights (GGUF, MLX) into the cache and
// writes them as an IREE parameter archive at path.
func writeArchive(ctx context.Context, p *driver.Plan, path string) error {
	dir, err := ireetool.DefaultCacheDir()
	if err != nil {
		return err
	}
	params, err := p.Parameters(ctx, dir, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", modelName(p), err)
	}
	fmt.Fprintf(os.Stderr, "writing %d parameters to %s...\n", len(params), path)
	return ireetool.WriteParameterArchive(ctx, params, path)
}

// modelName names the plan's model for messages.
func modelName(p *driver.Plan) string {
	if p.GGUF != nil {
		return p.GGUF.Path
	}
	return p.Dir
}

type checkCmd struct {
	Paths []string `arg:"" name:"path" help:".arch files, or folders whose .arch files to check." type:"existingpath"`
}

func (c *checkCmd) Run() error {
	files, err := archFiles(c.Paths)
	if err != nil {
		return err
	}
	var failed bool
	declared := map[string]string{}          // arch name -> the file that declared it first
	fams, errs := driver.LoadFamilies(files) // the files may extend each other
	for i, f := range files {
		fam, err := fams[i], errs[i]
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
			continue
		}
		if first, dup := declared[fam.Name]; dup {
			fmt.Fprintf(os.Stderr, "%s:%d:%d: arch %s is also declared in %s: a family name is declared once (extends names it)\n", f, fam.File.Pos.Line, fam.File.Pos.Column, fam.Name, first)
			failed = true
			continue
		}
		declared[fam.Name] = f
		reads := ""
		if g := fam.GGUFArchs(); len(g) > 0 {
			reads = "; reads GGUF " + strings.Join(g, ", ")
		}
		matches := "matches " + strings.Join(fam.ModelTypes(), ", ")
		if len(fam.ModelTypes()) == 0 {
			matches = "matches no config: a base or mixin that families extend"
		}
		fmt.Printf("%s: ok (arch %s, %s%s)\n", f, fam.Name, matches, reads)
	}
	if failed {
		return fmt.Errorf("check failed")
	}
	return nil
}

type listCmd struct{}

func (listCmd) Run() error {
	fams, err := driver.BuiltinFamilies()
	if err != nil {
		return err
	}
	rows := [][]string{{"FAMILY", "FILE", "MODEL_TYPE", "ENCODERS", "GGUF"}}
	for _, f := range fams {
		archs := f.GGUFArchs()
		var encs []string
		for _, e := range dsl.Encoders(f.File) {
			encs = append(encs, dsl.EncoderName(e))
			for _, a := range dsl.GGUFArchs(e) { // an encoder's claim: llama.cpp's mmproj file
				archs = append(archs, strings.TrimSuffix(a, " (conditional)")+" (mmproj)")
			}
		}
		gguf := strings.Join(archs, ", ")
		if gguf == "" {
			gguf = "-"
		}
		enc := strings.Join(encs, ", ")
		if enc == "" {
			enc = "-"
		}
		types := strings.Join(f.ModelTypes(), ", ")
		if types == "" {
			types = "- (a mixin)"
		}
		rows = append(rows, []string{f.Name, f.Path, types, enc, gguf})
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	return w.Flush()
}

// sortedSizes returns sizes sorted, without repeats (nil for none).
func sortedSizes(sizes []int64) []int64 {
	if len(sizes) == 0 {
		return nil
	}
	out := slices.Clone(sizes)
	slices.Sort(out)
	return slices.Compact(out)
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
