package main

import (
	"context"
	"os"
	"path/filepath"
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
		{[]string{"--dry-base", "0"}, "--dry-base 0: out of range; give a number >= 1"},
		{[]string{"--dry-base", "0.5"}, "--dry-base 0.5: out of range; give a number >= 1"},
		{[]string{"--repetition-penalty", "0"}, "--repetition-penalty 0: out of range; give a number > 0"},
		{[]string{"--dry-allowed-length", "-1"}, "--dry-allowed-length -1: out of range"},
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
// by the defaults: --queue 0 served with 64), and so are, before the
// server listens, an empty API key (flag or variable), a negative
// --max-len or --max-images, prefill buckets past --max-len, a CORS
// origin that is not one and a chat template that does not render.
func TestServeFlagRanges(t *testing.T) {
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	badTemplate := filepath.Join(t.TempDir(), "bad.jinja")
	if err := os.WriteFile(badTemplate, []byte("{% for m in %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--queue", "0"}, "--queue 0: give at least 1"},
		{[]string{"--state-snapshots", "-1"}, "--state-snapshots -1: give 0 to 64"},
		{[]string{"--call-timeout=-1s"}, "--call-timeout -1s: give a positive duration"},
		{[]string{"--call-timeout=0s"}, "--call-timeout 0s: give a positive duration"},
		{[]string{"--shutdown-timeout=-1s"}, "--shutdown-timeout -1s: give a duration of 0 or more"},
		{[]string{"--max-n", "0"}, "--max-n 0: give at least 1"},
		{[]string{"--max-images", "-1"}, "--max-images -1: give 1 or more"},
		{[]string{"--max-images", "0"}, "--max-images 0: give 1 or more"},
		{[]string{"--max-image-pixels", "-1"}, "--max-image-pixels -1: give 0"},
		{[]string{"--max-len", "-5"}, "--max-len -5: the KV-cache length must be a positive number"},
		{[]string{"--max-len", "64", "--prefill-buckets", "16,128"}, "--prefill-buckets [16 128]: bucket 128 is longer than --max-len 64"},
		{[]string{"--api-key", ""}, "--api-key (or $ARCHC_API_KEY) is set but empty"},
		{[]string{"--cors-origin", "not a url"}, `--cors-origin "not a url": not an origin`},
		{[]string{"--cors-origin", "http://localhost:3000/app"}, "no path"},
		{[]string{"--chat-template", badTemplate}, "--chat-template " + badTemplate},
		{[]string{"--speculative", "mtp"}, "llama-tied (family llama) has no multi-token-prediction (MTP) layers"}, // refused before listening, nothing compiled
	} {
		r := clitest.Run(t, bin, append([]string{"serve", "--model", fixture, "--addr", "127.0.0.1:0"}, tc.args...)...)
		if r.Code != 1 || !strings.Contains(r.Stderr, tc.want) || strings.Contains(r.Stderr, "listening") {
			t.Errorf("%v: code %d, stderr %q; want code 1 and %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}
	t.Setenv("ARCHC_API_KEY", "") // set, empty: an unset shell variable expanded
	if r := clitest.Run(t, bin, "serve", "--model", fixture, "--addr", "127.0.0.1:0"); r.Code != 1 || !strings.Contains(r.Stderr, "$ARCHC_API_KEY) is set but empty") {
		t.Errorf("ARCHC_API_KEY empty: code %d, stderr %q", r.Code, r.Stderr)
	}
}
