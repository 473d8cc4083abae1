package vision

import "fmt"

// MRoPEPositions computes the decoder's 3-D rotary positions of a prompt
// with images, as Qwen2VLModel.get_rope_index does in transformers 5.24
// for one unpadded sequence (mm_token_type_ids 1 on imageTokenID, 0
// elsewhere):
//
//   - the ids are cut into runs of text tokens and runs of image tokens;
//   - a text run of n tokens gets positions cur … cur+n−1 on all three
//     axes (t, h, w), and cur advances by n;
//   - an image run takes the next grid (t, h, w) of grids (image_grid_thw,
//     in prompt order) and must hold t·(h/merge)·(w/merge) tokens; token
//     (i, j, k) of its merged grid, row-major, gets (cur+i, cur+j, cur+k),
//     and cur advances by max(h, w)/merge (for an image, t = 1, that is
//     one past the largest position it used);
//
// pos[a][n] is axis a's position of token n (position_ids[:, 0, :]) and
// delta is rope_deltas: the largest position + 1 − len(ids). A token
// decoded at sequence index s ≥ len(ids) then has position s + delta on
// all three axes (Qwen2VLModel.compute_3d_position_ids), so a decoder
// only needs delta after the prompt.
//
// visionStartID, when not negative, must be the token just before every
// image run (the chat template writes "<|vision_start|><|image_pad|>…
// <|vision_end|>"): 5.24 finds images by their runs alone, but earlier
// transformers found them through the token after each vision start, and
// the two agree only on prompts of that form; pass −1 to skip the check.
//
// Qwen2.5-VL's and Qwen3-VL's get_rope_index (and so Qwen3.5's) give the
// same positions for images (the generator of testdata/qwen2vl checks the
// three models on the same inputs). They differ only for video, which
// this function does not take (video pads are ordinary text to it;
// Processor.Expand refuses a prompt with "<|video_pad|>"): Qwen2-VL
// spaces a video's temporal positions by 1 per temporal patch, Qwen2.5-VL
// by tokens_per_second·second_per_grid_ts, and Qwen3-VL splits each
// video's grid into t grids of one frame (its template separates frames
// by timestamps, each frame its own vision start … end), so every frame
// starts a new run with temporal position cur.
//
// Errors: merge below 1, no ids, an image run without a grid or grids
// left over, a grid whose h or w merge does not divide, a run whose
// length is not its grid's token count (transformers fails on these with
// a tensor shape error), an image run not after visionStartID.
func MRoPEPositions(ids []int32, grids [][3]int, imageTokenID, visionStartID int32, merge int) (pos [3][]int32, delta int64, err error) {
	if merge < 1 {
		return pos, 0, fmt.Errorf("vision: mrope: spatial_merge_size must be positive, got %d", merge)
	}
	if len(ids) == 0 {
		return pos, 0, fmt.Errorf("vision: mrope: no tokens")
	}
	for a := range pos {
		pos[a] = make([]int32, len(ids))
	}
	cur, img := int64(0), 0
	maxPos := int64(-1)
	set := func(n int, t, h, w int64) {
		pos[0][n], pos[1][n], pos[2][n] = int32(t), int32(h), int32(w)
		maxPos = max(maxPos, t, h, w)
	}
	for i := 0; i < len(ids); {
		j := i
		if ids[i] != imageTokenID {
			for j < len(ids) && ids[j] != imageTokenID {
				set(j, cur+int64(j-i), cur+int64(j-i), cur+int64(j-i))
				j++
			}
			cur += int64(j - i)
			i = j
			continue
		}
		for j < len(ids) && ids[j] == imageTokenID {
			j++
		}
		if img >= len(grids) {
			return pos, 0, fmt.Errorf("vision: mrope: image token run %d (tokens %d…%d) has no image_grid_thw: %d grids given", img, i, j-1, len(grids))
		}
		if visionStartID >= 0 && (i == 0 || ids[i-1] != visionStartID) {
			return pos, 0, fmt.Errorf("vision: mrope: image %d's tokens start at %d without the vision start token %d before them", img, i, visionStartID)
		}
		g := grids[img]
		if g[0] < 1 || g[1] < 1 || g[2] < 1 || g[1]%merge != 0 || g[2]%merge != 0 {
			return pos, 0, fmt.Errorf("vision: mrope: image %d: grid (t, h, w) = %v must be positive with h and w multiples of spatial_merge_size %d", img, g, merge)
		}
		t, h, w := g[0], g[1]/merge, g[2]/merge
		if n := t * h * w; j-i != n {
			return pos, 0, fmt.Errorf("vision: mrope: image %d: %d image tokens in its run (tokens %d…%d), its grid %v gives %d", img, j-i, i, j-1, g, n)
		}
		n := i
		for a := 0; a < t; a++ {
			for b := 0; b < h; b++ {
				for c := 0; c < w; c++ {
					set(n, cur+int64(a), cur+int64(b), cur+int64(c))
					n++
				}
			}
		}
		cur += int64(max(h, w))
		img++
		i = j
	}
	if img != len(grids) {
		return pos, 0, fmt.Errorf("vision: mrope: %d image_grid_thw given, the ids hold %d image token runs", len(grids), img)
	}
	return pos, maxPos + 1 - int64(len(ids)), nil
}
