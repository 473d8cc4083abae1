package driver

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/driver/ggufmap"
	"github.com/archc/archc/driver/weights"
	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/lower"
)

// Plan is everything known about a model before it runs: its family,
// config, IR graph, the emitted module and (when the folder has one) the
// checkpoint's tensor index.
type Plan struct {
	Dir  string         // model folder ("" when planned from a bare config.json or a GGUF file)
	GGUF *ggufmap.Model // the GGUF file the model comes from, as its family reads it, or nil
	// MMProj is the mmproj file beside a vision-language model's text GGUF
	// (PlanOptions.MMProj), as its family's encoder reads it; nil without one.
	MMProj *ggufmap.Model
	Family *Family        // the matched family
	Raw    map[string]any // config.json as decoded
	// Nested is the config.json object that holds the text model when the
	// model is a wrapper's (a match clause `in text_config`:
	// Llama4ForConditionalGeneration); nil: Raw's top level.
	Nested map[string]any
	// Bound is the object the family's config block evaluated to give
	// Config: Raw, or for a wrapper Nested with the wrapper's top-level
	// fields over it (as Hugging Face's wrapper classes read them).
	Bound map[string]any
	// WeightScope prefixes the family's weights in the checkpoint when its
	// match clause names a scope ("language_model."): the plan reads
	// language_model.model.layers.0... as model.layers.0...
	WeightScope string
	Config      map[string]any // the family's evaluated config block
	Graph       *ir.Graph
	Options     lower.Options
	Module      *codegen.Module
	MLIR        []byte
	Weights     *weights.Index // nil without a checkpoint

	// WeightAs is the family's prefix for the weights under WeightScope
	// when the match clause renames them (`scope model.language_model as
	// model`: "model."); "" when WeightScope is a plain prefix.
	WeightAs string

	// Lengths is how the graph's RoPE depends on the sequence length
	// (lower.LengthDependence): what the runtime asks about cached keys.
	Lengths abi.LengthPolicy
	// States is the module's per-sequence state table (lower.StateTable):
	// after NewGraph the graph's, for no options (no KV positions, no copy
	// entry points); after NewPlan the module's, for Options. The memory
	// budget counts every row (FitOptions). States.FixedState(): a slot's
	// conv window or recurrent state serves only the sequence its held
	// tokens end, at exactly that position.
	States abi.StateTable
	// Unread names the checkpoint's tensors the graph does not read (set
	// by CheckWeights): a GGUF file's that map to Hugging Face tensors the
	// graph leaves out (a model's multi-token-prediction layers), left out
	// of its packed weights (ggufmap.Model.Keep); or a safetensors
	// checkpoint's (by their stored names), such as MTP layers, a vision
	// tower a text-only family does not read, or the layers past a
	// config.json's num_hidden_layers, which the CLIs print so that a
	// config that reads less than the checkpoint holds is never silent.
	Unread []string
	// Encoders are the module's encoder entry points (lower.Encoders: a
	// vision-language family's image encoder), in the order of the
	// prefill's extra arguments; nil for a text-only family.
	Encoders []abi.Encoder
	// MRoPE: the graph's RoPE is multimodal (lower.MRoPE: Qwen2-VL's
	// M-RoPE), so its entry points take each token's 3-D RoPE positions.
	MRoPE bool
	// HasMTP: the family and config have a multi-token-prediction module
	// (ir.Graph.MTP), which Graph keeps only with Options.MTP.
	HasMTP bool
}

// NoMTPError is NewGraph's error for lower.Options.MTP on a model whose
// family or config has no multi-token-prediction module, or whose
// family's module does not build for its config (Reason).
type NoMTPError struct {
	Model, Family string
	Reason        error  // the module's build error (ir.Graph.MTPErr), nil when there is none
	Missing       string // a tensor of the module the checkpoint lacks (NewPlan), "" when none
}

