package driver

import (
	"context"
	"errors"
	"maps"
	"path/filepath"

	"github.com/archc/archc/driver/weights"
	"github.com/archc/archc/formats/ireetool"
)

// Parameters returns the module's weights as IREE parameters (scope
// "model"): one file region per graph weight, in its stored format. A GGUF
// model's tensors and an MLX affine folder's weights are first packed into
// the cache under cacheDir (once; later calls reuse the file); phase, if
// set, reports that step. Errors: a plan without a checkpoint, a packing
// failure, a weight missing from the packed index.
func (p *Plan) Parameters(ctx context.Context, cacheDir string, phase func(string) func()) ([]ireetool.Param, error) {
	if p.GGUF != nil {
		if err := p.pack(ctx, cacheDir, phase); err != nil {
			return nil, err
		}
	}
	if p.Weights != nil && p.Weights.NeedsPack() {
		if err := p.packAffine(ctx, cacheDir, phase); err != nil {
			return nil, err
		}
	}
	if p.Weights == nil {
		if p.Dir == "" {
			return nil, errors.New("a config.json alone has no weights; pass the model folder or a .gguf file")
		}
		return nil, errors.New("no model.safetensors or model.safetensors.index.json; a checkpoint is needed to run")
	}
	params := make([]ireetool.Param, 0, len(p.Graph.Weights))
	for _, wt := range p.Graph.Weights {
		info, err := p.Weights.Lookup(wt.Name, wt.Shape)
		if err != nil {
			return nil, err
		}
		params = append(params, ireetool.Param{Name: wt.Name, File: info.File, Offset: info.Offset, Length: info.Length})
	}
	return params, nil
}

// pack writes a GGUF model's weights in their stored formats into the
// cache (ggufmap.Model.Pack) and binds them to the plan. A missing or mis-shaped
// tensor is reported at the .arch position that declared the weight.
func (p *Plan) pack(ctx context.Context, cacheDir string, phase func(string) func()) error {
	done := func() {}
	if phase != nil {
		done = phase("pack weights")
	}
	ix, err := p.GGUF.Pack(ctx, filepath.Join(cacheDir, "weights"), nil)
	if err == nil && p.MMProj != nil {
		var mix *weights.Index
		if mix, err = p.MMProj.Pack(ctx, filepath.Join(cacheDir, "weights"), nil); err == nil {
			maps.Copy(ix.Tensors, mix.Tensors) // (the encoder's names are its own)
		}
	}
	done()
	if err != nil {
		return err
	}
	p.Weights = ix
	for _, w := range p.Graph.Weights {
		if _, err := ix.Lookup(w.Name, w.Shape); err != nil {
			return w.Errorf("%w (family %s reads it%s; is this GGUF a %s model?)", err, p.Family.Name, ggufSource(p.GGUF, w.Name), p.Family.Name)
		}
	}
	return nil
}
