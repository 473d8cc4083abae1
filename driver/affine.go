package driver

import (
	"context"
	"path/filepath"
)

// packAffine writes the checkpoint's weights that are views of other
// tensors into the cache and binds them to the plan: an MLX
// affine-quantized weight as one tensor of interleaved scales, biases and
// packed values (weights.Index.PackAffine), a stacked expert weight as its
// parts one after another (weights.Index.PackStacks).
func (p *Plan) packAffine(ctx context.Context, cacheDir string, phase func(string) func()) error {
	done := func() {}
	if phase != nil {
		done = phase("pack weights")
	}
	ix, err := p.Weights.PackAffine(ctx, filepath.Join(cacheDir, "weights"), nil)
	if err == nil {
		ix, err = ix.PackStacks(ctx, filepath.Join(cacheDir, "weights"), nil)
	}
	done()
	if err != nil {
		return err
	}
	p.Weights = ix
	return nil
}
