package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/lower"
)

// TestParseSpeculative: each --speculative kind archc implements parses
// (mtp compiles the model's MTP module and drafts one token);
// one it does not, a GPU device and a missing draft model are refused
// naming the flag and what to give instead.
func TestParseSpeculative(t *testing.T) {
	if s, err := parseSpeculative("", 0, "local-task"); s != nil || err != nil {
		t.Errorf("off: %v, %v", s, err)
	}
	if _, err := parseSpeculative("", 8, "local-task"); err == nil || !strings.Contains(err.Error(), "--draft-max 8 without --speculative") {
		t.Errorf("--draft-max without --speculative: %v, want a refusal naming both", err)
	}
	if _, err := parseSpeculative("draft:", 0, "local-task"); err == nil || !strings.Contains(err.Error(), "needs the draft model's path") {
		t.Errorf("draft: without a path: %v", err)
	}
	if s, err := parseSpeculative("ngram", 6, "local-task"); err != nil || s.kind != "ngram" || !slices.Equal(s.verifyBuckets(), []int64{2, 4, 7}) {
		t.Errorf("ngram: %+v, %v", s, err)
	}
	if s, err := parseSpeculative("draft:"+fixture, 1, "local-sync"); err != nil || s.kind != "draft" || s.path != fixture || !slices.Equal(s.verifyBuckets(), []int64{2}) {
		t.Errorf("draft: %+v, %v", s, err)
	}
	s, err := parseSpeculative("mtp", 0, "local-task")
	if err != nil || s.kind != "mtp" || !slices.Equal(s.verifyBuckets(), []int64{2}) {
		t.Errorf("mtp: %+v, %v", s, err)
	}
	var o lower.Options
	if s.setLower(&o); !o.MTP || !slices.Equal(o.VerifyBuckets, []int64{2}) {
		t.Errorf("mtp: compile options %+v, want MTP and verify bucket 2", o)
	}
	if s, err := parseSpeculative("mtp:3", 0, "local-task"); err != nil || s.kind != "mtp" || !slices.Equal(s.verifyBuckets(), []int64{2, 4}) {
		t.Errorf("mtp:3: %+v, %v", s, err)
	}
	if s, err := parseSpeculative("ngram", 0, "local-task"); err != nil || s.draftMax != defaultDraftMax {
		t.Errorf("ngram with --draft-max 0: %+v, %v; want the default %d", s, err, defaultDraftMax)
	}
	if _, err := parseSpeculative("mtp:3", 1, "local-task"); err == nil || !strings.Contains(err.Error(), "--draft-max 1 with --speculative mtp:3: the MTP drafter's length is K in mtp:K") {
		t.Errorf("mtp:3 with --draft-max 1: %v, want a refusal naming both", err)
	}
	err = s.openError(fmt.Errorf("compile: %w", &driver.NoMTPError{Model: "m", Family: "llama"}))
	if err == nil || !strings.HasPrefix(err.Error(), "--speculative mtp: compile: m (family llama) has no multi-token-prediction") {
		t.Errorf("mtp on a model without MTP: %v", err)
	}
	for _, tc := range []struct{ kind, device, want string }{
		{"mtp", "cuda", "--speculative mtp: not implemented on --device cuda"},
		{"mtp:0", "local-task", "--speculative mtp:0: give mtp:K, K from 1 to 16"},
		{"eagle", "local-task", `--speculative "eagle": unknown kind`},
		{"ngram", "cuda", "not implemented on --device cuda"},
		{"draft:/no/such/model", "local-task", "--speculative draft:PATH"},
	} {
		if _, err := parseSpeculative(tc.kind, 0, tc.device); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s on %s: %v, want an error containing %q", tc.kind, tc.device, err, tc.want)
		}
	}
}