func (e *NoMTPError) Error() string {
	if e.Missing != "" {
		return fmt.Sprintf("%s (family %s): its config declares multi-token-prediction (MTP) layers but the checkpoint has no tensor %q of them (published checkpoints often drop the MTP layers and keep the config key that declares them, num_nextn_predict_layers or mtp_num_hidden_layers)", e.Model, e.Family, e.Missing)
	}
	if e.Reason != nil {
		return fmt.Sprintf("%s (family %s): its multi-token-prediction (MTP) module does not build for this config: %v", e.Model, e.Family, e.Reason)
	}
	return fmt.Sprintf("%s (family %s) has no multi-token-prediction (MTP) layers archc reads: its .arch has no mtp module, or its config has none (num_nextn_predict_layers 0)", e.Model, e.Family)
}

// Unwrap returns Reason.
func (e *NoMTPError) Unwrap() error { return e.Reason }

// PlanOptions chooses the family and static shapes.
type PlanOptions struct {
	Arch  string        // a .arch file to use instead of the built-in families
	Lower lower.Options // zero value: lower.DefaultOptions() fitted to the config
	// GGUF, when set, is the already opened GGUF file at the plan's path:
	// its header is not read again (one read serves the tokenizer, the
	// config and the weights).
	GGUF *gguf.File
	// MMProj is the path of llama.cpp's mmproj file for a text GGUF model
	// (llama-mtmd-cli's and llama-server's --mmproj): the image encoder and
	// projector of a vision-language model. The family is the one whose
	// encoder claims the file (its clip.projector_type); its config is
	// the text file's with the mmproj's as vision_config. Only with a
	// GGUF path.
	MMProj string
	// GPU plans for a GPU target (ireetool.Target.GPU): the shapes Lower
	// leaves unset take GPU defaults (GPUDecodeBatches, GPUPrefillBuckets,
	// as many slots as the largest decode batch, GPUKVCacheBudget).
	// Kernels must be nil: archc's matmul kernels are CPU code.
	GPU bool
}

// NewPlan reads a model folder (config.json plus model.safetensors or a
// sharded index), a bare config.json or a GGUF file, resolves its family
// and builds the IR (NewGraph), checks every weight the graph reads against
// a safetensors checkpoint (presence, shape, dtype) and emits the StableHLO
// module. Weights are declared in their stored format: a safetensors dtype,
// or a GGUF tensor's type (decoded in the graph or by opts.Lower.Kernels);
// without a checkpoint, f32. Errors name the file and the problem.
func NewPlan(path string, opts PlanOptions) (*Plan, error) {
	p, err := NewGraph(path, opts)
	if err != nil {
		return nil, err
	}
	g := p.Graph
	if opts.GPU && opts.Lower.Kernels != nil {
		return nil, fmt.Errorf("archc's matmul kernels (%s) are CPU code: a plan for a GPU takes every weight through the plain lowering", opts.Lower.Kernels.Variant)
	}
	lo, err := p.FitOptions(opts)
	if err != nil {
		return nil, err
	}
	p.Options = lo
	p.States = lower.StateTable(g, lo)
	if err := p.checkWeights(path); err != nil {
		return nil, err
	}
	if p.Module, err = lower.Lower(g, p.Options); err != nil {
		return nil, err
	}
	p.MLIR = p.Module.Print()
	return p, nil
}

// FitOptions is the lowering options NewPlan uses for p's graph given
// opts: opts.Lower with the defaults filled and the KV cache's length
// fitted to the model's position limit and the memory budget, which counts
// every row of the graph's state table (lower.StateTable; fitOptions).
func (p *Plan) FitOptions(opts PlanOptions) (lower.Options, error) {
	raw := p.Raw
	if p.Nested != nil {
		raw = p.Nested
	}
	st := lower.StateTable(p.Graph, opts.Lower)
	lo, err := fitOptions(opts.Lower, positionLimit(raw, p.Config, p.Lengths), st.BytesPerToken(), st.FixedBytesPerSlot(), opts.GPU)
	if err != nil {
		return lo, err
	}
	if len(opts.Lower.PrefillBuckets) == 0 {
		lo.PrefillBuckets = kernelBuckets(lo.PrefillBuckets, opts.Lower.Kernels, lo.MaxLen)
		lo.PrefillBuckets = blockBuckets(lo.PrefillBuckets, p.Encoders, lo.MaxLen)
	}
	lo.GPU = opts.GPU
	return lo, nil
}

