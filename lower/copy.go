package lower

import (
	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
)

// A module with more than one slot also exports the copy of one slot's
// state into another, so that sequences sharing a prompt (a request's
// n > 1 choices) prefill it once:
//
//	copy_cache_C(src: i32, dst: i32, start: i32) -> ()
//	    copies positions start..start+C-1 of every KV-cache entry of slot
//	    src into slot dst, C the largest prefill bucket (abi.CopyChunk). A
//	    block that would pass max_len is moved back to end there
//	    (dynamic_slice and dynamic_update_slice clamp their start alike),
//	    so it copies src's positions before start again: the same values.
//	    With an MTP module (mtp.go) it copies the block's rows of
//	    mtp_hidden too.
//	copy_state: (src: i32, dst: i32) -> ()
//	    copies both parity buffers of every window and recurrent state
//	    (state.go) of slot src into slot dst (not the saved buffers).
//
// and a module with saved state buffers (Options.StateSnapshots), whatever
// its slots:
//
//	snapshot_state: (slot: i32, from: i32, to: i32) -> ()
//	    copies buffer from of every window and recurrent state of slot
//	    into its buffer to (0 and 1 the parity buffers, 2.. the saved).
//
// Each exists only where the graph has that kind of state. A copy writes
// positions of dst past the copied prefix too (the rest of a block); the
// runtime counts dst as holding the copied prefix only, so by the slot
// contract nothing past it is read before it is written again. One block
// per call keeps the copy's cost to the positions the prompt fills, with
// static shapes; the runtime calls it once per block and destination.

// On a GPU (Options.GPU) each copied block passes through an
// optimization barrier (gpuCopy): IREE 3.13 makes a slice of a cache
// written back into the same cache one "slow_memcpy" dispatch reading and
// writing one binding, and its CUDA and ROCm pipelines fail to translate
// that dispatch ("LLVM Translation failed for operation:
// builtin.unrealized_conversion_cast" on the block's strided memref;
// Vulkan: "failed to legalize operation 'hal.interface.binding.subspan'").
// With the barrier the block is copied out to a buffer of its own and
// then in, two plain copies every GPU target compiles; the extra buffer is
// one block (entries × C positions of one slot).

// lowerCopies adds the copy entry points to m when opts has more than one
// slot.
func lowerCopies(m *codegen.Module, g *ir.Graph, opts Options, globals map[string]codegen.Global, cache *cacheLayout) error {
	if len(cache.groups) > 0 && opts.Slots > 1 {
		c := abi.CopyChunk(opts.PrefillBuckets)
		fn := m.NewFunc(abi.CopyCacheName(c), codegen.T("i32"), codegen.T("i32"), codegen.T("i32"))
		f := newFn(fn, g, opts, globals, cache, 1, 1)
		src, dst, start := fn.Args[0], fn.Args[1], fn.Args[2]
		z := f.constI32(0)
		for gi, grp := range cache.groups {
			for i, gl := range grp.globals {
				cur := f.cacheValue(cacheEntry{gi, int64(i)})
				t := gl.Type.Shape // [1, slots, max_len, kv_heads, width]
				sizes := []int64{1, 1, c, t[3], t[4]}
				block := f.gpuCopy(f.Op("stablehlo.dynamic_slice", cur.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, cur, z, src, start, z, z))
				f.caches[gl.Name] = f.Op("stablehlo.dynamic_update_slice", cur.Type, nil, cur, block, z, dst, start, z, z)
			}
		}
		if g.MTP != nil { // the target's hidden states, which the MTP module reads (mtp.go)
			gl := mtpHiddenGlobal(g, opts)
			cur := f.GlobalLoad(gl)
			sizes := []int64{1, 1, c, gl.Type.Shape[3]}
			block := f.gpuCopy(f.Op("stablehlo.dynamic_slice", cur.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, cur, z, src, start, z))
			f.GlobalStore(gl, f.Op("stablehlo.dynamic_update_slice", cur.Type, nil, cur, block, z, dst, start, z))
		}
		f.storeCaches()
		fn.Return()
		if err := fn.Err(); err != nil {
			return err
		}
	}
	if len(cache.states.groups) > 0 && opts.StateSnapshots > 0 {
		fn := m.NewFunc(abi.SnapshotStateName, codegen.T("i32"), codegen.T("i32"), codegen.T("i32"))
		f := newFn(fn, g, opts, globals, cache, 1, 1)
		slot, from, to := fn.Args[0], fn.Args[1], fn.Args[2]
		f.copyStates(f.constI32(0), 1, from, slot, to, slot)
		f.storeStates()
		fn.Return()
		if err := fn.Err(); err != nil {
			return err
		}
	}
	if len(cache.states.groups) > 0 && opts.Slots > 1 {
		fn := m.NewFunc(abi.CopyStateName, codegen.T("i32"), codegen.T("i32"))
		f := newFn(fn, g, opts, globals, cache, 1, 1)
		src, dst := fn.Args[0], fn.Args[1]
		z := f.constI32(0)
		f.copyStates(z, 2, z, src, z, dst)
		f.storeStates()
		fn.Return()
		if err := fn.Err(); err != nil {
			return err
		}
	}
	return nil
}

// gpuCopy returns a block sliced from a state global for writing back into
// the same global: on a GPU through an optimization barrier (see above),
// elsewhere as it is.
func (f *fn) gpuCopy(block codegen.Value) codegen.Value {
	if !f.opts.GPU {
		return block
	}
	return f.barrier(block)
}

// copyStates copies, in every window and recurrent state global ([1,
// 2+snapshots, slots, shape...]), the n buffers from buffer fromBuf of
// slot fromSlot to buffer toBuf of slot toSlot (i32 scalars; z is the
// constant 0).
func (f *fn) copyStates(z codegen.Value, n int64, fromBuf, fromSlot, toBuf, toSlot codegen.Value) {
	for gi, grp := range f.cache.states.groups {
		for i, gl := range grp.globals {
			cur := f.stateValue(cacheEntry{gi, int64(i)})
			shape := gl.Type.Shape[3:]
			at := func(buf, slot codegen.Value) []codegen.Value {
				idx := []codegen.Value{cur, z, buf, slot}
				for range shape {
					idx = append(idx, z)
				}
				return idx
			}
			sizes := append([]int64{1, n, 1}, shape...)
			block := f.gpuCopy(f.Op("stablehlo.dynamic_slice", cur.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, at(fromBuf, fromSlot)...))
			idx := at(toBuf, toSlot)
			f.stateVals[gl.Name] = f.Op("stablehlo.dynamic_update_slice", cur.Type, nil, append([]codegen.Value{cur, block}, idx[1:]...)...)
		}
	}
}
