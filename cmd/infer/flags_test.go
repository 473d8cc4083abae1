package main

import (
	"context"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/archc/archc/internal/clitest"
)

// TestSignedNumberFlags: a numeric flag takes a negative value given as its
// own argument (kong alone reads "-1" as a short flag), while a flag whose
// value is missing is still an error and a negative unsigned value is
// refused by kong's decoder.
func TestSignedNumberFlags(t *testing.T) {
	parse := func(args ...string) (*cli, error) {
		var c cli
		k, err := kong.New(&c, options(context.Background())...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = k.Parse(append([]string{"generate", "--model", fixture, "--prompt-ids", "1"}, args...))
		return &c, err
	}
	c, err := parse("--frequency-penalty", "-1.5", "--presence-penalty", "-2", "--logprobs", "-1", "--temperature", "-0.5", "--top-k", "-3", "--max-tokens=-4")
	if err != nil {
		t.Fatalf("negative values: %v", err)
	}
	g := c.Generate
	if g.FreqPenalty != -1.5 || g.PresPenalty != -2 || g.Logprobs != -1 || g.Temperature != -0.5 || g.TopK != -3 || g.MaxTokens != -4 {
		t.Errorf("parsed %+v", g)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--temperature", "--json"}, `--temperature: expected float value but got "--json"`},
		{[]string{"--temperature", "-x"}, `--temperature: expected float value but got "-x"`},
		{[]string{"--seed", "-1"}, `--seed: expected a valid 64 bit uint but got "-1"`},
	} {
		if _, err := parse(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

// TestFlagRanges: an out-of-range value, negative ones given as their own
// argument included, is refused before the model is read, naming the flag
// and what it takes, with exit code 1 (not kong's 80).
func TestFlagRanges(t *testing.T) {
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--temperature", "-1"}, "--temperature -1: out of range; give a number >= 0 (0: greedy decoding)"},
		{[]string{"--top-p", "1.5"}, "--top-p 1.5: out of range; give a number in [0, 1]"},
		{[]string{"--frequency-penalty", "-3"}, "--frequency-penalty -3: out of range; give a number in [-2, 2]"},
		{[]string{"--logprobs", "-2"}, "--logprobs -2: out of range; give 0 to 20 alternatives, or -1 for no logprobs"},
		{[]string{"--max-tokens", "-1"}, "--max-tokens -1: out of range; give 0 or more new tokens"},
		{[]string{"--threads", "-2"}, "--threads -2: out of range; give a positive count, or 0 for one per core"},
		{[]string{"--dry-base", "1"}, "--dry-base 1: out of range; give a number > 1"},
		{[]string{"--logprobs", "2"}, "--logprobs 2: logprobs are printed only with --json; add --json"},
	} {
		// The model does not exist: a flag error must come first.
		r := clitest.Run(t, bin, append([]string{"generate", "--model", "/no/such/model", "--prompt-ids", "1"}, tc.args...)...)
		if r.Code != 1 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v: code %d, stderr %q; want code 1 and %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}
}

// TestServeFlagRanges: serve's counts and durations out of range are
// refused by name before the model is read (they were silently replaced
// by the defaults: --queue 0 served with 64).
func TestServeFlagRanges(t *testing.T) {
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--queue", "0"}, "--queue 0: give at least 1"},
		{[]string{"--call-timeout=-1s"}, "--call-timeout -1s: give a positive duration"},
		{[]string{"--call-timeout=0s"}, "--call-timeout 0s: give a positive duration"},
		{[]string{"--shutdown-timeout=-1s"}, "--shutdown-timeout -1s: give a duration of 0 or more"},
		{[]string{"--max-n", "0"}, "--max-n 0: give at least 1"},
	} {
		r := clitest.Run(t, bin, append([]string{"serve", "--model", fixture, "--addr", "127.0.0.1:0"}, tc.args...)...)
		if r.Code != 1 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v: code %d, stderr %q; want code 1 and %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}
}
