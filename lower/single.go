package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// Single-primitive modules: one storage decoder or one matmul, alone, so
// that tests can hold each against a reference (gguf-py's dequantization,
// the plain lowering) without a model around it.

// MatmulModule returns a module with, for each token count m in ms,
// functions `matmul_<m>(x [m, k] f32) -> [m, n] f32` computing x · wᵀ for
// the weight parameter "w" [n, k] stored in format through the format's
// kernel when kernels has one (as a linear layer does), and `plain_<m>`
// computing it with the plain lowering; and `decode() -> [n, k] f32`, the
// weight decoded by the plain lowering. Errors: an unknown format or a
// shape the format cannot store.
func MatmulModule(format string, n, k int64, kernels *Kernels, ms ...int64) (*codegen.Module, error) {
	f, err := single("decode", format, n, k, kernels)
	if err != nil {
		return nil, err
	}
	f.Return(f.weight("w"))
	for _, m := range ms {
		for _, kind := range []string{"matmul", "plain"} {
			g := f.sibling(fmt.Sprintf("%s_%d", kind, m), codegen.T("f32", m, k))
			x := g.Args[0]
			y, ok := codegen.Value{}, false
			if kind == "matmul" {
				y, ok = g.kernelLinear(x, "w")
			}
			if !ok {
				y = g.dot(x, g.weight("w"), nil, nil, []int64{1}, []int64{1})
			}
			g.Return(y)
			if err := g.Err(); err != nil {
				return nil, err
			}
		}
	}
	addKernels(f.module, kernels.usedBy(f.g, f.opts))
	return f.module, f.Err()
}

// Weight2D is one weight parameter of a multi-weight test module
// (DecodeModules, MatmulModules): its parameter name, storage format (a
// StorageFormats name) and logical shape [Rows, Cols].
type Weight2D struct {
	Name, Format string
	Rows, Cols   int64
}

// DecodeModules returns one module holding, for each weight w of ws, a
// function `decode_<w.Name>() -> [rows, cols] f32` that decodes the
// parameter w.Name with the plain lowering: a single compile for many
// formats. Errors: an unknown format or a shape the format cannot store,
// naming the weight.
func DecodeModules(ws []Weight2D) (*codegen.Module, error) {
	return multi("decode", ws, nil, nil)
}

// MatmulModules returns one module holding MatmulModule's functions for
// each weight w of ws, named `decode_<w.Name>`, `matmul_<w.Name>_<m>` and
// `plain_<w.Name>_<m>` ([m, w.Cols] → [m, w.Rows]), reading the parameter
// w.Name: a single compile (and one build of the kernels' bitcode) for
// many formats and shapes. Errors as MatmulModule, naming the weight.
func MatmulModules(ws []Weight2D, kernels *Kernels, ms ...int64) (*codegen.Module, error) {
	return multi("matmul", ws, kernels, ms)
}

// multi builds DecodeModules' and MatmulModules' module (ms empty: decode
// functions only).
func multi(name string, ws []Weight2D, kernels *Kernels, ms []int64) (*codegen.Module, error) {
	opts := Options{WeightDTypes: map[string]string{}, Kernels: kernels}
	graph := &ir.Graph{}
	m := &codegen.Module{Name: name}
	globals := map[string]codegen.Global{}
	for _, w := range ws {
		opts.WeightDTypes[w.Name] = w.Format
		st, err := opts.storageOf(w.Name)
		if err != nil {
			return nil, fmt.Errorf("weight %s: %v", w.Name, err)
		}
		t, err := st.globalType([]int64{w.Rows, w.Cols})
		if err != nil {
			return nil, fmt.Errorf("weight %s: %v", w.Name, err)
		}
		graph.Weights = append(graph.Weights, ir.Weight{Name: w.Name, Shape: []int64{w.Rows, w.Cols}})
		globals[w.Name] = codegen.Global{Name: w.Name, Type: t, Param: w.Name}
	}
	for _, w := range ws {
		m.AddGlobal(globals[w.Name])
	}
	for _, w := range ws {
		f := newFn(m.NewFunc("decode_"+w.Name), graph, opts, globals, &cacheLayout{}, 1, 1)
		f.Return(f.weight(w.Name))
		if err := f.Err(); err != nil {
			return nil, fmt.Errorf("weight %s: %v", w.Name, err)
		}
		for _, rows := range ms {
			for _, kind := range []string{"matmul", "plain"} {
				g := newFn(m.NewFunc(fmt.Sprintf("%s_%s_%d", kind, w.Name, rows), codegen.T("f32", rows, w.Cols)), graph, opts, globals, &cacheLayout{}, 1, 1)
				x := g.Args[0]
				y, ok := codegen.Value{}, false
				if kind == "matmul" {
					y, ok = g.kernelLinear(x, w.Name)
				}
				if !ok {
					y = g.dot(x, g.weight(w.Name), nil, nil, []int64{1}, []int64{1})
				}
				g.Return(y)
				if err := g.Err(); err != nil {
					return nil, fmt.Errorf("weight %s: %v", w.Name, err)
				}
			}
		}
	}
	addKernels(m, kernels.usedBy(graph, opts))
	return m, nil
}

