package abi

import "fmt"

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
	// Sizes, for an encoder with a variable size (Qwen2-VL's patches:
	// .arch `encoder image[patches]`), are its entry points, ascending
	// (EncodeSizeName); Input, Rows and Width are then the largest's.
	// Nil for an encoder of fixed shapes (one entry point, EncodeName).
	Sizes []EncoderSize
	// Extra are the entry point's inputs after the first (which Input
	// shapes), in order: each one's shape ([1, dims...]; a sized
	// encoder's at its largest size) and dtype ("f32" or "i32"), such as
	// Qwen2-VL's per-patch (row, column) positions.
	Extra []EncoderInput
	// Blocks: the decoder's attention sees each run of consecutive
	// placeholder tokens as one block whose tokens see each other in a
	// prefill (attention's blocks, Gemma 3's image tokens), so a run must
	// lie in one prefill chunk: the runtime ends a chunk before a run that
	// would cross its end.
	Blocks bool
}

// EncoderSize is one entry point of a variable-size encoder: EncodeSizeName
// (name, Size) takes every input with Size rows in its first dimension
// after the leading 1 (the first n real, the rest padding, zeros) and the
// real count n i32 last, and returns [Rows, Width] f32, of which the first
// n·Rows/Size are the real rows (padding rows never reach a real one: the
// encoder's attention masks them).
type EncoderSize struct {
	Size, Rows int64
}

// EncoderInput is one input of an encoder's entry point.
type EncoderInput struct {
	Name  string
	Shape []int64
	DType string // "f32" or "i32"
}

// EncodeSizeName is the entry point of a variable-size encoder named name
// at size n: encode_image_256.
func EncodeSizeName(name string, n int64) string { return fmt.Sprintf("encode_%s_%d", name, n) }
