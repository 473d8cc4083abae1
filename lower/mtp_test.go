package lower

import (
	"slices"
	"testing"
)

// TestMTPBuckets: the mtp_K entry points take the verify and prefill
// buckets, ascending, each once.
func TestMTPBuckets(t *testing.T) {
	got := MTPBuckets(Options{VerifyBuckets: []int64{2, 4}, PrefillBuckets: []int64{4, 16}})
	if want := []int64{2, 4, 16}; !slices.Equal(got, want) {
		t.Errorf("MTPBuckets = %v, want %v", got, want)
	}
}