// kernelBuckets is the default prefill buckets with the kernels' own
// chunk (lower.Kernels.PrefillBucket: driver/kernels.LongPrefill for the
// AMX and AVX-512 builds) added where it fits maxLen and no bucket is as
// long already.
func kernelBuckets(buckets []int64, k *lower.Kernels, maxLen int64) []int64 {
	if k == nil || k.PrefillBucket == 0 || k.PrefillBucket > maxLen || (len(buckets) > 0 && slices.Max(buckets) >= k.PrefillBucket) {
		return buckets
	}
	out := append(slices.Clone(buckets), k.PrefillBucket)
	slices.Sort(out)
	return out
}

// blockBuckets is the default prefill buckets with one more where an
// encoder's placeholder runs are attention blocks (abi.Encoder.Blocks:
// Gemma 3's image tokens see each other, so a run lies in one prefill
// chunk) longer than the largest bucket: the run's length rounded up to a
// multiple of 64, within maxLen. Without it the CPU defaults (16, 64)
// refuse every image of a real Gemma 3 (256 tokens a run).
func blockBuckets(buckets []int64, encs []abi.Encoder, maxLen int64) []int64 {
	run := int64(0)
	for _, e := range encs {
		if e.Blocks {
			run = max(run, e.Rows)
		}
	}
	if run == 0 || (len(buckets) > 0 && slices.Max(buckets) >= run) {
		return buckets
	}
	b := min((run+63)/64*64, maxLen)
	if b < run {
		return buckets // too long for the cache: the runtime's error names the run and the flags
	}
	out := append(slices.Clone(buckets), b)
	slices.Sort(out)
	return out
}

// CheckWeights checks every weight the graph reads against the model's
// checkpoint as NewPlan does, and records their stored formats in
// p.Options.WeightDTypes: a model folder's safetensors (presence, shape,
// dtype) or a GGUF file's tensors (presence). A plan without a checkpoint
// (a bare config.json, a folder without model.safetensors) passes. Errors
// are at the .arch position that declared the weight, naming the tensor
// (`archc ir` reports them as the tests would).
func (p *Plan) CheckWeights() error {
	path := p.Dir
	if p.GGUF != nil {
		path = p.GGUF.Path
	}
	return p.checkWeights(path)
}

// CheckWeights returns what NewPlan would say about the checkpoint at path
// for opts — an unknown model, a config archc refuses, a missing tensor,
// a NoMTPError when opts.Lower.MTP asks for MTP layers the checkpoint lacks
// — without lowering or compiling: the model's config (or GGUF header) and
// tensor names are read, nothing else. nil when NewPlan would get past
// them.
func CheckWeights(path string, opts PlanOptions) error {
	p, err := NewGraph(path, opts)
	if err != nil {
		return err
	}
	return p.checkWeights(path)
}

