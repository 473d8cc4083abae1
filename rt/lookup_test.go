package rt

import (
	"context"
	"slices"
	"testing"
)

func TestPromptLookupDraft(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		p    PromptLookup
		seq  []int32
		max  int
		want []int32
	}{
		{"trigram, latest occurrence", PromptLookup{}, []int32{1, 2, 3, 9, 9, 1, 2, 3, 7, 8, 5, 1, 2, 3}, 3, []int32{7, 8, 5}},
		{"falls back to a shorter n-gram", PromptLookup{}, []int32{4, 5, 6, 7, 1, 2, 5}, 2, []int32{6, 7}},
		{"cut at the sequence's end", PromptLookup{}, []int32{1, 2, 3, 1, 2}, 8, []int32{3, 1, 2}},
		{"inside a run: a whole draft", PromptLookup{}, []int32{9, 7, 7, 7, 7, 7, 7, 7}, 4, []int32{7, 7, 7, 7}},
		{"latest whole draft wins", PromptLookup{}, []int32{1, 2, 3, 4, 1, 2, 5, 6, 9, 1, 2}, 2, []int32{5, 6}},
		{"no occurrence", PromptLookup{}, []int32{1, 2, 3, 4}, 4, nil},
		{"min n-gram 2 ignores a unigram match", PromptLookup{MinNgram: 2}, []int32{5, 6, 7, 1, 5}, 2, nil},
		{"one token", PromptLookup{}, []int32{3}, 4, nil},
		{"reference first", PromptLookup{Reference: []int32{7, 1, 2, 8, 9}}, []int32{1, 2, 5, 1, 2}, 2, []int32{8, 9}},
		{"reference: earliest occurrence", PromptLookup{Reference: []int32{1, 2, 3, 1, 2, 4}}, []int32{9, 1, 2}, 1, []int32{3}},
		{"reference without a match: the sequence", PromptLookup{Reference: []int32{6, 6}}, []int32{1, 2, 3, 1, 2}, 1, []int32{3}},
	} {
		if got := tc.p.Draft(ctx, 0, tc.seq, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Draft(%v, %d) = %v, want %v", tc.name, tc.seq, tc.max, got, tc.want)
		}
	}
}
