package toolcall

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzFormat checks, on any text: Split does not panic, every call has a
// name and a JSON object as arguments, and the text streamed in two pieces
// at every split point gives the same calls as Split.
func fuzzFormat(f *testing.F, name string) {
	var fm *Format
	for _, c := range splitCases {
		if c.format == name {
			f.Add(c.text, 7)
		}
	}
	f.Fuzz(func(t *testing.T, text string, cut int) {
		if fm == nil {
			fm = format(t, name)
		}
		out := fm.Split(text, false)
		for _, c := range out.Calls {
			var obj map[string]any
			if c.Name == "" || json.Unmarshal([]byte(c.Arguments), &obj) != nil {
				t.Fatalf("call %+v: want a name and a JSON object", c)
			}
		}
		if len(text) == 0 {
			return
		}
		cut = ((cut % len(text)) + len(text)) % len(text)
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		s := fm.NewStream(false)
		r1, c1 := s.Push(text[:cut])
		r2, c2 := s.Push(text[cut:])
		r3, c3, calls := s.Finish()
		if !reflect.DeepEqual(calls, out.Calls) {
			t.Fatalf("streamed calls %+v, Split %+v", calls, out.Calls)
		}
		if r := r1 + r2 + r3; !strings.HasPrefix(r, out.Reasoning) && !strings.HasPrefix(out.Reasoning, strings.TrimSpace(r)) {
			t.Fatalf("streamed reasoning %q, Split %q", r, out.Reasoning)
		}
		if c := c1 + c2 + c3; !strings.HasPrefix(c, out.Content) && !strings.HasPrefix(out.Content, strings.TrimSpace(c)) {
			t.Fatalf("streamed content %q, Split %q", c, out.Content)
		}
	})
}

func FuzzHermes(f *testing.F)     { fuzzFormat(f, "hermes") }
func FuzzQwen3Coder(f *testing.F) { fuzzFormat(f, "qwen3-coder") }
func FuzzLlama3(f *testing.F)     { fuzzFormat(f, "llama3") }
func FuzzMistral(f *testing.F)    { fuzzFormat(f, "mistral") }
func FuzzGranite(f *testing.F)    { fuzzFormat(f, "granite") }
func FuzzCommandR(f *testing.F)   { fuzzFormat(f, "command-r") }
func FuzzDeepSeekV3(f *testing.F) { fuzzFormat(f, "deepseek-v3") }
func FuzzHarmony(f *testing.F)    { fuzzFormat(f, "harmony") }
func FuzzGeneric(f *testing.F)    { fuzzFormat(f, "generic") }
func FuzzGemma4(f *testing.F)     { fuzzFormat(f, "gemma4") }
func FuzzKimiK2(f *testing.F)     { fuzzFormat(f, "kimi-k2") }
func FuzzGLM(f *testing.F)        { fuzzFormat(f, "glm-4.5") }
func FuzzNemotron(f *testing.F)   { fuzzFormat(f, "nemotron") }
func FuzzMiniCPM(f *testing.F)    { fuzzFormat(f, "minicpm") }
func FuzzLFM2(f *testing.F)       { fuzzFormat(f, "lfm2") }
func FuzzMiniMaxM2(f *testing.F)  { fuzzFormat(f, "minimax-m2") }
func FuzzApertus(f *testing.F)    { fuzzFormat(f, "apertus") }
func FuzzSolarOpen(f *testing.F)  { fuzzFormat(f, "solar-open") }