func (p *Plan) checkWeights(path string) error {
	if p.Dir != "" && HasCheckpoint(p.Dir) {
		if err := p.bindWeights(); err != nil {
			return err
		}
	}
	if gm := p.GGUF; gm != nil { // weights keep their GGUF storage (ggufmap.Model.Pack)
		read := map[string]bool{}
		for _, w := range p.Graph.Weights {
			read[w.Name] = true
		}
		p.Unread = gm.Keep(read)
		formats := gm.Formats()
		var encoder map[string]bool // the encoders' weights: the mmproj file's
		if p.MMProj != nil {
			p.Unread = append(p.Unread, p.MMProj.Keep(read)...)
			maps.Copy(formats, p.MMProj.Formats())
			encoder = map[string]bool{}
			for _, eg := range p.Graph.Encoders {
				for _, w := range eg.Weights {
					encoder[w.Name] = true
				}
			}
		}
		p.Options.WeightDTypes = map[string]string{}
		for _, w := range p.Graph.Weights {
			fm, ok := formats[w.Name]
			if !ok && encoder[w.Name] {
				return w.Errorf("%s: missing tensor %q (family %s's image encoder reads it; its gguf \"clip\" section names the mmproj tensor that holds it: is this mmproj file a %s model's, as llama.cpp's converter writes it?)", p.MMProj.Path, w.Name, p.Family.Name, p.Family.Name)
			}
			if !ok {
				if no := p.missingMTP(w.Name); no != nil {
					return no
				}
				if g, hf := unreadNear(gm, p.Unread, w.Name); g != "" {
					return w.Errorf("%s: missing tensor %q (family %s reads it); the file's %s, which the gguf section maps to %q, is read by nothing: is that tensor row of the family's gguf section right?", path, w.Name, p.Family.Name, g, hf)
				}
				if from := ggufSource(gm, w.Name); from != "" {
					return w.Errorf("%s: missing tensor %q (family %s reads it%s, which the file lacks; is this GGUF a %s model as llama.cpp's converter writes it?)", path, w.Name, p.Family.Name, from, p.Family.Name)
				}
				return w.Errorf("%s: missing tensor %q (family %s reads it; is this GGUF a %s model?)", path, w.Name, p.Family.Name, p.Family.Name)
			}
			p.Options.WeightDTypes[w.Name] = fm
		}
	}
	return nil
}

// ggufSource says where the family's gguf section reads Hugging Face
// tensor hf from (ggufmap.Model.Source), " from tensor X" or " from slice
// k of the first dimension of tensor X", for a message; "" when no row does.
func ggufSource(gm *ggufmap.Model, hf string) string {
	g, slice, ok := gm.Source(hf)
	switch {
	case !ok:
		return ""
	case slice >= 0:
		return fmt.Sprintf(" from slice %d of the first dimension of tensor %q", slice, g)
	}
	return fmt.Sprintf(" from tensor %q", g)
}

// unreadNear returns, among a GGUF file's unread tensors (GGUF names),
// the one whose Hugging Face name (as the family's gguf section maps it)
// is closest to want, a weight the graph reads and the file lacks, within
// a small edit distance (dsl.Closest), with that name: a misspelt
// tensor row; "" when none is that close.
func unreadNear(gm *ggufmap.Model, unread []string, want string) (gguf, hf string) {
	byHF := map[string]string{}
	var names []string
	for _, g := range unread {
		if h, ok := gm.HFName(g); ok {
			byHF[h] = g
			names = append(names, h)
		}
	}
	if h := dsl.Closest(want, names); h != "" {
		return byHF[h], h
	}
	return "", ""
}

