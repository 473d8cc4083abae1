package weights

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/archc/archc/formats"
	"github.com/archc/archc/formats/tensor"
)

// affinePackVersion changes whenever PackAffine's output for the same
// checkpoint would change, invalidating cached packed files.
const affinePackVersion = "archc-mlx-affine-v1"

// AffineParams are one module's MLX affine quantization parameters.
type AffineParams struct {
	GroupSize int // weights per group sharing a scale and a bias (32, 64, 128)
	Bits      int // bits per weight (2, 3, 4, 5, 6, 8)
}

// AffineQuant is the `quantization` object mlx-lm writes into config.json
// (mlx_lm/utils.py quantize_model): the default group_size and bits, mode
// "affine", and per-module entries (a module path such as
// "model.layers.0.mlp.down_proj" mapped to its own parameters, or false
// for a module left unquantized).
type AffineQuant struct {
	Default AffineParams
	Modules map[string]*AffineParams // nil value: not quantized
}

// ParseAffineQuant reads the MLX quantization of a decoded config.json
// (`quantization`, or `quantization_config` when only that is present).
// It returns nil, nil for a config without quantization. Errors: a
// quantization that is not MLX affine (another mode such as mxfp4, or a
// Hugging Face quant_method such as gptq or awq) or malformed parameters,
// named with what to do.
func ParseAffineQuant(cfg map[string]any) (*AffineQuant, error) {
	key := "quantization"
	raw, ok := cfg[key].(map[string]any)
	if !ok {
		key = "quantization_config"
		if raw, ok = cfg[key].(map[string]any); !ok {
			return nil, nil
		}
	}
	if m, ok := raw["quant_method"].(string); ok {
		return nil, fmt.Errorf("config.json %s: quant_method %q is not supported: archc reads MLX affine folders (quantization: {group_size, bits, mode: affine}), GGUF files, and f32/f16/bf16 checkpoints", key, m)
	}
	q := &AffineQuant{Modules: map[string]*AffineParams{}}
	def, err := affineParams(key, raw)
	if err != nil {
		return nil, err
	}
	q.Default = *def
	for k, v := range raw {
		switch v := v.(type) {
		case map[string]any:
			p, err := affineParams(key+"."+k, v)
			if err != nil {
				return nil, err
			}
			q.Modules[k] = p
		case bool:
			if v {
				return nil, fmt.Errorf("config.json %s.%s: true is not a quantization; expected {group_size, bits} or false", key, k)
			}
			q.Modules[k] = nil
		}
	}
	return q, nil
}

// affineParams reads {group_size, bits, mode} at path.
func affineParams(path string, m map[string]any) (*AffineParams, error) {
	if mode, ok := m["mode"]; ok && mode != "affine" {
		return nil, fmt.Errorf("config.json %s: quantization mode %v is not supported: archc reads MLX mode \"affine\" only", path, mode)
	}
	gs, ok1 := m["group_size"].(int64)
	bits, ok2 := m["bits"].(int64)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("config.json %s: needs integer group_size and bits (MLX affine quantization), got %v", path, m)
	}
	if _, ok := formats.Affine(int(bits), int(gs), "f32"); !ok {
		return nil, fmt.Errorf("config.json %s: MLX affine quantization with bits %d and group_size %d is not supported (bits 2, 3, 4, 5, 6 or 8; group_size 32, 64 or 128)", path, bits, gs)
	}
	return &AffineParams{GroupSize: int(gs), Bits: int(bits)}, nil
}

// AffineSource locates the three stored parts of an MLX affine-quantized
// weight before PackAffine interleaves them.
type AffineSource struct {
	Weight Info // U32 [..., cols·bits/32], the packed values
	Scales Info // [..., cols/group_size], f32, f16 or bf16
	Biases Info // same dtype and shape as Scales
	AffineParams
}

