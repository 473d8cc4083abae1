// Package formats is archc's weight-storage table: the formats in which a
// checkpoint tensor may reach the compiled module (f32, f16, bf16, GGUF's
// block quantizations, MLX affine quantization), each with its element
// type, block size and bytes, ggml type number and documentation. The
// rows are data (formats.json; `go generate ./formats` writes
// formats_gen.go from it). The checkpoint readers (formats/gguf, driver/weights)
// name the formats of their tensors with it, and the compiler (package
// lower) decodes each format in the graph; this package imports nothing
// of either.
package formats

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
)

//go:generate go run ./internal/formatgen/gen

// Format is one row of the storage table: how a tensor of logical shape
// [..., cols] is stored. Float formats (BlockElems 1) are the dtype
// itself; a block format stores each row as cols/BlockElems blocks of
// BlockBytes bytes.
type Format struct {
	Name       string // format name, as lower.Options.WeightDTypes gives it
	Elem       string // MLIR element type of the module global: f32, f16, bf16, or i8 (the block bytes)
	BlockElems int64  // weights per block (1 for float formats)
	BlockBytes int64  // bytes per block
	// GGMLType is ggml's GGML_TYPE_* number for the format, -1 when GGUF
	// has none (MLX affine).
	GGMLType int
	// Documentation: the block layout (C-like), the dequantization
	// formula, and the implementation the decoders equal bit for bit.
	Layout, Formula, Reference string
}

// byName indexes the fixed rows (read-only after init).
var byName = func() map[string]Format {
	m := make(map[string]Format, len(rows))
	for _, r := range rows {
		m[r.Name] = r
	}
	return m
}()

// Rows returns the fixed rows of the table, in formats.json order (MLX
// affine formats, made from their parameters, are not among them).
func Rows() []Format { return append([]Format(nil), rows...) }

// Lookup returns the format called name: a fixed row, or an MLX affine
// format (Affine) parsed from its name. ok is false for an unknown name.
func Lookup(name string) (Format, bool) {
	if f, ok := byName[name]; ok {
		return f, true
	}
	bits, gs, elem, ok := ParseAffine(name)
	if !ok {
		return Format{}, false
	}
	sz := int64(2)
	if elem == "f32" {
		sz = 4
	}
	return Format{
		Name: name, Elem: "i8", BlockElems: gs, BlockBytes: 2*sz + gs*bits/8, GGMLType: -1,
		Layout:    fmt.Sprintf("{%s scale, bias; u8 q[%d]} (driver/weights' affine packing of one group)", elem, gs*bits/8),
		Formula:   fmt.Sprintf("w = scale·q + bias, %d-bit q, in %s", bits, elem),
		Reference: "mlx.core.dequantize (mlx/backend/cpu/quantized.cpp), mode affine",
	}, true
}

// GGML returns the name of the format that stores ggml tensor type t
// (GGML_TYPE_* numbering), and false when the table has no row for it.
func GGML(t uint32) (string, bool) {
	for _, r := range rows {
		if r.GGMLType >= 0 && uint32(r.GGMLType) == t {
			return r.Name, true
		}
	}
	return "", false
}

// AffinePattern names the MLX affine family in Names.
const AffinePattern = "mlx_affine<bits>_g<group_size>_<f32|f16|bf16>"

var affineName = regexp.MustCompile(`^mlx_affine([0-9]+)_g([0-9]+)_(f32|f16|bf16)$`)

// Affine is the storage format name of MLX affine quantization
// (mlx.core.quantize, mode "affine") with bits per weight (2, 3, 4, 5, 6
// or 8), groupSize weights per group (32, 64 or 128) and scales and
// biases of element type scaleElem (f32, f16 or bf16), e.g.
// "mlx_affine4_g64_bf16". It returns false for parameters MLX does not
// write. A block is one group as driver/weights' affine packing lays it out:
// the group's scale and bias (scaleElem, little-endian) then its
// groupSize·bits/8 bytes of packed values, the little-endian bit stream
// mlx.core.quantize writes (value j in bits [j·bits, (j+1)·bits)).
func Affine(bits, groupSize int, scaleElem string) (string, bool) {
	name := fmt.Sprintf("mlx_affine%d_g%d_%s", bits, groupSize, scaleElem)
	_, _, _, ok := ParseAffine(name)
	return name, ok
}

// ParseAffine returns the parameters of an MLX affine format name
// (Affine): bits per weight, group size, scale element type; ok is false
// for any other name or parameters MLX does not write.
func ParseAffine(name string) (bits, groupSize int64, scaleElem string, ok bool) {
	m := affineName.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, "", false
	}
	bits, _ = strconv.ParseInt(m[1], 10, 64)
	groupSize, _ = strconv.ParseInt(m[2], 10, 64)
	switch bits {
	case 2, 3, 4, 5, 6, 8:
	default:
		return 0, 0, "", false
	}
	switch groupSize {
	case 32, 64, 128:
	default:
		return 0, 0, "", false
	}
	return bits, groupSize, m[3], true
}

// Names lists the format names Lookup accepts, sorted, with the MLX affine
// family as its pattern (AffinePattern).
func Names() []string {
	out := make([]string, 0, len(rows)+1)
	for _, r := range rows {
		out = append(out, r.Name)
	}
	out = append(out, AffinePattern)
	sort.Strings(out)
	return out
}