// NewGraph is NewPlan up to the IR: it reads the model's config (a
// folder's config.json, a bare config.json, or a GGUF file's metadata read
// through the gguf section of the family that claims it, ReadGGUF; its
// tensor types are checked first), resolves the family and builds the
// graph, without reading weights or lowering (`archc ir`). The Plan has
// Dir, GGUF, Family, Raw, Config and Graph set; opts.Lower is not used.
func NewGraph(path string, opts PlanOptions) (*Plan, error) {
	var fams []*Family
	if opts.Arch != "" {
		f, err := LoadFamily(opts.Arch)
		if err != nil {
			return nil, err
		}
		fams = []*Family{f}
	} else {
		var err error
		if fams, err = BuiltinFamilies(); err != nil {
			return nil, err
		}
	}
	var raw map[string]any
	var gm, mm *ggufmap.Model
	if gguf.IsFile(path) {
		gf := opts.GGUF
		var err error
		if gf == nil {
			if gf, err = gguf.Open(path); err != nil {
				return nil, err
			}
		}
		if err := gf.CheckTypes(); err != nil { // before anything slow
			return nil, err
		}
		if opts.MMProj != "" {
			fam, tm, m, r, err := readMMProj(fams, gf, opts.MMProj)
			if err != nil {
				return nil, err
			}
			gm, mm, raw, fams = tm, m, r, []*Family{fam}
		} else {
			if gm, err = ReadGGUF(fams, gf); err != nil {
				return nil, err
			}
			raw = gm.Config
		}
	} else {
		if opts.MMProj != "" {
			return nil, fmt.Errorf("--mmproj %s goes with a text model's GGUF file; %s is not one (a Hugging Face folder holds its vision tower in its checkpoint)", opts.MMProj, path)
		}
		cfgPath, err := configPath(path)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(cfgPath)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w (a model folder needs config.json)", path, err)
		}
		if raw, err = dsl.DecodeConfig(data); err != nil {
			return nil, fmt.Errorf("%s: %w", cfgPath, err)
		}
	}
	source := "config.json"
	if gm != nil {
		source = path + " (its GGUF metadata)"
	}
	if mm != nil {
		source = path + " and " + opts.MMProj + " (their GGUF metadata)"
	}
	res, err := resolveFamily(fams, raw, source)
	if err != nil {
		return nil, err
	}
	fam, cfg := res.family, res.config
	encoders, err := BuildEncoders(fam, raw, source, opts.Lower.EncoderSizes)
	if err != nil {
		return nil, err
	}
	g, err := dsl.Build(fam.File, cfg, lower.Registry{}, encoders...)
	if err != nil {
		return nil, err
	}
	hasMTP := g.MTP != nil
	switch {
	case opts.Lower.MTP && !hasMTP:
		return nil, &NoMTPError{Model: path, Family: fam.Name, Reason: g.MTPErr}
	case !opts.Lower.MTP:
		g = g.WithoutMTP() // its tensors stay unread
	}
	p := &Plan{HasMTP: hasMTP, Family: fam, Raw: raw, Nested: res.nested, Bound: res.bound, WeightScope: res.scope, WeightAs: res.as, Config: cfg, Graph: g, GGUF: gm, MMProj: mm, Lengths: lower.LengthDependence(g), MRoPE: lower.MRoPE(g), States: lower.StateTable(g, lower.Options{})}
	if p.Encoders, err = lower.Encoders(g); err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() && gm == nil {
		p.Dir = path
	}
	return p, nil
}

// KVCacheBudget bounds the default KV-cache size (bytes, all slots): the
// default length is lowered, in steps of 256 tokens, until the cache fits.
const KVCacheBudget = 1 << 30

// The shapes a plan for a GPU (PlanOptions.GPU) defaults to. A GPU is
// wasted at batch 1: decode entry points go up to 64 sequences (each a
// module entry point: compile time grows with the count) and prefill
// chunks up to 512 tokens (clipped to the KV-cache length). The KV cache
// of 64 slots gets a GPU's budget (16 GiB: 4096 tokens for each of 64
// Llama-3.2-1B sequences, 768 for Qwen3-8B).
var (
	GPUDecodeBatches  = []int64{1, 4, 16, 64}
	GPUPrefillBuckets = []int64{16, 128, 512}
)

// GPUKVCacheBudget is KVCacheBudget for a plan for a GPU.
const GPUKVCacheBudget = 16 << 30

// positionLimit is the longest sequence the model is run at (0: no limit
// known): max_position_embeddings as the family's config block binds it
// (its default when config.json has none), else config.json's, as the
// graph's length policy limits it (abi.LengthPolicy.PositionLimit: never
// past the length beyond which a dynamic NTK RoPE rescales per length).
func positionLimit(raw, cfg map[string]any, lengths abi.LengthPolicy) int64 {
	mp, _ := cfg["max_position_embeddings"].(int64)
	if mp <= 0 {
		mp, _ = raw["max_position_embeddings"].(int64)
	}
	return lengths.PositionLimit(mp)
}

