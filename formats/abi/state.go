package abi

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// A module's per-sequence state is described by one StateTable: a row
// (StateGroup) per group of mutable globals of one kind and per-slot shape
// (one global per entry, named <global>.<entry>), with the rules every
// entry point keeps for it. The compiler side computes it from the
// layouts it emits (lower.StateTable), the driver budgets memory from it,
// and the runtime asks it what a slot holds (rt.Program.States).
//
//	kind       global    each entry's global           reset   padding        copy            snapshot
//	kv-cache   kv_cache  [1, slots, max_len, shape...] unread  past-held      copy_cache_C    every-position
//	window     state     [1, 2+saved, slots, shape...] zero    other-buffer   copy_state      parity(+saved)
//	recurrent  state_1   [1, 2+saved, slots, shape...] zero    other-buffer   copy_state      parity(+saved)

// StateKind is how a state group relates to the positions of a sequence.
// Later kinds (an image-embedding cache, held per image rather than per
// position) are added at the end.
type StateKind int

// The kinds of state a module holds.
const (
	// KVCache grows with tokens: one row of keys or values per position,
	// up to max_len (lower's kvcache.go).
	KVCache StateKind = iota
	// Window is the last k−1 inputs of a causal convolution: fixed size,
	// position-independent (lower's state.go).
	Window
	// Recurrent is a fixed-size recurrent state (a Mamba ssm_state, a
	// gated-delta-rule state), position-independent (lower's state.go).
	Recurrent
)

// String names the kind as the table prints it.
func (k StateKind) String() string {
	switch k {
	case KVCache:
		return "kv-cache"
	case Window:
		return "window"
	case Recurrent:
		return "recurrent"
	}
	return fmt.Sprintf("StateKind(%d)", int(k))
}

// Fixed reports whether state of this kind is position-independent: a
// slot holds it only for the positions its snapshots keep (Snapshot), not
// for every prefix of its tokens.
func (k StateKind) Fixed() bool { return k == Window || k == Recurrent }

// ResetRule is how a sequence starting at position 0 sees a group's
// state, whatever the slot's previous user left.
type ResetRule int

// The reset rules.
const (
	// ResetUnread: a call reads only the rows of positions before its own
	// context's end, so rows a previous user left past them are never
	// read (the KV cache).
	ResetUnread ResetRule = iota
	// ResetZero: a call at position 0 reads zeros in place of the state.
	ResetZero
)

// String names the rule as the table prints it.
func (r ResetRule) String() string {
	switch r {
	case ResetUnread:
		return "unread"
	case ResetZero:
		return "zero"
	}
	return fmt.Sprintf("ResetRule(%d)", int(r))
}

// PaddingRule is what a padded row writes (a prefill's tokens past len, a
// decode row the engine places at the first position its slot does not
// hold).
type PaddingRule int

// The padding rules.
const (
	// PadPastHeld: the row writes only positions at or past the tokens
	// its slot holds, which are written again before any call reads them.
	PadPastHeld PaddingRule = iota
	// PadOtherBuffer: the row writes the parity buffer of the position
	// after it, never the one holding the slot's state.
	PadOtherBuffer
)

// String names the rule as the table prints it.
func (r PaddingRule) String() string {
	switch r {
	case PadPastHeld:
		return "past-held"
	case PadOtherBuffer:
		return "other-buffer"
	}
	return fmt.Sprintf("PaddingRule(%d)", int(r))
}

// SnapshotPolicy is for which positions a slot holds a group's state: the
// prefixes of its tokens a later call may continue (prefix reuse,
// speculative rollback).
type SnapshotPolicy int

// The snapshot policies.
const (
	// SnapshotEveryPosition: every position's row is kept, so every prefix
	// of the slot's tokens can be continued; rows past a call's context
	// are never read (the KV cache).
	SnapshotEveryPosition SnapshotPolicy = iota
	// SnapshotParity: two buffers per slot, the state after the slot's
	// first p tokens in buffer p mod 2; a call at start..start+n−1 reads
	// buffer start mod 2 and writes buffer (start+n) mod 2, so only the
	// last two positions written are held, and those the group's saved
	// buffers (StateGroup.Saved) keep.
	SnapshotParity
)

// String names the policy as the table prints it.
func (s SnapshotPolicy) String() string {
	switch s {
	case SnapshotEveryPosition:
		return "every-position"
	case SnapshotParity:
		return "parity"
	}
	return fmt.Sprintf("SnapshotPolicy(%d)", int(s))
}