// Affine returns the logical view of an MLX affine-quantized checkpoint:
// every "<module>.weight" stored as U32 with "<module>.scales" and
// "<module>.biases" becomes one tensor of its logical shape [..., cols]
// whose Format is formats.Affine(bits, group_size, scales dtype) and
// whose Source holds the three parts (File is empty until PackAffine);
// the .scales and .biases entries leave the index; every other tensor is
// kept. Errors name the tensor: a U32 tensor without scales and biases,
// parts whose shapes or dtypes disagree with each other or with the
// module's group_size and bits.
func Affine(ix *Index, q *AffineQuant) (*Index, error) {
	out := &Index{Source: ix.Source, Tensors: map[string]Info{}}
	used := map[string]bool{}
	for _, name := range ix.Names() {
		info := ix.Tensors[name]
		if info.DType != tensor.U32 {
			continue
		}
		module, ok := strings.CutSuffix(name, ".weight")
		sc, okS := ix.Tensors[module+".scales"]
		bi, okB := ix.Tensors[module+".biases"]
		if !ok || !okS || !okB {
			return nil, fmt.Errorf("%s: tensor %q is U32 without %q and %q beside it: not an MLX affine-quantized weight archc can read", ix.Source, name, module+".scales", module+".biases")
		}
		p := q.Default
		if mp, ok := q.Modules[module]; ok {
			if mp == nil {
				return nil, fmt.Errorf("%s: tensor %q is quantized but config.json quantization.%s is false: the folder is inconsistent", ix.Source, name, module)
			}
			p = *mp
		}
		r := len(info.Shape)
		if r == 0 || len(sc.Shape) != r || !slices.Equal(sc.Shape, bi.Shape) || sc.DType != bi.DType || sc.DType == tensor.U32 ||
			!slices.Equal(sc.Shape[:r-1], info.Shape[:r-1]) {
			return nil, fmt.Errorf("%s: %s: weight %s%v, scales %s%v and biases %s%v do not form an MLX affine tensor", ix.Source, module, info.DType, info.Shape, sc.DType, sc.Shape, bi.DType, bi.Shape)
		}
		cols := info.Shape[r-1] * 32 / int64(p.Bits)
		if info.Shape[r-1]*32%int64(p.Bits) != 0 || cols%int64(p.GroupSize) != 0 || sc.Shape[r-1] != cols/int64(p.GroupSize) {
			return nil, fmt.Errorf("%s: %s: weight %v and scales %v do not match bits %d and group_size %d from config.json", ix.Source, module, info.Shape, sc.Shape, p.Bits, p.GroupSize)
		}
		format, _ := formats.Affine(p.Bits, p.GroupSize, string(sc.DType))
		shape := append(slices.Clone(info.Shape[:r-1]), cols)
		out.Tensors[name] = Info{
			Shape:  shape,
			Format: format,
			Length: info.Length + sc.Length + bi.Length,
			Source: &AffineSource{Weight: info, Scales: sc, Biases: bi, AffineParams: p},
		}
		used[module+".scales"], used[module+".biases"] = true, true
	}
	for name, info := range ix.Tensors {
		if _, done := out.Tensors[name]; !done && !used[name] {
			out.Tensors[name] = info
		}
	}
	return out, nil
}

// PackAffine writes every MLX affine tensor of ix (Affine's view) into one
// file under cacheDir, in the block layout of lower's affine storage
// format: each row's groups in order, each group its scale and bias (the
// stored bytes) then its packed values (the stored bytes of that group),
// the same total size as the three parts; each tensor 64-byte aligned. It
// returns ix with those tensors pointing into the file (see packViews for
// reuse, progress and errors).
func (ix *Index) PackAffine(ctx context.Context, cacheDir string, progress func(done, total int64)) (*Index, error) {
	return ix.packViews(ctx, cacheDir, "mlx", affinePackVersion, "packing MLX weights",
		func(info Info) []Info {
			if info.Source == nil {
				return nil
			}
			return []Info{info.Source.Weight, info.Source.Scales, info.Source.Biases}
		}, packAffine, progress)
}

// packAffine interleaves one tensor's parts group by group (see
// PackAffine).
func packAffine(info Info) ([]byte, error) {
	s := info.Source
	q, err := s.Weight.Read()
	if err != nil {
		return nil, err
	}
	sc, err := s.Scales.Read()
	if err != nil {
		return nil, err
	}
	bi, err := s.Biases.Read()
	if err != nil {
		return nil, err
	}
	sz := sc.DType.Size()
	groups := int(s.Scales.Length) / sz // over all rows
	qb := s.GroupSize * s.Bits / 8      // packed bytes per group
	out := make([]byte, 0, info.Length)
	for g := 0; g < groups; g++ {
		out = append(out, sc.Data[g*sz:(g+1)*sz]...)
		out = append(out, bi.Data[g*sz:(g+1)*sz]...)
		out = append(out, q.Data[g*qb:(g+1)*qb]...)
	}
	if int64(len(out)) != info.Length {
		return nil, fmt.Errorf("internal error: packed %d bytes, planned %d", len(out), info.Length)
	}
	return out, nil
}