// fitOptions fills defaults and keeps the KV cache within the model's
// position limit mp (positionLimit; 0: none): by default
// min(lower.DefaultOptions().MaxLen, mp), lowered to fit KVCacheBudget given
// kvPerToken (bytes per token per slot) and statePerSlot (the windows' and
// recurrent states' bytes per slot, both from the state table: every kind
// of state is counted); an explicit MaxLen beyond mp, or not positive, is an
// error. For a GPU the batch and chunk defaults are GPUDecodeBatches and
// GPUPrefillBuckets, the slots as many as the largest decode batch, and the
// budget GPUKVCacheBudget; when the default slots' states alone would take
// more than half the budget (a large state-space model), the default slots
// halve until they fit, with the decode batches past them dropped.
func fitOptions(o lower.Options, mp, kvPerToken, statePerSlot int64, gpu bool) (lower.Options, error) {
	def := lower.DefaultOptions()
	budget := int64(KVCacheBudget)
	if gpu {
		def.DecodeBatches, def.PrefillBuckets, budget = GPUDecodeBatches, GPUPrefillBuckets, GPUKVCacheBudget
		if len(o.DecodeBatches) > 0 {
			def.DecodeBatches = o.DecodeBatches
		}
		def.Slots = slices.Max(def.DecodeBatches)
		if len(o.DecodeBatches) == 0 && o.Slots == 0 {
			for def.Slots > 1 && def.Slots*statePerSlot > budget/2 {
				def.Slots /= 2
			}
			var fit []int64
			for _, b := range def.DecodeBatches {
				if b <= def.Slots {
					fit = append(fit, b)
				}
			}
			if len(fit) == 0 || fit[len(fit)-1] != def.Slots {
				fit = append(fit, def.Slots)
			}
			def.DecodeBatches = fit
		}
	}
	hasMP := mp > 0
	if o.Slots == 0 {
		o.Slots = def.Slots
	}
	switch {
	case o.MaxLen < 0:
		return o, fmt.Errorf("--max-len %d: the KV-cache length must be a positive number of tokens", o.MaxLen)
	case o.MaxLen == 0:
		o.MaxLen = def.MaxLen
		if hasMP && mp > 0 && mp < o.MaxLen {
			o.MaxLen = mp
		}
		for o.MaxLen > 256 && o.MaxLen*o.Slots*kvPerToken+o.Slots*statePerSlot > budget {
			o.MaxLen = (o.MaxLen - 1) / 256 * 256
		}
	case hasMP && o.MaxLen > mp:
		return o, fmt.Errorf("--max-len %d exceeds the model's max_position_embeddings %d", o.MaxLen, mp)
	}
	if len(o.DecodeBatches) == 0 {
		o.DecodeBatches = def.DecodeBatches
	}
	if len(o.PrefillBuckets) == 0 {
		for _, b := range def.PrefillBuckets {
			if b <= o.MaxLen {
				o.PrefillBuckets = append(o.PrefillBuckets, b)
			}
		}
		if len(o.PrefillBuckets) == 0 {
			o.PrefillBuckets = []int64{o.MaxLen}
		}
	}
	return o, nil
}

