// Package abi is the interface of a compiled archc module as the runtime
// calls it: the names of its entry points and the policy by which its
// RoPE depends on the length of the sequence. The compiler side (package
// lower) writes modules to it and computes the policy from the IR; the
// runtime (package rt and its engine) only reads it. It imports nothing
// of archc, so both sides can share it without linking each other.
package abi

import "fmt"

// PrefillName is the entry point that runs one sequence's chunk of s
// tokens (a prefill bucket). Arguments: tokens [1, s] i32, slot i32,
// start i32 (position of the chunk's first token), n i32 (real tokens in
// the chunk; the rest is padding), total i32 (the sequence's length once
// its prompt is in, read by a length-dependent RoPE). Result: logits of
// the chunk's last real token, [1, vocab] f32. A module with encoders
// (EncodeName) takes one more argument per encoder after total: [1, s,
// width] f32, the encoder's rows at the chunk's placeholder positions
// (anything elsewhere; zeros in a chunk without any).
func PrefillName(s int64) string { return fmt.Sprintf("prefill_%d", s) }

// EncodeName is the entry point of an encoder named name ("image": an
// image encoder and its projector): encode_image. Argument: one image tile
// [1, C, H, W] f32 (preprocessed as the family's HF processor does);
// result: its rows [N, width] f32, which a prefill takes at the positions
// of the tile's placeholder tokens (PrefillName).
func EncodeName(name string) string { return "encode_" + name }

// DecodeName is the entry point that runs one token for each of b
// sequences. Arguments: tokens [b] i32, positions [b] i32, slots [b] i32.
// Result: logits [b, vocab] f32.
func DecodeName(b int64) string { return fmt.Sprintf("decode_%d", b) }

// VerifyName is the entry point that scores k drafted tokens of one
// sequence at once (speculative decoding's verify step), k a verify
// bucket. Arguments: tokens [1, k] i32, slot i32, start i32 (position of
// the first token), n i32 (real tokens; the rest is padding). Result: the
// logits of every position of the chunk, [k, vocab] f32 (rows past n are
// padding's). It writes the cache and state like PrefillName's chunk of n
// tokens: KV rows at start..start+n-1, a fixed state for position start+n
// (the other parity buffer, so the state for start stays held when n is
// odd; the runtime's rollback re-runs the accepted tokens from it).
func VerifyName(k int64) string { return fmt.Sprintf("verify_%d", k) }

// MTPName is the entry point that runs a model's multi-token-prediction
// module over k positions of one sequence (speculative decoding's mtp
// drafter), k one of the module's prefill and verify buckets. Arguments:
// tokens [1, k] i32, the token after each position (t+1 for position t),
// slot i32, start i32 (the first position), n i32 (real positions; the
// rest is padding), chain i32 (nonzero: the first position's hidden state
// is the module's own output at the position before, kept by the call
// before: a chained draft; a module without one ignores it). Result: the
// module's logits of every position, [k, vocab] f32 (its prediction for
// t+2). It reads the target's hidden state of each position, which
// prefill, decode and verify keep, and writes its own layer's KV rows at
// start..start+n-1.
func MTPName(k int64) string { return fmt.Sprintf("mtp_%d", k) }

// CopyCacheName is the entry point of a module with more than one slot
// and a KV cache that copies a block of c positions of one slot's KV
// cache into another slot, c being the module's largest prefill bucket
// (CopyChunk). Arguments: src i32, dst i32, start i32 (the block's first
// position; a block that would pass the cache's end is moved back to end
// there). No results. With CopyStateName it gives a slot another slot's
// state: n > 1 choices of one prompt are prefilled once.
func CopyCacheName(c int64) string { return fmt.Sprintf("copy_cache_%d", c) }

// CopyStateName is the entry point of a module with more than one slot
// and position-independent state (conv windows, recurrent states) that
// copies all of one slot's such state, both parity buffers, into another
// slot. Arguments: src i32, dst i32. No results.
const CopyStateName = "copy_state"

// SnapshotStateName is the entry point of a module whose windows and
// recurrent states keep saved buffers beside the parity pair
// (StateGroup.Saved > 0) that copies one buffer of one slot's such state
// into another buffer of the same slot: buffers 0 and 1 are the parity
// buffers, 2.. the saved ones. Saving the state after p tokens copies
// buffer p mod 2 to a saved one; restoring it copies the saved buffer
// back to buffer p mod 2. Arguments: slot i32, from i32, to i32. No
// results.
const SnapshotStateName = "snapshot_state"

// CopyChunk is the block length of CopyCacheName for a module compiled
// with these prefill buckets: the largest (0 for none).
func CopyChunk(prefillBuckets []int64) int64 {
	var c int64
	for _, b := range prefillBuckets {
		c = max(c, b)
	}
	return c
}
