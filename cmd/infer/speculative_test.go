package main

import (
	"slices"
	"strings"
	"testing"
)

// TestParseSpeculative: each --speculative kind archc implements parses;
// one it does not, a GPU device and a missing draft model are refused
// naming the flag and what to give instead.
func TestParseSpeculative(t *testing.T) {
	if s, err := parseSpeculative("", 8, "local-task"); s != nil || err != nil {
		t.Errorf("off: %v, %v", s, err)
	}
	if s, err := parseSpeculative("ngram", 6, "local-task"); err != nil || s.kind != "ngram" || !slices.Equal(s.verifyBuckets(), []int64{2, 4, 7}) {
		t.Errorf("ngram: %+v, %v", s, err)
	}
	if s, err := parseSpeculative("draft:"+fixture, 1, "local-sync"); err != nil || s.kind != "draft" || s.path != fixture || !slices.Equal(s.verifyBuckets(), []int64{2}) {
		t.Errorf("draft: %+v, %v", s, err)
	}
	for _, tc := range []struct{ kind, device, want string }{
		{"mtp", "local-task", "--speculative mtp: not implemented"},
		{"eagle", "local-task", `--speculative "eagle": unknown kind`},
		{"ngram", "cuda", "not implemented on --device cuda"},
		{"draft:/no/such/model", "local-task", "--speculative draft:PATH"},
	} {
		if _, err := parseSpeculative(tc.kind, 8, tc.device); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s on %s: %v, want an error containing %q", tc.kind, tc.device, err, tc.want)
		}
	}
}