// HasCheckpoint reports whether model folder dir holds a safetensors
// checkpoint (model.safetensors, or a sharded one's index).
func HasCheckpoint(dir string) bool {
	for _, n := range []string{"model.safetensors", "model.safetensors.index.json"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// bindWeights checks every graph weight against the checkpoint and records
// stored dtypes for codegen; an MLX affine-quantized folder (config.json
// `quantization`) is viewed through weights.Affine.
// missingMTP is the NoMTPError for a tensor name the checkpoint lacks when
// it is one of the graph's MTP module alone (ir.MTP.Weights): a config that
// declares MTP layers whose checkpoint dropped them. nil for any other name.
func (p *Plan) missingMTP(name string) error {
	if p.Graph.MTP == nil {
		return nil
	}
	for _, w := range p.Graph.MTP.Weights {
		if w.Name == name {
			model := p.Dir
			if p.GGUF != nil {
				model = p.GGUF.Path
			}
			return &NoMTPError{Model: model, Family: p.Family.Name, Missing: name}
		}
	}
	return nil
}

func (p *Plan) bindWeights() error {
	ix, err := weights.Open(p.Dir)
	if err != nil {
		return err
	}
	stored := maps.Clone(ix.Tensors) // as the checkpoint names them, before the views below
	if p.WeightScope != "" {
		unscope(ix, p.WeightScope, p.WeightAs)
	}
	for _, ef := range dsl.Encoders(p.Family.File) {
		if scope, as := dsl.EncoderScope(ef); scope != "" {
			unscope(ix, scope, as)
		}
	}
	q, err := weights.ParseAffineQuant(p.Raw)
	if err != nil {
		return err
	}
	if q != nil {
		if ix, err = weights.Affine(ix, q); err != nil {
			return err
		}
	} else {
		for _, name := range ix.Names() {
			if ix.Tensors[name].DType == tensor.U32 {
				return fmt.Errorf("%s: tensor %q is U32 (packed quantized values) but config.json has no MLX \"quantization\" entry: archc reads MLX affine folders (quantization: {group_size, bits, mode: affine}) and f32/f16/bf16 checkpoints", ix.Source, name)
			}
		}
	}
	if err := p.useWeights(ix); err != nil {
		return err
	}
	p.Unread = unreadTensors(stored, ix, p.Graph.Weights)
	return nil
}

// unreadTensors names the tensors of a checkpoint (stored: its tensors
// as stored) that no graph weight reads in ix (the index the weights were
// bound in, with its scoped, stacked and affine views), by where their data
// lies: a weight reads its own tensor, the parts it is stacked from, or an
// MLX affine tensor's three parts. Sorted.
func unreadTensors(stored map[string]weights.Info, ix *weights.Index, read []ir.Weight) []string {
	type loc struct {
		file string
		off  int64
	}
	used := map[loc]bool{}
	var mark func(info weights.Info)
	mark = func(info weights.Info) {
		if info.File != "" {
			used[loc{info.File, info.Offset}] = true
		}
		for _, part := range info.Stack {
			mark(part)
		}
		if s := info.Source; s != nil {
			mark(s.Weight)
			mark(s.Scales)
			mark(s.Biases)
		}
	}
	for _, w := range read {
		if info, ok := ix.Tensors[w.Name]; ok {
			mark(info)
		}
	}
	var out []string
	for name, info := range stored {
		if !used[loc{info.File, info.Offset}] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// unscope makes every tensor of ix under scope ("language_model.") also
// known by its name without it, after the prefix as ("" or, for a rename,
// "model."), as the family's graph names it (a name the checkpoint already
// has is kept).
func unscope(ix *weights.Index, scope, as string) {
	short := map[string]weights.Info{}
	for name, info := range ix.Tensors {
		if rest, ok := strings.CutPrefix(name, scope); ok {
			short[as+rest] = info
		}
	}
	for name, info := range short {
		if _, ok := ix.Tensors[name]; !ok {
			ix.Tensors[name] = info
		}
	}
}

// useWeights checks every graph weight against an index and records its
// stored dtype. A missing or mis-shaped tensor is reported at the .arch
// position that declared the weight, a missing one with the closest
// checkpoint name when there is one.
func (p *Plan) useWeights(ix *weights.Index) error {
	p.Weights = ix
	p.Options.WeightDTypes = map[string]string{}
	for _, w := range p.Graph.Weights {
		if _, present := ix.Tensors[w.Name]; !present && w.Parts != nil {
			if err := ix.Stack(w.Name, w.Parts); err != nil {
				return w.Errorf("%w", err)
			}
		}
		info, err := ix.Lookup(w.Name, w.Shape)
		if err != nil {
			if _, present := ix.Tensors[w.Name]; !present {
				if no := p.missingMTP(w.Name); no != nil {
					return no
				}
				if hint := dsl.DidYouMean(w.Name, ix.Names()); hint != "" {
					return w.Errorf("%w%s", err, hint)
				}
			}
			return w.Errorf("%w (family %s reads it; is this checkpoint a %s model?)", err, p.Family.Name, p.Family.Name)
		}
		fm := info.Format
		if fm == "" {
			fm = string(info.DType)
		}
		p.Options.WeightDTypes[w.Name] = fm
	}
	return nil
}
