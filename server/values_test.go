package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/rt/vision"
)

// TestExplicitZeros: an explicit 0 is a value, never the default:
// dry_allowed_length 0 penalizes every repeat (the output differs from
// length 2's), dry_base below 1 and repetition_penalty 0 are refused by
// name, top_p 0 keeps the most likely token only (sampled output equals
// greedy), an empty stop string is refused; each error names its field
// alone.
func TestExplicitZeros(t *testing.T) {
	_, e, url := served(t, Config{})
	run(t, e)
	const prompt = `[1, 184, 106, 66, 1, 184, 106, 66, 1, 184, 106, 66, 1, 184]`
	gen := func(extra string) []int32 {
		t.Helper()
		code, out := post(t, url+"/v1/completions", `{"prompt": `+prompt+`, "max_tokens": 40, "temperature": 0`+extra+`}`)
		if code != 200 {
			t.Fatalf("%s: %d %v", extra, code, out)
		}
		return ids(out["choices"].([]any)[0].(map[string]any)["token_ids"])
	}
	two := gen(`, "dry_multiplier": 5, "dry_allowed_length": 2`)
	if unset := gen(`, "dry_multiplier": 5`); !slices.Equal(unset, two) {
		t.Errorf("dry_allowed_length unset %v, 2 (the default) %v", unset, two)
	}
	if zero := gen(`, "dry_multiplier": 5, "dry_allowed_length": 0`); slices.Equal(zero, two) {
		t.Errorf("dry_allowed_length 0 gives length 2's tokens %v: the 0 was replaced by the default", zero)
	}
	if flat := gen(`, "dry_multiplier": 5, "dry_base": 1`); len(flat) == 0 {
		t.Errorf("dry_base 1: no tokens")
	}
	greedy := gen("")
	for seed := range 3 {
		if got := gen(fmt.Sprintf(`, "temperature": 1.5, "top_p": 0, "seed": %d`, seed)); !slices.Equal(got, greedy) {
			t.Errorf("top_p 0, seed %d: %v, want the most likely tokens %v", seed, got, greedy)
		}
	}
	for _, c := range []struct{ extra, param, want string }{
		{`"dry_multiplier": 5, "dry_base": 0`, "dry_base", "dry_base 0 must be >= 1"},
		{`"dry_multiplier": 5, "dry_base": 0.5`, "dry_base", "dry_base 0.5 must be >= 1"},
		{`"dry_multiplier": 5, "dry_allowed_length": -1`, "dry_allowed_length", "allowed length -1"},
		{`"dry_multiplier": -1`, "dry_multiplier", "DRY multiplier -1"},
		{`"repetition_penalty": 0`, "repetition_penalty", "repetition_penalty 0 must be > 0"},
		{`"repetition_penalty": -1`, "repetition_penalty", "repetition_penalty -1 must be > 0"},
		{`"stop": ""`, "stop", "empty stop string"},
		{`"stop": ["x", ""]`, "stop", "empty stop string"},
	} {
		code, out := post(t, url+"/v1/completions", `{"prompt": [1, 2], "max_tokens": 2, `+c.extra+`}`)
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != 400 || e["param"] != c.param || !strings.Contains(msg, c.want) || (c.param == "dry_base" && strings.Contains(msg, "allowed length")) {
			t.Errorf("%s: %d %v, want 400 naming %s: %q", c.extra, code, out, c.param, c.want)
		}
	}
}

// TestImagePlaceholdersWithoutImages: a chat prompt whose text holds the
// image processor's placeholder but comes with no image is refused as a
// count that differs from the images' is (it ran, the placeholders
// decoded as plain tokens), naming messages.
func TestImagePlaceholdersWithoutImages(t *testing.T) {
	s, _, _ := coreServer(t)
	proc, err := vision.LoadProcessor("../golden/testdata/vision/idefics3")
	if err != nil {
		t.Fatal(err)
	}
	s.cfg.Images.Processor = proc
	req := chatReq(t, `{"messages": [{"role": "user", "content": "<image> what is this <image>"}], "max_tokens": 2}`)
	_, err = s.prepare(context.Background(), req.input(), req.sampling)
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != "messages" || !strings.Contains(ae.Message, "found 2 <image> tokens and 0 images") {
		t.Errorf("placeholders without images: %v, want a 400 naming messages", err)
	}
	req = chatReq(t, `{"messages": [{"role": "user", "content": "what is this"}], "max_tokens": 2}`)
	if _, err := s.prepare(context.Background(), req.input(), req.sampling); err != nil {
		t.Errorf("no placeholders: %v", err)
	}
}
