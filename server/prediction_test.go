package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/archc/archc/rt"
)

// TestPredictionText: a chat request's prediction reads as a string or
// text parts; another type or part type is a 400 naming the field.
func TestPredictionText(t *testing.T) {
	for _, tc := range []struct{ body, want, err string }{
		{`{"type":"content","content":"def f():\n  return 1"}`, "def f():\n  return 1", ""},
		{`{"type":"content","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, "ab", ""},
		{`{"type":"audio","content":"x"}`, "", `prediction.type must be "content"`},
		{`{"type":"content","content":[{"type":"image_url"}]}`, "", "parts must be of type"},
		{`{"type":"content","content":7}`, "", "a string or an array of text parts"},
	} {
		var p prediction
		if err := json.Unmarshal([]byte(tc.body), &p); err != nil {
			t.Fatal(err)
		}
		got, err := p.text()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "prediction") {
				t.Errorf("%s: error %v, want one containing %q", tc.body, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.body, got, err, tc.want)
		}
	}
}

// TestSpeculativeField: "speculative" false turns speculation off for the
// request; true on a server whose model has no verify entry points is a
// 400 naming the field, and is taken on one that has them.
func TestSpeculativeField(t *testing.T) {
	s := &Server{}
	plain := &rt.Model{Program: &rt.Program{MaxLen: 64}, Vocab: 100}
	spec := &rt.Model{Program: &rt.Program{MaxLen: 64, VerifyBuckets: []int64{9}}, Vocab: 100}
	yes, no := true, false
	if req, _, err := s.options(spec, nil, sampling{Speculative: &no}, 4, 16); err != nil || !req.NoSpeculation {
		t.Errorf("false: NoSpeculation %v, %v", req.NoSpeculation, err)
	}
	if req, _, err := s.options(spec, nil, sampling{Speculative: &yes}, 4, 16); err != nil || req.NoSpeculation {
		t.Errorf("true on a speculating server: NoSpeculation %v, %v", req.NoSpeculation, err)
	}
	var ae *apiError
	if _, _, err := s.options(plain, nil, sampling{Speculative: &yes}, 4, 16); !errors.As(err, &ae) || ae.Param != "speculative" || !strings.Contains(ae.Message, "--speculative") {
		t.Errorf("true on a plain server: %v, want a 400 naming speculative and the flag", err)
	}
}
