package vision

import (
	"fmt"
	"strings"
)

// The Idefics3Processor special tokens used in the image expansion.
const (
	// FakeImageToken is "<fake_token_around_image>", which brackets each
	// tile's and the global image's tokens.
	FakeImageToken = "<fake_token_around_image>"
	// ImageToken is "<image>", the placeholder a prompt carries per image
	// and the token repeated image_seq_len times per tile.
	ImageToken = "<image>"
	// GlobalImageToken is "<global-img>", which tags the global image.
	GlobalImageToken = "<global-img>"
)

// ExpandImageToken returns the string that Idefics3Processor
// (processing_idefics3.replace_image_token) puts in place of one
// "<image>" for an image split into rows×cols tiles: for each row r and
// column c (1-based) "<fake_token_around_image><row_r_col_c>" followed by
// imageSeqLen "<image>", a "\n" after each row, then
// "\n<fake_token_around_image><global-img>" + imageSeqLen "<image>" +
// "<fake_token_around_image>". When rows and cols are both 0 (an
// unsplit image) it is only
// "<fake_token_around_image><global-img>" + imageSeqLen "<image>" +
// "<fake_token_around_image>".
func ExpandImageToken(rows, cols, imageSeqLen int) string {
	img := strings.Repeat(ImageToken, max(imageSeqLen, 0))
	global := FakeImageToken + GlobalImageToken + img + FakeImageToken
	if rows == 0 && cols == 0 {
		return global
	}
	var b strings.Builder
	for r := 1; r <= rows; r++ {
		for c := 1; c <= cols; c++ {
			fmt.Fprintf(&b, "%s<row_%d_col_%d>%s", FakeImageToken, r, c, img)
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(global)
	return b.String()
}

// Grid is the (rows, cols) split of one image, as Idefics3Output reports.
type Grid struct {
	// Rows and Cols count tiles; both 0 for an unsplit image.
	Rows, Cols int
	// Tokens is the image's placeholder count where the processor
	// repeats the placeholder (LLaVA's; Processor.Expand), else 0.
	Tokens int
	// Crops is Gemma 3's pan-and-scan crop count (Idefics3Output.Crops).
	Crops int
	// THW is Qwen2-VL's image_grid_thw (Idefics3Output.GridTHW): the
	// image's patch grid, which M-RoPE positions (MRoPEPositions) and the
	// tower's (QwenPatchPositions) read; zero for other processors.
	THW [3]int
}

// ExpandPrompt replaces the i-th "<image>" in text with
// ExpandImageToken(grids[i].Rows, grids[i].Cols, imageSeqLen), in order,
// as Idefics3Processor.__call__ (get_text_with_replacements) does for one
// prompt. The number of "<image>" in text must equal len(grids); otherwise
// the error quotes both counts as the processor's does.
func ExpandPrompt(text string, grids []Grid, imageSeqLen int) (string, error) {
	if n := strings.Count(text, ImageToken); n != len(grids) {
		return "", fmt.Errorf("vision: the number of %s tokens in the prompt should be the same as the number of images passed: found %d %s tokens and %d images",
			ImageToken, n, ImageToken, len(grids))
	}
	var b strings.Builder
	for _, g := range grids {
		i := strings.Index(text, ImageToken)
		b.WriteString(text[:i])
		b.WriteString(ExpandImageToken(g.Rows, g.Cols, imageSeqLen))
		text = text[i+len(ImageToken):]
	}
	b.WriteString(text)
	return b.String(), nil
}
