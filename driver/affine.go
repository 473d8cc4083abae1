package driver

import (
	"context"
	"path/filepath"
)

// packAffine writes an MLX affine-quantized checkpoint's weights, each as
// one tensor of interleaved scales, biases and packed values
// (weights.Index.PackAffine), into the cache and binds them to the plan.
func (p *Plan) packAffine(ctx context.Context, cacheDir string, phase func(string) func()) error {
	done := func() {}
	if phase != nil {
		done = phase("pack weights")
	}
	ix, err := p.Weights.PackAffine(ctx, filepath.Join(cacheDir, "weights"), nil)
	done()
	if err != nil {
		return err
	}
	p.Weights = ix
	return nil
}
