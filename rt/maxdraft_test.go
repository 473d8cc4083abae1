package rt

import "testing"

// TestMaxDraft: a draft is one less than the largest verify bucket whose
// positions all fit before the cache's end (a verify call runs its whole
// bucket): near the end a smaller bucket is taken, and none at all when
// even the smallest does not fit; a model with a fixed state drafts an
// even number.
func TestMaxDraft(t *testing.T) {
	m := &Model{Program: &Program{VerifyBuckets: []int64{2, 4, 8, 16}, MaxLen: 256}}
	for _, c := range []struct{ pos, want int }{
		{0, 15},   // bucket 16
		{240, 15}, // positions 240..255: bucket 16 still fits
		{241, 7},  // 15 positions left: bucket 8 (a 14-token draft would need bucket 16)
		{249, 3},  // 7 left: bucket 4 (the trial's failure: 8 at 249 passed 256)
		{253, 1},  // 3 left: bucket 2
		{255, 0},  // 1 left: no bucket; decode plainly
		{256, 0},
	} {
		if got := m.MaxDraft(c.pos); got != c.want {
			t.Errorf("MaxDraft(%d) = %d, want %d (buckets %v, cache %d)", c.pos, got, c.want, m.Program.VerifyBuckets, m.Program.MaxLen)
		}
	}
	if got := (&Model{Program: &Program{MaxLen: 256}}).MaxDraft(0); got != 0 {
		t.Errorf("MaxDraft without verify buckets = %d, want 0", got)
	}
}
