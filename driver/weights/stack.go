package weights

import (
	"context"
	"fmt"
	"slices"
)

// stackPackVersion changes whenever PackStacks' output for the same
// checkpoint would change, invalidating cached packed files.
const stackPackVersion = "archc-stack-v1"

// Stack adds tensor name to ix as a view of parts stacked along a new first
// axis: shape [len(parts), part shape...], the parts' dtype, its bytes the
// parts' bytes one after another. Mixture-of-experts checkpoints store one
// tensor per expert (model.layers.0.block_sparse_moe.experts.3.w1.weight);
// the module reads them as one [experts, rows, cols] tensor. The view's
// data exists once PackStacks has written it. Errors name the missing part,
// or the part whose dtype or shape differs from the first's, or a part
// that is itself a view or block-quantized.
func (ix *Index) Stack(name string, parts []string) error {
	if len(parts) == 0 {
		return fmt.Errorf("%s: cannot stack tensor %q from no parts", ix.Source, name)
	}
	var infos []Info
	for _, p := range parts {
		info, ok := ix.Tensors[p]
		if !ok {
			return fmt.Errorf("%s: missing tensor %q (neither it nor %q, which it is stacked into, is in the checkpoint)", ix.Source, p, name)
		}
		if info.Source != nil || info.Stack != nil || info.Format != "" {
			return fmt.Errorf("%s: tensor %q is quantized (%s); stacking quantized expert tensors is not supported: use an f32/f16/bf16 checkpoint or a GGUF file", ix.Source, p, info.Format)
		}
		if len(infos) > 0 && (info.DType != infos[0].DType || !slices.Equal(info.Shape, infos[0].Shape)) {
			return fmt.Errorf("%s: tensor %q is %s %v but %q is %s %v; the parts of %q must agree", ix.Source, p, info.DType, info.Shape, parts[0], infos[0].DType, infos[0].Shape, name)
		}
		infos = append(infos, info)
	}
	ix.Tensors[name] = Info{
		DType:  infos[0].DType,
		Shape:  append([]int64{int64(len(parts))}, infos[0].Shape...),
		Length: infos[0].Length * int64(len(parts)),
		Stack:  infos,
	}
	return nil
}

// PackStacks writes every stacked view of ix (Stack) into one file under
// cacheDir, each the bytes of its parts in order, 64-byte aligned, and
// returns ix with those tensors pointing into the file. A file of the
// expected size is reused. progress, if not nil, gets bytes written so far
// and the total. Errors name the checkpoint and the problem (read or write
// failure, ctx ending).
func (ix *Index) PackStacks(ctx context.Context, cacheDir string, progress func(done, total int64)) (*Index, error) {
	return ix.packViews(ctx, cacheDir, "stack", stackPackVersion, "stacking expert weights",
		func(info Info) []Info { return info.Stack }, packStack, progress)
}

func packStack(info Info) ([]byte, error) {
	out := make([]byte, 0, info.Length)
	for _, p := range info.Stack {
		t, err := p.Read()
		if err != nil {
			return nil, err
		}
		out = append(out, t.Data...)
	}
	return out, nil
}
