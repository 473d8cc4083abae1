package abi

// LengthPolicy is how a module's RoPE depends on the length of the
// sequence in the forward call that computes a token's key (HF's
// dynamic_rope_update: LongRoPE's short and long factors, dynamic NTK's
// per-length base), and so when keys cached in a KV-cache slot are still
// right for a sequence. The compiler side computes it from the IR
// (lower.LengthDependence); the runtime asks it whether a cached prefix
// may be reused (rt's per-slot history, the engine's prefix reuse), and
// the driver asks it how long a sequence may grow (PositionLimit). The
// zero value is a RoPE that does not depend on length (every other
// family): nothing is tracked.
type LengthPolicy struct {
	// Threshold > 0: a call in which the sequence is longer than this
	// rotates with other frequencies (LongRoPE's long factors, dynamic
	// NTK's base for that length) than a call in which it is not. Tokens.
	Threshold int64
	// PerLength: beyond Threshold, each length has its own table (dynamic
	// NTK), not one alternative table (LongRoPE).
	PerLength bool
	// Recompute: when a decode step first takes the sequence past
	// Threshold, the keys of the earlier tokens are recomputed with the
	// long table, as HF's Phi-3 generate does (Phi3ForCausalLM's
	// prepare_inputs_for_generation drops the cache when the input reaches
	// original_max_position_embeddings + 1 with at most that many cached).
	// Set by a LongRoPE rope node with recompute: true (phi3.arch); other
	// LongRoPE models (MiniCPM3, on LlamaForCausalLM's generate) and
	// dynamic NTK keep the earlier keys, as HF does.
	Recompute bool
}

// Tracked reports whether keys depend on the sequence length at all, so
// that a runtime must remember which table each cached key was computed
// with.
func (p LengthPolicy) Tracked() bool { return p.Threshold > 0 }

// Table identifies the RoPE table a call uses for a sequence of length L
// (tokens): 0 for the base table, else 1 (LongRoPE's long factors) or L
// (dynamic NTK, one table per length). Keys computed with different
// tables differ.
func (p LengthPolicy) Table(L int) int64 {
	switch {
	case p.Threshold == 0 || int64(L) <= p.Threshold:
		return 0
	case p.PerLength:
		return int64(L)
	}
	return 1
}

// Reusable reports whether cached keys computed with the tables in keys
// (Table values; -1 for unknown) serve a call for a sequence of length L:
// every key was computed with L's table. A prefix with unknown keys
// (written by no call the runtime saw) is taken as it is.
func (p LengthPolicy) Reusable(keys []int64, L int) bool {
	if !p.Tracked() {
		return true
	}
	k := p.Table(L)
	for _, x := range keys {
		if x == -1 {
			return true
		}
	}
	for _, x := range keys {
		if x != k {
			return false
		}
	}
	return true
}

// RecomputeOnDecode reports whether a decode step that takes a sequence
// to another table than its cached keys' must recompute them first
// (Recompute, LongRoPE only).
func (p LengthPolicy) RecomputeOnDecode() bool { return p.Tracked() && p.Recompute && !p.PerLength }

// PositionLimit returns the longest sequence (tokens) a module with this
// policy may run, given the model's max_position_embeddings mp (0: not
// known): mp, lowered to Threshold for dynamic NTK (PerLength). That
// rescaling (HF dynamic_rope_update) depends on the longest sequence the
// HF module has seen in earlier calls (max_seq_len_cached), which a KV
// cache shared by many sequences cannot follow, so positions stay below
// it. 0 means no limit is known.
func (p LengthPolicy) PositionLimit(mp int64) int64 {
	if p.PerLength && p.Threshold > 0 && (mp <= 0 || p.Threshold < mp) {
		mp = p.Threshold
	}
	return max(mp, 0)
}