// StateGroup is a group of per-sequence state: Entries of one kind and
// per-slot shape, each a mutable global of its own named <Global>.<i>. A
// KV-cache entry's global is [1, slots, Positions, Shape...]; a window or
// recurrent entry's is [1, Buffers, slots, Shape...].
type StateGroup struct {
	Kind   StateKind
	Global string // the group's name ("kv_cache", "state_1"); entry i is the module global <Global>.<i>
	// Entries is the number of states the group holds: for a KV cache
	// the keys or the values of one attention site each, for a window or
	// recurrent state one declared state each (in node order).
	Entries int64
	// Shape is one entry's shape for one slot: per position for a KV cache
	// ([kv_heads, width]), the whole state otherwise ([k−1, channels] for a
	// conv window, [heads, d_state, head_dim] for a recurrent state...).
	Shape []int64
	// DType is the element type of the global ("f32").
	DType string
	// Positions is the KV cache's length per slot (max_len, tokens); 0 for
	// a position-independent state.
	Positions int64
	// Buffers is the number of copies of the state per slot: for a window
	// or recurrent state the two parity buffers and then Saved saved ones,
	// 1 for a KV cache.
	Buffers int64
	// Saved is the number of saved buffers per slot of a window or
	// recurrent state beyond the parity pair (buffers 2..), which hold the
	// state after positions the runtime chose (the end of a prompt), so
	// that a later sequence sharing that prefix continues from there
	// (SnapshotStateName saves and restores); 0 for none.
	Saved int64
	// BytesPerToken is what one position of one slot takes in the global,
	// Entries × ∏Shape × the dtype's size, in bytes (KV cache); 0 for a
	// position-independent state.
	BytesPerToken int64
	// BytesPerSlot is what one slot takes in the global, in bytes:
	// BytesPerToken × Positions for a KV cache, Entries × Buffers × ∏Shape
	// × the dtype's size otherwise.
	BytesPerSlot int64
	Reset        ResetRule
	Padding      PaddingRule
	// Copy is the entry point that copies this group between slots
	// (CopyCacheName, CopyStateName); "" when the module has one slot.
	Copy     string
	Snapshot SnapshotPolicy
}

// StateTable is a module's per-sequence state, one row per global, KV
// caches first, in the order the module declares them.
type StateTable []StateGroup

// FixedState reports whether the module holds position-independent state
// (a conv window, a recurrent state): a slot's state then serves only a
// continuation at a position its snapshots hold.
func (t StateTable) FixedState() bool {
	for _, g := range t {
		if g.Kind.Fixed() {
			return true
		}
	}
	return false
}

// BytesPerToken is the memory one position of one slot takes across the
// table's KV caches, in bytes.
func (t StateTable) BytesPerToken() int64 {
	var n int64
	for _, g := range t {
		n += g.BytesPerToken
	}
	return n
}

// FixedBytesPerSlot is the memory one slot's position-independent states
// take (both parity buffers and the saved ones), in bytes.
func (t StateTable) FixedBytesPerSlot() int64 {
	var n int64
	for _, g := range t {
		if g.Kind.Fixed() {
			n += g.BytesPerSlot
		}
	}
	return n
}

// BytesPerSlot is the memory one slot takes across every group for a KV
// cache of maxLen positions, in bytes.
func (t StateTable) BytesPerSlot(maxLen int64) int64 {
	return maxLen*t.BytesPerToken() + t.FixedBytesPerSlot()
}

// Summary is the table in one line for slots slots of maxLen positions:
// the state's total and how it divides among the kinds ("state: 64.0 MiB
// in 4 slots of 4096 tokens (KV cache 4.0 KiB per token)").
func (t StateTable) Summary(slots, maxLen int64) string {
	if len(t) == 0 {
		return "state: none"
	}
	s := "s"
	if slots == 1 {
		s = ""
	}
	var parts []string
	if kv := t.BytesPerToken(); kv > 0 {
		parts = append(parts, fmt.Sprintf("KV cache %s per token", FormatBytes(kv)))
	}
	if f := t.FixedBytesPerSlot(); f > 0 {
		parts = append(parts, fmt.Sprintf("fixed state %s per slot", FormatBytes(f)))
	}
	return fmt.Sprintf("state: %s in %d slot%s of %d tokens (%s)", FormatBytes(slots*t.BytesPerSlot(maxLen)), slots, s, maxLen, strings.Join(parts, ", "))
}

// Format prints the table, one aligned line per group under a header.
func (t StateTable) Format() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "kind\tglobal\tentries\tshape\tdtype\tbytes/token\tbytes/slot\treset\tpadding\tcopy\tsnapshot")
	for _, g := range t {
		per := "-"
		if g.BytesPerToken > 0 {
			per = fmt.Sprint(g.BytesPerToken)
		}
		cp := g.Copy
		if cp == "" {
			cp = "-"
		}
		snap := g.Snapshot.String()
		if g.Saved > 0 {
			snap += fmt.Sprintf("+%d saved", g.Saved)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%v\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", g.Kind, g.Global, g.Entries, g.Shape, g.DType, per, g.BytesPerSlot, g.Reset, g.Padding, cp, snap)
	}
	w.Flush()
	return b.String()
}

// FormatBytes writes a byte count in binary units: "768 B", "1.5 KiB",
// "2.0 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[i])
}
