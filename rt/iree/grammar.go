package iree

// GrammarRow constrains a row's token to what a grammar allows next
// (worker's grammar.py, with llguidance). The worker keeps one matcher per
// Key: Lark, sent on the request's first row only, creates it; each chosen
// token advances it. Vocab is the path of the model's vocabulary file
// (WriteVocab's format). LogitBias (SampleRow) is added to the logits
// before the mask; both come before the penalties.
type GrammarRow struct {
	Key   string `json:"key"`
	Vocab string `json:"vocab"`
	Lark  string `json:"lark,omitempty"`
}
