package rt

import "testing"

func TestBucket(t *testing.T) {
	m := &Model{Program: &Program{PrefillBuckets: []int64{16, 64}, MaxLen: 100}}
	for _, c := range []struct{ n, start, want int }{
		{1, 0, 16},   // smallest bucket that holds the tokens
		{16, 0, 16},  //
		{17, 0, 64},  //
		{200, 0, 64}, // longer than every bucket: the largest, then more chunks
		{10, 40, 16}, // 40+64 > 100: 64 does not fit, 16 does
		{30, 40, 16}, // 16 is the largest that fits
		{5, 90, 0},   // nothing fits: decode one token at a time
	} {
		if got := m.bucket(c.n, c.start); got != c.want {
			t.Errorf("bucket(n=%d, start=%d) = %d, want %d", c.n, c.start, got, c.want)
		}
	}
}
