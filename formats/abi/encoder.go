package abi

// Encoder describes one encoder entry point of a module (EncodeName): a
// vision-language family's image encoder and projector.
type Encoder struct {
	Name string // the encoder's name in its .arch ("image"); its entry point is EncodeName(Name)
	// Input is one tile's shape, [1, C, H, W] (f32, preprocessed as the
	// family's Hugging Face processor does).
	Input []int64
	// Rows and Width are the shape of the entry point's result, [Rows,
	// Width] f32: the rows of one tile, which take the positions of Rows
	// placeholder tokens.
	Rows, Width int64
	// Placeholder is the token id whose positions take the encoder's
	// rows, in order (Idefics3's <image>, image_token_id): the prefill
	// argument of this encoder holds row k at the position of the k-th
	// such token of the sequence.
	Placeholder int32
	// Blocks: the decoder's attention sees each run of consecutive
	// placeholder tokens as one block whose tokens see each other in a
	// prefill (attention's blocks, Gemma 3's image tokens), so a run must
	// lie in one prefill chunk: the runtime ends a chunk before a run that
	// would cross its end.
	Blocks bool
}
