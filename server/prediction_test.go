package server

import (
	"encoding/json"
	"strings"
	"testing"
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
