package lower

import (
	"slices"
	"strings"

	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
)

// StateTable is the per-sequence state of the module Lower(g, opts)
// emits: one row per KV-cache group and then per window or recurrent
// state group (each entry of a group a global of its own, <Global>.<i>), read off the layouts Lower itself builds (newCacheLayout,
// newStateLayout), so the table and the module cannot disagree. A row's
// shape, entries and bytes do not depend on opts; Positions (the KV
// cache's max_len) and the copy entry points (more than one slot) do.
func StateTable(g *ir.Graph, opts Options) abi.StateTable {
	if !opts.MTP {
		g = g.WithoutMTP()
	}
	l := newCacheLayout(g, opts)
	var t abi.StateTable
	for _, grp := range l.groups {
		ty, entries := grp.globals[0].Type, int64(len(grp.globals)) // each [1, slots, max_len, kv_heads, width]
		row := abi.StateGroup{
			Kind: abi.KVCache, Global: grp.name, Entries: entries,
			Shape: slices.Clone(ty.Shape[3:]), DType: ty.Elem, Positions: opts.MaxLen, Buffers: 1,
			Reset: abi.ResetUnread, Padding: abi.PadPastHeld, Snapshot: abi.SnapshotEveryPosition,
		}
		row.BytesPerToken = entries * elements(row.Shape) * elemBytes(ty.Elem)
		row.BytesPerSlot = row.BytesPerToken * opts.MaxLen
		if opts.Slots > 1 {
			row.Copy = abi.CopyCacheName(abi.CopyChunk(opts.PrefillBuckets))
		}
		t = append(t, row)
	}
	if g.MTP != nil { // the target's hidden state, a row per position (mtp.go), copied with the KV cache
		gl := mtpHiddenGlobal(g, opts) // [1, slots, max_len, hidden], entry 0 of its row
		row := abi.StateGroup{
			Kind: abi.KVCache, Global: strings.TrimSuffix(gl.Name, ".0"), Entries: 1, Shape: slices.Clone(gl.Type.Shape[3:]), DType: gl.Type.Elem,
			Positions: opts.MaxLen, Buffers: 1, Reset: abi.ResetUnread, Padding: abi.PadPastHeld, Snapshot: abi.SnapshotEveryPosition,
		}
		row.BytesPerToken = elements(row.Shape) * elemBytes(gl.Type.Elem)
		row.BytesPerSlot = row.BytesPerToken * opts.MaxLen
		if opts.Slots > 1 {
			row.Copy = abi.CopyCacheName(abi.CopyChunk(opts.PrefillBuckets))
		}
		t = append(t, row)
	}
	for _, grp := range l.states.groups {
		ty, entries := grp.globals[0].Type, int64(len(grp.globals)) // each [1, 2+snapshots, slots, shape...]
		row := abi.StateGroup{
			Kind: abi.Window, Global: grp.name, Entries: entries,
			Shape: slices.Clone(grp.shape), DType: ty.Elem, Buffers: ty.Shape[1], Saved: ty.Shape[1] - 2,
			Reset: abi.ResetZero, Padding: abi.PadOtherBuffer, Snapshot: abi.SnapshotParity,
		}
		if grp.kind == ir.Recurrent {
			row.Kind = abi.Recurrent
		}
		row.BytesPerSlot = entries * row.Buffers * elements(row.Shape) * elemBytes(ty.Elem)
		if opts.Slots > 1 {
			row.Copy = abi.CopyStateName
		}
		t = append(t, row)
	}
	return t
}

// KVBytesPerToken is the KV-cache memory one token of one slot takes in
// g's module, in bytes (the state table's abi.StateTable.BytesPerToken).
func KVBytesPerToken(g *ir.Graph) int64 {
	return StateTable(g, Options{}).BytesPerToken()
}

// StateBytesPerSlot is the memory the position-independent states
// (windows, recurrent states: both parity buffers and snapshots saved
// ones) of g's module take per slot, in bytes (the state table's
// abi.StateTable.FixedBytesPerSlot).
func StateBytesPerSlot(g *ir.Graph, snapshots int64) int64 {
	return StateTable(g, Options{StateSnapshots: snapshots}).FixedBytesPerSlot()
}

// HasFixedState reports whether g's module holds a position-independent
// state (the state table's abi.StateTable.FixedState): then a slot's
// state serves only a continuation at exactly the position its held
// tokens end (the runtime's prefix reuse asks this).
func HasFixedState(g *ir.Graph) bool {
	return StateTable(g, Options{}).FixedState()
}

func elements(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// elemBytes is the size of a state global's element type.
func elemBytes(elem string) int64 {
	switch elem {
	case "f32", "i32":
		return 4
	case "f16", "bf16":
		return 2
	}
	panic("lower: state of element type " + elem)
}