// singleFn is a fn outside any model graph.
type singleFn struct {
	*fn
	module *codegen.Module
}

func single(name, format string, rows, cols int64, kernels *Kernels, args ...codegen.Type) (singleFn, error) {
	opts := Options{WeightDTypes: map[string]string{"w": format}, Kernels: kernels}
	st, err := opts.storageOf("w")
	if err != nil {
		return singleFn{}, err
	}
	t, err := st.globalType([]int64{rows, cols})
	if err != nil {
		return singleFn{}, fmt.Errorf("weight w: %v", err)
	}
	m := &codegen.Module{Name: name}
	graph := &ir.Graph{Weights: []ir.Weight{{Name: "w", Shape: []int64{rows, cols}}}}
	g := codegen.Global{Name: "w", Type: t, Param: "w"}
	m.AddGlobal(g)
	f := newFn(m.NewFunc(name, args...), graph, opts, map[string]codegen.Global{"w": g}, &cacheLayout{}, 1, 1)
	return singleFn{fn: f, module: m}, nil
}

// sibling starts another function of the same single-weight module.
func (s singleFn) sibling(name string, args ...codegen.Type) *fn {
	return newFn(s.module.NewFunc(name, args...), s.g, s.opts, s.globals, s.cache, 1, 1)
}

// ExpertsModule returns a module with, for each token count m in ms,
// functions `experts_<m>(x [m, k] f32, r [m, e] f32) -> [m, n] f32`
// computing Σ_j r[t, e_j] · x_t · w[e_j]ᵀ over the top experts of each
// row of routing weights r (the largest top of them, as route leaves
// them), for the stacked weight parameter "w" [e, n, k] stored in format,
// through the format's expert kernel (experts_kernel.go, as the experts
// primitive does), and `plain_<m>` computing it with the plain lowering
// (every expert decoded to f32 and weighted by r, zero off the top); and
// `decode`, the weight decoded ([e, n, k]). Errors: as MatmulModule, and a
// format without a kernel in kernels.
func ExpertsModule(format string, e, n, k, top int64, kernels *Kernels, ms ...int64) (*codegen.Module, error) {
	opts := Options{WeightDTypes: map[string]string{"w": format}, Kernels: kernels}
	st, err := opts.storageOf("w")
	if err != nil {
		return nil, err
	}
	t, err := st.globalType([]int64{e, n, k})
	if err != nil {
		return nil, fmt.Errorf("weight w: %v", err)
	}
	m := &codegen.Module{Name: "experts"}
	graph := &ir.Graph{Weights: []ir.Weight{{Name: "w", Shape: []int64{e, n, k}}}}
	kk := kernels.usedBy(graph, opts)
	if kk == nil {
		return nil, fmt.Errorf("no kernel for format %s", format)
	}
	g := codegen.Global{Name: "w", Type: t, Param: "w"}
	m.AddGlobal(g)
	globals := map[string]codegen.Global{"w": g}
	f := newFn(m.NewFunc("decode"), graph, opts, globals, &cacheLayout{}, 1, 1)
	f.Return(f.weight("w"))
	if err := f.Err(); err != nil {
		return nil, err
	}
	for _, rows := range ms {
		for _, kind := range []string{"experts", "plain"} {
			h := newFn(m.NewFunc(fmt.Sprintf("%s_%d", kind, rows), codegen.T("f32", rows, k), codegen.T("f32", rows, e)), graph, opts, globals, &cacheLayout{}, 1, 1)
			x, r := h.Args[0], h.Args[1]
			if kind == "experts" {
				st, ok := h.expertFormat("w")
				if !ok {
					return nil, fmt.Errorf("format %s, rows of %d: no expert kernel", format, k)
				}
				gr := h.groupByExpert(r, top)
				h.Return(gr.combine(h, h.expertDispatch(st, "w", gr.rowsOf(h, x), gr.off, gr.used, e), true))
			} else {
				y := h.dot(x, h.weight("w"), nil, nil, []int64{1}, []int64{2}) // [m, e, n]
				y = h.mul(y, h.broadcastDims(r, y.Type, 0, 1))
				h.Return(h.Reduce(y, h.constF32(0), "stablehlo.add", 1))
			}
			if err := h.Err(); err != nil {
				return nil, err
			}
		}
	}
	addKernels(m, kk)
	return m, nil
}
