package iree

// Grammar constrains a sequence's tokens to what a grammar allows next
// (the worker's grammar.py, with llguidance). It is part of the sequence's
// Sampling, sent once with StartSeq: the worker builds the sequence's
// matcher from Lark (a grammar in llguidance's Lark dialect, JSON schemas
// embedded with %json) and advances it by every generated token the
// sequence's rows bring; seq_end drops it. Vocab is the path of the
// model's vocabulary file ({"tokens": [hex bytes per id], "special":
// [ids], "eos": [ids]}), written once per model by the caller.
type Grammar struct {
	Vocab string `json:"vocab"`
	Lark  string `json:"lark"`
}
